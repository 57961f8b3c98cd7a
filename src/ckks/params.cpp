#include "ckks/params.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/bytes.h"
#include "core/sha256.h"
#include "ring/primes.h"

namespace privsearch::ckks {

int he_standard_max_log_qp(std::size_t n) {
  switch (n) {
    case 1024:
      return 27;
    case 2048:
      return 54;
    case 4096:
      return 109;
    case 8192:
      return 218;
    case 16384:
      return 438;
    case 32768:
      return 881;
    default:
      return 0;
  }
}

std::string params_id_hex(const ParamsId& id) { return to_hex(id); }

Status check_params_id(const Params& params, const ParamsId& id, const char* what) {
  if (params.id() != id) {
    return failed_precondition_error(fmt::format("{} has params id {}, expected {}", what,
                                                 params_id_hex(id).substr(0, 16),
                                                 params_id_hex(params.id()).substr(0, 16)));
  }
  return Status();
}

namespace {

Result<std::vector<std::uint64_t>> resolve_primes(std::size_t n, const std::vector<int>& bits,
                                                  const std::vector<std::uint64_t>& explicit_primes,
                                                  const char* field) {
  if (!explicit_primes.empty()) return explicit_primes;
  if (bits.empty()) {
    return invalid_argument_error(fmt::format("`{}` is empty: give bit sizes or primes", field));
  }
  for (int b : bits) {
    if (b < 20 || b > 61) {
      return invalid_argument_error(
          fmt::format("`{}_bits` entry {} is outside [20, 61] bits", field, b));
    }
  }
  return ring::ntt_primes_for_bit_sizes(n, bits);
}

ParamsId compute_id(const ParamsLiteral& lit, std::size_t n, std::span<const std::uint64_t> q,
                    std::span<const std::uint64_t> p) {
  ByteWriter w;
  w.put_string("privsearch-ckks-params-v1");
  w.put_u64(n);
  w.put_u32(static_cast<std::uint32_t>(q.size()));
  for (auto v : q) w.put_u64(v);
  w.put_u32(static_cast<std::uint32_t>(p.size()));
  for (auto v : p) w.put_u64(v);
  w.put_u32(static_cast<std::uint32_t>(lit.log_scale));
  w.put_u8(static_cast<std::uint8_t>(lit.secret));
  w.put_u8(static_cast<std::uint8_t>(lit.error));
  w.put_u8(lit.insecure_for_tests ? 1 : 0);
  // Grouped digits change the key format; the default (one digit per prime) keeps the ids of
  // parameter sets defined before digits could be grouped.
  if (lit.dnum != 0 && lit.dnum != q.size()) w.put_u64(lit.dnum);
  return sha256(w.bytes());
}

struct Chain {
  std::vector<std::uint64_t> q, p;
};

Result<Chain> resolve_chain(const ParamsLiteral& lit, std::size_t n) {
  Chain c;
  if (lit.q.empty() && lit.p.empty() && !lit.q_bits.empty() && !lit.p_bits.empty()) {
    // One chain q_bits ++ p_bits, as SEAL's CoeffModulus::Create, so equal sizes never collide.
    std::vector<int> chain(lit.q_bits);
    chain.insert(chain.end(), lit.p_bits.begin(), lit.p_bits.end());
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto all, resolve_primes(n, chain, {}, "q"));
    c.q.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(lit.q_bits.size()));
    c.p.assign(all.begin() + static_cast<std::ptrdiff_t>(lit.q_bits.size()), all.end());
  } else {
    PRIVSEARCH_ASSIGN_OR_RETURN(c.q, resolve_primes(n, lit.q_bits, lit.q, "q"));
    PRIVSEARCH_ASSIGN_OR_RETURN(c.p, resolve_primes(n, lit.p_bits, lit.p, "p"));
  }
  if (c.q.size() > 15) {
    return invalid_argument_error(
        fmt::format("{} data primes; at most 15 are supported", c.q.size()));
  }
  if (c.p.size() > 4) {
    return invalid_argument_error(
        fmt::format("{} special primes; at most 4 are supported", c.p.size()));
  }
  return c;
}

// Every modulus: at most 61 bits, prime, 1 mod 2n (NTT-friendly), no repeats.
Status check_moduli(std::size_t n, const std::vector<std::uint64_t>& all) {
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::uint64_t v = all[i];
    if (v >= (std::uint64_t{1} << 61)) {
      return invalid_argument_error(fmt::format("prime {} has more than 61 bits", v));
    }
    if (!ring::is_prime(v))
      return invalid_argument_error(fmt::format("modulus {} is not prime", v));
    if ((v - 1) % (2 * n) != 0) {
      return invalid_argument_error(
          fmt::format("prime {} is not 1 mod 2n = {} (not NTT-friendly)", v, 2 * n));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (all[j] == v) return invalid_argument_error(fmt::format("prime {} appears twice", v));
    }
  }
  return Status();
}

// The scale sits below q_0 and no rescaling prime is narrower than it.
Status check_scale(const ParamsLiteral& lit, const std::vector<std::uint64_t>& q) {
  const int bits_q0 = static_cast<int>(std::bit_width(q[0]));
  if (lit.log_scale < 1 || lit.log_scale >= bits_q0) {
    return invalid_argument_error(
        fmt::format("`log_scale` = {} must be in [1, {}) (below the bits of q_0 = {})",
                    lit.log_scale, bits_q0, q[0]));
  }
  for (std::size_t i = 1; i < q.size(); ++i) {
    if (lit.log_scale > static_cast<int>(std::bit_width(q[i]))) {
      return invalid_argument_error(
          fmt::format("`log_scale` = {} exceeds the {} bits of rescaling prime q_{} = {}",
                      lit.log_scale, std::bit_width(q[i]), i, q[i]));
    }
  }
  return Status();
}

struct Digits {
  std::vector<std::size_t> first, size;
};

// Digit j gets ceil or floor of L/dnum consecutive primes, larger groups first; P must be at
// least as large as every digit's modulus.
Result<Digits> plan_digits(const ParamsLiteral& lit, const Chain& c) {
  const auto& q = c.q;
  const std::size_t dnum = lit.dnum == 0 ? q.size() : lit.dnum;
  if (dnum > q.size()) {
    return invalid_argument_error(
        fmt::format("`dnum` = {} exceeds the {} data primes", lit.dnum, q.size()));
  }
  Digits d;
  for (std::size_t j = 0, first = 0; j < dnum; ++j) {
    const std::size_t size = q.size() / dnum + (j < q.size() % dnum ? 1 : 0);
    d.first.push_back(first);
    d.size.push_back(size);
    first += size;
  }
  double log_p = 0;
  for (auto v : c.p) log_p += std::log2(static_cast<double>(v));
  for (std::size_t j = 0; j < dnum; ++j) {
    double log_digit = 0;
    for (std::size_t i = d.first[j]; i < d.first[j] + d.size[j]; ++i) {
      log_digit += std::log2(static_cast<double>(q[i]));
    }
    if (log_digit > log_p) {
      return invalid_argument_error(fmt::format(
          "special modulus P ({:.1f} bits) is smaller than key-switching digit {} ({:.1f} bits, "
          "primes q_{}..q_{}); key switching would add noise above the scale",
          log_p, j, log_digit, d.first[j], d.first[j] + d.size[j] - 1));
    }
  }
  return d;
}

}  // namespace

Result<Params> Params::create(const ParamsLiteral& lit) {
  const std::size_t n = lit.n;
  const std::size_t min_n = lit.insecure_for_tests ? 16 : 1024;
  if (n < min_n || n > 32768 || !std::has_single_bit(n)) {
    return invalid_argument_error(
        fmt::format("ring degree `n` = {} is not a power of two in [{}, 32768]", n, min_n));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const Chain chain, resolve_chain(lit, n));
  const auto& q = chain.q;
  const auto& p = chain.p;
  std::vector<std::uint64_t> all(q);
  all.insert(all.end(), p.begin(), p.end());
  PRIVSEARCH_RETURN_IF_ERROR(check_moduli(n, all));
  double log_qp = 0;
  for (auto v : all) log_qp += std::log2(static_cast<double>(v));
  if (!lit.insecure_for_tests && log_qp > he_standard_max_log_qp(n)) {
    return invalid_argument_error(
        fmt::format("log2(QP) = {:.2f} exceeds the 128-bit HE-standard bound {} for n = {}", log_qp,
                    he_standard_max_log_qp(n), n));
  }
  PRIVSEARCH_RETURN_IF_ERROR(check_scale(lit, q));
  PRIVSEARCH_ASSIGN_OR_RETURN(const Digits digits, plan_digits(lit, chain));
  if (lit.secret != SecretDistribution::kTernary || lit.error != ErrorDistribution::kCbd21) {
    return invalid_argument_error("unsupported secret or error distribution");
  }
  auto d = std::make_shared<Data>();
  d->name = lit.name;
  d->n = n;
  d->log_n = std::countr_zero(n);
  d->num_q = q.size();
  d->digit_first = digits.first;
  d->digit_size = digits.size;
  PRIVSEARCH_RETURN_IF_ERROR(build_tables(*d, q, p));
  d->log_scale = lit.log_scale;
  d->default_scale = std::ldexp(1.0, lit.log_scale);
  d->log_qp = log_qp;
  d->insecure = lit.insecure_for_tests;
  d->secret = lit.secret;
  d->error = lit.error;
  d->id = compute_id(lit, n, q, p);
  return Params(std::move(d));
}

// Moduli, NTT tables, RNS bases, the digits' exact converters, P -> q conversion, and the
// constants of ModDown and rescaling.
Status Params::build_tables(Data& d, const std::vector<std::uint64_t>& q,
                            const std::vector<std::uint64_t>& p) {
  std::vector<std::uint64_t> all(q);
  all.insert(all.end(), p.begin(), p.end());
  for (auto v : all) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto m, ring::Modulus::create(v));
    d.key_moduli.push_back(m);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto t, ring::NttTables::create(d.n, m));
    d.ntt.push_back(std::move(t));
  }
  for (std::size_t l = 0; l < q.size(); ++l) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto b, ring::RnsBase::create(std::span(q).first(l + 1)));
    d.q_bases.push_back(std::move(b));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto all_base, ring::RnsBase::create(all));
  d.digit_of_prime.resize(q.size());
  for (std::size_t j = 0; j < d.digit_first.size(); ++j) {
    std::vector<ring::BaseConverter> convs;
    for (std::size_t t = 1; t <= d.digit_size[j]; ++t) {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto from,
                                  ring::RnsBase::create(std::span(q).subspan(d.digit_first[j], t)));
      PRIVSEARCH_ASSIGN_OR_RETURN(auto conv, ring::BaseConverter::create(from, all_base));
      convs.push_back(std::move(conv));
      d.digit_of_prime[d.digit_first[j] + t - 1] = j;
    }
    d.digit_converters.push_back(std::move(convs));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto base_p, ring::RnsBase::create(p));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto conv, ring::BaseConverter::create(base_p, d.q_bases.back()));
  d.p_to_q = std::move(conv);
  for (std::size_t i = 0; i < q.size(); ++i) {
    const ring::Modulus& qi = d.key_moduli[i];
    std::uint64_t pm = 1;
    for (auto v : p) pm = qi.mul(pm, qi.reduce(v));
    d.p_mod_q.push_back(pm);
    // (P - 1)/2 = (P - 1) * 2^-1 mod q_i (P is odd).
    d.p_half_mod_q.push_back(qi.mul(qi.sub(pm, 1), qi.inv(2)));
    d.p_inv_mod_q.push_back(qi.inv(pm));
  }
  d.q_inv_mod_q.assign(q.size() * q.size(), 0);
  for (std::size_t l = 0; l < q.size(); ++l) {
    for (std::size_t i = 0; i < l; ++i) {
      const ring::Modulus& qi = d.key_moduli[i];
      d.q_inv_mod_q[l * q.size() + i] = qi.inv(qi.reduce(q[l]));
    }
  }
  return Status();
}

}  // namespace privsearch::ckks

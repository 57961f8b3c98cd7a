#include "pir/paillier/mont_batch.h"

#include <cstring>

#include "core/check.h"

namespace privsearch::pir {
namespace {

constexpr std::uint64_t kMask52 = (std::uint64_t{1} << 52) - 1;

void export_limbs52(const mpz_class& v, std::size_t limbs, std::uint64_t* out) {
  // mpz_export with 52-bit "nails" is not available for 64-bit words; peel 52 bits at a time.
  mpz_class x = v;
  for (std::size_t i = 0; i < limbs; ++i) {
    out[i] = mpz_getlimbn(x.get_mpz_t(), 0) & kMask52;
    mpz_fdiv_q_2exp(x.get_mpz_t(), x.get_mpz_t(), 52);
  }
  PRIVSEARCH_CHECK(x == 0, "value wider than its Montgomery limbs");
}

mpz_class import_limbs52(const std::uint64_t* in, std::size_t limbs) {
  mpz_class x = 0;
  for (std::size_t i = limbs; i-- > 0;) {
    mpz_mul_2exp(x.get_mpz_t(), x.get_mpz_t(), 52);
    x += static_cast<unsigned long>(in[i]);
  }
  return x;
}

bool cpu_has_ifma() {
  static const bool has = detail::mont_ifma_compiled() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512ifma");
  return has;
}

}  // namespace

Result<MontgomeryBatch> MontgomeryBatch::create(const mpz_class& odd_modulus, bool allow_ifma) {
  if (odd_modulus <= 1 || mpz_even_p(odd_modulus.get_mpz_t()) != 0) {
    return invalid_argument_error("Montgomery `modulus` must be odd and > 1");
  }
  const std::size_t bits = mpz_sizeinbase(odd_modulus.get_mpz_t(), 2);
  MontgomeryBatch mb;
  mb.modulus_ = odd_modulus;
  mb.limbs_ = (bits + 2 + kLimbBits - 1) / kLimbBits;
  if (mb.limbs_ > 1024) return out_of_range_error("Montgomery `modulus` wider than 53,248 bits");
  mpz_class r = 1;
  mpz_mul_2exp(r.get_mpz_t(), r.get_mpz_t(), static_cast<mp_bitcnt_t>(kLimbBits * mb.limbs_));
  mb.r_mod_m_ = r % odd_modulus;
  mpz_invert(mb.r_inv_.get_mpz_t(), mb.r_mod_m_.get_mpz_t(), odd_modulus.get_mpz_t());
  mpz_class two52 = 1;
  mpz_mul_2exp(two52.get_mpz_t(), two52.get_mpz_t(), 52);
  mpz_class inv;
  mpz_invert(inv.get_mpz_t(), odd_modulus.get_mpz_t(), two52.get_mpz_t());
  inv = two52 - inv;
  mb.k0_ = mpz_get_ui(inv.get_mpz_t()) & kMask52;
  mb.m_limbs_.resize(mb.limbs_);
  export_limbs52(odd_modulus, mb.limbs_, mb.m_limbs_.data());
  mb.use_ifma_ = allow_ifma && cpu_has_ifma();
  return mb;
}

void MontgomeryBatch::to_mont(const mpz_class& a, std::uint64_t* out) const {
  mpz_class x = a % modulus_;
  if (x < 0) x += modulus_;
  x = x * r_mod_m_ % modulus_;
  export_limbs52(x, limbs_, out);
}

mpz_class MontgomeryBatch::from_mont(const std::uint64_t* a) const {
  return mpz_class(import_limbs52(a, limbs_) * r_inv_ % modulus_);
}

void MontgomeryBatch::one(std::uint64_t* out) const { export_limbs52(r_mod_m_, limbs_, out); }

void MontgomeryBatch::mul_scalar(const std::uint64_t* a, const std::uint64_t* b,
                                 std::uint64_t* out) const {
  const std::size_t L = limbs_;
  const std::uint64_t* m = m_limbs_.data();
  // acc[i .. i+L] is live at step i; 2L+1 columns in all.
  // Per-thread scratch: this is the inner loop of the offline hint on CPUs without IFMA.
  thread_local std::vector<std::uint64_t> acc;
  acc.assign(2 * L + 2, 0);
  for (std::size_t i = 0; i < L; ++i) {
    const unsigned __int128 ai = a[i];
    // Column i decides m_i.
    const unsigned __int128 p0 = ai * b[0];
    std::uint64_t c0 = acc[i] + static_cast<std::uint64_t>(p0 & kMask52);
    const std::uint64_t mi = (c0 * k0_) & kMask52;
    const unsigned __int128 q0 = static_cast<unsigned __int128>(mi) * m[0];
    c0 += static_cast<std::uint64_t>(q0 & kMask52);
    std::uint64_t hprev =
        static_cast<std::uint64_t>(p0 >> 52) + static_cast<std::uint64_t>(q0 >> 52) + (c0 >> 52);
    for (std::size_t j = 1; j < L; ++j) {
      const unsigned __int128 p = ai * b[j];
      const unsigned __int128 q = static_cast<unsigned __int128>(mi) * m[j];
      acc[i + j] +=
          hprev + static_cast<std::uint64_t>(p & kMask52) + static_cast<std::uint64_t>(q & kMask52);
      hprev = static_cast<std::uint64_t>(p >> 52) + static_cast<std::uint64_t>(q >> 52);
    }
    acc[i + L] += hprev;
  }
  // Normalize columns L .. 2L into 52-bit limbs.
  std::uint64_t carry = 0;
  for (std::size_t j = 0; j < L; ++j) {
    const std::uint64_t v = acc[L + j] + carry;
    out[j] = v & kMask52;
    carry = v >> 52;
  }
  PRIVSEARCH_DCHECK(carry == 0 && acc[2 * L] == 0, "Montgomery result exceeds R");
}

void MontgomeryBatch::mul(const std::uint64_t* const* a, const std::uint64_t* const* b,
                          std::uint64_t* const* out, std::size_t count) const {
  PRIVSEARCH_CHECK(count <= kLanes, "MontgomeryBatch::mul takes at most 8 products");
  if (!use_ifma_) {
    for (std::size_t k = 0; k < count; ++k) mul_scalar(a[k], b[k], out[k]);
    return;
  }
  const std::size_t L = limbs_;
  // Interleave: word (limb j, lane k) at j * 8 + k. Unused lanes repeat lane 0.
  thread_local std::vector<std::uint64_t> buf;
  buf.resize(3 * L * kLanes + (2 * L + 2) * kLanes);
  std::uint64_t* ia = buf.data();
  std::uint64_t* ib = ia + L * kLanes;
  std::uint64_t* io = ib + L * kLanes;
  std::uint64_t* scratch = io + L * kLanes;
  for (std::size_t k = 0; k < kLanes; ++k) {
    const std::uint64_t* ak = a[k < count ? k : 0];
    const std::uint64_t* bk = b[k < count ? k : 0];
    for (std::size_t j = 0; j < L; ++j) {
      ia[j * kLanes + k] = ak[j];
      ib[j * kLanes + k] = bk[j];
    }
  }
  detail::mont_mul8_ifma(ia, ib, m_limbs_.data(), k0_, L, io, scratch);
  for (std::size_t k = 0; k < count; ++k) {
    std::uint64_t* ok = out[k];
    for (std::size_t j = 0; j < L; ++j) ok[j] = io[j * kLanes + k];
  }
}

}  // namespace privsearch::pir

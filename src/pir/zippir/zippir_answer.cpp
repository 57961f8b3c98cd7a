#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "core/bytes.h"
#include "core/sha256.h"
#include "pir/lwe/kernels.h"
#include "pir/paillier/bigint.h"
#include "pir/zippir/hint_engine.h"
#include "pir/zippir/zippir_server.h"

// The online phase of the ZipPIR server (arXiv 2603.09190, section 4): a query parsed and checked,
// its precomputed hint taken exactly once, the answer D q_lwe with the hint's Paillier part.
namespace privsearch::pir {
// Message framing, slot packing and timing shared by the client and the server.
using namespace detail;

Result<std::pair<std::uint64_t, std::uint64_t>> ZipPirServer::query_ids(
    std::span<const std::uint8_t> message) const {
  ByteReader r(message);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, kQueryMagic, "ZipPIR query"));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(r, info_.params_id(), "ZipPIR query"));
  std::pair<std::uint64_t, std::uint64_t> ids;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ids.first));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ids.second));
  // The body's size depends on the parameters only: a malformed query is told as such before
  // anyone looks its client up.
  const std::size_t nbytes = static_cast<std::size_t>(info_.params.paillier_bits) / 8;
  const std::size_t expected = info_.params.lwe.n * nbytes + info_.shape.columns * 4;
  if (r.remaining() != expected) {
    return data_loss_error("ZipPIR query has " + std::to_string(r.remaining()) +
                           " payload bytes, expected " + std::to_string(expected));
  }
  return ids;
}

Result<std::vector<std::uint8_t>> ZipPirServer::answer_with_hint(
    std::span<const std::uint8_t> message, std::span<const std::uint8_t> hint_message,
    ZipPirAnswerTimings* timings) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const ParsedQuery q, parse_query(message));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto parsed,
                              parse_hint(hint_message, *q.pk, info_.params_id(), packed_rows_));
  if (parsed.index != q.index) {
    return data_loss_error("ZipPIR hint is for query index " + std::to_string(parsed.index) +
                           ", the query uses " + std::to_string(q.index));
  }
  TakenHint hint;
  hint.k = std::move(parsed.k);
  return answer_parsed(q, hint, timings);
}

Result<ZipPirServer::ParsedQuery> ZipPirServer::parse_query(
    std::span<const std::uint8_t> message) const {
  const std::size_t n = info_.params.lwe.n;
  const DatabaseShape& shape = info_.shape;
  ByteReader r(message);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, kQueryMagic, "ZipPIR query"));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(r, info_.params_id(), "ZipPIR query"));
  ParsedQuery q;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(q.client_id));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(q.index));
  const std::size_t nbytes = static_cast<std::size_t>(info_.params.paillier_bits) / 8;
  if (r.remaining() != n * nbytes + shape.columns * 4) {
    return data_loss_error("ZipPIR query has " + std::to_string(r.remaining()) +
                           " payload bytes, expected " +
                           std::to_string(n * nbytes + shape.columns * 4));
  }
  {
    std::lock_guard lock(mu_);
    auto it = clients_.find(q.client_id);
    if (it == clients_.end()) return not_found_error("ZipPIR: unknown client");
    q.rns = it->second.rns;
    q.pk.emplace(it->second.pk);
  }
  const std::size_t words = q.rns->input_words();
  q.ck_words.assign(n * words, 0);
  // Offsets are little-endian; comparing bytes from the top against N's avoids a big-integer
  // import per offset (n = 1400 per query).
  const auto n_bytes = to_fixed_bytes(q.pk->n(), nbytes);
  auto below_n = [&](const std::vector<std::uint8_t>& x) {
    for (std::size_t i = nbytes; i-- > 0;) {
      if (x[i] != n_bytes[i]) return x[i] < n_bytes[i];
    }
    return false;  // equal to N
  };
  std::vector<std::uint8_t> offset(nbytes);
  for (std::size_t j = 0; j < n; ++j) {
    PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(offset));
    if (!below_n(offset)) {
      return data_loss_error("ZipPIR query: offset `ck_o` is not below N");
    }
    std::memcpy(q.ck_words.data() + j * words, offset.data(), nbytes);
  }
  q.qu.assign(shape.stride, 0);
  for (std::size_t c = 0; c < shape.columns; ++c) PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(q.qu[c]));
  return q;
}

Result<ZipPirServer::TakenHint> ZipPirServer::take_hint(const ParsedQuery& q,
                                                        std::span<const std::uint8_t> message) {
  std::lock_guard lock(mu_);
  auto it = clients_.find(q.client_id);
  if (it == clients_.end()) return not_found_error("ZipPIR: unknown client");
  auto& client = it->second;
  auto h = client.hints.find(q.index);
  TakenHint taken;
  if (h != client.hints.end() && limits_.retain_hints_for_retries) {
    const auto digest = sha256(message);
    std::array<std::uint8_t, 32> d{};
    std::copy(digest.begin(), digest.end(), d.begin());
    auto prior = client.answered.find(q.index);
    if (prior != client.answered.end() && prior->second != d) {
      return failed_precondition_error("ZipPIR: query index " + std::to_string(q.index) +
                                       " was already used by a different query");
    }
    client.answered[q.index] = d;
    taken.k = h->second;
  } else if (h != client.hints.end()) {
    taken.k = std::move(h->second);
    client.hints.erase(h);
  } else if (client.exported.erase(q.index) > 0) {
    taken.t_only = true;
  } else {
    return failed_precondition_error("ZipPIR: no precomputed hint for query index " +
                                     std::to_string(q.index) + " of this client");
  }
  return taken;
}

Result<std::vector<std::uint8_t>> ZipPirServer::answer(std::span<const std::uint8_t> message,
                                                       ZipPirAnswerTimings* timings) {
  // Parse and check the whole message before consuming the one-time hint.
  PRIVSEARCH_ASSIGN_OR_RETURN(const ParsedQuery q, parse_query(message));
  PRIVSEARCH_ASSIGN_OR_RETURN(const TakenHint hint, take_hint(q, message));
  return answer_parsed(q, hint, timings);
}

Result<std::vector<std::uint8_t>> ZipPirServer::answer_parsed(const ParsedQuery& q,
                                                              const TakenHint& hint,
                                                              ZipPirAnswerTimings* timings) const {
  const std::size_t n = info_.params.lwe.n;
  const DatabaseShape& shape = info_.shape;
  const PaillierPublicKey& pk = *q.pk;

  auto t0 = Clock::now();
  std::vector<std::uint32_t> ans(local_rows_);
  matvec_u8_u32(rows_.data(), local_rows_, shape.stride, q.qu.data(), ans.data());
  const double db_ms = ms_since(t0);

  auto t1 = Clock::now();
  const int b = info_.params.hint_bits;
  const int shift = info_.params.shift();
  const std::uint64_t mask = (std::uint64_t{1} << b) - 1;
  const std::uint64_t half = shift == 0 ? 0 : std::uint64_t{1} << (shift - 1);
  std::vector<std::uint32_t> ans_scaled(packed_rows_ * slots_, 0);
  for (std::size_t i = 0; i < local_rows_; ++i) {
    ans_scaled[i] = static_cast<std::uint32_t>(((ans[i] + half) >> shift) & mask);
  }
  const std::size_t L = primes_.size(), packed = packed_rows_;
  std::vector<std::uint32_t> ck_rns(L * n);
  q.rns->to_rns_many(q.ck_words, n, ck_rns.data());
  const double convert_ms = ms_since(t1);
  auto t2 = Clock::now();
  std::vector<std::uint32_t> t_rns(L * packed);
  rns_matvec(primes_, p_rns_.data(), packed, n, ck_rns.data(), t_rns.data());
  const double matvec_ms = ms_since(t2);
  auto t3 = Clock::now();
  const std::size_t nbytes = static_cast<std::size_t>(info_.params.paillier_bits) / 8;
  // One server: the response; a shard: a part naming its first packed row.
  ByteWriter w;
  put_header(w, is_shard() ? kResponsePartMagic : kResponseMagic);
  w.put_u64(info_.params_id());
  w.put_u64(q.index);
  w.put_u8(hint.t_only ? kModeTOnly : kModeCombined);
  if (is_shard()) w.put_u32(static_cast<std::uint32_t>(first_packed_));
  w.put_u32(static_cast<std::uint32_t>(packed));
  for (std::size_t i = 0; i < packed; ++i) {
    mpz_class t = q.rns->crt_mod(t_rns.data() + i, packed);
    t += pack_slots(ans_scaled.data() + i * slots_, slots_, b);
    t %= pk.n();
    if (hint.t_only) {
      w.put_bytes(to_fixed_bytes(t, nbytes));
    } else {
      // Enc(P_i r) + t_i: k_i (1 + t_i N) mod N^2.
      const mpz_class c = hint.k[i] * (1 + t * pk.n()) % pk.ciphertext_modulus();
      w.put_bytes(pk.ciphertext_to_bytes(c));
    }
  }
  if (timings != nullptr) {
    timings->db_pass_ms = db_ms;
    timings->hint_part_ms = ms_since(t1);
    timings->offsets_to_rns_ms = convert_ms;
    timings->rns_matvec_ms = matvec_ms;
    timings->crt_pack_add_ms = ms_since(t3);
  }
  return w.take();
}

}  // namespace privsearch::pir

#include "pir/zippir/zippir_server.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "core/bytes.h"
#include "core/sha256.h"
#include "pir/lwe/kernels.h"
#include "pir/paillier/bigint.h"
#include "pir/zippir/hint_engine.h"

namespace privsearch::pir {
// Message framing, slot packing and timing shared by the client and the server.
using namespace detail;

// --- server ------------------------------------------------------------------------------------

Result<std::unique_ptr<ZipPirServer>> ZipPirServer::create(const ZipPirParams& params,
                                                           LweDatabase db, const Seed& a_seed,
                                                           unsigned threads,
                                                           ZipPirServerLimits limits) {
  const DatabaseShape shape = db.shape();
  return create_rows(params, shape, {0, shape.rows}, std::move(db).release_matrix(), a_seed,
                     threads, limits);
}

Result<std::unique_ptr<ZipPirServer>> ZipPirServer::create_shard(const ZipPirParams& params,
                                                                 const LweDatabase& db,
                                                                 ZipPirRowRange range,
                                                                 const Seed& a_seed,
                                                                 unsigned threads,
                                                                 ZipPirServerLimits limits) {
  // The range is checked before its rows are copied; create_rows checks the rest.
  PRIVSEARCH_RETURN_IF_ERROR(check_row_range(params, db.shape(), range));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto rows, db.copy_rows(range.first_row, range.rows));
  return create_rows(params, db.shape(), range, std::move(rows), a_seed, threads, limits);
}

Result<std::unique_ptr<ZipPirServer>> ZipPirServer::create_rows(const ZipPirParams& params,
                                                                const DatabaseShape& shape,
                                                                ZipPirRowRange range,
                                                                std::vector<std::uint8_t> rows,
                                                                const Seed& a_seed,
                                                                unsigned threads,
                                                                ZipPirServerLimits limits) {
  PRIVSEARCH_RETURN_IF_ERROR(params.validate());
  PRIVSEARCH_RETURN_IF_ERROR(check_row_range(params, shape, range));
  auto h = compute_lwe_hint_rows(rows.data(), range.rows, shape, a_seed, params.lwe.n, threads);
  return from_hint(params, shape, range, std::move(rows), std::move(h), a_seed, threads, limits);
}

Result<std::unique_ptr<ZipPirServer>> ZipPirServer::update(const ZipPirServer& previous,
                                                           LweDatabase db, unsigned threads,
                                                           ZipPirServerLimits limits,
                                                           std::size_t* changed_columns) {
  const auto& old = previous.info_.shape;
  const DatabaseShape shape = db.shape();
  if (previous.is_shard() || previous.hint_.empty()) {
    return failed_precondition_error("ZipPIR: a row shard's database is updated by its own "
                                     "rebuild, not incrementally");
  }
  if (shape.rows != old.rows || shape.records_per_column != old.records_per_column ||
      shape.record_bytes != old.record_bytes || shape.columns < old.columns) {
    return invalid_argument_error("ZipPIR: an incremental update keeps the rows, records per "
                                  "column and record size, and does not drop columns");
  }
  const ZipPirParams& params = previous.info_.params;
  const std::size_t n = params.lwe.n, ld = hint_ld(n), rows = shape.rows;
  // C: the old columns where any byte differs, and every new column.
  std::vector<std::uint8_t> differs(shape.columns, 0);
  const std::uint8_t* before = previous.rows_.data();
  const std::uint8_t* after = db.data();
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint8_t* b = before + r * old.stride;
    const std::uint8_t* a = after + r * shape.stride;
    for (std::size_t c = 0; c < old.columns; ++c) differs[c] |= static_cast<std::uint8_t>(b[c] != a[c]);
  }
  std::vector<std::size_t> changed;
  for (std::size_t c = 0; c < shape.columns; ++c) {
    if (c >= old.columns || differs[c] != 0) changed.push_back(c);
  }
  if (changed_columns != nullptr) *changed_columns = changed.size();
  std::vector<std::uint32_t> h = previous.hint_;
  if (!changed.empty()) {
    // D[:, C] and D'[:, C] gathered (rows x |C|, padded to 64) against A[C, :].
    const std::size_t k = changed.size(), stride = (k + 63) / 64 * 64;
    // A's rows come from one PRG stream per chunk of kLweMatrixChunkRows rows: expand each
    // chunk that holds changed columns once, up to its last changed one, and keep those rows
    // (row by row, every expansion would first skip the part of its chunk before it).
    std::vector<std::uint32_t> a(k * ld, 0), chunk;
    for (std::size_t i = 0; i < k;) {
      const std::size_t first = changed[i] / kLweMatrixChunkRows * kLweMatrixChunkRows;
      std::size_t j = i;
      while (j < k && changed[j] < first + kLweMatrixChunkRows) ++j;
      const std::size_t count = changed[j - 1] - first + 1;
      chunk.assign(count * ld, 0);
      expand_lwe_matrix(previous.info_.a_seed, first, count, n, ld, chunk.data());
      for (; i < j; ++i) {
        std::copy_n(chunk.data() + (changed[i] - first) * ld, ld, a.data() + i * ld);
      }
    }
    std::vector<std::uint8_t> was(rows * stride, 0), now(rows * stride, 0);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < k; ++i) {
        const std::size_t c = changed[i];
        was[r * stride + i] = c < old.columns ? before[r * old.stride + c] : 0;
        now[r * stride + i] = after[r * shape.stride + c];
      }
    }
    std::vector<std::uint32_t> plus(rows * ld, 0), minus(rows * ld, 0);
    matmul_u8_u32(now.data(), rows, k, stride, a.data(), n, ld, plus.data(), threads);
    matmul_u8_u32(was.data(), rows, k, stride, a.data(), n, ld, minus.data(), threads);
    for (std::size_t i = 0; i < h.size(); ++i) h[i] += plus[i] - minus[i];  // mod 2^32
  }
  return from_hint(params, shape, {0, rows}, std::move(db).release_matrix(), std::move(h),
                   previous.info_.a_seed, threads, limits);
}

Result<std::unique_ptr<ZipPirServer>> ZipPirServer::from_hint(const ZipPirParams& params,
                                                              const DatabaseShape& shape,
                                                              ZipPirRowRange range,
                                                              std::vector<std::uint8_t> rows,
                                                              std::vector<std::uint32_t> hint,
                                                              const Seed& a_seed, unsigned threads,
                                                              ZipPirServerLimits limits) {
  const double fail = params.correctness_log2(shape.columns);
  if (fail > kZipPirMaxFailureLog2) {
    return invalid_argument_error("ZipPIR: decoding failure probability 2^" +
                                  std::to_string(fail) + " per byte exceeds 2^-40 for " +
                                  std::to_string(shape.columns) + " columns; raise `hint_bits`");
  }
  auto server = std::unique_ptr<ZipPirServer>(new ZipPirServer());
  server->info_ = ZipPirPublicInfo{params, shape, a_seed};
  server->limits_ = limits;
  server->slots_ = params.slots_per_plaintext();
  server->local_rows_ = range.rows;
  server->first_packed_ = range.first_row / server->slots_;
  server->packed_rows_ = (range.rows + server->slots_ - 1) / server->slots_;
  const std::size_t n = params.lwe.n;
  server->exponents_ = rescaled_hint_exponents(hint.data(), range.rows, n, hint_ld(n),
                                               params.hint_bits, hint_mask_seed(a_seed),
                                               range.first_row);
  server->hint_ = std::move(hint);
  // P in RNS: the primes depend only on the product size, so any modulus of the right size
  // gives the same basis; 2^(bits-1) + 1 stands in for N here.
  mpz_class stand_in = 1;
  mpz_mul_2exp(stand_in.get_mpz_t(), stand_in.get_mpz_t(),
               static_cast<mp_bitcnt_t>(params.paillier_bits - 1));
  stand_in += 1;
  PRIVSEARCH_ASSIGN_OR_RETURN(RnsBasis basis,
                              RnsBasis::create(params.online_product_bits(), stand_in));
  server->primes_.assign(basis.primes().begin(), basis.primes().end());
  const std::size_t L = basis.size(), packed = server->packed_rows_;
  server->p_rns_.assign(L * packed * n, 0);
  const std::size_t pwords = (server->slots_ * static_cast<std::size_t>(params.hint_bits) + 31) / 32;
  PRIVSEARCH_CHECK(pwords <= basis.input_words(), "packed hint entry wider than N");
  auto fill = [&](std::size_t i0, std::size_t i1) {
    std::vector<std::uint32_t> words(basis.input_words()), res(L);
    std::vector<std::uint32_t> slot_values(server->slots_);
    for (std::size_t i = i0; i < i1; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t l = 0; l < server->slots_; ++l) {
          const std::size_t r = i * server->slots_ + l;
          slot_values[l] = r < range.rows ? server->exponents_[r * n + j] : 0;
        }
        const mpz_class v = pack_slots(slot_values.data(), server->slots_, params.hint_bits);
        std::fill(words.begin(), words.end(), 0u);
        std::size_t count = 0;
        mpz_export(words.data(), &count, -1, 4, 0, 0, v.get_mpz_t());
        basis.to_rns(words, res.data());
        for (std::size_t l = 0; l < L; ++l) server->p_rns_[(l * packed + i) * n + j] = res[l];
      }
    }
  };
  threads = std::max(1u, threads);
  std::vector<std::thread> pool;
  const std::size_t per = (packed + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t i0 = std::min(packed, t * per), i1 = std::min(packed, i0 + per);
    if (i0 < i1) pool.emplace_back(fill, i0, i1);
  }
  for (auto& th : pool) th.join();
  server->rows_ = std::move(rows);
  return server;
}

std::size_t ZipPirServer::state_bytes_per_query() const {
  return packed_rows_ * static_cast<std::size_t>(info_.params.paillier_bits) / 4;
}

std::size_t ZipPirServer::client_state_bytes(std::uint64_t client_id) const {
  std::lock_guard lock(mu_);
  auto it = clients_.find(client_id);
  if (it == clients_.end()) return 0;
  return it->second.hints.size() * state_bytes_per_query();
}

std::vector<std::uint64_t> ZipPirServer::ready_indices(std::uint64_t client_id) const {
  std::lock_guard lock(mu_);
  std::vector<std::uint64_t> out;
  auto it = clients_.find(client_id);
  if (it == clients_.end()) return out;
  for (const auto& [index, hint] : it->second.hints) out.push_back(index);
  return out;
}

bool ZipPirServer::has_client(std::uint64_t client_id) const {
  std::lock_guard lock(mu_);
  return clients_.count(client_id) != 0;
}

std::vector<std::uint64_t> ZipPirServer::client_ids() const {
  std::lock_guard lock(mu_);
  std::vector<std::uint64_t> out;
  for (const auto& [id, c] : clients_) out.push_back(id);
  return out;
}

Result<std::uint64_t> ZipPirServer::register_client(std::span<const std::uint8_t> setup_message) {
  ByteReader r(setup_message);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, kSetupMagic, "ZipPIR setup"));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(r, info_.params_id(), "ZipPIR setup"));
  std::vector<std::uint8_t> nbytes(static_cast<std::size_t>(info_.params.paillier_bits) / 8);
  std::vector<std::uint8_t> seed(kZipPirSeedBytes);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(nbytes));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(seed));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  const mpz_class n = read_fixed(nbytes);
  if (bit_length(n) != static_cast<std::size_t>(info_.params.paillier_bits)) {
    return invalid_argument_error("ZipPIR setup: `N` has " + std::to_string(bit_length(n)) +
                                  " bits, the parameters need " +
                                  std::to_string(info_.params.paillier_bits));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(PaillierPublicKey pk,
                              PaillierPublicKey::create(n, 1, info_.params.allow_insecure));
  PRIVSEARCH_ASSIGN_OR_RETURN(RnsBasis basis,
                              RnsBasis::create(info_.params.online_product_bits(), n));
  const std::uint64_t id = id_of_setup(setup_message);
  std::lock_guard lock(mu_);
  // Registration is idempotent: a repeated setup keeps the client's precomputed hints.
  if (clients_.count(id) != 0) return id;
  if (clients_.size() >= limits_.max_clients) {
    return resource_exhausted_error("ZipPIR: `max_clients` = " +
                                    std::to_string(limits_.max_clients) + " reached");
  }
  Client c{std::move(pk), std::move(seed), std::make_shared<const RnsBasis>(std::move(basis)), {}, {},
           {}};
  clients_.emplace(id, std::move(c));
  return id;
}

bool ZipPirServer::unregister_client(std::uint64_t client_id) {
  std::lock_guard lock(mu_);
  return clients_.erase(client_id) != 0;
}

Status ZipPirServer::precompute(std::uint64_t client_id, std::uint64_t first_index,
                                std::size_t count, unsigned threads,
                                const std::atomic<bool>* cancel) {
  std::optional<PaillierPublicKey> pk;
  std::vector<std::uint8_t> seed;
  {
    std::lock_guard lock(mu_);
    auto it = clients_.find(client_id);
    if (it == clients_.end()) return not_found_error("ZipPIR: unknown client");
    if (it->second.hints.size() + count > limits_.max_queued_queries) {
      return resource_exhausted_error("ZipPIR: at most " +
                                      std::to_string(limits_.max_queued_queries) +
                                      " precomputed queries per client");
    }
    pk.emplace(it->second.pk);
    seed = it->second.seed;
  }
  const std::size_t n = info_.params.lwe.n;
  for (std::uint64_t q = first_index; q < first_index + count; ++q) {
    const auto ck = expand_compression_randomness(*pk, seed, q, n);
    auto hint = compute_compressed_hint(*pk, ck, exponents_, local_rows_, n, slots_,
                                        info_.params.hint_bits, threads, nullptr, cancel);
    if (cancel != nullptr && cancel->load()) {
      return unavailable_error("ZipPIR: hint work cancelled (the server is stopping)");
    }
    std::lock_guard lock(mu_);
    auto it = clients_.find(client_id);
    if (it == clients_.end()) return not_found_error("ZipPIR: client left during precompute");
    it->second.hints.insert_or_assign(q, std::move(hint));
  }
  return Status();
}

Result<std::vector<std::uint8_t>> ZipPirServer::export_hint(std::uint64_t client_id,
                                                            std::uint64_t query_index) {
  std::lock_guard lock(mu_);
  auto it = clients_.find(client_id);
  if (it == clients_.end()) return not_found_error("ZipPIR: unknown client");
  auto h = it->second.hints.find(query_index);
  if (h == it->second.hints.end()) {
    return failed_precondition_error("ZipPIR: no precomputed hint for query index " +
                                     std::to_string(query_index));
  }
  auto out = serialize_hint(it->second.pk, info_.params_id(), query_index, h->second);
  it->second.hints.erase(h);
  it->second.exported[query_index] = true;
  return out;
}

Result<std::vector<std::uint8_t>> ZipPirServer::compute_hint(std::uint64_t client_id,
                                                             std::uint64_t query_index,
                                                             unsigned threads,
                                                             const std::atomic<bool>* cancel) {
  std::optional<PaillierPublicKey> pk;
  std::vector<std::uint8_t> seed;
  {
    std::lock_guard lock(mu_);
    auto it = clients_.find(client_id);
    if (it == clients_.end()) return not_found_error("ZipPIR: unknown client");
    pk.emplace(it->second.pk);
    seed = it->second.seed;
  }
  const std::size_t n = info_.params.lwe.n;
  const auto ck = expand_compression_randomness(*pk, seed, query_index, n);
  const auto k = compute_compressed_hint(*pk, ck, exponents_, local_rows_, n, slots_,
                                         info_.params.hint_bits, threads, nullptr, cancel);
  if (cancel != nullptr && cancel->load()) {
    return unavailable_error("ZipPIR: hint work cancelled (the server is stopping)");
  }
  return serialize_hint(*pk, info_.params_id(), query_index, k);
}

Result<std::pair<std::uint64_t, std::uint64_t>> ZipPirServer::query_ids(
    std::span<const std::uint8_t> message) const {
  ByteReader r(message);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, kQueryMagic, "ZipPIR query"));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(r, info_.params_id(), "ZipPIR query"));
  std::pair<std::uint64_t, std::uint64_t> ids;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ids.first));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(ids.second));
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

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

Result<std::unique_ptr<ZipPirServer>> ZipPirServer::create_shard(
    const ZipPirParams& params, const LweDatabase& db, ZipPirRowRange range, const Seed& a_seed,
    unsigned threads, ZipPirServerLimits limits) {
  // The range is checked before its rows are copied; create_rows checks the rest.
  PRIVSEARCH_RETURN_IF_ERROR(check_row_range(params, db.shape(), range));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto rows, db.copy_rows(range.first_row, range.rows));
  return create_rows(params, db.shape(), range, std::move(rows), a_seed, threads, limits);
}

Result<std::unique_ptr<ZipPirServer>> ZipPirServer::create_rows(
    const ZipPirParams& params, const DatabaseShape& shape, ZipPirRowRange range,
    std::vector<std::uint8_t> rows, const Seed& a_seed, unsigned threads,
    ZipPirServerLimits limits) {
  PRIVSEARCH_RETURN_IF_ERROR(params.validate());
  PRIVSEARCH_RETURN_IF_ERROR(check_row_range(params, shape, range));
  auto h = compute_lwe_hint_rows(rows.data(), range.rows, shape, a_seed, params.lwe.n, threads);
  return from_hint(params, shape, range, std::move(rows), std::move(h), a_seed, threads, limits);
}

namespace {

// C: the old columns where any byte differs between `before` and `after`, and every new column.
std::vector<std::size_t> columns_changed(const std::uint8_t* before, const DatabaseShape& old,
                                         const std::uint8_t* after, const DatabaseShape& shape) {
  std::vector<std::uint8_t> differs(shape.columns, 0);
  for (std::size_t r = 0; r < shape.rows; ++r) {
    const std::uint8_t* b = before + r * old.stride;
    const std::uint8_t* a = after + r * shape.stride;
    for (std::size_t c = 0; c < old.columns; ++c)
      differs[c] |= static_cast<std::uint8_t>(b[c] != a[c]);
  }
  std::vector<std::size_t> changed;
  for (std::size_t c = 0; c < shape.columns; ++c) {
    if (c >= old.columns || differs[c] != 0) changed.push_back(c);
  }
  return changed;
}

// A[C, :] (|C| x ld). A's rows come from one PRG stream per chunk of kLweMatrixChunkRows rows:
// expand each chunk that holds changed columns once, up to its last changed one, and keep those
// rows (row by row, every expansion would first skip the part of its chunk before it).
std::vector<std::uint32_t> rows_of_a(const Seed& a_seed, const std::vector<std::size_t>& changed,
                                     std::size_t n, std::size_t ld) {
  const std::size_t k = changed.size();
  std::vector<std::uint32_t> a(k * ld, 0), chunk;
  for (std::size_t i = 0; i < k;) {
    const std::size_t first = changed[i] / kLweMatrixChunkRows * kLweMatrixChunkRows;
    std::size_t j = i;
    while (j < k && changed[j] < first + kLweMatrixChunkRows) ++j;
    const std::size_t count = changed[j - 1] - first + 1;
    chunk.assign(count * ld, 0);
    expand_lwe_matrix(a_seed, first, count, n, ld, chunk.data());
    for (; i < j; ++i) {
      std::copy_n(chunk.data() + (changed[i] - first) * ld, ld, a.data() + i * ld);
    }
  }
  return a;
}

// H += D'[:, C] A[C, :] - D[:, C] A[C, :] (mod 2^32): the hint is linear in the database, so
// only the changed columns are multiplied (gathered rows x |C|, padded to 64).
void add_hint_change(const std::uint8_t* before, const DatabaseShape& old,
                     const std::uint8_t* after, const DatabaseShape& shape,
                     const std::vector<std::size_t>& changed, const std::vector<std::uint32_t>& a,
                     std::size_t n, unsigned threads, std::vector<std::uint32_t>& h) {
  const std::size_t k = changed.size(), stride = (k + 63) / 64 * 64, rows = shape.rows;
  const std::size_t ld = hint_ld(n);
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

}  // namespace

Result<std::unique_ptr<ZipPirServer>> ZipPirServer::update(const ZipPirServer& previous,
                                                           LweDatabase db, unsigned threads,
                                                           ZipPirServerLimits limits,
                                                           std::size_t* changed_columns) {
  const auto& old = previous.info_.shape;
  const DatabaseShape shape = db.shape();
  if (previous.is_shard() || previous.hint_.empty()) {
    return failed_precondition_error(
        "ZipPIR: a row shard's database is updated by its own "
        "rebuild, not incrementally");
  }
  if (shape.rows != old.rows || shape.records_per_column != old.records_per_column ||
      shape.record_bytes != old.record_bytes || shape.columns < old.columns) {
    return invalid_argument_error(
        "ZipPIR: an incremental update keeps the rows, records per "
        "column and record size, and does not drop columns");
  }
  const ZipPirParams& params = previous.info_.params;
  const std::uint8_t* before = previous.rows_.data();
  const auto changed = columns_changed(before, old, db.data(), shape);
  if (changed_columns != nullptr) *changed_columns = changed.size();
  std::vector<std::uint32_t> h = previous.hint_;
  if (!changed.empty()) {
    const std::size_t n = params.lwe.n;
    const auto a = rows_of_a(previous.info_.a_seed, changed, n, hint_ld(n));
    add_hint_change(before, old, db.data(), shape, changed, a, n, threads, h);
  }
  return from_hint(params, shape, {0, shape.rows}, std::move(db).release_matrix(), std::move(h),
                   previous.info_.a_seed, threads, limits);
}

Result<std::unique_ptr<ZipPirServer>> ZipPirServer::from_hint(
    const ZipPirParams& params, const DatabaseShape& shape, ZipPirRowRange range,
    std::vector<std::uint8_t> rows, std::vector<std::uint32_t> hint, const Seed& a_seed,
    unsigned threads, ZipPirServerLimits limits) {
  const double fail = params.correctness_log2(shape.columns);
  if (fail > kZipPirMaxFailureLog2) {
    return invalid_argument_error("ZipPIR: decoding failure probability 2^" + std::to_string(fail) +
                                  " per byte exceeds 2^-40 for " + std::to_string(shape.columns) +
                                  " columns; raise `hint_bits`");
  }
  auto server = std::unique_ptr<ZipPirServer>(new ZipPirServer());
  server->info_ = ZipPirPublicInfo{params, shape, a_seed};
  server->limits_ = limits;
  server->slots_ = params.slots_per_plaintext();
  server->local_rows_ = range.rows;
  server->first_packed_ = range.first_row / server->slots_;
  server->packed_rows_ = (range.rows + server->slots_ - 1) / server->slots_;
  const std::size_t n = params.lwe.n;
  server->exponents_ =
      rescaled_hint_exponents(hint.data(), range.rows, n, hint_ld(n), params.hint_bits,
                              hint_mask_seed(a_seed), range.first_row);
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
  const std::size_t pwords =
      (server->slots_ * static_cast<std::size_t>(params.hint_bits) + 31) / 32;
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
    return resource_exhausted_error(
        "ZipPIR: `max_clients` = " + std::to_string(limits_.max_clients) + " reached");
  }
  Client c{std::move(pk),
           std::move(seed),
           std::make_shared<const RnsBasis>(std::move(basis)),
           {},
           {},
           {}};
  clients_.emplace(id, std::move(c));
  return id;
}

bool ZipPirServer::unregister_client(std::uint64_t client_id) {
  std::lock_guard lock(mu_);
  return clients_.erase(client_id) != 0;
}

Result<ZipPirServer::HintInputs> ZipPirServer::hint_inputs(std::uint64_t client_id,
                                                           std::size_t more) const {
  std::lock_guard lock(mu_);
  const auto it = clients_.find(client_id);
  if (it == clients_.end()) return not_found_error("ZipPIR: unknown client");
  if (it->second.hints.size() + more > limits_.max_queued_queries) {
    return resource_exhausted_error("ZipPIR: at most " +
                                    std::to_string(limits_.max_queued_queries) +
                                    " precomputed queries per client");
  }
  return HintInputs{it->second.pk, it->second.seed};
}

Result<std::vector<mpz_class>> ZipPirServer::hint_for(const HintInputs& in, std::uint64_t q,
                                                      unsigned threads,
                                                      const std::atomic<bool>* cancel) const {
  const std::size_t n = info_.params.lwe.n;
  const auto ck = expand_compression_randomness(in.pk, in.seed, q, n);
  auto k = compute_compressed_hint(in.pk, ck, exponents_, local_rows_, n, slots_,
                                   info_.params.hint_bits, threads, nullptr, cancel);
  if (cancel != nullptr && cancel->load()) {
    return unavailable_error("ZipPIR: hint work cancelled (the server is stopping)");
  }
  return k;
}

Status ZipPirServer::precompute(std::uint64_t client_id, std::uint64_t first_index,
                                std::size_t count, unsigned threads,
                                const std::atomic<bool>* cancel) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto inputs, hint_inputs(client_id, count));
  for (std::uint64_t q = first_index; q < first_index + count; ++q) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto hint, hint_for(inputs, q, threads, cancel));
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
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto inputs, hint_inputs(client_id, 0));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto k, hint_for(inputs, query_index, threads, cancel));
  return serialize_hint(inputs.pk, info_.params_id(), query_index, k);
}

}  // namespace privsearch::pir

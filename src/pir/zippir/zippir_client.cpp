#include "pir/zippir/zippir_client.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "core/bytes.h"
#include "core/secure_buffer.h"
#include "pir/paillier/bigint.h"
#include "pir/zippir/hint_engine.h"

namespace privsearch::pir {
// Message framing, slot packing and timing shared by the client and the server.
using namespace detail;

// --- client ------------------------------------------------------------------------------------

Result<ZipPirClient> ZipPirClient::create(const ZipPirPublicInfo& info, Prng& prng) {
  PRIVSEARCH_RETURN_IF_ERROR(info.params.validate());
  PRIVSEARCH_ASSIGN_OR_RETURN(PaillierKeyPair keys, paillier_keygen(info.params.paillier_bits, prng,
                                                                    1, info.params.allow_insecure));
  ZipPirClient client(info, std::move(keys));
  client.seed_.resize(kZipPirSeedBytes);
  prng.fill(client.seed_);
  client.client_id_ = id_of_setup(client.setup_message());
  return client;
}

std::vector<std::uint8_t> ZipPirClient::setup_message() const {
  ByteWriter w;
  put_header(w, kSetupMagic);
  w.put_u64(info_.params_id());
  w.put_bytes(to_fixed_bytes(keys_->public_key.n(),
                             static_cast<std::size_t>(info_.params.paillier_bits) / 8));
  w.put_bytes(seed_);
  return w.take();
}

Status ZipPirClient::check_not_forked() const {
  if (fork_generation_ == Prng::current_fork_generation()) return Status();
  return failed_precondition_error(
      "ZipPIR: this client was made before fork(); its offsets are "
      "shared with the parent process: create a new client");
}

Status ZipPirClient::precompute_query(std::uint64_t index, unsigned threads) {
  const auto owner = owner_.hold();
  PRIVSEARCH_RETURN_IF_ERROR(check_not_forked());
  if (offsets_.count(index) != 0) return Status();
  auto t0 = Clock::now();
  const std::size_t n = info_.params.lwe.n;
  const auto ck = expand_compression_randomness(keys_->public_key, seed_, index, n);
  std::vector<mpz_class> r(n);
  threads = std::max(1u, threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (std::size_t j = t; j < n; j += threads) {
        r[j] = keys_->private_key.decrypt_unchecked(ck[j]);
      }
    });
  }
  for (auto& th : pool) th.join();
  offsets_.insert_or_assign(index, std::move(r));
  timings_.offsets_ms = ms_since(t0);
  return Status();
}

Status ZipPirClient::skip_to_query_index(std::uint64_t index) {
  const auto owner = owner_.hold();
  if (index < next_index_) {
    return failed_precondition_error("ZipPIR: query index " + std::to_string(index) +
                                     " was already used (next is " + std::to_string(next_index_) +
                                     ")");
  }
  next_index_ = index;
  for (auto it = offsets_.begin(); it != offsets_.end();) {
    it = it->first < index ? offsets_.erase(it) : std::next(it);
  }
  return Status();
}

Status ZipPirClient::store_hint(std::span<const std::uint8_t> message) {
  const auto owner = owner_.hold();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto hint, parse_hint(message, keys_->public_key, info_.params_id(),
                                                    info_.params.packed_rows(info_.shape)));
  hints_.insert_or_assign(hint.index, std::move(hint.k));
  return Status();
}

Result<std::vector<std::uint8_t>> ZipPirClient::query(std::size_t record, Prng& prng,
                                                      std::optional<ZipPirPendingQuery>& pending,
                                                      unsigned threads) {
  const auto owner = owner_.hold();
  PRIVSEARCH_RETURN_IF_ERROR(check_not_forked());
  const DatabaseShape& shape = info_.shape;
  if (record >= shape.records) {
    return out_of_range_error("ZipPIR `record` = " + std::to_string(record) +
                              " >= " + std::to_string(shape.records) + " records");
  }
  const std::uint64_t index = next_index_;
  PRIVSEARCH_RETURN_IF_ERROR(precompute_query(index, threads));
  auto t0 = Clock::now();
  const std::size_t n = info_.params.lwe.n;
  LweSecret s = LweSecret::sample(info_.params.lwe, prng);
  std::uint32_t weight = 0;
  for (std::uint32_t v : s.values()) weight += v;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto qu, make_lwe_query(info_.params.lwe, info_.a_seed, shape, s,
                                                      shape.column_of(record), prng));
  const auto& pk = keys_->public_key;
  const std::size_t nbytes = static_cast<std::size_t>(info_.params.paillier_bits) / 8;
  auto& r = offsets_.at(index);
  ByteWriter w;
  w.reserve(64 + n * nbytes + shape.columns * 4);
  put_header(w, kQueryMagic);
  w.put_u64(info_.params_id());
  w.put_u64(client_id());
  w.put_u64(index);
  std::vector<std::uint8_t> buf(nbytes);
  for (std::size_t j = 0; j < n; ++j) {
    // ck_o = s_j - r_j mod N.
    mpz_class o = pk.n() - r[j] + s.values()[j];
    if (o >= pk.n()) o -= pk.n();
    PRIVSEARCH_RETURN_IF_ERROR(write_fixed(o, buf));
    w.put_bytes(buf);
  }
  secure_zero(buf.data(), buf.size());
  for (std::size_t c = 0; c < shape.columns; ++c) w.put_u32(qu[c]);
  offsets_.erase(index);  // r of an index is used once
  ++next_index_;
  pending.emplace(ZipPirPendingQuery(std::move(s), index, record, weight));
  timings_.query_ms = ms_since(t0);
  return w.take();
}

namespace {

// The response header, checked against the pending query's index and the database's packed
// rows; `mode` is combined or T-only.
Status read_response_header(ByteReader& r, std::uint64_t params_id, std::uint64_t query_index,
                            std::size_t packed, std::uint8_t& mode) {
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, kResponseMagic, "ZipPIR response"));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(r, params_id, "ZipPIR response"));
  std::uint64_t index = 0;
  std::uint32_t count = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(index));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(mode));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(count));
  if (index != query_index) {
    return failed_precondition_error("ZipPIR response is for query index " + std::to_string(index) +
                                     ", expected " + std::to_string(query_index));
  }
  if (mode != kModeCombined && mode != kModeTOnly) {
    return data_loss_error("ZipPIR response: unknown `mode` " + std::to_string(mode));
  }
  if (count != packed) {
    return data_loss_error("ZipPIR response: `count` = " + std::to_string(count) + ", expected " +
                           std::to_string(packed));
  }
  return Status();
}

}  // namespace

Result<ZipPirClient::RecordRows> ZipPirClient::decrypt_record_rows(
    const ZipPirPendingQuery& pending, std::span<const std::uint8_t> response,
    unsigned threads) const {
  const DatabaseShape& shape = info_.shape;
  const auto& pk = keys_->public_key;
  const std::size_t slots = info_.params.slots_per_plaintext();
  const std::size_t packed = info_.params.packed_rows(shape);
  ByteReader r(response);
  const std::uint64_t index = pending.query_index_;
  std::uint8_t mode = 0;
  PRIVSEARCH_RETURN_IF_ERROR(read_response_header(r, info_.params_id(), index, packed, mode));
  const std::size_t item = mode == kModeCombined ? pk.ciphertext_bytes() : pk.n_bytes();
  if (r.remaining() != item * packed) {
    return data_loss_error("ZipPIR response: " + std::to_string(r.remaining()) +
                           " payload bytes, expected " + std::to_string(item * packed));
  }
  const std::vector<mpz_class>* stored = nullptr;
  if (mode == kModeTOnly) {
    auto it = hints_.find(index);
    if (it == hints_.end()) {
      return failed_precondition_error("ZipPIR: the client holds no hint for query index " +
                                       std::to_string(index));
    }
    stored = &it->second;
  }
  const std::size_t first_row = shape.first_row_of(pending.record_);
  const std::size_t last_row = first_row + shape.record_bytes;  // exclusive
  RecordRows rows;
  rows.i0 = first_row / slots;
  rows.t_only = mode == kModeTOnly;
  const std::size_t i0 = rows.i0, i1 = (last_row - 1) / slots;
  // Validate every packed row, then decrypt only those that hold the record. Checking only the
  // record's rows would be a selective-failure channel: a provider that damages row j and sees
  // whether the client complains learns whether the record lies in row j. Every row gets the
  // same check and the same error, whichever row is bad.
  std::vector<mpz_class> items(i1 - i0 + 1);
  std::vector<std::uint8_t> item_bytes(item);
  bool all_valid = true;
  for (std::size_t i = 0; i < packed; ++i) {
    PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(item_bytes));
    mpz_class value;
    if (mode == kModeCombined) {
      auto c = pk.ciphertext_from_bytes(item_bytes);
      all_valid = all_valid && c.ok();
      if (c.ok()) value = std::move(c).value();
    } else {
      value = read_fixed(item_bytes);
      all_valid = all_valid && value < pk.n();
    }
    if (i >= i0 && i <= i1) items[i - i0] = std::move(value);
  }
  if (!all_valid) {
    return data_loss_error(
        "ZipPIR response: a packed row is not a valid ciphertext for this "
        "client's key");
  }
  rows.plain.resize(items.size());
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(items.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (std::size_t k = t; k < items.size(); k += threads) {
        rows.plain[k] =
            mode == kModeCombined
                ? keys_->private_key.decrypt_unchecked(items[k])
                : (keys_->private_key.decrypt_unchecked((*stored)[i0 + k]) + items[k]) % pk.n();
      }
    });
  }
  for (auto& th : pool) th.join();
  return rows;
}

// The record's bytes from its decrypted packed rows: each slot minus the public mask's share
// M_r . s (in units of gamma, hint_engine.h) and the carry estimate, rounded to a byte.
class ZipPirRecordDecoder {
 public:
  ZipPirRecordDecoder(const ZipPirPublicInfo& info, const ZipPirPendingQuery& pending)
      : info_(info), pending_(pending) {}

  std::vector<std::uint8_t> decode(std::size_t i0, const std::vector<mpz_class>& plain) const {
    const DatabaseShape& shape = info_.shape;
    const std::size_t slots = info_.params.slots_per_plaintext();
    const std::size_t first_row = shape.first_row_of(pending_.record_);
    const std::size_t last_row = first_row + shape.record_bytes;
    const int b = info_.params.hint_bits;
    const std::uint64_t gamma_mask = (std::uint64_t{1} << b) - 1;
    const std::uint64_t carry_estimate = pending_.weight_ / 2;
    const auto mask_share = mask_shares(first_row);
    std::vector<std::uint8_t> out(shape.record_bytes);
    for (std::size_t k = 0; k < plain.size(); ++k) {
      const std::size_t i = i0 + k;
      for (std::size_t l = 0; l < slots; ++l) {
        const std::size_t row = i * slots + l;
        if (row < first_row || row >= last_row) continue;
        const std::uint64_t x = slot_of(plain[k], l, b);
        const std::uint64_t y =
            (x + pending_.weight_ - (l == 0 ? 0 : carry_estimate) + mask_share[row - first_row]) &
            gamma_mask;
        // round(y / Delta') mod p with Delta' = 2^(b - 8).
        out[row - first_row] =
            static_cast<std::uint8_t>((y + (std::uint64_t{1} << (b - 9))) >> (b - 8));
      }
    }
    return out;
  }

 private:
  // The public mask's share M_r . s of each record row, in units of gamma.
  std::vector<std::uint64_t> mask_shares(std::size_t first_row) const {
    const std::size_t n = info_.params.lwe.n, bytes = info_.shape.record_bytes;
    const int shift = info_.params.shift();
    std::vector<std::uint32_t> mask_rows(bytes * n);
    expand_lwe_matrix(hint_mask_seed(info_.a_seed), first_row, bytes, n, n, mask_rows.data());
    std::vector<std::uint64_t> share(bytes);
    const auto s_values = pending_.secret_.values();
    for (std::size_t k = 0; k < bytes; ++k) {
      std::uint32_t dot = 0;
      const std::uint32_t* row = mask_rows.data() + k * n;
      for (std::size_t j = 0; j < n; ++j) dot += row[j] * s_values[j];
      share[k] = shift == 0 ? dot : (dot + (std::uint64_t{1} << (shift - 1))) >> shift;
    }
    return share;
  }

  const ZipPirPublicInfo& info_;
  const ZipPirPendingQuery& pending_;
};

Result<std::vector<std::uint8_t>> ZipPirClient::extract(const ZipPirPendingQuery& pending,
                                                        std::span<const std::uint8_t> response,
                                                        unsigned threads) {
  const auto owner = owner_.hold();
  auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto rows, decrypt_record_rows(pending, response, threads));
  auto out = ZipPirRecordDecoder(info_, pending).decode(rows.i0, rows.plain);
  if (rows.t_only) hints_.erase(pending.query_index_);
  timings_.extract_ms = ms_since(t0);
  return out;
}

}  // namespace privsearch::pir

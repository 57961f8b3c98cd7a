#include "pir/hintless/server.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>

#include "core/parallel.h"
#include "pir/hintless/crs.h"
#include "pir/hintless/hint.h"
#include "pir/hintless/kernels.h"
#include "pir/hintless/modswitch.h"

namespace privsearch::pir::hintless {

Result<std::unique_ptr<HintlessServer>> HintlessServer::create(const HintlessParams& params,
                                                               const HintlessShape& shape,
                                                               const RecordSource& records,
                                                               const HintlessServerOptions& options,
                                                               OutputRange range) {
  PRIVSEARCH_ASSIGN_OR_RETURN(HintlessRing ring, HintlessRing::create(params));
  if (range.first >= shape.outputs || range.first + range.count > shape.outputs) {
    return invalid_argument_error("hintless PIR outputs [" + std::to_string(range.first) + ", +" +
                                  std::to_string(range.count) + ") outside the shape's " +
                                  std::to_string(shape.outputs));
  }
  if (shape.columns == 0 || shape.columns > kMaxColumns || shape.outputs == 0 ||
      shape.records_per_column == 0 ||
      shape.records_per_column * shape.record_bytes > shape.column_bytes(params) ||
      shape.columns * shape.records_per_column < shape.records) {
    return invalid_argument_error("hintless PIR shape does not fit its records");
  }
  HintlessDatabase db(params, shape, range);
  PRIVSEARCH_RETURN_IF_ERROR(db.fill(records));
  std::unique_ptr<HintlessServer> server(
      new HintlessServer(std::move(ring), std::move(db), options));
  server->key_a_ = crs_key_polys(server->ring_);
  PRIVSEARCH_RETURN_IF_ERROR(server->preprocess_all());
  return server;
}

Status HintlessServer::preprocess_all() {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t d = ring_.d(), outputs = db_.outputs();
  const HintBuilder hint(ring_, db_.columns());
  leaves_.assign(outputs, {});
  precomp_.resize(outputs);
  output_a_.resize(outputs);
  for (std::size_t o = 0; o < outputs; ++o) {
    // The leaf a-parts of one block: rows split over the threads.
    leaves_[o].resize(d * 2 * d);
    PRIVSEARCH_RETURN_IF_ERROR(
        run_tasks(options_.threads, options_.threads, [&](std::size_t t, std::size_t) {
          std::vector<u64> leaf(2 * d), scratch(2 * d);
          for (std::size_t i = t; i < d; i += options_.threads) {
            hint.leaf_a_part(db_, db_.first_row() + o * d + i, leaf.data(), scratch.data());
            std::copy(leaf.begin(), leaf.end(), leaves_[o].begin() + i * 2 * d);
          }
          return Status();
        }));
    build_output(o);
    if (options_.progress) options_.progress(o + 1, outputs);
  }
  preprocess_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status();
}

void HintlessServer::build_output(std::size_t o) {
  const std::size_t d = ring_.d();
  const std::vector<u64> leaf_a(leaves_[o].begin(), leaves_[o].end());
  precomp_[o] = PackPrecomp::build(ring_, leaf_a, key_a_);
  std::vector<u64> a = precomp_[o].output_a();
  ring_.inverse(a.data());
  output_a_[o].resize(d);
  switch_a_part(ring_, a.data(), output_a_[o].data());
}

std::size_t HintlessServer::memory_bytes() const {
  std::size_t bytes = db_.entries().size() * sizeof(std::uint16_t);
  for (const auto& l : leaves_) bytes += l.size() * sizeof(u32);
  for (const auto& p : precomp_) bytes += p.memory_bytes();
  return bytes;
}

std::vector<u64> HintlessServer::first_layer_batch(std::span<const HintlessQuery> queries) const {
  const std::size_t d = ring_.d(), rows = db_.rows(), k = queries.size(), outputs = db_.outputs();
  std::vector<const u32*> c1(2 * k);
  for (std::size_t q = 0; q < k; ++q) {
    c1[2 * q] = queries[q].c1.data();
    c1[2 * q + 1] = queries[q].c1.data() + db_.columns();
  }
  std::vector<u64> ans(k * rows * 2);
  // Blocks of kMatvecRows rows: each c1 load serves the whole block (kernels.h).
  const std::size_t blocks = (rows + kMatvecRows - 1) / kMatvecRows;
  (void)run_tasks(options_.threads, blocks, [&](std::size_t b, std::size_t) {
    const std::size_t first = b * kMatvecRows, count = std::min(kMatvecRows, rows - first);
    u64 sums[2 * kMatvecRows];
    for (std::size_t q = 0; q < k; ++q) {
      const std::uint16_t* block = db_.row(db_.first_row() + first);
      matvec_rows(block, db_.columns(), count, db_.columns(), c1[2 * q], c1[2 * q + 1], sums);
      for (std::size_t r = first; r < first + count; ++r) {
        const std::size_t o = r / d, i = r % d;
        for (int p = 0; p < 2; ++p) {
          const ring::Modulus& m = ring_.modulus(p);
          const u64 v = m.mul(m.reduce(sums[2 * (r - first) + p]), ring_.d_inverse(p));
          ans[((q * outputs + o) * 2 + p) * d + i] = v;
        }
      }
    }
    return Status();
  });
  return ans;
}

Result<std::vector<HintlessResponse>> HintlessServer::answer(
    std::span<const HintlessQuery> queries) const {
  const std::size_t d = ring_.d(), k = queries.size(), outputs = db_.outputs();
  for (const auto& q : queries) {
    if (q.c1.size() != 2 * db_.columns() || q.key_b.size() != key_a_.size()) {
      return invalid_argument_error("hintless PIR query does not match the database");
    }
  }
  const std::vector<u64> ans = first_layer_batch(queries);
  std::vector<PackingKeyView> keys(k);
  for (std::size_t q = 0; q < k; ++q) keys[q].b = queries[q].key_b.data();
  std::vector<u64> packed(k * outputs * 2 * d);
  std::vector<PackScratch> scratch(std::max<std::size_t>(1, options_.threads));
  PRIVSEARCH_RETURN_IF_ERROR(
      run_tasks(options_.threads, outputs * 2, [&](std::size_t t, std::size_t worker) {
        const std::size_t o = t / 2;
        std::vector<const u64*> leaf(k);
        std::vector<u64*> out(k);
        for (std::size_t q = 0; q < k; ++q) {
          leaf[q] = ans.data() + (q * outputs + o) * 2 * d;
          out[q] = packed.data() + (q * outputs + o) * 2 * d;
        }
        pack_online(ring_, precomp_[o], leaf, keys, out, static_cast<int>(t % 2), &scratch[worker]);
        return Status();
      }));
  std::vector<HintlessResponse> responses(k);
  for (std::size_t q = 0; q < k; ++q) {
    HintlessResponse& r = responses[q];
    r.params_id = params().id;
    r.outputs = static_cast<std::uint32_t>(outputs);
    r.a.resize(outputs * d);
    r.b.resize(outputs * d);
    for (std::size_t o = 0; o < outputs; ++o) {
      u64* b = packed.data() + (q * outputs + o) * 2 * d;
      ring_.inverse(b);
      switch_b_part(ring_, b, r.b.data() + o * d);
      std::copy(output_a_[o].begin(), output_a_[o].end(), r.a.begin() + o * d);
    }
  }
  return responses;
}

Status HintlessServer::update(std::span<const std::size_t> changed, const RecordSource& records) {
  if (changed.empty()) return Status();
  std::set<std::size_t> columns;
  for (std::size_t i : changed) {
    if (i >= shape().records) {
      return out_of_range_error("record " + std::to_string(i) + " is past the " +
                                std::to_string(shape().records) + " records of the database");
    }
    columns.insert(shape().column_of(i));
  }
  return update_columns(columns, records);
}

std::vector<std::size_t> HintlessServer::changed_columns(const RecordSource& records) const {
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < db_.columns(); ++c) {
    if (db_.column_differs(c, records)) out.push_back(c);
  }
  return out;
}

Status HintlessServer::update_columns(const std::set<std::size_t>& columns,
                                      const RecordSource& records) {
  if (columns.empty()) return Status();
  const auto start = std::chrono::steady_clock::now();
  // delta[row][c - k d] per changed column block k: new minus old entries.
  const std::size_t d = ring_.d(), rows = db_.rows();
  std::map<std::size_t, std::vector<std::int32_t>> deltas;  // block -> rows x d
  for (std::size_t c : columns) {
    auto& delta = deltas[c / d];
    if (delta.empty()) delta.assign(rows * d, 0);
    for (std::size_t r = 0; r < rows; ++r) delta[r * d + c % d] -= db_.row(db_.first_row() + r)[c];
    PRIVSEARCH_RETURN_IF_ERROR(db_.rewrite_column(c, records));
    for (std::size_t r = 0; r < rows; ++r) delta[r * d + c % d] += db_.row(db_.first_row() + r)[c];
  }
  const HintBuilder hint(ring_, db_.columns());
  PRIVSEARCH_RETURN_IF_ERROR(
      run_tasks(options_.threads, options_.threads, [&](std::size_t t, std::size_t) {
        std::vector<u64> leaf(2 * d), scratch(2 * d);
        for (std::size_t r = t; r < rows; r += options_.threads) {
          u32* kept = leaves_[r / d].data() + (r % d) * 2 * d;
          std::copy(kept, kept + 2 * d, leaf.begin());
          for (const auto& [k, delta] : deltas) {
            hint.add_block_delta(k, std::span(delta).subspan(r * d, d), leaf.data(),
                                 scratch.data());
          }
          for (std::size_t i = 0; i < 2 * d; ++i) kept[i] = static_cast<u32>(leaf[i]);
        }
        return Status();
      }));
  for (std::size_t o = 0; o < db_.outputs(); ++o) build_output(o);
  update_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status();
}

Result<std::unique_ptr<HintlessServer>> HintlessServer::grown(const HintlessShape& shape,
                                                              const RecordSource& records) const {
  const HintlessShape& old = db_.shape();
  if (shape.record_bytes != old.record_bytes || shape.outputs != old.outputs ||
      shape.records_per_column != old.records_per_column || shape.columns < old.columns ||
      shape.records < old.records || shape.columns > kMaxColumns ||
      shape.columns * shape.records_per_column < shape.records) {
    return failed_precondition_error(
        "hintless PIR: the new shape is not a widening of the served one (a rebuild is needed)");
  }
  std::unique_ptr<HintlessServer> next(
      new HintlessServer(ring_, HintlessDatabase::widened(db_, shape), options_));
  next->key_a_ = key_a_;
  next->leaves_ = leaves_;
  next->precomp_ = precomp_;  // valid as they are when no column changed
  next->output_a_ = output_a_;
  const auto changed = next->changed_columns(records);
  PRIVSEARCH_RETURN_IF_ERROR(
      next->update_columns(std::set<std::size_t>(changed.begin(), changed.end()), records));
  return next;
}

}  // namespace privsearch::pir::hintless

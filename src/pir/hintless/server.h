// The provider side of the hintless backend (YPIR+SP): a record matrix, its client-independent
// preprocessing, and batched answers. Nothing here depends on a client: the preprocessing runs
// once per database version and serves every client, so a new client's first fetch costs the
// provider one answer and nothing else (ZipPIR computes a hint per client and query).
//
// Preprocessing, per output block o of d rows: the embedded hint rows (hint.h), then the packing
// precomputation over them (packing.h) and the output's switched a-part (modswitch.h).
// Answer for a batch of K queries: one pass over D computing ans_k = D c1_k (lazy 64-bit sums,
// one reduction per row), scaled by d^-1, then the online packing of each output block (the
// node digits streamed once for the batch, the two primes on two threads), the inverse NTT and
// the switch of the b-part. The response's a-parts are the precomputed ones.
// Thread safety: answer() may run concurrently with itself; create() builds everything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "core/status.h"
#include "pir/hintless/database.h"
#include "pir/hintless/messages.h"
#include "pir/hintless/packing.h"
#include "pir/hintless/ring_context.h"

namespace privsearch::pir::hintless {

struct HintlessServerOptions {
  unsigned threads = 2;
  // Reports preprocessing progress: (outputs done, outputs).
  std::function<void(std::size_t, std::size_t)> progress;
};

class HintlessServer {
 public:
  using RecordSource = std::function<std::span<const std::uint8_t>(std::size_t)>;

  // `range`: the outputs this server holds (a shard's block of rows); kInvalidArgument when it
  // is empty or reaches past the shape's outputs.
  static Result<std::unique_ptr<HintlessServer>> create(const HintlessParams& params,
                                                        const HintlessShape& shape,
                                                        const RecordSource& records,
                                                        const HintlessServerOptions& options = {},
                                                        OutputRange range = OutputRange::all());

  const HintlessParams& params() const { return ring_.params(); }
  const HintlessShape& shape() const { return db_.shape(); }
  const HintlessDatabase& database() const { return db_; }
  double preprocess_seconds() const { return preprocess_s_; }
  double last_update_seconds() const { return update_s_; }
  // The database matrix, the kept hint rows and the packing precomputation.
  std::size_t memory_bytes() const;

  // One response per query, in order, holding this server's outputs (all of them, or a shard's
  // part: join_response_parts assembles the parts). Queries must come from decode_query.
  Result<std::vector<HintlessResponse>> answer(std::span<const HintlessQuery> queries) const;

  // For tests: a held output's packing precomputation (local index).
  const PackPrecomp& precomp(std::size_t output) const { return precomp_[output]; }

  // Rewrites the columns of the changed records, updates the kept hint rows over the changed
  // columns only (one NTT per row and changed column block instead of ceil(d0 / d): the hint is
  // linear in D), and redoes the packing precomputation of the held outputs (it depends on all
  // of a block's rows, non-linearly through the gadget digits). Not concurrent with answer().
  Status update(std::span<const std::size_t> changed, const RecordSource& records);
  // The same for whole columns (update_columns) after finding which columns `records` changes
  // (changed_columns: each column assembled again and compared with the held rows).
  std::vector<std::size_t> changed_columns(const RecordSource& records) const;
  Status update_columns(const std::set<std::size_t>& columns, const RecordSource& records);
  // An append: a copy of this server over `shape` (more records, the same record size, outputs
  // and records per column, so only columns are added), its hint updated over the changed and
  // new columns only. The CRS a_k is one polynomial per column block k whatever the column count
  // (crs.h), and H = D A is linear in D, so the kept hint rows plus the new columns' part are the
  // hint of the grown D. kFailedPrecondition when `shape` is not such a widening.
  Result<std::unique_ptr<HintlessServer>> grown(const HintlessShape& shape,
                                                const RecordSource& records) const;
  // A deep copy (a new version is updated on the copy while this one keeps answering).
  std::unique_ptr<HintlessServer> copy() const {
    return std::unique_ptr<HintlessServer>(new HintlessServer(*this));
  }

 private:
  HintlessServer(HintlessRing ring, HintlessDatabase db, HintlessServerOptions options)
      : ring_(std::move(ring)), db_(std::move(db)), options_(std::move(options)) {}
  HintlessServer(const HintlessServer&) = default;
  Status preprocess_all();
  // The packing precomputation and switched a-part of held output o from its kept leaves.
  void build_output(std::size_t o);
  // ans for K queries: K x held outputs Poly2-halves laid out [query][output][prime][d].
  std::vector<u64> first_layer_batch(std::span<const HintlessQuery> queries) const;

  HintlessRing ring_;
  HintlessDatabase db_;
  HintlessServerOptions options_;
  std::vector<u64> key_a_;  // CRS key a-rows
  // The embedded hint rows (hint.h) per held output, d Poly2s in NTT form as u32 (32 MiB per
  // output at d = 2048), kept so that an update recomputes only the changed columns' part.
  std::vector<std::vector<u32>> leaves_;
  std::vector<PackPrecomp> precomp_;        // per held output (local index)
  std::vector<std::vector<u32>> output_a_;  // switched a-part per held output
  double preprocess_s_ = 0, update_s_ = 0;
};

}  // namespace privsearch::pir::hintless

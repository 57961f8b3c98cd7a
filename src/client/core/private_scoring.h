// The client of access-private scoring, shared by SearchClient and the WebAssembly core: the
// index's public layout and hint, the scorer with its pool of precomputed masks, and the two
// halves of one request (search paper 2, "access-private scoring"; scoring/README.md).
//
//   scoring = AccessPrivateScoring::create(version.private_scoring())
//   q       = scoring.encrypt(query, candidates, m, prng)   m cluster queries: the request body
//   docs    = scoring.decode(std::move(q.pending), answers)  every document of the m clusters
//
// The K local PQ candidates only choose which m clusters are scored; the provider multiplies its
// whole matrix by the m LWE queries and learns no candidate, no cluster and no score. The masks'
// secrets stay in `PendingScore` until decode() consumes it.
// Thread safety: the scorer's OwnerLock guards its pool; one request at a time per object.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/csprng.h"
#include "core/status.h"
#include "scoring/client/private_query.h"
#include "version/index_version.h"

namespace privsearch::client::core {

// One access-private request: its body (PrivateScoreRequest.queries and .ciphertexts) and the
// secrets its answer is read with.
struct PrivateQueries {
  std::vector<std::uint32_t> clusters;  // m, in the order queried
  std::string ciphertexts;              // packed (layout.query_drop_bits)
  scoring::PendingScore pending;
  double masks_ms = 0;    // masks made now because the pool ran short (0 when precomputed)
  double encrypt_ms = 0;  // the m encryptions and the packing
};

class AccessPrivateScoring {
 public:
  static Result<std::unique_ptr<AccessPrivateScoring>> create(
      version::PrivateScoringArtifacts artifacts);

  const scoring::ScoringLayout& layout() const { return *layout_; }
  // Masks for `count` future queries ahead of time (offline work; encrypt() makes the ones it
  // lacks).
  Status prepare_masks(std::size_t count, Prng& prng) { return scorer_.prepare(count, prng); }
  std::size_t prepared_masks() const { return scorer_.prepared(); }

  // The m clusters the candidates (document rows, best first) choose for `query`, each
  // encrypted. m = 0 is kInvalidArgument.
  Result<PrivateQueries> encrypt(std::span<const float> query,
                                 std::span<const std::uint32_t> candidates, std::size_t m,
                                 Prng& prng);
  // The scores of every document of the pending clusters, best first (ties by row), from the
  // provider's packed answers; kDataLoss for answers of another size or that do not decode.
  Result<std::vector<scoring::ScoredDoc>> decode(scoring::PendingScore pending,
                                                 std::string_view answers) const;

 private:
  AccessPrivateScoring(std::unique_ptr<scoring::ScoringLayout> layout,
                       std::unique_ptr<scoring::ScoringHint> hint, scoring::PrivateScorer scorer);
  // Stable addresses: the scorer keeps pointers to both.
  std::unique_ptr<scoring::ScoringLayout> layout_;
  std::unique_ptr<scoring::ScoringHint> hint_;
  scoring::PrivateScorer scorer_;
};

}  // namespace privsearch::client::core

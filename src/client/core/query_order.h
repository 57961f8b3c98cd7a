// The client's plaintext steps of a search, shared by every client (SearchClient, the WebAssembly
// core, Python through SearchClient): the query made a unit vector, the order the candidates are
// sent in, and the ranking of their decrypted scores. No transport, no protobuf.
//
// Why each step is here once: the provider's compact response bound assumes |z| = 1 (every score
// in [-1, 1]); the candidates leave in a uniformly random order so the provider's view of K IDs
// carries no rank (search paper, section 3.1); and two clients that break ties differently would
// show different top 10s for the same scores (the native and browser clients are tested equal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/csprng.h"
#include "core/status.h"
#include "index/artifacts/doc_ids.h"
#include "index/artifacts/payload_store.h"

namespace privsearch::client::core {

// What the query was, for the message of a zero query.
enum class QueryKind { kText, kVector, kProjected };

// z / |z|; kInvalidArgument for the zero vector (a text with no word of the vocabulary, or a
// zero vector), named after what the query was.
Result<std::vector<double>> unit_query(std::span<const double> z, QueryKind kind);
Result<std::vector<double>> unit_query(std::span<const float> z, QueryKind kind);

// One search result row.
struct Hit {
  std::uint64_t doc = 0;  // row in corpus order
  double score = 0;       // decrypted <z, x_doc> (rerank) or the exact integer score M u
  std::string id;         // the document's own id (the corpus _id), when the index has ids
  std::string title;      // from the local payload store, when present
};

// A hit named from what the client holds: its id from the signed id table, its title from the
// local payload store (either may be null). Nothing is asked of anyone: a hit's id never leaves
// the client.
Hit make_hit(std::uint64_t doc, double score, const index::DocIds* ids,
             const index::PayloadStore* payloads);

// The order K candidates are sent in: sent()[s] = candidates[order[s]].
class SendOrder {
 public:
  // A uniformly random permutation from `prng` (Fisher-Yates), or the candidates' own order
  // when `prng` is null (a caller that opts out, e.g. to compare with a reference).
  static SendOrder make(std::span<const std::uint32_t> candidates, Prng* prng);

  const std::vector<std::uint64_t>& sent() const { return sent_; }
  // Scores aligned with sent() back in the candidates' order; kDataLoss when the provider
  // answered another number of scores than candidates were sent.
  Result<std::vector<double>> restore(std::span<const double> sent_scores) const;

 private:
  std::vector<std::size_t> order_;
  std::vector<std::uint64_t> sent_;
};

// The positions of the `top` best scores, best first; equal scores keep their order in `scores`
// (a stable sort), so the ranking of ties is the candidate source's.
std::vector<std::size_t> rank_by_score(std::span<const double> scores, std::size_t top);

}  // namespace privsearch::client::core

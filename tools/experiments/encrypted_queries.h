// The evaluation of the encrypted path, query by query, that `privsearch search --evaluate` and
// `privsearch eval --encrypted` share: each judged query goes through the private search
// (SearchClient against a provider), and the same K candidates are reranked in plaintext from
// the index's exact store (evaluation only: a client never has it). The accumulator keeps what
// both reports are made of; each command names the fields its JSON has always had.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "client/search_client.h"
#include "core/status.h"
#include "index/artifacts/exact_store.h"
#include "index/encoders/beir.h"

namespace privsearch::tools {

// One query's two rankings (top 10 document ids) and the score error of every candidate.
struct EncryptedQueryOutcome {
  std::vector<std::string> encrypted_top10, plaintext_top10;
  std::vector<double> abs_errors;  // |decrypted - exact <unit(z), x>| per candidate
  double max_abs_error = 0;
  double ndcg10_encrypted = 0, ndcg10_plaintext = 0;
  client::SearchTiming timing;
  bool top10_match() const { return encrypted_top10 == plaintext_top10; }
};

// kInvalidArgument (from the client) when the query has no known terms: callers count it as
// nDCG 0 on both sides. `raw_query`: the query's own vector (an index built from --doc-vectors
// with the collection's query vectors) instead of its text.
Result<EncryptedQueryOutcome> run_encrypted_query(client::SearchClient& client,
                                                  const index::ExactStore& store,
                                                  const index::Collection& collection,
                                                  const index::Query& query, std::size_t k,
                                                  std::span<const float> raw_query = {});

// What a run over many queries adds up to.
struct EncryptedRunTotals {
  std::vector<double> ndcg_encrypted, ndcg_plaintext;  // one per judged query
  std::vector<double> end_to_end_ms, provider_ms, rpc_ms;
  std::vector<double> abs_errors;
  double max_abs_error = 0;
  std::size_t judged_queries = 0, same_top10 = 0;
  std::size_t request_bytes = 0, response_bytes = 0, key_upload_bytes = 0;

  void add(const EncryptedQueryOutcome& q);
  void add_no_known_terms();  // nDCG 0 for both rankings
  double top10_match_fraction() const;
};

}  // namespace privsearch::tools

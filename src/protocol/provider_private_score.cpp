// ProviderCore::private_score: the provider half of access-private scoring. Everything it
// checks is public (sizes, m, version); it never sees a cluster id, a score or the query.
#include <chrono>
#include <string>

#include "core/bytes.h"
#include "pir/lwe/lwe64.h"
#include "scoring/answer.h"
#include "protocol/provider_core.h"

namespace privsearch::protocol {
namespace {

v1::PrivateScoreResponse score_error(v1::ErrorCode code, std::string message) {
  v1::PrivateScoreResponse r;
  *r.mutable_error() = make_error(code, std::move(message));
  return r;
}

}  // namespace

v1::PrivateScoreResponse ProviderCore::private_score(const v1::PrivateScoreRequest& request,
                                                     const Caller& caller) try {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& limits = config_.limits;
  if (request.ByteSizeLong() > limits.max_message_bytes) {
    return score_error(v1::MESSAGE_TOO_LARGE, "request above the message-size limit");
  }
  if (request.artifact_version() != config_.artifact_version) {
    return score_error(v1::WRONG_ARTIFACT_VERSION, "the provider serves artifact version " +
                                                       config_.artifact_version +
                                                       "; fetch the current index");
  }
  const auto& matrix = config_.scoring_matrix;
  if (!matrix) {
    return score_error(v1::PRIVATE_SCORING_UNAVAILABLE,
                       "this provider's index has no access-private scoring database (it was "
                       "built with --no-access-private)");
  }
  const std::size_t m = request.queries();
  if (m == 0 || m > limits.max_private_queries) {
    return score_error(v1::MALFORMED_REQUEST,
                       std::to_string(m) + " private queries; between 1 and " +
                           std::to_string(limits.max_private_queries) + " per request");
  }
  const int drop = static_cast<int>(matrix->query_drop_bits);
  const std::size_t expected = m * matrix->stride * pir::lwe64_entry_bytes(drop);
  if (request.ciphertexts().size() != expected) {
    return score_error(v1::MALFORMED_REQUEST,
                       "private queries of " + std::to_string(request.ciphertexts().size()) +
                           " bytes; " + std::to_string(m) + " queries over this index take " +
                           std::to_string(expected));
  }
  // Anonymous callers are bounded by the transport's limits only; an identity's budget is
  // charged one per request, like a rerank (docs/SECURITY.md: the score oracle).
  const std::string group = "identity:" + caller.identity;
  if (auto account = identity_account(caller, group)) {
    const BudgetAccount accounts[] = {*account};
    auto charged = state_->budgets->charge(accounts);
    if (!charged.ok()) {
      if (charged.status().code() != StatusCode::kResourceExhausted) {
        return score_error(v1::STATE_UNAVAILABLE,
                           "request budgets unavailable: " + charged.status().message());
      }
      return score_error(v1::QUOTA_EXHAUSTED, "identity `" + caller.identity +
                                                  "` used its request budget for this window");
    }
  }
  std::vector<std::uint64_t> queries;
  scoring::unpack_queries(request.ciphertexts(), matrix->query_drop_bits, queries);
  for (std::size_t i = 0; i < m; ++i) {
    // The kernels need zero past the used columns (layout.h): padding is part of the format.
    for (std::size_t c = matrix->columns; c < matrix->stride; ++c) {
      if (queries[i * matrix->stride + c] != 0) {
        return score_error(v1::MALFORMED_REQUEST, "nonzero entries past the matrix columns");
      }
    }
  }
  v1::PrivateScoreResponse response;
  response.set_answers(scoring::answer_private_queries(*matrix, queries, m));
  response.set_provider_ms(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return response;
} catch (const std::exception& e) {
  return score_error(v1::INTERNAL, std::string("private scoring failed: ") + e.what());
}

}  // namespace privsearch::protocol

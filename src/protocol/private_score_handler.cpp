// PrivateScoreHandler (private_score_handler.h): the provider half of access-private scoring.
#include "protocol/private_score_handler.h"

#include <chrono>
#include <limits>
#include <span>
#include <string>

#include "core/bytes.h"
#include "pir/lwe/lwe64.h"
#include "protocol/provider_core.h"
#include "protocol/refusal.h"
#include "scoring/answer.h"

namespace privsearch::protocol {
namespace {

v1::PrivateScoreResponse score_error(v1::ErrorCode code, std::string message) {
  return refusal_response<v1::PrivateScoreResponse>(code, std::move(message));
}

}  // namespace

// Every caller is metered (docs/SECURITY.md, access-private): the provider cannot see which
// columns a query reads, so the count of queries is the only bound on how fast the matrix is
// read. A query may pack up to 3 columns (15-bit answers over 4-bit entries), which the stated
// rate includes.
PrivateScoreHandler::PrivateScoreHandler(const ProviderLimits& limits, std::string artifact_version,
                                         std::shared_ptr<const scoring::ScoringMatrix> matrix,
                                         std::shared_ptr<ProviderState> state)
    : limits_(limits),
      artifact_version_(std::move(artifact_version)),
      matrix_(std::move(matrix)),
      state_(std::move(state)) {}

std::optional<BudgetAccount> PrivateScoreHandler::account(const Caller& caller) const {
  const auto& l = limits_;
  if (l.private_queries_per_window == 0) return std::nullopt;
  // Anonymous callers are counted by address (rate_key: "peer:ADDR"), identities by name; an
  // in-process caller (tests, benches) is "local".
  std::string name = "private:" + caller.rate_key();
  std::int64_t expires = std::numeric_limits<std::int64_t>::max();
  if (l.private_query_window_s > 0) {
    const std::int64_t window = unix_now_s() / l.private_query_window_s;
    name += ":" + std::to_string(window);
    expires = (window + 1) * l.private_query_window_s;
  }
  return BudgetAccount{name, l.private_queries_per_window, expires, name,
                       BudgetKind::kPrivateQueries};
}

std::optional<v1::Error> PrivateScoreHandler::charge(const Caller& caller, std::uint64_t queries) {
  const auto account = this->account(caller);
  if (!account) return std::nullopt;
  auto charged = state_->budgets->charge(std::span(&*account, 1), queries);
  if (!charged.ok()) {
    return make_error(v1::STATE_UNAVAILABLE,
                      "request budgets unavailable: " + charged.status().message());
  }
  if (charged->charged()) return std::nullopt;
  const auto& l = limits_;
  const std::string who =
      caller.identity.empty() ? "this address" : "identity `" + caller.identity + "`";
  return make_error(v1::QUOTA_EXHAUSTED,
                    who + " used its " + std::to_string(l.private_queries_per_window) +
                        " access-private queries for this window of " +
                        std::to_string(l.private_query_window_s) + " s; retry in the next");
}

v1::PrivateScoreResponse PrivateScoreHandler::answer(const v1::PrivateScoreRequest& request,
                                                     const Caller& caller) try {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& limits = limits_;
  if (auto e = check_size_and_version(request.ByteSizeLong(), request.artifact_version(),
                                      limits.max_message_bytes, artifact_version_)) {
    return refusal_response<v1::PrivateScoreResponse>(std::move(*e));
  }
  const auto& matrix = matrix_;
  if (!matrix) {
    return score_error(v1::PRIVATE_SCORING_UNAVAILABLE,
                       "this provider's index has no access-private scoring database (built "
                       "without one)");
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
  if (auto refusal = charge(caller, m)) {
    v1::PrivateScoreResponse r;
    *r.mutable_error() = std::move(*refusal);
    return r;
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

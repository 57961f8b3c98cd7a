#include "client/core/refusal.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace privsearch::client::core {
namespace {

using A = RefusalAction;
using S = StatusCode;

// privsearch.v1.ErrorCode (protocol/privsearch.proto), in code order.
constexpr std::array<Refusal, 27> kTable = {{
    {0, "ERROR_CODE_UNSPECIFIED", S::kInternal, A::kFail, ""},
    {1, "UNKNOWN_KEY_ID", S::kFailedPrecondition, A::kNewKeyEpoch, ""},
    {2, "WRONG_ARTIFACT_VERSION", S::kFailedPrecondition, A::kFail,
     "the provider serves another index version: refresh the local index"},
    {3, "TOO_MANY_CANDIDATES", S::kInvalidArgument, A::kFail, ""},
    {4, "MALFORMED_REQUEST", S::kInvalidArgument, A::kFail, ""},
    {5, "BUDGET_EXHAUSTED", S::kResourceExhausted, A::kNewKeyEpochIfAllowed, ""},
    {6, "MESSAGE_TOO_LARGE", S::kInvalidArgument, A::kFail, ""},
    {7, "PARAMS_MISMATCH", S::kFailedPrecondition, A::kFail, ""},
    {8, "UNKNOWN_CANDIDATE", S::kInvalidArgument, A::kFail, ""},
    {9, "MISSING_ROTATION_KEY", S::kFailedPrecondition, A::kFail, ""},
    {10, "OVERLOADED", S::kResourceExhausted, A::kBackoff, ""},
    {11, "INTERNAL", S::kInternal, A::kFail, ""},
    {12, "PIR_UNAVAILABLE", S::kUnavailable, A::kFail, ""},
    {13, "UNKNOWN_PIR_CLIENT", S::kNotFound, A::kSetupAgain, ""},
    {14, "NO_PRECOMPUTED_QUERY", S::kFailedPrecondition, A::kFail, ""},
    {15, "PIR_VERSION_MISMATCH", S::kFailedPrecondition, A::kFail,
     "the provider's index was rebuilt: refresh the local index"},
    {16, "PIR_LIMIT", S::kResourceExhausted, A::kFail, ""},
    {17, "PUBLIC_KEY_REQUIRED", S::kFailedPrecondition, A::kFail, ""},
    {18, "DATA_LOSS", S::kDataLoss, A::kFail, ""},
    {19, "UNAUTHENTICATED", S::kUnauthenticated, A::kFail, ""},
    {20, "QUOTA_EXHAUSTED", S::kResourceExhausted, A::kFail, ""},
    {21, "RATE_LIMITED", S::kResourceExhausted, A::kFail, ""},
    {22, "STATE_UNAVAILABLE", S::kUnavailable, A::kFail, ""},
    {23, "PRIVATE_SCORING_UNAVAILABLE", S::kFailedPrecondition, A::kFail, ""},
    {24, "ARTIFACT_STALE", S::kFailedPrecondition, A::kFail,
     "the provider retired this index version: fetch the newest"},
    {25, "IVF_UNAVAILABLE", S::kFailedPrecondition, A::kFail, ""},
    {26, "PIR_SHARD_UNAVAILABLE", S::kUnavailable, A::kRetryOnce, ""},
}};

}  // namespace

std::span<const Refusal> refusal_table() { return kTable; }

std::optional<Refusal> refusal(int code) {
  if (code < 0 || static_cast<std::size_t>(code) >= kTable.size()) return std::nullopt;
  return kTable[static_cast<std::size_t>(code)];
}

std::optional<Refusal> refusal(std::string_view name) {
  const auto it =
      std::find_if(kTable.begin(), kTable.end(), [&](const Refusal& r) { return r.name == name; });
  if (it == kTable.end()) return std::nullopt;
  return *it;
}

bool renews_key_epoch(int code, bool budget_renewal_allowed) {
  const auto row = refusal(code);
  if (!row) return false;
  return row->action == RefusalAction::kNewKeyEpoch ||
         (row->action == RefusalAction::kNewKeyEpochIfAllowed && budget_renewal_allowed);
}

Status refusal_status(std::string_view what, int code, std::string_view message) {
  const auto row = refusal(code);
  if (!row) {
    return failed_precondition_error(
        fmt::format("provider refused {}: error code {}: {}", what, code, message));
  }
  std::string text = fmt::format("provider refused {}: {}: {}", what, row->name, message);
  if (!row->advice.empty()) text += fmt::format(" ({})", row->advice);
  return Status(row->status, std::move(text));
}

std::optional<double> backoff_ms(int attempt, double jitter) {
  if (attempt < 0 || attempt >= kBackoffRetries) return std::nullopt;
  return 10.0 * static_cast<double>(1 << attempt) * jitter;
}

}  // namespace privsearch::client::core

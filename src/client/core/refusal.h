// The provider's refusals as the client reads them: one table from each privsearch.v1.ErrorCode
// (by number and name; this module has no protobuf) to the Status code a caller sees and what a
// client does next. SearchClient, PayloadFetcher, the IVF list source and the WebAssembly core
// (whose page gets the endpoint's refusals by name) all read it; a test holds it equal to the
// protocol's enum.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "core/status.h"

namespace privsearch::client::core {

// What a client does after a refusal (its one retry policy).
enum class RefusalAction {
  kFail,                  // the caller's error
  kNewKeyEpoch,           // UNKNOWN_KEY_ID: upload keys again, resend once
  kNewKeyEpochIfAllowed,  // BUDGET_EXHAUSTED: a new key epoch when the caller allows it
  kBackoff,               // OVERLOADED: the same request again after a jittered, doubling pause
  kSetupAgain,            // UNKNOWN_PIR_CLIENT: register again (ZipPIR), once
  kRetryOnce,             // a replica or shard went away: a new request (fresh secrets), once
};

struct Refusal {
  int code = 0;           // privsearch.v1.ErrorCode
  std::string_view name;  // its enum name
  StatusCode status = StatusCode::kFailedPrecondition;
  RefusalAction action = RefusalAction::kFail;
  std::string_view advice;  // appended to the message ("" when the name says it)
};

// The table's row for a code or a name; nullopt for one this client does not know (a newer
// provider): read as kFailedPrecondition, kFail.
std::optional<Refusal> refusal(int code);
std::optional<Refusal> refusal(std::string_view name);
// Every row, in code order (tests compare it with the protocol's enum).
std::span<const Refusal> refusal_table();

// Whether a rerank refused with `code` is sent again under a new key epoch (once): an evicted
// key set always, a spent budget when the caller allows it.
bool renews_key_epoch(int code, bool budget_renewal_allowed);

// "provider refused <what>: NAME: message[ (advice)]" with the table's Status code.
Status refusal_status(std::string_view what, int code, std::string_view message);

// The pause before retry `attempt` (0-based) of an OVERLOADED request: 10 ms doubling, times a
// jitter factor in [0.5, 1.5) the caller draws; nullopt once `attempt` reaches kBackoffRetries.
inline constexpr int kBackoffRetries = 8;
std::optional<double> backoff_ms(int attempt, double jitter);

}  // namespace privsearch::client::core

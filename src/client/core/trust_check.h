// The client's memory of signed index versions, checked the same way by every client: the
// native one keeps it in a JSON file (client/trusted_index.h), the page in localStorage; both ask
// this function whether a signed version may be opened and what to remember after.
//
// A key's signed versions form a chain by `sequence`. Opening a sequence older than one seen is
// a rollback (a provider replaying an old index, e.g. from before a document was deleted); the
// same sequence with another version id is a fork (two different indexes signed as one step).
// Both refuse the index. The signature itself is checked before this (Ed25519 over
// index::manifest_signature_message: OpenSSL natively, WebCrypto in the browser), and its claims
// by index::check_signature_claims.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace privsearch::client::core {

struct SeenVersion {
  std::uint64_t sequence = 0;
  std::string version_id;
};

// kFailedPrecondition for a rollback or a fork against `seen` (the newest version remembered for
// `key_id`), or for a signed index without a sequence; `where` names the index in the text.
// Returns true when `opened` is newer than what was seen (remember it), false when it is the
// same version.
Result<bool> check_seen_version(const SeenVersion& opened, const std::optional<SeenVersion>& seen,
                                std::string_view key_id, std::string_view where);

}  // namespace privsearch::client::core

// Uploaded key sets shared by every provider replica (the scale-out state tier): a key set uploaded
// through one replica is served by any other, which pulls it once and keeps it in its own
// KeyCache (protocol/key_cache.h).
//
// What is stored is the upload itself (a serialized UploadKeysRequest: params id, rotation keys,
// public key), not decoded keys: a replica that pulls a set checks it exactly as an upload
// (params id, key-id hash, size, decoding), so a damaged, truncated or foreign value in the store
// is refused with a typed error and never served. Each set expires with its key epoch
// (ProviderLimits::key_set_ttl_s after its upload); the store never holds budgets, so losing a
// set costs its client one re-upload, never a fresh budget (protocol/budget_ledger.h).
// Redis layout: `privsearch:keys:<hex key id>` -> the upload, with an absolute expiry (SET EXAT).
// Thread safety: all members may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "protocol/key_cache.h"

namespace privsearch::protocol {

struct StoredKeySet {
  std::string upload;
  std::int64_t expires_s = 0;  // Unix seconds
};

class SharedKeyStore {
 public:
  virtual ~SharedKeyStore() = default;
  // Stores `upload` under `id` until `expires_s` (Unix seconds). kUnavailable when the store
  // cannot record it.
  virtual Status put(const KeyId& id, std::string_view upload, std::int64_t expires_s) = 0;
  // The stored upload; nullopt when there is none (never uploaded, or expired). kUnavailable
  // when the store cannot be reached.
  virtual Result<std::optional<StoredKeySet>> get(const KeyId& id) = 0;
  virtual std::string where() const = 0;
};

// Key sets in Redis (`url` as for the budget ledger: protocol/redis_connection.h). kUnavailable
// when Redis cannot be reached now.
Result<std::unique_ptr<SharedKeyStore>> open_redis_key_store(const std::string& url,
                                                             int timeout_ms = 2000);

}  // namespace privsearch::protocol

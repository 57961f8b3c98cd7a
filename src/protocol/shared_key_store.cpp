#include "protocol/shared_key_store.h"

#include <fmt/format.h>

#include "core/bytes.h"
#include "protocol/redis_connection.h"

namespace privsearch::protocol {
namespace {

std::string redis_key(const KeyId& id) { return "privsearch:keys:" + to_hex(id); }

// The value and its absolute expiry in one round trip.
constexpr RedisScript kGetScript{R"lua(
local v = redis.call('GET', KEYS[1])
if not v then return false end
return {v, redis.call('EXPIRETIME', KEYS[1])}
)lua"};

class RedisKeyStore final : public SharedKeyStore {
 public:
  RedisKeyStore(RedisUrl url, int timeout_ms) : redis_(std::move(url), timeout_ms) {}

  Status put(const KeyId& id, std::string_view upload, std::int64_t expires_s) override {
    // SET is idempotent: a retry after a lost reply stores the same bytes again.
    auto r = redis_.command(
        {"SET", redis_key(id), std::string(upload), "EXAT", std::to_string(expires_s)});
    return redis_.check(r, "SET key set");
  }

  Result<std::optional<StoredKeySet>> get(const KeyId& id) override {
    PRIVSEARCH_ASSIGN_OR_RETURN(RedisReply r, redis_.eval(kGetScript, {redis_key(id)}, {}));
    if (reply_is_nil(r.get())) return std::optional<StoredKeySet>();
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[1]->type != REDIS_REPLY_INTEGER) {
      return redis_.unavailable("GET key set: unexpected reply");
    }
    auto v = reply_string(r->element[0]);
    if (!v) return redis_.unavailable("GET key set: not a string");
    return std::optional<StoredKeySet>(StoredKeySet{std::move(*v), r->element[1]->integer});
  }

  std::string where() const override { return redis_.display(); }

  Status probe() { return redis_.check(redis_.command({"PING"}), "PING"); }

 private:
  RedisConnection redis_;
};

}  // namespace

Result<std::unique_ptr<SharedKeyStore>> open_redis_key_store(const std::string& url,
                                                             int timeout_ms) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto parsed, parse_redis_url(url));
  auto store = std::make_unique<RedisKeyStore>(std::move(parsed), timeout_ms);
  PRIVSEARCH_RETURN_IF_ERROR(store->probe());
  return std::unique_ptr<SharedKeyStore>(std::move(store));
}

}  // namespace privsearch::protocol

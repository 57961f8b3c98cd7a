#include "protocol/pir_owners.h"

#include "pir/zippir/zippir_common.h"

namespace privsearch::protocol {

void PirOwners::bind(v1::PirDatabase database, std::uint64_t client, const std::string& identity) {
  if (identity.empty()) return;
  std::lock_guard lock(mu_);
  const Key key{static_cast<int>(database), client};
  const auto [it, fresh] = owner_.try_emplace(key, identity);
  // A setup message is one key pair: the same registration set up again by another identity
  // keeps its first owner (the backend refreshed it; the binding does not move).
  if (!fresh) return;
  order_.push_back(key);
  while (owner_.size() > capacity_ && !order_.empty()) {
    owner_.erase(order_.front());
    order_.pop_front();
  }
}

bool PirOwners::allowed(v1::PirDatabase database, std::uint64_t client,
                        const std::string& identity) const {
  std::lock_guard lock(mu_);
  const auto it = owner_.find(Key{static_cast<int>(database), client});
  return it == owner_.end() || it->second == identity;
}

bool PirOwners::allowed_query(v1::PirDatabase database, std::span<const std::uint8_t> query,
                              const std::string& identity) const {
  const auto client = pir::query_client_id(query);
  if (!client.ok()) return true;  // malformed: the backend refuses it with its own error
  return allowed(database, *client, identity);
}

std::size_t PirOwners::size() const {
  std::lock_guard lock(mu_);
  return owner_.size();
}

}  // namespace privsearch::protocol

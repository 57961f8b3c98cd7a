#include "protocol/pir_owners.h"

#include "pir/zippir/zippir_common.h"

namespace privsearch::protocol {

void PirOwners::bind(v1::PirDatabase database, std::uint64_t client, const std::string& identity) {
  if (identity.empty()) return;
  std::string owner = identity;
  if (shared_ && database == v1::PIR_DATABASE_PAYLOADS) {
    // The store's first owner wins cluster-wide; the local binding copies whoever that is.
    (void)shared_->bind_owner(client, identity);  // best effort: the local binding still holds
    if (auto stored = shared_->owner_of(client); stored.ok() && stored->has_value()) {
      owner = **stored;
    }
  }
  std::lock_guard lock(mu_);
  const Key key{static_cast<int>(database), client};
  const auto [it, fresh] = owner_.try_emplace(key, owner);
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
  {
    std::lock_guard lock(mu_);
    const auto it = owner_.find(Key{static_cast<int>(database), client});
    if (it != owner_.end()) return it->second == identity;
  }
  if (!shared_ || database != v1::PIR_DATABASE_PAYLOADS) return true;
  const auto owner = shared_->owner_of(client);
  if (!owner.ok()) return false;  // cannot tell: fail closed
  return !owner->has_value() || **owner == identity;
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

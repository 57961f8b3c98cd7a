#include "server/connection_deadlines.h"

#include <sys/socket.h>

#include <algorithm>

namespace privsearch::server {
namespace {

// The connection the calling worker thread serves (set when its handshake starts).
thread_local const SSL* current_connection = nullptr;

// Process-wide ex_data slot of the context: it points at its ConnectionDeadlines.
int context_slot() {
  static const int slot = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return slot;
}

}  // namespace

// A connection's slot points at the ConnectionDeadlines that registered it (null for every other
// SSL object of the process, which on_free then ignores).
int ConnectionDeadlines::connection_slot() {
  static const int slot = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, &on_free);
  return slot;
}

ConnectionDeadlines::ConnectionDeadlines(Clock::duration head, Clock::duration lifetime)
    : head_(head), lifetime_(lifetime), watchdog_([this] { watch(); }) {}

ConnectionDeadlines::~ConnectionDeadlines() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  watchdog_.join();
}

bool ConnectionDeadlines::install(SSL_CTX& ctx) {
  if (context_slot() < 0 || connection_slot() < 0) return false;
  if (SSL_CTX_set_ex_data(&ctx, context_slot(), this) != 1) return false;
  SSL_CTX_set_info_callback(&ctx, &on_info);
  SSL_CTX_set_options(&ctx, SSL_OP_NO_RENEGOTIATION);
  return true;
}

void ConnectionDeadlines::on_info(const SSL* ssl, int where, int /*ret*/) {
  if ((where & SSL_CB_HANDSHAKE_START) == 0) return;
  auto* self =
      static_cast<ConnectionDeadlines*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), context_slot()));
  // OpenSSL passes a const SSL to the callback; registering it sets its ex_data.
  if (self != nullptr) self->begin(const_cast<SSL*>(ssl));
}

void ConnectionDeadlines::on_free(void* parent, void* ptr, CRYPTO_EX_DATA* /*ad*/, int /*idx*/,
                                  long /*argl*/, void* /*argp*/) {
  if (ptr != nullptr) static_cast<ConnectionDeadlines*>(ptr)->forget(static_cast<SSL*>(parent));
}

void ConnectionDeadlines::begin(SSL* ssl) {
  const auto now = Clock::now();
  std::lock_guard lock(mu_);
  current_connection = ssl;
  auto [it, added] = open_.try_emplace(ssl);
  if (!added) return;  // a second handshake start of the same connection keeps its deadline
  it->second = Connection{SSL_get_fd(ssl), now, now + head_, false};
  SSL_set_ex_data(ssl, connection_slot(), this);
}

void ConnectionDeadlines::forget(const SSL* ssl) {
  std::lock_guard lock(mu_);
  open_.erase(ssl);
  if (current_connection == ssl) current_connection = nullptr;
}

void ConnectionDeadlines::arm_current(Clock::duration d) {
  std::lock_guard lock(mu_);
  const auto it = current_connection != nullptr ? open_.find(current_connection) : open_.end();
  if (it == open_.end() || it->second.cut) return;
  it->second.deadline = std::min(Clock::now() + d, it->second.start + lifetime_);
}

// Four times a second: every connection past its deadline is shut down, once.
void ConnectionDeadlines::watch() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto now = Clock::now();
    for (auto& [ssl, c] : open_) {
      if (c.cut || c.deadline > now) continue;
      c.cut = true;
      if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);
      cut_.fetch_add(1);
    }
    wake_.wait_for(lock, std::chrono::milliseconds(250), [&] { return stopping_; });
  }
}

}  // namespace privsearch::server

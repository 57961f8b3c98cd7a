// ProviderProcess and its HTTP/2 front (server/http2_front.h): the provider binds the public
// socket itself, serves gRPC on a unix socket in a private directory, and hands the public
// socket to haproxy, which terminates TLS with the provider's identity.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "provider/provider_process.h"

namespace privsearch::provider {

bool ProviderProcess::fronted() const {
  return settings_.front == "haproxy" && !settings_.insecure_loopback;
}

Status ProviderProcess::prepare_front(server::ServeOptions& so) {
  if (!identity_) {
    return Status(StatusCode::kInvalidArgument,
                  "the front needs a TLS identity (--cert/--key or "
                  "--self-signed)");
  }
  if (server::find_haproxy().empty()) {
    return Status(StatusCode::kUnavailable,
                  "the provider's HTTP/2 front needs haproxy (apt-get install haproxy; "
                  "scripts/setup.sh installs it), or --front none to serve gRPC directly");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(front_dir_, server::make_private_run_dir());
  PRIVSEARCH_ASSIGN_OR_RETURN(listener_, server::bind_tcp_listener(settings_.listen));
  if (settings_.web_listen) {
    PRIVSEARCH_ASSIGN_OR_RETURN(web_listener_, server::bind_tcp_listener(settings_.web.listen));
  }
  so.listen = "unix:" + (front_dir_ / "provider.sock").string();
  so.identity = nullptr;
  so.behind_front = true;
  return Status();
}

Result<std::uint16_t> ProviderProcess::start_front() {
  server::FrontSpec spec;
  spec.listen_fd = listener_.fd;
  spec.backend_socket = front_dir_ / "provider.sock";
  spec.run_dir = front_dir_;
  spec.limits = settings_.front_limits;
  spec.limits.max_streams_per_connection = settings_.transport.max_streams_per_connection;
  if (settings_.web_listen) {
    spec.browser.listen_fd = web_listener_.fd;
    spec.browser.backend_socket = web_socket();
    spec.browser.backend_slots = settings_.web.threads;
    spec.browser.max_body_bytes = settings_.limits.max_message_bytes;
    spec.browser.trusted_http_proxies = settings_.web.trusted_proxies;
    spec.browser.allowed_origins = settings_.web.allowed_origins;
  }
  auto front = server::Http2Front::start(spec, *identity_);
  // haproxy holds its own copy of the sockets now; ours would only queue connections nobody
  // accepts once haproxy stops listening (drain).
  for (auto* l : {&listener_, &web_listener_}) {
    if (l->fd >= 0) ::close(l->fd);
    l->fd = -1;
  }
  if (!front.ok()) return front.status();
  front_ = std::move(*front);
  log(
      fmt::format("HTTP/2 front: haproxy pid {} terminates TLS, at most {} connections ({} per "
                  "address), headers within {} s and {} B, idle clients dropped after {} s",
                  front_->pid(), spec.limits.max_connections,
                  spec.limits.max_connections_per_source, spec.limits.request_header_timeout_s,
                  spec.limits.header_buffer_bytes, spec.limits.client_timeout_s));
  return listener_.port;
}

void ProviderProcess::stop_front() {
  if (front_) front_->stop();
  front_.reset();
  for (auto* l : {&listener_, &web_listener_}) {
    if (l->fd >= 0) ::close(l->fd);
    l->fd = -1;
  }
  if (!front_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(front_dir_, ec);
    front_dir_.clear();
  }
}

std::filesystem::path ProviderProcess::web_socket() const { return front_dir_ / "web.sock"; }

bool ProviderProcess::front_alive() { return front_ == nullptr || front_->alive(); }

}  // namespace privsearch::provider

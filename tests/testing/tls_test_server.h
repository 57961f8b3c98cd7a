// A ProviderServer over TLS on 127.0.0.1 (port 0) for in-process client tests: one throwaway
// self-signed certificate, the server around a core, and transports that trust it. Stopped on
// destruction (declare it after the core it serves).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "client/provider_client.h"
#include "net/tls.h"
#include "protocol/provider_core.h"
#include "server/provider_server.h"

namespace privsearch::testing {

struct TlsTestServer {
  std::unique_ptr<net::TlsIdentity> identity =
      std::make_unique<net::TlsIdentity>(*net::make_self_signed("localhost", 1));
  std::unique_ptr<server::ProviderServer> server;

  // `customize` adds what a test serves beside the core (PIR backends, a request log, ...) to
  // the options every test shares (this identity, 2 threads); a running server is replaced.
  void start(protocol::ProviderCore& core,
             const std::function<void(server::ServeOptions&)>& customize = {}) {
    stop();
    auto so = options();
    if (customize) customize(so);
    server = *server::ProviderServer::start(core, so);
  }
  // A shared core (replaceable with server->replace_core), keeping `keep_versions` versions.
  void start(std::shared_ptr<protocol::ProviderCore> core, unsigned keep_versions) {
    auto so = options();
    so.keep_versions = keep_versions;
    server = *server::ProviderServer::start(std::move(core), so);
  }
  void stop() {
    if (server) server->shutdown(1000);
    server.reset();
  }
  std::unique_ptr<client::ProviderClient> transport() const {
    return *client::ProviderClient::connect(connect_options());
  }
  // Options that trust this server's certificate (for tests that change some of them).
  client::ConnectOptions connect_options() const {
    client::ConnectOptions co;
    co.port = static_cast<std::uint16_t>(server->port());
    co.ca_pem = identity->certificate_pem();
    return co;
  }
  int port() const { return server->port(); }
  ~TlsTestServer() { stop(); }

 private:
  server::ServeOptions options() const {
    server::ServeOptions so;
    so.identity = identity.get();
    so.threads = 2;
    return so;
  }
};

}  // namespace privsearch::testing

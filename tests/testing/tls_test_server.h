// A ProviderServer over TLS on 127.0.0.1 (port 0) for in-process client tests: one throwaway
// self-signed certificate, the server around a core, and transports that trust it. Stopped on
// destruction (declare it after the core it serves).
#pragma once

#include <gtest/gtest.h>

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

  void start(protocol::ProviderCore& core) {
    server = *server::ProviderServer::start(core, options());
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
    client::ConnectOptions co;
    co.port = static_cast<std::uint16_t>(server->port());
    co.ca_pem = identity->certificate_pem();
    return *client::ProviderClient::connect(co);
  }
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

// End to end over gRPC + TLS on 127.0.0.1 with a certificate made at test time: the client pins
// the certificate (or trusts it as a CA), uploads keys, reranks, and gets the plaintext scores;
// typed refusals and transport limits come back as named errors while the provider keeps
// serving; a bounded concurrent load completes without failures.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "client/provider_client.h"
#include "core/bytes.h"
#include "net/tls.h"
#include "protocol/provider_fixture.h"
#include "server/provider_server.h"
#include "testing/tls_test_server.h"

namespace privsearch {
namespace {

using protocol::testing_support::ProviderCoreTest;

class E2eTlsTest : public ProviderCoreTest {
 protected:
  void SetUp() override {
    protocol::ProviderLimits limits;
    limits.max_message_bytes = 1 << 20;
    core = make_core(limits);
    tls.start(*core, [this](server::ServeOptions& so) {
      so.request_log = [this](const std::string& line) {
        std::lock_guard lock(log_mu);
        log_lines.push_back(line);
      };
    });
    identity = tls.identity.get();
    server = tls.server.get();
  }
  std::vector<std::string> logs() {
    std::lock_guard lock(log_mu);
    return log_lines;
  }
  std::mutex log_mu;
  std::vector<std::string> log_lines;
  void TearDown() override { tls.stop(); }

  client::ConnectOptions pinned() {
    client::ConnectOptions o;
    o.port = static_cast<std::uint16_t>(server->port());
    o.pinned_fingerprint = *net::certificate_fingerprint(identity->certificate_pem());
    o.deadline_ms = 20000;
    return o;
  }
  std::string upload_over(client::ProviderClient& c) {
    const auto resp = *c.upload_keys(upload_request());
    EXPECT_EQ(resp.result_case(), v1::UploadKeysResponse::kKeyId) << resp.error().message();
    return resp.key_id();
  }

  std::unique_ptr<protocol::ProviderCore> core;
  testing::TlsTestServer tls;                  // after the core it serves: stopped first
  const net::TlsIdentity* identity = nullptr;  // tls's
  server::ProviderServer* server = nullptr;    // tls's
};

TEST_F(E2eTlsTest, PinnedCertificateRerankMatchesPlaintext) {
  auto c = *client::ProviderClient::connect(pinned());
  const auto info = *c->server_info();
  EXPECT_EQ(info.artifact_version(), "artifact-v1");
  // The limit the transport enforces (8 x the 2 worker threads), not the core's "0 = default".
  EXPECT_EQ(info.limits().max_concurrent_requests(), 16u);
  // This test links the client (key generation) into the provider's process, and the linker
  // says so; the provider binary itself reports false (provider_process_test).
  EXPECT_TRUE(info.attestation().secret_key_code_linked());
  const auto key_id = upload_over(*c);
  expect_scores(*c->rerank(request(key_id, ids_)), ids_);
}

TEST_F(E2eTlsTest, ProviderNegotiatesTls13) {
  std::string protocol;
  const auto pem = *net::fetch_server_certificate(
      "127.0.0.1", static_cast<std::uint16_t>(server->port()), 5000, &protocol);
  EXPECT_EQ(pem, identity->certificate_pem());
  EXPECT_EQ(protocol, "TLSv1.3");
}

TEST_F(E2eTlsTest, CertificateAsCaAlsoVerifies) {
  auto o = pinned();
  o.pinned_fingerprint.clear();
  o.ca_pem = identity->certificate_pem();
  auto c = *client::ProviderClient::connect(o);
  EXPECT_TRUE(c->server_info().ok());
}

TEST_F(E2eTlsTest, WrongPinOrWrongCaIsRefused) {
  auto o = pinned();
  o.pinned_fingerprint = std::string(95, 'A');
  EXPECT_EQ(client::ProviderClient::connect(o).status().code(), StatusCode::kFailedPrecondition);
  const auto other = *net::make_self_signed("localhost", 1);
  o.pinned_fingerprint.clear();
  o.ca_pem = other.certificate_pem();
  o.deadline_ms = 3000;
  auto c = *client::ProviderClient::connect(o);  // channels connect lazily
  EXPECT_EQ(c->server_info().status().code(), StatusCode::kUnavailable);
  o.ca_pem.clear();
  EXPECT_EQ(client::ProviderClient::connect(o).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(E2eTlsTest, PlaintextClientCannotTalkToTlsProvider) {
  auto o = pinned();
  o.insecure_loopback = true;
  o.deadline_ms = 3000;
  auto c = *client::ProviderClient::connect(o);
  EXPECT_EQ(c->server_info().status().code(), StatusCode::kUnavailable);
}

TEST_F(E2eTlsTest, TypedErrorsAndLimitsOverTheWire) {
  auto c = *client::ProviderClient::connect(pinned());
  const auto key_id = upload_over(*c);
  EXPECT_EQ(c->rerank(request(std::string(32, '\x02'), ids_))->error().code(), v1::UNKNOWN_KEY_ID);
  auto wrong = request(key_id, ids_);
  wrong.set_artifact_version("old");
  EXPECT_EQ(c->rerank(wrong)->error().code(), v1::WRONG_ARTIFACT_VERSION);
  auto bad = request(key_id, ids_);
  bad.set_query("garbage");
  EXPECT_EQ(c->rerank(bad)->error().code(), v1::MALFORMED_REQUEST);
  // Above the transport cap: gRPC refuses it before the provider parses it.
  auto huge = request(key_id, ids_);
  huge.set_query(std::string(2 << 20, 'x'));
  EXPECT_EQ(c->rerank(huge).status().code(), StatusCode::kResourceExhausted);
  expect_scores(*c->rerank(request(key_id, ids_)), ids_);  // still serving
  // The request log names outcomes and sizes; never the key id or candidate IDs.
  const auto lines = logs();
  const auto has = [&](const std::string& needle) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(needle) != std::string::npos; });
  };
  EXPECT_TRUE(has(R"("rpc":"Rerank","outcome":"UNKNOWN_KEY_ID","k":6)"));
  EXPECT_TRUE(has(R"("rpc":"Rerank","outcome":"OK","k":6)"));
  EXPECT_TRUE(has(R"("rpc":"UploadKeys","outcome":"OK")"));
  EXPECT_FALSE(has("candidate"));
}

TEST_F(E2eTlsTest, ConcurrentClientsWithoutFailures) {
  auto c0 = *client::ProviderClient::connect(pinned());
  const auto key_id = upload_over(*c0);
  // Requests are made up front (the fixture's PRNG is not shared across threads).
  constexpr int kClients = 8, kPerClient = 50;
  std::vector<std::vector<v1::RerankRequest>> reqs(kClients);
  for (auto& r : reqs) {
    for (int i = 0; i < kPerClient; ++i) r.push_back(request(key_id, ids_));
  }
  std::atomic<int> failures{0}, successes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      auto c = client::ProviderClient::connect(pinned());
      if (!c.ok()) {
        failures += kPerClient;
        return;
      }
      for (const auto& r : reqs[static_cast<std::size_t>(t)]) {
        auto resp = c.value()->rerank(r);
        if (resp.ok() && resp.value().has_payload()) {
          ++successes;
        } else {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(successes.load(), kClients * kPerClient);
}

TEST_F(E2eTlsTest, ServerRefusesUnsafeConfigurations) {
  server::ServeOptions so;  // no identity
  EXPECT_EQ(server::ProviderServer::start(*core, so).status().code(), StatusCode::kInvalidArgument);
  so.insecure_loopback = true;
  so.listen = "0.0.0.0:0";
  EXPECT_EQ(server::ProviderServer::start(*core, so).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch

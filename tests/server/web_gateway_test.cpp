// The browser endpoint (server/web_gateway.h) over real TLS on 127.0.0.1: the Provider RPCs as
// HTTP POST + protobuf reach the same service (typed errors inside the message, the same
// request log), transport refusals are named JSON errors, only the public index files are
// served, CORS answers only the configured origins, and bearer tokens are required as on gRPC.
#include "server/web_gateway.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/pem.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "core/bytes.h"
#include "core/sha256.h"
#include "index/artifacts/client_files.h"
#include "index/artifacts/manifest.h"
#include "protocol/identities.h"
#include "protocol/provider_fixture.h"
#include "testing/tls_test_server.h"

namespace privsearch {
namespace {

namespace fs = std::filesystem;
using protocol::testing_support::ProviderCoreTest;

class WebGatewayTest : public ProviderCoreTest {
 protected:
  void SetUp() override {
    core = make_core();
    // A served index directory: a manifest listing public and private artifacts.
    for (const char* f : {"pq.bin", "payloads.bin", "projection.bin"}) {
      std::ofstream(dir / f) << "bytes of " << f;
    }
    index::Manifest m;
    m.collection = "test";
    m.documents = protocol::testing_support::kDocs;
    m.artifacts = {{"pq", "pq.bin", 0, ""},
                   {"payloads", "payloads.bin", 0, ""},
                   {"projection", "projection.bin", 0, ""},
                   {"exact_store", "exact.bin", 0, ""}};
    ASSERT_TRUE(index::write_manifest(dir, m).ok());
  }
  void TearDown() override {
    if (web) web->stop();
    tls.stop();
  }

  void start(server::WebOptions o = {}, const protocol::TokenRegistry* tokens = nullptr) {
    tls.start(*core, [&](server::ServeOptions& so) {
      so.tokens = tokens;
      so.request_log = [this](const std::string& line) {
        std::lock_guard lock(log_mu);
        log_lines.push_back(line);
      };
    });
    o.identity = tls.identity.get();
    std::vector<std::string> names{"pq", "projection"};
    if (payloads) names.emplace_back("payloads");
    o.public_file = [d = dir, names](const std::string& file) {
      return index::public_index_file(d, file, names);
    };
    o.max_body_bytes = 1 << 20;
    web = *server::WebGateway::start(*tls.server, o);
  }

  // An HTTPS client that trusts only the test's certificate.
  std::unique_ptr<httplib::SSLClient> client() {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", web->port());
    BIO* bio = BIO_new_mem_buf(tls.identity->certificate_pem().data(),
                               static_cast<int>(tls.identity->certificate_pem().size()));
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    X509_STORE* trusted = X509_STORE_new();
    X509_STORE_add_cert(trusted, cert);
    X509_free(cert);
    BIO_free(bio);
    c->set_ca_cert_store(trusted);
    c->enable_server_certificate_verification(true);
    c->set_read_timeout(20, 0);
    return c;
  }

  template <typename Response, typename Request>
  Response call(const std::string& method, const Request& request,
                const httplib::Headers& headers = {}) {
    auto res = client()->Post(("/privsearch.v1.Provider/" + method).c_str(), headers,
                              request.SerializeAsString(), "application/x-protobuf");
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    Response out;
    if (res) {
      EXPECT_EQ(res->status, 200) << res->body;
      EXPECT_TRUE(out.ParseFromString(res->body));
    }
    return out;
  }

  bool payloads = false;  // the payload store among the public files
  std::unique_ptr<protocol::ProviderCore> core;
  testing::TlsTestServer tls;
  std::unique_ptr<server::WebGateway> web;
  std::mutex log_mu;
  std::vector<std::string> log_lines;
};

TEST_F(WebGatewayTest, RpcsReachTheSameServiceAndLog) {
  start();
  const auto info = call<v1::ServerInfo>("GetServerInfo", v1::ServerInfoRequest());
  EXPECT_EQ(info.artifact_version(), "artifact-v1");
  const auto up = call<v1::UploadKeysResponse>("UploadKeys", upload_request());
  ASSERT_EQ(up.result_case(), v1::UploadKeysResponse::kKeyId) << up.error().message();
  expect_scores(call<v1::RerankResponse>("Rerank", request(up.key_id(), ids_)), ids_);
  // A typed refusal comes inside the message, as over gRPC.
  const auto bad = call<v1::RerankResponse>("Rerank", request(std::string(32, 'k'), ids_));
  ASSERT_TRUE(bad.has_error());
  EXPECT_EQ(bad.error().code(), v1::UNKNOWN_KEY_ID);
  std::lock_guard lock(log_mu);
  ASSERT_EQ(log_lines.size(), 3u);  // UploadKeys and two Reranks: the one admission path
  EXPECT_NE(log_lines[1].find(R"("rpc":"Rerank","outcome":"OK")"), std::string::npos);
  EXPECT_NE(log_lines[2].find("UNKNOWN_KEY_ID"), std::string::npos);
}

TEST_F(WebGatewayTest, TransportRefusalsAreNamedJsonErrors) {
  start();
  auto c = client();
  auto unknown = c->Post("/privsearch.v1.Provider/DropTables", "", "application/x-protobuf");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_NE(unknown->body.find("UNKNOWN_METHOD"), std::string::npos);
  auto garbage = c->Post("/privsearch.v1.Provider/Rerank", std::string("\xff\xff\xff\xff", 4),
                         "application/x-protobuf");
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->status, 400) << garbage->body;
  EXPECT_NE(garbage->body.find("MALFORMED_REQUEST"), std::string::npos);
  auto huge = c->Post("/privsearch.v1.Provider/Rerank", std::string(2 << 20, 'x'),
                      "application/x-protobuf");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);
  // The endpoint still serves after all of it.
  EXPECT_EQ(call<v1::ServerInfo>("GetServerInfo", v1::ServerInfoRequest()).artifact_version(),
            "artifact-v1");
}

TEST_F(WebGatewayTest, ServesOnlyPublicIndexFiles) {
  start();
  auto c = client();
  auto manifest = c->Get("/index/manifest.json");
  ASSERT_TRUE(manifest);
  EXPECT_EQ(manifest->status, 200);
  EXPECT_NE(manifest->body.find("\"pq\""), std::string::npos);
  auto pq = c->Get("/index/pq.bin");
  ASSERT_TRUE(pq);
  EXPECT_EQ(pq->status, 200);
  EXPECT_EQ(pq->body, "bytes of pq.bin");
  for (const char* path : {"/index/exact.bin", "/index/payloads.bin", "/index/nothing.bin",
                           "/index/..%2Fexact.bin", "/index/../exact.bin"}) {
    auto r = c->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path << ": " << r->body;
  }
}

TEST_F(WebGatewayTest, PayloadsOnlyWhenAllowed) {
  payloads = true;
  start();
  auto r = client()->Get("/index/payloads.bin");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(WebGatewayTest, UpdateGenerationsAreAsPublicAsTheirBase) {
  std::ofstream(dir / "pq.1.bin") << "generation 1";
  std::ofstream(dir / "exact.1.bin") << "private";
  index::Manifest m = *index::load_manifest(dir, false);
  m.artifacts.push_back({"pq.1", "pq.1.bin", 0, ""});
  m.artifacts.push_back({"exact_store.1", "exact.1.bin", 0, ""});
  ASSERT_TRUE(index::write_manifest(dir, m, /*keep_known_hashes=*/true).ok());
  const std::vector<std::string> names{"pq"};
  EXPECT_TRUE(index::public_index_file(dir, "pq.1.bin", names).ok());
  EXPECT_TRUE(index::public_index_file(dir, "manifest.json", names).ok());
  EXPECT_EQ(index::public_index_file(dir, "exact.1.bin", names).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(index::public_index_file(dir, "payloads.bin", names).status().code(),
            StatusCode::kNotFound);
}

TEST_F(WebGatewayTest, CorsOnlyForConfiguredOrigins) {
  server::WebOptions o;
  o.allowed_origins = {"https://search.example"};
  start(o);
  auto c = client();
  auto allowed =
      c->Options("/privsearch.v1.Provider/Rerank", {{"Origin", "https://search.example"}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 204);
  EXPECT_EQ(allowed->get_header_value("Access-Control-Allow-Origin"), "https://search.example");
  auto other = c->Options("/privsearch.v1.Provider/Rerank", {{"Origin", "https://evil.example"}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 403);
  EXPECT_FALSE(other->has_header("Access-Control-Allow-Origin"));
  auto post = c->Post("/privsearch.v1.Provider/GetServerInfo", {{"Origin", "https://evil.example"}},
                      "", "application/x-protobuf");
  ASSERT_TRUE(post);
  EXPECT_FALSE(post->has_header("Access-Control-Allow-Origin"));
}

TEST_F(WebGatewayTest, BearerTokensAsOnGrpc) {
  const fs::path file = dir / "tokens";
  const std::string token = "s3cr3t-token-for-alice-0123456789";
  std::ofstream(file) << "alice " << to_hex(sha256(byte_view(token))) << "\n";
  auto tokens = protocol::TokenRegistry::load(file);
  ASSERT_TRUE(tokens.ok()) << tokens.status().to_string();
  start({}, &tokens.value());
  const auto anonymous = call<v1::UploadKeysResponse>("UploadKeys", upload_request());
  ASSERT_TRUE(anonymous.has_error());
  EXPECT_EQ(anonymous.error().code(), v1::UNAUTHENTICATED);
  const auto wrong = call<v1::UploadKeysResponse>("UploadKeys", upload_request(),
                                                  {{"Authorization", "Bearer nope"}});
  EXPECT_EQ(wrong.error().code(), v1::UNAUTHENTICATED);
  const auto alice =
      call<v1::UploadKeysResponse>("UploadKeys", upload_request(),
                                   {{"Authorization", "Bearer s3cr3t-token-for-alice-0123456789"}});
  EXPECT_EQ(alice.result_case(), v1::UploadKeysResponse::kKeyId) << alice.error().message();
  std::lock_guard lock(log_mu);
  for (const auto& line : log_lines) EXPECT_EQ(line.find("s3cr3t"), std::string::npos);
}

TEST_F(WebGatewayTest, RefusesToStartWithoutTls) {
  tls.start(*core);
  server::WebOptions o;
  const auto r = server::WebGateway::start(*tls.server, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  o.identity = tls.identity.get();
  o.listen = "no-port";
  EXPECT_EQ(server::WebGateway::start(*tls.server, o).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch

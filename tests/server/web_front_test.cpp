// The browser endpoint behind the provider's front (the default with --web-listen), as a real
// provider process: the front refuses coded bodies and multi-range reads with the endpoint's JSON
// errors before they reach it, each browser address is its own account (14 of 14 key uploads,
// one address alone gets its burst of 10), a header byte gRPC refuses is refused by name, and
// idle connections from many addresses hold nothing an honest call needs.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "ckks/param_sets.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "harness/h2_wire.h"
#include "process_test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {
namespace {

using testing::Collection;

struct Answer {
  int status = 0;
  std::string body;
};

class WebFrontTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto o = testing::tiny_index_options(c, 256);
    ASSERT_TRUE(index::build_index(o, nullptr).ok());
    provider = testing::spawn_logged(
        c, o.out, {"--web-listen", "127.0.0.1:0", "--web-port-file", (c.dir / "web.port").string()},
        {});
    ASSERT_NE(provider, nullptr);
    std::ifstream(c.dir / "web.port") >> web_port;
    ASSERT_GT(web_port, 0);
    ctx = tools::h2::attacker_tls_context();
    tools::h2::ignore_sigpipe_in_this_thread();
  }
  void TearDown() override {
    if (ctx != nullptr) SSL_CTX_free(ctx);
  }

  // One request on a fresh connection from `source`; the answer (Connection: close, so it
  // ends with the connection), read for at most 10 s.
  Answer send(const std::string& source, const std::string& request) const {
    Answer out;
    auto conn = tools::h2::TlsConnection::open(ctx, source, web_port, 100);
    if (!conn.ok() || !conn.write_all(request)) return out;
    std::string in;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until && conn.read_some(in) >= 0) {
    }
    const auto head_end = in.find("\r\n\r\n");
    if (in.rfind("HTTP/1.1 ", 0) != 0 || head_end == std::string::npos) return out;
    out.status = std::atoi(in.c_str() + 9);
    out.body = in.substr(head_end + 4);
    return out;
  }
  static std::string post(const std::string& method, const std::string& body,
                          const std::string& extra = "") {
    return "POST /privsearch.v1.Provider/" + method +
           " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
           "Content-Type: application/x-protobuf\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
  }
  // A fresh K = 4 key set for the provider's parameters, serialized.
  std::string key_upload() {
    auto cl = *client::ProviderClient::connect(provider->connect_options());
    const auto info = *cl->server_info();
    const auto params = *ckks::Params::create(*ckks::preset_literal(info.params_name()));
    auto session = *client::RerankSession::create(params, info.dim(), Prng::create());
    return session.make_key_upload(4, false)->SerializeAsString();
  }
  bool uploaded(const std::string& source) {
    const auto a = send(source, post("UploadKeys", key_upload()));
    v1::UploadKeysResponse r;
    return a.status == 200 && r.ParseFromString(a.body) &&
           r.result_case() == v1::UploadKeysResponse::kKeyId;
  }

  Collection c;
  std::unique_ptr<tools::SpawnedProvider> provider;
  std::uint16_t web_port = 0;
  SSL_CTX* ctx = nullptr;
};

TEST_F(WebFrontTest, TheFrontRefusesWhatTheEndpointWouldWithItsErrors) {
  const auto chunked = send("127.0.0.2",
                            "POST /privsearch.v1.Provider/UploadKeys HTTP/1.1\r\nHost: x\r\n"
                            "Content-Type: application/x-protobuf\r\n"
                            "Transfer-Encoding: chunked\r\n\r\n10000000\r\n");
  EXPECT_EQ(chunked.status, 411);
  EXPECT_NE(chunked.body.find("LENGTH_REQUIRED"), std::string::npos) << chunked.body;
  EXPECT_EQ(send("127.0.0.2", post("UploadKeys", "xx", "Content-Encoding: gzip\r\n")).status, 415);
  std::string ranges = "bytes=0-";
  for (int i = 0; i < 2000; ++i) ranges += ",0-";
  const auto many = send("127.0.0.2",
                         "GET /index/pq.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                         "Range: " +
                             ranges + "\r\n\r\n");
  EXPECT_EQ(many.status, 416);
  std::string encoded = "bytes=0-";
  for (int i = 0; i < 1500; ++i) encoded += "%2c0-";
  const auto on_call = send("127.0.0.2", post("GetServerInfo", "", "Range: " + encoded + "\r\n"));
  EXPECT_EQ(on_call.status, 416) << on_call.body.substr(0, 200);
  EXPECT_EQ(send("127.0.0.2",
                 "GET /index/pq.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\nRange: " + encoded +
                     "\r\n\r\n")
                .status,
            416);
  const auto bad = send("127.0.0.2", post("GetServerInfo", "", "Authorization: Bearer %01\r\n"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("MALFORMED_HEADER"), std::string::npos) << bad.body;
  const auto info = send("127.0.0.2", post("GetServerInfo", ""));
  EXPECT_EQ(info.status, 200);
}

TEST_F(WebFrontTest, EachBrowserAddressIsItsOwnAccountThroughTheFront) {
  int served = 0;
  for (int i = 2; i < 16; ++i) served += uploaded("127.0.0." + std::to_string(i)) ? 1 : 0;
  EXPECT_EQ(served, 14);
  served = 0;
  for (int i = 0; i < 14; ++i) served += uploaded("127.0.0.40") ? 1 : 0;
  EXPECT_EQ(served, 10);  // one address: the upload burst of one account
}

// One address trickling request bodies (a head announcing 8 MB, then a byte now and then) held
// every one of the endpoint's threads through the front; now it gets 4 and 429 beyond, and
// another address is answered meanwhile.
TEST_F(WebFrontTest, OneAddressTricklingBodiesHoldsAtMostFourSlots) {
  std::vector<tools::h2::TlsConnection> trickling;
  const std::string head =
      "POST /privsearch.v1.Provider/UploadKeys HTTP/1.1\r\nHost: x\r\n"
      "Content-Type: application/x-protobuf\r\nContent-Length: 8000000\r\n\r\nk";
  for (int i = 0; i < 10; ++i) {
    auto conn = tools::h2::TlsConnection::open(ctx, "127.0.0.9", web_port, 100);
    ASSERT_TRUE(conn.ok());
    ASSERT_TRUE(conn.write_all(head));
    trickling.push_back(std::move(conn));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int refused = 0;
  for (auto& conn : trickling) {
    std::string in;
    for (int i = 0; i < 10 && in.find("\r\n\r\n") == std::string::npos; ++i) {
      if (conn.read_some(in) < 0) break;
    }
    refused += in.rfind("HTTP/1.1 429", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(refused, 6);
  const auto info = send("127.0.0.3", post("GetServerInfo", ""));
  EXPECT_EQ(info.status, 200);
}

// 64 idle connections (4 per address, each after a finished request) would hold every one of the
// endpoint's 8 threads if the endpoint faced them itself; behind the front they wait there, and
// an honest call is answered.
TEST_F(WebFrontTest, IdleBrowsersHoldNothingTheEndpointNeeds) {
  std::vector<tools::h2::TlsConnection> idle;
  const std::string get = "GET /index/manifest.json HTTP/1.1\r\nHost: x\r\n\r\n";
  for (int i = 0; i < 64; ++i) {
    auto conn =
        tools::h2::TlsConnection::open(ctx, "127.0.1." + std::to_string(2 + i / 4), web_port, 100);
    ASSERT_TRUE(conn.ok());
    ASSERT_TRUE(conn.write_all(get));  // kept alive afterwards
    idle.push_back(std::move(conn));
  }
  const auto info = send("127.0.0.3", post("GetServerInfo", ""));
  EXPECT_EQ(info.status, 200);
}

}  // namespace
}  // namespace privsearch

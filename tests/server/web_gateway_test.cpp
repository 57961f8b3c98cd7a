// The browser endpoint (server/web_gateway.h) over real TLS on 127.0.0.1: the Provider RPCs as
// HTTP POST + protobuf reach the same service (typed errors inside the message, the same
// request log), transport refusals are named JSON errors, only the public index files are
// served, CORS answers only the configured origins, bearer tokens are required as on gRPC, and a
// client that trickles its bytes is cut at the deadline of the phase it is in.
#include "server/web_gateway_fixture.h"

namespace privsearch {
namespace {

using namespace web_testing;  // NOLINT: the fixture's names

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
  // A body over the cap: 413 from its head, before it is read.
  const auto huge = raw_request(web->port(), post_head("Rerank", 2 << 20, ""), nullptr, "}");
  EXPECT_EQ(huge.status, 413) << huge.text;
  EXPECT_NE(huge.text.find("MESSAGE_TOO_LARGE"), std::string::npos);
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

// Each client keeps every single read inside httplib's read timeout (30 s here) and would hold a
// connection thread for as long as it liked; the phase deadlines cut the ones that overrun, and
// only those, while an honest call is answered meanwhile.
TEST_F(WebGatewayTest, SlowClientsAreCutAtPhaseDeadlines) {
  server::WebOptions o;
  o.read_timeout_s = 30;
  o.head_deadline_s = 2;
  o.transfer_deadline_s = 4;
  start(o);
  const int port = web->port();
  struct Outcome {
    bool open_at_end = true;
    milliseconds at{0};
    std::string received;
  };
  Outcome silent, slow_head, slow_body_in_time, slow_body_late;
  // Connects (with or without TLS), sends the head a byte every head_gap, the body a byte every
  // body_gap, then reads until `until` arrives or the server closes (8 s at most).
  const auto watch = [&](Outcome& out, bool use_tls, const std::string& head, milliseconds head_gap,
                         const std::string& body, milliseconds body_gap, const std::string& until) {
    const NoSigpipe quiet;
    const auto t0 = Clock::now();
    SlowClient c(port, use_tls);
    ASSERT_TRUE(c.connected());
    bool open = c.trickle(head, head_gap) && c.trickle(body, body_gap);
    if (open) open = c.read_for(milliseconds(8000), until);
    out = {open, std::chrono::duration_cast<milliseconds>(Clock::now() - t0), c.received()};
  };
  const std::string post_head =
      "POST /privsearch.v1.Provider/NoSuchMethod HTTP/1.1\r\nHost: x\r\n"
      "Content-Type: application/x-protobuf\r\nContent-Length: ";
  const milliseconds none(0), slow(250);
  std::vector<std::thread> clients;
  // Connects and never starts TLS: the handshake's deadline (2 s).
  clients.emplace_back([&] { watch(silent, false, "", none, "", none, ""); });
  // The head a byte every 250 ms: the head's deadline, long before the head is complete (50 s).
  clients.emplace_back([&] { watch(slow_head, true, std::string(200, 'G'), slow, "", none, ""); });
  // The head at once, then 10 body bytes 250 ms apart: 2.5 s overruns the head's deadline but
  // not the transfer's (4 s), so it is answered.
  clients.emplace_back([&] {
    watch(slow_body_in_time, true, post_head + "10\r\n\r\n", none, std::string(10, 'x'), slow,
          "UNKNOWN_METHOD");
  });
  // 40 body bytes 250 ms apart (10 s): the transfer's deadline cuts it.
  clients.emplace_back([&] {
    watch(slow_body_late, true, post_head + "40\r\n\r\n", none, std::string(40, 'x'), slow, "");
  });
  std::this_thread::sleep_for(milliseconds(500));
  // An honest call meanwhile is answered.
  auto honest = client();
  honest->set_connection_timeout(5, 0);
  honest->set_read_timeout(5, 0);
  const auto info =
      honest->Post("/privsearch.v1.Provider/GetServerInfo",
                   v1::ServerInfoRequest().SerializeAsString(), "application/x-protobuf");
  ASSERT_TRUE(info) << httplib::to_string(info.error());
  EXPECT_EQ(info->status, 200);
  for (auto& t : clients) t.join();

  EXPECT_FALSE(silent.open_at_end);
  EXPECT_GE(silent.at, milliseconds(1500));
  EXPECT_LT(silent.at, milliseconds(7000));
  EXPECT_FALSE(slow_head.open_at_end);
  EXPECT_GE(slow_head.at, milliseconds(1500));
  EXPECT_LT(slow_head.at, milliseconds(7000));  // the whole head would take 50 s
  EXPECT_NE(slow_body_in_time.received.find("UNKNOWN_METHOD"), std::string::npos)
      << slow_body_in_time.received;
  EXPECT_FALSE(slow_body_late.open_at_end);
  EXPECT_GE(slow_body_late.at, milliseconds(3500));
  EXPECT_LT(slow_body_late.at, milliseconds(9500));  // the whole body would take 10 s
  EXPECT_EQ(slow_body_late.received.find("HTTP/1.1"), std::string::npos);
  // The counter follows the shutdown by a moment: wait for it, boundedly.
  for (int i = 0; i < 100 && web->connections_cut() < 3; ++i) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_GE(web->connections_cut(), 3u);
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
  o.listen = "127.0.0.1:0";
  o.trusted_proxies = {"10.0.0.0/33"};
  EXPECT_EQ(server::WebGateway::start(*tls.server, o).status().code(),
            StatusCode::kInvalidArgument);
  o.trusted_proxies = {};
  o.head_deadline_s = 0;
  EXPECT_EQ(server::WebGateway::start(*tls.server, o).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch

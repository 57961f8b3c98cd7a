// Requests that do not parse as protobuf (server/typed_parse.h): sent as raw bytes through a
// generic gRPC stub to every Provider method, they are refused with INVALID_ARGUMENT naming the
// message (before: gRPC's bare INTERNAL), the provider keeps serving, and a well-formed request
// after them still works.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "ckks/param_sets.h"
#include "index/artifacts/exact_store.h"
#include "index/build.h"
#include "protocol/provider_core.h"
#include "testing/tiny_collection.h"
#include "testing/tls_test_server.h"

namespace privsearch {
namespace {

TEST(TypedParseTest, UnparsableRequestsAreInvalidArgumentNotInternal) {
  testing::Collection c{"typed-parse"};
  auto o = testing::tiny_index_options(c, 128);
  const auto manifest = *index::build_index(o, nullptr);
  const auto store = *index::ExactStore::open(o.out / manifest.find("exact_store")->file);
  protocol::ProviderConfig config(*ckks::Params::create(*ckks::preset_literal("rerank-n8192")));
  config.params_name = "rerank-n8192";
  config.artifact_version = manifest.version_id;
  const auto core = *protocol::ProviderCore::create(std::move(config), &store);
  testing::TlsTestServer tls;
  tls.start(*core);
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = tls.identity->certificate_pem();
  const auto channel = grpc::CreateChannel("localhost:" + std::to_string(tls.server->port()),
                                           grpc::SslCredentials(ssl));
  grpc::GenericStub stub(channel);
  // A field 1 of wire type 7 (there is none) and a truncated length: no message parses them.
  const std::string junk = "\x0f\xff\xff\xff\xff\x12\x7f";
  for (const char* method : {"GetServerInfo", "UploadKeys", "Rerank", "GetPirInfo", "PirSetup",
                             "PirStatus", "PirQuery", "PrivateScore", "FetchLists"}) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    const grpc::Slice slice(junk);
    const grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    grpc::Status status;
    bool done = false;
    std::mutex mu;
    std::condition_variable cv;
    stub.UnaryCall(&context, std::string("/privsearch.v1.Provider/") + method, grpc::StubOptions(),
                   &request, &response, [&](grpc::Status s) {
                     std::lock_guard lock(mu);
                     status = std::move(s);
                     done = true;
                     cv.notify_one();
                   });
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(15), [&] { return done; })) << method;
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_NE(
        status.error_message().find(std::string("MALFORMED_REQUEST: the request to ") + method),
        std::string::npos)
        << method << ": " << status.error_message();
  }
  // Still serving, and well-formed requests are answered.
  auto client = tls.transport();
  const auto info = client->server_info();
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->artifact_version(), manifest.version_id);
}

}  // namespace
}  // namespace privsearch

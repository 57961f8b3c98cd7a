// protocol::HintlessPirService (the default private fetch) without a transport: typed refusals,
// per-query metering at its defaults, batches answered in order, and SIGHUP rebuilds (the same
// shape updated over its changed columns only; another shape built anew).
#include "protocol/pir_hintless_service.h"

#include <gtest/gtest.h>

#include <chrono>

#include "core/bytes.h"
#include "pir/hintless/client/client.h"

namespace privsearch::protocol {
namespace {

using namespace privsearch::pir::hintless;

struct Db {
  std::size_t records = 0, record_bytes = 0;
  std::vector<std::uint8_t> bytes;
  PirRecords view() const { return {records, record_bytes, bytes.data()}; }
};

Db make_db(std::size_t records, std::size_t record_bytes, std::uint8_t salt) {
  Db db{records, record_bytes, std::vector<std::uint8_t>(records * record_bytes)};
  for (std::size_t i = 0; i < db.bytes.size(); ++i) {
    db.bytes[i] = static_cast<std::uint8_t>(i * 131 + salt);
  }
  return db;
}

HintlessPirConfig test_config() {
  HintlessPirConfig c;
  c.params = "insecure-test-ypir-sp-d256";
  c.allow_insecure = true;
  return c;
}

struct Client {
  HintlessClient client;
  static Client of(const v1::PirInfo& info) {
    auto pub = *decode_public_info(byte_view(info.info()), true);
    return {*HintlessClient::create(pub.params, pub.shape)};
  }
  // A request for `indices`; the secrets go to `secrets`.
  v1::PirQueryRequest request(const std::string& version, std::vector<std::size_t> indices,
                              std::vector<HintlessSecret>& secrets, Prng& prng) const {
    v1::PirQueryRequest r;
    r.set_artifact_version(version);
    for (auto i : indices) {
      auto made = *client.make_query(i, prng);
      r.add_queries(to_byte_string(encode_query(client.params(), made.first)));
      secrets.push_back(std::move(made.second));
    }
    return r;
  }
};

TEST(HintlessPirServiceTest, BatchesAreAnsweredInOrderAndRefusalsAreTyped) {
  const Db db = make_db(300, 100, 1);
  auto service = *HintlessPirService::create(db.view(), "v1", test_config());
  const auto info = service->info();
  EXPECT_EQ(info.backend(), v1::PIR_BACKEND_HINTLESS);
  const Client c = Client::of(info);
  Prng prng = Prng::create();
  std::vector<HintlessSecret> secrets;
  const std::vector<std::size_t> indices = {299, 0, 150};
  const auto resp = service->query_from(c.request("v1", indices, secrets, prng), "alice");
  ASSERT_FALSE(resp.has_error()) << resp.error().message();
  ASSERT_EQ(resp.answers_size(), 3);
  for (int k = 0; k < 3; ++k) {
    const auto r =
        *decode_response(c.client.params(), c.client.shape(), byte_view(resp.answers(k)));
    const auto got = *c.client.decode(secrets[static_cast<std::size_t>(k)], r);
    const std::size_t i = indices[static_cast<std::size_t>(k)];
    EXPECT_EQ(got, std::vector<std::uint8_t>(db.bytes.begin() + i * 100,
                                             db.bytes.begin() + (i + 1) * 100));
  }
  EXPECT_EQ(service->setup({}, "alice").error().code(), v1::MALFORMED_REQUEST);
  EXPECT_EQ(service->status({}).error().code(), v1::MALFORMED_REQUEST);
  EXPECT_EQ(service->query_from(c.request("v0", {1}, secrets, prng), "alice").error().code(),
            v1::PIR_VERSION_MISMATCH);
  auto big = c.request("v1", {}, secrets, prng);
  for (int i = 0; i < 33; ++i) big.add_queries("x");
  EXPECT_EQ(service->query_from(big, "alice").error().code(), v1::PIR_LIMIT);
  auto bad = c.request("v1", {}, secrets, prng);
  bad.add_queries("garbage");
  EXPECT_EQ(service->query_from(bad, "alice").error().code(), v1::MALFORMED_REQUEST);
}

TEST(HintlessPirServiceTest, QueriesAreMeteredPerCallerAtTheDefaults) {
  const Db db = make_db(50, 64, 2);
  auto service = *HintlessPirService::create(db.view(), "v1", test_config());
  const Client c = Client::of(service->info());
  Prng prng = Prng::create();
  std::vector<HintlessSecret> secrets;
  // Maximal batches (32 queries) back to back: at most the default burst (128) plus the refill
  // (1,200 a minute = 20 a second) over the elapsed time is served, then RATE_LIMITED; another
  // caller is unaffected. The bound holds at any machine speed (the elapsed time is measured).
  const HintlessPirConfig defaults;
  const std::vector<std::size_t> batch(32, 7);
  const auto request = c.request("v1", batch, secrets, prng);
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t served = 0;
  bool refused = false;
  for (int i = 0; i < 40 && !refused; ++i) {
    const auto r = service->query_from(request, "mallory");
    if (r.has_error()) {
      EXPECT_EQ(r.error().code(), v1::RATE_LIMITED);
      refused = true;
    } else {
      served += 32;
    }
  }
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(refused);
  EXPECT_GE(served, 128u);
  EXPECT_LE(static_cast<double>(served),
            defaults.queries.burst + defaults.queries.per_minute / 60.0 * elapsed_s);
  EXPECT_FALSE(service->query_from(c.request("v1", {1}, secrets, prng), "alice").has_error());
}

TEST(HintlessPirServiceTest, RebuildUpdatesTheSameShapeByColumnsAndBuildsAnotherAnew) {
  const Db db = make_db(200, 100, 3);
  auto service = *HintlessPirService::create(db.view(), "v1", test_config());
  Db next = db;
  std::fill(next.bytes.begin() + 17 * 100, next.bytes.begin() + 18 * 100, std::uint8_t{0});
  std::string how;
  ASSERT_TRUE(service->rebuild(next.view(), "v2", &how).ok());
  EXPECT_NE(how.find("updated over its 1 changed columns"), std::string::npos) << how;
  const Client c = Client::of(service->info());
  Prng prng = Prng::create();
  std::vector<HintlessSecret> secrets;
  auto resp = service->query_from(c.request("v2", {17, 18}, secrets, prng), "a");
  ASSERT_FALSE(resp.has_error());
  auto r = *decode_response(c.client.params(), c.client.shape(), byte_view(resp.answers(0)));
  EXPECT_EQ(*c.client.decode(secrets[0], r), std::vector<std::uint8_t>(100, 0));
  r = *decode_response(c.client.params(), c.client.shape(), byte_view(resp.answers(1)));
  EXPECT_EQ(*c.client.decode(secrets[1], r),
            std::vector<std::uint8_t>(next.bytes.begin() + 1800, next.bytes.begin() + 1900));
  const Db grown = make_db(450, 100, 4);
  ASSERT_TRUE(service->rebuild(grown.view(), "v3", &how).ok());
  EXPECT_EQ(how.find("changed columns"), std::string::npos) << how;
  EXPECT_EQ(service->info().artifact_version(), "v3");
}

}  // namespace
}  // namespace privsearch::protocol

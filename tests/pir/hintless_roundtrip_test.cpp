// Round-trip tests of the hintless PIR backend (pir/hintless): records fetched equal the stored
// ones for edge shapes, measured noise under the bound, updates, shards, malformed messages.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "pir/hintless/client/client.h"
#include "pir/hintless/crs.h"
#include "pir/hintless/hint.h"
#include "pir/hintless/kernels.h"
#include "pir/hintless/modswitch.h"
#include "pir/hintless/packing.h"
#include "pir/hintless/server.h"
#include "pir/hintless_reference.h"
#include "pir/hintless_test_util.h"
#include "pir/lwe/lwe.h"

namespace privsearch::pir::hintless {
namespace {

namespace ref = reference;

using test_util::random_records;
using test_util::secure_params;
using test_util::small_poly;
using test_util::source;
using test_util::test_params;

struct RoundTripCase {
  std::size_t records;
  std::size_t record_bytes;
  bool vary;
};

void round_trip(const HintlessParams& p, const RoundTripCase& tc, std::size_t batch) {
  SCOPED_TRACE(::testing::Message() << tc.records << " x " << tc.record_bytes << " B");
  const auto records = random_records(tc.records, tc.record_bytes, tc.records, tc.vary);
  const HintlessShape shape = *choose_hintless_shape(p, tc.records, tc.record_bytes);
  auto server = HintlessServer::create(p, shape, source(records));
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  const HintlessClient client = *HintlessClient::create(p, shape);
  Prng prng = Prng::create();
  std::vector<HintlessQuery> queries;
  std::vector<HintlessSecret> secrets;
  for (std::size_t k = 0; k < batch; ++k) {
    const std::size_t index = k == 0 ? tc.records - 1 : prng.uniform_below(tc.records);
    auto [query, secret] = *client.make_query(index, prng);
    // Through the wire format, as the provider will see it.
    auto decoded = decode_query(p, shape, encode_query(p, query));
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    queries.push_back(std::move(*decoded));
    secrets.push_back(std::move(secret));
  }
  auto responses = (*server)->answer(queries);
  ASSERT_TRUE(responses.ok());
  for (std::size_t k = 0; k < batch; ++k) {
    const auto bytes = encode_response(p, (*responses)[k]);
    EXPECT_EQ(bytes.size(), hintless_response_bytes(p, shape.outputs));
    auto resp = decode_response(p, shape, bytes);
    ASSERT_TRUE(resp.ok());
    auto got = client.decode(secrets[k], *resp);
    ASSERT_TRUE(got.ok());
    std::vector<std::uint8_t> want = records[secrets[k].record()];
    want.resize(shape.record_bytes, 0);
    EXPECT_EQ(*got, want) << "record " << secrets[k].record();
  }
}

TEST(HintlessRoundTripTest, RecordsComeBackForEdgeShapes) {
  const HintlessParams p = test_params();
  round_trip(p, {1, 1, false}, 1);     // one record of one byte
  round_trip(p, {1, 448, false}, 1);   // one full column
  round_trip(p, {300, 448, true}, 3);  // d0 not a multiple of d, batch of 3
  round_trip(p, {1000, 13, true}, 2);  // 34 records per column, R not a multiple of 7
  round_trip(p, {40, 1000, true}, 3);  // rho = 3 outputs
  round_trip(p, {700, 64, true}, 16);  // batch of 16
}

TEST(HintlessRoundTripTest, SecureParamsFetchRecords) {
  round_trip(secure_params(), {3000, 2048, true}, 3);
}

// The noise after packing and the switch, measured on every coefficient of real responses at the
// secure preset, stays below the width the failure bound assumes (and is not vacuously small).
TEST(HintlessNoiseTest, MeasuredNoiseStaysBelowTheBound) {
  const HintlessParams p = secure_params();
  const auto records = random_records(500, 2048, 77, false);
  const HintlessShape shape = *choose_hintless_shape(p, 500, 2048);
  auto server = *HintlessServer::create(p, shape, source(records));
  const HintlessClient client = *HintlessClient::create(p, shape);
  const HintlessRing ring = *HintlessRing::create(p);
  const std::size_t d = p.d;
  const double pi = 3.14159265358979323846;
  // The bound's width s, from log2 f = log2(2 d rho) - pi tau^2 / (s^2 ln 2) with tau = 31.
  const double log2_f = hintless_decoding_failure_log2(p, shape.columns, shape.outputs);
  const double tau = 31.0;
  const double s2 =
      pi * tau * tau /
      ((std::log2(2.0 * static_cast<double>(d * shape.outputs)) - log2_f) * std::log(2.0));
  const double sigma_bound = std::sqrt(s2 / (2 * pi));
  Prng prng = Prng::create();
  double sum2 = 0, worst = 0;
  std::size_t n = 0;
  for (int run = 0; run < 20; ++run) {
    const std::size_t index = prng.uniform_below(500);
    auto [query, secret] = *client.make_query(index, prng);
    const auto resp = (*server->answer(std::span<const HintlessQuery>(&query, 1)))[0];
    std::vector<u64> prod(resp.a.begin(), resp.a.begin() + d);
    ring.ntt(0).forward(prod.data());
    for (std::size_t i = 0; i < d; ++i) prod[i] = ring.modulus(0).mul(prod[i], secret.s_ntt_a()[i]);
    ring.ntt(0).inverse(prod.data());
    std::vector<std::uint16_t> want(d);
    std::vector<std::uint8_t> column(shape.column_bytes(p), 0);
    std::copy(records[index].begin(), records[index].end(), column.begin());
    bytes_to_entries(column, p.p_bits, want);
    for (std::size_t i = 0; i < d; ++i) {
      const std::int64_t scaled = static_cast<std::int64_t>(((prod[i] << 20) + p.q_a / 2) / p.q_a);
      std::int64_t v = (static_cast<std::int64_t>(resp.b[i]) - scaled) & 0xfffff;
      std::int64_t e = (v - 64 * static_cast<std::int64_t>(want[i])) & 0xfffff;
      if (e >= (1 << 19)) e -= 1 << 20;
      sum2 += static_cast<double>(e * e);
      worst = std::max(worst, std::fabs(static_cast<double>(e)));
      ++n;
    }
  }
  const double sigma = std::sqrt(sum2 / static_cast<double>(n));
  RecordProperty("sigma_measured", std::to_string(sigma));
  RecordProperty("sigma_bound", std::to_string(sigma_bound));
  RecordProperty("worst_abs_noise", std::to_string(worst));
  EXPECT_LT(sigma, sigma_bound) << "measured " << sigma << ", bound " << sigma_bound;
  EXPECT_GT(sigma, sigma_bound / 8) << "measured " << sigma << ", bound " << sigma_bound;
  EXPECT_LT(worst, 32.0);  // q~b / (2p): every coefficient decoded
}

TEST(HintlessRoundTripTest, UpdatedRecordsAreServed) {
  const HintlessParams p = test_params();
  auto records = random_records(200, 100, 9);
  const HintlessShape shape = *choose_hintless_shape(p, 200, 100);
  auto server = *HintlessServer::create(p, shape, source(records));
  const HintlessClient client = *HintlessClient::create(p, shape);
  records[5] = std::vector<std::uint8_t>(100, 0xab);
  records[199] = std::vector<std::uint8_t>{1, 2, 3};
  // What SIGHUP does: find the changed columns by comparison, update a copy.
  const auto columns = server->changed_columns(source(records));
  EXPECT_EQ(columns, (std::vector<std::size_t>{shape.column_of(5), shape.column_of(199)}));
  auto copied = server->copy();
  ASSERT_TRUE(copied->update_columns({columns.begin(), columns.end()}, source(records)).ok());
  EXPECT_TRUE(copied->changed_columns(source(records)).empty());
  const std::vector<std::size_t> changed = {5, 199};
  ASSERT_TRUE(server->update(changed, source(records)).ok());
  // The hint updated over the changed columns equals one built from the new records: the same
  // query gets the same response bytes from both.
  auto fresh = *HintlessServer::create(p, shape, source(records));
  Prng prng = Prng::create();
  for (std::size_t index : {std::size_t{5}, std::size_t{199}, std::size_t{6}}) {
    auto [query, secret] = *client.make_query(index, prng);
    auto resp = server->answer(std::span<const HintlessQuery>(&query, 1));
    ASSERT_TRUE(resp.ok());
    const auto rebuilt = fresh->answer(std::span<const HintlessQuery>(&query, 1));
    EXPECT_EQ(encode_response(p, (*resp)[0]), encode_response(p, (*rebuilt)[0])) << index;
    const auto from_copy = copied->answer(std::span<const HintlessQuery>(&query, 1));
    EXPECT_EQ(encode_response(p, (*from_copy)[0]), encode_response(p, (*rebuilt)[0])) << index;
    std::vector<std::uint8_t> want = records[index];
    want.resize(100, 0);
    EXPECT_EQ(*client.decode(secret, (*resp)[0]), want);
  }
}

// An append (SIGHUP after `privsearch update` added records): the grown server, its hint updated
// over the changed and new columns only, answers byte for byte as a server built from all the
// records, for old records, appended ones and the column the two share; a new shape that is not
// a widening (more outputs) is refused so the service rebuilds.
TEST(HintlessRoundTripTest, AppendedRecordsGrowTheServerByColumns) {
  const HintlessParams p = test_params();
  auto records = random_records(250, 100, 11);
  const HintlessShape shape = *choose_hintless_shape(p, 250, 100);
  auto server = *HintlessServer::create(p, shape, source(records));
  for (std::size_t i = 0; i < 950; ++i) {
    records.push_back(std::vector<std::uint8_t>(1 + i % 100, static_cast<std::uint8_t>(i)));
  }
  records[3] = std::vector<std::uint8_t>(100, 0x5a);  // and one old record rewritten
  const HintlessShape wider = *choose_hintless_shape(p, records.size(), 100);
  ASSERT_EQ(wider.outputs, shape.outputs);
  ASSERT_GT(wider.columns, shape.columns);
  ASSERT_GT(wider.columns / p.d, shape.columns / p.d) << "the test should add column blocks";
  auto grown = server->grown(wider, source(records));
  ASSERT_TRUE(grown.ok()) << grown.status().to_string();
  EXPECT_TRUE((*grown)->changed_columns(source(records)).empty());
  auto fresh = *HintlessServer::create(p, wider, source(records));
  EXPECT_TRUE(std::equal((*grown)->database().entries().begin(),
                         (*grown)->database().entries().end(),
                         fresh->database().entries().begin()));
  const HintlessClient client = *HintlessClient::create(p, wider);
  Prng prng = Prng::create();
  for (std::size_t index :
       {std::size_t{3}, std::size_t{249}, std::size_t{250}, std::size_t{1199}, std::size_t{0}}) {
    auto [query, secret] = *client.make_query(index, prng);
    const auto got = (*grown)->answer(std::span<const HintlessQuery>(&query, 1));
    const auto want = fresh->answer(std::span<const HintlessQuery>(&query, 1));
    ASSERT_TRUE(got.ok() && want.ok());
    EXPECT_EQ(encode_response(p, (*got)[0]), encode_response(p, (*want)[0])) << index;
    std::vector<std::uint8_t> record = records[index];
    record.resize(100, 0);
    EXPECT_EQ(*client.decode(secret, (*got)[0]), record) << index;
  }
  // The old server keeps answering its own shape; a shape with more outputs is no widening.
  HintlessShape taller = wider;
  taller.outputs += 1;
  EXPECT_EQ(server->grown(taller, source(records)).status().code(),
            StatusCode::kFailedPrecondition);
  HintlessShape cramped = wider;
  cramped.columns = shape.columns;  // fewer columns than the records need
  EXPECT_EQ(server->grown(cramped, source(records)).status().code(),
            StatusCode::kFailedPrecondition);
}

// Shards holding consecutive output blocks answer parts that join into the single server's
// response byte for byte; parts out of order, missing or doubled are refused.
TEST(HintlessShardTest, PartsJoinIntoTheSingleServersResponse) {
  const HintlessParams p = test_params();
  const auto records = random_records(40, 1000, 21);
  const HintlessShape shape = *choose_hintless_shape(p, 40, 1000);
  ASSERT_EQ(shape.outputs, 3u);
  auto whole = *HintlessServer::create(p, shape, source(records));
  std::vector<std::unique_ptr<HintlessServer>> shards;
  for (std::size_t i = 0; i < 3; ++i) {
    shards.push_back(*HintlessServer::create(p, shape, source(records), {}, OutputRange{i, 1}));
    EXPECT_EQ(shards.back()->database().rows(), p.d);  // only its block of rows
  }
  EXPECT_FALSE(HintlessServer::create(p, shape, source(records), {}, OutputRange{2, 2}).ok());
  const HintlessClient client = *HintlessClient::create(p, shape);
  Prng prng = Prng::create();
  auto [query, secret] = *client.make_query(33, prng);
  const auto q = std::span<const HintlessQuery>(&query, 1);
  const auto want = encode_response(p, (*whole->answer(q))[0]);
  std::vector<std::vector<std::uint8_t>> parts;
  for (auto& s : shards) parts.push_back(encode_response(p, (*s->answer(q))[0]));
  auto join = [&](std::vector<std::size_t> order) {
    std::vector<std::span<const std::uint8_t>> views;
    for (auto i : order) views.push_back(parts[i]);
    return join_response_parts(p, shape, views);
  };
  const auto joined = join({0, 1, 2});
  ASSERT_TRUE(joined.ok()) << joined.status().to_string();
  EXPECT_EQ(*joined, want);
  auto resp = *decode_response(p, shape, *joined);
  std::vector<std::uint8_t> expect = records[33];
  expect.resize(1000, 0);
  EXPECT_EQ(*client.decode(secret, resp), expect);
  EXPECT_NE(*join({1, 0, 2}), want);  // reordered parts decode, into the wrong record
  EXPECT_EQ(join({0, 2}).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(join({0, 1, 2, 2}).status().code(), StatusCode::kDataLoss);
  parts[1].pop_back();
  EXPECT_EQ(join({0, 1, 2}).status().code(), StatusCode::kDataLoss);
}

TEST(HintlessMessagesTest, MalformedQueriesAndResponsesGetTypedErrors) {
  const HintlessParams p = test_params();
  const HintlessShape shape = *choose_hintless_shape(p, 50, 64);
  const HintlessClient client = *HintlessClient::create(p, shape);
  Prng prng = Prng::create();
  auto [query, secret] = *client.make_query(3, prng);
  const std::vector<std::uint8_t> good = encode_query(p, query);
  EXPECT_EQ(good.size(), hintless_query_bytes(p, shape.columns));
  ASSERT_TRUE(decode_query(p, shape, good).ok());
  auto bad = good;
  bad.pop_back();
  EXPECT_EQ(decode_query(p, shape, bad).status().code(), StatusCode::kDataLoss);
  bad = good;
  bad.push_back(0);
  EXPECT_EQ(decode_query(p, shape, bad).status().code(), StatusCode::kDataLoss);
  bad = good;
  bad[0] ^= 1;
  EXPECT_EQ(decode_query(p, shape, bad).status().code(), StatusCode::kDataLoss);
  bad = good;
  bad[4] ^= 1;  // params id
  EXPECT_EQ(decode_query(p, shape, bad).status().code(), StatusCode::kFailedPrecondition);
  bad = good;
  bad[8] ^= 1;  // column count
  EXPECT_EQ(decode_query(p, shape, bad).status().code(), StatusCode::kFailedPrecondition);
  bad = good;
  for (int i = 16; i < 20; ++i) bad[i] = 0xff;  // first residue = 2^28 - 1 >= q_a
  bad[19] = static_cast<std::uint8_t>(bad[19] | 0x0f);
  EXPECT_EQ(decode_query(p, shape, bad).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(client.make_query(50, prng).status().code(), StatusCode::kOutOfRange);

  HintlessResponse resp;
  resp.params_id = p.id;
  resp.outputs = static_cast<std::uint32_t>(shape.outputs);
  resp.a.assign(shape.outputs * p.d, 1);
  resp.b.assign(shape.outputs * p.d, 2);
  const auto rgood = encode_response(p, resp);
  ASSERT_TRUE(decode_response(p, shape, rgood).ok());
  auto rbad = rgood;
  rbad.resize(rbad.size() - 1);
  EXPECT_EQ(decode_response(p, shape, rbad).status().code(), StatusCode::kDataLoss);
  rbad = rgood;
  rbad[8] = 7;  // outputs
  EXPECT_EQ(decode_response(p, shape, rbad).status().code(), StatusCode::kDataLoss);
  resp.a[0] = static_cast<std::uint32_t>(p.q_a);
  EXPECT_EQ(decode_response(p, shape, encode_response(p, resp)).status().code(),
            StatusCode::kDataLoss);
  HintlessResponse short_resp;
  short_resp.outputs = 1;
  EXPECT_EQ(client.decode(secret, short_resp).status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace privsearch::pir::hintless

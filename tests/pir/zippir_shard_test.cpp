// ZipPIR over row shards (pir/zippir/zippir_shard.h): S shards' parts assemble to the bytes one
// server sends (S = 1 and 3, both response modes), the client reads its records from them, and
// every malformed, foreign, overlapping or missing part is refused.
#include "pir/zippir/zippir_shard.h"

#include <gtest/gtest.h>

#include "pir/zippir/zippir.h"
#include "testing/zippir_test_params.h"

namespace privsearch::pir {
namespace {

using testing::zippir_test_params;

// One database (40 records of 40 bytes in 400 rows: 13 packed rows of 31) served by one server
// and by `shards` row shards, one client registered with all of them.
struct Sharded {
  ZipPirParams params = zippir_test_params();
  std::optional<LweDatabase> db;
  std::unique_ptr<ZipPirServer> single;
  std::vector<std::unique_ptr<ZipPirServer>> shards;
  std::optional<ZipPirClient> client;

  explicit Sharded(std::size_t count, Prng& prng) {
    const auto shape = *choose_database_shape(40, 40, 400);
    db.emplace(*LweDatabase::create(shape));
    db->fill_pseudorandom(77);
    const Seed a_seed = Prng::random_seed();
    // The single server over the same bytes.
    auto copy = *LweDatabase::create(shape);
    for (std::size_t i = 0; i < shape.records; ++i)
      EXPECT_TRUE(copy.set_record(i, db->record(i)).ok());
    single = *ZipPirServer::create(params, std::move(copy), a_seed, 2);
    const auto plan = plan_row_shards(params, shape, count);
    EXPECT_TRUE(plan.ok());
    for (const auto& range : plan.value()) {
      auto shard = ZipPirServer::create_shard(params, *db, range, a_seed, 1);
      EXPECT_TRUE(shard.ok()) << shard.status().to_string();
      shards.push_back(std::move(shard).value());
    }
    client.emplace(*ZipPirClient::create(single->info(), prng));
    EXPECT_TRUE(single->register_client(client->setup_message()).ok());
    for (auto& s : shards) EXPECT_TRUE(s->register_client(client->setup_message()).ok());
  }
  Status precompute(std::uint64_t first, std::size_t count) {
    PRIVSEARCH_RETURN_IF_ERROR(single->precompute(client->client_id(), first, count, 1));
    for (auto& s : shards)
      PRIVSEARCH_RETURN_IF_ERROR(s->precompute(client->client_id(), first, count, 1));
    return Status();
  }
  std::vector<std::vector<std::uint8_t>> parts(std::span<const std::uint8_t> query) {
    std::vector<std::vector<std::uint8_t>> out;
    for (auto& s : shards) {
      auto part = s->answer(query);
      EXPECT_TRUE(part.ok()) << part.status().to_string();
      out.push_back(std::move(part).value());
    }
    return out;
  }
};

TEST(ZipPirShards, ThreeShardsAssembleToTheSingleServersBytes) {
  Prng prng = Prng::from_seed(Seed{41});
  Sharded f(3, prng);
  ASSERT_EQ(f.params.packed_rows(f.db->shape()), 13u);
  EXPECT_EQ(f.shards[0]->packed_rows(), 5u);
  EXPECT_EQ(f.shards[2]->first_packed_row(), 9u);
  for (const auto& s : f.shards) {
    EXPECT_TRUE(s->is_shard());
    EXPECT_EQ(s->info().serialize(), f.single->info().serialize());  // one database to clients
  }
  ASSERT_TRUE(f.precompute(0, 4).ok());
  for (const std::size_t record : {0u, 17u, 39u, 25u}) {
    std::optional<ZipPirPendingQuery> pending;
    const auto query = *f.client->query(record, prng, pending);
    const auto want = f.single->answer(query);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    auto parts = f.parts(query);
    std::swap(parts[0], parts[2]);  // any order
    const auto got = assemble_zippir_response(f.single->info(), parts);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(*got, *want) << "record " << record;
    EXPECT_EQ(*f.client->extract(*pending, *got), f.db->record(record));
  }
}

TEST(ZipPirShards, OneShardIsTheSingleServer) {
  Prng prng = Prng::from_seed(Seed{42});
  Sharded f(1, prng);
  ASSERT_EQ(f.shards.size(), 1u);
  EXPECT_FALSE(f.shards[0]->is_shard());
  ASSERT_TRUE(f.precompute(0, 1).ok());
  std::optional<ZipPirPendingQuery> pending;
  const auto query = *f.client->query(11, prng, pending);
  const auto want = *f.single->answer(query);
  EXPECT_EQ(*f.shards[0]->answer(query), want);
  EXPECT_EQ(*f.client->extract(*pending, want), f.db->record(11));
}

TEST(ZipPirShards, TOnlyPartsAssembleToTheSingleServersTOnlyResponse) {
  Prng prng = Prng::from_seed(Seed{43});
  Sharded f(3, prng);
  ASSERT_TRUE(f.precompute(0, 1).ok());
  const auto id = f.client->client_id();
  ASSERT_TRUE(f.single->export_hint(id, 0).ok());
  for (auto& s : f.shards) ASSERT_TRUE(s->export_hint(id, 0).ok());
  std::optional<ZipPirPendingQuery> pending;
  const auto query = *f.client->query(5, prng, pending);
  const auto want = *f.single->answer(query);
  EXPECT_EQ(*assemble_zippir_response(f.single->info(), f.parts(query)), want);
}

TEST(ZipPirShards, AssemblyRefusesMissingOverlappingForeignAndDamagedParts) {
  Prng prng = Prng::from_seed(Seed{44});
  Sharded f(3, prng);
  ASSERT_TRUE(f.precompute(0, 2).ok());
  std::optional<ZipPirPendingQuery> p0, p1;
  const auto q0 = *f.client->query(3, prng, p0);
  const auto q1 = *f.client->query(4, prng, p1);
  const auto parts = f.parts(q0);
  const auto other = f.parts(q1);
  const auto& info = f.single->info();
  auto code = [&](std::vector<std::vector<std::uint8_t>> ps) {
    return assemble_zippir_response(info, ps).status().code();
  };
  ASSERT_TRUE(assemble_zippir_response(info, parts).ok());
  // A shard down: rows missing, never a partial response.
  EXPECT_EQ(code({parts[0], parts[2]}), StatusCode::kUnavailable);
  EXPECT_EQ(code({}), StatusCode::kUnavailable);
  EXPECT_EQ(code({parts[0], parts[1], parts[1], parts[2]}), StatusCode::kDataLoss);  // overlap
  EXPECT_EQ(code({parts[0], other[1], parts[2]}), StatusCode::kDataLoss);  // another query
  auto cut = parts[1];
  cut.pop_back();
  EXPECT_EQ(code({parts[0], cut, parts[2]}), StatusCode::kDataLoss);
  auto magic = parts[1];
  magic[0] ^= 1;
  EXPECT_EQ(code({parts[0], magic, parts[2]}), StatusCode::kDataLoss);
  auto foreign = parts[1];
  foreign[6] ^= 1;  // the params id (after magic and version)
  EXPECT_NE(code({parts[0], foreign, parts[2]}), StatusCode::kOk);
  auto range = parts[2];
  range[5 + 8 + 8 + 1] = 12;  // first packed row 12 with its 4 rows: past the 13
  EXPECT_EQ(code({parts[0], parts[1], range}), StatusCode::kDataLoss);
  // The single server's response is not a part.
  EXPECT_EQ(code({*f.single->answer(q1)}), StatusCode::kDataLoss);
}

TEST(ZipPirShards, PlansCoverThePackedRowsInOrder) {
  const auto params = zippir_test_params();
  const auto shape = *choose_database_shape(40, 40, 400);  // 400 rows, 13 packed rows of 31
  for (std::size_t s = 1; s <= 13; ++s) {
    const auto plan = plan_row_shards(params, shape, s);
    ASSERT_TRUE(plan.ok());
    ASSERT_EQ(plan->size(), s);
    std::size_t next = 0, smallest = 1000, largest = 0;
    for (const auto& r : *plan) {
      EXPECT_EQ(r.first_row, next);
      EXPECT_TRUE(check_row_range(params, shape, r).ok());
      const std::size_t packed = (r.rows + 30) / 31;
      smallest = std::min(smallest, packed);
      largest = std::max(largest, packed);
      next += r.rows;
    }
    EXPECT_EQ(next, 400u);
    EXPECT_LE(largest - smallest, 1u);
  }
  EXPECT_EQ(plan_row_shards(params, shape, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(plan_row_shards(params, shape, 14).status().code(), StatusCode::kInvalidArgument);
  for (const ZipPirRowRange bad :
       {ZipPirRowRange{1, 31}, ZipPirRowRange{0, 30}, ZipPirRowRange{0, 0}, ZipPirRowRange{372, 29},
        ZipPirRowRange{403, 31}}) {
    EXPECT_EQ(check_row_range(params, shape, bad).code(), StatusCode::kInvalidArgument)
        << bad.first_row << "+" << bad.rows;
  }
  EXPECT_TRUE(check_row_range(params, shape, {372, 28}).ok());  // the last, short packed row
  auto db = *LweDatabase::create(shape);
  EXPECT_EQ(ZipPirServer::create_shard(params, db, {1, 31}, Seed{}, 1).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::pir

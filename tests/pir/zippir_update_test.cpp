// ZipPIR after an index update (ZipPirServer::update): records appended (new columns and the
// last column's free slots) and records zeroed (deletions) give, through the incremental hint
// H' = H + D'[:, C] A - D[:, C] A, a server whose public info, exported hints and answers are
// byte-identical to a fresh create() over the new database; a client reads the new and emptied
// records; the changed columns are only the touched ones; shape changes and shards are refused.
#include <gtest/gtest.h>

#include "pir/zippir/zippir.h"
#include "testing/zippir_test_params.h"

namespace privsearch::pir {
namespace {

using testing::zippir_test_params;

std::vector<std::uint8_t> record_bytes(std::size_t i, std::size_t size) {
  std::vector<std::uint8_t> r(size);
  for (std::size_t j = 0; j < size; ++j)
    r[j] = static_cast<std::uint8_t>((i * 131 + j * 7 + 3) & 0xff);
  return r;
}

LweDatabase database(const DatabaseShape& shape, std::size_t records,
                     const std::vector<std::size_t>& zeroed = {}) {
  auto db = *LweDatabase::create(shape);
  for (std::size_t i = 0; i < records; ++i) {
    auto r = record_bytes(i, shape.record_bytes);
    if (std::find(zeroed.begin(), zeroed.end(), i) != zeroed.end()) r.assign(r.size(), 0);
    EXPECT_TRUE(db.set_record(i, r).ok());
  }
  return db;
}

TEST(ZipPirUpdate, AnUpdatedServerIsByteIdenticalToAFreshOne) {
  const auto params = zippir_test_params();
  const Seed a_seed = Prng::random_seed();
  // 70 records of 40 bytes, 10 per column: 7 columns; then 93 records (10 columns, the last one
  // partly filled) with records 5 and 66 zeroed.
  const auto old_shape = *choose_database_shape(70, 40, 400);
  ASSERT_EQ(old_shape.records_per_column, 10u);
  auto before = *ZipPirServer::create(params, database(old_shape, 70), a_seed, 2);
  const auto shape = *grown_database_shape(old_shape, 93);
  EXPECT_EQ(shape.rows, old_shape.rows);
  EXPECT_EQ(shape.columns, 10u);
  const std::vector<std::size_t> zeroed{5, 66};
  std::size_t changed = 0;
  auto updated = ZipPirServer::update(*before, database(shape, 93, zeroed), 2, {}, &changed);
  ASSERT_TRUE(updated.ok()) << updated.status().to_string();
  EXPECT_EQ(changed, 5u);  // columns 0 and 6 (zeroed), 7, 8 and 9 (new)
  auto fresh = *ZipPirServer::create(params, database(shape, 93, zeroed), a_seed, 2);
  EXPECT_EQ((*updated)->info().serialize(), fresh->info().serialize());

  Prng prng = Prng::from_seed(Seed{9});
  auto client = *ZipPirClient::create(fresh->info(), prng);
  for (auto* s : {updated->get(), fresh.get()}) {
    ASSERT_TRUE(s->register_client(client.setup_message()).ok());
    ASSERT_TRUE(s->precompute(client.client_id(), 0, 4, 1).ok());
  }
  // The hints a client would hold, and the answers, are the same bytes.
  EXPECT_EQ(*(*updated)->export_hint(client.client_id(), 3),
            *fresh->export_hint(client.client_id(), 3));
  for (const std::size_t record : {0u, 5u, 92u}) {
    std::optional<ZipPirPendingQuery> pending;
    const auto query = *client.query(record, prng, pending);
    const auto a = (*updated)->answer(query);
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    EXPECT_EQ(*a, *fresh->answer(query)) << record;
    const auto got = *client.extract(*pending, *a);
    if (record == 5) {
      EXPECT_EQ(got, std::vector<std::uint8_t>(40, 0));
    } else {
      EXPECT_EQ(got, record_bytes(record, 40)) << record;
    }
  }
  // Nothing changed: no column recomputed, the same server again.
  std::size_t none = 1;
  auto same = ZipPirServer::update(*fresh, database(shape, 93, zeroed), 1, {}, &none);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(none, 0u);
  EXPECT_EQ((*same)->info().serialize(), fresh->info().serialize());
}

// Changed columns in three chunks of A's expansion (4,096 rows each): the same server as a
// fresh one.
TEST(ZipPirUpdate, ChangedColumnsAcrossMatrixChunks) {
  const auto params = zippir_test_params();
  const Seed a_seed = Prng::random_seed();
  const auto old_shape = *choose_database_shape(9000, 40, 40);  // one record per column
  ASSERT_EQ(old_shape.columns, 9000u);
  auto before = *ZipPirServer::create(params, database(old_shape, 9000), a_seed, 2);
  const auto shape = *grown_database_shape(old_shape, 9100);
  const std::vector<std::size_t> zeroed{10, 5000, 8999};
  std::size_t changed = 0;
  auto updated = ZipPirServer::update(*before, database(shape, 9100, zeroed), 2, {}, &changed);
  ASSERT_TRUE(updated.ok()) << updated.status().to_string();
  EXPECT_EQ(changed, 103u);
  auto fresh = *ZipPirServer::create(params, database(shape, 9100, zeroed), a_seed, 2);
  Prng prng = Prng::from_seed(Seed{3});
  auto client = *ZipPirClient::create(fresh->info(), prng);
  for (auto* s : {updated->get(), fresh.get()}) {
    ASSERT_TRUE(s->register_client(client.setup_message()).ok());
    ASSERT_TRUE(s->precompute(client.client_id(), 0, 1, 1).ok());
  }
  EXPECT_EQ(*(*updated)->export_hint(client.client_id(), 0),
            *fresh->export_hint(client.client_id(), 0));
}

TEST(ZipPirUpdate, ShapeChangesAndShardsAreRefused) {
  const auto params = zippir_test_params();
  const Seed a_seed = Prng::random_seed();
  const auto old_shape = *choose_database_shape(70, 40, 400);
  auto before = *ZipPirServer::create(params, database(old_shape, 70), a_seed, 1);
  EXPECT_EQ(grown_database_shape(old_shape, 69).status().code(), StatusCode::kInvalidArgument);
  // Other rows (the shape a fresh choice would make) cannot be updated incrementally.
  const auto other = *choose_database_shape(93, 40, 200);
  ASSERT_NE(other.rows, old_shape.rows);
  EXPECT_EQ(ZipPirServer::update(*before, database(other, 93), 1).status().code(),
            StatusCode::kInvalidArgument);
  const auto plan = *plan_row_shards(params, old_shape, 2);
  auto db = database(old_shape, 70);
  auto shard = *ZipPirServer::create_shard(params, db, plan[0], a_seed, 1);
  EXPECT_EQ(ZipPirServer::update(*shard, database(old_shape, 70), 1).status().code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace privsearch::pir

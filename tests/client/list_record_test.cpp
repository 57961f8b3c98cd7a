// The IVF lists as PIR records (index/candidates/ivf_list_record.h, protocol/ivf_list_pir.h): the
// provider's table holds every list's segments of every generation, padded to one size, and the
// client's split gives back exactly the segments the directories name; anything else is refused by
// name.
#include <gtest/gtest.h>

#include <string>

#include "core/bytes.h"
#include "index/artifacts/append.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/signing_key.h"
#include "index/build.h"
#include "index/candidates/ivf.h"
#include "index/candidates/ivf_list_record.h"
#include "protocol/ivf_list_pir.h"
#include "testing/tiny_collection.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

class ListRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto o = testing::tiny_index_options(c, 128);
    o.ivf = true;
    o.ivf_lists = 8;
    ASSERT_TRUE(build_index(o, nullptr).ok());
    dir = o.out;
    // One update: 3 documents appended (copies of existing rows), so some lists have two
    // segments and others one.
    AppendInput in;
    in.vectors = {3, c.vectors.cols, {}};
    for (std::size_t i = 0; i < 3; ++i) {
      const float* row = c.vectors.row(30 * i + 5);
      in.vectors.data.insert(in.vectors.data.end(), row, row + c.vectors.cols);
      in.documents.push_back({"u" + std::to_string(i), "Update " + std::to_string(i), "text"});
    }
    const auto key = *Ed25519SigningKey::generate();
    ASSERT_TRUE(append_to_index(dir, in, &key).ok());
    ivf = *load_ivf(dir / kIvfFile);
    ASSERT_TRUE(add_ivf_delta(ivf, *read_file_bytes(dir / "ivf_delta.1.bin"), "delta").ok());
    auto store = IvfListStore::open(dir / kIvfListsFile, ivf);
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    ASSERT_TRUE(store->open_generation(1, dir / "ivf_lists.1.bin").ok());
    lists.emplace(std::move(store).value());
    auto made = protocol::ivf_list_pir_table(*lists);
    ASSERT_TRUE(made.ok()) << made.status().to_string();
    table = std::move(made).value();
  }
  std::span<const std::uint8_t> record(std::uint32_t l) const {
    return std::span(table.bytes).subspan(std::size_t{l} * table.record_bytes, table.record_bytes);
  }

  testing::Collection c{"list-record"};
  fs::path dir;
  IvfIndex ivf;
  std::optional<IvfListStore> lists;
  protocol::IvfListPirTable table;
};

TEST_F(ListRecordTest, EveryRecordSplitsIntoTheSegmentsOfItsList) {
  ASSERT_EQ(table.records, ivf.lists);
  std::uint64_t longest = 0, total = 0;
  std::size_t with_update = 0;
  for (std::uint32_t l = 0; l < ivf.lists; ++l) {
    const std::uint64_t used = ivf.ref(l, 0).bytes + ivf.ref(l, 1).bytes;
    EXPECT_EQ(list_record_used_bytes(ivf, l), used);
    longest = std::max(longest, used);
    total += ivf.ref(l, 1).count;
    const auto parts = split_list_record(ivf, l, record(l));
    ASSERT_TRUE(parts.ok()) << l << ": " << parts.status().to_string();
    ASSERT_EQ(parts->size(), ivf.ref(l, 1).bytes == 0 ? 1u : 2u);
    with_update += parts->size() - 1;
    for (const auto& part : *parts) {
      const auto stored = *lists->segment(l, part.list.generation);
      EXPECT_EQ(std::string(part.bytes.begin(), part.bytes.end()), stored) << l;
      const auto direct = *decode_list(ivf, l, byte_view(stored), part.list.generation);
      EXPECT_EQ(part.list.ids, direct.ids);
      EXPECT_EQ(part.list.blocked, direct.blocked);
    }
  }
  // The longest list rounded up to whole 4 KiB (slack that keeps the shape across small updates).
  EXPECT_EQ(table.record_bytes % kListRecordAlign, 0u);
  EXPECT_GE(table.record_bytes, longest);
  EXPECT_LT(table.record_bytes - longest, kListRecordAlign);
  EXPECT_EQ(list_record_bytes(ivf), table.record_bytes);
  EXPECT_EQ(total, 3u * ivf.spill);  // every appended document in `spill` lists
  EXPECT_GT(with_update, 0u);
  EXPECT_LT(with_update, ivf.lists);  // some lists gained nothing: both shapes are covered
}

TEST_F(ListRecordTest, ForeignTamperedOrCutRecordsAreRefusedByName) {
  // Find two lists whose records differ in their used bytes' size or content.
  const std::uint32_t a = 0, b = 1;
  auto expect_data_loss = [&](std::uint32_t l, std::span<const std::uint8_t> bytes,
                              const char* what) {
    const auto r = split_list_record(ivf, l, bytes);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << what;
    EXPECT_NE(r.status().message().find("list " + std::to_string(l)), std::string::npos)
        << r.status().to_string();
  };
  expect_data_loss(a, record(b), "another list's record");
  std::vector<std::uint8_t> flipped(record(a).begin(), record(a).end());
  flipped[list_record_used_bytes(ivf, a) / 2] ^= 1;
  expect_data_loss(a, flipped, "one bit flipped in a segment");
  std::vector<std::uint8_t> padded(record(a).begin(), record(a).end());
  padded.push_back(0);
  EXPECT_TRUE(split_list_record(ivf, a, padded).ok());  // longer zero padding is still the list
  padded.back() = 7;
  expect_data_loss(a, padded, "padding not zero");
  const auto cut = record(a).first(list_record_used_bytes(ivf, a) - 1);
  expect_data_loss(a, cut, "cut inside its segments");
  const auto outside = split_list_record(ivf, static_cast<std::uint32_t>(ivf.lists), record(a));
  EXPECT_EQ(outside.status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace privsearch::index

// Record digests (index/artifacts/record_digests.h): every record of a built index checks
// against its own digest and no other index's; 10,000 tampered records (a flipped bit, a changed
// byte, a record moved to another index, a truncated or padded copy, another record's bytes) are
// all refused; deletions check as the zero record; generations chain; a damaged table file is
// refused by name.
#include "index/artifacts/record_digests.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/csprng.h"
#include "index/build.h"
#include "testing/tiny_collection.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;
using testing::Collection;

TEST(RecordDigests, TenThousandTamperedRecordsAreAllRefused) {
  Collection c;
  auto o = testing::tiny_index_options(c, 128);
  ASSERT_TRUE(build_index(o, nullptr).ok());
  const auto store = *PayloadStore::open(o.out / "payloads.bin");
  const auto digests = *RecordDigests::open(o.out / "payload_digests.bin");
  ASSERT_EQ(digests.records(), store.records());
  const std::size_t rb = store.record_bytes();
  auto record = [&](std::uint64_t i) {
    return std::vector<std::uint8_t>(store.record(i), store.record(i) + rb);
  };
  for (std::uint64_t i = 0; i < store.records(); ++i) EXPECT_TRUE(digests.check(i, record(i)).ok());
  Prng prng = Prng::from_seed(Seed{52});
  std::size_t accepted = 0;
  for (int trial = 0; trial < 10000; ++trial) {
    const std::uint64_t i = prng.uniform_below(store.records());
    auto r = record(i);
    std::uint64_t claimed = i;
    switch (trial % 5) {
      case 0:
        r[prng.uniform_below(rb)] ^= static_cast<std::uint8_t>(1u << prng.uniform_below(8));
        break;
      case 1:
        r[prng.uniform_below(rb)] ^= static_cast<std::uint8_t>(1 + prng.uniform_below(255));
        break;
      case 2:
        claimed = (i + 1 + prng.uniform_below(store.records() - 1)) % store.records();
        break;
      case 3:
        r.resize(prng.uniform_below(2) == 0 ? rb - 1 : rb + 1, 0);
        break;
      default:
        r = record((i + 1) % store.records());
        break;
    }
    accepted += digests.check(claimed, r).ok() ? 1 : 0;
  }
  EXPECT_EQ(accepted, 0u);
  EXPECT_EQ(digests.check(store.records(), record(0)).code(), StatusCode::kOutOfRange);
}

TEST(RecordDigests, DeletionsAndGenerationsAndDamagedFiles) {
  Collection c;
  auto o = testing::tiny_index_options(c, 128);
  ASSERT_TRUE(build_index(o, nullptr).ok());
  auto digests = *RecordDigests::open(o.out / "payload_digests.bin");
  const auto store = *PayloadStore::open(o.out / "payloads.bin");
  digests.erase(3, store.record_bytes());
  EXPECT_TRUE(digests.check(3, std::vector<std::uint8_t>(store.record_bytes(), 0)).ok());
  // A generation must start where the table ends.
  ASSERT_TRUE(RecordDigests::write(c.dir / "g1.bin", store, store.records()).ok());
  ASSERT_TRUE(RecordDigests::write(c.dir / "g_wrong.bin", store, 5).ok());
  EXPECT_EQ(digests.append(*RecordDigests::open(c.dir / "g_wrong.bin")).code(),
            StatusCode::kDataLoss);
  ASSERT_TRUE(digests.append(*RecordDigests::open(c.dir / "g1.bin")).ok());
  EXPECT_TRUE(digests
                  .check(store.records() + 7,
                         std::span<const std::uint8_t>(store.record(7), store.record_bytes()))
                  .ok());
  // Truncated and foreign files.
  std::ofstream(c.dir / "short.bin", std::ios::binary) << "PSRD";
  EXPECT_EQ(RecordDigests::open(c.dir / "short.bin").status().code(), StatusCode::kDataLoss);
  fs::copy_file(o.out / "payload_digests.bin", c.dir / "cut.bin");
  fs::resize_file(c.dir / "cut.bin", fs::file_size(c.dir / "cut.bin") - 1);
  EXPECT_EQ(RecordDigests::open(c.dir / "cut.bin").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(RecordDigests::open(o.out / "payloads.bin").status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace privsearch::index

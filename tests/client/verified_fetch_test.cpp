// Verified private fetch (issue 52), as the malicious provider would test it: the provider's
// hintless PIR database has record j changed; the client checks every record against the signed
// index's record digests (index/artifacts/record_digests.h). Fetching j is DATA_LOSS naming it;
// any other record is served as stored; and the client's requests are the same whether or not a
// record failed: the same calls of the same sizes, before and after, with no retry.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "client/payload_fetcher.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/record_digests.h"
#include "protocol/pir_hintless_service.h"
#include "testing/lexical_index_test.h"

namespace privsearch::client {
namespace {

constexpr std::uint64_t kDamaged = 17;

class VerifiedFetchTest : public testing::LexicalIndexTest {
 protected:
  VerifiedFetchTest() : LexicalIndexTest("verified-fetch", 128) {}
  void SetUp() override {
    build();
    payloads =
        std::make_unique<index::PayloadStore>(*index::PayloadStore::open(o.out / "payloads.bin"));
    digests = std::make_shared<const index::RecordDigests>(
        *index::RecordDigests::open(o.out / "payload_digests.bin"));
    // The provider's own copy of the records, one byte of record kDamaged changed.
    const std::size_t rb = payloads->record_bytes();
    records.assign(payloads->record(0), payloads->record(0) + payloads->records() * rb);
    records[kDamaged * rb + 9] ^= 0x20;
    protocol::HintlessPirConfig hc;
    hc.params = "insecure-test-ypir-sp-d256";
    hc.allow_insecure = true;
    pir = *protocol::HintlessPirService::create({payloads->records(), rb, records.data()},
                                                manifest.version_id, hc);
    serve(config_for(manifest.version_id), [&](server::ServeOptions& so) {
      so.pir = pir.get();
      so.request_log = [this](const std::string& line) {
        std::lock_guard lock(mu);
        // Answered calls only: on a loaded machine the provider may refuse one as OVERLOADED
        // (the previous call's admission not yet released) and the transport sends it again,
        // whether or not a record failed; what must not differ is what was answered.
        if (line.find("\"rpc\":\"Pir") != std::string::npos &&
            line.find("\"outcome\":\"OK\"") != std::string::npos) {
          calls.push_back(shape_of(line));
        }
      };
    });
  }
  // A logged call without its time: rpc, outcome and sizes.
  static std::string shape_of(const std::string& line) {
    std::string out;
    for (const char* field : {"\"rpc\":", "\"bytes_in\":", "\"bytes_out\":"}) {
      const auto at = line.find(field);
      if (at != std::string::npos) out += line.substr(at, line.find(',', at) - at) + " ";
    }
    return out;
  }
  // The calls logged so far, once there are `expected` (the log line of a call may follow its
  // answer by a moment; bounded wait).
  std::vector<std::string> take_calls(std::size_t expected) {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(mu);
        if (calls.size() >= expected) return std::exchange(calls, {});
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard lock(mu);
    return std::exchange(calls, {});
  }
  std::unique_ptr<PayloadFetcher> fetcher(ProviderClient& t) {
    FetchOptions fo;
    fo.allow_insecure = true;
    fo.record_digests = digests;
    return *PayloadFetcher::create(t, manifest.version_id, fo);
  }

  std::unique_ptr<index::PayloadStore> payloads;
  std::shared_ptr<const index::RecordDigests> digests;
  std::vector<std::uint8_t> records;
  std::unique_ptr<protocol::HintlessPirService> pir;
  std::mutex mu;
  std::vector<std::string> calls;
};

TEST_F(VerifiedFetchTest, AChangedRecordIsDataLossAndChangesNoLaterRequest) {
  auto t = transport();
  auto f = fetcher(*t);
  (void)take_calls(1);  // PirInfo
  // Run A reads the damaged record among two, then two clean ones; run B reads clean ones only.
  const std::uint64_t with_damaged[] = {3, kDamaged}, clean[] = {3, 40}, after[] = {5, 6};
  const auto a = f->fetch_many(with_damaged);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(a.status().message().find("record 17"), std::string::npos) << a.status().to_string();
  const auto a_next = f->fetch_many(after);
  ASSERT_TRUE(a_next.ok()) << a_next.status().to_string();
  const auto run_a = take_calls(2);
  const auto b = f->fetch_many(clean);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ((*b)[0], *payloads->text(3));
  EXPECT_EQ((*b)[1], *payloads->text(40));
  const auto b_next = f->fetch_many(after);
  ASSERT_TRUE(b_next.ok());
  EXPECT_EQ((*b_next)[1], *payloads->text(6));
  const auto run_b = take_calls(2);
  EXPECT_EQ(run_a.size(), 2u);  // one PirQuery each, no retry
  EXPECT_EQ(run_a, run_b);      // the provider sees the same calls of the same sizes
  // One record alone, as fetch() reads it: the same refusal.
  EXPECT_EQ(f->fetch(kDamaged).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(*f->fetch(kDamaged + 1), *payloads->text(kDamaged + 1));
}

// Without the digests (an index built before them) the same fetch returns the changed record:
// what the check adds.
TEST_F(VerifiedFetchTest, WithoutDigestsTheChangedRecordWouldBeShown) {
  auto t = transport();
  FetchOptions fo;
  fo.allow_insecure = true;
  auto f = *PayloadFetcher::create(*t, manifest.version_id, fo);
  const auto text = f->fetch(kDamaged);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_NE(*text, *payloads->text(kDamaged));
}

}  // namespace
}  // namespace privsearch::client

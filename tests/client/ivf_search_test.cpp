// Searching through the IVF index (index/candidates/ivf.h): an in-process provider over TLS serves
// the list segments (FetchLists), the client routes, fetches what it has not cached, and scans.
// Probing every list gives the flat client's results; fewer lists give the flat scan restricted to
// their documents; the memory and disk caches spare the provider repeated fetches; every refusal of
// FetchLists and of a damaged segment is typed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

#include "ckks/param_sets.h"
#include "client/search_client.h"
#include "client/segment_cache.h"
#include "core/bytes.h"
#include "index/artifacts/exact_store.h"
#include "index/build.h"
#include "index/candidates/ivf.h"
#include "protocol/ivf_list_pir.h"
#include "protocol/pir_service.h"
#include "protocol/provider_core.h"
#include "scoring/build.h"
#include "server/provider_server.h"
#include "testing/tiny_collection.h"
#include "testing/tls_test_server.h"

namespace privsearch::client {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kLists = 8;

class IvfSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    o = testing::tiny_index_options(c, 256);
    o.doc_vectors.clear();  // the built-in encoder: text queries
    o.ivf = true;
    o.ivf_lists = kLists;
    scoring::ScoringBuildOptions so;
    so.cluster_rows = 64;
    so.cluster_dim = 8;
    o.extra_artifacts = scoring::scoring_artifacts_for_build(so);
    manifest = *index::build_index(o, nullptr);
    store = std::make_unique<index::ExactStore>(*index::ExactStore::open(o.out / "exact.store"));
    ivf = *index::load_ivf(o.out / index::kIvfFile);
    start();
  }
  void start(protocol::ProviderLimits limits = {}, bool with_lists = true) {
    tls.stop();
    protocol::ProviderConfig config(*ckks::Params::create(*ckks::preset_literal("rerank-n8192")));
    config.params_name = "rerank-n8192";
    config.artifact_version = manifest.version_id;
    config.limits = limits;
    config.scoring_matrix = std::make_shared<const scoring::ScoringMatrix>(
        *scoring::load_matrix(o.out / scoring::kMatrixFile));
    if (with_lists) {
      config.ivf_lists = std::make_shared<const index::IvfListStore>(
          *index::IvfListStore::open(o.out / index::kIvfListsFile, ivf));
    }
    core = *protocol::ProviderCore::create(std::move(config), store.get());
    tls.start(*core);
  }
  void TearDown() override { tls.stop(); }

  std::unique_ptr<SearchClient> open_client(CandidateIndex which, bool disk = true,
                                            const fs::path& dir = {}) {
    OpenOptions oo;
    oo.candidates = which;
    oo.list_cache = c.dir / "cache";
    oo.disk_cache = disk;
    auto sc = SearchClient::open(dir.empty() ? o.out : dir, tls.transport(), oo);
    EXPECT_TRUE(sc.ok()) << sc.status().message();
    return std::move(sc).value();
  }

  testing::Collection c{"ivf-search"};
  index::BuildOptions o;
  index::Manifest manifest;
  std::unique_ptr<index::ExactStore> store;
  index::IvfIndex ivf;
  std::unique_ptr<protocol::ProviderCore> core;
  testing::TlsTestServer tls;
};

TEST_F(IvfSearchTest, ProbingEveryListGivesTheFlatClientsResults) {
  auto flat = open_client(CandidateIndex::kFlat);
  auto lists = open_client(CandidateIndex::kIvf);
  EXPECT_FALSE(flat->uses_ivf());
  EXPECT_TRUE(lists->uses_ivf());
  SearchOptions so;
  so.candidates = 20;
  so.nprobe = kLists;
  for (const char* q : {"document 7", "text of document 123", "title 42"}) {
    const auto a = *flat->search(client::Query::text(q), so);
    const auto b = *lists->search(client::Query::text(q), so);
    EXPECT_EQ(a.candidates, b.candidates) << q;
    ASSERT_EQ(a.hits.size(), b.hits.size());
    for (std::size_t i = 0; i < a.hits.size(); ++i) EXPECT_EQ(a.hits[i].doc, b.hits[i].doc);
    EXPECT_TRUE(a.probed_lists.empty());
    EXPECT_EQ(b.probed_lists.size(), kLists);
  }
}

TEST_F(IvfSearchTest, FewListsRestrictTheCandidatesAndAreFetchedOnce) {
  auto sc = open_client(CandidateIndex::kIvf, /*disk=*/false);
  SearchOptions so;
  so.candidates = 10;
  so.nprobe = 2;
  const auto first = *sc->search(client::Query::text("text of document 17"), so);
  ASSERT_EQ(first.probed_lists.size(), 2u);
  std::set<std::uint32_t> in_probed;
  std::uint64_t bytes = 0;
  for (const auto l : first.probed_lists) {
    bytes += ivf.directory[l].bytes;
    const auto seg = *core->config().ivf_lists->segment(l);
    const auto list = *index::decode_list(ivf, l, byte_view(seg));
    in_probed.insert(list.ids.begin(), list.ids.end());
  }
  for (const auto d : first.candidates) EXPECT_EQ(in_probed.count(d), 1u) << d;
  EXPECT_EQ(first.timing[Stage::kCandidates].items, 2u);
  EXPECT_EQ(first.timing[Stage::kListFetch].items, 2u);
  EXPECT_EQ(first.timing[Stage::kListFetch].bytes_received, bytes);
  // The same lists again: from memory, nothing fetched.
  const auto again = *sc->search(client::Query::text("text of document 17"), so);
  EXPECT_EQ(again.timing[Stage::kListFetch].items, 0u);
  EXPECT_EQ(again.candidates, first.candidates);
}

TEST_F(IvfSearchTest, TheDiskCacheOutlivesTheClientAndHealsDamagedFiles) {
  SearchOptions so;
  so.nprobe = 3;
  std::vector<std::uint32_t> probed;
  {
    auto sc = open_client(CandidateIndex::kIvf);
    const auto r = *sc->search(client::Query::text("title 250"), so);
    probed = r.probed_lists;
    EXPECT_EQ(r.timing[Stage::kListFetch].items, 3u);
  }
  auto sc = open_client(CandidateIndex::kIvf);
  EXPECT_EQ(sc->search(client::Query::text("title 250"), so)->timing[Stage::kListFetch].items, 0u);
  // A damaged cache file is a miss: fetched again and replaced.
  const auto file = c.dir / "cache" / (to_hex(ivf.directory[probed[0]].sha256) + ".seg");
  ASSERT_TRUE(fs::exists(file));
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put('\x55');
  }
  auto fresh = open_client(CandidateIndex::kIvf);
  const auto r = *fresh->search(client::Query::text("title 250"), so);
  EXPECT_EQ(r.timing[Stage::kListFetch].items, 1u);
  auto cache = *SegmentCache::open(c.dir / "cache", 1 << 30);
  EXPECT_TRUE(cache.get(ivf.directory[probed[0]].sha256).has_value());
}

TEST_F(IvfSearchTest, AThinClientDirectoryOpensOnTheIvfIndexOnly) {
  const auto thin = c.dir / "thin";
  fs::create_directories(thin);
  for (const char* f : {"manifest.json", "projection.bin", "encoder.bin", index::kIvfFile}) {
    fs::copy_file(o.out / f, thin / f);
  }
  auto sc = open_client(CandidateIndex::kAuto, true, thin);
  EXPECT_TRUE(sc->uses_ivf());
  SearchOptions so;
  so.nprobe = 2;
  EXPECT_TRUE(sc->search(client::Query::text("document 3"), so).ok());
  OpenOptions oo;
  oo.candidates = CandidateIndex::kFlat;
  const auto flat = SearchClient::open(thin, tls.transport(), oo);
  EXPECT_EQ(flat.status().code(), StatusCode::kNotFound);
  EXPECT_NE(flat.status().message().find("pq.bin"), std::string::npos) << flat.status().message();
  // A damaged ivf.bin is refused at open (its hash is in the manifest).
  {
    std::fstream f(thin / index::kIvfFile, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x01');
  }
  EXPECT_EQ(SearchClient::open(thin, tls.transport(), OpenOptions{}).status().code(),
            StatusCode::kDataLoss);
}

TEST_F(IvfSearchTest, AProviderWithoutListsRefusesByName) {
  start({}, /*with_lists=*/false);
  auto sc = open_client(CandidateIndex::kIvf, false);
  const auto r = sc->search(client::Query::text("document 3"), SearchOptions{});
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("IVF"), std::string::npos) << r.status().message();
}

TEST_F(IvfSearchTest, ListsChangedOnTheProvidersDiskAreNeverServed) {
  auto sc = open_client(CandidateIndex::kIvf, false);
  {
    std::fstream f(o.out / index::kIvfListsFile, std::ios::in | std::ios::out | std::ios::binary);
    for (std::size_t l = 0; l < kLists; ++l) {
      f.seekp(static_cast<std::streamoff>(ivf.directory[l].offset + 30));
      f.put('\x33');
    }
  }
  const auto r = sc->search(client::Query::text("document 3"), SearchOptions{});
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("DATA_LOSS"), std::string::npos) << r.status().message();
}

// Random FetchLists requests (lists in and out of range, repeats, generation fields that fit
// or do not, wrong versions): every answer is either a typed refusal or one segment per list,
// each the stored bytes; never INTERNAL.
TEST_F(IvfSearchTest, RandomListRequestsGetSegmentsOrTypedRefusals) {
  Prng p = testing::test_prng(91);
  std::size_t served = 0, refused = 0;
  for (int i = 0; i < 3000; ++i) {
    v1::FetchListsRequest r;
    r.set_artifact_version(p.uniform_below(20) == 0 ? "stale" : manifest.version_id);
    const std::size_t n = p.uniform_below(70);
    const bool mixed = p.uniform_below(2) == 0;
    if (!mixed && p.uniform_below(8) == 0)
      r.set_generation(static_cast<std::uint32_t>(p.uniform_below(3)));
    for (std::size_t j = 0; j < n; ++j) {
      r.add_lists(static_cast<std::uint32_t>(p.uniform_below(kLists + 2)));
      if (mixed && p.uniform_below(30) != 0) {
        r.add_generations(static_cast<std::uint32_t>(p.uniform_below(8) == 0 ? 1 : 0));
      }
    }
    const auto got = core->fetch_lists(r);
    if (got.has_error()) {
      ++refused;
      EXPECT_NE(got.error().code(), v1::INTERNAL) << got.error().message();
      EXPECT_EQ(got.segments_size(), 0);
      continue;
    }
    ++served;
    ASSERT_EQ(got.segments_size(), r.lists_size());
    for (int j = 0; j < r.lists_size(); ++j) {
      EXPECT_EQ(got.segments(j), *core->config().ivf_lists->segment(r.lists(j)));
    }
  }
  EXPECT_GT(served, 0u);
  EXPECT_GT(refused, 0u);
}

TEST_F(IvfSearchTest, FetchListsRefusalsAreTyped) {
  auto request = [&](std::vector<std::uint32_t> lists, std::string version = "") {
    v1::FetchListsRequest r;
    r.set_artifact_version(version.empty() ? manifest.version_id : version);
    for (const auto l : lists) r.add_lists(l);
    return core->fetch_lists(r);
  };
  const auto ok = request({3, 1});
  ASSERT_FALSE(ok.has_error()) << ok.error().message();
  ASSERT_EQ(ok.segments_size(), 2);
  EXPECT_EQ(ok.segments(0), *core->config().ivf_lists->segment(3));
  EXPECT_EQ(ok.segments(1), *core->config().ivf_lists->segment(1));
  EXPECT_EQ(request({1}, "other").error().code(), v1::WRONG_ARTIFACT_VERSION);
  EXPECT_EQ(request({}).error().code(), v1::MALFORMED_REQUEST);
  EXPECT_EQ(request({kLists}).error().code(), v1::MALFORMED_REQUEST);
  EXPECT_EQ(request({2, 2}).error().code(), v1::MALFORMED_REQUEST);
  std::vector<std::uint32_t> many(65, 0);
  for (std::uint32_t i = 0; i < 65; ++i) many[i] = i;
  EXPECT_EQ(request(many).error().code(), v1::MALFORMED_REQUEST);
  protocol::ProviderLimits small;
  small.max_message_bytes = 2048;
  start(small);
  const auto big = request({0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(big.error().code(), v1::MESSAGE_TOO_LARGE);
  // The client splits its probe to the published limit and still gets every list.
  auto transport = tls.transport();
  const auto info = *transport->server_info();
  ListSourceLimits limits;
  limits.max_message_bytes = info.limits().max_message_bytes();
  limits.max_lists_per_fetch = info.limits().max_lists_per_fetch();
  EXPECT_EQ(limits.max_lists_per_fetch, 64u);
  IvfListSource source(&ivf, manifest.version_id, transport.get(), std::nullopt, limits);
  ListFetchStats stats;
  std::vector<std::uint32_t> all(kLists);
  for (std::uint32_t l = 0; l < kLists; ++l) all[l] = kLists - 1 - l;
  const auto got = source.get(all, stats);
  ASSERT_TRUE(got.ok()) << got.status().message();
  for (std::uint32_t l = 0; l < kLists; ++l) EXPECT_EQ((*got)[l]->list, all[l]);
  EXPECT_EQ(stats.fetched, kLists);
  EXPECT_GT(stats.requests, 1u);
  start({}, false);
  EXPECT_EQ(request({1}).error().code(), v1::IVF_UNAVAILABLE);
  EXPECT_EQ(core->server_info().ivf_lists(), 0u);
}

TEST_F(IvfSearchTest, AccessPrivateSearchTakesItsCandidatesFromTheLists) {
  auto sc = open_client(CandidateIndex::kIvf, false);
  ASSERT_TRUE(sc->has_private_scoring());
  auto po = access_private_search();
  po.clusters = 2;
  po.nprobe = 2;
  const auto r = sc->search(Query::text("text of document 17"), po);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->probed_lists.size(), 2u);
  EXPECT_EQ(r->timing[Stage::kListFetch].items, 2u);
  EXPECT_EQ(r->private_clusters.size(), 2u);
  EXPECT_FALSE(r->hits.empty());
}

}  // namespace
}  // namespace privsearch::client

namespace privsearch::client {
namespace {

// No selective-failure channel in private list fetch (docs/SECURITY.md): the provider damages
// the record of the first list fetched; the client still sends every query of the batch (all
// nprobe lists), then fails with DATA_LOSS. Before, the batch stopped at the damaged list, so
// the number of queries the provider saw told it which list the client was reading first.
// The provider's list PIR database with list `damaged`'s first segment changed, served beside
// the core; its PirQuery calls counted in `pir_queries`. Returns a client of it (private lists,
// no disk cache).
struct DamagedLists {
  std::unique_ptr<protocol::PirService> pir;
  std::mutex mu;
  std::size_t pir_queries = 0;
  std::size_t queries() {
    std::lock_guard lock(mu);
    return pir_queries;
  }
};

class DamagedListsTest : public IvfSearchTest {
 protected:
  std::unique_ptr<SearchClient> serve_damaged_lists(std::size_t damaged, DamagedLists& d);
};

std::unique_ptr<SearchClient> DamagedListsTest::serve_damaged_lists(std::size_t damaged,
                                                                    DamagedLists& d) {
  auto& t = *this;
  auto table = *protocol::ivf_list_pir_table(*t.core->config().ivf_lists);
  table.bytes[damaged * table.record_bytes + 7] ^= 0x40;
  protocol::PirConfig pc;
  pc.lwe_params = "insecure-test-n64-binary";
  pc.paillier_bits = 512;
  pc.allow_insecure = true;
  pc.ready_per_client = 2 * kLists;
  d.pir = *protocol::PirService::create(table.view(), t.manifest.version_id, pc);
  t.tls.start(*t.core, [&](server::ServeOptions& so) {
    so.pir_lists = d.pir.get();
    so.request_log = [&d](const std::string& line) {
      std::lock_guard lock(d.mu);
      if (line.find("\"rpc\":\"PirQuery\"") != std::string::npos) ++d.pir_queries;
    };
  });
  OpenOptions oo;
  oo.candidates = CandidateIndex::kIvf;
  oo.disk_cache = false;
  oo.private_lists = true;
  oo.allow_insecure_pir = true;
  auto sc = SearchClient::open(t.o.out, t.tls.transport(), oo);
  EXPECT_TRUE(sc.ok()) << sc.status().to_string();
  return sc.ok() ? std::move(sc).value() : nullptr;
}

TEST_F(DamagedListsTest, ADamagedPrivateListDoesNotStopTheBatch) {
  DamagedLists d;
  auto sc = serve_damaged_lists(0, d);  // list 0: fetched first
  ASSERT_NE(sc, nullptr);
  SearchOptions search;
  search.nprobe = kLists;  // every list: list 0 is among them, and is fetched first
  const auto r = sc->search(client::Query::text("document 5"), search);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status().to_string();
  EXPECT_EQ(d.queries(), kLists);  // the whole batch, not 1
}

// Nothing of a damaged batch is kept: the lists before the damaged one were cached, so the
// next search's query count (1 instead of all) told the provider the damaged list's rank among
// the probed ones (issue 52). Every record is checked before any is cached now.
TEST_F(DamagedListsTest, ADamagedPrivateBatchCachesNothing) {
  DamagedLists d;
  auto sc = serve_damaged_lists(kLists - 1, d);  // fetched last
  ASSERT_NE(sc, nullptr);
  SearchOptions search;
  search.nprobe = kLists;
  for (int round = 1; round <= 2; ++round) {
    const auto r = sc->search(client::Query::text("document 5"), search);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << r.status().to_string();
    EXPECT_EQ(d.queries(), round * kLists) << "round " << round;
  }
}

}  // namespace
}  // namespace privsearch::client

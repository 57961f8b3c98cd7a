// IVF lists fetched by ZipPIR through the real provider process (protocol/ivf_list_pir.h): with
// --pir-lists a client opened with private_lists gets the candidates a plain client gets while the
// provider sees no FetchLists at all (only PIR calls, one query per list not cached, or per probed
// list with constant_list_fetches); after an update and SIGHUP the lists' PIR database is rebuilt
// and a fresh private client finds a new document through its list's added segment. A provider
// without
// --pir-lists refuses the mode by name when the client opens.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "client/provider_client.h"
#include "client/search_client.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/append.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/client_files.h"
#include "index/artifacts/manifest_signature.h"
#include "index/candidates/ivf.h"
#include "server/process_test_util.h"
#include "testing/provider_wait.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {

using client::Stage;
namespace {

namespace fs = std::filesystem;

using testing::count_in;
using testing::ivf_index;
using testing::kAnsweredPirQuery;

std::unique_ptr<tools::SpawnedProvider> spawn_with_zippir(const testing::Collection& c,
                                                          const fs::path& index,
                                                          std::vector<std::string> args) {
  return testing::spawn_logged(
      c, index, {"--threads", "2", "--pir-test-params", "--pir-backend", "zippir"}, args);
}

TEST(PrivateListsProcess, ListsByPirGiveThePlainCandidatesAndFollowAnUpdate) {
  testing::Collection c("private-lists");
  const auto ix = testing::signed_ivf_index(c);
  const auto& o = ix.build;
  const auto& thin = ix.thin;

  const auto provider = spawn_with_zippir(c, o.out, {"--pir-lists", "--pir-lists-ready", "8"});
  ASSERT_NE(provider, nullptr);
  const auto connect = [&] {
    return *client::ProviderClient::connect(provider->connect_options());
  };
  EXPECT_TRUE(connect()->server_info()->limits().pir_ivf_lists());
  const auto private_options = testing::ivf_open_options(true);
  auto plain = *client::SearchClient::open(thin, connect(), testing::ivf_open_options(false));
  auto opened = client::SearchClient::open(thin, connect(), private_options);
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  auto hidden = std::move(opened).value();

  client::SearchOptions so;
  so.candidates = 20;
  so.nprobe = 3;
  const std::vector<std::size_t> rows = {17, 250, 17};
  std::vector<client::SearchResult> wanted;
  for (const std::size_t row : rows) {
    const auto want =
        plain->search(client::Query::vector(std::span(c.vectors.row(row), c.vectors.cols)), so);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    wanted.push_back(*want);
  }
  const auto fetches_seen = count_in(c.dir / "provider.log", "\"rpc\":\"FetchLists\"");
  EXPECT_GT(fetches_seen, 0u);  // the plain client's fetches are in the request log
  std::size_t pir_fetches = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto got = hidden->search(
        client::Query::vector(std::span(c.vectors.row(rows[i]), c.vectors.cols)), so);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(got->candidates, wanted[i].candidates) << rows[i];
    EXPECT_EQ(got->probed_lists, wanted[i].probed_lists) << rows[i];
    ASSERT_FALSE(got->hits.empty());
    EXPECT_EQ(got->hits.front().doc, wanted[i].hits.front().doc) << rows[i];
    // One PIR fetch per list not yet in memory (none for the repeated query).
    EXPECT_EQ(got->timing[Stage::kListPir].items, got->timing[Stage::kListFetch].items) << rows[i];
    if (i == 0) {
      EXPECT_EQ(got->timing[Stage::kListPir].items, so.nprobe);
    }
    if (i == 2) {
      EXPECT_EQ(got->timing[Stage::kListPir].items, 0u);
    }
    if (got->timing[Stage::kListFetch].items > 0) {
      EXPECT_GT(got->timing[Stage::kListPir].bytes(), 0u);
    }
    pir_fetches += got->timing[Stage::kListPir].items;
  }
  // The private client's searches made no FetchLists call: the provider saw PIR queries only.
  const auto plain_fetches = count_in(c.dir / "provider.log", "\"rpc\":\"FetchLists\"");
  EXPECT_EQ(plain_fetches, fetches_seen);
  EXPECT_EQ(count_in(c.dir / "provider.log", kAnsweredPirQuery), pir_fetches);
  // Constant count: a repeated search fetches its nprobe lists again (the provider sees the
  // same number of queries whatever the cache holds) and uses none of them.
  auto constant_options = private_options;
  constant_options.constant_list_fetches = true;
  auto constant = *client::SearchClient::open(thin, connect(), constant_options);
  for (int round = 0; round < 2; ++round) {
    const auto got =
        constant->search(client::Query::vector(std::span(c.vectors.row(17), c.vectors.cols)), so);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(got->candidates, wanted[0].candidates);
    EXPECT_EQ(got->timing[Stage::kListPir].items, so.nprobe) << round;
    EXPECT_EQ(got->timing[Stage::kListFetch].items, round == 0 ? so.nprobe : 0u) << round;
  }
  EXPECT_EQ(count_in(c.dir / "provider.log", kAnsweredPirQuery), pir_fetches + 2 * so.nprobe);

  // An update (20 documents appended), SIGHUP: the lists' PIR database is rebuilt with the new
  // segments; a fresh private client finds an appended document by its own vector.
  const auto in = testing::appended_documents(400, 20);
  const auto update = index::append_to_index(o.out, in, &ix.key);
  ASSERT_TRUE(update.ok()) << update.status().to_string();
  ASSERT_TRUE(provider->signal(SIGHUP));
  auto cl = connect();
  ASSERT_TRUE(testing::wait_for_version(*cl, update->manifest.version_id));
  ix.refresh_thin();
  auto fresh = client::SearchClient::open(thin, connect(), private_options);
  ASSERT_TRUE(fresh.ok()) << fresh.status().to_string();
  so.nprobe = 8;
  const std::uint64_t first_new = cl->server_info()->documents() - 20;
  for (const std::size_t i : {3u, 11u}) {
    const auto r =
        (*fresh)->search(client::Query::vector(std::span(in.vectors.row(i), c.vectors.cols)), so);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_NE(std::find(r->candidates.begin(), r->candidates.end(), first_new + i),
              r->candidates.end())
        << i;
  }
  EXPECT_EQ(count_in(c.dir / "provider.log", "\"rpc\":\"FetchLists\""), plain_fetches);
  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(count_in(c.dir / "provider.log", "reload: PIR of the IVF lists"), 1u);
  // The appended segments fit the records' 4 KiB slack: the lists' database kept its shape and
  // its hint was updated over the changed lists' columns only, not recomputed.
  const auto log_bytes = *index::read_file_bytes(c.dir / "provider.log");
  const std::string log(log_bytes.begin(), log_bytes.end());
  const auto reload = log.substr(log.find("reload: PIR of the IVF lists"));
  EXPECT_NE(reload.substr(0, reload.find('\n')).find("updated over its"), std::string::npos)
      << reload.substr(0, reload.find('\n'));
}

TEST(PrivateListsProcess, AProviderWithoutPirListsRefusesTheModeByName) {
  testing::Collection c("private-lists-off");
  const auto o = ivf_index(c);
  const auto provider = spawn_with_zippir(c, o.out, {"--no-pir"});
  ASSERT_NE(provider, nullptr);
  auto oo = testing::ivf_open_options(true);
  const auto refused = client::SearchClient::open(
      o.out, *client::ProviderClient::connect(provider->connect_options()), oo);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("--pir-lists"), std::string::npos)
      << refused.status().to_string();
  // Asked anyway, the PIR calls on the lists' database are PIR_UNAVAILABLE naming the flag.
  v1::PirInfo info = *(*client::ProviderClient::connect(provider->connect_options()))
                          ->pir_info(v1::PIR_DATABASE_IVF_LISTS);
  EXPECT_EQ(info.error().code(), v1::PIR_UNAVAILABLE);
  EXPECT_NE(info.error().message().find("--pir-lists"), std::string::npos);
  // A flat client asking for private lists is refused too.
  oo.candidates = client::CandidateIndex::kFlat;
  const auto flat = client::SearchClient::open(
      o.out, *client::ProviderClient::connect(provider->connect_options()), oo);
  ASSERT_FALSE(flat.ok());
  EXPECT_EQ(flat.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(flat.status().message().find("IVF index"), std::string::npos)
      << flat.status().to_string();
  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// --pir-lists where it cannot work stops the provider at start, naming the flag: an index
// without IVF lists, a PIR row shard. (Nothing listens: the port file is never written.)
TEST(PrivateListsProcess, PirListsWhereItCannotWorkStopsTheStartByName) {
  testing::Collection c("private-lists-refused");
  auto flat = testing::tiny_index_options(c, 128);
  flat.out = c.dir / "flat";
  ASSERT_TRUE(index::build_index(flat, nullptr).ok());
  const auto o = ivf_index(c);
  const std::vector<std::pair<fs::path, std::vector<std::string>>> cases = {
      {flat.out, {"--pir-lists"}},
      {o.out, {"--pir-lists", "--pir-shard", "0/3"}},
  };
  for (const auto& [dir, args] : cases) {
    tools::ProviderLaunch launch;
    launch.binary = PRIVSEARCH_PROVIDER_BIN;
    launch.index_dir = dir;
    launch.work_dir = c.dir / dir.filename();
    launch.extra_args = {"--pir-test-params", "--pir-backend", "zippir"};
    launch.extra_args.insert(launch.extra_args.end(), args.begin(), args.end());
    launch.start_timeout = std::chrono::seconds(60);
    launch.log_file = c.dir / (dir.filename().string() + ".log");
    EXPECT_FALSE(tools::SpawnedProvider::start(launch).ok()) << dir;
    EXPECT_EQ(count_in(launch.log_file, "INVALID_ARGUMENT: --pir-lists"), 1u) << dir;
  }
}

}  // namespace
}  // namespace privsearch

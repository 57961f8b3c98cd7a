// An update through the real provider process (index/artifacts/append.h): `privsearch update`'s
// library call appends documents and deletes one in a signed next version; SIGHUP makes the
// provider serve it (opening only the new segments) while a client still on the old version keeps
// its answers. The client's directory is brought up to date by copying only the new files; its
// searches then find the new documents through the new list segments, never the deleted one, which
// the provider also refuses to score and whose PIR record is empty. FetchLists refusals for update
// generations are typed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/search_client.h"
#include "core/bytes.h"
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

bool has_doc(const client::SearchResult& r, std::uint64_t doc) {
  for (const auto& h : r.hits) {
    if (h.doc == doc) return true;
  }
  return std::find(r.candidates.begin(), r.candidates.end(), doc) != r.candidates.end();
}

TEST(UpdateProcess, AnUpdateIsServedAfterSighupAndClientsCopyOnlyTheNewFiles) {
  testing::Collection c("provider-update");
  const auto o = testing::ivf_index(c);
  const auto key = *index::Ed25519SigningKey::generate();
  const auto v1 = *index::sign_index(o.out, key);
  const auto thin = c.dir / "thin";
  const auto first_copy =
      *index::copy_client_files(o.out, thin, {"projection", index::kIvfArtifact});

  tools::ProviderLaunch launch;
  launch.binary = PRIVSEARCH_PROVIDER_BIN;
  launch.index_dir = o.out;
  launch.work_dir = c.dir;
  launch.extra_args = {"--threads", "2", "--pir-test-params", "--pir-backend", "zippir"};
  launch.start_timeout = std::chrono::seconds(60);
  launch.log_file = c.dir / "provider.log";
  auto started = tools::SpawnedProvider::start(launch);
  ASSERT_TRUE(started.ok()) << started.status().to_string();
  const auto provider = std::move(started).value();
  const auto connect = [&] {
    return *client::ProviderClient::connect(provider->connect_options());
  };
  const auto oo = testing::ivf_open_options(false);
  auto stale = *client::SearchClient::open(thin, connect(), oo);
  client::SearchOptions so;
  so.candidates = 20;
  so.nprobe = 8;

  // The update: 20 documents appended (rows 400..419), document 17 deleted.
  auto in = testing::appended_documents(400, 20, 1234);
  in.deleted = {17};
  const auto update = index::append_to_index(o.out, in, &key);
  ASSERT_TRUE(update.ok()) << update.status().to_string();
  const auto& v2 = update->manifest;
  EXPECT_EQ(v2.parent_version, v1.version_id);
  ASSERT_TRUE(provider->signal(SIGHUP));
  auto cl = connect();
  ASSERT_TRUE(testing::wait_for_version(*cl, v2.version_id));
  const auto info = *cl->server_info();
  ASSERT_EQ(info.artifact_version(), v2.version_id);
  EXPECT_EQ(info.documents(), 420u);

  // The stale client keeps getting the old version's answers (document 17 included).
  const std::span<const float> q17(c.vectors.row(17), c.vectors.cols);
  const auto old_answer = stale->search(client::Query::vector(q17), so);
  ASSERT_TRUE(old_answer.ok()) << old_answer.status().to_string();
  EXPECT_TRUE(has_doc(*old_answer, 17));

  // The client's update copies only the new files: far less than its first download.
  const auto update_copy =
      *index::copy_client_files(o.out, thin, {"projection", index::kIvfArtifact});
  EXPECT_LT(update_copy * 4, first_copy);
  EXPECT_TRUE(fs::exists(thin / "ivf_delta.1.bin"));
  EXPECT_FALSE(fs::exists(thin / "ivf_lists.1.bin"));
  auto fresh = *client::SearchClient::open(thin, connect(), oo);
  EXPECT_EQ(fresh->artifact_version(), v2.version_id);
  const auto new_answer = fresh->search(client::Query::vector(q17), so);
  ASSERT_TRUE(new_answer.ok()) << new_answer.status().to_string();
  EXPECT_FALSE(has_doc(*new_answer, 17));
  EXPECT_GT(new_answer->timing[Stage::kListCheck].items,
            new_answer->timing[Stage::kCandidates].items);
  for (const std::size_t d : {403u, 415u}) {  // a new document is found by its own vector
    const auto r = fresh->search(client::Query::vector(std::span(in.vectors.row(d - 400), 32)), so);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_TRUE(has_doc(*r, d)) << d;
    const auto r_old =
        stale->search(client::Query::vector(std::span(in.vectors.row(d - 400), 32)), so);
    ASSERT_TRUE(r_old.ok());
    for (const auto id : r_old->candidates) EXPECT_LT(id, 400u);  // the old version has none
  }
  // Scoring the deleted document under the new version is refused by name.
  const std::vector<double> z(16, 0.25);
  const std::vector<std::uint32_t> deleted_id{17};
  auto chosen = so;
  chosen.candidate_ids = deleted_id;
  const auto scored = fresh->search(client::Query::projected(z), chosen);
  EXPECT_FALSE(scored.ok());
  EXPECT_NE(scored.status().message().find("deleted"), std::string::npos)
      << scored.status().to_string();

  // Update generations in FetchLists: one the index does not have, a list that gained nothing.
  v1::FetchListsRequest fl;
  fl.set_artifact_version(v2.version_id);
  fl.set_generation(2);
  fl.add_lists(0);
  EXPECT_EQ(cl->fetch_lists(fl)->error().code(), v1::MALFORMED_REQUEST);
  auto ivf = *index::load_ivf(o.out / index::kIvfFile);
  ASSERT_TRUE(
      index::add_ivf_delta(ivf, *index::read_file_bytes(o.out / "ivf_delta.1.bin"), "d").ok());
  for (std::uint32_t l = 0; l < ivf.lists; ++l) {
    fl.set_generation(1);
    fl.clear_lists();
    fl.add_lists(l);
    const auto got = *cl->fetch_lists(fl);
    if (ivf.ref(l, 1).bytes == 0) {
      EXPECT_EQ(got.error().code(), v1::MALFORMED_REQUEST) << l;
    } else {
      ASSERT_EQ(got.segments_size(), 1) << l;
      EXPECT_TRUE(index::decode_list(ivf, l, byte_view(got.segments(0)), 1).ok()) << l;
    }
  }
  // One request for segments of both generations (the provider says it takes a generation per
  // list): the same bytes as per-generation requests; typed refusals for generations that do
  // not line up with the lists, an unknown generation, a segment named twice, a list without
  // additions in the generation named.
  EXPECT_TRUE(info.limits().fetch_mixed_generations());
  std::uint32_t grown = 0;
  while (ivf.ref(grown, 1).bytes == 0) ++grown;
  const std::uint32_t other = (grown + 1) % static_cast<std::uint32_t>(ivf.lists);
  v1::FetchListsRequest mixed;
  mixed.set_artifact_version(v2.version_id);
  for (const auto& [list, g] : {std::pair{grown, 0u}, {grown, 1u}, {other, 0u}}) {
    mixed.add_lists(list);
    mixed.add_generations(g);
  }
  const auto both = *cl->fetch_lists(mixed);
  ASSERT_FALSE(both.has_error()) << both.error().message();
  ASSERT_EQ(both.segments_size(), 3);
  for (int i = 0; i < 3; ++i) {
    v1::FetchListsRequest one;
    one.set_artifact_version(v2.version_id);
    one.set_generation(mixed.generations(i));
    one.add_lists(mixed.lists(i));
    EXPECT_EQ(both.segments(i), cl->fetch_lists(one)->segments(0)) << i;
  }
  auto refused = [&](auto change) {
    v1::FetchListsRequest bad = mixed;
    change(bad);
    return cl->fetch_lists(bad)->error().code();
  };
  EXPECT_EQ(refused([](auto& r) { r.add_lists(1); }),
            v1::MALFORMED_REQUEST);  // 4 lists, 3 generations
  EXPECT_EQ(refused([](auto& r) { r.set_generations(2, 2); }), v1::MALFORMED_REQUEST);  // unknown
  EXPECT_EQ(refused([&](auto& r) {
              r.set_lists(1, grown);
              r.set_generations(1, 0);
            }),
            v1::MALFORMED_REQUEST);  // (grown, 0) twice
  for (std::uint32_t l = 0; l < ivf.lists; ++l) {
    if (ivf.ref(l, 1).bytes != 0) continue;
    EXPECT_EQ(refused([&](auto& r) {
                r.set_lists(2, l);
                r.set_generations(2, 1);
              }),
              v1::MALFORMED_REQUEST);  // list l gained nothing in generation 1
    break;
  }

  // PIR over every generation's payloads: a new document's text; the deleted one's is empty.
  client::FetchOptions fo;
  fo.allow_insecure = true;
  auto fetcher = *client::PayloadFetcher::create(*cl, v2.version_id, fo);
  const auto added = fetcher->fetch(407);
  ASSERT_TRUE(added.ok()) << added.status().to_string();
  EXPECT_NE(added->find("added text 407"), std::string::npos) << *added;
  const auto gone = fetcher->fetch(17);
  ASSERT_TRUE(gone.ok()) << gone.status().to_string();
  EXPECT_EQ(*gone, "");
  const int status = provider->stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // The reload opened only the new row segment and updated the PIR hint by columns.
  const auto log_bytes = *index::read_file_bytes(c.dir / "provider.log");
  const std::string log(log_bytes.begin(), log_bytes.end());
  EXPECT_NE(log.find("2 row segments (1 reused), 1 documents deleted"), std::string::npos) << log;
  EXPECT_NE(log.find("hint H = D A updated over its 21 changed columns"), std::string::npos) << log;
}

}  // namespace
}  // namespace privsearch

// The search command (tools/commands/search.cpp) as a user runs it, against a provider process:
// in a batch, a query with nothing to search (no word the index knows) is reported for itself,
// as a line or as a JSON object with "error", the other queries are answered, and the exit
// status (3) says that some were skipped. It used to abort the rest of the batch. Results name
// documents by their ids, and an update deletes by id.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "harness/spawned_provider.h"
#include "index/build.h"
#include "process_test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {
namespace {

// The command's stdout and exit status.
std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return {out, -1};
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int st = ::pclose(p);
  return {out, WIFEXITED(st) ? WEXITSTATUS(st) : -1};
}

// The tiny collection's index with the built-in lexical encoder (text queries), in c.dir/index.
index::BuildOptions tiny_index(const testing::Collection& c) {
  index::BuildOptions o;
  o.collection = c.dir;
  o.out = c.dir / "index";
  o.dim = 16;
  o.pq_m = 4;
  o.record_bytes = 256;
  return o;
}

TEST(SearchCommand, AQueryWithNoKnownWordDoesNotStopTheBatch) {
  testing::Collection c;
  const auto o = tiny_index(c);
  ASSERT_TRUE(index::build_index(o, nullptr).ok());
  auto provider = testing::spawn_logged(c, o.out, {"--no-pir"}, {});
  ASSERT_NE(provider, nullptr);
  const std::string base = std::string(PRIVSEARCH_CLI_BIN) + " search --index " + o.out.string() +
                           " --port " + std::to_string(provider->port()) + " --fingerprint " +
                           provider->fingerprint() + " --top 3";
  const auto [json, json_status] = run(base + " --json zzqqxxvv 'text of document 5' 2>/dev/null");
  EXPECT_EQ(json_status, 3);
  EXPECT_NE(json.find(R"("query":"zzqqxxvv")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("code":"INVALID_ARGUMENT")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("query":"text of document 5")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("ids":[)"), std::string::npos) << json;  // the second was answered
  const auto [text, text_status] = run(base + " zzqqxxvv 'text of document 5' 2>&1");
  EXPECT_EQ(text_status, 3);
  EXPECT_NE(text.find("skipped: the query has no known terms"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 2 queries had nothing to search"), std::string::npos) << text;
  EXPECT_EQ(run(base + " 'text of document 5' >/dev/null 2>&1").second, 0);
}

// Results name documents by the collection's own ids (the tiny collection's "doc<i>"), in text
// and JSON, and `update --delete ID` removes a document by its id.
TEST(SearchCommand, ResultsCarryDocumentIdsAndUpdateDeletesById) {
  testing::Collection c;
  const auto o = tiny_index(c);
  ASSERT_TRUE(index::build_index(o, nullptr).ok());
  const std::string cli = PRIVSEARCH_CLI_BIN;
  // Deleted by id before serving: the provider serves the updated version.
  const auto [updated, update_status] =
      run(cli + " update --index " + o.out.string() + " --delete doc5 2>&1");
  ASSERT_EQ(update_status, 0) << updated;
  EXPECT_NE(updated.find("1 deleted"), std::string::npos) << updated;
  EXPECT_NE(run(cli + " update --index " + o.out.string() + " --delete doc5 2>&1")
                .first.find("no live document of the index has that id"),
            std::string::npos);
  auto provider = testing::spawn_logged(c, o.out, {"--no-pir"}, {});
  ASSERT_NE(provider, nullptr);
  const std::string base = cli + " search --index " + o.out.string() + " --port " +
                           std::to_string(provider->port()) + " --fingerprint " +
                           provider->fingerprint() + " --top 3";
  const auto [json, status] = run(base + " --json 'text of document 6' 2>/dev/null");
  ASSERT_EQ(status, 0) << json;
  EXPECT_NE(json.find(R"("doc_ids":["doc6")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("id":"doc6")"), std::string::npos) << json;
  const auto [text, text_status] = run(base + " 'text of document 5' 2>/dev/null");
  ASSERT_EQ(text_status, 0) << text;
  EXPECT_EQ(text.find("doc5 "), std::string::npos) << text;  // deleted: never a result
  EXPECT_NE(text.find("doc"), std::string::npos) << text;
}

TEST(SearchCommand, VersionFlagPrintsTheVersionAndExitsZero) {
  const auto [out, status] = run(std::string(PRIVSEARCH_CLI_BIN) + " --version");
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out.rfind("privsearch ", 0), 0u) << out;
  EXPECT_NE(out.find('.'), std::string::npos) << out;  // major.minor.patch
}

}  // namespace
}  // namespace privsearch

// Updates without a rebuild (index/artifacts/append.h): an append writes new segments whose
// contents are the new rows projected, PQ-encoded and assigned exactly as a build would, leaves
// every old file byte-identical, deletes by tombstone, and refuses what it cannot do by name. The
// scan's tombstone filter equals the unfiltered scan with the deleted ids removed.
#include "index/artifacts/append.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "core/bytes.h"
#include "core/sha256.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/doc_ids.h"
#include "index/artifacts/exact_rows.h"
#include "index/artifacts/manifest_signature.h"
#include "index/artifacts/payload_store.h"
#include "index/artifacts/tombstones.h"
#include "index/candidates/ivf.h"
#include "index/candidates/pq_scan.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

// `rows` raw vectors like the collection's (same low-rank structure), from row `first` on.
Matrix more_vectors(std::size_t first, std::size_t rows) {
  Prng p = testing::test_prng(99);
  Matrix m{rows, 32, {}};
  for (std::size_t i = first; i < first + rows; ++i) {
    for (std::size_t c = 0; c < 32; ++c) {
      m.data.push_back(static_cast<float>(std::sin(0.1 * double(i) * double(c % 5 + 1)) +
                                          0.05 * testing::uniform_pm1(p)));
    }
  }
  return m;
}

std::vector<Document> more_documents(std::size_t first, std::size_t rows) {
  std::vector<Document> d;
  for (std::size_t i = first; i < first + rows; ++i) {
    d.push_back(
        {"new" + std::to_string(i), "New " + std::to_string(i), "added text " + std::to_string(i)});
  }
  return d;
}

std::map<std::string, std::string> file_hashes(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() == ".update.lock") continue;  // the update's lock, empty
    out[e.path().filename().string()] = to_hex(sha256(*read_file_bytes(e.path())));
  }
  return out;
}

class AppendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    o = testing::tiny_index_options(c, 128);
    o.ivf = true;
    o.ivf_lists = 8;
    base = *build_index(o, nullptr);
  }
  testing::Collection c{"append"};
  BuildOptions o;
  Manifest base;
};

TEST_F(AppendTest, NewSegmentsHoldTheNewRowsAndOldFilesAreUntouched) {
  const auto before = file_hashes(o.out);
  AppendInput in;
  in.vectors = more_vectors(400, 50);
  in.documents = more_documents(400, 50);
  in.deleted = {7, 3, 7, 399};
  const auto r = append_to_index(o.out, in, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->generation, 1u);
  EXPECT_EQ(r->appended, 50u);
  EXPECT_EQ(r->deleted, 3u);  // duplicates count once
  EXPECT_EQ(r->manifest.documents, 450u);
  EXPECT_EQ(index_generations(r->manifest), 1u);

  // Every old file but the manifest is byte-identical: nothing untouched was rebuilt.
  const auto after = file_hashes(o.out);
  for (const auto& [file, hash] : before) {
    if (file == "manifest.json") continue;
    EXPECT_EQ(after.at(file), hash) << file;
  }
  // The whole new version verifies.
  const auto m = load_manifest(o.out, /*verify=*/true);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->version_id, r->manifest.version_id);

  // Exact rows: the new ones are the projection of the new vectors, after the old ones.
  const auto proj = *load_projection(o.out / "projection.bin");
  const Matrix x = proj.project_documents(in.vectors);
  const auto deleted = *load_tombstones(o.out, *m);
  EXPECT_EQ(deleted, (std::vector<std::uint32_t>{3, 7, 399}));
  const auto rows = *ExactRows::open(o.out, *m, deleted);
  EXPECT_EQ(rows.rows(), 450u);
  EXPECT_EQ(rows.segments(), 2u);
  std::vector<float> got;
  ASSERT_TRUE(rows.gather(std::vector<std::uint64_t>{420, 0, 449}, got).ok());
  const auto old_store = *ExactStore::open(o.out / "exact.store");
  for (std::size_t j = 0; j < 16; ++j) {
    EXPECT_FLOAT_EQ(got[j], x.row(20)[j]);
    EXPECT_FLOAT_EQ(got[16 + j], old_store.row(0)[j]);
    EXPECT_FLOAT_EQ(got[32 + j], x.row(49)[j]);
  }
  // A deleted row is refused by name; one past the end is out of range.
  EXPECT_EQ(rows.gather(std::vector<std::uint64_t>{1, 7}, got).code(), StatusCode::kNotFound);
  EXPECT_EQ(rows.gather(std::vector<std::uint64_t>{450}, got).code(), StatusCode::kOutOfRange);

  // Flat codes: the base codebook's encoding of the new rows.
  const auto pq = *load_pq(o.out / "pq.bin");
  const auto delta = *load_pq(o.out / "pq.1.bin");
  EXPECT_EQ(delta.count, 50u);
  EXPECT_EQ(delta.codebook.centroids, pq.codebook.centroids);
  EXPECT_EQ(delta.codes, *pq_encode(pq.codebook, x));

  // IVF: each new document is in its `spill` best lists (brute force over the centroids), in the
  // delta segments of generation 1, and nowhere else.
  auto ivf = *load_ivf(o.out / kIvfFile);
  ASSERT_TRUE(
      add_ivf_delta(ivf, *read_file_bytes(o.out / "ivf_delta.1.bin"), o.out / "ivf_delta.1.bin")
          .ok());
  ASSERT_TRUE(check_ivf_matches(ivf, *m).ok());
  const auto store = *IvfListStore::open(o.out / kIvfListsFile, ivf);
  auto serving = *IvfListStore::open(o.out / kIvfListsFile, ivf);
  ASSERT_TRUE(serving.open_generation(1, o.out / "ivf_lists.1.bin").ok());
  std::map<std::uint32_t, std::vector<std::uint32_t>> in_lists;  // doc -> lists
  for (std::uint32_t l = 0; l < ivf.lists; ++l) {
    if (ivf.ref(l, 1).bytes == 0) {
      EXPECT_EQ(serving.segment(l, 1).status().code(), StatusCode::kNotFound);
      continue;
    }
    const auto seg = *serving.segment(l, 1);
    const auto list = decode_list(ivf, l, byte_view(seg), 1);
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    for (const auto id : list->ids) in_lists[id].push_back(l);
  }
  EXPECT_EQ(in_lists.size(), 50u);
  for (std::size_t d = 0; d < 50; ++d) {
    std::vector<std::pair<float, std::uint32_t>> scored;
    for (std::uint32_t l = 0; l < ivf.lists; ++l) {
      float s = 0;
      for (std::size_t j = 0; j < ivf.route_dim; ++j)
        s += x.row(d)[j] * ivf.centroids[l * ivf.route_dim + j];
      scored.push_back({-s, l});
    }
    std::sort(scored.begin(), scored.end());
    std::vector<std::uint32_t> best;
    for (std::size_t j = 0; j < ivf.spill; ++j) best.push_back(scored[j].second);
    auto have = in_lists[static_cast<std::uint32_t>(400 + d)];
    std::sort(best.begin(), best.end());
    std::sort(have.begin(), have.end());
    EXPECT_EQ(have, best) << "document " << 400 + d;
  }
  // A base segment is not a generation-1 segment (its hash is another one's).
  EXPECT_EQ(decode_list(ivf, 0, byte_view(*store.segment(0)), 1).status().code(),
            StatusCode::kDataLoss);

  // Payloads: the new records follow; a deleted one is emptied when the generations are joined.
  auto payloads = *PayloadStore::open(o.out / "payloads.bin");
  ASSERT_TRUE(payloads.append(*PayloadStore::open(o.out / "payloads.1.bin")).ok());
  for (const auto id : deleted) payloads.erase(id);
  EXPECT_EQ(payloads.records(), 450u);
  EXPECT_NE(payloads.text(401)->find("added text 401"), std::string::npos);
  EXPECT_EQ(*payloads.text(7), "");
}

TEST_F(AppendTest, GenerationsChainAndASignedUpdateIsTheNextVersion) {
  const auto key = Ed25519SigningKey::generate();
  ASSERT_TRUE(sign_index(o.out, *key).ok());
  const auto v1 = *load_manifest(o.out, false);
  AppendInput in;
  in.vectors = more_vectors(400, 10);
  in.documents = more_documents(400, 10);
  const auto r1 = *append_to_index(o.out, in, &*key);
  EXPECT_EQ(r1.manifest.sequence, v1.sequence + 1);
  EXPECT_EQ(r1.manifest.parent_version, v1.version_id);
  EXPECT_TRUE(verify_manifest_signature(o.out, r1.manifest, key->public_key()).ok());
  EXPECT_GT(r1.ivf_client_bytes, 0u);
  EXPECT_LT(r1.ivf_client_bytes, r1.flat_client_bytes);

  // Deletions only: a generation without rows; then more rows get the next ids.
  AppendInput del;
  del.deleted = {405};
  const auto r2r = append_to_index(o.out, del, &*key);
  ASSERT_TRUE(r2r.ok()) << r2r.status().to_string();
  const auto r2 = *r2r;
  EXPECT_EQ(r2.generation, 2u);
  EXPECT_EQ(r2.manifest.documents, 410u);
  EXPECT_EQ(r2.manifest.find("exact_store.2"), nullptr);
  in.vectors = more_vectors(410, 5);
  in.documents = more_documents(410, 5);
  const auto r3r = append_to_index(o.out, in, &*key);
  ASSERT_TRUE(r3r.ok()) << r3r.status().to_string();
  const auto r3 = *r3r;
  EXPECT_EQ(r3.generation, 3u);
  EXPECT_EQ(r3.manifest.sequence, v1.sequence + 3);
  const auto mr = load_manifest(o.out, true);
  ASSERT_TRUE(mr.ok()) << mr.status().to_string();
  const auto m = *mr;
  const auto rows_r = ExactRows::open(o.out, m, *load_tombstones(o.out, m));
  ASSERT_TRUE(rows_r.ok()) << rows_r.status().to_string();
  const auto& rows = *rows_r;
  EXPECT_EQ(rows.rows(), 415u);
  EXPECT_EQ(rows.segments(), 3u);  // base, 1, 3
  std::vector<float> got;
  ASSERT_TRUE(rows.gather(std::vector<std::uint64_t>{412}, got).ok());
  const auto proj = *load_projection(o.out / "projection.bin");
  const auto x = proj.project_documents(in.vectors);
  for (std::size_t j = 0; j < 16; ++j) EXPECT_FLOAT_EQ(got[j], x.row(2)[j]);
  EXPECT_EQ(rows.gather(std::vector<std::uint64_t>{405}, got).code(), StatusCode::kNotFound);

  // The stores of a previous opening are reused when unchanged.
  const auto again = *ExactRows::open(o.out, m, {}, &rows);
  EXPECT_EQ(again.reused_segments(), 3u);
  // An unsigned update removes the old signature (it names another version).
  ASSERT_TRUE(append_to_index(o.out, del, nullptr).ok());
  EXPECT_FALSE(fs::exists(o.out / kManifestSignatureFile));
}

TEST_F(AppendTest, RefusalsAreTypedAndLeaveTheIndexAlone) {
  const auto before = file_hashes(o.out);
  AppendInput in;
  EXPECT_EQ(append_to_index(o.out, in, nullptr).status().code(), StatusCode::kFailedPrecondition);
  in.vectors = Matrix{2, 31, std::vector<float>(62, 0.5f)};
  in.documents = more_documents(400, 2);
  EXPECT_EQ(append_to_index(o.out, in, nullptr).status().code(), StatusCode::kInvalidArgument);
  in.vectors = more_vectors(400, 2);
  in.documents = more_documents(400, 3);
  EXPECT_EQ(append_to_index(o.out, in, nullptr).status().code(), StatusCode::kInvalidArgument);
  AppendInput del;
  del.deleted = {400};
  EXPECT_EQ(append_to_index(o.out, del, nullptr).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(file_hashes(o.out), before);
  // A client's copy of the index (no exact store) is not what an update changes.
  const auto thin = c.dir / "thin";
  fs::create_directories(thin);
  fs::copy_file(o.out / "manifest.json", thin / "manifest.json");
  {
    auto m = *load_manifest(thin, false);
    std::erase_if(m.artifacts, [](const ArtifactEntry& e) { return e.name == "exact_store"; });
    for (const auto& e : m.artifacts) fs::copy_file(o.out / e.file, thin / e.file);
    ASSERT_TRUE(write_manifest(thin, m).ok());
  }
  EXPECT_EQ(append_to_index(thin, del, nullptr).status().code(), StatusCode::kFailedPrecondition);
  // A second update while one runs (the lock held here) is refused.
  {
    const auto held = FileLock::try_acquire(o.out / ".update");
    ASSERT_TRUE(held.ok());
    del.deleted = {5};
    EXPECT_EQ(append_to_index(o.out, del, nullptr).status().code(),
              StatusCode::kFailedPrecondition);
  }
  EXPECT_EQ(file_hashes(o.out), before);

  // A damaged artifact the update reads is refused before anything is written.
  {
    auto bytes = *read_file_bytes(o.out / kIvfFile);
    bytes[bytes.size() / 2] ^= 1;
    std::ofstream(o.out / kIvfFile, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  in.documents = more_documents(400, 2);
  EXPECT_EQ(append_to_index(o.out, in, nullptr).status().code(), StatusCode::kDataLoss);
  EXPECT_FALSE(fs::exists(o.out / "exact_store.1.bin"));
}

// Every row's id (doc_ids.h) over the generations of the index in `dir`.
DocIds merged_ids(const fs::path& dir) {
  const auto m = *load_manifest(dir, false);
  auto ids = *DocIds::open(dir / m.find(kDocIdsArtifact)->file);
  for (std::uint32_t g = 1; g <= index_generations(m); ++g) {
    if (const auto* e = m.find(generation_artifact(kDocIdsArtifact, g)); e != nullptr) {
      EXPECT_TRUE(ids.append(*DocIds::open(dir / e->file)).ok());
    }
  }
  return ids;
}

TEST_F(AppendTest, DocumentsAreDeletedAndReplacedByTheirIds) {
  EXPECT_EQ(merged_ids(o.out).id(7), "doc7");
  AppendInput in;
  in.vectors = more_vectors(400, 2);
  in.documents = more_documents(400, 2);
  in.documents[0].id = "doc3";  // an id the index holds: the new document replaces row 3
  in.delete_ids = {"doc7"};
  const auto r = append_to_index(o.out, in, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->deleted, 2u);
  EXPECT_EQ(r->replaced, 1u);
  const auto m = *load_manifest(o.out, true);
  const auto deleted = *load_tombstones(o.out, m);
  EXPECT_EQ(deleted, (std::vector<std::uint32_t>{3, 7}));
  const auto ids = merged_ids(o.out);
  ASSERT_EQ(ids.records(), 402u);
  EXPECT_EQ(ids.id(400), "doc3");
  EXPECT_EQ(ids.id(401), "new401");
  const auto live = *ids.live_rows(deleted);
  EXPECT_EQ(live.at("doc3"), 400u);
  EXPECT_EQ(live.count("doc7"), 0u);

  // Refused by name, nothing written: an unknown or already deleted id, an id added twice.
  const auto before = file_hashes(o.out);
  AppendInput gone;
  gone.delete_ids = {"doc7"};
  auto s = append_to_index(o.out, gone, nullptr).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("`doc7`"), std::string::npos) << s.to_string();
  gone.delete_ids = {"no-such-doc"};
  EXPECT_EQ(append_to_index(o.out, gone, nullptr).status().code(), StatusCode::kInvalidArgument);
  AppendInput twice;
  twice.vectors = more_vectors(500, 2);
  twice.documents = more_documents(500, 2);
  twice.documents[1].id = twice.documents[0].id;
  s = append_to_index(o.out, twice, nullptr).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("`new500` is added twice"), std::string::npos) << s.to_string();
  twice.documents[1].id = "bad\nid";
  EXPECT_EQ(append_to_index(o.out, twice, nullptr).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(file_hashes(o.out), before);
}

TEST(DocIdsTest, TheTableRoundTripsAndRefusesDamage) {
  const std::vector<std::string> ids = {"4983", "doc-\xc3\xbc", std::string(kMaxDocIdBytes, 'x')};
  const auto bytes = *DocIds::encode(ids, 10);
  const auto t = *DocIds::decode(bytes);
  EXPECT_EQ(t.first(), 10u);
  EXPECT_EQ(t.records(), 13u);
  EXPECT_EQ(t.id(11), ids[1]);
  EXPECT_EQ(t.id(9), "");
  EXPECT_EQ(t.id(13), "");
  for (std::size_t cut : {std::size_t{3}, std::size_t{20}, bytes.size() - 1}) {
    EXPECT_EQ(DocIds::decode(std::span(bytes).first(cut)).status().code(), StatusCode::kDataLoss);
  }
  auto longer = bytes;
  longer.push_back(0);
  EXPECT_EQ(DocIds::decode(longer).status().code(), StatusCode::kDataLoss);
  auto huge = bytes;
  huge[8] = 0xff;  // a row count past what the bytes can hold
  EXPECT_EQ(DocIds::decode(huge).status().code(), StatusCode::kDataLoss);
  for (const std::string& bad :
       {std::string(), std::string(kMaxDocIdBytes + 1, 'x'), std::string("tab\there")}) {
    EXPECT_EQ(DocIds::encode(std::vector<std::string>{bad}, 0).status().code(),
              StatusCode::kInvalidArgument);
  }
  // A generation continues the rows; a gap is damage. Two live rows of one id are refused.
  auto base = *DocIds::decode(*DocIds::encode(std::vector<std::string>{"a", "b"}, 0));
  EXPECT_EQ(base.append(*DocIds::decode(*DocIds::encode(std::vector<std::string>{"c"}, 3))).code(),
            StatusCode::kDataLoss);
  ASSERT_TRUE(base.append(*DocIds::decode(*DocIds::encode(std::vector<std::string>{"a"}, 2))).ok());
  EXPECT_EQ(base.live_rows({}).status().code(), StatusCode::kDataLoss);
  const std::uint32_t first_a[] = {0};
  EXPECT_EQ(base.live_rows(first_a)->at("a"), 2u);
}

TEST_F(AppendTest, TruncatedOrMissingSegmentsAndForeignDeltasAreDataLoss) {
  AppendInput in;
  in.vectors = more_vectors(400, 20);
  in.documents = more_documents(400, 20);
  in.deleted = {1};
  const auto r = *append_to_index(o.out, in, nullptr);
  // Truncated list segments: the manifest's hash check names it; the store refuses the size.
  const auto lists1 = o.out / "ivf_lists.1.bin";
  const auto full = *read_file_bytes(lists1);
  fs::resize_file(lists1, full.size() - 10);
  const auto m = load_manifest(o.out, true);
  EXPECT_EQ(m.status().code(), StatusCode::kDataLoss);
  auto ivf = *load_ivf(o.out / kIvfFile);
  ASSERT_TRUE(add_ivf_delta(ivf, *read_file_bytes(o.out / "ivf_delta.1.bin"), "d").ok());
  auto store = *IvfListStore::open(o.out / kIvfListsFile, ivf);
  EXPECT_EQ(store.open_generation(1, lists1).code(), StatusCode::kDataLoss);
  EXPECT_EQ(store.open_generation(2, lists1).code(), StatusCode::kFailedPrecondition);
  // A missing one.
  fs::remove(lists1);
  EXPECT_EQ(load_manifest(o.out, true).status().code(), StatusCode::kNotFound);

  // A delta applied twice, or to another index, is not the next generation.
  const auto delta = *read_file_bytes(o.out / "ivf_delta.1.bin");
  EXPECT_EQ(add_ivf_delta(ivf, delta, "d").code(), StatusCode::kDataLoss);
  auto bad = delta;
  bad[bad.size() - 1] ^= 1;  // a segment hash: parses, then the segment will not match
  auto fresh = *load_ivf(o.out / kIvfFile);
  ASSERT_TRUE(add_ivf_delta(fresh, bad, "d").ok());
  auto cut = delta;
  cut.resize(cut.size() - 3);
  auto fresh2 = *load_ivf(o.out / kIvfFile);
  EXPECT_EQ(add_ivf_delta(fresh2, cut, "d").code(), StatusCode::kDataLoss);
  // Tombstones: damaged or of another generation.
  const auto t = *read_file_bytes(o.out / "tombstones.1.bin");
  EXPECT_TRUE(parse_tombstones(t, 1, r.manifest.documents, "t").ok());
  EXPECT_EQ(parse_tombstones(t, 2, r.manifest.documents, "t").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(parse_tombstones(t, 1, 1, "t").status().code(), StatusCode::kDataLoss);
  auto t_cut = t;
  t_cut.pop_back();
  EXPECT_EQ(parse_tombstones(t_cut, 1, r.manifest.documents, "t").status().code(),
            StatusCode::kDataLoss);
}

TEST(AppendScanTest, TheTombstoneFilterIsTheScanWithoutTheDeletedIds) {
  Prng p = testing::test_prng(5);
  const std::size_t n = 700, d = 16, m = 4;
  Matrix x{n, d, {}};
  for (std::size_t i = 0; i < n * d; ++i)
    x.data.push_back(static_cast<float>(testing::uniform_pm1(p)));
  PqOptions po;
  po.m = m;
  const auto pq = *build_pq(x, po);
  // Two segments (as base and generation 1) and, for IVF, the same documents with ids.
  const std::size_t split = 450;
  const auto b0 = block_codes(pq.codes.data(), split, m);
  const auto b1 = block_codes(pq.codes.data() + split * m, n - split, m);
  const std::vector<CodeSegment> segs{
      {b0.data(), split, nullptr, 0},
      {b1.data(), n - split, nullptr, static_cast<std::uint32_t>(split)}};
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> q(d);
    for (auto& v : q) v = static_cast<float>(testing::uniform_pm1(p));
    std::vector<std::uint32_t> deleted;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (p.uniform_below(4) == 0) deleted.push_back(i);
    }
    const std::size_t k = 25;
    const auto all = *scan_top_k(pq.codebook, segs, q, n);
    std::vector<std::uint32_t> want;
    for (const auto id : all) {
      if (!std::binary_search(deleted.begin(), deleted.end(), id) && want.size() < k)
        want.push_back(id);
    }
    EXPECT_EQ(*scan_top_k(pq.codebook, segs, q, k, 1, deleted), want) << trial;
    // The same over segments that carry their ids.
    std::vector<std::uint32_t> ids(n);
    for (std::uint32_t i = 0; i < n; ++i) ids[i] = i;
    const auto bw = block_codes(pq.codes.data(), n, m);
    const CodeSegment with_ids{bw.data(), n, ids.data(), 0};
    EXPECT_EQ(*scan_top_k(pq.codebook, std::span(&with_ids, 1), q, k, 1, deleted), want) << trial;
  }
}

}  // namespace
}  // namespace privsearch::index

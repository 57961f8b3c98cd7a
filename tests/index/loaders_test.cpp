#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/half.h"
#include "index/artifacts/exact_store.h"
#include "index/encoders/beir.h"
#include "index/vectors_io.h"
#include "testing/test_util.h"

namespace privsearch::index {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() / ("privsearch-test-" + std::to_string(::getpid()) + "-" +
                                           std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& content) const {
    std::ofstream(path_ / name, std::ios::binary) << content;
    return path_ / name;
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

TEST(Beir, LoadsAWellFormedCollection) {
  TempDir d;
  d.write("corpus.jsonl", R"({"_id": "d1", "title": "T1", "text": "alpha"})"
                          "\n"
                          R"({"_id": "d2", "text": "beta"})"
                          "\n\n");
  d.write("queries.jsonl", R"({"_id": "q1", "text": "a?"})"
                           "\n"
                           R"({"_id": "q2", "text": "b?"})"
                           "\n");
  fs::create_directories(d.path() / "qrels");
  d.write("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n");
  const auto c = *load_collection(d.path());
  ASSERT_EQ(c.corpus.size(), 2u);
  EXPECT_EQ(c.corpus[0].title, "T1");
  EXPECT_EQ(c.corpus[1].title, "");
  ASSERT_EQ(c.queries.size(), 1u);  // q2 has no judgments
  EXPECT_EQ(c.qrels.at("q1").at("d1"), 2);
  EXPECT_EQ(c.doc_index.at("d2"), 1u);
}

TEST(Beir, MalformedJsonNamesFileAndLine) {
  TempDir d;
  const auto f = d.write("corpus.jsonl", R"({"_id": "d1", "text": "x"})"
                                         "\n{oops\n");
  const auto r = load_corpus(f);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("corpus.jsonl:2"), std::string::npos);
}

TEST(Beir, DuplicateIdIsRejected) {
  TempDir d;
  const auto f = d.write("q.jsonl", R"({"_id": "q", "text": "x"})"
                                    "\n"
                                    R"({"_id": "q", "text": "y"})"
                                    "\n");
  const auto r = load_queries(f);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("duplicate"), std::string::npos);
}

TEST(Beir, MissingOrWrongTypeFieldIsRejected) {
  TempDir d;
  EXPECT_EQ(load_corpus(d.write("a.jsonl", R"({"_id": "d"})"
                                           "\n"))
                .status()
                .code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(load_corpus(d.write("b.jsonl", R"({"_id": 5, "text": "x"})"
                                           "\n"))
                .status()
                .code(),
            StatusCode::kDataLoss);
}

TEST(Beir, BadQrelsLinesAreRejected) {
  TempDir d;
  EXPECT_EQ(load_qrels(d.write("a.tsv", "q1\td1\n")).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(load_qrels(d.write("b.tsv", "q1\td1\tx\n")).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(load_qrels(d.write("c.tsv", "q1\td1\t1\nq1\td1\t2\n")).status().code(),
            StatusCode::kDataLoss);
}

TEST(Beir, QrelsNamingUnknownDocumentsAreRejected) {
  TempDir d;
  d.write("corpus.jsonl", R"({"_id": "d1", "text": "alpha"})"
                          "\n");
  d.write("queries.jsonl", R"({"_id": "q1", "text": "a?"})"
                           "\n");
  fs::create_directories(d.path() / "qrels");
  d.write("qrels/test.tsv", "q1\td9\t1\n");
  EXPECT_EQ(load_collection(d.path()).status().code(), StatusCode::kDataLoss);
}

TEST(Beir, MissingFileIsNotFound) {
  EXPECT_EQ(load_corpus("/nonexistent/corpus.jsonl").status().code(), StatusCode::kNotFound);
}

TEST(Beir, RealCollectionsLoadWhenPresent) {
  for (const char* name : {"scifact", "cranfield"}) {
    const fs::path dir = fs::path(PRIVSEARCH_SHARED_DATA) / name;
    if (!fs::exists(dir)) GTEST_SKIP() << "shared data absent: " << dir;
    const auto c = load_collection(dir);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_GT(c->corpus.size(), 1000u);
    EXPECT_GT(c->queries.size(), 200u);
  }
}

Matrix sample_matrix() {
  Matrix m;
  m.rows = 3;
  m.cols = 4;
  for (int i = 0; i < 12; ++i) m.data.push_back(0.5f * static_cast<float>(i) - 2.0f);
  return m;
}

TEST(Npy, RoundTripsFloat32) {
  TempDir d;
  const auto m = sample_matrix();
  ASSERT_TRUE(save_npy(d.path() / "x.npy", m).ok());
  const auto back = *load_npy(d.path() / "x.npy");
  EXPECT_EQ(back.rows, 3u);
  EXPECT_EQ(back.cols, 4u);
  EXPECT_EQ(back.data, m.data);
  // No temporary file is left behind.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(d.path())) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u);
}

std::string npy_bytes(const std::string& header, const std::string& data) {
  std::string h = header;
  const std::size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h.push_back('\n');
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(h.size() & 0xff));
  out.push_back(static_cast<char>(h.size() >> 8));
  return out + h + data;
}

TEST(Npy, Float64IsConverted) {
  TempDir d;
  const double v[2] = {1.5, -2.25};
  const auto f =
      d.write("x.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
                                 std::string(reinterpret_cast<const char*>(v), 16)));
  const auto m = *load_npy(f);
  EXPECT_EQ(m.data, (std::vector<float>{1.5f, -2.25f}));
}

TEST(Npy, RejectsFortranOrderWrongDtypeShapeAndNaN) {
  TempDir d;
  const std::string data(8, '\0');
  EXPECT_EQ(load_npy(d.write("a.npy",
                             npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }",
                                       data)))
                .status()
                .code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(
      load_npy(
          d.write("b.npy",
                  npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2), }", data)))
          .status()
          .code(),
      StatusCode::kDataLoss);
  EXPECT_EQ(
      load_npy(
          d.write("c.npy",
                  npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (5, 2), }", data)))
          .status()
          .code(),
      StatusCode::kDataLoss);
  EXPECT_EQ(load_npy(d.write("d.npy",
                             npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                                       data)))
                .status()
                .code(),
            StatusCode::kDataLoss);
  const float nan_row[2] = {1.0f, std::nanf("")};
  const auto r = load_npy(
      d.write("e.npy", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }",
                                 std::string(reinterpret_cast<const char*>(nan_row), 8))));
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("row 0, column 1"), std::string::npos);
  EXPECT_EQ(load_npy(d.write("f.npy", "not numpy")).status().code(), StatusCode::kDataLoss);
}

TEST(Fvecs, LoadsAndRejectsInconsistentRows) {
  TempDir d;
  auto row = [](std::int32_t dim, std::vector<float> v) {
    std::string s(reinterpret_cast<const char*>(&dim), 4);
    s.append(reinterpret_cast<const char*>(v.data()), v.size() * 4);
    return s;
  };
  const auto m = *load_fvecs(d.write("a.fvecs", row(2, {1, 2}) + row(2, {3, 4})));
  EXPECT_EQ(m.rows, 2u);
  EXPECT_EQ(m.data, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(load_fvecs(d.write("b.fvecs", row(2, {1, 2}) + row(3, {3, 4, 5}))).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(load_fvecs(d.write("c.fvecs", row(2, {1, 2}).substr(0, 9))).status().code(),
            StatusCode::kDataLoss);
}

TEST(Ids, CountAndDuplicatesAreChecked) {
  TempDir d;
  EXPECT_EQ(load_ids(d.write("a.txt", "x\ny\n"), 2)->size(), 2u);
  EXPECT_EQ(load_ids(d.write("b.txt", "x\ny\n"), 3).status().code(), StatusCode::kDataLoss);
  const auto dup = load_ids(d.write("c.txt", "x\nx\n"), 2);
  EXPECT_EQ(dup.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(dup.status().message().find("line 2"), std::string::npos);
}

TEST(ExactStoreTest, WriteOpenGatherAndBounds) {
  TempDir d;
  const auto m = sample_matrix();
  ASSERT_TRUE(ExactStore::write(d.path() / "x.store", m).ok());
  const auto s = *ExactStore::open(d.path() / "x.store");
  EXPECT_EQ(s.rows(), 3u);
  EXPECT_EQ(s.cols(), 4u);
  EXPECT_TRUE(s.read_only());
  std::vector<float> out;
  const std::uint64_t ids[] = {2, 0};
  ASSERT_TRUE(s.gather(ids, out).ok());
  EXPECT_EQ(out[0], m.data[8]);
  EXPECT_EQ(out[4], m.data[0]);
  const std::uint64_t bad[] = {1, 3};
  const auto st = s.gather(bad, out);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("candidate 1"), std::string::npos);
}

TEST(ExactStoreTest, TruncatedOrForeignFileIsRejected) {
  TempDir d;
  ASSERT_TRUE(ExactStore::write(d.path() / "x.store", sample_matrix()).ok());
  fs::resize_file(d.path() / "x.store", 64 + 10);
  EXPECT_EQ(ExactStore::open(d.path() / "x.store").status().code(), StatusCode::kDataLoss);
  d.write("y.store", std::string(100, 'z'));
  EXPECT_EQ(ExactStore::open(d.path() / "y.store").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ExactStore::open(d.path() / "none").status().code(), StatusCode::kNotFound);
}

TEST(ExactStoreTest, Float16StoresKeepHalfTheBytesAndWidenTheRowsTheyServe) {
  TempDir d;
  Matrix m;
  m.rows = 5;
  m.cols = 6;  // 12-byte float16 rows: the hash's two-byte tail
  Prng p = testing::test_prng(71);
  for (std::size_t i = 0; i < 30; ++i)
    m.data.push_back(static_cast<float>(3 * testing::uniform_pm1(p)));
  ASSERT_TRUE(ExactStore::write(d.path() / "h.store", m, StoreDtype::kFloat16).ok());
  EXPECT_EQ(fs::file_size(d.path() / "h.store"), 64u + 30 * 2);
  const auto s = *ExactStore::open(d.path() / "h.store");
  EXPECT_EQ(s.dtype(), StoreDtype::kFloat16);
  double best = 0;
  for (std::size_t r = 0; r < 5; ++r) {
    double norm = 0;
    for (std::size_t c = 0; c < 6; ++c) {
      // Every value is the binary16 rounding of the original (within half an ulp: 2^-11 relative).
      const float v = s.row(r)[c];
      const float want = half_bits_to_float(float_to_half_bits(m.data[r * 6 + c]));
      EXPECT_EQ(v, want);
      EXPECT_LE(std::fabs(v - m.data[r * 6 + c]), std::fabs(m.data[r * 6 + c]) * 0x1p-11f);
      norm += double(v) * v;
    }
    best = std::max(best, norm);
  }
  EXPECT_NEAR(s.max_row_norm(), std::sqrt(best), 1e-12);
  std::vector<float> out;
  const std::uint64_t ids[] = {4, 1};
  ASSERT_TRUE(s.gather(ids, out).ok());
  for (std::size_t c = 0; c < 6; ++c) {
    EXPECT_EQ(out[c], s.row(4)[c]);
    EXPECT_EQ(out[6 + c], s.row(1)[c]);
  }
  // A half changed on disk after the load: refused, never a wrong row.
  {
    std::fstream f(d.path() / "h.store", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64 + 6 * 2 + 10);
    f.put('\x11');
  }
  EXPECT_EQ(s.gather(ids, out).code(), StatusCode::kDataLoss);
  // Values beyond binary16's range are refused at write; an unknown value type at open.
  Matrix big = m;
  big.data[7] = 70000.0f;
  EXPECT_EQ(ExactStore::write(d.path() / "big.store", big, StoreDtype::kFloat16).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(ExactStore::write(d.path() / "t.store", m, StoreDtype::kFloat16).ok());
  {
    std::fstream f(d.path() / "t.store", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x02');
  }
  const auto bad = ExactStore::open(d.path() / "t.store").status();
  EXPECT_EQ(bad.code(), StatusCode::kDataLoss);
  EXPECT_NE(bad.message().find("value type"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace privsearch::index

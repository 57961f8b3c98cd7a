#include "pir/lwe/lwe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <tuple>

#include "pir/lwe/kernels.h"

namespace privsearch::pir {
namespace {

LweParams test_params() { return *find_lwe_params("insecure-test-n64-binary", true); }

TEST(LweParams, TableHasProvenanceAndRefusesInsecureRows) {
  for (const auto& p : lwe_param_table()) {
    EXPECT_FALSE(p.provenance.empty()) << p.name;
    EXPECT_EQ(p.log_q, 32);
  }
  EXPECT_TRUE(find_lwe_params("zippir-n1400-binary").ok());
  EXPECT_EQ(find_lwe_params("insecure-test-n64-binary").status().code(),
            StatusCode::kInvalidArgument);
  // Below the HE-standard row for n = 1024 by scripts/lwe_estimate.py (docs/PARAMETERS.md).
  EXPECT_EQ(find_lwe_params("simplepir-n1024-uniform").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(find_lwe_params("simplepir-n1024-uniform", true).ok());
  EXPECT_EQ(find_lwe_params("nope").status().code(), StatusCode::kNotFound);
}

TEST(LweParams, DecodingMarginForTheZipPirShape) {
  // 1 GiB, d0 = 69,906 columns of bytes: far below 2^-40 per entry.
  EXPECT_LT(lwe_decoding_failure_log2(6.4, 256, 69906, kDelta, 0), -40.0);
  // A 4x larger p would not decode.
  EXPECT_GT(lwe_decoding_failure_log2(6.4, 1u << 12, 69906, 1u << 20, 0), -40.0);
}

TEST(LweKernels, Avx512MatvecEqualsScalar) {
  Prng prng = Prng::from_seed(Seed{1});
  for (std::size_t rows : {1u, 5u, 13u, 64u}) {
    for (std::size_t stride : {64u, 128u, 192u}) {
      std::vector<std::uint8_t> d(rows * stride);
      std::vector<std::uint32_t> v(stride), a(rows), b(rows), c(rows);
      prng.fill(d);
      for (auto& x : v) x = static_cast<std::uint32_t>(prng.next_u64());
      v[0] = 0xffffffffu;  // digit carries through every byte
      v[1] = 0x80808080u;
      matvec_u8_u32(d.data(), rows, stride, v.data(), a.data());
      matvec_u8_u32_scalar(d.data(), rows, stride, v.data(), b.data());
      matvec_u8_u32_avx512_only(d.data(), rows, stride, v.data(), c.data());
      EXPECT_EQ(a, b);
      EXPECT_EQ(c, b);
      if (lwe_kernels_use_vnni()) {
        std::vector<std::uint32_t> e(rows), f(rows);
        detail::matvec_u8_u32_vnni(d.data(), rows, stride, v.data(), e.data());
        detail::matvec_u8_u32_madd(d.data(), rows, stride, v.data(), f.data());
        EXPECT_EQ(e, b);
        EXPECT_EQ(f, b);
      }
    }
  }
}

TEST(LweKernels, MatmulEqualsScalar) {
  Prng prng = Prng::from_seed(Seed{2});
  const std::size_t rows = 13, cols = 300, stride = 320, n = 40, ld = 48;
  std::vector<std::uint8_t> d(rows * stride, 0);
  for (std::size_t r = 0; r < rows; ++r) prng.fill(std::span(d.data() + r * stride, cols));
  std::vector<std::uint32_t> a(cols * ld, 0), h1(rows * ld), h2(rows * ld);
  for (std::size_t c = 0; c < cols; ++c) {
    for (std::size_t j = 0; j < n; ++j) a[c * ld + j] = static_cast<std::uint32_t>(prng.next_u64());
  }
  matmul_u8_u32(d.data(), rows, cols, stride, a.data(), n, ld, h1.data(), 2);
  matmul_u8_u32_scalar(d.data(), rows, cols, stride, a.data(), n, ld, h2.data());
  EXPECT_EQ(h1, h2);
}

TEST(LweMatrix, ExpansionIsPositionIndependent) {
  const Seed seed{5};
  const std::size_t n = 7;
  std::vector<std::uint32_t> all(9000 * n), part(100 * n);
  expand_lwe_matrix(seed, 0, 9000, n, n, all.data());
  expand_lwe_matrix(seed, 4090, 100, n, n, part.data());  // crosses a chunk boundary
  for (std::size_t i = 0; i < part.size(); ++i) EXPECT_EQ(part[i], all[4090 * n + i]);
}

TEST(Gaussian, MomentsMatchSigma) {
  GaussianSampler g(6.4);
  Prng prng = Prng::from_seed(Seed{3});
  double sum = 0, sq = 0;
  const int count = 200000;
  int max_abs = 0;
  for (int i = 0; i < count; ++i) {
    const int x = g.sample(prng);
    sum += x;
    sq += static_cast<double>(x) * x;
    max_abs = std::max(max_abs, std::abs(x));
  }
  EXPECT_NEAR(sum / count, 0.0, 0.1);
  EXPECT_NEAR(std::sqrt(sq / count), 6.4, 0.1);
  EXPECT_LE(max_abs, 64);
}

TEST(Shape, ChoosesWholeRecordsPerColumn) {
  auto s = choose_database_shape(1000, 100, 1000);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->records_per_column, 10u);
  EXPECT_EQ(s->rows, 1000u);
  EXPECT_EQ(s->columns, 100u);
  EXPECT_EQ(s->stride, 128u);
  // Default shape of 1 GiB of 16 KiB records: about 15,360 rows, one record per column.
  auto g = choose_database_shape(65536, 16384);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->rows, 16384u);
  EXPECT_EQ(choose_database_shape(0, 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(choose_database_shape(10, 0).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(choose_database_shape(std::size_t{1} << 40, 1024).status().code(),
            StatusCode::kResourceExhausted);
  DatabaseShape bad = *s;
  bad.rows += 1;
  EXPECT_FALSE(validate_database_shape(bad).ok());
}

TEST(Database, RecordsRoundTripAndRejectBadInput) {
  auto db = LweDatabase::create(*choose_database_shape(37, 11, 30));
  ASSERT_TRUE(db.ok());
  for (std::size_t i = 0; i < 37; ++i) {
    std::vector<std::uint8_t> rec(11, static_cast<std::uint8_t>(i));
    rec[0] = 200;
    ASSERT_TRUE(db->set_record(i, rec).ok());
  }
  for (std::size_t i = 0; i < 37; ++i) {
    EXPECT_EQ(db->record(i)[1], i);
    EXPECT_EQ(db->record(i)[0], 200);
  }
  EXPECT_EQ(db->set_record(37, {}).code(), StatusCode::kOutOfRange);
  std::vector<std::uint8_t> big(12);
  EXPECT_EQ(db->set_record(0, big).code(), StatusCode::kOutOfRange);
}

// SimplePIR with the full hint recovers every record for several shapes.
// The blocked fill is record-by-record set_record, byte for byte: shapes with partial last
// columns, more than one block of 64 columns, and fewer records given than the shape holds.
TEST(Database, SetRecordsEqualsOneRecordAtATime) {
  for (const auto& [records, bytes, rows, given] :
       std::vector<std::tuple<std::size_t, std::size_t, std::size_t, std::size_t>>{
           {37, 11, 30, 37},
           {500, 64, 200, 500},
           {1000, 40, 120, 977},
           {130, 100, 100, 130},
           {70, 33, 33, 1}}) {
    const auto shape = *choose_database_shape(records, bytes, rows);
    std::vector<std::uint8_t> data(given * bytes);
    for (std::size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<std::uint8_t>(i * 7 + i / 13);
    auto one = *LweDatabase::create(shape);
    for (std::size_t i = 0; i < given; ++i) {
      ASSERT_TRUE(one.set_record(i, std::span(data).subspan(i * bytes, bytes)).ok());
    }
    auto all = *LweDatabase::create(shape);
    ASSERT_TRUE(all.set_records(data).ok());
    EXPECT_EQ(std::memcmp(one.data(), all.data(), shape.rows * shape.stride), 0)
        << records << " x " << bytes;
  }
  auto db = *LweDatabase::create(*choose_database_shape(10, 8, 16));
  EXPECT_EQ(db.set_records(std::vector<std::uint8_t>(12)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db.set_records(std::vector<std::uint8_t>(88)).code(), StatusCode::kInvalidArgument);
}

TEST(SimplePir, RecoversEveryRecord) {
  const LweParams params = test_params();
  Prng prng = Prng::from_seed(Seed{4});
  struct Case {
    std::size_t records, bytes, target;
  };
  for (const Case c : {Case{50, 8, 40}, Case{7, 33, 33}, Case{200, 3, 60}}) {
    auto shape = *choose_database_shape(c.records, c.bytes, c.target);
    auto db = *LweDatabase::create(shape);
    db.fill_pseudorandom(c.records);
    const Seed a_seed = Prng::random_seed();
    const auto hint = compute_lwe_hint(db, a_seed, params.n, 2);
    for (std::size_t i = 0; i < c.records; ++i) {
      LweSecret s = LweSecret::sample(params, prng);
      auto qu = make_lwe_query(params, a_seed, shape, s, shape.column_of(i), prng);
      ASSERT_TRUE(qu.ok());
      auto ans = lwe_answer(db, *qu);
      ASSERT_TRUE(ans.ok());
      EXPECT_EQ(simplepir_decode(*ans, hint, hint_ld(params.n), s, shape.first_row_of(i),
                                 shape.record_bytes),
                db.record(i))
          << i;
    }
  }
}

TEST(SimplePir, QueryValidation) {
  const LweParams params = test_params();
  Prng prng = Prng::from_seed(Seed{6});
  auto shape = *choose_database_shape(10, 4, 8);
  LweSecret s = LweSecret::sample(params, prng);
  EXPECT_EQ(make_lwe_query(params, Seed{}, shape, s, shape.columns, prng).status().code(),
            StatusCode::kOutOfRange);
  LweSecret wrong = LweSecret::from_values(LweSecretKind::kBinary, std::vector<std::uint32_t>(3));
  EXPECT_EQ(make_lwe_query(params, Seed{}, shape, wrong, 0, prng).status().code(),
            StatusCode::kInvalidArgument);
  auto db = *LweDatabase::create(shape);
  std::vector<std::uint32_t> short_query(shape.stride - 1);
  EXPECT_EQ(lwe_answer(db, short_query).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privsearch::pir

#include "pir/lwe/lwe64.h"

#include <gtest/gtest.h>

#include <cmath>

#include "pir/lwe/kernels64.h"

namespace privsearch::pir {
namespace {

std::vector<std::uint64_t> random_u64(Prng& prng, std::size_t n) {
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = prng.next_u64();
  return v;
}

TEST(Lwe64Kernels, BatchMatvecEqualsScalarForEveryDigitPattern) {
  Prng prng = Prng::from_seed(Seed{7});
  for (std::size_t rows : {1u, 3u, 17u}) {
    for (std::size_t stride : {64u, 192u}) {
      for (std::size_t m : {1u, 2u, 3u, 4u, 7u}) {
        std::vector<std::uint8_t> d(rows * stride);
        prng.fill(d);
        auto v = random_u64(prng, m * stride);
        v[0] = ~std::uint64_t{0};      // every digit -1 after balancing
        v[1] = 0x8080808080808080ull;  // every digit at the -128 edge
        v[2] = 0x7f7f7f7f7f7f7f7full;
        std::vector<std::uint64_t> got(m * rows), want(m * rows);
        matvec_u8_u64_batch(d.data(), rows, stride, v.data(), m, got.data());
        matvec_u8_u64_batch_scalar(d.data(), rows, stride, v.data(), m, want.data());
        EXPECT_EQ(got, want) << rows << " x " << stride << ", m = " << m;
      }
    }
  }
}

TEST(Lwe64Kernels, BatchMatvecAcrossColumnChunksAndAnOddRow) {
  // 8,192-column chunks are flushed to int64: a row longer than one chunk, an odd row count.
  Prng prng = Prng::from_seed(Seed{10});
  const std::size_t rows = 3, stride = 8192 + 128, m = 2;
  std::vector<std::uint8_t> d(rows * stride);
  prng.fill(d);
  const auto v = random_u64(prng, m * stride);
  std::vector<std::uint64_t> got(m * rows), want(m * rows);
  matvec_u8_u64_batch(d.data(), rows, stride, v.data(), m, got.data());
  matvec_u8_u64_batch_scalar(d.data(), rows, stride, v.data(), m, want.data());
  EXPECT_EQ(got, want);
}

TEST(Lwe64Kernels, MatmulAccumulatesLikeScalar) {
  Prng prng = Prng::from_seed(Seed{8});
  for (std::size_t rows : {1u, 4u, 9u}) {
    const std::size_t cols = 70, stride = 128, ld = 64;
    std::vector<std::uint8_t> d(rows * stride, 0);
    for (std::size_t r = 0; r < rows; ++r) prng.fill(std::span(d.data() + r * stride, cols));
    const auto a = random_u64(prng, cols * ld);
    auto h0 = random_u64(prng, rows * ld);  // accumulation onto existing values
    auto h1 = h0;
    matmul_u8_u64(d.data(), rows, cols, stride, a.data(), ld, h0.data(), 2);
    matmul_u8_u64_scalar(d.data(), rows, cols, stride, a.data(), ld, h1.data());
    EXPECT_EQ(h0, h1) << rows;
  }
}

TEST(Lwe64Kernels, DotBatchEqualsScalar) {
  Prng prng = Prng::from_seed(Seed{9});
  const std::size_t rows = 5, n = 70, m = 9;
  std::vector<std::uint32_t> h(rows * n), s(m * n), a(m * rows), b(m * rows);
  for (auto& x : h) x = static_cast<std::uint32_t>(prng.next_u64());
  for (auto& x : s) x = static_cast<std::uint32_t>(prng.next_u64());
  dot_u32_batch(h.data(), rows, n, s.data(), m, a.data());
  dot_u32_batch_scalar(h.data(), rows, n, s.data(), m, b.data());
  EXPECT_EQ(a, b);
}

// Decrypts D u for every block and several queries at once and compares with integer
// arithmetic on the plaintext.
void round_trip(const Lwe64Params& params, std::size_t rows, std::size_t blocks, std::size_t width,
                int log_p, std::uint8_t max_entry, std::uint64_t seed, int drop_bits = 0) {
  Prng prng = Prng::from_seed(Seed{static_cast<std::uint8_t>(seed)});
  const std::size_t cols = blocks * width;
  const std::size_t stride = (cols + 63) / 64 * 64;
  std::vector<std::uint8_t> d(rows * stride, 0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      d[r * stride + c] = static_cast<std::uint8_t>(prng.uniform_below(max_entry + 1u));
  const Seed a_seed = Prng::random_seed();
  const auto hint = compute_lwe64_hint(d.data(), rows, cols, stride, a_seed, params.n, 2);
  const std::int64_t p = std::int64_t{1} << log_p;
  for (std::size_t first = 0; first < blocks; first += 3) {
    const std::size_t m = std::min<std::size_t>(3, blocks - first);
    std::vector<Lwe64Mask> masks;
    std::vector<std::uint64_t> queries;
    std::vector<std::vector<std::int32_t>> us;
    for (std::size_t i = 0; i < m; ++i) {
      masks.push_back(*Lwe64Mask::create(params, a_seed, cols, stride, prng));
      std::vector<std::int32_t> u(width);
      for (auto& x : u) x = static_cast<std::int32_t>(prng.uniform_below(255)) - 127;
      if (i == 0) u.assign(width, 127);  // the extreme of the range
      auto q = masks.back().encrypt_block(blocks, first + i, u, log_p);
      ASSERT_TRUE(q.ok()) << q.status().message();
      lwe64_switch_query(*q, drop_bits);
      queries.insert(queries.end(), q->begin(), q->end());
      us.push_back(u);
    }
    const auto answers = lwe64_answer(d.data(), rows, stride, queries, m, drop_bits);
    std::vector<const Lwe64Secret*> secrets;
    for (const auto& mk : masks) secrets.push_back(&mk.secret());
    auto got = lwe64_decode(answers, hint, rows, params.n, secrets, log_p);
    ASSERT_TRUE(got.ok()) << got.status().message();
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t r = 0; r < rows; ++r) {
        std::int64_t want = 0;
        for (std::size_t j = 0; j < width; ++j)
          want += d[r * stride + (first + i) * width + j] * static_cast<std::int64_t>(us[i][j]);
        EXPECT_EQ((*got)[i * rows + r], static_cast<std::uint32_t>(((want % p) + p) % p))
            << "block " << first + i << " row " << r;
      }
    }
  }
}

TEST(Lwe64, DecryptsExactInnerProductsForEveryBlockInsecureN) {
  const auto params = *find_lwe64_params("insecure-test-n64-ternary", true);
  round_trip(params, 13, 7, 24, 19, 15, 1);
  round_trip(params, 5, 4, 64, 20, 255, 2);  // whole byte range, widest p
}

TEST(Lwe64, ModulusSwitchedQueriesDecodeExactly) {
  // Queries sent as their high 56 or 48 bits: the provider multiplies 7 / 6 byte digits.
  const auto params = *find_lwe64_params("insecure-test-n64-ternary", true);
  round_trip(params, 13, 7, 24, 19, 15, 5, 8);
  round_trip(params, 13, 7, 24, 19, 15, 6, 16);
  round_trip(params, 5, 4, 64, 20, 255, 7, 16);
  EXPECT_LT(lwe64_decoding_failure_log2(params, 7 * 24, 15, 19, 16), -40.0);
  // The rounding error grows with the columns: 16 dropped bits no longer decode at 2^24 of
  // them, 8 still do.
  const auto secure = *find_lwe64_params("scoring-n2048-ternary");
  EXPECT_EQ(lwe64_decoding_failure_log2(secure, std::size_t{1} << 24, 15, 20, 16), 0.0);
  EXPECT_LT(lwe64_decoding_failure_log2(secure, std::size_t{1} << 24, 15, 20, 8), -40.0);
}

TEST(Lwe64Kernels, SixDigitMatvecIsExactModulo2To48) {
  Prng prng = Prng::from_seed(Seed{12});
  const std::size_t rows = 5, stride = 128, m = 3;
  std::vector<std::uint8_t> d(rows * stride);
  prng.fill(d);
  auto v = random_u64(prng, m * stride);
  for (auto& x : v) x >>= 16;
  v[0] = (std::uint64_t{1} << 48) - 1;
  std::vector<std::uint64_t> got(m * rows), want(m * rows);
  matvec_u8_u64_batch(d.data(), rows, stride, v.data(), m, got.data(), 6);
  matvec_u8_u64_batch_scalar(d.data(), rows, stride, v.data(), m, want.data());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i] << 16, want[i] << 16) << i;
  }
}

TEST(Lwe64, DecryptsExactInnerProductsWithTheSecureParameters) {
  const auto params = *find_lwe64_params("scoring-n2048-ternary");
  round_trip(params, 6, 5, 48, 19, 15, 3);
}

TEST(Lwe64, DecodingMarginAtScale) {
  const auto params = *find_lwe64_params("scoring-n2048-ternary");
  // 100M documents x 192 dimensions over 4,096-row clusters: 4.7M columns of 4-bit entries.
  EXPECT_LT(lwe64_decoding_failure_log2(params, 4'700'000, 15, 19), -1000.0);
  // p = 2^21 leaves Delta'/2 = 1024 < n/2 + 1: no margin at all.
  EXPECT_EQ(lwe64_decoding_failure_log2(params, 1000, 15, 21), 0.0);
}

TEST(Lwe64, RefusesBadArguments) {
  const auto params = *find_lwe64_params("insecure-test-n64-ternary", true);
  EXPECT_EQ(find_lwe64_params("insecure-test-n64-ternary").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(find_lwe64_params("nope").status().code(), StatusCode::kNotFound);
  Prng prng = Prng::from_seed(Seed{4});
  const Seed a_seed{};
  EXPECT_FALSE(Lwe64Mask::create(params, a_seed, 100, 100, prng).ok());  // stride not 64k
  EXPECT_FALSE(Lwe64Mask::create(params, a_seed, 0, 64, prng).ok());
  auto mask = Lwe64Mask::create(params, a_seed, 100, 128, prng);
  ASSERT_TRUE(mask.ok());
  std::vector<std::int32_t> u(20, 1);
  EXPECT_FALSE(mask->encrypt_block(5, 5, u, 19).ok());  // no such block
  EXPECT_FALSE(mask->encrypt_block(6, 0, u, 19).ok());  // 120 columns > 100
  EXPECT_FALSE(mask->encrypt_block(5, 0, u, 21).ok());  // p beyond the decodable range
  EXPECT_FALSE(mask->encrypt_block(5, 0, {}, 19).ok());
  std::vector<std::uint32_t> answers(3), hint(3 * 64);
  const Lwe64Secret* secrets[] = {&mask->secret()};
  EXPECT_TRUE(lwe64_decode(answers, hint, 3, 64, secrets, 19).ok());
  EXPECT_FALSE(lwe64_decode(std::span(answers).first(2), hint, 3, 64, secrets, 19).ok());
  EXPECT_FALSE(lwe64_decode(answers, std::span(hint).first(64), 3, 64, secrets, 19).ok());
  EXPECT_FALSE(lwe64_decode(answers, hint, 3, 64, secrets, 21).ok());
  const std::vector<std::uint32_t> wide_hint(3 * 32);
  EXPECT_FALSE(lwe64_decode(answers, wide_hint, 3, 32, secrets, 19).ok());  // secret n = 64
}

}  // namespace
}  // namespace privsearch::pir

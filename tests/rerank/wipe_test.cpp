// Zeroization attacked (docs/SECURITY.md, "Zeroization"): while the client decrypts a rerank
// response, every heap block it frees is copied aside (this binary replaces operator delete),
// and afterwards the copies are searched for the decrypted scores. A decrypted plaintext, a
// decoded slot vector or a decoding scratch buffer freed without wiping holds the scores' exact
// bits; with the wiping, no freed block holds any of them. Its own binary: the replacement
// operator delete is global.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "ckks/client/keygen.h"
#include "ckks/compact.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/param_sets.h"
#include "rerank/client/scores.h"
#include "rerank/kernels.h"
#include "rerank/layout.h"
#include "testing/test_util.h"

namespace {

// Freed blocks recorded while armed: an mmap'ed arena (no allocation inside delete).
constexpr std::size_t kArena = std::size_t{512} << 20;
std::atomic<bool> g_armed{false};
std::uint8_t* g_arena = nullptr;
std::atomic<std::size_t> g_used{0};

void record(void* p) {
  if (p == nullptr || !g_armed.load(std::memory_order_relaxed)) return;
  const std::size_t n = malloc_usable_size(p);
  const std::size_t at = g_used.fetch_add(n);
  if (at + n <= kArena) std::memcpy(g_arena + at, p, n);
}

}  // namespace

void* operator new(std::size_t n) {
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  record(p);
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  record(p);
  std::free(p);
}

namespace privsearch::rerank {
namespace {

TEST(Zeroization, DecryptingAResponseFreesNoCopyOfTheScores) {
  const auto params = *ckks::Params::create(ckks::rerank_n8192_literal());
  Prng prng = testing::test_prng(41);
  const auto encoder = *ckks::Encoder::create(params);
  const ckks::KeyGenerator keygen(params);
  const auto sk = keygen.create_secret_key(prng);
  const ckks::Evaluator evaluator(params);
  constexpr std::size_t kDim = 64, kK = 40;
  std::vector<double> query(kDim, 1.0 / std::sqrt(static_cast<double>(kDim)));
  std::vector<float> rows(kK * kDim);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i] = static_cast<float>(testing::uniform_pm1(prng) / 8.0);
  }
  const auto layout = *make_layout(params, Kernel::kFast, kDim, kK);
  const auto keys = *make_rotation_keys(layout, keygen, sk, prng);
  const auto enc = *encrypt_query(layout, params, sk, query, prng);
  const auto result = *evaluate_kernel(layout, encoder, evaluator, keys, enc, rows);
  std::vector<ckks::CompactCiphertext> compact;
  for (const auto& ct : result.outputs) compact.push_back(*ckks::compact(params, ct, {1.0, 18.0}));
  // Warm the decoder's caches (built once, kept: not the message), then record one decryption.
  ASSERT_TRUE(decrypt_compact_scores(layout, params, sk, compact).ok());
  void* arena = ::mmap(nullptr, kArena, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(arena, MAP_FAILED);
  g_arena = static_cast<std::uint8_t*>(arena);
  g_used = 0;
  g_armed = true;
  auto scores = decrypt_compact_scores(layout, params, sk, compact);
  g_armed = false;
  ASSERT_TRUE(scores.ok()) << scores.status().to_string();
  const std::size_t used = std::min(g_used.load(), kArena);
  ASSERT_LE(g_used.load(), kArena) << "the record arena overflowed";
  ASSERT_GT(used, 0u);  // decryption frees buffers: the test sees them
  std::size_t found = 0;
  for (const double s : *scores) {
    if (s == 0.0) continue;
    std::uint8_t pattern[sizeof(double)];
    std::memcpy(pattern, &s, sizeof(double));
    for (std::size_t at = 0; at + sizeof(double) <= used; at += sizeof(double)) {
      if (std::memcmp(g_arena + at, pattern, sizeof(double)) == 0) ++found;
    }
  }
  EXPECT_EQ(found, 0u) << "freed heap blocks still held " << found << " decrypted score values";
  ::munmap(arena, kArena);
}

}  // namespace
}  // namespace privsearch::rerank

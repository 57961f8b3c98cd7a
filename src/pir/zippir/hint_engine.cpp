#include "pir/zippir/hint_engine.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <thread>

#include "core/sha256.h"
#include "pir/lwe/lwe.h"
#include "pir/paillier/bigint.h"
#include "pir/paillier/mont_batch.h"
#include "pir/paillier/multiexp.h"

namespace privsearch::pir {
namespace {

// Group width g minimizing (b n / g) (2^g + rows): table products plus one product per row and
// group. 11 at the 1 GB shape (16,384 rows), 8-9 for a few thousand rows.
std::size_t group_bits_for(std::size_t bit_columns, std::size_t rows) {
  std::size_t best_g = 1;
  double best = 1e300;
  for (std::size_t g = 1; g <= 14; ++g) {
    const double groups = static_cast<double>((bit_columns + g - 1) / g);
    const double cost = groups * (std::ldexp(1.0, static_cast<int>(g)) + static_cast<double>(rows));
    if (cost < best) {
      best = cost;
      best_g = g;
    }
  }
  return best_g;
}
constexpr std::uint64_t kCkStream = 0x5a50434b00000000ull;  // "ZPCK"

// Runs products in batches of 8 through MontgomeryBatch.
class Batcher {
 public:
  explicit Batcher(const MontgomeryBatch& mb) : mb_(mb) {}
  void add(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out) {
    a_[count_] = a;
    b_[count_] = b;
    out_[count_] = out;
    if (++count_ == MontgomeryBatch::kLanes) flush();
  }
  void flush() {
    if (count_ == 0) return;
    mb_.mul(a_, b_, out_, count_);
    products_ += count_;
    count_ = 0;
  }
  std::size_t products() const { return products_; }

 private:
  const MontgomeryBatch& mb_;
  const std::uint64_t* a_[MontgomeryBatch::kLanes]{};
  const std::uint64_t* b_[MontgomeryBatch::kLanes]{};
  std::uint64_t* out_[MontgomeryBatch::kLanes]{};
  std::size_t count_ = 0;
  std::size_t products_ = 0;
};

// SHA-256(label | data) as a generator seed: independent streams from one public or client seed.
Seed labelled_seed(std::string_view label, std::span<const std::uint8_t> data) {
  Sha256 h;
  h.update(label);
  h.update(data);
  const Sha256Digest d = h.finish();
  Seed out{};
  std::copy(d.begin(), d.end(), out.begin());
  return out;
}

}  // namespace

Seed hint_mask_seed(const Seed& a_seed) {
  return labelled_seed("privsearch zippir hint mask v1", a_seed);
}

std::vector<std::uint32_t> rescaled_hint_exponents(const std::uint32_t* h, std::size_t rows,
                                                   std::size_t n, std::size_t ld, int hint_bits,
                                                   const Seed& mask_seed, std::size_t first_row) {
  const int shift = 32 - hint_bits;
  const std::uint64_t mask = (std::uint64_t{1} << hint_bits) - 1;
  const std::uint64_t half = shift == 0 ? 0 : std::uint64_t{1} << (shift - 1);
  std::vector<std::uint32_t> e(rows * n);
  std::vector<std::uint32_t> m(kLweMatrixChunkRows * n);
  for (std::size_t r0 = 0; r0 < rows; r0 += kLweMatrixChunkRows) {
    const std::size_t count = std::min(kLweMatrixChunkRows, rows - r0);
    expand_lwe_matrix(mask_seed, first_row + r0, count, n, n, m.data());
    for (std::size_t r = r0; r < r0 + count; ++r) {
      for (std::size_t j = 0; j < n; ++j) {
        const std::uint32_t masked = h[r * ld + j] + m[(r - r0) * n + j];  // mod 2^32
        const std::uint64_t rounded = ((masked + half) >> shift) & mask;
        e[r * n + j] = static_cast<std::uint32_t>(mask - rounded);
      }
    }
  }
  return e;
}

std::vector<mpz_class> expand_compression_randomness(const PaillierPublicKey& pk,
                                                     std::span<const std::uint8_t> client_seed,
                                                     std::uint64_t query_index, std::size_t n) {
  Prng prng =
      Prng::from_seed(labelled_seed("privsearch zippir compression randomness v1", client_seed),
                      kCkStream + query_index);
  std::vector<mpz_class> ck(n);
  for (auto& c : ck) {
    do {
      c = random_below(pk.ciphertext_modulus(), prng);
    } while (c == 0 || gcd(c, pk.n()) != 1);  // public values: rejection leaks nothing
  }
  return ck;
}

mpz_class packed_hint_entry(std::span<const std::uint32_t> exponents, std::size_t rows,
                            std::size_t n, std::size_t slots, int hint_bits, std::size_t i,
                            std::size_t j) {
  mpz_class v = 0;
  for (std::size_t l = slots; l-- > 0;) {
    mpz_mul_2exp(v.get_mpz_t(), v.get_mpz_t(), static_cast<mp_bitcnt_t>(hint_bits));
    const std::size_t r = i * slots + l;
    if (r < rows) v += static_cast<unsigned long>(exponents[r * n + j]);
  }
  return v;
}

std::vector<mpz_class> compute_compressed_hint_reference(const PaillierPublicKey& pk,
                                                         std::span<const mpz_class> ck_r,
                                                         std::span<const std::uint32_t> exponents,
                                                         std::size_t rows, std::size_t n,
                                                         std::size_t slots, int hint_bits) {
  const std::size_t packed = (rows + slots - 1) / slots;
  std::vector<mpz_class> out(packed);
  std::vector<mpz_class> exps(n);
  for (std::size_t i = 0; i < packed; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      exps[j] = packed_hint_entry(exponents, rows, n, slots, hint_bits, i, j);
    }
    out[i] = multi_exp(ck_r, exps, pk.ciphertext_modulus());
  }
  return out;
}

namespace {

// The shapes every stage of compute_compressed_hint shares.
struct HintShape {
  std::size_t rows, n, slots, b, L;
  std::size_t bits_per_row() const { return b * n; }
  std::size_t words_per_row() const { return (bits_per_row() + 63) / 64 + 1; }
};

// Bit strings of the exponent rows: bit u = j b + t is bit t of E[r][j].
std::vector<std::uint64_t> exponent_bitrows(const HintShape& h,
                                            std::span<const std::uint32_t> exponents) {
  const std::size_t wpr = h.words_per_row();
  std::vector<std::uint64_t> bitrows(h.rows * wpr, 0);
  for (std::size_t r = 0; r < h.rows; ++r) {
    std::uint64_t* w = bitrows.data() + r * wpr;
    for (std::size_t j = 0; j < h.n; ++j) {
      const std::uint64_t e = exponents[r * h.n + j];
      const std::size_t u = j * h.b;
      w[u / 64] |= e << (u % 64);
      if (u % 64 + h.b > 64) w[u / 64 + 1] |= e >> (64 - u % 64);
    }
  }
  return bitrows;
}

// Bit bases beta_{j,t} = ck_r[j]^{2^t} in Montgomery form: n b entries of L words.
std::vector<std::uint64_t> bit_bases(const HintShape& h, const MontgomeryBatch& mb,
                                     std::span<const mpz_class> ck_r, std::size_t& products) {
  const std::size_t L = h.L, b = h.b;
  std::vector<std::uint64_t> beta(h.bits_per_row() * L);
  for (std::size_t j = 0; j < h.n; ++j) mb.to_mont(ck_r[j], beta.data() + (j * b) * L);
  Batcher batch(mb);
  for (std::size_t t = 1; t < b; ++t) {
    for (std::size_t j = 0; j < h.n; ++j) {
      const std::uint64_t* prev = beta.data() + (j * b + t - 1) * L;
      batch.add(prev, prev, beta.data() + (j * b + t) * L);
    }
    batch.flush();
  }
  products += batch.products();
  return beta;
}

// Step 1: g_r = prod_u beta_u^{bit u of row r}, four-Russians style over groups of group_bits
// bit-columns (a table of all 2^group_bits subset products per group), groups split over
// threads; the threads' partial products are multiplied together at the end.
std::vector<std::uint64_t> row_products(const HintShape& h, const MontgomeryBatch& mb,
                                        const std::vector<std::uint64_t>& beta,
                                        const std::vector<std::uint64_t>& bitrows, unsigned threads,
                                        std::size_t& products, const std::atomic<bool>* cancel) {
  const std::size_t L = h.L, rows = h.rows, bits_per_row = h.bits_per_row();
  const std::size_t wpr = h.words_per_row();
  const std::size_t group_bits = group_bits_for(bits_per_row, rows);
  const std::size_t groups = (bits_per_row + group_bits - 1) / group_bits;
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(groups)));
  std::vector<std::vector<std::uint64_t>> acc(threads);
  std::vector<std::size_t> thread_products(threads, 0);
  std::vector<std::uint64_t> one(L);
  mb.one(one.data());
  auto worker = [&](unsigned t) {
    std::vector<std::uint64_t>& a = acc[t];
    a.resize(rows * L);
    for (std::size_t r = 0; r < rows; ++r) std::copy(one.begin(), one.end(), a.begin() + r * L);
    std::vector<std::uint64_t> table((std::size_t{1} << group_bits) * L);
    Batcher batch(mb);
    for (std::size_t g = t; g < groups; g += threads) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) break;
      const std::size_t u0 = g * group_bits;
      const std::size_t width = std::min<std::size_t>(group_bits, bits_per_row - u0);
      // table[m] = prod_{bits k of m} beta_{u0 + k}; table[0] is never used.
      for (std::size_t k = 0; k < width; ++k) {
        const std::uint64_t* base = beta.data() + (u0 + k) * L;
        const std::size_t lo = std::size_t{1} << k;
        std::copy(base, base + L, table.begin() + lo * L);
        for (std::size_t m = lo + 1; m < 2 * lo; ++m) {
          batch.add(table.data() + (m - lo) * L, base, table.data() + m * L);
        }
        batch.flush();
      }
      const std::uint64_t mask = (std::uint64_t{1} << width) - 1;
      for (std::size_t r = 0; r < rows; ++r) {
        const std::uint64_t* w = bitrows.data() + r * wpr;
        const std::size_t q = u0 / 64, s = u0 % 64;
        std::uint64_t bits = w[q] >> s;
        if (s + width > 64) bits |= w[q + 1] << (64 - s);
        bits &= mask;
        if (bits == 0) continue;  // public exponent bits
        batch.add(a.data() + r * L, table.data() + bits * L, a.data() + r * L);
      }
      batch.flush();
    }
    thread_products[t] = batch.products();
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();
  for (unsigned t = 0; t < threads; ++t) products += thread_products[t];
  std::vector<std::uint64_t> g_rows = std::move(acc[0]);
  Batcher batch(mb);
  for (unsigned t = 1; t < threads; ++t) {
    for (std::size_t r = 0; r < rows; ++r) {
      batch.add(g_rows.data() + r * L, acc[t].data() + r * L, g_rows.data() + r * L);
    }
    batch.flush();
    std::vector<std::uint64_t>().swap(acc[t]);
  }
  products += batch.products();
  return g_rows;
}

// Step 2: k_i = prod_l g_{ik+l}^{gamma^l} by Horner, eight packed rows per batch.
std::vector<mpz_class> pack_rows(const HintShape& h, const MontgomeryBatch& mb,
                                 const std::vector<std::uint64_t>& g_rows, std::size_t& products) {
  const std::size_t L = h.L, rows = h.rows, slots = h.slots;
  const std::size_t packed = (rows + slots - 1) / slots;
  std::vector<std::uint64_t> k_acc(packed * L);
  Batcher batch(mb);
  for (std::size_t i = 0; i < packed; ++i) {
    const std::size_t top = std::min(rows, (i + 1) * slots) - 1;
    std::copy(g_rows.begin() + top * L, g_rows.begin() + (top + 1) * L, k_acc.begin() + i * L);
  }
  for (std::size_t l = slots - 1; l-- > 0;) {
    // Blocks whose row i*slots + l exists (all but possibly the last block's upper slots).
    std::vector<std::size_t> live;
    for (std::size_t i = 0; i < packed; ++i) {
      if (i * slots + l < rows && i * slots + l < std::min(rows, (i + 1) * slots) - 1) {
        live.push_back(i);
      }
    }
    if (live.empty()) continue;
    for (std::size_t s = 0; s < h.b; ++s) {
      for (std::size_t i : live) {
        batch.add(k_acc.data() + i * L, k_acc.data() + i * L, k_acc.data() + i * L);
      }
      batch.flush();
    }
    for (std::size_t i : live) {
      batch.add(k_acc.data() + i * L, g_rows.data() + (i * slots + l) * L, k_acc.data() + i * L);
    }
    batch.flush();
  }
  products += batch.products();
  std::vector<mpz_class> out(packed);
  for (std::size_t i = 0; i < packed; ++i) out[i] = mb.from_mont(k_acc.data() + i * L);
  return out;
}

}  // namespace

std::vector<mpz_class> compute_compressed_hint(
    const PaillierPublicKey& pk, std::span<const mpz_class> ck_r,
    std::span<const std::uint32_t> exponents, std::size_t rows, std::size_t n, std::size_t slots,
    int hint_bits, unsigned threads, HintEngineStats* stats, const std::atomic<bool>* cancel) {
  auto mb_result = MontgomeryBatch::create(pk.ciphertext_modulus());
  PRIVSEARCH_CHECK(mb_result.ok(), "N^2 is odd");
  const MontgomeryBatch& mb = *mb_result;
  const HintShape h{rows, n, slots, static_cast<std::size_t>(hint_bits), mb.limbs()};
  std::size_t products = 0;
  const auto bitrows = exponent_bitrows(h, exponents);
  const auto beta = bit_bases(h, mb, ck_r, products);
  const auto g_rows = row_products(h, mb, beta, bitrows, threads, products, cancel);
  if (cancel != nullptr && cancel->load()) return {};
  auto out = pack_rows(h, mb, g_rows, products);
  if (stats != nullptr) stats->products = products;
  return out;
}

}  // namespace privsearch::pir

#include "suites/bench_compress.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "core/elapsed.h"
#include "eval/statistics.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "pir/zippir/compress.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;
const Progress compress_progress("bench compress: ");

// AEnc of every secret coordinate, split over threads (each with its own generator).
std::vector<mpz_class> encrypt_key(const pir::PaillierPublicKey& pk,
                                   const std::vector<std::uint64_t>& sk, unsigned threads) {
  std::vector<mpz_class> ck(sk.size());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      Prng prng = Prng::create();
      for (std::size_t i = t; i < sk.size(); i += threads) {
        ck[i] = *pk.encrypt(mpz_class(static_cast<unsigned long>(sk[i])), prng);
      }
    });
  }
  for (auto& th : pool) th.join();
  return ck;
}

std::string set_name(const pir::LweScheme& s) {
  return "n" + std::to_string(s.n) + "_q" + std::to_string(s.log_q) +
         (s.binary ? "_binary" : "_uniform");
}

}  // namespace

namespace {

using namespace privsearch::pir;

// The figures of one Paillier key over the paper's LWE sets.
class CompressBench {
 public:
  CompressBench(const CompressBenchOptions& o, PaillierKeyPair kp, unsigned threads)
      : o_(o), kp_(std::move(kp)), threads_(threads), prng_(Prng::create()) {}

  const PaillierPublicKey& pk() const { return kp_.public_key; }

  // Single compression with the plain (unpacked) key.
  Result<SingleCompression> single(const LweScheme& s, const std::vector<std::uint64_t>& sk,
                                   const std::vector<mpz_class>& ck, double keygen_s) {
    std::vector<double> comp_ms, dec_ms;
    bool ok = true;
    for (std::size_t r = 0; r < o_.runs; ++r) {
      const std::uint64_t mu = prng_.next_u64() & ((1u << s.log_p) - 1);
      const auto ct = lwe_encrypt(s, sk, mu, 3.2, prng_);
      auto t0 = Clock::now();
      PRIVSEARCH_ASSIGN_OR_RETURN(mpz_class c, compress_single(pk(), ck, s, ct));
      comp_ms.push_back(seconds_since(t0) * 1e3);
      t0 = Clock::now();
      ok = ok && decrypt_compressed_single(kp_.private_key, c, s) == mu;
      dec_ms.push_back(seconds_since(t0) * 1e3);
    }
    SingleCompression r;
    r.set = set_name(s);
    r.lwe_ciphertext_bytes = (s.n + 1) * static_cast<std::size_t>(s.log_q) / 8;
    r.compressed_bytes = pk().ciphertext_bytes();
    r.compress_ms = eval::describe(comp_ms).median;
    r.decrypt_ms = eval::describe(dec_ms).median;
    r.key_bytes = s.n * pk().ciphertext_bytes();
    r.key_encrypt_s = keygen_s;
    r.key_encrypt_threads = threads_;
    r.all_correct = ok;
    return r;
  }

  // The packed compression key: its size and the time to unpack it.
  Result<PackedKeyFigures> packed(const LweScheme& s, const std::vector<std::uint64_t>& sk) {
    const auto layout = packed_key_layout(s, pk());
    const auto pck = make_packed_compression_key(pk(), sk, layout, prng_);
    const auto t0 = Clock::now();
    const auto unpacked = unpack_compression_key(pk(), pck, layout, s.n);
    const double unpack_s = seconds_since(t0);
    mpz_class packed_scale = 1;
    for (std::size_t k = 1; k < layout.digits_per_ciphertext; ++k) packed_scale *= layout.delta;
    const auto ct = lwe_encrypt(s, sk, 1, 3.2, prng_);
    PRIVSEARCH_ASSIGN_OR_RETURN(mpz_class pc, compress_single(pk(), unpacked, s, ct, packed_scale));
    return PackedKeyFigures{set_name(s),
                            layout.digits_per_ciphertext,
                            layout.ciphertexts,
                            layout.ciphertexts * pk().ciphertext_bytes(),
                            s.n * pk().ciphertext_bytes(),
                            unpack_s,
                            decrypt_compressed_packed(kp_.private_key, pc, s, layout) == 1};
  }

  // `count` LWE ciphertexts compressed into as few Paillier ciphertexts as the scale allows.
  Result<BatchPoint> batch_point(const LweScheme& s, const std::vector<std::uint64_t>& sk,
                                 const std::vector<mpz_class>& ck, CompressionScale scale,
                                 std::size_t cap, std::size_t count) {
    std::vector<LweCiphertext> cts;
    std::vector<std::uint64_t> mus;
    for (std::size_t j = 0; j < count; ++j) {
      mus.push_back(prng_.next_u64() & ((1u << s.log_p) - 1));
      cts.push_back(lwe_encrypt(s, sk, mus.back(), 3.2, prng_));
    }
    const auto t0 = Clock::now();
    std::vector<mpz_class> outs;
    for (std::size_t j0 = 0; j0 < count; j0 += cap) {
      const std::size_t len = std::min(cap, count - j0);
      PRIVSEARCH_ASSIGN_OR_RETURN(
          mpz_class c, compress_batch(pk(), ck, s, std::span(cts).subspan(j0, len), scale));
      outs.push_back(c);
    }
    const double secs = seconds_since(t0);
    bool correct = true;
    for (std::size_t j0 = 0, k = 0; j0 < count; j0 += cap, ++k) {
      const std::size_t len = std::min(cap, count - j0);
      const auto got = decrypt_compressed_batch(kp_.private_key, outs[k], s, len, scale);
      correct = correct && std::equal(got.begin(), got.end(), mus.begin() + j0);
    }
    return BatchPoint{count,
                      outs.size(),
                      outs.size() * pk().ciphertext_bytes(),
                      count * (s.n + 1) * static_cast<std::size_t>(s.log_q) / 8,
                      secs,
                      correct};
  }

  // Batched curves of one set (binary keys: exact and overlapping scales; uniform: exact).
  Status batched(const LweScheme& s, const std::vector<std::uint64_t>& sk,
                 const std::vector<mpz_class>& ck, CompressBenchResult& out) {
    std::vector<CompressionScale> scales = {CompressionScale::kExact};
    if (s.binary && s.log_q == 32) scales.push_back(CompressionScale::kOverlap);
    for (const auto scale : scales) {
      const std::size_t cap = ciphertexts_per_plaintext(s, scale, pk().modulus_bits());
      const std::string key =
          set_name(s) + (scale == CompressionScale::kExact ? "_exact" : "_overlap");
      compress_progress(key + ": batched curve (" + std::to_string(cap) +
                        " per Paillier ciphertext)");
      auto& curve = out.batched[key];
      curve.per_paillier_ciphertext = cap;
      for (const std::size_t count : o_.batch_counts) {
        if (s.n == 630 && count > 50) continue;  // the q = 2^64 sets: curve up to 50
        PRIVSEARCH_ASSIGN_OR_RETURN(auto point, batch_point(s, sk, ck, scale, cap, count));
        if (count == 71 && s.n == 1400 && s.binary && scale == CompressionScale::kExact) {
          out.batch71_into_one_s = point.compress_s;
        }
        curve.curve.push_back(point);
      }
    }
    return Status();
  }

  Prng& prng() { return prng_; }

 private:
  const CompressBenchOptions& o_;
  PaillierKeyPair kp_;
  unsigned threads_;
  Prng prng_;
};

}  // namespace

Result<CompressBenchResult> run_compress_bench(const CompressBenchOptions& o) {
  const unsigned threads =
      o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  Prng prng = Prng::create();
  compress_progress("Paillier key generation (" + std::to_string(o.paillier_bits) + " bits)");
  PRIVSEARCH_ASSIGN_OR_RETURN(PaillierKeyPair kp, paillier_keygen(o.paillier_bits, prng));
  CompressBench bench(o, std::move(kp), threads);
  CompressBenchResult out;
  out.machine = machine_description();
  out.paillier_bits = o.paillier_bits;
  out.paillier_ciphertext_bytes = bench.pk().ciphertext_bytes();
  // The paper's parameter sets (section 5.1; reference notes 1.3): Concrete-style n = 630 with
  // q = 2^64, and ZipPIR's n = 1400 with q = 2^32, each with binary and uniform secrets.
  const std::vector<LweScheme> sets = {
      {630, 64, 4, false}, {630, 64, 4, true}, {1400, 32, 8, true}, {1400, 32, 8, false}};
  for (const LweScheme& s : sets) {
    compress_progress(set_name(s) + ": compression key (" + std::to_string(s.n) +
                      " Paillier encryptions)");
    const auto sk = lwe_keygen(s, bench.prng());
    const auto t0 = Clock::now();
    const auto ck = encrypt_key(bench.pk(), sk, threads);
    const double keygen_s = seconds_since(t0);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto single, bench.single(s, sk, ck, keygen_s));
    out.single.push_back(std::move(single));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto packed, bench.packed(s, sk));
    out.packed_key.push_back(std::move(packed));
    PRIVSEARCH_RETURN_IF_ERROR(bench.batched(s, sk, ck, out));
  }
  return out;
}

nlohmann::json CompressBenchResult::to_json() const {
  nlohmann::json out;
  out["suite"] = "compress";
  out["machine"] = machine;
  out["paillier_bits"] = paillier_bits;
  out["paillier_ciphertext_bytes"] = paillier_ciphertext_bytes;
  nlohmann::json singles = nlohmann::json::array(), packed = nlohmann::json::array();
  for (const auto& r : single) {
    singles.push_back(
        {{"set", r.set},
         {"lwe_ciphertext_bytes", r.lwe_ciphertext_bytes},
         {"compressed_bytes", r.compressed_bytes},
         {"compression_percent", 100.0 * (1.0 - static_cast<double>(r.compressed_bytes) /
                                                    static_cast<double>(r.lwe_ciphertext_bytes))},
         {"compress_ms", r.compress_ms},
         {"decrypt_ms", r.decrypt_ms},
         {"key_bytes", r.key_bytes},
         {"key_encrypt_s", r.key_encrypt_s},
         {"key_encrypt_threads", r.key_encrypt_threads},
         {"all_correct", r.all_correct}});
  }
  for (const auto& r : packed_key) {
    packed.push_back({{"set", r.set},
                      {"digits_per_ciphertext", r.digits_per_ciphertext},
                      {"packed_key_ciphertexts", r.packed_key_ciphertexts},
                      {"packed_key_bytes", r.packed_key_bytes},
                      {"unpacked_key_bytes", r.unpacked_key_bytes},
                      {"unpack_s", r.unpack_s},
                      {"correct", r.correct}});
  }
  nlohmann::json curves = nlohmann::json::object();
  for (const auto& [key, c] : batched) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : c.curve) {
      points.push_back({{"lwe_ciphertexts", p.lwe_ciphertexts},
                        {"paillier_ciphertexts", p.paillier_ciphertexts},
                        {"compressed_bytes", p.compressed_bytes},
                        {"uncompressed_bytes", p.uncompressed_bytes},
                        {"compress_s", p.compress_s},
                        {"correct", p.correct}});
    }
    curves[key] = {{"per_paillier_ciphertext", c.per_paillier_ciphertext}, {"curve", points}};
  }
  out["single"] = singles;
  out["packed_key"] = packed;
  out["batched"] = curves;
  if (batch71_into_one_s) out["batch71_into_one_s"] = *batch71_into_one_s;
  return out;
}

}  // namespace privsearch::tools

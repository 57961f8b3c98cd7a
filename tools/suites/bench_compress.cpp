#include "suites/bench_compress.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "core/elapsed.h"
#include "eval/statistics.h"
#include "harness/measure.h"
#include "pir/zippir/compress.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;
void progress(const std::string& s) { std::fprintf(stderr, "[bench compress] %s\n", s.c_str()); }

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
  return "n" + std::to_string(s.n) + "_q" + std::to_string(s.log_q) + (s.binary ? "_binary" : "_uniform");
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
  Result<nlohmann::json> single(const LweScheme& s, const std::vector<std::uint64_t>& sk,
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
    const std::size_t lwe_bytes = (s.n + 1) * static_cast<std::size_t>(s.log_q) / 8;
    return nlohmann::json{{"set", set_name(s)},
                          {"lwe_ciphertext_bytes", lwe_bytes},
                          {"compressed_bytes", pk().ciphertext_bytes()},
                          {"compression_percent",
                           100.0 * (1.0 - static_cast<double>(pk().ciphertext_bytes()) /
                                              static_cast<double>(lwe_bytes))},
                          {"compress_ms", eval::describe(comp_ms).median},
                          {"decrypt_ms", eval::describe(dec_ms).median},
                          {"key_bytes", s.n * pk().ciphertext_bytes()},
                          {"key_encrypt_s", keygen_s},
                          {"key_encrypt_threads", threads_},
                          {"all_correct", ok}};
  }

  // The packed compression key: its size and the time to unpack it.
  Result<nlohmann::json> packed(const LweScheme& s, const std::vector<std::uint64_t>& sk) {
    const auto layout = packed_key_layout(s, pk());
    const auto pck = make_packed_compression_key(pk(), sk, layout, prng_);
    const auto t0 = Clock::now();
    const auto unpacked = unpack_compression_key(pk(), pck, layout, s.n);
    const double unpack_s = seconds_since(t0);
    mpz_class packed_scale = 1;
    for (std::size_t k = 1; k < layout.digits_per_ciphertext; ++k) packed_scale *= layout.delta;
    const auto ct = lwe_encrypt(s, sk, 1, 3.2, prng_);
    PRIVSEARCH_ASSIGN_OR_RETURN(mpz_class pc, compress_single(pk(), unpacked, s, ct, packed_scale));
    return nlohmann::json{
        {"set", set_name(s)},
        {"digits_per_ciphertext", layout.digits_per_ciphertext},
        {"packed_key_ciphertexts", layout.ciphertexts},
        {"packed_key_bytes", layout.ciphertexts * pk().ciphertext_bytes()},
        {"unpacked_key_bytes", s.n * pk().ciphertext_bytes()},
        {"unpack_s", unpack_s},
        {"correct", decrypt_compressed_packed(kp_.private_key, pc, s, layout) == 1}};
  }

  // `count` LWE ciphertexts compressed into as few Paillier ciphertexts as the scale allows.
  Result<nlohmann::json> batch_point(const LweScheme& s, const std::vector<std::uint64_t>& sk,
                                     const std::vector<mpz_class>& ck, CompressionScale scale,
                                     std::size_t cap, std::size_t count, double& secs) {
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
    secs = seconds_since(t0);
    bool correct = true;
    for (std::size_t j0 = 0, k = 0; j0 < count; j0 += cap, ++k) {
      const std::size_t len = std::min(cap, count - j0);
      const auto got = decrypt_compressed_batch(kp_.private_key, outs[k], s, len, scale);
      correct = correct && std::equal(got.begin(), got.end(), mus.begin() + j0);
    }
    return nlohmann::json{
        {"lwe_ciphertexts", count},
        {"paillier_ciphertexts", outs.size()},
        {"compressed_bytes", outs.size() * pk().ciphertext_bytes()},
        {"uncompressed_bytes", count * (s.n + 1) * static_cast<std::size_t>(s.log_q) / 8},
        {"compress_s", secs},
        {"correct", correct}};
  }

  // Batched curves of one set (binary keys: exact and overlapping scales; uniform: exact).
  Status batched(const LweScheme& s, const std::vector<std::uint64_t>& sk, const std::vector<mpz_class>& ck,
                 nlohmann::json& batched, nlohmann::json& out) {
    std::vector<CompressionScale> scales = {CompressionScale::kExact};
    if (s.binary && s.log_q == 32) scales.push_back(CompressionScale::kOverlap);
    for (const auto scale : scales) {
      const std::size_t cap = ciphertexts_per_plaintext(s, scale, pk().modulus_bits());
      const std::string key =
          set_name(s) + (scale == CompressionScale::kExact ? "_exact" : "_overlap");
      progress(key + ": batched curve (" + std::to_string(cap) + " per Paillier ciphertext)");
      nlohmann::json curve = nlohmann::json::array();
      for (const std::size_t count : o_.batch_counts) {
        if (s.n == 630 && count > 50) continue;  // the q = 2^64 sets: curve up to 50
        double secs = 0;
        PRIVSEARCH_ASSIGN_OR_RETURN(auto point, batch_point(s, sk, ck, scale, cap, count, secs));
        curve.push_back(std::move(point));
        if (count == 71 && s.n == 1400 && s.binary && scale == CompressionScale::kExact) {
          out["batch71_into_one_s"] = secs;
        }
      }
      batched[key] = {{"per_paillier_ciphertext", cap}, {"curve", curve}};
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

Result<nlohmann::json> run_compress_bench(const CompressBenchOptions& o) {
  const unsigned threads =
      o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  Prng prng = Prng::create();
  progress("Paillier key generation (" + std::to_string(o.paillier_bits) + " bits)");
  PRIVSEARCH_ASSIGN_OR_RETURN(PaillierKeyPair kp, paillier_keygen(o.paillier_bits, prng));
  CompressBench bench(o, std::move(kp), threads);
  nlohmann::json out;
  out["suite"] = "compress";
  out["machine"] = machine_description();
  out["paillier_bits"] = o.paillier_bits;
  out["paillier_ciphertext_bytes"] = bench.pk().ciphertext_bytes();
  // The paper's parameter sets (section 5.1; reference notes 1.3): Concrete-style n = 630 with
  // q = 2^64, and ZipPIR's n = 1400 with q = 2^32, each with binary and uniform secrets.
  const std::vector<LweScheme> sets = {
      {630, 64, 4, false}, {630, 64, 4, true}, {1400, 32, 8, true}, {1400, 32, 8, false}};
  nlohmann::json singles = nlohmann::json::array(), packed = nlohmann::json::array();
  nlohmann::json batched = nlohmann::json::object();
  for (const LweScheme& s : sets) {
    progress(set_name(s) + ": compression key (" + std::to_string(s.n) + " Paillier encryptions)");
    const auto sk = lwe_keygen(s, bench.prng());
    const auto t0 = Clock::now();
    const auto ck = encrypt_key(bench.pk(), sk, threads);
    const double keygen_s = seconds_since(t0);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto single, bench.single(s, sk, ck, keygen_s));
    singles.push_back(std::move(single));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto pk_figures, bench.packed(s, sk));
    packed.push_back(std::move(pk_figures));
    PRIVSEARCH_RETURN_IF_ERROR(bench.batched(s, sk, ck, batched, out));
  }
  out["single"] = singles;
  out["packed_key"] = packed;
  out["batched"] = batched;
  return out;
}

}  // namespace privsearch::tools

#include "suites/bench_compress.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "harness/measure.h"
#include "pir/zippir/compress.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
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

Result<nlohmann::json> run_compress_bench(const CompressBenchOptions& o) {
  using namespace privsearch::pir;
  const unsigned threads =
      o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  Prng prng = Prng::create();
  progress("Paillier key generation (" + std::to_string(o.paillier_bits) + " bits)");
  PRIVSEARCH_ASSIGN_OR_RETURN(PaillierKeyPair kp, paillier_keygen(o.paillier_bits, prng));
  const auto& pk = kp.public_key;
  nlohmann::json out;
  out["suite"] = "compress";
  out["machine"] = machine_description();
  out["paillier_bits"] = o.paillier_bits;
  out["paillier_ciphertext_bytes"] = pk.ciphertext_bytes();
  // The paper's parameter sets (section 5.1; reference notes 1.3): Concrete-style n = 630 with
  // q = 2^64, and ZipPIR's n = 1400 with q = 2^32, each with binary and uniform secrets.
  const std::vector<LweScheme> sets = {
      {630, 64, 4, false}, {630, 64, 4, true}, {1400, 32, 8, true}, {1400, 32, 8, false}};
  nlohmann::json singles = nlohmann::json::array(), packed = nlohmann::json::array();
  nlohmann::json batched = nlohmann::json::object();
  for (const LweScheme& s : sets) {
    const std::string name = set_name(s);
    progress(name + ": compression key (" + std::to_string(s.n) + " Paillier encryptions)");
    const auto sk = lwe_keygen(s, prng);
    auto t0 = Clock::now();
    const auto ck = encrypt_key(pk, sk, threads);
    const double keygen_s = seconds_since(t0);
    // Single compression.
    std::vector<double> comp_ms, dec_ms;
    bool ok = true;
    for (std::size_t r = 0; r < o.runs; ++r) {
      const std::uint64_t mu = prng.next_u64() & ((1u << s.log_p) - 1);
      const auto ct = lwe_encrypt(s, sk, mu, 3.2, prng);
      t0 = Clock::now();
      PRIVSEARCH_ASSIGN_OR_RETURN(mpz_class c, compress_single(pk, ck, s, ct));
      comp_ms.push_back(seconds_since(t0) * 1e3);
      t0 = Clock::now();
      ok = ok && decrypt_compressed_single(kp.private_key, c, s) == mu;
      dec_ms.push_back(seconds_since(t0) * 1e3);
    }
    std::sort(comp_ms.begin(), comp_ms.end());
    std::sort(dec_ms.begin(), dec_ms.end());
    const std::size_t lwe_bytes = (s.n + 1) * static_cast<std::size_t>(s.log_q) / 8;
    singles.push_back({{"set", name},
                       {"lwe_ciphertext_bytes", lwe_bytes},
                       {"compressed_bytes", pk.ciphertext_bytes()},
                       {"compression_percent",
                        100.0 * (1.0 - static_cast<double>(pk.ciphertext_bytes()) /
                                           static_cast<double>(lwe_bytes))},
                       {"compress_ms", comp_ms[comp_ms.size() / 2]},
                       {"decrypt_ms", dec_ms[dec_ms.size() / 2]},
                       {"key_bytes", s.n * pk.ciphertext_bytes()},
                       {"key_encrypt_s", keygen_s},
                       {"key_encrypt_threads", threads},
                       {"all_correct", ok}});
    // Packed key.
    const auto layout = packed_key_layout(s, pk);
    const auto pck = make_packed_compression_key(pk, sk, layout, prng);
    t0 = Clock::now();
    const auto unpacked = unpack_compression_key(pk, pck, layout, s.n);
    const double unpack_s = seconds_since(t0);
    mpz_class packed_scale = 1;
    for (std::size_t k = 1; k < layout.digits_per_ciphertext; ++k) packed_scale *= layout.delta;
    const auto ct = lwe_encrypt(s, sk, 1, 3.2, prng);
    PRIVSEARCH_ASSIGN_OR_RETURN(mpz_class pc,
                                compress_single(pk, unpacked, s, ct, packed_scale));
    packed.push_back({{"set", name},
                      {"digits_per_ciphertext", layout.digits_per_ciphertext},
                      {"packed_key_ciphertexts", layout.ciphertexts},
                      {"packed_key_bytes", layout.ciphertexts * pk.ciphertext_bytes()},
                      {"unpacked_key_bytes", s.n * pk.ciphertext_bytes()},
                      {"unpack_s", unpack_s},
                      {"correct", decrypt_compressed_packed(kp.private_key, pc, s, layout) == 1}});
    // Batched curves (binary keys: exact and overlapping scales; uniform: exact).
    std::vector<CompressionScale> scales = {CompressionScale::kExact};
    if (s.binary && s.log_q == 32) scales.push_back(CompressionScale::kOverlap);
    for (const auto scale : scales) {
      const std::size_t cap = ciphertexts_per_plaintext(s, scale, pk.modulus_bits());
      const std::string key =
          name + (scale == CompressionScale::kExact ? "_exact" : "_overlap");
      progress(key + ": batched curve (" + std::to_string(cap) + " per Paillier ciphertext)");
      nlohmann::json curve = nlohmann::json::array();
      for (std::size_t count : o.batch_counts) {
        if (s.n == 630 && count > 50) continue;  // the q = 2^64 sets: curve up to 50
        std::vector<LweCiphertext> cts;
        std::vector<std::uint64_t> mus;
        for (std::size_t j = 0; j < count; ++j) {
          mus.push_back(prng.next_u64() & ((1u << s.log_p) - 1));
          cts.push_back(lwe_encrypt(s, sk, mus.back(), 3.2, prng));
        }
        t0 = Clock::now();
        std::vector<mpz_class> outs;
        for (std::size_t j0 = 0; j0 < count; j0 += cap) {
          const std::size_t len = std::min(cap, count - j0);
          PRIVSEARCH_ASSIGN_OR_RETURN(
              mpz_class c, compress_batch(pk, ck, s, std::span(cts).subspan(j0, len), scale));
          outs.push_back(c);
        }
        const double secs = seconds_since(t0);
        bool correct = true;
        for (std::size_t j0 = 0, k = 0; j0 < count; j0 += cap, ++k) {
          const std::size_t len = std::min(cap, count - j0);
          const auto got = decrypt_compressed_batch(kp.private_key, outs[k], s, len, scale);
          correct = correct && std::equal(got.begin(), got.end(), mus.begin() + j0);
        }
        const std::size_t bytes = outs.size() * pk.ciphertext_bytes();
        curve.push_back({{"lwe_ciphertexts", count},
                         {"paillier_ciphertexts", outs.size()},
                         {"compressed_bytes", bytes},
                         {"uncompressed_bytes",
                          count * (s.n + 1) * static_cast<std::size_t>(s.log_q) / 8},
                         {"compress_s", secs},
                         {"correct", correct}});
        if (count == 71 && s.n == 1400 && s.binary && scale == CompressionScale::kExact) {
          out["batch71_into_one_s"] = secs;
        }
      }
      batched[key] = {{"per_paillier_ciphertext", cap}, {"curve", curve}};
    }
  }
  out["single"] = singles;
  out["packed_key"] = packed;
  out["batched"] = batched;
  return out;
}

}  // namespace privsearch::tools

// The one CSPRNG of privsearch: AES-256-CTR keystream (OpenSSL EVP) keyed by a 32-byte seed.
//
// Prng::create() seeds from the operating system (OpenSSL RAND_bytes). Prng::from_seed(seed,
// stream) re-derives the same stream anywhere, which is how seeded objects (the uniform `a` of a
// symmetric ciphertext or of a key-switching key) travel as 32 bytes. `stream` separates
// independent streams under one seed (it becomes the high half of the CTR initial block), so
// one seed can expand many polynomials without overlap.
// Security: AES-CTR as a PRG is standard (NIST SP 800-90A CTR_DRBG without derivation); the
// key and buffered keystream are wiped on destruction. Move-only. Not thread-safe: one Prng per
// thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace privsearch {

using Seed = std::array<std::uint8_t, 32>;

class Prng {
 public:
  // A fresh seed from the OS CSPRNG. Aborts if the OS generator fails (nothing sane to do).
  static Seed random_seed();
  // A generator seeded from the OS.
  static Prng create();
  // The deterministic stream number `stream` under `seed`.
  static Prng from_seed(const Seed& seed, std::uint64_t stream = 0);

  ~Prng();
  Prng(Prng&& other) noexcept;
  Prng& operator=(Prng&& other) noexcept;
  Prng(const Prng&) = delete;
  Prng& operator=(const Prng&) = delete;

  void fill(std::span<std::uint8_t> out);
  std::uint64_t next_u64();
  // Uniform in [0, bound) by rejection on the smallest covering power of two; bound > 0.
  // WARNING: the number of draws varies; use only where that leaks nothing (public or
  // independent values).
  std::uint64_t uniform_below(std::uint64_t bound);

 private:
  Prng() = default;
  void refill();

  void* ctx_ = nullptr;  // EVP_CIPHER_CTX*
  static constexpr std::size_t kBufferBytes = 1024;
  alignas(64) std::array<std::uint8_t, kBufferBytes> buffer_{};
  std::size_t used_ = kBufferBytes;
};

}  // namespace privsearch

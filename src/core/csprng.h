// The one CSPRNG of privsearch: AES-256-CTR keystream (OpenSSL EVP) keyed by a 32-byte seed; in the
// OpenSSL-free WebAssembly build, the same AES-256-CTR streams for seeds and ChaCha20 for the
// OS-seeded (secret) ones (core/csprng_backend.h).
//
// Prng::create() seeds from the operating system (OpenSSL RAND_bytes). Prng::from_seed(seed,
// stream) re-derives the same stream anywhere, which is how seeded objects (the uniform `a` of a
// symmetric ciphertext or of a key-switching key) travel as 32 bytes. `stream` separates
// independent streams under one seed (it becomes the high half of the CTR initial block), so
// one seed can expand many polynomials without overlap.
// Security: AES-CTR as a PRG is standard (NIST SP 800-90A CTR_DRBG without derivation); the
// key and buffered keystream are wiped on destruction. Move-only. Not thread-safe: its holder
// serializes its use (core/owner_lock.h).
// fork(): a generator from create() notices that it runs in a child (a pthread_atfork counter)
// and rekeys itself from the OS before its next output, so a parent and its child never draw
// the same stream (OpenSSL's RAND_bytes is fork-safe itself). A from_seed() stream is
// deterministic by design and is not rekeyed.
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

  // How many times this process's ancestry has forked into it (a pthread_atfork counter): state
  // drawn before a fork (LWE masks, PIR offsets) compares it to know it is now shared with a
  // parent and must not be used.
  static std::uint64_t current_fork_generation();

 private:
  Prng() = default;
  void refill();

  // Rekeys an OS-seeded generator in a child process before it draws (see fork() above).
  void reseed_if_forked() {
    if (os_seeded_ && fork_generation_ != current_fork_generation()) reseed_after_fork();
  }
  void reseed_after_fork();

  void* ctx_ = nullptr;  // the backend's keystream (core/csprng_backend.h)
  bool os_seeded_ = false;
  std::uint64_t fork_generation_ = 0;  // the process's fork count when this key was drawn
  static constexpr std::size_t kBufferBytes = 1024;
  alignas(64) std::array<std::uint8_t, kBufferBytes> buffer_{};
  std::size_t used_ = kBufferBytes;
};

}  // namespace privsearch

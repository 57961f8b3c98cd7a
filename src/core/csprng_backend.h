// The keystream behind Prng (core/csprng.h), one backend per build (internal to core):
//   csprng_openssl.cpp   native: OpenSSL RAND_bytes, EVP_aes_256_ctr for every stream;
//   csprng_portable.cpp  WebAssembly: getentropy() (the browser's crypto.getRandomValues), the
//                        portable AES-256-CTR for reproducible streams (bit for bit OpenSSL's, so
//                        a seeded `a` expands to what the provider expands), ChaCha20 for the
//                        OS-seeded ones (constant time: they key secrets).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/csprng.h"

namespace privsearch::detail {

enum class KeystreamUse {
  kReproducible,  // Prng::from_seed: AES-256-CTR, counter block = stream (BE) || 0
  kSecret,        // Prng::create: any CSPRNG stream (never re-derived elsewhere)
};

// Fills `out` from the operating system's CSPRNG; aborts when it fails.
void os_entropy(std::span<std::uint8_t> out);
void* open_keystream(const Seed& key, std::uint64_t stream, KeystreamUse use);
void next_keystream(void* keystream, std::span<std::uint8_t> out);
void close_keystream(void* keystream);

}  // namespace privsearch::detail

#include <unistd.h>

#include <array>
#include <memory>
#include <variant>

#include "core/check.h"
#include "core/csprng_backend.h"
#include "core/portable/aes256.h"
#include "core/portable/chacha20.h"

namespace privsearch::detail {
namespace {

using Stream = std::variant<portable::Aes256Ctr, portable::ChaCha20>;

}  // namespace

// getentropy() reads at most 256 bytes a call (emscripten: crypto.getRandomValues).
void os_entropy(std::span<std::uint8_t> out) {
  for (std::size_t done = 0; done < out.size();) {
    const std::size_t take = std::min<std::size_t>(256, out.size() - done);
    PRIVSEARCH_CHECK(::getentropy(out.data() + done, take) == 0, "getentropy failed");
    done += take;
  }
}

void* open_keystream(const Seed& key, std::uint64_t stream, KeystreamUse use) {
  if (use == KeystreamUse::kSecret) {
    // A fresh random key per generator: the nonce may be zero.
    return new Stream(std::in_place_type<portable::ChaCha20>, key, 0,
                      std::array<std::uint8_t, 12>{});
  }
  std::array<std::uint8_t, 16> iv{};
  for (int i = 0; i < 8; ++i)
    iv[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(stream >> (56 - 8 * i));
  return new Stream(std::in_place_type<portable::Aes256Ctr>, key, iv);
}

void next_keystream(void* keystream, std::span<std::uint8_t> out) {
  std::visit([&](auto& s) { s.generate(out.data(), out.size()); },
             *static_cast<Stream*>(keystream));
}

void close_keystream(void* keystream) { delete static_cast<Stream*>(keystream); }

}  // namespace privsearch::detail

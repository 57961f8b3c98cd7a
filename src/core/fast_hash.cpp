#include "core/fast_hash.h"

#include <cstring>

namespace privsearch {

std::uint64_t fast_hash(const void* data, std::size_t bytes, std::uint64_t seed) {
  constexpr std::uint64_t kMul[4] = {0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL,
                                     0x165667b19e3779f9ULL, 0xd6e8feb86659fd93ULL};
  std::uint64_t lane[4] = {0x243f6a8885a308d3ULL ^ seed, 0x13198a2e03707344ULL,
                           0xa4093822299f31d0ULL, 0x082efa98ec4e6c89ULL};
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    for (int l = 0; l < 4; ++l) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * static_cast<std::size_t>(l), 8);
      lane[l] = (lane[l] ^ w) * kMul[l];
      lane[l] ^= lane[l] >> 32;
    }
  }
  // The tail two bytes at a time (a half or half a float), then an odd last byte; the length
  // joins the final mix so that data differing only by trailing zero bytes differs.
  for (; i + 2 <= bytes; i += 2) {
    std::uint16_t w;
    std::memcpy(&w, p + i, 2);
    lane[0] = (lane[0] ^ w) * kMul[0];
    lane[0] ^= lane[0] >> 32;
  }
  if (i < bytes) {
    lane[1] = (lane[1] ^ (std::uint64_t{p[i]} | 0x100)) * kMul[1];
    lane[1] ^= lane[1] >> 32;
  }
  std::uint64_t h = bytes;
  for (int l = 0; l < 4; ++l) h = (h ^ lane[l]) * kMul[(l + 1) % 4] ^ (h >> 29);
  return h;
}

}  // namespace privsearch

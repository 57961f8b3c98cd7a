#include "core/portable/chacha20.h"

#include <algorithm>
#include <cstring>

#include "core/secure_buffer.h"

namespace privsearch::portable {
namespace {

std::uint32_t load_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
         (std::uint32_t{p[3]} << 24);
}
constexpr std::uint32_t rotl(std::uint32_t v, int c) { return (v << c) | (v >> (32 - c)); }

// The quarter round (RFC 8439 section 2.1).
void quarter_round(std::array<std::uint32_t, 16>& x, int a, int b, int c, int d) {
  auto& xa = x[static_cast<std::size_t>(a)];
  auto& xb = x[static_cast<std::size_t>(b)];
  auto& xc = x[static_cast<std::size_t>(c)];
  auto& xd = x[static_cast<std::size_t>(d)];
  xa += xb;
  xd = rotl(xd ^ xa, 16);
  xc += xd;
  xb = rotl(xb ^ xc, 12);
  xa += xb;
  xd = rotl(xd ^ xa, 8);
  xc += xd;
  xb = rotl(xb ^ xc, 7);
}

}  // namespace

ChaCha20::ChaCha20(const std::array<std::uint8_t, 32>& key, std::uint32_t counter,
                   const std::array<std::uint8_t, 12>& nonce) {
  // "expand 32-byte k", the key, the block counter, the nonce (section 2.3).
  state_[0] = 0x61707865;
  state_[1] = 0x3320646e;
  state_[2] = 0x79622d32;
  state_[3] = 0x6b206574;
  for (std::size_t i = 0; i < 8; ++i) state_[4 + i] = load_le32(key.data() + 4 * i);
  state_[12] = counter;
  for (std::size_t i = 0; i < 3; ++i) state_[13 + i] = load_le32(nonce.data() + 4 * i);
}

ChaCha20::~ChaCha20() {
  secure_zero(state_.data(), sizeof(state_));
  secure_zero(block_.data(), block_.size());
}

// The block function (section 2.3): 20 rounds (10 column + diagonal pairs), then the input
// added back, serialized little-endian.
void ChaCha20::next_block() {
  std::array<std::uint32_t, 16> x = state_;
  for (int i = 0; i < 10; ++i) {
    quarter_round(x, 0, 4, 8, 12);
    quarter_round(x, 1, 5, 9, 13);
    quarter_round(x, 2, 6, 10, 14);
    quarter_round(x, 3, 7, 11, 15);
    quarter_round(x, 0, 5, 10, 15);
    quarter_round(x, 1, 6, 11, 12);
    quarter_round(x, 2, 7, 8, 13);
    quarter_round(x, 3, 4, 9, 14);
  }
  for (std::size_t i = 0; i < 16; ++i) {
    const std::uint32_t v = x[i] + state_[i];
    for (std::size_t b = 0; b < 4; ++b) block_[4 * i + b] = static_cast<std::uint8_t>(v >> (8 * b));
  }
  secure_zero(x.data(), sizeof(x));
  // The 32-bit block counter carries into the nonce's first word (as OpenSSL's EVP_chacha20
  // does), so the stream never wraps onto its first block: 2^64 blocks per key and nonce.
  if (++state_[12] == 0) ++state_[13];
  used_ = 0;
}

void ChaCha20::generate(std::uint8_t* out, std::size_t n) {
  for (std::size_t done = 0; done < n;) {
    if (used_ == 64) next_block();
    const std::size_t take = std::min(n - done, 64 - used_);
    std::memcpy(out + done, block_.data() + used_, take);
    used_ += take;
    done += take;
  }
}

}  // namespace privsearch::portable

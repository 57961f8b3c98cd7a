#include "core/portable/aes256.h"

#include <cstring>

#include "core/secure_buffer.h"

namespace privsearch::portable {
namespace {

// GF(2^8) modulo x^8 + x^4 + x^3 + x + 1 (FIPS 197, section 4.2).
constexpr std::uint8_t xtime(std::uint8_t a) {
  return static_cast<std::uint8_t>((a << 1) ^ ((a >> 7) * 0x1b));
}
constexpr std::uint8_t gf_mul(std::uint8_t a, std::uint8_t b) {
  std::uint8_t r = 0;
  for (int i = 0; i < 8; ++i) {
    if (b & 1) r ^= a;
    a = xtime(a);
    b >>= 1;
  }
  return r;
}
// The S-box from its definition (section 5.1.1): the inverse in GF(2^8) (0 -> 0), then the
// affine map b ^ rotl(b,1) ^ rotl(b,2) ^ rotl(b,3) ^ rotl(b,4) ^ 0x63. Inverses through the
// powers of the generator 3: x = 3^l, x^-1 = 3^(255 - l).
constexpr std::array<std::uint8_t, 256> make_sbox() {
  std::array<std::uint8_t, 256> power{}, log{};
  std::uint8_t p = 1;
  for (int i = 0; i < 255; ++i) {
    power[static_cast<std::size_t>(i)] = p;
    log[p] = static_cast<std::uint8_t>(i);
    p = gf_mul(p, 3);
  }
  std::array<std::uint8_t, 256> s{};
  for (int x = 0; x < 256; ++x) {
    const std::uint8_t inv =
        x == 0 ? 0
               : power[static_cast<std::size_t>((255 - log[static_cast<std::size_t>(x)]) % 255)];
    std::uint8_t b = inv, r = inv;
    for (int i = 0; i < 4; ++i) {
      b = static_cast<std::uint8_t>((b << 1) | (b >> 7));
      r ^= b;
    }
    s[static_cast<std::size_t>(x)] = static_cast<std::uint8_t>(r ^ 0x63);
  }
  return s;
}
constexpr auto kSbox = make_sbox();

std::uint32_t sub_word(std::uint32_t w) {
  return (std::uint32_t{kSbox[w >> 24]} << 24) | (std::uint32_t{kSbox[(w >> 16) & 0xff]} << 16) |
         (std::uint32_t{kSbox[(w >> 8) & 0xff]} << 8) | kSbox[w & 0xff];
}

// MixColumns on one column (section 5.1.3).
void mix_column(std::uint8_t* c) {
  const std::uint8_t a0 = c[0], a1 = c[1], a2 = c[2], a3 = c[3];
  const std::uint8_t all = a0 ^ a1 ^ a2 ^ a3;
  c[0] = static_cast<std::uint8_t>(a0 ^ all ^ xtime(a0 ^ a1));
  c[1] = static_cast<std::uint8_t>(a1 ^ all ^ xtime(a1 ^ a2));
  c[2] = static_cast<std::uint8_t>(a2 ^ all ^ xtime(a2 ^ a3));
  c[3] = static_cast<std::uint8_t>(a3 ^ all ^ xtime(a3 ^ a0));
}

}  // namespace

// Key expansion for Nk = 8, Nr = 14 (section 5.2).
Aes256Ctr::Aes256Ctr(const std::array<std::uint8_t, 32>& key,
                     const std::array<std::uint8_t, 16>& iv)
    : counter_(iv) {
  for (std::size_t i = 0; i < 8; ++i) {
    round_keys_[i] = (std::uint32_t{key[4 * i]} << 24) | (std::uint32_t{key[4 * i + 1]} << 16) |
                     (std::uint32_t{key[4 * i + 2]} << 8) | key[4 * i + 3];
  }
  std::uint32_t rcon = 0x01;
  for (std::size_t i = 8; i < 60; ++i) {
    std::uint32_t t = round_keys_[i - 1];
    if (i % 8 == 0) {
      t = sub_word((t << 8) | (t >> 24)) ^ (rcon << 24);
      rcon = xtime(static_cast<std::uint8_t>(rcon));
    } else if (i % 8 == 4) {
      t = sub_word(t);
    }
    round_keys_[i] = round_keys_[i - 8] ^ t;
  }
}

Aes256Ctr::~Aes256Ctr() {
  secure_zero(round_keys_.data(), sizeof(round_keys_));
  secure_zero(block_.data(), block_.size());
}

void Aes256Ctr::encrypt_block(const std::uint8_t in[16], std::uint8_t out[16]) const {
  // The state in column-major order: s[4c + r] (section 3.4), so bytes stay in input order.
  std::uint8_t s[16];
  auto add_round_key = [&](std::size_t round) {
    for (std::size_t c = 0; c < 4; ++c) {
      const std::uint32_t k = round_keys_[4 * round + c];
      for (std::size_t r = 0; r < 4; ++r)
        s[4 * c + r] ^= static_cast<std::uint8_t>(k >> (24 - 8 * r));
    }
  };
  std::memcpy(s, in, 16);
  add_round_key(0);
  for (std::size_t round = 1; round <= 14; ++round) {
    for (auto& b : s) b = kSbox[b];
    // ShiftRows: row r rotates left by r columns.
    std::uint8_t t[16];
    for (std::size_t c = 0; c < 4; ++c) {
      for (std::size_t r = 0; r < 4; ++r) t[4 * c + r] = s[4 * ((c + r) % 4) + r];
    }
    std::memcpy(s, t, 16);
    if (round != 14) {
      for (std::size_t c = 0; c < 4; ++c) mix_column(s + 4 * c);
    }
    add_round_key(round);
  }
  std::memcpy(out, s, 16);
  secure_zero(s, sizeof(s));
}

void Aes256Ctr::generate(std::uint8_t* out, std::size_t n) {
  for (std::size_t done = 0; done < n;) {
    if (used_ == 16) {
      encrypt_block(counter_.data(), block_.data());
      for (std::size_t i = 16; i-- > 0;) {  // the whole block is one big-endian counter
        if (++counter_[i] != 0) break;
      }
      used_ = 0;
    }
    const std::size_t take = std::min(n - done, 16 - used_);
    std::memcpy(out + done, block_.data() + used_, take);
    used_ += take;
    done += take;
  }
}

}  // namespace privsearch::portable

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

// The round tables (FIPS 197 section 5.1 fused, the classic 32-bit form): T0[x] is the column
// (2 S(x), S(x), S(x), 3 S(x)) that SubBytes + MixColumns make of byte x in row 0; rows 1-3 are
// byte rotations of it. One round of a column is four lookups and four xors.
constexpr std::array<std::uint32_t, 256> make_round_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::size_t x = 0; x < 256; ++x) {
    const std::uint8_t v = kSbox[x];
    t[x] = (std::uint32_t{xtime(v)} << 24) | (std::uint32_t{v} << 16) | (std::uint32_t{v} << 8) |
           std::uint32_t{static_cast<std::uint8_t>(xtime(v) ^ v)};
  }
  return t;
}
constexpr std::uint32_t rotr8(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
constexpr std::array<std::uint32_t, 256> rotated(const std::array<std::uint32_t, 256>& t, int n) {
  std::array<std::uint32_t, 256> out{};
  for (std::size_t x = 0; x < 256; ++x) out[x] = rotr8(t[x], n);
  return out;
}
constexpr auto kT0 = make_round_table();
constexpr auto kT1 = rotated(kT0, 8), kT2 = rotated(kT0, 16), kT3 = rotated(kT0, 24);

// Column c of the next round: row r read from column c + r (ShiftRows), through T_r.
inline std::uint32_t round_column(const std::uint32_t* w, std::size_t c, std::uint32_t key) {
  return kT0[w[c] >> 24] ^ kT1[(w[(c + 1) & 3] >> 16) & 0xff] ^ kT2[(w[(c + 2) & 3] >> 8) & 0xff] ^
         kT3[w[(c + 3) & 3] & 0xff] ^ key;
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

// The state as four big-endian column words w[c] (bytes 4c..4c+3, row 0 the high byte);
// ShiftRows makes column c of the next round read row r from column c + r.
void Aes256Ctr::encrypt_block(const std::uint8_t in[16], std::uint8_t out[16]) const {
  std::uint32_t w[4], e[4];
  for (std::size_t c = 0; c < 4; ++c) {
    w[c] = ((std::uint32_t{in[4 * c]} << 24) | (std::uint32_t{in[4 * c + 1]} << 16) |
            (std::uint32_t{in[4 * c + 2]} << 8) | in[4 * c + 3]) ^
           round_keys_[c];
  }
  for (std::size_t round = 1; round < 14; ++round) {
    const std::uint32_t* k = round_keys_.data() + 4 * round;
    e[0] = round_column(w, 0, k[0]);
    e[1] = round_column(w, 1, k[1]);
    e[2] = round_column(w, 2, k[2]);
    e[3] = round_column(w, 3, k[3]);
    std::memcpy(w, e, sizeof(w));
  }
  for (std::size_t c = 0; c < 4; ++c) {  // the last round: no MixColumns
    const std::uint32_t v = (std::uint32_t{kSbox[w[c] >> 24]} << 24) |
                            (std::uint32_t{kSbox[(w[(c + 1) % 4] >> 16) & 0xff]} << 16) |
                            (std::uint32_t{kSbox[(w[(c + 2) % 4] >> 8) & 0xff]} << 8) |
                            kSbox[w[(c + 3) % 4] & 0xff];
    e[c] = v ^ round_keys_[56 + c];
  }
  for (std::size_t c = 0; c < 4; ++c) {
    for (std::size_t r = 0; r < 4; ++r)
      out[4 * c + r] = static_cast<std::uint8_t>(e[c] >> (24 - 8 * r));
  }
  secure_zero(w, sizeof(w));
  secure_zero(e, sizeof(e));
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

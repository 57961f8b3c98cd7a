#include "core/csprng.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <bit>
#include <cstring>
#include <utility>

#include "core/check.h"
#include "core/secure_buffer.h"

namespace privsearch {

namespace {
constexpr std::array<std::uint8_t, 1024> kZeros{};
}  // namespace

Seed Prng::random_seed() {
  Seed seed{};
  PRIVSEARCH_CHECK(RAND_bytes(seed.data(), static_cast<int>(seed.size())) == 1,
                   "OpenSSL RAND_bytes failed");
  return seed;
}

Prng Prng::create() {
  Seed seed = random_seed();
  Prng p = from_seed(seed, 0);
  secure_zero(seed.data(), seed.size());
  return p;
}

Prng Prng::from_seed(const Seed& seed, std::uint64_t stream) {
  Prng p;
  auto* ctx = EVP_CIPHER_CTX_new();
  PRIVSEARCH_CHECK(ctx != nullptr, "EVP_CIPHER_CTX_new failed");
  // Initial counter block: stream number (big endian) || 64-bit block counter starting at 0.
  std::array<std::uint8_t, 16> iv{};
  for (int i = 0; i < 8; ++i) iv[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(stream >> (56 - 8 * i));
  PRIVSEARCH_CHECK(
      EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nullptr, seed.data(), iv.data()) == 1,
      "EVP_EncryptInit_ex failed");
  p.ctx_ = ctx;
  return p;
}

Prng::~Prng() {
  if (ctx_ != nullptr) EVP_CIPHER_CTX_free(static_cast<EVP_CIPHER_CTX*>(ctx_));
  secure_zero(buffer_.data(), buffer_.size());
}

Prng::Prng(Prng&& other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)), buffer_(other.buffer_), used_(other.used_) {
  secure_zero(other.buffer_.data(), other.buffer_.size());
  other.used_ = kBufferBytes;
}

Prng& Prng::operator=(Prng&& other) noexcept {
  if (this != &other) {
    if (ctx_ != nullptr) EVP_CIPHER_CTX_free(static_cast<EVP_CIPHER_CTX*>(ctx_));
    ctx_ = std::exchange(other.ctx_, nullptr);
    buffer_ = other.buffer_;
    used_ = other.used_;
    secure_zero(other.buffer_.data(), other.buffer_.size());
    other.used_ = kBufferBytes;
  }
  return *this;
}

void Prng::refill() {
  PRIVSEARCH_CHECK(ctx_ != nullptr, "use of a moved-from Prng");
  int len = 0;
  PRIVSEARCH_CHECK(EVP_EncryptUpdate(static_cast<EVP_CIPHER_CTX*>(ctx_), buffer_.data(), &len,
                                     kZeros.data(), static_cast<int>(kBufferBytes)) == 1 &&
                       len == static_cast<int>(kBufferBytes),
                   "EVP_EncryptUpdate failed");
  used_ = 0;
}

void Prng::fill(std::span<std::uint8_t> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    if (used_ == kBufferBytes) refill();
    const std::size_t take = std::min(out.size() - done, kBufferBytes - used_);
    std::memcpy(out.data() + done, buffer_.data() + used_, take);
    secure_zero(buffer_.data() + used_, take);
    used_ += take;
    done += take;
  }
}

std::uint64_t Prng::next_u64() {
  if (kBufferBytes - used_ < 8) {
    std::uint64_t v = 0;
    fill({reinterpret_cast<std::uint8_t*>(&v), sizeof(v)});
    return v;
  }
  std::uint64_t v;
  std::memcpy(&v, buffer_.data() + used_, 8);
  used_ += 8;
  return v;
}

std::uint64_t Prng::uniform_below(std::uint64_t bound) {
  PRIVSEARCH_CHECK(bound > 0, "uniform_below(0)");
  if (bound == 1) return 0;
  const int bits = static_cast<int>(std::bit_width(bound - 1));
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  for (;;) {
    const std::uint64_t v = next_u64() & mask;
    if (v < bound) return v;
  }
}

}  // namespace privsearch

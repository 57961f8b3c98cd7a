#include "pir/paillier/bigint.h"

#include <openssl/crypto.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/check.h"

namespace privsearch::pir {
namespace {

void* wiping_alloc(std::size_t size) {
  void* p = std::malloc(size);
  PRIVSEARCH_CHECK(p != nullptr, "GMP allocation failed");
  return p;
}

void wiping_free(void* ptr, std::size_t size) {
  if (ptr == nullptr) return;
  OPENSSL_cleanse(ptr, size);
  std::free(ptr);
}

// Never lets realloc move a block without wiping the old copy.
void* wiping_realloc(void* ptr, std::size_t old_size, std::size_t new_size) {
  void* fresh = wiping_alloc(new_size);
  if (ptr != nullptr) {
    std::memcpy(fresh, ptr, old_size < new_size ? old_size : new_size);
    wiping_free(ptr, old_size);
  }
  return fresh;
}

}  // namespace

void install_wiping_gmp_allocator() {
  static std::once_flag once;
  std::call_once(once, [] { mp_set_memory_functions(wiping_alloc, wiping_realloc, wiping_free); });
}

std::size_t bit_length(const mpz_class& v) {
  return mpz_sgn(v.get_mpz_t()) == 0 ? 0 : mpz_sizeinbase(v.get_mpz_t(), 2);
}

mpz_class random_bits(std::size_t bits, Prng& prng) {
  std::vector<std::uint8_t> buf((bits + 7) / 8);
  prng.fill(buf);
  if (bits % 8 != 0) buf.back() &= static_cast<std::uint8_t>((1u << (bits % 8)) - 1);
  mpz_class out = read_fixed(buf);
  OPENSSL_cleanse(buf.data(), buf.size());
  return out;
}

mpz_class random_below(const mpz_class& bound, Prng& prng) {
  PRIVSEARCH_CHECK(mpz_sgn(bound.get_mpz_t()) > 0, "random_below needs a positive bound");
  const std::size_t bits = bit_length(bound);
  for (;;) {
    mpz_class v = random_bits(bits, prng);
    if (v < bound) return v;
  }
}

Status write_fixed(const mpz_class& value, std::span<std::uint8_t> out) {
  if (mpz_sgn(value.get_mpz_t()) < 0) return out_of_range_error("negative big integer");
  const std::size_t need = (bit_length(value) + 7) / 8;
  if (need > out.size()) {
    return out_of_range_error("big integer of " + std::to_string(need) + " bytes does not fit in " +
                              std::to_string(out.size()));
  }
  std::memset(out.data(), 0, out.size());
  std::size_t count = 0;
  mpz_export(out.data(), &count, -1, 1, 0, 0, value.get_mpz_t());
  return Status();
}

mpz_class read_fixed(std::span<const std::uint8_t> bytes) {
  mpz_class out;
  if (!bytes.empty()) mpz_import(out.get_mpz_t(), bytes.size(), -1, 1, 0, 0, bytes.data());
  return out;
}

std::vector<std::uint8_t> to_fixed_bytes(const mpz_class& value, std::size_t width) {
  std::vector<std::uint8_t> out(width);
  PRIVSEARCH_CHECK(write_fixed(value, out).ok(), "to_fixed_bytes: value wider than its field");
  return out;
}

}  // namespace privsearch::pir

// Zeroizing, move-only storage for secrets (secret keys, LWE secrets, sampled noise).
//
// SecureVector<T> owns a heap array of trivially copyable T and wipes it with OPENSSL_cleanse
// (which the compiler cannot elide) on destruction, on resize and when moved from. It cannot be
// copied, so a secret is never duplicated by accident; clone() makes an explicit copy.
// Thread safety: like std::vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace privsearch {

// Overwrites `size` bytes at `data` with zeros in a way the optimizer keeps.
void secure_zero(void* data, std::size_t size);

template <typename T>
class SecureVector {
  static_assert(std::is_trivially_copyable_v<T>, "SecureVector holds plain data only");

 public:
  SecureVector() = default;
  explicit SecureVector(std::size_t size) : data_(size, T{}) {}
  ~SecureVector() { wipe(); }

  SecureVector(const SecureVector&) = delete;
  SecureVector& operator=(const SecureVector&) = delete;
  SecureVector(SecureVector&& other) noexcept : data_(std::move(other.data_)) {
    other.data_.clear();
  }
  SecureVector& operator=(SecureVector&& other) noexcept {
    if (this != &other) {
      wipe();
      data_ = std::move(other.data_);
      other.data_.clear();
    }
    return *this;
  }

  SecureVector clone() const {
    SecureVector copy(data_.size());
    copy.data_ = data_;
    return copy;
  }

  std::size_t size() const { return data_.size(); }
  bool empty() const { return data_.empty(); }
  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  std::span<T> span() { return {data_.data(), data_.size()}; }
  std::span<const T> span() const { return {data_.data(), data_.size()}; }

  // Wipes the old contents before resizing so no copy of them survives a reallocation.
  void assign_zero(std::size_t size) {
    wipe();
    data_.assign(size, T{});
  }

 private:
  void wipe() {
    if (!data_.empty()) secure_zero(data_.data(), data_.size() * sizeof(T));
  }
  std::vector<T> data_;
};

}  // namespace privsearch

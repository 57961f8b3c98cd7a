// The CKKS secret key s (uniform ternary), held in NTT form over the whole key basis
// q_0..q_L, p_0..p_{k-1}. Move-only; the storage is wiped on destruction. No operator<<.
// Client library only: the provider binary does not link this.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ckks/params.h"
#include "core/secure_buffer.h"

namespace privsearch::ckks {

class SecretKey {
 public:
  SecretKey(const ParamsId& id, std::size_t n, std::size_t rows, SecureVector<std::uint64_t> data)
      : params_id_(id), n_(n), rows_(rows), data_(std::move(data)) {}
  SecretKey(SecretKey&&) noexcept = default;
  SecretKey& operator=(SecretKey&&) noexcept = default;
  SecretKey(const SecretKey&) = delete;
  SecretKey& operator=(const SecretKey&) = delete;

  const ParamsId& params_id() const { return params_id_; }
  std::size_t n() const { return n_; }
  std::size_t rows() const { return rows_; }
  // Row of s modulo key-basis modulus `key_index`, NTT form.
  const std::uint64_t* row(std::size_t key_index) const { return data_.data() + key_index * n_; }

 private:
  ParamsId params_id_{};
  std::size_t n_ = 0;
  std::size_t rows_ = 0;
  SecureVector<std::uint64_t> data_;
};

}  // namespace privsearch::ckks

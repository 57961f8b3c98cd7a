// Polynomials of Z_Q[X]/(X^n + 1) in RNS form, and their element-wise arithmetic.
//
// Layout: `data` holds num_moduli rows of n coefficients, row i reduced modulo moduli[i]
// (size num_moduli * n, layout (moduli, n)). A flag says whether the rows are in NTT
// (evaluation, bit-reversed) form or in coefficient form. The moduli themselves are not stored:
// the owner (a ckks object with its Params) knows them; functions take them as a span.
// Thread safety: value type. Constant time: element-wise ops are straight-line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "core/check.h"
#include "ring/modulus.h"

namespace privsearch::ring {

// std::allocator that leaves trivially constructible elements uninitialized on resize(), so
// polynomials that are about to be overwritten are not zero-filled first (measured: the memset
// was 8% of a hoisted rotation).
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}  // NOLINT
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

class RnsPoly {
 public:
  RnsPoly() = default;
  // Zero polynomial.
  RnsPoly(std::size_t n, std::size_t num_moduli, bool ntt_form)
      : n_(n), num_moduli_(num_moduli), ntt_(ntt_form), data_(n * num_moduli, 0) {}
  // Polynomial with unspecified contents, for outputs that are overwritten entirely.
  static RnsPoly uninitialized(std::size_t n, std::size_t num_moduli, bool ntt_form) {
    RnsPoly p;
    p.n_ = n;
    p.num_moduli_ = num_moduli;
    p.ntt_ = ntt_form;
    p.data_.resize(n * num_moduli);
    return p;
  }

  std::size_t n() const { return n_; }
  std::size_t num_moduli() const { return num_moduli_; }
  bool is_ntt() const { return ntt_; }
  void set_ntt(bool ntt_form) { ntt_ = ntt_form; }

  std::uint64_t* row(std::size_t i) {
    PRIVSEARCH_DCHECK(i < num_moduli_, "RNS row out of range");
    return data_.data() + i * n_;
  }
  const std::uint64_t* row(std::size_t i) const {
    PRIVSEARCH_DCHECK(i < num_moduli_, "RNS row out of range");
    return data_.data() + i * n_;
  }
  std::span<std::uint64_t> data() { return data_; }
  std::span<const std::uint64_t> data() const { return data_; }

  // Keeps the first `count` rows (dropping the moduli at the end of the chain).
  void truncate_moduli(std::size_t count) {
    PRIVSEARCH_CHECK(count <= num_moduli_, "truncate_moduli grows the polynomial");
    num_moduli_ = count;
    data_.resize(n_ * count);
  }

  bool operator==(const RnsPoly& o) const {
    return n_ == o.n_ && num_moduli_ == o.num_moduli_ && ntt_ == o.ntt_ && data_ == o.data_;
  }

 private:
  std::size_t n_ = 0;
  std::size_t num_moduli_ = 0;
  bool ntt_ = false;
  std::vector<std::uint64_t, DefaultInitAllocator<std::uint64_t>> data_;
};

// Element-wise kernels over one row of n values, all inputs in [0, q), outputs in [0, q).
// mul_row / mul_add_row use an AVX-512 IFMA + double-precision kernel for q < 2^50 when the CPU
// has it (mul_kernels_ifma.cpp), Barrett otherwise; mul_row_scalar is the reference.
void add_row(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out, std::size_t n,
             const Modulus& q);
void sub_row(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out, std::size_t n,
             const Modulus& q);
void neg_row(const std::uint64_t* a, std::uint64_t* out, std::size_t n, const Modulus& q);
// out = a * b (Barrett).
void mul_row(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out, std::size_t n,
             const Modulus& q);
void mul_row_scalar(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out,
                    std::size_t n, const Modulus& q);
// out += a * b.
void mul_add_row(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out, std::size_t n,
                 const Modulus& q);
// out = a * s for a scalar s < q (Shoup).
void mul_scalar_row(const std::uint64_t* a, std::uint64_t s, std::uint64_t* out, std::size_t n,
                    const Modulus& q);

namespace detail {
bool mul_ifma_compiled();
void mul_row_ifma(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* out, std::size_t n,
                  std::uint64_t q);
void mul_add_row_ifma(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t* acc,
                      std::size_t n, std::uint64_t q);
}  // namespace detail

// Whole-polynomial versions over the first `moduli.size()` rows (which all operands must have).
void add_inplace(RnsPoly& a, const RnsPoly& b, std::span<const Modulus> moduli);
void sub_inplace(RnsPoly& a, const RnsPoly& b, std::span<const Modulus> moduli);
void negate_inplace(RnsPoly& a, std::span<const Modulus> moduli);
void multiply_inplace(RnsPoly& a, const RnsPoly& b, std::span<const Modulus> moduli);
void multiply_add(const RnsPoly& a, const RnsPoly& b, RnsPoly& acc,
                  std::span<const Modulus> moduli);

}  // namespace privsearch::ring

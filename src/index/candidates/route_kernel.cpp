#include "index/candidates/route_kernel.h"

#include <vector>

#include "core/half.h"

namespace privsearch::index {
namespace detail {

bool avx512f_available() {
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
}

void half_matvec_scalar(const std::uint16_t* table, std::size_t rows, std::size_t cols,
                        const float* q, float* scores) {
  std::vector<float> row(cols);
  for (std::size_t l = 0; l < rows; ++l) {
    halves_to_floats(reinterpret_cast<const std::uint8_t*>(table + l * cols), row.data(), cols);
    float s = 0;
    for (std::size_t j = 0; j < cols; ++j) s += row[j] * q[j];
    scores[l] = s;
  }
}

}  // namespace detail

void half_matvec(const std::uint16_t* table, std::size_t rows, std::size_t cols, const float* q,
                 float* scores) {
  if (detail::avx512f_available()) {
    detail::half_matvec_avx512(table, rows, cols, q, scores);
  } else {
    detail::half_matvec_scalar(table, rows, cols, q, scores);
  }
}

}  // namespace privsearch::index

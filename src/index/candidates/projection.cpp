#include "index/candidates/projection.h"

#include <cblas.h>
#include <fmt/format.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "core/csprng.h"

namespace privsearch::index {

namespace {

Prng seeded(std::uint64_t seed, std::uint64_t stream) {
  Seed s{};
  for (int i = 0; i < 8; ++i)
    s[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(seed >> (8 * i));
  return Prng::from_seed(s, stream);
}

// Standard normal by Box-Muller from the seeded stream.
double gaussian(Prng& p) {
  const double u1 = (static_cast<double>(p.next_u64() >> 11) + 1.0) * 0x1p-53;
  const double u2 = static_cast<double>(p.next_u64() >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// In place: the m x n (row-major) matrix becomes Q of its thin QR (m >= n).
Status orthonormalize(std::vector<double>& a, int m, int n) {
  std::vector<double> tau(static_cast<std::size_t>(n));
  if (LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, m, n, a.data(), n, tau.data()) != 0 ||
      LAPACKE_dorgqr(LAPACK_ROW_MAJOR, m, n, n, a.data(), n, tau.data()) != 0) {
    return internal_error("LAPACK QR failed");
  }
  return Status();
}

std::vector<float> column_mean(const Matrix& docs) {
  std::vector<double> mu(docs.cols, 0.0);
  for (std::size_t r = 0; r < docs.rows; ++r) {
    for (std::size_t c = 0; c < docs.cols; ++c) mu[c] += docs.row(r)[c];
  }
  std::vector<float> out(docs.cols);
  for (std::size_t c = 0; c < docs.cols; ++c)
    out[c] = static_cast<float>(mu[c] / static_cast<double>(docs.rows));
  return out;
}

Status check_dims(const Matrix& docs, std::size_t output_dim) {
  if (docs.rows == 0 || docs.cols == 0) return invalid_argument_error("no documents to fit");
  if (output_dim < 1 || output_dim > docs.cols) {
    return invalid_argument_error(
        fmt::format("projected dimension `d'` = {} outside [1, {}] (the embedding dimension)",
                    output_dim, docs.cols));
  }
  return Status();
}

// Makes each column's largest-magnitude entry positive (a deterministic sign convention).
void fix_signs(std::vector<float>& basis, std::size_t rows, std::size_t cols) {
  for (std::size_t c = 0; c < cols; ++c) {
    std::size_t best = 0;
    for (std::size_t r = 1; r < rows; ++r) {
      if (std::fabs(basis[r * cols + c]) > std::fabs(basis[best * cols + c])) best = r;
    }
    if (basis[best * cols + c] < 0) {
      for (std::size_t r = 0; r < rows; ++r) basis[r * cols + c] = -basis[r * cols + c];
    }
  }
}

}  // namespace

Matrix Projection::project_documents(const Matrix& docs, std::size_t dims) const {
  const std::size_t k = dims == 0 ? output_dim : std::min(dims, output_dim);
  Matrix out;
  out.rows = docs.rows;
  out.cols = k;
  out.data.resize(docs.rows * k);
  // (d - mu) V[:, :k] in blocks of rows with OpenBLAS sgemm (1M x 768 x 672 is 0.5 TFLOP:
  // minutes with plain loops, seconds with a tuned GEMM).
  constexpr std::size_t kBlock = 4096;
  std::vector<float> centred(kBlock * docs.cols);
  for (std::size_t r0 = 0; r0 < docs.rows; r0 += kBlock) {
    const std::size_t n = std::min(kBlock, docs.rows - r0);
    for (std::size_t r = 0; r < n; ++r) {
      const float* src = docs.row(r0 + r);
      float* dst = centred.data() + r * docs.cols;
      for (std::size_t c = 0; c < docs.cols; ++c) dst[c] = src[c] - mean[c];
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(k),
                static_cast<int>(docs.cols), 1.0f, centred.data(), static_cast<int>(docs.cols),
                basis.data(), static_cast<int>(output_dim), 0.0f, out.data.data() + r0 * k,
                static_cast<int>(k));
  }
  return out;
}

Result<Projection> fit_svd(const Matrix& docs, std::size_t output_dim, const SvdOptions& o) {
  PRIVSEARCH_RETURN_IF_ERROR(check_dims(docs, output_dim));
  // Seeded sample of documents (without replacement: a partial Fisher-Yates shuffle).
  std::vector<std::size_t> order(docs.rows);
  std::iota(order.begin(), order.end(), 0);
  const std::size_t n = std::min(o.sample_size, docs.rows);
  Prng prng = seeded(o.seed, 1);
  for (std::size_t i = 0; i < n; ++i)
    std::swap(order[i], order[i + prng.uniform_below(docs.rows - i)]);
  order.resize(n);
  std::sort(order.begin(), order.end());
  if (output_dim > n) {
    return invalid_argument_error(
        fmt::format("`d'` = {} exceeds the {} sampled documents", output_dim, n));
  }
  const std::size_t d = docs.cols;
  Projection p;
  p.kind = ProjectionKind::kSvd;
  p.input_dim = d;
  p.output_dim = output_dim;
  // mu over the sample, A = centred sample (n x d, double).
  std::vector<double> mu(d, 0.0);
  for (std::size_t i : order) {
    for (std::size_t c = 0; c < d; ++c) mu[c] += docs.row(i)[c];
  }
  for (auto& v : mu) v /= static_cast<double>(n);
  std::vector<double> a(n * d);
  double frob = 0;
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < d; ++c) {
      a[r * d + c] = docs.row(order[r])[c] - mu[c];
      frob += a[r * d + c] * a[r * d + c];
    }
  }
  const std::size_t l = std::min({output_dim + o.oversample, d, n});
  const int ni = static_cast<int>(n), di = static_cast<int>(d), li = static_cast<int>(l);
  std::vector<double> omega(d * l), y(n * l), z(d * l);
  Prng g = seeded(o.seed, 2);
  for (auto& v : omega) v = gaussian(g);
  // Y = A Omega; Q = qr(Y); power iterations Q = qr(A qr(A^T Q)).
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, li, di, 1.0, a.data(), di,
              omega.data(), li, 0.0, y.data(), li);
  PRIVSEARCH_RETURN_IF_ERROR(orthonormalize(y, ni, li));
  for (int it = 0; it < o.power_iterations; ++it) {
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, di, li, ni, 1.0, a.data(), di, y.data(),
                li, 0.0, z.data(), li);
    PRIVSEARCH_RETURN_IF_ERROR(orthonormalize(z, di, li));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, li, di, 1.0, a.data(), di, z.data(),
                li, 0.0, y.data(), li);
    PRIVSEARCH_RETURN_IF_ERROR(orthonormalize(y, ni, li));
  }
  // B = Q^T A (l x d); SVD B = U S Vt.
  std::vector<double> b(l * d);
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, li, di, ni, 1.0, y.data(), li, a.data(), di,
              0.0, b.data(), di);
  std::vector<double> s(l), u(l * l), vt(l * d);
  if (LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'S', li, di, b.data(), di, s.data(), u.data(), li, vt.data(),
                     di) != 0) {
    return internal_error("LAPACK SVD (dgesdd) failed");
  }
  p.mean.assign(mu.begin(), mu.end());
  p.basis.resize(d * output_dim);
  for (std::size_t j = 0; j < output_dim; ++j) {
    for (std::size_t c = 0; c < d; ++c)
      p.basis[c * output_dim + j] = static_cast<float>(vt[j * d + c]);
  }
  fix_signs(p.basis, d, output_dim);
  double kept = 0;
  for (std::size_t j = 0; j < output_dim; ++j) {
    p.singular_values.push_back(s[j]);
    kept += s[j] * s[j];
  }
  p.retained_variance = frob > 0 ? kept / frob : 0.0;
  return p;
}

Result<Projection> first_coordinates(const Matrix& docs, std::size_t output_dim) {
  PRIVSEARCH_RETURN_IF_ERROR(check_dims(docs, output_dim));
  Projection p;
  p.kind = ProjectionKind::kFirstCoordinates;
  p.input_dim = docs.cols;
  p.output_dim = output_dim;
  p.mean = column_mean(docs);
  p.basis.assign(docs.cols * output_dim, 0.0f);
  for (std::size_t j = 0; j < output_dim; ++j) p.basis[j * output_dim + j] = 1.0f;
  return p;
}

Result<Projection> gaussian_orthoprojector(const Matrix& docs, std::size_t output_dim,
                                           std::uint64_t seed) {
  PRIVSEARCH_RETURN_IF_ERROR(check_dims(docs, output_dim));
  const std::size_t d = docs.cols;
  std::vector<double> g(d * output_dim);
  Prng prng = seeded(seed, 3);
  for (auto& v : g) v = gaussian(prng);
  PRIVSEARCH_RETURN_IF_ERROR(orthonormalize(g, static_cast<int>(d), static_cast<int>(output_dim)));
  Projection p;
  p.kind = ProjectionKind::kGaussian;
  p.input_dim = d;
  p.output_dim = output_dim;
  p.mean = column_mean(docs);
  p.basis.assign(g.begin(), g.end());
  return p;
}

}  // namespace privsearch::index

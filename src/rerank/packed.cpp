#include "rerank/packed.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <functional>
#include <optional>

#include "ckks/galois_elements.h"
#include "ckks/param_sets.h"
#include "core/parallel.h"
#include "rerank/kernels.h"

namespace privsearch::rerank {

namespace {

using MaybeCt = std::optional<ckks::Ciphertext>;

// Leaf i's place in the tree: its l-bit reversal (layout.h), so that the real leaves 0..m-1
// pair up at the first level and the empty ones past them are skipped whole.
std::size_t tree_index(std::size_t leaf, std::size_t levels) {
  std::size_t r = 0;
  for (std::size_t b = 0; b < levels; ++b) r |= ((leaf >> b) & 1u) << (levels - 1 - b);
  return r;
}

// (q + 1) / 2 is 2^-1 mod q for odd q, so B^-1 = ((q + 1) / 2)^log2(B).
std::uint64_t inverse_power_of_two(const ring::Modulus& q, int log2_b) {
  std::uint64_t inv = 1;
  const std::uint64_t half = (q.value() + 1) / 2;
  for (int i = 0; i < log2_b; ++i) inv = q.mul(inv, half);
  return inv;
}

// X^t (t < n) as a plaintext at scale 1: multiplying by it shifts coefficients negacyclically.
ckks::Plaintext monomial(const ckks::Params& params, std::size_t t) {
  ring::RnsPoly p(params.n(), 1, false);
  p.row(0)[t] = 1;
  params.ntt(0).forward(p.row(0));
  p.set_ntt(true);
  return ckks::Plaintext(params.id(), 0, 1.0, std::move(p));
}

Status check_packed_inputs(const KernelLayout& layout, const ckks::Params& params,
                           std::span<const float> rows, double row_norm_bound) {
  if (layout.kernel() != Kernel::kPacked) {
    return failed_precondition_error("the packed kernel needs a packed layout");
  }
  if (params.max_level() != 0) {
    return failed_precondition_error(
        fmt::format("the packed kernel needs params with one data prime (preset {}); these have {}",
                    ckks::kPackedPresetName, params.num_q()));
  }
  // float rows: their norm computed in double may exceed a bound equal to the largest norm
  // by rounding only.
  const double tolerance = 1.0 + 1e-6;
  for (std::size_t c = 0; c < layout.k(); ++c) {
    double sq = 0;
    for (std::size_t a = 0; a < layout.dim(); ++a) {
      const double v = rows[c * layout.dim() + a];
      sq += v * v;
    }
    if (!(std::sqrt(sq) <= row_norm_bound * tolerance)) {
      // No index or norm in the message: it can reach a client.
      return invalid_argument_error(fmt::format(
          "a candidate row is not finite or above the row-norm bound {}", row_norm_bound));
    }
  }
  return Status();
}

struct Tree {
  const KernelLayout& layout;
  const ckks::Evaluator& evaluator;
  const ckks::GaloisKeys& keys;
  // The leaf product at a tree index (empty where no leaf is), made when the tree reaches it:
  // the tree holds at most two ciphertexts per level, not all 2^l leaves (64 KB each).
  std::function<Result<MaybeCt>(std::size_t)> leaf;
  std::vector<ckks::Plaintext> shifts;  // shifts[h] = X^(B / 2^h), h = 1..l
  std::size_t key_switches = 0;

  int first_exponent() const { return std::countr_zero(2 * layout.blocks()); }

  Result<ckks::Ciphertext> sigma(const ckks::Ciphertext& ct, int exponent) {
    const std::size_t n = evaluator.params().n();
    const std::uint64_t g = ((std::uint64_t{1} << exponent) + 1) % (2 * n);
    PRIVSEARCH_ASSIGN_OR_RETURN(const int step, ckks::step_for_galois_elt(g, n));
    ++key_switches;
    return evaluator.rotate(ct, step, keys);
  }

  // Node at level h over leaves i0, i0 + stride, ... (2^h of them).
  Result<MaybeCt> node(std::size_t i0, std::size_t stride, std::size_t h) {
    if (h == 0) return leaf(i0);
    PRIVSEARCH_ASSIGN_OR_RETURN(MaybeCt even, node(i0, 2 * stride, h - 1));
    PRIVSEARCH_ASSIGN_OR_RETURN(MaybeCt odd, node(i0 + stride, 2 * stride, h - 1));
    return merge(std::move(even), std::move(odd), h);
  }

  Result<MaybeCt> merge(MaybeCt even, MaybeCt odd, std::size_t h) {
    if (!even && !odd) return MaybeCt();
    MaybeCt plus = std::move(even), minus;
    if (plus) minus = *plus;
    if (odd) {
      PRIVSEARCH_RETURN_IF_ERROR(evaluator.multiply_plain_inplace(*odd, shifts[h]));
      if (plus) {
        PRIVSEARCH_RETURN_IF_ERROR(evaluator.add_inplace(*plus, *odd));
        PRIVSEARCH_RETURN_IF_ERROR(evaluator.sub_inplace(*minus, *odd));
      } else {
        minus = *odd;
        PRIVSEARCH_RETURN_IF_ERROR(evaluator.negate_inplace(*minus));
        plus = std::move(odd);
      }
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto rotated,
                                sigma(*minus, first_exponent() + static_cast<int>(h) - 1));
    PRIVSEARCH_RETURN_IF_ERROR(evaluator.add_inplace(*plus, rotated));
    return plus;
  }
};

}  // namespace

Result<int> packed_row_log_scale(const ckks::Params& params, double row_norm_bound) {
  const double quarter_q_log2 = std::log2(static_cast<double>(params.q_moduli()[0].value())) - 2;
  const double rho = std::floor(quarter_q_log2 - params.log_scale() - std::log2(row_norm_bound));
  if (!std::isfinite(row_norm_bound) || !(row_norm_bound > 0) || !(rho >= 1) || rho > 40) {
    return invalid_argument_error(fmt::format(
        "row-norm bound {} leaves the packed kernel no row scale (q / 4 = 2^{:.1f}, query scale "
        "2^{})",
        row_norm_bound, quarter_q_log2, params.log_scale()));
  }
  return static_cast<int>(rho);
}

Result<ckks::Plaintext> packed_leaf_plaintext(const KernelLayout& layout,
                                              const ckks::Params& params,
                                              std::span<const float> rows, std::size_t output,
                                              std::size_t leaf, int row_log_scale) {
  const ring::Modulus& q = params.q_moduli()[0];
  const std::size_t n = params.n(), r = layout.blocks(), B = layout.period(), d = layout.dim();
  const std::uint64_t b_inv = inverse_power_of_two(q, std::countr_zero(B));
  const double scale = std::ldexp(1.0, row_log_scale);
  ring::RnsPoly p(n, 1, false);
  std::uint64_t* coeffs = p.row(0);
  for (std::size_t k = 0; k < r; ++k) {
    const std::size_t c = output * layout.capacity() + leaf * r + k;
    if (c >= layout.k()) break;
    for (std::size_t a = 0; a < d; ++a) {
      const auto v = static_cast<std::int64_t>(std::llround(scale * rows[c * d + a]));
      coeffs[B * k + a] = q.mul(q.from_signed(v), b_inv);
    }
  }
  params.ntt(0).forward(coeffs);
  p.set_ntt(true);
  return ckks::Plaintext(params.id(), 0, scale, std::move(p));
}

Result<ckks::Ciphertext> packed_trace_tail(const ckks::Evaluator& evaluator,
                                           const ckks::GaloisKeys& keys, ckks::Ciphertext ct,
                                           int first_exponent, std::size_t* key_switches) {
  const std::size_t n = evaluator.params().n();
  const int log_n = std::countr_zero(n);
  for (int j = first_exponent; j <= log_n; ++j) {
    const std::uint64_t g = ((std::uint64_t{1} << j) + 1) % (2 * n);
    PRIVSEARCH_ASSIGN_OR_RETURN(const int step, ckks::step_for_galois_elt(g, n));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto rotated, evaluator.rotate(ct, step, keys));
    PRIVSEARCH_RETURN_IF_ERROR(evaluator.add_inplace(ct, rotated));
    if (key_switches) ++*key_switches;
  }
  return ct;
}

Result<PackedResult> evaluate_packed_kernel(const KernelLayout& layout,
                                            const ckks::Evaluator& evaluator,
                                            const ckks::GaloisKeys& keys,
                                            const ckks::Ciphertext& query,
                                            std::span<const float> rows, std::size_t threads,
                                            double row_norm_bound) {
  const ckks::Params& params = evaluator.params();
  PRIVSEARCH_RETURN_IF_ERROR(validate_kernel_inputs(layout, params, keys, query, rows));
  PRIVSEARCH_RETURN_IF_ERROR(check_packed_inputs(layout, params, rows, row_norm_bound));
  PRIVSEARCH_ASSIGN_OR_RETURN(const int rho, packed_row_log_scale(params, row_norm_bound));
  const std::size_t levels = layout.tree_levels(), width = std::size_t{1} << levels;
  std::vector<ckks::Plaintext> shifts(levels + 1);
  for (std::size_t h = 1; h <= levels; ++h) shifts[h] = monomial(params, layout.period() >> h);
  PackedResult out;
  for (std::size_t w = 0; w < layout.outputs(); ++w) {
    const std::size_t first = w * layout.capacity();
    const std::size_t real =
        std::min(width, (layout.k() - first + layout.blocks() - 1) / layout.blocks());
    auto leaf = [&](std::size_t index) -> Result<MaybeCt> {
      const std::size_t i = tree_index(index, levels);  // the bit reversal is its own inverse
      if (i >= real) return MaybeCt();
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto pt,
                                  packed_leaf_plaintext(layout, params, rows, w, i, rho));
      PRIVSEARCH_ASSIGN_OR_RETURN(auto product, evaluator.multiply_plain(query, pt));
      return MaybeCt(std::move(product));
    };
    out.plaintext_products += real;
    Tree tree{layout, evaluator, keys, leaf, shifts};
    Result<MaybeCt> root = MaybeCt();
    if (levels == 0 || threads < 2) {
      root = tree.node(0, 1, levels);
    } else {
      // The root's two subtrees are independent: one each on two threads.
      Tree other{layout, evaluator, keys, leaf, shifts};
      std::vector<MaybeCt> halves(2);
      PRIVSEARCH_RETURN_IF_ERROR(run_tasks(2, 2, [&](std::size_t t, std::size_t) -> Status {
        PRIVSEARCH_ASSIGN_OR_RETURN(halves[t], (t == 0 ? tree : other).node(t, 2, levels - 1));
        return Status();
      }));
      root = tree.merge(std::move(halves[0]), std::move(halves[1]), levels);
      tree.key_switches += other.key_switches;
    }
    PRIVSEARCH_RETURN_IF_ERROR(root.status());
    if (!root.value()) return internal_error("packed kernel: empty tree");
    PRIVSEARCH_ASSIGN_OR_RETURN(
        auto packed,
        packed_trace_tail(evaluator, keys, std::move(*root.value()),
                          tree.first_exponent() + static_cast<int>(levels), &tree.key_switches));
    out.key_switches += tree.key_switches;
    out.outputs.push_back(std::move(packed));
  }
  return out;
}

}  // namespace privsearch::rerank

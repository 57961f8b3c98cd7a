#include "rerank/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>

#include "ckks/galois_elements.h"
#include "ckks/param_sets.h"

namespace privsearch::rerank {

std::string_view kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::kNaive:
      return "naive";
    case Kernel::kGrouped:
      return "grouped";
    case Kernel::kOneResponse:
      return "one_response";
    case Kernel::kFast:
      return "fast";
    case Kernel::kPacked:
      return "packed";
  }
  return "unknown";
}

Result<Kernel> kernel_from_name(std::string_view name) {
  for (Kernel k :
       {Kernel::kNaive, Kernel::kGrouped, Kernel::kOneResponse, Kernel::kFast, Kernel::kPacked}) {
    if (kernel_name(k) == name) return k;
  }
  return invalid_argument_error(fmt::format(
      "unknown kernel `{}`; known kernels: naive, grouped, one_response, fast, packed", name));
}

std::vector<double> KernelLayout::replicate_query(std::span<const double> z) const {
  std::vector<double> v(f_.slots, 0.0);
  for (std::size_t s = 0; s < f_.slots; ++s) {
    const std::size_t j = s % f_.period;
    v[s] = j < z.size() ? z[j] : 0.0;
  }
  return v;
}

namespace {

std::size_t next_pow2(std::size_t x) { return std::bit_ceil(x); }

std::size_t reverse_bits(std::size_t x, int bits) {
  std::size_t r = 0;
  for (int i = 0; i < bits; ++i) r |= ((x >> i) & 1u) << (bits - 1 - i);
  return r;
}

Result<LayoutFields> paper_layout(std::size_t slots, Kernel kernel, std::size_t dim,
                                  std::size_t k) {
  LayoutFields l;
  l.kernel = kernel;
  l.dim = dim;
  l.k = k;
  l.slots = slots;
  l.period = next_pow2(dim);
  l.blocks = slots / l.period;
  const std::size_t per_ct = kernel == Kernel::kNaive ? 1 : l.blocks;
  const std::size_t groups = (k + per_ct - 1) / per_ct;
  if (kernel == Kernel::kOneResponse) {
    if (k > slots) {
      return invalid_argument_error(
          fmt::format("one packed response cannot contain more than {} scores (K = {})", slots, k));
    }
    if (groups > l.period) {
      return invalid_argument_error(fmt::format(
          "K = {} at d' = {} creates {} groups, more than the {} distinct score-pack offsets", k,
          dim, groups, l.period));
    }
  }
  l.capacity = kernel == Kernel::kOneResponse ? k : per_ct;
  l.outputs = kernel == Kernel::kOneResponse ? 1 : groups;
  for (std::size_t s = 1; s < l.period; s <<= 1) l.rotation_steps.push_back(static_cast<int>(s));
  if (l.rotation_steps.empty()) l.rotation_steps.push_back(1);  // as the paper: d = 1 keeps step 1
  for (std::size_t c = 0; c < k; ++c) {
    const std::size_t g = c / per_ct, b = c % per_ct;
    switch (kernel) {
      case Kernel::kNaive:
        l.slot_map.push_back({c, 0});
        break;
      case Kernel::kGrouped:
        l.slot_map.push_back({g, b * l.period});
        break;
      default:
        l.slot_map.push_back({0, (b * l.period + slots - g) % slots});
        break;
    }
  }
  return l;
}

Result<LayoutFields> fast_layout(std::size_t slots, std::size_t dim, std::size_t k) {
  // Cost model (relative units measured on the rerank preset): a baby plaintext product
  // (encode + multiply) ~ 1, a rotation ~ 2.
  constexpr double kPlaintextCost = 1.0, kRotationCost = 2.0;
  // Prefer layouts whose one ciphertext holds all K candidates; only when none does, split K
  // over several ciphertexts of the cheapest layout.
  LayoutFields best;
  double best_cost = 0;
  bool found = false;
  bool best_single = false;
  for (std::size_t w = 1; w <= slots; w <<= 1) {
    const std::size_t b = (dim + w - 1) / w;
    const std::size_t period = b * w;
    if (period > slots || b == 0) continue;
    const std::size_t blocks = (slots - (b - 1)) / period;
    if (blocks == 0) continue;
    const std::size_t capacity = blocks * b;
    const std::size_t per_ct = std::min(capacity, k);
    const std::size_t outputs = (k + capacity - 1) / capacity;
    // BSGS split of the b baby products, b1 * b2 >= b. A baby rotation of the query pays a
    // ModDown (~10 NTTs) and an inner product; a giant one, summed in the extended basis, a
    // decomposition (~5 NTTs) and an inner product: weights 3 and 2.
    std::size_t b1 = 1, b2 = b;
    for (std::size_t cand = 1; cand <= b; ++cand) {
      const std::size_t cand2 = (b + cand - 1) / cand;
      if (3 * (cand - 1) + 2 * (cand2 - 1) < 3 * (b1 - 1) + 2 * (b2 - 1)) {
        b1 = cand;
        b2 = cand2;
      }
    }
    const std::size_t w1 = std::size_t{1} << ((std::countr_zero(w) + 1) / 2);
    const std::size_t w2 = w / w1;
    // Hoisted/extended rotations cost about half a full one.
    const double rotations = 0.5 * static_cast<double>((b1 - 1) + (b2 - 1) + (w1 - 1) + (w2 - 1)) +
                             (w > 1 ? 1.0 : 0.0) + (w2 > 1 ? 1.0 : 0.0);
    const double cost = static_cast<double>(outputs) *
                        (kPlaintextCost * static_cast<double>(b) + kRotationCost * rotations);
    (void)per_ct;
    const bool single = outputs == 1;
    if (!found || (single && !best_single) || (single == best_single && cost < best_cost)) {
      found = true;
      best_single = single;
      best_cost = cost;
      best = LayoutFields{};
      best.period = period;
      best.width = b;
      best.windows = w;
      best.blocks = blocks;
      best.baby = b1;
      best.giant = b2;
      best.sum_baby = w1;
      best.sum_giant = w2;
      best.capacity = capacity;
      best.outputs = outputs;
    }
  }
  if (!found) return internal_error("no fast layout fits");
  LayoutFields& l = best;
  l.kernel = Kernel::kFast;
  l.dim = dim;
  l.k = k;
  l.slots = slots;
  std::set<int> steps;
  for (std::size_t i = 1; i < l.baby; ++i) steps.insert(static_cast<int>(i));
  for (std::size_t g = 1; g < l.giant; ++g) steps.insert(static_cast<int>(g * l.baby));
  for (std::size_t k1 = 1; k1 < l.sum_baby; ++k1) steps.insert(static_cast<int>(k1 * l.width));
  for (std::size_t k2 = 1; k2 < l.sum_giant; ++k2) {
    steps.insert(static_cast<int>(k2 * l.sum_baby * l.width));
  }
  l.rotation_steps.assign(steps.begin(), steps.end());
  for (std::size_t c = 0; c < k; ++c) {
    const std::size_t ct = c / l.capacity, local = c % l.capacity;
    const std::size_t beta = local / l.width, r = local % l.width;
    l.slot_map.push_back({ct, beta * l.period + r});
  }
  return l;
}

// See layout.h, "Packed kernel".
Result<LayoutFields> packed_layout(std::size_t slots, std::size_t dim, std::size_t k) {
  const std::size_t n = 2 * slots;
  LayoutFields l;
  l.kernel = Kernel::kPacked;
  l.dim = dim;
  l.k = k;
  l.slots = slots;
  l.period = next_pow2(dim);  // B
  l.blocks = n / l.period;    // r rows per leaf
  const std::size_t per_output = std::min(k, n);
  const std::size_t leaves = (per_output + l.blocks - 1) / l.blocks;
  l.tree_levels = static_cast<std::size_t>(std::bit_width(leaves - 1));  // ceil(log2(leaves))
  l.capacity = l.blocks << l.tree_levels;
  l.outputs = (k + l.capacity - 1) / l.capacity;
  const int log_n = std::countr_zero(n), log_2r = std::countr_zero(2 * l.blocks);
  for (int j = log_2r; j <= log_n; ++j) {
    const std::uint64_t g = (std::uint64_t{1} << j) + 1;
    const auto step = ckks::step_for_galois_elt(g % (2 * n), n);
    if (!step.ok()) return internal_error(fmt::format("2^{} + 1 is not a power of 5", j));
    l.rotation_steps.push_back(*step);
  }
  std::sort(l.rotation_steps.begin(), l.rotation_steps.end());
  const std::size_t spacing = l.period >> l.tree_levels;
  for (std::size_t c = 0; c < k; ++c) {
    const std::size_t ct = c / l.capacity, local = c % l.capacity;
    const std::size_t leaf = local / l.blocks, row = local % l.blocks;
    const std::size_t tree_index = reverse_bits(leaf, static_cast<int>(l.tree_levels));
    l.slot_map.push_back({ct, row * l.period + tree_index * spacing});
  }
  return l;
}

}  // namespace

Kernel kernel_for_params(const ckks::Params& params) {
  // The slot kernels rescale at least once, so one data prime leaves only the packed kernel.
  return params.num_q() == 1 ? Kernel::kPacked : Kernel::kFast;
}

Result<KernelLayout> make_layout(const ckks::Params& params, Kernel kernel, std::size_t dim,
                                 std::size_t k) {
  const std::size_t slots = params.slots();
  if (dim < 1 || dim > slots) {
    return invalid_argument_error(
        fmt::format("dimension `d'` = {} outside [1, {}] (the slot count)", dim, slots));
  }
  if (k < 1 || k > kMaxCandidates) {
    return invalid_argument_error(
        fmt::format("candidate count `K` = {} outside [1, {}]", k, kMaxCandidates));
  }
  Result<LayoutFields> fields = internal_error("no layout");
  switch (kernel) {
    case Kernel::kFast:
      fields = fast_layout(slots, dim, k);
      break;
    case Kernel::kPacked:
      fields = packed_layout(slots, dim, k);
      break;
    default:
      fields = paper_layout(slots, kernel, dim, k);
      break;
  }
  PRIVSEARCH_RETURN_IF_ERROR(fields.status());
  return KernelLayout(std::move(fields).value());
}

}  // namespace privsearch::rerank

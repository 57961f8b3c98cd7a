#include "rerank/kernels.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "core/elapsed.h"
#include "core/parallel.h"
#include "rerank/packed.h"

namespace privsearch::rerank {

namespace {

using ckks::Ciphertext;
using ckks::Plaintext;

// Thin wrapper that counts every homomorphic operation a kernel performs.
class Counted {
 public:
  Counted(const ckks::Encoder& enc, const ckks::Evaluator& ev, const ckks::GaloisKeys& keys,
          KernelResult& out)
      : enc_(enc), ev_(ev), keys_(keys), out_(out) {}

  Result<Plaintext> encode(std::span<const double> v, std::size_t level, double scale) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = enc_.encode(v, level, scale);
    out_.encode_ms += ms_since(t0);
    ++out_.counts.encodes;
    return r;
  }
  Result<std::pair<Plaintext, Plaintext>> encode_pair(std::span<const double> a,
                                                      std::span<const double> b, std::size_t level,
                                                      double scale) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = enc_.encode_pair(a, b, level, scale);
    out_.encode_ms += ms_since(t0);
    out_.counts.encodes += 2;
    return r;
  }
  Status multiply(Ciphertext& a, const Plaintext& p) {
    ++out_.counts.multiply_plain;
    return ev_.multiply_plain_inplace(a, p);
  }
  Status multiply_accumulate(Ciphertext& acc, const Ciphertext& x, const Plaintext& p) {
    ++out_.counts.multiply_plain;
    if (acc.c0().num_moduli() != 0) ++out_.counts.additions;
    return ev_.multiply_plain_accumulate(acc, x, p);
  }
  Status rescale(Ciphertext& a) {
    ++out_.counts.rescales;
    return ev_.rescale_inplace(a);
  }
  Result<Ciphertext> rotate(const Ciphertext& a, int step) {
    ++out_.counts.rotations;
    return ev_.rotate(a, step, keys_);
  }
  Result<Ciphertext> rotate_hoisted(const ckks::Evaluator::Hoisted& h, int step) {
    ++out_.counts.rotations;
    return ev_.rotate_hoisted(h, step, keys_);
  }
  // Rotation left in the extended basis (its ModDown is shared by a later sum).
  Result<ckks::ExtendedCiphertext> rotate_extended(Ciphertext&& a, int step) {
    if (step == 0) return ev_.to_extended(a);
    ++out_.counts.rotations;
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto h, ev_.hoist(std::move(a)));
    return ev_.rotate_hoisted_extended(h, step, keys_);
  }
  Result<ckks::ExtendedCiphertext> rotate_hoisted_extended(const ckks::Evaluator::Hoisted& h,
                                                           int step) {
    if (step != 0) ++out_.counts.rotations;
    return ev_.rotate_hoisted_extended(h, step, keys_);
  }
  Status add(ckks::ExtendedCiphertext& a, const ckks::ExtendedCiphertext& b) {
    ++out_.counts.additions;
    return ev_.add_inplace(a, b);
  }
  Status add(Ciphertext& a, const Ciphertext& b) {
    ++out_.counts.additions;
    return ev_.add_inplace(a, b);
  }
  const ckks::Evaluator& evaluator() const { return ev_; }
  // The same operations counted into `tally` (a helper thread's; merged by add_counts).
  Counted counting_into(KernelResult& tally) const { return Counted(enc_, ev_, keys_, tally); }
  void add_counts(const OpCounts& c) {
    out_.counts.multiply_plain += c.multiply_plain;
    out_.counts.rescales += c.rescales;
    out_.counts.rotations += c.rotations;
    out_.counts.additions += c.additions;
    out_.counts.encodes += c.encodes;
  }

 private:
  const ckks::Encoder& enc_;
  const ckks::Evaluator& ev_;
  const ckks::GaloisKeys& keys_;
  KernelResult& out_;
};

// Rotate-and-sum over the given strides: ct += rot(ct, s) for each s in order.
Status rotate_and_sum(Counted& op, Ciphertext& ct, std::span<const int> strides) {
  for (int s : strides) {
    PRIVSEARCH_ASSIGN_OR_RETURN(Ciphertext r, op.rotate(ct, s));
    PRIVSEARCH_RETURN_IF_ERROR(op.add(ct, r));
  }
  return Status();
}

// sum_{k < count} rot(ct, k * stride) for count = c1 * c2: c1 double-hoisted rotations summed
// in the extended basis, one ModDown, then c2 more on that sum and a second ModDown.
Status sum_of_rotations(Counted& op, Ciphertext& ct, std::size_t stride, std::size_t c1,
                        std::size_t c2) {
  std::size_t step = stride;
  for (std::size_t count : {c1, c2}) {
    if (count <= 1) {
      step *= count;
      continue;
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(auto h, op.evaluator().hoist(std::move(ct)));
    // The k = 0 term joins after the ModDown: ModDown(P ct + X) = ct + ModDown(X) exactly (P ct
    // vanishes mod P), so it need not be lifted to the extended basis. (One such rotation takes
    // ~0.05 ms: less than starting a thread to share them, so they stay on this one.)
    ckks::ExtendedCiphertext sum;
    for (std::size_t k = 1; k < count; ++k) {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto r,
                                  op.rotate_hoisted_extended(h, static_cast<int>(k * step)));
      if (k == 1) {
        sum = std::move(r);
      } else {
        PRIVSEARCH_RETURN_IF_ERROR(op.add(sum, r));
      }
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(ct, op.evaluator().mod_down(std::move(sum)));
    PRIVSEARCH_RETURN_IF_ERROR(op.add(ct, h.ct));
    step *= count;
  }
  return Status();
}

// Scale for a mask that is not rescaled: 2^19 as the paper (scale 2^59 under its 60-bit q_0,
// so scores must stay below 1 in magnitude, as cosine scores do), or less when q_0 has less
// than half a bit of room above that.
double unrescaled_mask_scale(const ckks::Params& params, double ct_scale) {
  const double bits_q0 = std::log2(static_cast<double>(params.q_moduli()[0].value()));
  const double room = bits_q0 - std::log2(ct_scale) - 0.5;
  return std::ldexp(1.0, static_cast<int>(std::min(19.0, std::floor(room))));
}

Status paper_kernels(const KernelLayout& l, const ckks::Params& params, Counted& op,
                     const Ciphertext& query, std::span<const float> rows,
                     std::vector<Ciphertext>& outputs) {
  const std::size_t s_count = l.slots(), d = l.dim(), period = l.period();
  const std::size_t per = l.kernel() == Kernel::kNaive ? 1 : l.blocks();
  const std::size_t groups = (l.k() + per - 1) / per;
  const double delta = params.default_scale();
  // Rotate-and-sum strides 1, 2, ..., L/2 (none for L = 1, although the paper still generates
  // a key for step 1 then).
  std::vector<int> strides;
  for (std::size_t s = 1; s < period; s <<= 1) strides.push_back(static_cast<int>(s));
  Ciphertext packed;
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t first = g * per, count = std::min(per, l.k() - first);
    std::vector<double> slots(s_count, 0.0);
    for (std::size_t b = 0; b < count; ++b) {
      const float* x = rows.data() + (first + b) * d;
      for (std::size_t j = 0; j < d; ++j) slots[b * period + j] = x[j];
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(Plaintext pt, op.encode(slots, query.level(), delta));
    Ciphertext ct = query;
    PRIVSEARCH_RETURN_IF_ERROR(op.multiply(ct, pt));
    PRIVSEARCH_RETURN_IF_ERROR(op.rescale(ct));
    PRIVSEARCH_RETURN_IF_ERROR(rotate_and_sum(op, ct, strides));
    if (l.kernel() != Kernel::kOneResponse) {
      outputs.push_back(std::move(ct));
      continue;
    }
    // Sparse mask at the score slots b*L, not rescaled, then a left shift by g composed from
    // the power-of-two rotations.
    std::vector<double> mask(s_count, 0.0);
    for (std::size_t b = 0; b < count; ++b) mask[b * period] = 1.0;
    PRIVSEARCH_ASSIGN_OR_RETURN(
        Plaintext pm, op.encode(mask, ct.level(), unrescaled_mask_scale(params, ct.scale())));
    PRIVSEARCH_RETURN_IF_ERROR(op.multiply(ct, pm));
    for (int s : strides) {
      if ((g & static_cast<std::size_t>(s)) != 0) {
        PRIVSEARCH_ASSIGN_OR_RETURN(ct, op.rotate(ct, s));
      }
    }
    if (g == 0) {
      packed = std::move(ct);
    } else {
      PRIVSEARCH_RETURN_IF_ERROR(op.add(packed, ct));
    }
  }
  if (l.kernel() == Kernel::kOneResponse) outputs.push_back(std::move(packed));
  return Status();
}

// The fast kernel (layout.h) over one query: the baby-step rotations of the query are made once
// (hoisted), then each output ciphertext is the baby-step/giant-step sum of plaintext products,
// the window sum, the rescale and the score mask.
class FastKernel {
 public:
  FastKernel(const KernelLayout& l, const ckks::Params& params, Counted& op,
             std::span<const float> rows, std::size_t threads)
      : l_(l),
        params_(params),
        op_(op),
        rows_(rows),
        threads_(std::max<std::size_t>(1, threads)),
        used_(l.blocks() * l.period()),
        slot_class_(used_),
        slot_pos_(used_) {
    // Per slot s' of the used range: its candidate class and its position in the block.
    for (std::size_t sp = 0; sp < used_; ++sp) {
      const std::size_t pos = sp % l.period();
      slot_class_[sp] = static_cast<std::uint32_t>((sp / l.period()) * l.width() + pos % l.width());
      slot_pos_[sp] = static_cast<std::uint32_t>(pos);
    }
    tallies_.resize(threads_);
    for (std::size_t w = 0; w < threads_; ++w) {
      workers_.push_back(Worker{w == 0 ? op_ : op_.counting_into(tallies_[w]),
                                std::vector<double>(l.slots()), std::vector<double>(l.slots())});
    }
  }

  Status run(const Ciphertext& query, std::vector<Ciphertext>& outputs) {
    PRIVSEARCH_RETURN_IF_ERROR(make_baby_steps(query));
    for (std::size_t o = 0; o < l_.outputs(); ++o) {
      const std::size_t first = o * l_.capacity();
      const std::size_t count = std::min(l_.capacity(), l_.k() - first);
      PRIVSEARCH_ASSIGN_OR_RETURN(Ciphertext acc, window_products(first, count));
      PRIVSEARCH_RETURN_IF_ERROR(finish(acc, count));
      outputs.push_back(std::move(acc));
    }
    for (std::size_t w = 1; w < threads_; ++w) op_.add_counts(tallies_[w].counts);
    return Status();
  }

 private:
  // A thread's operation counter and plaintext slot buffers (worker 0 is the calling thread,
  // counting into the result itself; helpers count apart and are merged at the end).
  struct Worker {
    Counted op;
    std::vector<double> slots, slots2;
  };

  // Baby steps: rot(z, i) for i < b1, hoisted (one decomposition of the query); baby_[0] is the
  // query itself (no copy).
  Status make_baby_steps(const Ciphertext& query) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto hoisted, op_.evaluator().hoist(query));
    rotated_.resize(std::min(l_.baby(), l_.width()));
    baby_.assign(rotated_.size(), nullptr);
    baby_[0] = &query;
    for (std::size_t i = 1; i < baby_.size(); ++i) {
      PRIVSEARCH_ASSIGN_OR_RETURN(rotated_[i], op_.rotate_hoisted(hoisted, static_cast<int>(i)));
      baby_[i] = &rotated_[i];
    }
    return Status();
  }

  // P'_{g,i}[s] = P_j[(s - shift) mod S], j = shift + i: the value x_c[(pos + j) mod L'] of the
  // class owning slot s' = s - shift.
  void fill(std::size_t first, std::size_t count, std::size_t shift, std::size_t j,
            std::vector<double>& out) const {
    std::fill(out.begin(), out.end(), 0.0);
    const std::size_t s_count = l_.slots(), d = l_.dim();
    for (std::size_t sp = 0; sp < used_; ++sp) {
      const std::size_t c = slot_class_[sp];
      std::size_t dim = slot_pos_[sp] + j;
      if (dim >= l_.period()) dim -= l_.period();
      std::size_t dst = sp + shift;
      if (dst >= s_count) dst -= s_count;
      if (c < count && dim < d) out[dst] = rows_[(first + c) * d + dim];
    }
  }

  // Giant group g: sum over its baby steps of P'_{g,i} * rot(z, i) (two plaintexts share one
  // complex DFT).
  Result<Ciphertext> group_product(std::size_t first, std::size_t count, std::size_t shift,
                                   Worker& w) const {
    const std::size_t level = baby_[0]->level();
    const double delta = params_.default_scale();
    const std::size_t terms = std::min(l_.baby(), l_.width() - shift);
    Ciphertext inner;
    for (std::size_t i = 0; i < terms; i += 2) {
      fill(first, count, shift, shift + i, w.slots);
      if (i + 1 < terms) {
        fill(first, count, shift, shift + i + 1, w.slots2);
        PRIVSEARCH_ASSIGN_OR_RETURN(auto pts, w.op.encode_pair(w.slots, w.slots2, level, delta));
        PRIVSEARCH_RETURN_IF_ERROR(w.op.multiply_accumulate(inner, *baby_[i], pts.first));
        PRIVSEARCH_RETURN_IF_ERROR(w.op.multiply_accumulate(inner, *baby_[i + 1], pts.second));
      } else {
        PRIVSEARCH_ASSIGN_OR_RETURN(Plaintext pt, w.op.encode(w.slots, level, delta));
        PRIVSEARCH_RETURN_IF_ERROR(w.op.multiply_accumulate(inner, *baby_[i], pt));
      }
    }
    return inner;
  }

  // Giant steps: each group's products are rotated into place in the extended basis and summed
  // there, so all b2 rotations share one ModDown; group 0 (no rotation) is added after it
  // (ModDown(P x + X) = x + ModDown(X) exactly). The groups are independent: spread over the
  // threads and summed in group order (exact modular additions: the same bytes for any count).
  Result<Ciphertext> window_products(std::size_t first, std::size_t count) {
    std::size_t groups = 0;
    while (groups < l_.giant() && groups * l_.baby() < l_.width()) ++groups;
    Ciphertext unrotated;
    std::vector<ckks::ExtendedCiphertext> rotated(groups);
    PRIVSEARCH_RETURN_IF_ERROR(run_tasks(threads_, groups, [&](std::size_t g, std::size_t wi) {
      Worker& w = workers_[wi];
      const std::size_t shift = g * l_.baby();
      PRIVSEARCH_ASSIGN_OR_RETURN(Ciphertext inner, group_product(first, count, shift, w));
      if (shift == 0) {
        unrotated = std::move(inner);
        return Status();
      }
      PRIVSEARCH_ASSIGN_OR_RETURN(rotated[g],
                                  w.op.rotate_extended(std::move(inner), static_cast<int>(shift)));
      return Status();
    }));
    Ciphertext acc = std::move(unrotated);
    if (groups > 1) {
      ckks::ExtendedCiphertext giant_sum = std::move(rotated[1]);
      for (std::size_t g = 2; g < groups; ++g)
        PRIVSEARCH_RETURN_IF_ERROR(op_.add(giant_sum, rotated[g]));
      PRIVSEARCH_ASSIGN_OR_RETURN(Ciphertext rotated_sum,
                                  op_.evaluator().mod_down(std::move(giant_sum)));
      PRIVSEARCH_RETURN_IF_ERROR(op_.add(acc, rotated_sum));
    }
    return acc;
  }

  // Window sum before the rescale: at scale delta^2 the rotations' ModDown rounding (~2^11 slot
  // units) is negligible, and the rescale's own rounding is not multiplied by w. Then keep only
  // the score slots: the other slots hold partial sums of other windows.
  Status finish(Ciphertext& acc, std::size_t count) {
    const std::size_t b = l_.width();
    PRIVSEARCH_RETURN_IF_ERROR(sum_of_rotations(op_, acc, b, l_.sum_baby(), l_.sum_giant()));
    PRIVSEARCH_RETURN_IF_ERROR(op_.rescale(acc));
    auto& slots = workers_[0].slots;
    std::fill(slots.begin(), slots.end(), 0.0);
    for (std::size_t c = 0; c < count; ++c) slots[(c / b) * l_.period() + c % b] = 1.0;
    const bool can_rescale = acc.level() >= 1;
    const double mask_scale =
        can_rescale ? params_.default_scale() : unrescaled_mask_scale(params_, acc.scale());
    PRIVSEARCH_ASSIGN_OR_RETURN(Plaintext pm, op_.encode(slots, acc.level(), mask_scale));
    PRIVSEARCH_RETURN_IF_ERROR(op_.multiply(acc, pm));
    if (can_rescale) PRIVSEARCH_RETURN_IF_ERROR(op_.rescale(acc));
    return Status();
  }

  const KernelLayout& l_;
  const ckks::Params& params_;
  Counted& op_;
  std::span<const float> rows_;
  std::size_t threads_;
  std::size_t used_;  // slots carrying candidate classes
  std::vector<std::uint32_t> slot_class_, slot_pos_;
  std::vector<KernelResult> tallies_;  // helpers' counts
  std::vector<Worker> workers_;
  std::vector<Ciphertext> rotated_;
  std::vector<const Ciphertext*> baby_;
};

Status fast_kernel(const KernelLayout& l, const ckks::Params& params, Counted& op,
                   const Ciphertext& query, std::span<const float> rows,
                   std::vector<Ciphertext>& outputs, std::size_t threads) {
  FastKernel kernel(l, params, op, rows, threads);
  return kernel.run(query, outputs);
}

}  // namespace

Status validate_kernel_inputs(const KernelLayout& l, const ckks::Params& params,
                              const ckks::GaloisKeys& keys, const ckks::Ciphertext& query,
                              std::span<const float> rows) {
  if (l.slots() != params.slots()) {
    return failed_precondition_error("layout was made for other parameters");
  }
  PRIVSEARCH_RETURN_IF_ERROR(ckks::Evaluator(params).check_ciphertext(query, "query"));
  if (query.level() != params.max_level()) {
    return failed_precondition_error(
        fmt::format("query is at level {}; the kernels need the top level {}", query.level(),
                    params.max_level()));
  }
  if (l.kernel() == Kernel::kFast && params.max_level() < 1) {
    return failed_precondition_error("the fast kernel needs at least two data primes");
  }
  if (rows.size() != l.k() * l.dim()) {
    return invalid_argument_error(fmt::format("rows hold {} values; K x d' = {} x {} = {} expected",
                                              rows.size(), l.k(), l.dim(), l.k() * l.dim()));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!std::isfinite(rows[i])) {
      return invalid_argument_error(
          fmt::format("row {} (candidate {}) has a non-finite value at dimension {}", i / l.dim(),
                      i / l.dim(), i % l.dim()));
    }
  }
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, keys.params_id(), "Galois key set"));
  for (int step : l.rotation_steps()) {
    PRIVSEARCH_RETURN_IF_ERROR(keys.key_for_step(step, params.n()).status());
  }
  return Status();
}

namespace {
Result<KernelResult> packed_kernel(const KernelLayout& layout, const ckks::Evaluator& evaluator,
                                   const ckks::GaloisKeys& keys, const ckks::Ciphertext& query,
                                   std::span<const float> rows, std::size_t threads,
                                   double row_norm_bound) {
  const auto t0 = std::chrono::steady_clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(
      auto packed,
      evaluate_packed_kernel(layout, evaluator, keys, query, rows, threads,
                             row_norm_bound > 0 ? row_norm_bound : kPackedDefaultRowNormBound));
  KernelResult out;
  out.outputs = std::move(packed.outputs);
  out.counts.multiply_plain = packed.plaintext_products;
  out.counts.encodes = packed.plaintext_products;
  out.counts.rotations = packed.key_switches;
  out.he_ms = ms_since(t0);
  return out;
}
}  // namespace

Result<KernelResult> evaluate_kernel(const KernelLayout& layout, const ckks::Encoder& encoder,
                                     const ckks::Evaluator& evaluator, const ckks::GaloisKeys& keys,
                                     const ckks::Ciphertext& query, std::span<const float> rows,
                                     std::size_t threads, double row_norm_bound) {
  const ckks::Params& params = evaluator.params();
  if (layout.kernel() == Kernel::kPacked) {
    return packed_kernel(layout, evaluator, keys, query, rows, threads, row_norm_bound);
  }
  PRIVSEARCH_RETURN_IF_ERROR(validate_kernel_inputs(layout, params, keys, query, rows));
  KernelResult out;
  Counted op(encoder, evaluator, keys, out);
  const auto t0 = std::chrono::steady_clock::now();
  if (layout.kernel() == Kernel::kFast) {
    PRIVSEARCH_RETURN_IF_ERROR(fast_kernel(layout, params, op, query, rows, out.outputs, threads));
  } else {
    PRIVSEARCH_RETURN_IF_ERROR(paper_kernels(layout, params, op, query, rows, out.outputs));
  }
  out.he_ms = ms_since(t0) - out.encode_ms;
  return out;
}

}  // namespace privsearch::rerank

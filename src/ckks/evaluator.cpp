#include "ckks/evaluator.h"

#include <fmt/format.h>

#include <cmath>

#include "ckks/internal/poly_util.h"
#include "ring/shoup_kernels.h"

namespace privsearch::ckks {

bool scales_match(double a, double b) {
  return std::fabs(a - b) <= std::ldexp(std::fmax(std::fabs(a), std::fabs(b)), -40);
}

Status Evaluator::check_ciphertext(const Ciphertext& c, const char* what) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, c.params_id(), what));
  if (c.level() > params_.max_level()) {
    return failed_precondition_error(
        fmt::format("{} level {} exceeds max level {}", what, c.level(), params_.max_level()));
  }
  const std::size_t rows = c.level() + 1;
  if (c.c0().n() != params_.n() || c.c1().n() != params_.n() || c.c0().num_moduli() != rows ||
      c.c1().num_moduli() != rows || !c.c0().is_ntt() || !c.c1().is_ntt()) {
    return failed_precondition_error(fmt::format("{} polynomials do not match its level", what));
  }
  return Status();
}

Status Evaluator::check_plaintext(const Plaintext& p, const char* what) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params_, p.params_id(), what));
  if (p.level() > params_.max_level() || p.poly().n() != params_.n() ||
      p.poly().num_moduli() != p.level() + 1 || !p.poly().is_ntt()) {
    return failed_precondition_error(fmt::format("{} polynomial does not match its level", what));
  }
  return Status();
}

namespace {
Status check_same_level(const Ciphertext& a, std::size_t level, const char* what) {
  if (a.level() != level) {
    return failed_precondition_error(
        fmt::format("{}: levels differ ({} vs {}); mod-switch first", what, a.level(), level));
  }
  return Status();
}
Status check_same_scale(double a, double b, const char* what) {
  if (!scales_match(a, b)) {
    return failed_precondition_error(
        fmt::format("{}: scales differ (2^{:.4f} vs 2^{:.4f})", what, std::log2(a), std::log2(b)));
  }
  return Status();
}
}  // namespace

Status Evaluator::add_inplace(Ciphertext& a, const Ciphertext& b) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "left operand"));
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(b, "right operand"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_level(a, b.level(), "add"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_scale(a.scale(), b.scale(), "add"));
  const auto q = params_.q_at_level(a.level());
  ring::add_inplace(a.mutable_c0(), b.c0(), q);
  ring::add_inplace(a.mutable_c1(), b.c1(), q);
  return Status();
}

Status Evaluator::sub_inplace(Ciphertext& a, const Ciphertext& b) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "left operand"));
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(b, "right operand"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_level(a, b.level(), "sub"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_scale(a.scale(), b.scale(), "sub"));
  const auto q = params_.q_at_level(a.level());
  ring::sub_inplace(a.mutable_c0(), b.c0(), q);
  ring::sub_inplace(a.mutable_c1(), b.c1(), q);
  return Status();
}

Status Evaluator::negate_inplace(Ciphertext& a) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "operand"));
  const auto q = params_.q_at_level(a.level());
  ring::negate_inplace(a.mutable_c0(), q);
  ring::negate_inplace(a.mutable_c1(), q);
  return Status();
}

Status Evaluator::add_plain_inplace(Ciphertext& a, const Plaintext& p) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "ciphertext"));
  PRIVSEARCH_RETURN_IF_ERROR(check_plaintext(p, "plaintext"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_level(a, p.level(), "add_plain"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_scale(a.scale(), p.scale(), "add_plain"));
  ring::add_inplace(a.mutable_c0(), p.poly(), params_.q_at_level(a.level()));
  return Status();
}

Status Evaluator::sub_plain_inplace(Ciphertext& a, const Plaintext& p) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "ciphertext"));
  PRIVSEARCH_RETURN_IF_ERROR(check_plaintext(p, "plaintext"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_level(a, p.level(), "sub_plain"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_scale(a.scale(), p.scale(), "sub_plain"));
  ring::sub_inplace(a.mutable_c0(), p.poly(), params_.q_at_level(a.level()));
  return Status();
}

Status Evaluator::multiply_plain_inplace(Ciphertext& a, const Plaintext& p) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "ciphertext"));
  PRIVSEARCH_RETURN_IF_ERROR(check_plaintext(p, "plaintext"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_level(a, p.level(), "multiply_plain"));
  const double new_scale = a.scale() * p.scale();
  const double log_q = params_.log_q_at_level(a.level());
  // As SEAL: the scale must stay below the modulus; how much headroom the values need is the
  // caller's business (the paper's one-response mask runs at 2^59 under a 60-bit q_0).
  if (!(std::log2(new_scale) < log_q)) {
    return out_of_range_error(fmt::format(
        "multiply_plain: result scale 2^{:.2f} does not fit the {:.1f}-bit modulus at level {}",
        std::log2(new_scale), log_q, a.level()));
  }
  const auto q = params_.q_at_level(a.level());
  ring::multiply_inplace(a.mutable_c0(), p.poly(), q);
  ring::multiply_inplace(a.mutable_c1(), p.poly(), q);
  a.set_scale(new_scale);
  return Status();
}

Status Evaluator::multiply_plain_accumulate(Ciphertext& acc, const Ciphertext& x,
                                            const Plaintext& p) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(x, "ciphertext"));
  PRIVSEARCH_RETURN_IF_ERROR(check_plaintext(p, "plaintext"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_level(x, p.level(), "multiply_plain_accumulate"));
  const double scale = x.scale() * p.scale();
  const auto q = params_.q_at_level(x.level());
  if (acc.c0().num_moduli() == 0) {
    ring::RnsPoly c0 = ring::RnsPoly::uninitialized(params_.n(), q.size(), true);
    ring::RnsPoly c1 = ring::RnsPoly::uninitialized(params_.n(), q.size(), true);
    for (std::size_t i = 0; i < q.size(); ++i) {
      ring::mul_row(x.c0().row(i), p.poly().row(i), c0.row(i), params_.n(), q[i]);
      ring::mul_row(x.c1().row(i), p.poly().row(i), c1.row(i), params_.n(), q[i]);
    }
    acc = Ciphertext(params_.id(), x.level(), scale, std::move(c0), std::move(c1));
    return Status();
  }
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(acc, "accumulator"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_level(acc, x.level(), "multiply_plain_accumulate"));
  PRIVSEARCH_RETURN_IF_ERROR(check_same_scale(acc.scale(), scale, "multiply_plain_accumulate"));
  ring::multiply_add(x.c0(), p.poly(), acc.mutable_c0(), q);
  ring::multiply_add(x.c1(), p.poly(), acc.mutable_c1(), q);
  return Status();
}

namespace {
// Divides one component (level l + 1 rows, NTT) by q_l with rounding; result has l rows.
void divide_round_by_last(const Params& params, std::size_t level, ring::RnsPoly& c) {
  const std::size_t n = params.n();
  const ring::Modulus& ql = params.key_moduli()[level];
  const std::uint64_t half = ql.value() >> 1;
  thread_local std::vector<std::uint64_t> last, tmp;
  last.assign(c.row(level), c.row(level) + n);
  tmp.resize(n);
  params.ntt(level).inverse(last.data());
  // Centred lift: r = [c]_{q_l} + half, then subtract half again modulo q_i (SEAL's trick).
  ring::add_constant_row(last.data(), half, n, ql);
  for (std::size_t i = 0; i < level; ++i) {
    const ring::Modulus& qi = params.key_moduli()[i];
    ring::mul_scalar_shoup_row(last.data(), 1, tmp.data(), n, qi);  // reduce mod q_i
    ring::add_constant_row(tmp.data(), qi.value() - qi.reduce(half), n, qi);
    params.ntt(i).forward(tmp.data());
    ring::sub_add_mul_scalar_row(c.row(i), tmp.data(), qi.value(), params.q_inv_mod_q(level, i),
                                 c.row(i), n, qi);
  }
  c.truncate_moduli(level);
}
}  // namespace

Status Evaluator::rescale_inplace(Ciphertext& a) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "ciphertext"));
  if (a.level() == 0) {
    return failed_precondition_error("rescale: the ciphertext is at level 0; no prime left");
  }
  const std::size_t level = a.level();
  const double ql = static_cast<double>(params_.key_moduli()[level].value());
  divide_round_by_last(params_, level, a.mutable_c0());
  divide_round_by_last(params_, level, a.mutable_c1());
  a.finish_rescale(a.scale() / ql);
  return Status();
}

Status Evaluator::mod_switch_to_level_inplace(Ciphertext& a, std::size_t level) const {
  PRIVSEARCH_RETURN_IF_ERROR(check_ciphertext(a, "ciphertext"));
  if (level > a.level()) {
    return failed_precondition_error(fmt::format(
        "mod_switch: target level {} is above the ciphertext's level {}", level, a.level()));
  }
  a.drop_to_level(level);
  return Status();
}

#define PRIVSEARCH_BY_VALUE_(expr)  \
  PRIVSEARCH_RETURN_IF_ERROR(expr); \
  return a

Result<Ciphertext> Evaluator::add(Ciphertext a, const Ciphertext& b) const {
  PRIVSEARCH_BY_VALUE_(add_inplace(a, b));
}
Result<Ciphertext> Evaluator::sub(Ciphertext a, const Ciphertext& b) const {
  PRIVSEARCH_BY_VALUE_(sub_inplace(a, b));
}
Result<Ciphertext> Evaluator::negate(Ciphertext a) const {
  PRIVSEARCH_BY_VALUE_(negate_inplace(a));
}
Result<Ciphertext> Evaluator::add_plain(Ciphertext a, const Plaintext& p) const {
  PRIVSEARCH_BY_VALUE_(add_plain_inplace(a, p));
}
Result<Ciphertext> Evaluator::multiply_plain(Ciphertext a, const Plaintext& p) const {
  PRIVSEARCH_BY_VALUE_(multiply_plain_inplace(a, p));
}
Result<Ciphertext> Evaluator::rescale(Ciphertext a) const {
  PRIVSEARCH_BY_VALUE_(rescale_inplace(a));
}
Result<Ciphertext> Evaluator::mod_switch_to_level(Ciphertext a, std::size_t level) const {
  PRIVSEARCH_BY_VALUE_(mod_switch_to_level_inplace(a, level));
}
#undef PRIVSEARCH_BY_VALUE_

}  // namespace privsearch::ckks

// Leakage estimators of the search paper's audits (section 4.4; reference notes section 4.2) and
// the statistics they report (eval/statistics.h). Pure functions on vectors, testable on
// constructed cases.
//
// What the provider can do with only the candidate IDs and its own exact projected rows
// (rows = unit(X[ids]) in the order it receives them, r = 1..K):
//   centroid   unit(mean(rows))                                      set-only
//   log_rank   unit(sum_r w_r rows_r / sum_r w_r), w_r = 1/log2(r+1)  order-aware
//   ridge      Xc = rows - mean; y_r = Phi^{-1}((K - r + 0.5)/K), centred; G = Xc Xc^T;
//              alpha = 0.1 trace(G)/K; (G + alpha I) a = y - Xc prior; unit(prior + Xc^T a)
//              with prior = log_rank (order-aware)
// Linkability: views A = ids[0::2] and B = ids[1::2] of each query; positives cos(A_i, B_i),
// negatives cos(A_i, B_{i+shift}) for seeded shifts; ROC AUC (Mann-Whitney, ties count 1/2)
// and the TPR at FPR <= 1%.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "eval/statistics.h"

namespace privsearch::eval {

using Vec = std::vector<double>;

Vec unit(Vec v);
double cosine(std::span<const double> a, std::span<const double> b);

// rows: K rows of dimension d, row-major (already unit-normalized or not: each is normalized).
Vec centroid_estimate(std::span<const double> rows, std::size_t k, std::size_t d);
Vec log_rank_estimate(std::span<const double> rows, std::size_t k, std::size_t d);
Vec ridge_rank_estimate(std::span<const double> rows, std::size_t k, std::size_t d);

// Inverse standard normal CDF (Acklam's rational approximation, relative error < 1.2e-9).
double inverse_normal_cdf(double p);
// Solves (A) x = b for symmetric positive definite A (n x n, row-major) by Cholesky;
// false if A is not positive definite.
bool solve_spd(std::vector<double> a, std::vector<double>& b, std::size_t n);

double roc_auc(std::span<const double> positives, std::span<const double> negatives);
// Largest TPR over thresholds whose FPR <= max_fpr.
double tpr_at_fpr(std::span<const double> positives, std::span<const double> negatives,
                  double max_fpr);

}  // namespace privsearch::eval

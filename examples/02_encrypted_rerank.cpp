// Example 2: private reranking of candidates with the fast kernel.
//
// The client encrypts its projected query; the provider scores K candidate rows it holds
// (public material only) and answers with one compact ciphertext; the client decrypts the K
// scores and ranks them. Registered as a ctest.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "ckks/client/keygen.h"
#include "ckks/compact.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"
#include "rerank/client/scores.h"
#include "rerank/kernels.h"

using namespace privsearch;
using namespace privsearch::rerank;

int main() {
  const auto params = ckks::Params::create(ckks::rerank_n8192_literal()).value();
  const std::size_t dim = 96, k = 40;

  // Client: keys for exactly the rotations the layout needs, and the encrypted query.
  const KernelLayout layout = make_layout(params, Kernel::kFast, dim, k).value();
  Prng prng = Prng::create();
  const ckks::KeyGenerator keygen(params);
  const ckks::SecretKey sk = keygen.create_secret_key(prng);
  const auto keys = make_rotation_keys(layout, keygen, sk, prng).value();
  std::vector<double> z(dim);
  for (std::size_t j = 0; j < dim; ++j) z[j] = std::cos(0.1 * double(j)) / std::sqrt(dim / 2.0);
  const auto query = encrypt_query(layout, params, sk, z, prng).value();
  const auto request =
      ckks::serialize_ciphertext(params, query, ckks::CiphertextForm::kSeeded).value();
  std::printf("layout: period %zu, %zu classes x %zu windows, %zu rotation keys (%zu bytes)\n",
              layout.period(), layout.width(), layout.windows(), layout.rotation_steps().size(),
              ckks::serialize_galois_keys(params, keys).size());

  // Provider: its candidate rows (here synthetic) and the kernel, then a compact response.
  std::vector<float> rows(k * dim);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i] = static_cast<float>(std::sin(0.013 * double(i * i % 997)) / std::sqrt(dim / 2.0));
  }
  const auto encoder = ckks::Encoder::create(params).value();
  const ckks::Evaluator evaluator(params);
  const auto received = ckks::deserialize_ciphertext(params, request).value();
  const auto result = evaluate_kernel(layout, encoder, evaluator, keys, received, rows).value();
  const auto response =
      ckks::compact(params, result.outputs[0], ckks::CompactOptions{1.0, 18.0}).value();
  const auto wire = ckks::serialize_compact(response);
  std::printf(
      "provider: %zu rotations, %zu plaintext products; request %zu bytes, response %zu "
      "bytes\n",
      result.counts.rotations, result.counts.multiply_plain, request.size(), wire.size());

  // Client: decrypt, compare with the plaintext scores, rank.
  const auto back = ckks::deserialize_compact(params, wire).value();
  const auto scores = decrypt_compact_scores(layout, params, sk, std::span(&back, 1)).value();
  double max_err = 0;
  for (std::size_t c = 0; c < k; ++c) {
    double e = 0;
    for (std::size_t j = 0; j < dim; ++j) e += z[j] * rows[c * dim + j];
    max_err = std::fmax(max_err, std::fabs(scores[c] - e));
  }
  std::vector<std::size_t> order(k);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return scores[a] > scores[b]; });
  std::printf("client: top-3 candidates %zu, %zu, %zu; max score error %.3g\n", order[0], order[1],
              order[2], max_err);
  return max_err < 5e-6 ? 0 : 1;
}

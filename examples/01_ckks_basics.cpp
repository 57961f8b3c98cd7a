// Example 1: the CKKS core in one page.
//
// A client encrypts a vector under its secret key (seeded, so the ciphertext is half size); a
// provider holding only public objects multiplies it by its own plaintext vector and rescales;
// the client decrypts. This is the arithmetic under privsearch's encrypted rerank.
// Registered as a ctest, so it cannot rot.
#include <cmath>
#include <cstdio>
#include <vector>

#include "ckks/client/decryptor.h"
#include "ckks/client/encryptor.h"
#include "ckks/client/keygen.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"

using namespace privsearch;
using namespace privsearch::ckks;

int main() {
  // 1. Parameters: the search paper's preset (n = 8192, q = [60, 40], P = [60], scale 2^40),
  //    checked against the 128-bit HE-standard table by create().
  const Params params = Params::create(paper_n8192_literal()).value();
  const Encoder encoder = Encoder::create(params).value();
  std::printf("params %s: n = %zu, %zu slots, log2(QP) = %.1f\n", params.name().c_str(), params.n(),
              params.slots(), params.log_qp());

  // 2. Client: keys from the OS-seeded CSPRNG.
  Prng prng = Prng::create();
  const KeyGenerator keygen(params);
  const SecretKey sk = keygen.create_secret_key(prng);

  // 3. Client: encode and encrypt a query vector; serialize it in seeded form.
  std::vector<double> query(params.slots());
  for (std::size_t i = 0; i < query.size(); ++i) query[i] = std::sin(0.01 * double(i));
  const Plaintext q_pt = encoder.encode(query, params.max_level(), params.default_scale()).value();
  const Ciphertext q_ct = Encryptor(params).encrypt_symmetric(sk, q_pt, prng).value();
  const auto wire = serialize_ciphertext(params, q_ct, CiphertextForm::kSeeded).value();
  std::printf("query ciphertext: %zu bytes on the wire (seeded)\n", wire.size());

  // 4. Provider: only params, encoder and evaluator. Multiply by its rows, rescale.
  const Ciphertext received = deserialize_ciphertext(params, wire).value();
  std::vector<double> row(params.slots());
  for (std::size_t i = 0; i < row.size(); ++i) row[i] = std::cos(0.02 * double(i));
  const Evaluator evaluator(params);
  const Plaintext row_pt = encoder.encode(row, received.level(), params.default_scale()).value();
  Ciphertext product = evaluator.multiply_plain(received, row_pt).value();
  product = evaluator.rescale(product).value();
  const auto response = serialize_ciphertext(params, product, CiphertextForm::kFull).value();
  std::printf("response ciphertext: %zu bytes at level %zu\n", response.size(), product.level());

  // 5. Client: decrypt and compare with the plaintext computation.
  const Ciphertext back = deserialize_ciphertext(params, response).value();
  const auto result = encoder.decode(Decryptor(params).decrypt(sk, back).value()).value();
  double max_err = 0;
  for (std::size_t i = 0; i < result.size(); ++i) {
    max_err = std::fmax(max_err, std::fabs(result[i] - query[i] * row[i]));
  }
  std::printf("max error %.3g (%.1f bits of precision)\n", max_err, -std::log2(max_err));
  return max_err < 1e-5 ? 0 : 1;
}

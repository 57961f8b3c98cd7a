#include "suites/bench_ckks.h"

#include <cmath>

#include <fmt/format.h>

#include "harness/measure.h"
#include "ckks/client/compact_decryptor.h"
#include "ckks/client/decryptor.h"
#include "ckks/compact.h"
#include "ckks/client/encryptor.h"
#include "ckks/client/keygen.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/galois_keys.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"

namespace privsearch::tools {

namespace {

using namespace privsearch::ckks;

std::vector<double> random_unit_values(Prng& prng, std::size_t count) {
  std::vector<double> v(count);
  for (auto& x : v) x = static_cast<double>(prng.next_u64() >> 11) * 0x1p-52 * 2.0 - 1.0;
  return v;
}

double precision_bits(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::fmax(m, std::fabs(a[i] - b[i]));
  return m == 0 ? 64.0 : -std::log2(m);
}

Result<nlohmann::json> bench_preset(const Params& params, const CkksBenchOptions& o) {
  nlohmann::json j;
  const std::size_t runs = o.runs, warm = o.warmup;
  // Per-operation timings are at two data primes (the fresh query level of the paper's
  // preset); for the three-prime IFMA preset that is level 1.
  const std::size_t level = 1;
  j["n"] = params.n();
  j["log_qp"] = std::round(params.log_qp() * 100) / 100;
  j["data_primes_timed"] = level + 1;
  Prng prng = Prng::create();

  // NTT of one polynomial modulo q_0.
  const auto& ntt = params.ntt(0);
  std::vector<std::uint64_t> poly(params.n());
  for (auto& x : poly) x = prng.uniform_below(params.q_moduli()[0].value());
  put_timing(j, "ntt_forward_us", time_runs(warm, runs, [&] { ntt.forward(poly.data()); }));
  put_timing(j, "ntt_inverse_us", time_runs(warm, runs, [&] { ntt.inverse(poly.data()); }));
  j["ntt_path"] = std::string(ring::ntt_path_name(ntt.default_path()));
  if (ntt.default_path() != ring::NttPath::kScalar) {
    put_timing(j, "ntt_forward_scalar_us",
               time_runs(warm, runs, [&] { ntt.forward(poly.data(), ring::NttPath::kScalar); }));
  }

  PRIVSEARCH_ASSIGN_OR_RETURN(const Encoder encoder, Encoder::create(params));
  const auto values = random_unit_values(prng, params.slots());
  const auto other = random_unit_values(prng, params.slots());
  const double delta = params.default_scale();
  Plaintext pt;
  put_timing(j, "encode_us", time_runs(warm, runs, [&] {
               pt = encoder.encode(values, level, delta).value();
             }));
  PRIVSEARCH_ASSIGN_OR_RETURN(const Plaintext pt0, encoder.encode(values, 0, delta));
  std::vector<double> decoded;
  put_timing(j, "decode_us", time_runs(warm, runs, [&] { decoded = encoder.decode(pt0).value(); }));

  const KeyGenerator keygen(params);
  std::optional<SecretKey> sk;
  std::optional<PublicKey> pk;
  put_timing(j, "keygen_ms", time_runs(1, std::max<std::size_t>(runs / 5, 10), [&] {
               sk.emplace(keygen.create_secret_key(prng));
               pk = keygen.create_public_key(*sk, prng).value();
             }),
             1000.0);
  const Encryptor encryptor(params);
  const Decryptor decryptor(params);
  const Evaluator evaluator(params);
  Ciphertext ct;
  put_timing(j, "encrypt_symmetric_us", time_runs(warm, runs, [&] {
               ct = encryptor.encrypt_symmetric(*sk, pt, prng).value();
             }));
  std::vector<std::uint8_t> query_bytes;
  put_timing(j, "encrypt_symmetric_serialize_us", time_runs(warm, runs, [&] {
               const auto c = encryptor.encrypt_symmetric(*sk, pt, prng).value();
               query_bytes = serialize_ciphertext(params, c, CiphertextForm::kSeeded).value();
             }));
  Ciphertext ct_pub;
  put_timing(j, "encrypt_public_us", time_runs(warm, runs, [&] {
               ct_pub = encryptor.encrypt_public(*pk, pt, prng).value();
             }));
  Plaintext dec;
  put_timing(j, "decrypt_us", time_runs(warm, runs, [&] { dec = decryptor.decrypt(*sk, ct).value(); }));
  PRIVSEARCH_ASSIGN_OR_RETURN(Ciphertext ct_last, evaluator.mod_switch_to_level(ct, 0));
  put_timing(j, "decrypt_decode_last_level_us", time_runs(warm, runs, [&] {
               decoded = encoder.decode(decryptor.decrypt(*sk, ct_last).value()).value();
             }));

  PRIVSEARCH_ASSIGN_OR_RETURN(const Plaintext pt_other, encoder.encode(other, level, delta));
  Ciphertext prod;
  put_timing(j, "multiply_plain_us", time_runs(warm, runs, [&] {
               prod = evaluator.multiply_plain(ct, pt_other).value();
             }));
  Ciphertext rescaled;
  put_timing(j, "rescale_us", time_runs(warm, runs, [&] {
               rescaled = evaluator.rescale(prod).value();
             }));

  // Rotations (issue "CKKS rotations"): one Galois key per step, timed at one data prime (the
  // response level) and at two (a fresh query), plus the marginal cost of a hoisted rotation.
  std::vector<int> steps(16);
  for (int k = 0; k < 16; ++k) steps[static_cast<std::size_t>(k)] = k + 1;
  GaloisKeys gk;
  const TimingStats gk_time = time_runs(1, 3, [&] {
    gk = keygen.create_galois_keys(*sk, steps, false, prng).value();
  });
  j["galois_keygen_ms"] = std::round(gk_time.median_us / 16.0) / 1000.0;
  {
    const std::vector<int> one = {1};
    const auto gk1 = keygen.create_galois_keys(*sk, one, false, prng).value();
    j["galois_key_bytes"] = serialize_galois_keys(params, gk1).size();
  }
  Ciphertext rot;
  put_timing(j, "rotate_last_level_us", time_runs(warm, runs, [&] {
               rot = evaluator.rotate(ct_last, 1, gk).value();
             }));
  put_timing(j, "rotate_fresh_us", time_runs(warm, runs, [&] {
               rot = evaluator.rotate(ct, 1, gk).value();
             }));
  const TimingStats hoist16 = time_runs(warm, std::max<std::size_t>(runs / 4, 20), [&] {
    const auto h = evaluator.hoist(ct).value();
    for (int k = 1; k <= 16; ++k) rot = evaluator.rotate_hoisted(h, k, gk).value();
  });
  const TimingStats hoist1 = time_runs(warm, std::max<std::size_t>(runs / 4, 20), [&] {
    const auto h = evaluator.hoist(ct).value();
    rot = evaluator.rotate_hoisted(h, 1, gk).value();
  });
  j["hoisted_rotation_us"] = std::round((hoist16.median_us - hoist1.median_us) / 15.0 * 1000) / 1000;
  j["hoist16_total_us"] = std::round(hoist16.median_us * 1000) / 1000;
  // Double hoisting: rotations left in the extended basis (no ModDown per rotation), as the
  // rerank kernels use them before one final ModDown.
  ExtendedCiphertext ext;
  const TimingStats dh16 = time_runs(warm, std::max<std::size_t>(runs / 4, 20), [&] {
    const auto h = evaluator.hoist(ct).value();
    for (int k = 1; k <= 16; ++k) ext = evaluator.rotate_hoisted_extended(h, k, gk).value();
  });
  const TimingStats dh1 = time_runs(warm, std::max<std::size_t>(runs / 4, 20), [&] {
    const auto h = evaluator.hoist(ct).value();
    ext = evaluator.rotate_hoisted_extended(h, 1, gk).value();
  });
  j["double_hoisted_rotation_us"] =
      std::round((dh16.median_us - dh1.median_us) / 15.0 * 1000) / 1000;
  {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto rot_pt, decryptor.decrypt(*sk, rot));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto rot_back, encoder.decode(rot_pt));
    std::vector<double> expect_rot(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) expect_rot[i] = values[(i + 1) % values.size()];
    const double bits_rot = precision_bits(expect_rot, rot_back);
    j["rotate_precision_bits"] = std::round(bits_rot * 100) / 100;
    if (bits_rot < params.log_scale() - 16.0) {
      return internal_error("rotation correctness check failed");
    }
  }

  // Compact response: a last-level ciphertext of values in [-1, 1] at the preset's scale,
  // compacted for 18 bits (the paper's response: 131,876 bytes, max error 1.5e-5 ~ 16 bits).
  {
    const CompactOptions copts{1.0, 18.0};
    CompactCiphertext cc;
    put_timing(j, "compact_us", time_runs(warm, runs, [&] {
                 cc = compact(params, ct_last, copts).value();
               }));
    const auto cbytes = serialize_compact(cc);
    j["compact_response_bytes"] = cbytes.size();
    j["compact_response_predicted_bits"] =
        std::round(predicted_compact_precision_bits(params, cc.layout(), cc.scale(), 1.0) * 100) / 100;
    const CompactDecryptor cdec(params);
    std::vector<double> cback;
    put_timing(j, "compact_decrypt_decode_us", time_runs(warm, runs, [&] {
                 cback = cdec.decrypt_decode(*sk, encoder,
                                             deserialize_compact(params, cbytes).value()).value();
               }));
    const double cbits = precision_bits(values, cback);
    j["compact_response_precision_bits"] = std::round(cbits * 100) / 100;
    j["compact_layout"] = {{"log_modulus", cc.layout().log_modulus},
                           {"c0_bits", cc.layout().c0_bits},
                           {"c1_bits", cc.layout().c1_bits},
                           {"scale_up_bits", cc.layout().scale_up_bits}};
    if (cbits < 17) return internal_error("compact response correctness check failed");
  }

  PRIVSEARCH_ASSIGN_OR_RETURN(auto seeded, serialize_ciphertext(params, ct, CiphertextForm::kSeeded));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto full, serialize_ciphertext(params, ct, CiphertextForm::kFull));
  j["ciphertext_seeded_bytes"] = seeded.size();
  j["ciphertext_bytes"] = full.size();
  j["public_key_bytes"] = serialize_public_key(params, *pk).size();

  // Correctness checks after timing.
  PRIVSEARCH_ASSIGN_OR_RETURN(auto back_ct, deserialize_ciphertext(params, query_bytes));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto back_pt, decryptor.decrypt(*sk, back_ct));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto back, encoder.decode(back_pt));
  const double bits_sym = precision_bits(values, back);
  PRIVSEARCH_ASSIGN_OR_RETURN(auto pub_pt, decryptor.decrypt(*sk, ct_pub));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto pub_back, encoder.decode(pub_pt));
  const double bits_pub = precision_bits(values, pub_back);
  PRIVSEARCH_ASSIGN_OR_RETURN(auto prod_pt, decryptor.decrypt(*sk, rescaled));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto prod_back, encoder.decode(prod_pt));
  std::vector<double> expected(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) expected[i] = values[i] * other[i];
  const double bits_prod = precision_bits(expected, prod_back);
  j["encrypt_decrypt_precision_bits"] = std::round(std::min(bits_sym, bits_pub) * 100) / 100;
  j["encrypt_symmetric_precision_bits"] = std::round(bits_sym * 100) / 100;
  j["encrypt_public_precision_bits"] = std::round(bits_pub * 100) / 100;
  j["multiply_plain_rescale_precision_bits"] = std::round(bits_prod * 100) / 100;
  // Fresh noise is ~2^8 and rounding ~2^11 slot units: expect at least log2(delta) - 15 bits.
  const double min_bits = params.log_scale() - 15.0;
  if (bits_sym < min_bits || bits_pub < min_bits || bits_prod < min_bits - 2) {
    return internal_error(fmt::format(
        "correctness check failed for {}: precision {:.1f}/{:.1f}/{:.1f} bits", params.name(),
        bits_sym, bits_pub, bits_prod));
  }
  return j;
}

}  // namespace

Result<nlohmann::json> run_ckks_bench(const CkksBenchOptions& options) {
  nlohmann::json out;
  out["suite"] = "ckks";
  out["machine"] = machine_description();
  out["threads"] = 1;
  out["runs"] = options.runs;
  out["warmup"] = options.warmup;
  const auto names = options.presets.empty() ? preset_names() : options.presets;
  for (const auto& name : names) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, preset_literal(name));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, Params::create(lit));
    PRIVSEARCH_ASSIGN_OR_RETURN(out["presets"][name], bench_preset(params, options));
  }
  return out;
}

}  // namespace privsearch::tools

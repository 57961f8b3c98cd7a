#include "suites/bench_ckks.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <utility>

#include "ckks/client/compact_decryptor.h"
#include "ckks/client/decryptor.h"
#include "ckks/client/encryptor.h"
#include "ckks/client/keygen.h"
#include "ckks/compact.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/galois_keys.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"
#include "harness/measure.h"

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

// The figures of one preset, section by section into one JSON object; the state (keys,
// ciphertexts) carries from one section to the next, and every section checks what it timed.
class CkksPresetBench {
 public:
  CkksPresetBench(const Params& params, const CkksBenchOptions& o)
      : params_(params),
        runs_(o.runs),
        warm_(o.warmup),
        prng_(Prng::create()),
        keygen_(params),
        encryptor_(params),
        decryptor_(params),
        evaluator_(params) {}

  Result<CkksPresetFigures> run() {
    f_.n = params_.n();
    f_.log_qp = std::round(params_.log_qp() * 100) / 100;
    f_.data_primes_timed = kLevel + 1;
    time_transforms();
    PRIVSEARCH_RETURN_IF_ERROR(time_encoding());
    PRIVSEARCH_RETURN_IF_ERROR(time_encryption());
    time_rotations();
    PRIVSEARCH_RETURN_IF_ERROR(check_rotation());
    PRIVSEARCH_RETURN_IF_ERROR(time_compact());
    PRIVSEARCH_RETURN_IF_ERROR(check_correctness());
    return f_;
  }

 private:
  // Per-operation timings are at two data primes (the fresh query level of the paper's
  // preset); for the three-prime IFMA preset that is level 1.
  static constexpr std::size_t kLevel = 1;

  template <typename Fn>
  TimingStats timed(Fn&& fn, std::size_t runs = 0) {
    return time_runs(warm_, runs == 0 ? runs_ : runs, std::forward<Fn>(fn));
  }

  // NTT of one polynomial modulo q_0.
  void time_transforms() {
    const auto& ntt = params_.ntt(0);
    std::vector<std::uint64_t> poly(params_.n());
    for (auto& x : poly) x = prng_.uniform_below(params_.q_moduli()[0].value());
    f_.ntt_forward = timed([&] { ntt.forward(poly.data()); });
    f_.ntt_inverse = timed([&] { ntt.inverse(poly.data()); });
    f_.ntt_path = std::string(ring::ntt_path_name(ntt.default_path()));
    if (ntt.default_path() != ring::NttPath::kScalar) {
      f_.ntt_forward_scalar = timed([&] { ntt.forward(poly.data(), ring::NttPath::kScalar); });
    }
  }

  Status time_encoding() {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto encoder, Encoder::create(params_));
    encoder_.emplace(std::move(encoder));
    values_ = random_unit_values(prng_, params_.slots());
    other_ = random_unit_values(prng_, params_.slots());
    const double delta = params_.default_scale();
    f_.encode = timed([&] { pt_ = encoder_->encode(values_, kLevel, delta).value(); });
    PRIVSEARCH_ASSIGN_OR_RETURN(const Plaintext pt0, encoder_->encode(values_, 0, delta));
    std::vector<double> decoded;
    f_.decode = timed([&] { decoded = encoder_->decode(pt0).value(); });
    return Status();
  }

  Status time_encryption() {
    f_.keygen = time_runs(1, std::max<std::size_t>(runs_ / 5, 10), [&] {
      sk_.emplace(keygen_.create_secret_key(prng_));
      pk_ = keygen_.create_public_key(*sk_, prng_).value();
    });
    f_.encrypt_symmetric =
        timed([&] { ct_ = encryptor_.encrypt_symmetric(*sk_, pt_, prng_).value(); });
    f_.encrypt_symmetric_serialize = timed([&] {
      const auto c = encryptor_.encrypt_symmetric(*sk_, pt_, prng_).value();
      query_bytes_ = serialize_ciphertext(params_, c, CiphertextForm::kSeeded).value();
    });
    f_.encrypt_public =
        timed([&] { ct_pub_ = encryptor_.encrypt_public(*pk_, pt_, prng_).value(); });
    Plaintext dec;
    f_.decrypt = timed([&] { dec = decryptor_.decrypt(*sk_, ct_).value(); });
    PRIVSEARCH_ASSIGN_OR_RETURN(ct_last_, evaluator_.mod_switch_to_level(ct_, 0));
    std::vector<double> decoded;
    f_.decrypt_decode_last_level = timed(
        [&] { decoded = encoder_->decode(decryptor_.decrypt(*sk_, ct_last_).value()).value(); });
    PRIVSEARCH_ASSIGN_OR_RETURN(const Plaintext pt_other,
                                encoder_->encode(other_, kLevel, params_.default_scale()));
    Ciphertext prod;
    f_.multiply_plain = timed([&] { prod = evaluator_.multiply_plain(ct_, pt_other).value(); });
    f_.rescale = timed([&] { rescaled_ = evaluator_.rescale(prod).value(); });
    return Status();
  }

  // The marginal cost of one more rotation of a hoisted ciphertext: (16 rotations - 1) / 15,
  // each run including the hoist; `total16_us` receives the 16-rotation median.
  template <typename Rotate>
  double marginal_hoisted_rotation_us(Rotate&& rotate, double* total16_us) {
    const std::size_t hoist_runs = std::max<std::size_t>(runs_ / 4, 20);
    const TimingStats t16 = timed(
        [&] {
          const auto h = evaluator_.hoist(ct_).value();
          for (int k = 1; k <= 16; ++k) rotate(h, k);
        },
        hoist_runs);
    const TimingStats t1 = timed(
        [&] {
          const auto h = evaluator_.hoist(ct_).value();
          rotate(h, 1);
        },
        hoist_runs);
    if (total16_us != nullptr) *total16_us = t16.median_us;
    return std::round((t16.median_us - t1.median_us) / 15.0 * 1000) / 1000;
  }

  // One Galois key per step, rotations timed at one data prime (the response level) and at two
  // (a fresh query), plus the marginal cost of a hoisted and of a double-hoisted rotation.
  void time_rotations() {
    std::vector<int> steps(16);
    for (int k = 0; k < 16; ++k) steps[static_cast<std::size_t>(k)] = k + 1;
    const TimingStats gk_time = time_runs(
        1, 3, [&] { gk_ = keygen_.create_galois_keys(*sk_, steps, false, prng_).value(); });
    f_.galois_keygen_ms = std::round(gk_time.median_us / 16.0) / 1000.0;
    const std::vector<int> one = {1};
    const auto gk1 = keygen_.create_galois_keys(*sk_, one, false, prng_).value();
    f_.galois_key_bytes = serialize_galois_keys(params_, gk1).size();
    f_.rotate_last_level = timed([&] { rot_ = evaluator_.rotate(ct_last_, 1, gk_).value(); });
    f_.rotate_fresh = timed([&] { rot_ = evaluator_.rotate(ct_, 1, gk_).value(); });
    double hoist16_us = 0;
    f_.hoisted_rotation_us = marginal_hoisted_rotation_us(
        [&](const Evaluator::Hoisted& h, int k) {
          rot_ = evaluator_.rotate_hoisted(h, k, gk_).value();
        },
        &hoist16_us);
    f_.hoist16_total_us = std::round(hoist16_us * 1000) / 1000;
    // Double hoisting: rotations left in the extended basis (no ModDown per rotation), as the
    // rerank kernels use them before one final ModDown.
    ExtendedCiphertext ext;
    f_.double_hoisted_rotation_us = marginal_hoisted_rotation_us(
        [&](const Evaluator::Hoisted& h, int k) {
          ext = evaluator_.rotate_hoisted_extended(h, k, gk_).value();
        },
        nullptr);
  }

  Status check_rotation() {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto rot_pt, decryptor_.decrypt(*sk_, rot_));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto rot_back, encoder_->decode(rot_pt));
    std::vector<double> expect_rot(values_.size());
    for (std::size_t i = 0; i < values_.size(); ++i)
      expect_rot[i] = values_[(i + 1) % values_.size()];
    const double bits_rot = precision_bits(expect_rot, rot_back);
    f_.rotate_precision_bits = std::round(bits_rot * 100) / 100;
    if (bits_rot < params_.log_scale() - 16.0)
      return internal_error("rotation correctness check failed");
    return Status();
  }

  // Compact response: a last-level ciphertext of values in [-1, 1] at the preset's scale,
  // compacted for 18 bits (the paper's response: 131,876 bytes, max error 1.5e-5 ~ 16 bits).
  Status time_compact() {
    const CompactOptions copts{1.0, 18.0};
    CompactCiphertext cc;
    f_.compact = timed([&] { cc = compact(params_, ct_last_, copts).value(); });
    const auto cbytes = serialize_compact(cc);
    f_.compact_response_bytes = cbytes.size();
    f_.compact_response_predicted_bits =
        std::round(predicted_compact_precision_bits(params_, cc.layout(), cc.scale(), 1.0) * 100) /
        100;
    const CompactDecryptor cdec(params_);
    std::vector<double> cback;
    f_.compact_decrypt_decode = timed([&] {
      cback = cdec.decrypt_decode(*sk_, *encoder_, deserialize_compact(params_, cbytes).value())
                  .value();
    });
    const double cbits = precision_bits(values_, cback);
    f_.compact_response_precision_bits = std::round(cbits * 100) / 100;
    f_.compact_log_modulus = cc.layout().log_modulus;
    f_.compact_c0_bits = cc.layout().c0_bits;
    f_.compact_c1_bits = cc.layout().c1_bits;
    f_.compact_scale_up_bits = cc.layout().scale_up_bits;
    if (cbits < 17) return internal_error("compact response correctness check failed");
    return Status();
  }

  // Sizes, and the precision of what was timed (after timing).
  Status check_correctness() {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto seeded,
                                serialize_ciphertext(params_, ct_, CiphertextForm::kSeeded));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto full,
                                serialize_ciphertext(params_, ct_, CiphertextForm::kFull));
    f_.ciphertext_seeded_bytes = seeded.size();
    f_.ciphertext_bytes = full.size();
    f_.public_key_bytes = serialize_public_key(params_, *pk_).size();
    auto decrypt = [&](const Ciphertext& c) -> Result<std::vector<double>> {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto p, decryptor_.decrypt(*sk_, c));
      return encoder_->decode(p);
    };
    PRIVSEARCH_ASSIGN_OR_RETURN(auto back_ct, deserialize_ciphertext(params_, query_bytes_));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto back, decrypt(back_ct));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto pub_back, decrypt(ct_pub_));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto prod_back, decrypt(rescaled_));
    std::vector<double> expected(values_.size());
    for (std::size_t i = 0; i < values_.size(); ++i) expected[i] = values_[i] * other_[i];
    const double bits_sym = precision_bits(values_, back);
    const double bits_pub = precision_bits(values_, pub_back);
    const double bits_prod = precision_bits(expected, prod_back);
    f_.encrypt_symmetric_precision_bits = std::round(bits_sym * 100) / 100;
    f_.encrypt_public_precision_bits = std::round(bits_pub * 100) / 100;
    f_.multiply_plain_rescale_precision_bits = std::round(bits_prod * 100) / 100;
    // Fresh noise is ~2^8 and rounding ~2^11 slot units: expect at least log2(delta) - 15 bits.
    const double min_bits = params_.log_scale() - 15.0;
    if (bits_sym < min_bits || bits_pub < min_bits || bits_prod < min_bits - 2) {
      return internal_error(
          fmt::format("correctness check failed for {}: precision {:.1f}/{:.1f}/{:.1f} bits",
                      params_.name(), bits_sym, bits_pub, bits_prod));
    }
    return Status();
  }

  const Params& params_;
  std::size_t runs_, warm_;
  Prng prng_;
  CkksPresetFigures f_;
  std::optional<Encoder> encoder_;
  std::vector<double> values_, other_;
  Plaintext pt_;
  KeyGenerator keygen_;
  std::optional<SecretKey> sk_;
  std::optional<PublicKey> pk_;
  Encryptor encryptor_;
  Decryptor decryptor_;
  Evaluator evaluator_;
  Ciphertext ct_, ct_pub_, ct_last_, rescaled_, rot_;
  std::vector<std::uint8_t> query_bytes_;
  GaloisKeys gk_;
};

Result<CkksPresetFigures> bench_preset(const Params& params, const CkksBenchOptions& o) {
  CkksPresetBench bench(params, o);
  return bench.run();
}

}  // namespace

Result<CkksBenchResult> run_ckks_bench(const CkksBenchOptions& options) {
  CkksBenchResult out;
  out.machine = machine_description();
  out.runs = options.runs;
  out.warmup = options.warmup;
  const auto names = options.presets.empty() ? preset_names() : options.presets;
  for (const auto& name : names) {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, preset_literal(name));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, Params::create(lit));
    // The suite times rescaling and slot rotations: one data prime has neither.
    if (params.max_level() == 0) {
      if (options.presets.empty()) continue;
      return failed_precondition_error(fmt::format(
          "bench ckks times rescaling and needs two data primes; {} is the packed rerank "
          "kernel's preset (one prime): see `privsearch bench rerank --kernel packed`",
          name));
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(out.presets[name], bench_preset(params, options));
  }
  return out;
}

nlohmann::json CkksPresetFigures::to_json() const {
  auto r2 = [](double v) { return std::round(v * 100) / 100; };
  nlohmann::json j;
  j["n"] = n;
  j["log_qp"] = r2(log_qp);
  j["data_primes_timed"] = data_primes_timed;
  put_timing(j, "ntt_forward_us", ntt_forward);
  put_timing(j, "ntt_inverse_us", ntt_inverse);
  j["ntt_path"] = ntt_path;
  if (ntt_forward_scalar) put_timing(j, "ntt_forward_scalar_us", *ntt_forward_scalar);
  put_timing(j, "encode_us", encode);
  put_timing(j, "decode_us", decode);
  put_timing(j, "keygen_ms", keygen, 1000.0);
  put_timing(j, "encrypt_symmetric_us", encrypt_symmetric);
  put_timing(j, "encrypt_symmetric_serialize_us", encrypt_symmetric_serialize);
  put_timing(j, "encrypt_public_us", encrypt_public);
  put_timing(j, "decrypt_us", decrypt);
  put_timing(j, "decrypt_decode_last_level_us", decrypt_decode_last_level);
  put_timing(j, "multiply_plain_us", multiply_plain);
  put_timing(j, "rescale_us", rescale);
  j["galois_keygen_ms"] = galois_keygen_ms;
  j["galois_key_bytes"] = galois_key_bytes;
  put_timing(j, "rotate_last_level_us", rotate_last_level);
  put_timing(j, "rotate_fresh_us", rotate_fresh);
  j["hoisted_rotation_us"] = hoisted_rotation_us;
  j["hoist16_total_us"] = hoist16_total_us;
  j["double_hoisted_rotation_us"] = double_hoisted_rotation_us;
  j["rotate_precision_bits"] = rotate_precision_bits;
  put_timing(j, "compact_us", compact);
  j["compact_response_bytes"] = compact_response_bytes;
  j["compact_response_predicted_bits"] = compact_response_predicted_bits;
  put_timing(j, "compact_decrypt_decode_us", compact_decrypt_decode);
  j["compact_response_precision_bits"] = compact_response_precision_bits;
  j["compact_layout"] = {{"log_modulus", compact_log_modulus},
                         {"c0_bits", compact_c0_bits},
                         {"c1_bits", compact_c1_bits},
                         {"scale_up_bits", compact_scale_up_bits}};
  j["ciphertext_seeded_bytes"] = ciphertext_seeded_bytes;
  j["ciphertext_bytes"] = ciphertext_bytes;
  j["public_key_bytes"] = public_key_bytes;
  j["encrypt_decrypt_precision_bits"] =
      std::min(encrypt_symmetric_precision_bits, encrypt_public_precision_bits);
  j["encrypt_symmetric_precision_bits"] = encrypt_symmetric_precision_bits;
  j["encrypt_public_precision_bits"] = encrypt_public_precision_bits;
  j["multiply_plain_rescale_precision_bits"] = multiply_plain_rescale_precision_bits;
  return j;
}

nlohmann::json CkksBenchResult::to_json() const {
  nlohmann::json out;
  out["suite"] = "ckks";
  out["machine"] = machine;
  out["threads"] = 1;
  out["runs"] = runs;
  out["warmup"] = warmup;
  for (const auto& [name, f] : presets) out["presets"][name] = f.to_json();
  return out;
}

}  // namespace privsearch::tools

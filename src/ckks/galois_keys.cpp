#include "ckks/galois_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ckks/internal/poly_util.h"
#include "ckks/serialization.h"
#include "ring/automorphism.h"
#include "ring/dot_kernels.h"
#include "ring/shoup_kernels.h"

namespace privsearch::ckks {

KeySwitchKey::KeySwitchKey(const Params& params, std::vector<ring::RnsPoly> b,
                           std::vector<ring::RnsPoly> a, const Seed& seed)
    : b_(std::move(b)), a_(std::move(a)), seed_(seed) {
  PRIVSEARCH_CHECK(b_.size() == a_.size(), "key switching key halves differ in digits");
  const std::size_t n = params.n();
  // Evaluation form: q rows times P^-1.
  for (auto* polys : {&b_, &a_}) {
    for (auto& p : *polys) {
      PRIVSEARCH_CHECK(p.num_moduli() == params.key_moduli().size(), "key has the wrong row count");
      for (std::size_t i = 0; i < params.num_q(); ++i) {
        ring::mul_scalar_shoup_row(p.row(i), params.p_inv_mod_q(i), p.row(i), n,
                                   params.key_moduli()[i]);
      }
    }
  }
  auto companions = [&](const std::vector<ring::RnsPoly>& polys) {
    std::vector<ring::RnsPoly> out;
    out.reserve(polys.size());
    for (const auto& p : polys) {
      ring::RnsPoly c(p.n(), p.num_moduli(), true);
      for (std::size_t r = 0; r < p.num_moduli(); ++r) {
        ring::shoup_companions(p.row(r), p.n(), params.key_moduli()[r], c.row(r));
      }
      out.push_back(std::move(c));
    }
    return out;
  };
  b_shoup_ = companions(b_);
  a_shoup_ = companions(a_);
}

ring::RnsPoly KeySwitchKey::b(const Params& params, std::size_t j) const {
  ring::RnsPoly out = b_[j];
  for (std::size_t i = 0; i < params.num_q(); ++i) {
    ring::mul_scalar_shoup_row(out.row(i), params.p_mod_q(i), out.row(i), params.n(),
                               params.key_moduli()[i]);
  }
  return out;
}

int normalize_step(int step, std::size_t slots) {
  const long long s = static_cast<long long>(slots);
  long long k = step % s;
  if (k < 0) k += s;
  return static_cast<int>(k);
}

std::vector<ring::RnsPoly> expand_key_switch_uniform(const Params& params, const Seed& seed) {
  const auto rows = key_rows(params, params.max_level(), true);
  std::vector<ring::RnsPoly> a;
  a.reserve(params.num_digits());
  for (std::size_t j = 0; j < params.num_digits(); ++j) {
    a.push_back(expand_uniform(params, rows, seed, j));
  }
  return a;
}

Result<const KeySwitchKey*> GaloisKeys::key_for_elt(std::uint64_t galois_elt) const {
  const auto it = keys_.find(galois_elt);
  if (it == keys_.end()) {
    return not_found_error(fmt::format(
        "no Galois key for element {} in this key set (it has {} keys); generate it explicitly",
        galois_elt, keys_.size()));
  }
  return &it->second;
}

Result<const KeySwitchKey*> GaloisKeys::key_for_step(int step, std::size_t n) const {
  const int k = normalize_step(step, n / 2);
  const auto it = keys_.find(ring::galois_elt_for_step(k, n));
  if (it == keys_.end()) {
    return not_found_error(fmt::format(
        "no Galois key for rotation step {} in this key set (steps: {}); keys are never "
        "derived from other steps",
        step, fmt::join(steps_, ", ")));
  }
  return &it->second;
}

std::size_t GaloisKeys::memory_bytes() const {
  std::size_t total = 0;
  for (const auto& [elt, key] : keys_) {
    for (std::size_t j = 0; j < key.digits(); ++j) {
      for (const ring::RnsPoly* p :
           {&key.eval_b(j), &key.eval_a(j), &key.eval_b_shoup(j), &key.eval_a_shoup(j)}) {
        total += p->n() * p->num_moduli() * sizeof(std::uint64_t);
      }
    }
  }
  return total;
}

namespace {

// Serialized bytes of one key (element, step, seed, b rows of every digit).
std::size_t serialized_key_bytes(const Params& params, const std::vector<std::size_t>& rows) {
  return 8 + 4 + sizeof(Seed) + params.num_digits() * packed_rows_bytes(params, rows);
}

}  // namespace

std::size_t galois_keys_memory_bound(const Params& params, std::size_t serialized_bytes) {
  const auto rows = key_rows(params, params.max_level(), true);
  const std::size_t keys = serialized_bytes / serialized_key_bytes(params, rows);
  return keys * params.num_digits() * 4 * params.n() * rows.size() * sizeof(std::uint64_t);
}

// ---- serialization ----
// body: u32 key count | u8 conjugate | per key: u64 galois elt | i32 step (or -1 for the
// conjugation key) | 32-byte seed | b_j rows for j = 0..L over the key basis.

std::vector<std::uint8_t> serialize_galois_keys(const Params& params, const GaloisKeys& keys) {
  const auto rows = key_rows(params, params.max_level(), true);
  ByteWriter w;
  w.reserve(48 + keys.size() * (44 + params.num_digits() * packed_rows_bytes(params, rows)));
  write_header(w, ObjectType::kGaloisKeys, keys.params_id());
  w.put_u32(static_cast<std::uint32_t>(keys.size()));
  w.put_u8(keys.has_conjugate() ? 1 : 0);
  const std::uint64_t conj = ring::galois_elt_conjugate(params.n());
  for (const auto& [elt, key] : keys.keys()) {
    w.put_u64(elt);
    int step = -1;
    if (elt != conj) step = *ring::step_for_galois_elt(elt, params.n());
    w.put_u32(static_cast<std::uint32_t>(step));
    w.put_bytes(key.seed());
    for (std::size_t j = 0; j < key.digits(); ++j) write_rows(w, params, rows, key.b(params, j));
  }
  return w.take();
}

Result<GaloisKeys> deserialize_galois_keys(const Params& params,
                                           std::span<const std::uint8_t> bytes,
                                           std::size_t max_keys) {
  ByteReader r(bytes);
  ParamsId id{};
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, ObjectType::kGaloisKeys, id));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, id, "serialized Galois key set"));
  std::uint32_t count = 0;
  std::uint8_t conjugate = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(count));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(conjugate));
  if (conjugate > 1) return data_loss_error("conjugation flag is not 0 or 1");
  if (count > max_keys) {
    return resource_exhausted_error(
        fmt::format("Galois key set declares {} keys; the limit is {}", count, max_keys));
  }
  const auto rows = key_rows(params, params.max_level(), true);
  const std::size_t key_bytes = serialized_key_bytes(params, rows);
  std::size_t expected = 0;
  if (!checked_mul(count, key_bytes, expected) || r.remaining() != expected) {
    return data_loss_error(fmt::format("Galois key set body is {} bytes, expected {} for {} keys",
                                       r.remaining(), expected, count));
  }
  const std::uint64_t conj = ring::galois_elt_conjugate(params.n());
  std::map<std::uint64_t, KeySwitchKey> keys;
  std::vector<int> steps;
  bool saw_conjugate = false;
  for (std::uint32_t k = 0; k < count; ++k) {
    std::uint64_t elt = 0;
    std::uint32_t step_raw = 0;
    Seed seed{};
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(elt));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(step_raw));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(seed));
    const int step = static_cast<int>(step_raw);
    if (elt == conj) {
      if (step != -1) return data_loss_error("conjugation key with a rotation step");
      saw_conjugate = true;
    } else {
      if (step < 1 || static_cast<std::size_t>(step) >= params.slots() ||
          ring::galois_elt_for_step(step, params.n()) != elt) {
        return data_loss_error(
            fmt::format("key {}: Galois element {} does not match rotation step {}", k, elt, step));
      }
      steps.push_back(step);
    }
    if (keys.count(elt) != 0)
      return data_loss_error(fmt::format("duplicate Galois element {}", elt));
    std::vector<ring::RnsPoly> b;
    for (std::size_t j = 0; j < params.num_digits(); ++j) {
      ring::RnsPoly bj(params.n(), rows.size(), true);
      PRIVSEARCH_RETURN_IF_ERROR(read_rows(r, params, rows, bj, "Galois key"));
      b.push_back(std::move(bj));
    }
    keys.emplace(elt,
                 KeySwitchKey(params, std::move(b), expand_key_switch_uniform(params, seed), seed));
  }
  if (saw_conjugate != (conjugate == 1)) {
    return data_loss_error("conjugation flag does not match the keys present");
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  std::sort(steps.begin(), steps.end());
  return GaloisKeys(params.id(), std::move(steps), conjugate == 1, std::move(keys));
}

}  // namespace privsearch::ckks

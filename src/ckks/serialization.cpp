#include "ckks/serialization.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>

#include "ckks/internal/poly_util.h"

namespace privsearch::ckks {

namespace {
constexpr std::uint8_t kMagic[4] = {'P', 'S', 'C', 'K'};
constexpr std::size_t kMaxNameBytes = 64;
constexpr std::size_t kMaxPrimes = 19;

std::string_view type_name(ObjectType t) {
  switch (t) {
    case ObjectType::kParams:
      return "params";
    case ObjectType::kPlaintext:
      return "plaintext";
    case ObjectType::kCiphertext:
      return "ciphertext";
    case ObjectType::kPublicKey:
      return "public key";
    case ObjectType::kGaloisKeys:
      return "Galois key set";
    case ObjectType::kSecretKey:
      return "secret key";
    case ObjectType::kCompactCiphertext:
      return "compact ciphertext";
  }
  return "unknown";
}

Status check_scale(const Params& params, std::size_t level, double scale) {
  const double log_q = params.log_q_at_level(level);
  if (!(scale >= 1.0) || !(std::log2(scale) < log_q)) {
    return data_loss_error(fmt::format("scale {} outside [1, Q_{}) ", scale, level));
  }
  return Status();
}

Status read_level(ByteReader& r, const Params& params, std::size_t& level) {
  std::uint32_t l = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(l));
  if (l > params.max_level()) {
    return data_loss_error(
        fmt::format("declared level {} exceeds the params' max level {}", l, params.max_level()));
  }
  level = l;
  return Status();
}

Status expect_remaining(const ByteReader& r, std::size_t expected, std::string_view what) {
  if (r.remaining() != expected) {
    return data_loss_error(
        fmt::format("{} body is {} bytes, expected {}", what, r.remaining(), expected));
  }
  return Status();
}
}  // namespace

void write_header(ByteWriter& w, ObjectType type, const ParamsId& id) {
  w.put_bytes(kMagic);
  w.put_u16(kFormatVersion);
  w.put_u16(static_cast<std::uint16_t>(type));
  w.put_bytes(id);
}

Status read_header(ByteReader& r, ObjectType expected, ParamsId& id) {
  std::uint8_t magic[4];
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(magic));
  if (!std::equal(std::begin(magic), std::end(magic), std::begin(kMagic))) {
    return data_loss_error("bad magic: not a privsearch CKKS object");
  }
  std::uint16_t version = 0, type = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(version));
  if (version != kFormatVersion) {
    return data_loss_error(fmt::format("unsupported format version {} (this build reads {})",
                                       version, kFormatVersion));
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(type));
  if (type != static_cast<std::uint16_t>(expected)) {
    return data_loss_error(fmt::format("object type {} where a {} ({}) was expected", type,
                                       type_name(expected), static_cast<int>(expected)));
  }
  return r.get_bytes(id);
}

std::size_t packed_rows_bytes(const Params& params, const std::vector<std::size_t>& rows) {
  std::size_t total = 0;
  for (std::size_t r : rows) {
    total += packed_bytes(params.n(), params.key_moduli()[r].bit_count());
  }
  return total;
}

void write_rows(ByteWriter& w, const Params& params, const std::vector<std::size_t>& rows,
                const ring::RnsPoly& poly) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    w.put_packed({poly.row(i), poly.n()}, params.key_moduli()[rows[i]].bit_count());
  }
}

Status read_rows(ByteReader& r, const Params& params, const std::vector<std::size_t>& rows,
                 ring::RnsPoly& poly, const char* what) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ring::Modulus& q = params.key_moduli()[rows[i]];
    PRIVSEARCH_RETURN_IF_ERROR(r.get_packed({poly.row(i), poly.n()}, q.bit_count(), q.value(),
                                            fmt::format("{} row {}", what, i)));
  }
  return Status();
}

// ---- params ----

std::vector<std::uint8_t> serialize_params(const Params& params) {
  ByteWriter w;
  write_header(w, ObjectType::kParams, params.id());
  w.put_u32(static_cast<std::uint32_t>(params.n()));
  w.put_u8(static_cast<std::uint8_t>(params.num_q()));
  for (const auto& q : params.q_moduli()) w.put_u64(q.value());
  w.put_u8(static_cast<std::uint8_t>(params.num_p()));
  for (const auto& p : params.p_moduli()) w.put_u64(p.value());
  w.put_u32(static_cast<std::uint32_t>(params.log_scale()));
  w.put_u8(static_cast<std::uint8_t>(params.secret_distribution()));
  w.put_u8(static_cast<std::uint8_t>(params.error_distribution()));
  w.put_u8(params.insecure() ? 1 : 0);
  w.put_u8(static_cast<std::uint8_t>(params.num_digits()));
  w.put_string(params.name().substr(0, kMaxNameBytes));
  return w.take();
}

Result<Params> deserialize_params(std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  ParamsId id{};
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, ObjectType::kParams, id));
  ParamsLiteral lit;
  std::uint32_t n = 0, log_scale = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(n));
  lit.n = n;
  for (auto* list : {&lit.q, &lit.p}) {
    std::uint8_t count = 0;
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(count));
    if (count == 0 || count > kMaxPrimes) {
      return data_loss_error(fmt::format("prime count {} outside [1, {}]", count, kMaxPrimes));
    }
    list->resize(count);
    for (auto& v : *list) PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(v));
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(log_scale));
  if (log_scale > 62) return data_loss_error(fmt::format("log_scale {} above 62", log_scale));
  lit.log_scale = static_cast<int>(log_scale);
  std::uint8_t secret = 0, error = 0, insecure = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(secret));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(error));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(insecure));
  if (insecure > 1) return data_loss_error("insecure flag is not 0 or 1");
  std::uint8_t dnum = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(dnum));
  if (dnum == 0 || dnum > lit.q.size()) {
    return data_loss_error(fmt::format("digit count {} outside [1, {}]", dnum, lit.q.size()));
  }
  lit.dnum = dnum;
  lit.secret = static_cast<SecretDistribution>(secret);
  lit.error = static_cast<ErrorDistribution>(error);
  lit.insecure_for_tests = insecure == 1;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_string(lit.name, kMaxNameBytes));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  auto params = Params::create(lit);
  if (!params.ok()) return params.status().with_context("serialized params are invalid");
  if (params->id() != id) {
    return data_loss_error("params id in the header does not match the parameters");
  }
  return params;
}

// ---- plaintext ----

std::vector<std::uint8_t> serialize_plaintext(const Params& params, const Plaintext& pt) {
  ByteWriter w;
  write_header(w, ObjectType::kPlaintext, pt.params_id());
  w.put_u32(static_cast<std::uint32_t>(pt.level()));
  w.put_f64(pt.scale());
  write_rows(w, params, key_rows(params, pt.level(), false), pt.poly());
  return w.take();
}

Result<Plaintext> deserialize_plaintext(const Params& params, std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  ParamsId id{};
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, ObjectType::kPlaintext, id));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, id, "serialized plaintext"));
  std::size_t level = 0;
  double scale = 0;
  PRIVSEARCH_RETURN_IF_ERROR(read_level(r, params, level));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(scale));
  PRIVSEARCH_RETURN_IF_ERROR(check_scale(params, level, scale));
  const auto rows = key_rows(params, level, false);
  PRIVSEARCH_RETURN_IF_ERROR(expect_remaining(r, packed_rows_bytes(params, rows), "plaintext"));
  ring::RnsPoly poly(params.n(), rows.size(), true);
  PRIVSEARCH_RETURN_IF_ERROR(read_rows(r, params, rows, poly, "plaintext"));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return Plaintext(params.id(), level, scale, std::move(poly));
}

// ---- ciphertext ----

Result<std::vector<std::uint8_t>> serialize_ciphertext(const Params& params, const Ciphertext& ct,
                                                       CiphertextForm form) {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, ct.params_id(), "ciphertext"));
  if (form == CiphertextForm::kSeeded && !ct.is_seeded()) {
    return invalid_argument_error(
        "seeded form requested for a ciphertext whose c1 is no longer the seed expansion");
  }
  const auto rows = key_rows(params, ct.level(), false);
  ByteWriter w;
  w.reserve(48 + 2 * packed_rows_bytes(params, rows));
  write_header(w, ObjectType::kCiphertext, ct.params_id());
  w.put_u32(static_cast<std::uint32_t>(ct.level()));
  w.put_f64(ct.scale());
  w.put_u8(static_cast<std::uint8_t>(form));
  write_rows(w, params, rows, ct.c0());
  if (form == CiphertextForm::kSeeded) {
    w.put_bytes(*ct.c1_seed());
  } else {
    write_rows(w, params, rows, ct.c1());
  }
  return w.take();
}

Result<Ciphertext> deserialize_ciphertext(const Params& params,
                                          std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  ParamsId id{};
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, ObjectType::kCiphertext, id));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, id, "serialized ciphertext"));
  std::size_t level = 0;
  double scale = 0;
  std::uint8_t form = 0;
  PRIVSEARCH_RETURN_IF_ERROR(read_level(r, params, level));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(scale));
  PRIVSEARCH_RETURN_IF_ERROR(check_scale(params, level, scale));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(form));
  if (form != static_cast<std::uint8_t>(CiphertextForm::kFull) &&
      form != static_cast<std::uint8_t>(CiphertextForm::kSeeded)) {
    return data_loss_error(fmt::format("unknown ciphertext form {}", form));
  }
  const bool seeded = form == static_cast<std::uint8_t>(CiphertextForm::kSeeded);
  const auto rows = key_rows(params, level, false);
  const std::size_t row_bytes = packed_rows_bytes(params, rows);
  PRIVSEARCH_RETURN_IF_ERROR(
      expect_remaining(r, row_bytes + (seeded ? sizeof(Seed) : row_bytes), "ciphertext"));
  ring::RnsPoly c0(params.n(), rows.size(), true);
  PRIVSEARCH_RETURN_IF_ERROR(read_rows(r, params, rows, c0, "ciphertext c0"));
  if (seeded) {
    Seed seed{};
    PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(seed));
    PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
    ring::RnsPoly c1 = expand_uniform(params, rows, seed, 0);
    return Ciphertext(params.id(), level, scale, std::move(c0), std::move(c1), seed);
  }
  ring::RnsPoly c1(params.n(), rows.size(), true);
  PRIVSEARCH_RETURN_IF_ERROR(read_rows(r, params, rows, c1, "ciphertext c1"));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return Ciphertext(params.id(), level, scale, std::move(c0), std::move(c1));
}

// ---- public key ----

std::vector<std::uint8_t> serialize_public_key(const Params& params, const PublicKey& pk) {
  const auto rows = key_rows(params, params.max_level(), true);
  ByteWriter w;
  w.reserve(40 + 32 + packed_rows_bytes(params, rows));
  write_header(w, ObjectType::kPublicKey, pk.params_id());
  write_rows(w, params, rows, pk.pk0());
  w.put_bytes(pk.seed());
  return w.take();
}

Result<PublicKey> deserialize_public_key(const Params& params,
                                         std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  ParamsId id{};
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, ObjectType::kPublicKey, id));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, id, "serialized public key"));
  const auto rows = key_rows(params, params.max_level(), true);
  PRIVSEARCH_RETURN_IF_ERROR(
      expect_remaining(r, packed_rows_bytes(params, rows) + sizeof(Seed), "public key"));
  ring::RnsPoly pk0(params.n(), rows.size(), true);
  PRIVSEARCH_RETURN_IF_ERROR(read_rows(r, params, rows, pk0, "public key pk0"));
  Seed seed{};
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(seed));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  ring::RnsPoly pk1 = expand_uniform(params, rows, seed, 0);
  return PublicKey(params.id(), std::move(pk0), std::move(pk1), seed);
}

}  // namespace privsearch::ckks

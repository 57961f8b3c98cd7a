#include "pir/zippir/zippir_common.h"

#include <chrono>
#include <cstring>
#include <string>

#include "core/sha256.h"

namespace privsearch::pir {

namespace detail {

void put_header(ByteWriter& w, const std::uint8_t (&magic)[4]) {
  w.put_bytes(magic);
  w.put_u8(kZipPirVersion);
}

Status read_header(ByteReader& r, const std::uint8_t (&magic)[4], const char* what) {
  std::uint8_t got[4];
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(got));
  if (std::memcmp(got, magic, 4) != 0) return data_loss_error(std::string(what) + ": bad magic");
  std::uint8_t version = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(version));
  if (version != kZipPirVersion) {
    return failed_precondition_error(
        std::string(what) + ": `version` = " + std::to_string(version) + ", this build reads 1");
  }
  return Status();
}

Status check_params_id(ByteReader& r, std::uint64_t expected, const char* what) {
  std::uint64_t id = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(id));
  if (id != expected) {
    return failed_precondition_error(std::string(what) +
                                     ": `params_id` does not match this database");
  }
  return Status();
}

mpz_class pack_slots(const std::uint32_t* values, std::size_t count, int bits) {
  std::vector<std::uint64_t> words((count * static_cast<std::size_t>(bits) + 63) / 64 + 1, 0);
  for (std::size_t l = 0; l < count; ++l) {
    const std::size_t u = l * static_cast<std::size_t>(bits);
    const std::uint64_t v = values[l];
    words[u / 64] |= v << (u % 64);
    if (u % 64 + static_cast<std::size_t>(bits) > 64) words[u / 64 + 1] |= v >> (64 - u % 64);
  }
  mpz_class out;
  mpz_import(out.get_mpz_t(), words.size(), -1, 8, 0, 0, words.data());
  return out;
}

std::uint64_t slot_of(const mpz_class& t, std::size_t l, int bits) {
  std::uint64_t v = 0;
  const std::size_t base = l * static_cast<std::size_t>(bits);
  for (int k = bits - 1; k >= 0; --k) {
    v = (v << 1) |
        static_cast<std::uint64_t>(mpz_tstbit(t.get_mpz_t(), base + static_cast<std::size_t>(k)));
  }
  return v;
}

std::uint64_t id_of_setup(std::span<const std::uint8_t> setup) {
  const auto d = sha256(setup);
  std::uint64_t v = 0;
  std::memcpy(&v, d.data(), 8);
  return v;
}

std::vector<std::uint8_t> serialize_hint(const PaillierPublicKey& pk, std::uint64_t params_id,
                                         std::uint64_t index, const std::vector<mpz_class>& k) {
  ByteWriter w;
  put_header(w, kHintMagic);
  w.put_u64(params_id);
  w.put_u64(index);
  w.put_u32(static_cast<std::uint32_t>(k.size()));
  for (const auto& c : k) w.put_bytes(pk.ciphertext_to_bytes(c));
  return w.take();
}

Result<HintMessage> parse_hint(std::span<const std::uint8_t> message, const PaillierPublicKey& pk,
                               std::uint64_t params_id, std::size_t packed_rows) {
  ByteReader r(message);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, kHintMagic, "ZipPIR hint"));
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(r, params_id, "ZipPIR hint"));
  HintMessage h;
  std::uint32_t count = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(h.index));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(count));
  if (count != packed_rows) {
    return data_loss_error("ZipPIR hint: `count` = " + std::to_string(count) + ", expected " +
                           std::to_string(packed_rows));
  }
  h.k.resize(count);
  std::vector<std::uint8_t> b(pk.ciphertext_bytes());
  for (auto& v : h.k) {
    PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(b));
    PRIVSEARCH_ASSIGN_OR_RETURN(v, pk.ciphertext_from_bytes(b));
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return h;
}

}  // namespace detail

constexpr std::uint8_t kInfoMagic[4] = {'Z', 'P', 'I', 'N'};

// --- public info -------------------------------------------------------------------------------

std::vector<std::uint8_t> ZipPirPublicInfo::serialize() const {
  ByteWriter w;
  detail::put_header(w, kInfoMagic);
  w.put_string(params.lwe.name);
  w.put_u16(static_cast<std::uint16_t>(params.paillier_bits));
  w.put_u8(static_cast<std::uint8_t>(params.hint_bits));
  w.put_u64(shape.records);
  w.put_u64(shape.record_bytes);
  w.put_u64(shape.records_per_column);
  w.put_bytes(a_seed);
  return w.take();
}

Result<ZipPirPublicInfo> ZipPirPublicInfo::deserialize(std::span<const std::uint8_t> bytes,
                                                       bool allow_insecure) {
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(detail::read_header(r, kInfoMagic, "ZipPIR info"));
  std::string name;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_string(name, 64));
  std::uint16_t pbits = 0;
  std::uint8_t hbits = 0;
  std::uint64_t records = 0, record_bytes = 0, per_column = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(pbits));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(hbits));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(records));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(record_bytes));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(per_column));
  ZipPirPublicInfo info;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(info.a_seed));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  PRIVSEARCH_ASSIGN_OR_RETURN(info.params.lwe, find_lwe_params(name, allow_insecure));
  info.params.paillier_bits = pbits;
  info.params.hint_bits = hbits;
  info.params.allow_insecure = allow_insecure;
  PRIVSEARCH_RETURN_IF_ERROR(info.params.validate());
  // The client's own floor: a 2048-bit modulus is ~112-bit security (NIST SP 800-57), below the
  // 128 bits of every other parameter, so a provider cannot talk a client down to it.
  constexpr int kClientMinPaillierBits = 3072;
  if (info.params.paillier_bits < kClientMinPaillierBits && !allow_insecure) {
    return invalid_argument_error("ZipPIR info: a " + std::to_string(info.params.paillier_bits) +
                                  "-bit Paillier modulus is below the client's 3072-bit floor "
                                  "(128-bit security)");
  }
  if (records == 0 || record_bytes == 0 || per_column == 0 || record_bytes > kMaxRecordBytes ||
      per_column > records || records > kMaxDatabaseBytes) {
    return data_loss_error("ZipPIR info: invalid database shape");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(
      info.shape, choose_database_shape(records, record_bytes, per_column * record_bytes));
  if (info.shape.records_per_column != per_column) {
    return data_loss_error("ZipPIR info: `records_per_column` is not reproducible");
  }
  return info;
}

Status check_message_framing(std::span<const std::uint8_t> message, ZipPirMessageKind kind,
                             std::uint64_t params_id) {
  ByteReader r(message);
  const bool setup = kind == ZipPirMessageKind::kSetup;
  const char* what = setup ? "ZipPIR setup" : "ZipPIR query";
  PRIVSEARCH_RETURN_IF_ERROR(
      detail::read_header(r, setup ? detail::kSetupMagic : detail::kQueryMagic, what));
  return detail::check_params_id(r, params_id, what);
}

Result<std::uint64_t> query_client_id(std::span<const std::uint8_t> query) {
  ByteReader r(query);
  PRIVSEARCH_RETURN_IF_ERROR(detail::read_header(r, detail::kQueryMagic, "ZipPIR query"));
  std::uint64_t params_id = 0, client = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(params_id));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(client));
  return client;
}

}  // namespace privsearch::pir

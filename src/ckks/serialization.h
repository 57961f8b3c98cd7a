// Binary serialization of the public CKKS objects (params, plaintexts, ciphertexts, public keys).
//
// Every object starts with the same 40-byte header:
//   magic "PSCK" | u16 format version (1) | u16 object type | params id (32 bytes)
// followed by a type-specific body (docs/PROTOCOL.md has the tables). Integers are
// little-endian; polynomial rows are bit-packed to bit_width(q_i) bits per coefficient.
// Seeded forms store the 32-byte seed in place of the uniform polynomial.
//
// Decoders check, in order: magic, version, object type, params id, declared level/sizes
// against the params (before allocating), the exact remaining length, every coefficient below
// its modulus, zero padding bits, finite positive scale, and no trailing bytes. Failures are
// kDataLoss (malformed bytes) or kFailedPrecondition (well-formed, but for other params) and
// never modify the caller's objects: load_into() assigns only after a complete decode.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ckks/ciphertext.h"
#include "ckks/params.h"
#include "ckks/plaintext.h"
#include "ckks/public_key.h"
#include "core/bytes.h"
#include "core/status.h"

namespace privsearch::ckks {

inline constexpr std::uint16_t kFormatVersion = 1;

enum class ObjectType : std::uint16_t {
  kParams = 1,
  kPlaintext = 2,
  kCiphertext = 3,
  kPublicKey = 4,
  kGaloisKeys = 5,
  kSecretKey = 6,
  kCompactCiphertext = 7,
};

enum class CiphertextForm : std::uint8_t { kFull = 1, kSeeded = 2 };

std::vector<std::uint8_t> serialize_params(const Params& params);
Result<Params> deserialize_params(std::span<const std::uint8_t> bytes);

std::vector<std::uint8_t> serialize_plaintext(const Params& params, const Plaintext& pt);
Result<Plaintext> deserialize_plaintext(const Params& params, std::span<const std::uint8_t> bytes);

// kSeeded requires ct.is_seeded() (kInvalidArgument otherwise).
Result<std::vector<std::uint8_t>> serialize_ciphertext(const Params& params, const Ciphertext& ct,
                                                       CiphertextForm form);
Result<Ciphertext> deserialize_ciphertext(const Params& params,
                                          std::span<const std::uint8_t> bytes);

std::vector<std::uint8_t> serialize_public_key(const Params& params, const PublicKey& pk);
Result<PublicKey> deserialize_public_key(const Params& params, std::span<const std::uint8_t> bytes);

// Assigns `target` only if `decoded` holds a value; returns its status otherwise.
template <typename T>
Status load_into(Result<T> decoded, T& target) {
  if (!decoded.ok()) return decoded.status();
  target = std::move(decoded).value();
  return Status();
}

// Shared by ckks serializers: header writing and checking.
void write_header(ByteWriter& w, ObjectType type, const ParamsId& id);
// Checks magic, version and type; returns the params id it declares.
Status read_header(ByteReader& r, ObjectType expected, ParamsId& id);
// Packed rows of `poly` with the moduli of `rows` (key-basis indices).
void write_rows(ByteWriter& w, const Params& params, const std::vector<std::size_t>& rows,
                const ring::RnsPoly& poly);
Status read_rows(ByteReader& r, const Params& params, const std::vector<std::size_t>& rows,
                 ring::RnsPoly& poly, const char* what);
std::size_t packed_rows_bytes(const Params& params, const std::vector<std::size_t>& rows);

}  // namespace privsearch::ckks

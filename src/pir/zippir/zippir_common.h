// ZipPIR (arXiv 2603.09190, section 4): single-server PIR with no client storage beyond a
// Paillier key and a seed. Message-in / message-out; no transport.
//
//   Setup   client -> server  N (Paillier public key) and a 16-byte seed           (~413 B)
//   Hint    server, offline    per future query index: k_i = Enc(P_i . r), ck_r from the seed
//   Query   client -> server  ck_o = s - r mod N (n values) and qu = A s + e + Delta u_col
//   Answer  server            ans = D qu; t = P ck_o + pack(ans~) mod N (RNS, one CRT);
//                             response c_i = k_i (1 + t_i N) = Enc(T_i)   (one ciphertext per
//                             packed row: the paper's "Paillier addition" variant, 2/3 of the
//                             size of sending k and t apart)
//   Extract client            T_i = Dec(c_i) for the packed rows that hold its record, unpack
//                             the slots, remove carry and |s|, round.
// r = Dec(ck_r) costs n Paillier decryptions per query; precompute_query() does them ahead of
// time (the paper's client does them at query time).
// Client-storage variant (section 4.3): the server can hand the k_i of a query index to the
// client in advance (export_hint); the answer for that index then carries only t (Z_N values).
// Security: the server sees N, the seed, ck_o (uniform given r) and qu (LWE); the secret s, r,
// the Paillier key and the record index never leave the client. The server keeps per client
// only the k_i of precomputed queries (2 d1' |N| bits each) and forgets them once answered.
// Thread safety: ZipPirServer::answer is const except for the per-client hint queue, guarded by
// a mutex; ZipPirClient is single-threaded.
#pragma once

#include <gmpxx.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/csprng.h"
#include "core/elapsed.h"
#include "core/status.h"
#include "pir/lwe/database.h"
#include "pir/lwe/lwe.h"
#include "pir/paillier/paillier.h"
#include "pir/zippir/zippir_params.h"

namespace privsearch::pir {

inline constexpr std::size_t kZipPirSeedBytes = 16;

// What a client needs to know about a server's database (public).
struct ZipPirPublicInfo {
  ZipPirParams params;
  DatabaseShape shape;
  Seed a_seed{};

  std::uint64_t params_id() const { return params.id(shape); }
  std::vector<std::uint8_t> serialize() const;
  static Result<ZipPirPublicInfo> deserialize(std::span<const std::uint8_t> bytes,
                                              bool allow_insecure = false);
};

enum class ZipPirMessageKind { kSetup, kQuery };
// The framing of a client's setup or query message (magic, version, params id), checked without
// reading further: kDataLoss for a wrong magic or truncated bytes, kFailedPrecondition when the
// message was made for another ZipPIR version or database. Lets a service tell such a mismatch
// from the server's other preconditions (a query whose hint is not ready) by code, not by text.
Status check_message_framing(std::span<const std::uint8_t> message, ZipPirMessageKind kind,
                             std::uint64_t params_id);

// The client id a query names (after its framing and params id), without reading further:
// kDataLoss when the message is too short or not a query.
Result<std::uint64_t> query_client_id(std::span<const std::uint8_t> query);

namespace detail {
// Message framing shared by server and client: 4-byte magic, version byte, then fields.
inline constexpr std::uint8_t kZipPirVersion = 1;
inline constexpr std::uint8_t kSetupMagic[4] = {'Z', 'P', 'S', 'U'};
inline constexpr std::uint8_t kQueryMagic[4] = {'Z', 'P', 'Q', 'U'};
inline constexpr std::uint8_t kResponseMagic[4] = {'Z', 'P', 'R', 'S'};
inline constexpr std::uint8_t kHintMagic[4] = {'Z', 'P', 'H', 'T'};
inline constexpr std::uint8_t kResponsePartMagic[4] = {'Z', 'P', 'R', 'P'};  // a row shard's
inline constexpr std::uint8_t kModeCombined = 1;  // Enc(T_i) per packed row
inline constexpr std::uint8_t kModeTOnly = 2;     // t_i only; the client holds k_i

void put_header(ByteWriter& w, const std::uint8_t (&magic)[4]);
Status read_header(ByteReader& r, const std::uint8_t (&magic)[4], const char* what);
Status check_params_id(ByteReader& r, std::uint64_t expected, const char* what);
// sum_l values[l] 2^(b l) as a big integer.
mpz_class pack_slots(const std::uint32_t* values, std::size_t count, int bits);
// Bits [l b, (l + 1) b) of t.
std::uint64_t slot_of(const mpz_class& t, std::size_t l, int bits);
// A client's id: the first 8 bytes of SHA-256 of its setup message.
std::uint64_t id_of_setup(std::span<const std::uint8_t> setup);
// The hint of one query index (export_hint, and a shared store's copy): header, params id,
// u64 index, u32 count, then `count` Paillier ciphertexts k_i.
std::vector<std::uint8_t> serialize_hint(const PaillierPublicKey& pk, std::uint64_t params_id,
                                         std::uint64_t index, const std::vector<mpz_class>& k);
struct HintMessage {
  std::uint64_t index = 0;
  std::vector<mpz_class> k;
};
// Parsed and checked: framing, params id, `packed_rows` parts, each a valid ciphertext of `pk`.
Result<HintMessage> parse_hint(std::span<const std::uint8_t> message, const PaillierPublicKey& pk,
                               std::uint64_t params_id, std::size_t packed_rows);
using Clock = std::chrono::steady_clock;
using privsearch::ms_since;
}  // namespace detail

}  // namespace privsearch::pir

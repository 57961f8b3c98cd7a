// The access-private scoring database (Tiptoe's cluster-major layout, Henzinger et al. SOSP
// 2023, section 4): documents in C balanced clusters of exactly R slots; the first `dim`
// coordinates of each projected vector (a nested SVD prefix) quantized to `doc_bits` signed
// bits; one byte matrix D of R rows and C * dim columns in which row r, block c holds the
// document in slot (c, r). An LWE query that is zero outside block c gets back D u = the scores
// of every document of cluster c (pir/lwe/lwe64.h), and the provider cannot tell which c.
//
// Stored as three artifacts of one index version:
//   scoring_layout.bin (public): shape, LWE parameter name, the matrix seed, the document scale,
//                                the centroids (C x centroid_dim) and the slot -> document map;
//   scoring_matrix.bin (private): D, entries offset to [0, 2^doc_bits) (M' = M + 2^(b-1)), rows
//                                 padded to a 64-byte stride;
//   scoring_hint.bin   (public): the rounded high halves of D A (R x n), A from the seed.
// The offset is the client's business: it decodes M' u and subtracts 2^(b-1) sum(u).
// Both the layout and the matrix record the query's modulus switch (0, 8 or 16 dropped bits)
// and the answer width (each answer rounded to its high `answer_bits` bits of 32, packed) so
// client and provider read the same wire format.
// Plaintext modulus: p = 2^log_p must hold every score M u exactly. The worst case over all
// 7-bit queries (plaintext_bits_for) needs 2^18 at dim 192 and 2^20 at dim 672; instead the
// layout publishes N^2 = max over documents of ||M_d||^2 and the client scales its query so that
// N ||u|| < 2^(log_p - 1), which bounds |M u| by Cauchy-Schwarz (client/private_query.h). A
// smaller p costs query resolution (measured in build.h) and buys a narrower answer: the
// response is m R answer_bits / 8 bytes.
// Each file: 4-byte magic, u16 version 2, u16 0, then fields (little-endian); readers check
// sizes before allocating and refuse trailing bytes, unknown versions and inconsistent fields.
// Thread safety: value types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/csprng.h"
#include "core/status.h"

namespace privsearch::scoring {

// File names inside an index directory (and manifest artifact names, the same without .bin).
inline constexpr const char* kLayoutFile = "scoring_layout.bin";
inline constexpr const char* kMatrixFile = "scoring_matrix.bin";
inline constexpr const char* kHintFile = "scoring_hint.bin";

// Manifest artifact names.
inline constexpr const char* kLayoutArtifact = "scoring_layout";
inline constexpr const char* kMatrixArtifact = "scoring_matrix";
inline constexpr const char* kHintArtifact = "scoring_hint";

// The version of all three file formats (2: answer bits and the norm bound; 3: padding columns
// and the per-index salt of A). Caches of built scoring files name it so a new format rebuilds
// them.
inline constexpr std::uint16_t kScoringFormatVersion = 3;

// Clusters per query (m) when the caller does not choose: the smallest m meeting the quality target
// on the 1M self-retrieval track (Hit@10 0.85 at m = 8 against 0.86 for candidate mode; 0.70 at m =
// 4) with a response of 60,493 bytes and one core for ~110 ms at the provider; SciFact nDCG@10
// 0.5890 (m = 4: 0.5857; candidate mode 0.5925). Equal to the provider's default
// Limits.max_private_queries.
inline constexpr std::size_t kDefaultClusters = 8;

inline constexpr std::uint32_t kEmptySlot = 0xffffffffu;
// A document may hold a second slot in a neighbouring cluster (build overlap).
inline constexpr std::uint8_t kMaxCopies = 2;
inline constexpr std::uint32_t kMaxClusters = 1u << 20;
inline constexpr std::uint32_t kMaxClusterRows = 1u << 16;
inline constexpr std::uint32_t kMaxDim = 1024;
inline constexpr std::uint64_t kMaxColumns = std::uint64_t{1} << 28;
// The public hint round(D A / 2^32) is an LWR instance in each row of D: secret dimension = the
// matrix's columns, 4-bit secret entries, q / sigma ~ 2^64 / 2^30.2 = 2^33.8. Few columns are
// easy to attack (estimated BKZ block size ~130 at 672 columns, ~300 at 1,152: docs/
// PARAMETERS.md), so every layout has at least 2,048 columns, the HE-standard 128-bit row
// (n = 2048 allows q / sigma up to 2^52.3 for a ternary secret; here 2^33.8 with a wider secret).
// A smaller collection's matrix is padded with columns of random 4-bit entries, which every
// query leaves at zero (they add to the secret, never to a score).
inline constexpr std::uint64_t kMinSecretColumns = 2048;

struct ScoringShape {
  std::uint64_t documents = 0;
  std::uint32_t clusters = 0;      // C
  std::uint32_t cluster_rows = 0;  // R
  std::uint32_t dim = 0;           // coordinates per document (prefix of the projection)
  std::uint32_t doc_bits = 0;      // signed bits per document coordinate
  std::uint32_t query_bits = 0;    // signed bits per query coordinate
  std::uint32_t log_p = 0;         // plaintext modulus 2^log_p (scores exact: see above)
  std::uint32_t answer_bits = 0;   // each answer sent as its rounded high bits, log_p < b <= 32
  std::uint32_t pad_columns = 0;   // random columns after the C blocks (kMinSecretColumns)

  std::uint64_t block_columns() const { return std::uint64_t{clusters} * dim; }
  std::uint64_t columns() const { return block_columns() + pad_columns; }
  std::uint64_t stride() const { return (columns() + 63) / 64 * 64; }
  std::int32_t doc_offset() const { return std::int32_t{1} << (doc_bits - 1); }
  std::int32_t query_max() const { return (std::int32_t{1} << (query_bits - 1)) - 1; }
};

// The smallest log_p with every |M u| < 2^(log_p - 1) for any query: |M u| <= dim 2^(bd-1)
// (2^(bq-1) - 1). A layout's log_p is at most this (more would only waste answer bits).
std::uint32_t plaintext_bits_for(std::uint32_t dim, std::uint32_t doc_bits,
                                 std::uint32_t query_bits);
inline constexpr std::uint32_t kMinLogP = 8;
// Checks ranges and consistency (log_p, answer bits, sizes against the limits above).
Status validate_shape(const ScoringShape& shape);

struct ScoringLayout {
  ScoringShape shape;
  std::string lwe_params;             // pir::find_lwe64_params name
  Seed matrix_salt{};                 // random per index (the build's CSPRNG), in the signed layout
  Seed matrix_seed{};                 // seed of A = derive_matrix_seed(matrix_salt), never stored
  double doc_scale = 0;               // M = clamp(round(x * doc_scale), -2^(b-1), 2^(b-1) - 1)
  std::uint32_t centroid_dim = 0;     // clusters are formed on this prefix (<= dim)
  std::uint32_t query_drop_bits = 0;  // query entries sent as their high 64 - b bits (lwe64.h)
  std::uint64_t max_norm_sq = 0;      // max over documents of ||M_d||^2 (the client's bound)
  std::vector<float> centroids;       // clusters x centroid_dim
  std::vector<std::uint32_t> slot_doc;  // clusters x cluster_rows, kEmptySlot when empty

  std::uint32_t doc_at(std::size_t cluster, std::size_t row) const {
    return slot_doc[cluster * shape.cluster_rows + row];
  }
};

// A = PRG(SHA-256("privsearch scoring matrix A v2" || salt)). The salt is random per index, so
// no two indexes share A (one precomputation cannot serve attacks on many), and A is a hash
// output, so a provider that picks the salt still cannot pick a trapdoored A: parse_layout
// derives the seed, the file never carries it.
Seed derive_matrix_seed(const Seed& salt);
// The padding a shape of `block_columns` needs to reach kMinSecretColumns.
std::uint32_t pad_columns_for(std::uint64_t block_columns);

std::vector<std::uint8_t> serialize_layout(const ScoringLayout& layout);
// Every slot map entry < documents or empty, every document once or twice (never twice in one
// cluster), finite values.
Result<ScoringLayout> parse_layout(std::span<const std::uint8_t> bytes);

struct ScoringMatrix {
  std::uint32_t rows = 0;
  std::uint64_t columns = 0, stride = 0;
  std::uint32_t query_drop_bits = 0;  // as in the layout: how the provider reads query entries
  std::uint32_t answer_bits = 32;     // as in the layout: how the provider writes answers
  std::vector<std::uint8_t> data;     // rows x stride
};
std::vector<std::uint8_t> serialize_matrix(const ScoringMatrix& m);
Result<ScoringMatrix> parse_matrix(std::span<const std::uint8_t> bytes);

struct ScoringHint {
  std::uint32_t rows = 0, n = 0;
  std::vector<std::uint32_t> values;  // rows x n
};
std::vector<std::uint8_t> serialize_hint(const ScoringHint& h);
Result<ScoringHint> parse_hint(std::span<const std::uint8_t> bytes);

// The wire form of switched queries: each entry's low lwe64_entry_bytes(drop_bits) bytes,
// little-endian (PrivateScoreRequest.ciphertexts).
std::string pack_queries(std::span<const std::uint64_t> queries, std::uint32_t drop_bits);
// The inverse; false when `bytes` is not a whole number of entries.
bool unpack_queries(std::string_view bytes, std::uint32_t drop_bits,
                    std::vector<std::uint64_t>& out);

// The wire form of answers (PrivateScoreResponse.answers): each 32-bit answer rounded to its
// high `bits` bits (pir::lwe64_switch_answer), packed little-endian, least significant bit
// first, ceil(count bits / 8) bytes, zero padding bits.
std::size_t packed_answer_bytes(std::size_t count, std::uint32_t bits);
std::string pack_answers(std::span<const std::uint32_t> answers, std::uint32_t bits);
// The inverse, each value shifted back to the top of 32 bits (what pir::lwe64_decode reads);
// false unless `bytes` has exactly packed_answer_bytes(count, bits) bytes with zero padding.
bool unpack_answers(std::string_view bytes, std::size_t count, std::uint32_t bits,
                    std::vector<std::uint32_t>& out);

Status save_layout(const std::filesystem::path& file, const ScoringLayout& layout);
Result<ScoringLayout> load_layout(const std::filesystem::path& file);
Status save_matrix(const std::filesystem::path& file, const ScoringMatrix& m);
Result<ScoringMatrix> load_matrix(const std::filesystem::path& file);
Status save_hint(const std::filesystem::path& file, const ScoringHint& h);
Result<ScoringHint> load_hint(const std::filesystem::path& file);

}  // namespace privsearch::scoring

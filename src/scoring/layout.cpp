#include "scoring/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/bytes.h"
#include "core/sha256.h"
#include "index/artifacts/atomic_file.h"
#include "pir/lwe/lwe64.h"

namespace privsearch::scoring {
namespace {

constexpr std::uint16_t kVersion = kScoringFormatVersion;
constexpr char kLayoutMagic[4] = {'P', 'S', 'S', 'L'};
constexpr char kMatrixMagic[4] = {'P', 'S', 'S', 'M'};
constexpr char kHintMagic[4] = {'P', 'S', 'S', 'H'};
constexpr std::uint32_t kMaxHintN = 1u << 13;

void put_header(ByteWriter& w, const char (&magic)[4]) {
  w.put_bytes({reinterpret_cast<const std::uint8_t*>(magic), 4});
  w.put_u16(kVersion);
  w.put_u16(0);
}

Status get_header(ByteReader& r, const char (&magic)[4], std::string_view what) {
  std::uint8_t m[4];
  std::uint16_t version = 0, zero = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(m));
  if (std::memcmp(m, magic, 4) != 0) {
    return invalid_argument_error(fmt::format("not a {} file (bad magic)", what));
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(version));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(zero));
  if (version != kVersion || zero != 0) {
    return invalid_argument_error(
        fmt::format("{} file version {} (this build reads {})", what, version, kVersion));
  }
  return Status::ok_status();
}

// Before allocating for `count` bytes of tables: the input must hold them.
Status need(const ByteReader& r, std::size_t count, std::string_view what) {
  if (r.remaining() < count) {
    return invalid_argument_error(
        fmt::format("truncated {}: {} bytes needed, {} left", what, count, r.remaining()));
  }
  return Status::ok_status();
}

Status check_drop_bits(std::uint32_t bits) {
  if (bits != 0 && bits != 8 && bits != 16) {
    return invalid_argument_error(
        fmt::format("query modulus switch of {} bits (0, 8 or 16)", bits));
  }
  return Status::ok_status();
}

Status with_context(Status s, const std::filesystem::path& file) {
  if (s.ok()) return s;
  return Status(s.code(), fmt::format("{}: {}", file.string(), s.message()));
}

}  // namespace

std::uint32_t plaintext_bits_for(std::uint32_t dim, std::uint32_t doc_bits,
                                 std::uint32_t query_bits) {
  const std::uint64_t bound = std::uint64_t{dim} * (std::uint64_t{1} << (doc_bits - 1)) *
                              ((std::uint64_t{1} << (query_bits - 1)) - 1);
  std::uint32_t log_p = 1;
  while ((std::uint64_t{1} << (log_p - 1)) <= bound) ++log_p;
  return log_p;
}

Status validate_shape(const ScoringShape& s) {
  if (s.documents == 0 || s.clusters == 0 || s.clusters > kMaxClusters || s.cluster_rows == 0 ||
      s.cluster_rows > kMaxClusterRows || s.dim == 0 || s.dim > kMaxDim) {
    return invalid_argument_error(
        fmt::format("scoring shape out of range: {} documents, {} clusters of {} rows, dim {}",
                    s.documents, s.clusters, s.cluster_rows, s.dim));
  }
  if (std::uint64_t{s.clusters} * s.cluster_rows < s.documents || s.columns() > kMaxColumns ||
      s.columns() < kMinSecretColumns || s.pad_columns != pad_columns_for(s.block_columns())) {
    return invalid_argument_error(fmt::format(
        "scoring shape: {} x {} slots for {} documents, {} columns ({} of padding; at least {} "
        "columns, padded exactly to that)",
        s.clusters, s.cluster_rows, s.documents, s.columns(), s.pad_columns, kMinSecretColumns));
  }
  if (s.doc_bits < 2 || s.doc_bits > 8 || s.query_bits < 2 || s.query_bits > 16) {
    return invalid_argument_error(
        fmt::format("scoring quantization {} / {} bits out of range", s.doc_bits, s.query_bits));
  }
  const std::uint32_t worst = plaintext_bits_for(s.dim, s.doc_bits, s.query_bits);
  if (s.log_p < kMinLogP || s.log_p > std::min<std::uint32_t>(worst, pir::kLwe64MaxLogP)) {
    return invalid_argument_error(
        fmt::format("scoring plaintext modulus 2^{} outside [2^{}, 2^{}] (dim {} at {} / {} bits)",
                    s.log_p, kMinLogP, std::min<std::uint32_t>(worst, pir::kLwe64MaxLogP), s.dim,
                    s.doc_bits, s.query_bits));
  }
  if (s.answer_bits <= s.log_p || s.answer_bits > 32) {
    return invalid_argument_error(fmt::format(
        "scoring answers of {} bits for a plaintext modulus 2^{} (need {} < bits <= 32)",
        s.answer_bits, s.log_p, s.log_p));
  }
  return Status::ok_status();
}

std::uint32_t pad_columns_for(std::uint64_t block_columns) {
  return block_columns >= kMinSecretColumns
             ? 0
             : static_cast<std::uint32_t>(kMinSecretColumns - block_columns);
}

Seed derive_matrix_seed(const Seed& salt) {
  ByteWriter w;
  const std::string_view label = "privsearch scoring matrix A v2";
  w.put_bytes(byte_view(label));
  w.put_bytes(salt);
  const auto digest = sha256(w.bytes());
  Seed s{};
  std::copy(digest.begin(), digest.end(), s.begin());
  return s;
}

std::vector<std::uint8_t> serialize_layout(const ScoringLayout& l) {
  ByteWriter w;
  put_header(w, kLayoutMagic);
  const auto& s = l.shape;
  w.put_u64(s.documents);
  w.put_u32(s.clusters);
  w.put_u32(s.cluster_rows);
  w.put_u32(s.dim);
  w.put_u32(s.doc_bits);
  w.put_u32(s.query_bits);
  w.put_u32(s.log_p);
  w.put_u32(s.answer_bits);
  w.put_u32(s.pad_columns);
  w.put_string(l.lwe_params);
  w.put_bytes(l.matrix_salt);
  w.put_f64(l.doc_scale);
  w.put_u32(l.centroid_dim);
  w.put_u32(l.query_drop_bits);
  w.put_u64(l.max_norm_sq);
  w.reserve(w.size() + l.centroids.size() * 4 + l.slot_doc.size() * 4);
  // memcpy rather than std::bit_cast: emscripten 3.1.6's libc++ (the browser client) has none.
  for (float f : l.centroids) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    w.put_u32(bits);
  }
  for (std::uint32_t d : l.slot_doc) w.put_u32(d);
  return w.take();
}

Result<ScoringLayout> parse_layout(std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(get_header(r, kLayoutMagic, "scoring layout"));
  ScoringLayout l;
  auto& s = l.shape;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(s.documents));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(s.clusters));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(s.cluster_rows));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(s.dim));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(s.doc_bits));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(s.query_bits));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(s.log_p));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(s.answer_bits));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(s.pad_columns));
  PRIVSEARCH_RETURN_IF_ERROR(validate_shape(s));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_string(l.lwe_params, 64));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(l.matrix_salt));
  l.matrix_seed = derive_matrix_seed(l.matrix_salt);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(l.doc_scale));
  if (!(l.doc_scale > 0)) return invalid_argument_error("scoring layout: document scale <= 0");
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(l.centroid_dim));
  if (l.centroid_dim == 0 || l.centroid_dim > s.dim) {
    return invalid_argument_error(
        fmt::format("scoring layout: centroid dimension {} for dim {}", l.centroid_dim, s.dim));
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(l.query_drop_bits));
  PRIVSEARCH_RETURN_IF_ERROR(check_drop_bits(l.query_drop_bits));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(l.max_norm_sq));
  // ||M_d||^2 <= dim 2^(2 (bd - 1)): anything larger is not a quantized document.
  if (l.max_norm_sq > std::uint64_t{s.dim} << (2 * (s.doc_bits - 1))) {
    return invalid_argument_error(
        fmt::format("scoring layout: document norm bound {} above dim {} at {} bits", l.max_norm_sq,
                    s.dim, s.doc_bits));
  }
  const std::size_t n_centroids = std::size_t{s.clusters} * l.centroid_dim;
  const std::size_t n_slots = std::size_t{s.clusters} * s.cluster_rows;
  PRIVSEARCH_RETURN_IF_ERROR(need(r, (n_centroids + n_slots) * 4, "scoring layout tables"));
  l.centroids.resize(n_centroids);
  for (auto& f : l.centroids) {
    std::uint32_t u = 0;
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(u));
    std::memcpy(&f, &u, sizeof f);
    if (!std::isfinite(f)) return invalid_argument_error("scoring layout: non-finite centroid");
  }
  l.slot_doc.resize(n_slots);
  std::vector<std::uint8_t> seen(s.documents, 0);
  std::uint64_t placed = 0;
  for (std::size_t i = 0; i < n_slots; ++i) {
    auto& d = l.slot_doc[i];
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(d));
    if (d == kEmptySlot) continue;
    // At most kMaxCopies slots per document, never two in one cluster.
    if (d >= s.documents || seen[d] == kMaxCopies) {
      return invalid_argument_error(
          fmt::format("scoring layout: slot names document {} (out of range or more than {} times)",
                      d, kMaxCopies));
    }
    if (seen[d] == 0) ++placed;
    ++seen[d];
  }
  for (std::size_t c = 0; c < s.clusters; ++c) {
    std::vector<std::uint32_t> docs;
    for (std::size_t r0 = 0; r0 < s.cluster_rows; ++r0) {
      const std::uint32_t d = l.slot_doc[c * s.cluster_rows + r0];
      if (d != kEmptySlot) docs.push_back(d);
    }
    std::sort(docs.begin(), docs.end());
    if (std::adjacent_find(docs.begin(), docs.end()) != docs.end()) {
      return invalid_argument_error(
          fmt::format("scoring layout: a document twice in cluster {}", c));
    }
  }
  if (placed != s.documents) {
    return invalid_argument_error(
        fmt::format("scoring layout places {} of {} documents", placed, s.documents));
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return l;
}

std::vector<std::uint8_t> serialize_matrix(const ScoringMatrix& m) {
  ByteWriter w;
  put_header(w, kMatrixMagic);
  w.put_u32(m.rows);
  w.put_u64(m.columns);
  w.put_u64(m.stride);
  w.put_u32(m.query_drop_bits);
  w.put_u32(m.answer_bits);
  w.put_bytes(m.data);
  return w.take();
}

Result<ScoringMatrix> parse_matrix(std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(get_header(r, kMatrixMagic, "scoring matrix"));
  ScoringMatrix m;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(m.rows));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(m.columns));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(m.stride));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(m.query_drop_bits));
  PRIVSEARCH_RETURN_IF_ERROR(check_drop_bits(m.query_drop_bits));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(m.answer_bits));
  if (m.answer_bits <= kMinLogP || m.answer_bits > 32) {
    return invalid_argument_error(fmt::format("scoring matrix: answers of {} bits", m.answer_bits));
  }
  if (m.rows == 0 || m.rows > kMaxClusterRows || m.columns == 0 || m.columns > kMaxColumns ||
      m.stride != (m.columns + 63) / 64 * 64) {
    return invalid_argument_error(
        fmt::format("scoring matrix shape {} x {} (stride {})", m.rows, m.columns, m.stride));
  }
  const std::size_t n = std::size_t{m.rows} * m.stride;
  PRIVSEARCH_RETURN_IF_ERROR(need(r, n, "scoring matrix entries"));
  m.data.resize(n);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(m.data));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  for (std::size_t row = 0; row < m.rows; ++row) {
    for (std::size_t c = m.columns; c < m.stride; ++c) {
      if (m.data[row * m.stride + c] != 0) {
        return invalid_argument_error("scoring matrix: nonzero padding");
      }
    }
  }
  return m;
}

std::vector<std::uint8_t> serialize_hint(const ScoringHint& h) {
  ByteWriter w;
  put_header(w, kHintMagic);
  w.put_u32(h.rows);
  w.put_u32(h.n);
  w.reserve(w.size() + h.values.size() * 4);
  for (std::uint32_t v : h.values) w.put_u32(v);
  return w.take();
}

Result<ScoringHint> parse_hint(std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(get_header(r, kHintMagic, "scoring hint"));
  ScoringHint h;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(h.rows));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(h.n));
  if (h.rows == 0 || h.rows > kMaxClusterRows || h.n == 0 || h.n > kMaxHintN) {
    return invalid_argument_error(fmt::format("scoring hint shape {} x {}", h.rows, h.n));
  }
  const std::size_t n = std::size_t{h.rows} * h.n;
  PRIVSEARCH_RETURN_IF_ERROR(need(r, n * 4, "scoring hint entries"));
  h.values.resize(n);
  for (auto& v : h.values) PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(v));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return h;
}

std::string pack_queries(std::span<const std::uint64_t> queries, std::uint32_t drop_bits) {
  const std::size_t width = pir::lwe64_entry_bytes(static_cast<int>(drop_bits));
  std::string out(queries.size() * width, '\0');
  for (std::size_t i = 0; i < queries.size(); ++i) {
    for (std::size_t b = 0; b < width; ++b) {
      out[i * width + b] = static_cast<char>((queries[i] >> (8 * b)) & 0xff);
    }
  }
  return out;
}

bool unpack_queries(std::string_view bytes, std::uint32_t drop_bits,
                    std::vector<std::uint64_t>& out) {
  const std::size_t width = pir::lwe64_entry_bytes(static_cast<int>(drop_bits));
  if (bytes.size() % width != 0) return false;
  out.assign(bytes.size() / width, 0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < width; ++b) {
      v |= std::uint64_t{static_cast<std::uint8_t>(bytes[i * width + b])} << (8 * b);
    }
    out[i] = v;
  }
  return true;
}

std::size_t packed_answer_bytes(std::size_t count, std::uint32_t bits) {
  return (count * bits + 7) / 8;
}

std::string pack_answers(std::span<const std::uint32_t> answers, std::uint32_t bits) {
  std::string out(packed_answer_bytes(answers.size(), bits), '\0');
  std::uint64_t acc = 0;  // pending bits, least significant first
  unsigned held = 0;
  std::size_t at = 0;
  for (const std::uint32_t a : answers) {
    acc |= std::uint64_t{pir::lwe64_switch_answer(a, static_cast<int>(bits))} << held;
    held += bits;
    for (; held >= 8; held -= 8, acc >>= 8) out[at++] = static_cast<char>(acc & 0xff);
  }
  if (held > 0) out[at] = static_cast<char>(acc & 0xff);
  return out;
}

bool unpack_answers(std::string_view bytes, std::size_t count, std::uint32_t bits,
                    std::vector<std::uint32_t>& out) {
  if (bits == 0 || bits > 32 || bytes.size() != packed_answer_bytes(count, bits)) return false;
  out.assign(count, 0);
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  std::uint64_t acc = 0;
  unsigned held = 0;
  std::size_t at = 0;
  for (auto& v : out) {
    while (held < bits) {
      acc |= std::uint64_t{static_cast<std::uint8_t>(bytes[at++])} << held;
      held += 8;
    }
    v = static_cast<std::uint32_t>((acc & mask) << (32 - bits));
    acc >>= bits;
    held -= bits;
  }
  return acc == 0;  // the padding bits of the last byte
}

Status save_layout(const std::filesystem::path& file, const ScoringLayout& layout) {
  return index::write_bytes_atomically(file, serialize_layout(layout));
}
Result<ScoringLayout> load_layout(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, index::read_file_bytes(file));
  auto l = parse_layout(bytes);
  if (!l.ok()) return with_context(l.status(), file);
  return l;
}
Status save_matrix(const std::filesystem::path& file, const ScoringMatrix& m) {
  return index::write_bytes_atomically(file, serialize_matrix(m));
}
Result<ScoringMatrix> load_matrix(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, index::read_file_bytes(file));
  auto m = parse_matrix(bytes);
  if (!m.ok()) return with_context(m.status(), file);
  return m;
}
Status save_hint(const std::filesystem::path& file, const ScoringHint& h) {
  return index::write_bytes_atomically(file, serialize_hint(h));
}
Result<ScoringHint> load_hint(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, index::read_file_bytes(file));
  auto h = parse_hint(bytes);
  if (!h.ok()) return with_context(h.status(), file);
  return h;
}

}  // namespace privsearch::scoring

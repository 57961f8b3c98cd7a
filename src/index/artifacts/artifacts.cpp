#include "index/artifacts/artifacts.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "core/bytes.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::index {

void put_header(ByteWriter& w, const char magic[4]) {
  w.put_bytes({reinterpret_cast<const std::uint8_t*>(magic), 4});
  w.put_u16(1);
  w.put_u16(0);
}

void put_floats(ByteWriter& w, std::span<const float> v) {
  w.put_bytes({reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * 4});
}

Status get_floats(ByteReader& r, std::span<float> out, const char* what) {
  std::vector<std::uint8_t> tmp(out.size() * 4);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(tmp));
  std::memcpy(out.data(), tmp.data(), tmp.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i]))
      return data_loss_error(fmt::format("{}: value {} is not finite", what, i));
  }
  return Status();
}

Status read_header(ByteReader& r, const char magic[4], const std::filesystem::path& file) {
  std::uint8_t m[4];
  std::uint16_t version = 0, zero = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(m));
  if (std::memcmp(m, magic, 4) != 0) {
    return data_loss_error(
        fmt::format("`{}` is not a {} file", file.string(), std::string(magic, 4)));
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(version));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(zero));
  if (version != 1)
    return data_loss_error(fmt::format("`{}`: version {} unsupported", file.string(), version));
  return Status();
}

Status save_projection(const std::filesystem::path& file, const Projection& p) {
  ByteWriter w;
  put_header(w, "PSPJ");
  w.put_u8(static_cast<std::uint8_t>(p.kind));
  w.put_u32(static_cast<std::uint32_t>(p.input_dim));
  w.put_u32(static_cast<std::uint32_t>(p.output_dim));
  w.put_f64(p.retained_variance);
  put_floats(w, p.mean);
  put_floats(w, p.basis);
  for (std::size_t j = 0; j < p.output_dim; ++j)
    w.put_f64(j < p.singular_values.size() ? p.singular_values[j] : 0.0);
  return write_bytes_atomically(file, w.bytes());
}

Result<Projection> load_projection(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, "PSPJ", file));
  Projection p;
  std::uint8_t kind = 0;
  std::uint32_t in = 0, out = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(kind));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(in));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(out));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(p.retained_variance));
  if (kind < 1 || kind > 3 || in == 0 || out == 0 || out > in || in > (1u << 16)) {
    return data_loss_error(fmt::format("`{}`: projection {} -> {} (kind {}) is invalid",
                                       file.string(), in, out, kind));
  }
  const std::size_t expected = (std::size_t{in} + std::size_t{in} * out) * 4 + std::size_t{out} * 8;
  if (r.remaining() != expected) {
    return data_loss_error(
        fmt::format("`{}`: {} bytes of data, expected {}", file.string(), r.remaining(), expected));
  }
  p.kind = static_cast<ProjectionKind>(kind);
  p.input_dim = in;
  p.output_dim = out;
  p.mean.resize(in);
  p.basis.resize(std::size_t{in} * out);
  PRIVSEARCH_RETURN_IF_ERROR(get_floats(r, p.mean, "projection mean"));
  PRIVSEARCH_RETURN_IF_ERROR(get_floats(r, p.basis, "projection basis"));
  p.singular_values.resize(out);
  for (auto& v : p.singular_values) PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(v));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return p;
}

Status save_pq(const std::filesystem::path& file, const PqArtifact& a) {
  ByteWriter w;
  put_header(w, "PSPQ");
  w.put_u32(static_cast<std::uint32_t>(a.codebook.dim));
  w.put_u32(static_cast<std::uint32_t>(a.codebook.m));
  w.put_u64(a.count);
  put_floats(w, a.codebook.centroids);
  w.put_bytes(a.codes);
  return write_bytes_atomically(file, w.bytes());
}

Result<PqArtifact> load_pq(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, "PSPQ", file));
  std::uint32_t dim = 0, m = 0;
  std::uint64_t count = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(dim));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(m));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(count));
  if (dim == 0 || m == 0 || dim % m != 0 || dim > 4096 || count == 0) {
    return data_loss_error(fmt::format("`{}`: PQ shape d' = {}, M = {}, n = {} is invalid",
                                       file.string(), dim, m, count));
  }
  std::size_t codes = 0;
  const std::size_t centroids = std::size_t{m} * 256 * (dim / m);
  if (!checked_mul(count, m, codes) || r.remaining() != centroids * 4 + codes) {
    return data_loss_error(fmt::format("`{}`: {} bytes of data do not match the declared shape",
                                       file.string(), r.remaining()));
  }
  PqArtifact a;
  a.codebook = shaped_codebook(dim, m);
  PRIVSEARCH_RETURN_IF_ERROR(get_floats(r, a.codebook.centroids, "PQ centroids"));
  a.count = count;
  a.codes.resize(codes);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(a.codes));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return a;
}

}  // namespace privsearch::index

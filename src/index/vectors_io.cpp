#include "index/vectors_io.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>

#include "core/bytes.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::index {

namespace {

Status file_error(const std::filesystem::path& file, const std::string& what) {
  return data_loss_error(fmt::format("{}: {}", file.string(), what));
}

Result<std::vector<char>> read_all(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return not_found_error(fmt::format("cannot open `{}`", file.string()));
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

Status check_finite(const std::filesystem::path& file, const Matrix& m) {
  for (std::size_t i = 0; i < m.data.size(); ++i) {
    if (!std::isfinite(m.data[i])) {
      return file_error(
          file, fmt::format("non-finite value at row {}, column {}", i / m.cols, i % m.cols));
    }
  }
  return Status();
}

}  // namespace

namespace {

// Where a .npy file's header text starts and how long it is (format versions 1-3: magic, version,
// a 2- or 4-byte little-endian length).
struct NpyPreamble {
  std::size_t offset = 0, header_len = 0;
};
Result<NpyPreamble> npy_preamble(const std::filesystem::path& file,
                                 const std::vector<char>& bytes) {
  static constexpr char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
    return file_error(file, "not a .npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  NpyPreamble p;
  if (major == 1) {
    p.header_len =
        static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    p.offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return file_error(file, "truncated header");
    for (int i = 0; i < 4; ++i)
      p.header_len |= std::size_t{static_cast<unsigned char>(bytes[8 + i])} << (8 * i);
    p.offset = 12;
  } else {
    return file_error(file, fmt::format("unsupported .npy version {}", major));
  }
  if (p.offset + p.header_len > bytes.size()) return file_error(file, "truncated header");
  return p;
}

}  // namespace

Result<Matrix> load_npy(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_all(file));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto preamble, npy_preamble(file, bytes));
  const std::size_t offset = preamble.offset, header_len = preamble.header_len;
  const std::string header(bytes.data() + offset, header_len);
  std::smatch m;
  static const std::regex descr(R"('descr'\s*:\s*'([^']*)')");
  static const std::regex order(R"('fortran_order'\s*:\s*(True|False))");
  static const std::regex shape(R"('shape'\s*:\s*\(\s*(\d+)\s*,\s*(\d+)\s*,?\s*\))");
  if (!std::regex_search(header, m, descr)) return file_error(file, "header lacks 'descr'");
  const std::string dtype = m[1];
  if (dtype != "<f4" && dtype != "<f8") {
    return file_error(file, fmt::format("dtype `{}` unsupported (need <f4 or <f8)", dtype));
  }
  if (!std::regex_search(header, m, order)) return file_error(file, "header lacks 'fortran_order'");
  if (m[1] == "True") return file_error(file, "Fortran order unsupported; save with C order");
  if (!std::regex_search(header, m, shape))
    return file_error(file, "shape is not 2-D (rows, cols)");
  Matrix out;
  try {
    out.rows = std::stoull(m[1]);
    out.cols = std::stoull(m[2]);
  } catch (const std::exception&) {
    return file_error(file, "shape out of range");
  }
  const std::size_t elem = dtype == "<f4" ? 4 : 8;
  std::size_t count = 0, need = 0;
  if (out.cols == 0 || !checked_mul(out.rows, out.cols, count) || !checked_mul(count, elem, need) ||
      offset + header_len + need != bytes.size()) {
    return file_error(file,
                      fmt::format("shape ({}, {}) of {} does not match the {} data bytes", out.rows,
                                  out.cols, dtype, bytes.size() - offset - header_len));
  }
  out.data.resize(count);
  const char* data = bytes.data() + offset + header_len;
  if (elem == 4) {
    std::memcpy(out.data.data(), data, need);
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      double v;
      std::memcpy(&v, data + 8 * i, 8);
      out.data[i] = static_cast<float>(v);
    }
  }
  PRIVSEARCH_RETURN_IF_ERROR(check_finite(file, out));
  return out;
}

Result<Matrix> load_fvecs(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_all(file));
  Matrix out;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < 4) return file_error(file, fmt::format("truncated row {}", out.rows));
    std::int32_t dim = 0;
    std::memcpy(&dim, bytes.data() + pos, 4);
    pos += 4;
    if (dim <= 0 || dim > (1 << 20)) {
      return file_error(file, fmt::format("row {} declares dimension {}", out.rows, dim));
    }
    if (out.rows == 0) out.cols = static_cast<std::size_t>(dim);
    if (static_cast<std::size_t>(dim) != out.cols) {
      return file_error(
          file, fmt::format("row {} has dimension {}, row 0 has {}", out.rows, dim, out.cols));
    }
    if (bytes.size() - pos < out.cols * 4) {
      return file_error(file, fmt::format("truncated row {}", out.rows));
    }
    const std::size_t at = out.data.size();
    out.data.resize(at + out.cols);
    std::memcpy(out.data.data() + at, bytes.data() + pos, out.cols * 4);
    pos += out.cols * 4;
    ++out.rows;
  }
  if (out.rows == 0) return file_error(file, "no vectors");
  PRIVSEARCH_RETURN_IF_ERROR(check_finite(file, out));
  return out;
}

Result<Matrix> load_vectors(const std::filesystem::path& file) {
  const auto ext = file.extension().string();
  if (ext == ".npy") return load_npy(file);
  if (ext == ".fvecs") return load_fvecs(file);
  return invalid_argument_error(
      fmt::format("`{}`: unknown vector format (use .npy or .fvecs)", file.string()));
}

Result<std::vector<std::string>> load_ids(const std::filesystem::path& file,
                                          std::size_t expected_rows) {
  std::ifstream in(file);
  if (!in) return not_found_error(fmt::format("cannot open `{}`", file.string()));
  std::vector<std::string> ids;
  std::set<std::string> seen;
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) return file_error(file, fmt::format("line {}: empty id", n));
    if (!seen.insert(line).second)
      return file_error(file, fmt::format("line {}: duplicate id `{}`", n, line));
    ids.push_back(line);
  }
  if (ids.size() != expected_rows) {
    return file_error(file, fmt::format("{} ids for {} vectors", ids.size(), expected_rows));
  }
  return ids;
}

Status save_npy(const std::filesystem::path& file, const Matrix& m) {
  std::string header = fmt::format(
      "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", m.rows, m.cols);
  // Pad so that the data starts at a multiple of 64 bytes, ending the header with '\n'.
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  return write_file_atomically(file, [&](std::FILE* f) {
    const unsigned char pre[10] = {0x93,
                                   'N',
                                   'U',
                                   'M',
                                   'P',
                                   'Y',
                                   1,
                                   0,
                                   static_cast<unsigned char>(header.size() & 0xff),
                                   static_cast<unsigned char>(header.size() >> 8)};
    if (std::fwrite(pre, 1, 10, f) != 10 ||
        std::fwrite(header.data(), 1, header.size(), f) != header.size() ||
        std::fwrite(m.data.data(), 4, m.data.size(), f) != m.data.size()) {
      return unavailable_error("short write");
    }
    return Status();
  });
}

}  // namespace privsearch::index

#include "index/artifacts/exact_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "core/bytes.h"
#include "core/fast_hash.h"
#include "core/half.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::index {
namespace {

// A row's fingerprint (core/fast_hash.h): about 0.1 us per 672-value row.
std::uint64_t row_hash(const void* row, std::size_t bytes, std::size_t cols) {
  return fast_hash(row, bytes, cols);
}

}  // namespace

namespace {
constexpr std::uint8_t kExactMagic[4] = {'P', 'S', 'X', 'S'};
constexpr std::uint16_t kExactVersion = 1;
constexpr std::size_t kHeaderBytes = 64;
}  // namespace

std::vector<std::uint8_t> ExactStore::encode_header(std::uint64_t rows, std::size_t cols,
                                                    StoreDtype dtype) {
  ByteWriter h;
  h.put_bytes(kExactMagic);
  h.put_u16(kExactVersion);
  h.put_u16(0);
  h.put_u64(rows);
  h.put_u32(static_cast<std::uint32_t>(cols));
  h.put_u32(static_cast<std::uint32_t>(dtype));
  std::vector<std::uint8_t> header = h.take();
  header.resize(kHeaderBytes, 0);
  return header;
}

Result<std::vector<std::uint8_t>> ExactStore::encode_rows(const Matrix& m, StoreDtype dtype,
                                                          std::uint64_t first_row) {
  if (m.data.size() != m.rows * m.cols) return invalid_argument_error("malformed row block");
  if (dtype == StoreDtype::kFloat32) {
    std::vector<std::uint8_t> out(m.data.size() * 4);
    std::memcpy(out.data(), m.data.data(), out.size());
    return out;
  }
  std::vector<std::uint8_t> out(m.data.size() * 2);
  for (std::size_t i = 0; i < m.data.size(); ++i) {
    const std::uint16_t bits = float_to_half_bits(m.data[i]);
    if (!std::isfinite(half_bits_to_float(bits))) {
      return invalid_argument_error(fmt::format(
          "value {} at row {} does not fit binary16 (|x| <= 65504): keep the store float32",
          m.data[i], first_row + i / m.cols));
    }
    std::memcpy(out.data() + 2 * i, &bits, 2);
  }
  return out;
}

Status ExactStore::write(const std::filesystem::path& file, const Matrix& m, StoreDtype dtype) {
  if (m.rows == 0 || m.cols == 0 || m.data.size() != m.rows * m.cols) {
    return invalid_argument_error("exact store needs a non-empty rows x cols matrix");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto body, encode_rows(m, dtype, 0));
  const auto header = encode_header(m.rows, m.cols, dtype);
  return write_file_atomically(file, [&](std::FILE* f) {
    if (std::fwrite(header.data(), 1, header.size(), f) != header.size() ||
        std::fwrite(body.data(), 1, body.size(), f) != body.size()) {
      return unavailable_error("short write");
    }
    return Status();
  });
}

namespace {

struct StoreHeader {
  std::uint64_t rows = 0;
  std::uint32_t cols = 0, dtype = 0;
  std::size_t value_bytes() const { return dtype == 1 ? 2 : 4; }
};

// The header against the file's size: magic, version, value type and a shape that fills the
// file exactly (kDataLoss otherwise).
Result<StoreHeader> parse_store_header(const std::uint8_t* header, std::size_t size) {
  ByteReader r({header, kHeaderBytes});
  std::uint8_t magic[4];
  std::uint16_t version = 0, zero = 0;
  StoreHeader h;
  (void)r.get_bytes(magic);
  (void)r.get_u16(version);
  (void)r.get_u16(zero);
  (void)r.get_u64(h.rows);
  (void)r.get_u32(h.cols);
  (void)r.get_u32(h.dtype);
  std::size_t count = 0, bytes = 0;
  if (std::memcmp(magic, kExactMagic, 4) != 0) {
    return data_loss_error("not an exact store (bad magic)");
  }
  if (version != kExactVersion) {
    return data_loss_error(
        fmt::format("exact store version {} (this build reads {})", version, kExactVersion));
  }
  if (h.dtype > 1) {
    return data_loss_error(
        fmt::format("exact store value type {} (0 float32, 1 float16)", h.dtype));
  }
  if (h.rows == 0 || h.cols == 0 || !checked_mul(h.rows, h.cols, count) ||
      !checked_mul(count, h.value_bytes(), bytes) || kHeaderBytes + bytes != size) {
    return data_loss_error(
        fmt::format("shape {} x {} does not match the file size {}", h.rows, h.cols, size));
  }
  return h;
}

}  // namespace

Result<ExactStore> ExactStore::open(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return not_found_error(fmt::format("cannot open exact store `{}`", file.string()));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return unavailable_error(fmt::format("cannot stat `{}`", file.string()));
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  std::uint8_t header[kHeaderBytes];
  if (size < kHeaderBytes ||
      ::pread(fd, header, kHeaderBytes, 0) != static_cast<ssize_t>(kHeaderBytes)) {
    ::close(fd);
    return data_loss_error(fmt::format("{}: truncated header", file.string()));
  }
  const auto h = parse_store_header(header, size);
  if (!h.ok()) {
    ::close(fd);
    return h.status().with_context(file.string());
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    ::close(fd);
    return unavailable_error(fmt::format("mmap of `{}` failed", file.string()));
  }
  ExactStore s;
  s.map_ = map;
  s.map_bytes_ = size;
  s.fd_ = fd;
  s.values_ = static_cast<const std::uint8_t*>(map) + kHeaderBytes;
  s.dtype_ = static_cast<StoreDtype>(h->dtype);
  s.rows_ = h->rows;
  s.cols_ = h->cols;
  PRIVSEARCH_RETURN_IF_ERROR(s.index_rows(file));
  return s;
}

Status ExactStore::index_rows(const std::filesystem::path& file) {
  row_hash_.resize(rows_);
  const std::size_t row_bytes = cols_ * (dtype_ == StoreDtype::kFloat16 ? 2 : 4);
  std::vector<float> row(cols_);
  double best = 0;
  for (std::size_t i = 0; i < rows_; ++i) {
    const std::uint8_t* raw = values_ + i * row_bytes;
    decode_row(raw, row.data());
    double norm = 0;
    for (std::size_t j = 0; j < cols_; ++j) {
      if (!std::isfinite(row[j])) {
        return data_loss_error(
            fmt::format("{}: non-finite value at row {}, column {}", file.string(), i, j));
      }
      norm += static_cast<double>(row[j]) * row[j];
    }
    best = std::max(best, norm);
    row_hash_[i] = row_hash(raw, row_bytes, cols_);
  }
  max_row_norm_ = std::sqrt(best);
  return Status();
}

ExactStore::ExactStore(ExactStore&& o) noexcept
    : map_(std::exchange(o.map_, nullptr)),
      map_bytes_(std::exchange(o.map_bytes_, 0)),
      values_(std::exchange(o.values_, nullptr)),
      dtype_(o.dtype_),
      rows_(std::exchange(o.rows_, 0)),
      cols_(std::exchange(o.cols_, 0)),
      max_row_norm_(o.max_row_norm_),
      fd_(std::exchange(o.fd_, -1)),
      row_hash_(std::move(o.row_hash_)),
      widened_(std::move(o.widened_)) {}

ExactStore& ExactStore::operator=(ExactStore&& o) noexcept {
  if (this != &o) {
    if (map_ != nullptr) ::munmap(map_, map_bytes_);
    if (fd_ >= 0) ::close(fd_);
    map_ = std::exchange(o.map_, nullptr);
    map_bytes_ = std::exchange(o.map_bytes_, 0);
    values_ = std::exchange(o.values_, nullptr);
    dtype_ = o.dtype_;
    rows_ = std::exchange(o.rows_, 0);
    cols_ = std::exchange(o.cols_, 0);
    max_row_norm_ = o.max_row_norm_;
    fd_ = std::exchange(o.fd_, -1);
    row_hash_ = std::move(o.row_hash_);
    widened_ = std::move(o.widened_);
  }
  return *this;
}

void ExactStore::decode_row(const std::uint8_t* raw, float* out) const {
  if (dtype_ == StoreDtype::kFloat32) {
    std::memcpy(out, raw, cols_ * 4);
    return;
  }
  halves_to_floats(raw, out, cols_);
}

const float* ExactStore::row(std::size_t r) const {
  if (dtype_ == StoreDtype::kFloat32) return reinterpret_cast<const float*>(values_) + r * cols_;
  std::call_once(widened_->once, [&] {
    widened_->values.resize(rows_ * cols_);
    for (std::size_t i = 0; i < rows_; ++i) {
      decode_row(values_ + i * cols_ * 2, widened_->values.data() + i * cols_);
    }
  });
  return widened_->values.data() + r * cols_;
}

ExactStore::~ExactStore() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
  if (fd_ >= 0) ::close(fd_);
}

bool ExactStore::read_only() const {
  if (map_ == nullptr) return false;
  std::ifstream maps("/proc/self/maps");
  const auto start = reinterpret_cast<std::uintptr_t>(map_);
  std::string line;
  while (std::getline(maps, line)) {
    // "start-end perms offset dev inode path", addresses in hex.
    const auto dash = line.find('-');
    const auto space = line.find(' ');
    if (dash == std::string::npos || space == std::string::npos || space + 2 >= line.size()) {
      continue;
    }
    if (std::stoull(line.substr(0, dash), nullptr, 16) != start) continue;
    return line[space + 2] != 'w';
  }
  return false;  // fail closed: a mapping we cannot see is not reported read-only
}

Status ExactStore::gather(std::span<const std::uint64_t> ids, std::vector<float>& out) const {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= rows_) {
      return out_of_range_error(
          fmt::format("candidate {} is row {}; the store has {} rows", i, ids[i], rows_));
    }
  }
  out.resize(ids.size() * cols_);
  const std::size_t row_bytes = cols_ * (dtype_ == StoreDtype::kFloat16 ? 2 : 4);
  // Rows not in the page cache are read from disk: announce them all first so the kernel reads
  // them concurrently (readahead) rather than one pread's wait after another. Advisory only.
  if (ids.size() > 1) {
    for (const auto id : ids) {
      (void)::posix_fadvise(fd_, static_cast<off_t>(kHeaderBytes + id * row_bytes),
                            static_cast<off_t>(row_bytes), POSIX_FADV_WILLNEED);
    }
  }
  std::vector<std::uint8_t> raw(row_bytes);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    float* dst = out.data() + i * cols_;
    const auto offset = static_cast<off_t>(kHeaderBytes + ids[i] * row_bytes);
    std::size_t got = 0;
    while (got < row_bytes) {
      const ssize_t n =
          ::pread(fd_, raw.data() + got, row_bytes - got, offset + static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        return data_loss_error(fmt::format(
            "row {} of the exact store cannot be read in full (the file was truncated after it "
            "was loaded?)",
            ids[i]));
      }
      got += static_cast<std::size_t>(n);
    }
    if (row_hash(raw.data(), row_bytes, cols_) != row_hash_[ids[i]]) {
      return data_loss_error(fmt::format(
          "row {} of the exact store changed on disk since it was loaded and verified", ids[i]));
    }
    decode_row(raw.data(), dst);
  }
  return Status();
}

}  // namespace privsearch::index

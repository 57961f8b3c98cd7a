#include "core/bytes.h"

#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace privsearch {

void ByteWriter::put_u16(std::uint16_t v) {
  for (int i = 0; i < 2; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void ByteWriter::put_u32(std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void ByteWriter::put_u64(std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void ByteWriter::put_f64(double v) { put_u64(std::bit_cast<std::uint64_t>(v)); }

void ByteWriter::put_bytes(std::span<const std::uint8_t> data) {
  bytes_.insert(bytes_.end(), data.begin(), data.end());
}

void ByteWriter::put_string(std::string_view s) {
  PRIVSEARCH_CHECK(s.size() <= 0xffffffffu, "string too long to serialize");
  put_u32(static_cast<std::uint32_t>(s.size()));
  put_bytes({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
}

void ByteWriter::put_packed(std::span<const std::uint64_t> values, int bits) {
  PRIVSEARCH_CHECK(bits >= 1 && bits <= 64, "bit width out of [1, 64]");
  const std::size_t start = bytes_.size();
  bytes_.resize(start + packed_bytes(values.size(), bits), 0);
  std::uint8_t* out = bytes_.data() + start;
  // Accumulate into a 128-bit window and flush whole bytes; LSB first.
  unsigned __int128 acc = 0;
  int acc_bits = 0;
  std::size_t pos = 0;
  const std::uint64_t limit_mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  for (std::uint64_t v : values) {
    PRIVSEARCH_DCHECK((v & ~limit_mask) == 0, "value wider than the packing width");
    acc |= static_cast<unsigned __int128>(v & limit_mask) << acc_bits;
    acc_bits += bits;
    while (acc_bits >= 8) {
      out[pos++] = static_cast<std::uint8_t>(acc);
      acc >>= 8;
      acc_bits -= 8;
    }
  }
  if (acc_bits > 0) out[pos++] = static_cast<std::uint8_t>(acc);
}

Status ByteReader::need(std::size_t n, std::string_view what) const {
  if (n > remaining()) {
    return data_loss_error(fmt::format("truncated input: {} needs {} bytes at offset {}, {} left",
                                       what, n, offset_, remaining()));
  }
  return Status();
}

Status ByteReader::get_u8(std::uint8_t& out) {
  PRIVSEARCH_RETURN_IF_ERROR(need(1, "u8"));
  out = data_[offset_++];
  return Status();
}

Status ByteReader::get_u16(std::uint16_t& out) {
  PRIVSEARCH_RETURN_IF_ERROR(need(2, "u16"));
  out = static_cast<std::uint16_t>(data_[offset_] | (data_[offset_ + 1] << 8));
  offset_ += 2;
  return Status();
}

Status ByteReader::get_u32(std::uint32_t& out) {
  PRIVSEARCH_RETURN_IF_ERROR(need(4, "u32"));
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{data_[offset_ + static_cast<std::size_t>(i)]} << (8 * i);
  offset_ += 4;
  out = v;
  return Status();
}

Status ByteReader::get_u64(std::uint64_t& out) {
  PRIVSEARCH_RETURN_IF_ERROR(need(8, "u64"));
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{data_[offset_ + static_cast<std::size_t>(i)]} << (8 * i);
  offset_ += 8;
  out = v;
  return Status();
}

Status ByteReader::get_f64(double& out) {
  std::uint64_t bits = 0;
  PRIVSEARCH_RETURN_IF_ERROR(get_u64(bits));
  const double v = std::bit_cast<double>(bits);
  if (!std::isfinite(v)) {
    return data_loss_error(fmt::format("non-finite double at offset {}", offset_ - 8));
  }
  out = v;
  return Status();
}

Status ByteReader::get_bytes(std::span<std::uint8_t> out) {
  PRIVSEARCH_RETURN_IF_ERROR(need(out.size(), "byte string"));
  if (!out.empty()) std::memcpy(out.data(), data_.data() + offset_, out.size());
  offset_ += out.size();
  return Status();
}

Status ByteReader::get_string(std::string& out, std::size_t max_len) {
  std::uint32_t len = 0;
  PRIVSEARCH_RETURN_IF_ERROR(get_u32(len));
  if (len > max_len) {
    return data_loss_error(fmt::format("string length {} exceeds limit {}", len, max_len));
  }
  PRIVSEARCH_RETURN_IF_ERROR(need(len, "string"));
  out.assign(reinterpret_cast<const char*>(data_.data() + offset_), len);
  offset_ += len;
  return Status();
}

Status ByteReader::get_packed(std::span<std::uint64_t> out, int bits, std::uint64_t bound,
                              std::string_view what) {
  if (bits < 1 || bits > 64) return invalid_argument_error("packing width out of [1, 64]");
  std::size_t total = 0;
  if (!checked_mul(out.size(), static_cast<std::size_t>(bits), total)) {
    return data_loss_error("packed array size overflows");
  }
  const std::size_t nbytes = (total + 7) / 8;
  PRIVSEARCH_RETURN_IF_ERROR(need(nbytes, what));
  const std::uint8_t* in = data_.data() + offset_;
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  unsigned __int128 acc = 0;
  int acc_bits = 0;
  std::size_t pos = 0;
  std::uint64_t bad = 0;  // OR of "value >= bound" flags; checked once after the loop
  for (std::size_t i = 0; i < out.size(); ++i) {
    while (acc_bits < bits) {
      acc |= static_cast<unsigned __int128>(in[pos++]) << acc_bits;
      acc_bits += 8;
    }
    const std::uint64_t v = static_cast<std::uint64_t>(acc) & mask;
    acc >>= bits;
    acc_bits -= bits;
    out[i] = v;
    bad |= static_cast<std::uint64_t>(v >= bound);
  }
  // Padding bits of the last byte must be zero so every value has one encoding.
  if (acc_bits > 0 && static_cast<std::uint64_t>(acc) != 0) {
    return data_loss_error(fmt::format("{}: nonzero padding bits", what));
  }
  if (bad != 0) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] >= bound) {
        return data_loss_error(fmt::format("{}: element {} = {} is not below the modulus {}", what,
                                           i, out[i], bound));
      }
    }
  }
  offset_ += nbytes;
  return Status();
}

Status ByteReader::expect_end() const {
  if (remaining() != 0) {
    return data_loss_error(
        fmt::format("{} trailing bytes after the object (offset {})", remaining(), offset_));
  }
  return Status();
}

}  // namespace privsearch

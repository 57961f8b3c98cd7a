#include "core/bytes.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>

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
// memcpy rather than std::bit_cast: the same bits, and emscripten 3.1.6's libc++ (the browser
// client's toolchain) has no bit_cast yet.
void ByteWriter::put_f64(double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  put_u64(bits);
}

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
  const std::size_t total = packed_bytes(values.size(), bits);
  // 8 bytes of slack so whole 64-bit words can be stored; trimmed below.
  bytes_.resize(start + total + 8, 0);
  std::uint8_t* out = bytes_.data() + start;
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  // LSB first: a 64-bit window `acc` holding `acc_bits` pending bits, flushed 8 bytes at a time.
  std::uint64_t acc = 0;
  int acc_bits = 0;
  std::size_t pos = 0;
  for (std::uint64_t v : values) {
    PRIVSEARCH_DCHECK((v & ~mask) == 0, "value wider than the packing width");
    v &= mask;
    acc |= v << acc_bits;  // acc_bits < 64 here
    const int filled = acc_bits + bits;
    if (filled >= 64) {
      std::memcpy(out + pos, &acc, 8);  // little-endian host (x86-64)
      pos += 8;
      acc = acc_bits == 0 ? 0 : v >> (64 - acc_bits);
      acc_bits = filled - 64;
    } else {
      acc_bits = filled;
    }
  }
  std::memcpy(out + pos, &acc, 8);
  bytes_.resize(start + total);
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
  for (int i = 0; i < 4; ++i)
    v |= std::uint32_t{data_[offset_ + static_cast<std::size_t>(i)]} << (8 * i);
  offset_ += 4;
  out = v;
  return Status();
}

Status ByteReader::get_u64(std::uint64_t& out) {
  PRIVSEARCH_RETURN_IF_ERROR(need(8, "u64"));
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= std::uint64_t{data_[offset_ + static_cast<std::size_t>(i)]} << (8 * i);
  offset_ += 8;
  out = v;
  return Status();
}

Status ByteReader::get_f64(double& out) {
  std::uint64_t bits = 0;
  PRIVSEARCH_RETURN_IF_ERROR(get_u64(bits));
  double v = 0;
  std::memcpy(&v, &bits, sizeof v);
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
  // Value i starts at bit i*bits. While 16 bytes remain from its first byte, two unaligned
  // 64-bit loads cover it (shift < 8, bits <= 64); the tail goes byte by byte.
  auto load64 = [&](std::size_t byte) {
    std::uint64_t w;
    std::memcpy(&w, in + byte, 8);  // little-endian host (x86-64)
    return w;
  };
  std::uint64_t bad = 0;  // OR of "value >= bound" flags; checked once after the loop
  std::size_t i = 0;
  std::size_t bit = 0;
  for (; i < out.size() && (bit >> 3) + 16 <= nbytes; ++i, bit += static_cast<std::size_t>(bits)) {
    const std::size_t byte = bit >> 3;
    const unsigned shift = static_cast<unsigned>(bit & 7);
    const unsigned __int128 w =
        (static_cast<unsigned __int128>(load64(byte + 8)) << 64) | load64(byte);
    const std::uint64_t v = static_cast<std::uint64_t>(w >> shift) & mask;
    out[i] = v;
    bad |= static_cast<std::uint64_t>(v >= bound);
  }
  for (; i < out.size(); ++i, bit += static_cast<std::size_t>(bits)) {
    unsigned __int128 w = 0;
    const std::size_t byte = bit >> 3;
    for (std::size_t b = 0; b < 9 && byte + b < nbytes; ++b) {
      w |= static_cast<unsigned __int128>(in[byte + b]) << (8 * b);
    }
    const std::uint64_t v = static_cast<std::uint64_t>(w >> (bit & 7)) & mask;
    out[i] = v;
    bad |= static_cast<std::uint64_t>(v >= bound);
  }
  // Padding bits of the last byte must be zero so every value has one encoding.
  const std::size_t pad = nbytes * 8 - total;
  if (pad > 0 && (in[nbytes - 1] >> (8 - pad)) != 0) {
    return data_loss_error(fmt::format("{}: nonzero padding bits", what));
  }
  if (bad != 0) {
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (out[k] >= bound) {
        return data_loss_error(
            fmt::format("{}: element {} = {} is not below the modulus {}", what, k, out[k], bound));
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

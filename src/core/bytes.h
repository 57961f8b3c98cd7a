// Byte writer and bounds/limit-checked byte reader: the only way privsearch turns objects into
// bytes and untrusted bytes back into objects. Little-endian, fixed-width integers, IEEE doubles,
// and bit-packed arrays of integers (values below 2^bits packed LSB first, `bits` in [1, 64]).
//
// ByteReader never reads past its span, returns kDataLoss with the offset on truncation, and
// refuses declared sizes above a caller-given limit before anything is allocated.
// Thread safety: not shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace privsearch {

// a * b without overflow, or false.
inline bool checked_mul(std::size_t a, std::size_t b, std::size_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}
inline bool checked_add(std::size_t a, std::size_t b, std::size_t& out) {
  return !__builtin_add_overflow(a, b, &out);
}

// Bytes needed for `count` values of `bits` bits each, rounded up to whole bytes.
// Precondition: the product does not overflow (callers check counts against limits first).
inline std::size_t packed_bytes(std::size_t count, int bits) {
  return (count * static_cast<std::size_t>(bits) + 7) / 8;
}

// Protobuf `bytes` fields are std::string. The one pair of conversions privsearch uses between
// them and byte spans: a copy into a string, and a view of a string's bytes (no copy; valid while
// the string lives and is not modified).
inline std::string to_byte_string(std::span<const std::uint8_t> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}
inline std::span<const std::uint8_t> byte_view(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

class ByteWriter {
 public:
  void put_u8(std::uint8_t v) { bytes_.push_back(v); }
  void put_u16(std::uint16_t v);
  void put_u32(std::uint32_t v);
  void put_u64(std::uint64_t v);
  void put_f64(double v);
  void put_bytes(std::span<const std::uint8_t> data);
  void put_string(std::string_view s);  // u32 length + bytes
  // Appends values[i] (each < 2^bits) packed to `bits` bits. Precondition checked.
  void put_packed(std::span<const std::uint64_t> values, int bits);

  void reserve(std::size_t n) { bytes_.reserve(n); }
  std::size_t size() const { return bytes_.size(); }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }
  std::vector<std::uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<std::uint8_t> bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> data) : data_(data) {}

  Status get_u8(std::uint8_t& out);
  Status get_u16(std::uint16_t& out);
  Status get_u32(std::uint32_t& out);
  Status get_u64(std::uint64_t& out);
  Status get_f64(double& out);  // rejects NaN and infinities
  Status get_bytes(std::span<std::uint8_t> out);
  // u32 length, at most `max_len`, then the bytes.
  Status get_string(std::string& out, std::size_t max_len);
  // Reads `out.size()` values of `bits` bits each; every value must be < `bound` (kDataLoss
  // naming `what` otherwise). The array is filled only as far as the input allows; on error
  // the caller must discard it.
  Status get_packed(std::span<std::uint64_t> out, int bits, std::uint64_t bound,
                    std::string_view what);

  std::size_t offset() const { return offset_; }
  std::size_t remaining() const { return data_.size() - offset_; }
  // kDataLoss if bytes are left over ("no trailing bytes").
  Status expect_end() const;

 private:
  Status need(std::size_t n, std::string_view what) const;
  std::span<const std::uint8_t> data_;
  std::size_t offset_ = 0;
};

}  // namespace privsearch

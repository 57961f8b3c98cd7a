#include "index/artifacts/record_digests.h"

#include <fmt/format.h>

#include <cstring>

#include "core/bytes.h"
#include "core/constant_time.h"
#include "core/sha256.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::index {
namespace {

constexpr std::uint8_t kDigestsMagic[4] = {'P', 'S', 'R', 'D'};
constexpr std::size_t kDigestsHeaderBytes = 4 + 2 + 2 + 8 + 8;
constexpr std::string_view kDigestDomain = "privsearch payload record v1\n";

}  // namespace

RecordDigest record_digest(std::uint64_t index, std::span<const std::uint8_t> record) {
  Sha256 h;
  h.update(kDigestDomain);
  std::uint8_t le[8];
  for (int b = 0; b < 8; ++b) le[b] = static_cast<std::uint8_t>(index >> (8 * b));
  h.update(std::span<const std::uint8_t>(le, 8));
  h.update(record);
  const auto full = h.finish();
  RecordDigest out;
  std::memcpy(out.data(), full.data(), out.size());
  return out;
}

Status RecordDigests::write(const std::filesystem::path& file, const PayloadStore& store,
                            std::uint64_t first) {
  ByteWriter w;
  w.put_bytes(kDigestsMagic);
  w.put_u16(1);
  w.put_u16(0);
  w.put_u64(store.records());
  w.put_u64(first);
  auto bytes = w.take();
  for (std::size_t i = 0; i < store.records(); ++i) {
    const auto d = record_digest(
        first + i, std::span<const std::uint8_t>(store.record(i), store.record_bytes()));
    bytes.insert(bytes.end(), d.begin(), d.end());
  }
  return write_bytes_atomically(file, bytes);
}

Result<RecordDigests> RecordDigests::open(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  if (bytes.size() < kDigestsHeaderBytes || std::memcmp(bytes.data(), kDigestsMagic, 4) != 0) {
    return data_loss_error(fmt::format("`{}` is not a record digest table", file.string()));
  }
  ByteReader r({bytes.data() + 4, kDigestsHeaderBytes - 4});
  std::uint16_t version = 0, zero = 0;
  std::uint64_t records = 0;
  RecordDigests out;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(version));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(zero));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(records));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(out.first_));
  if (version != 1 || zero != 0 ||
      records > (bytes.size() - kDigestsHeaderBytes) / kRecordDigestBytes ||
      bytes.size() != kDigestsHeaderBytes + records * kRecordDigestBytes) {
    return data_loss_error(
        fmt::format("`{}`: a record digest table of another version or size", file.string()));
  }
  out.digests_.resize(records);
  for (std::uint64_t i = 0; i < records; ++i) {
    std::memcpy(out.digests_[i].data(), bytes.data() + kDigestsHeaderBytes + i * kRecordDigestBytes,
                kRecordDigestBytes);
  }
  return out;
}

Status RecordDigests::append(const RecordDigests& more) {
  if (more.first_ != first_ + digests_.size()) {
    return data_loss_error(fmt::format("a record digest table starting at {} after {} records",
                                       more.first_, first_ + digests_.size()));
  }
  digests_.insert(digests_.end(), more.digests_.begin(), more.digests_.end());
  return Status();
}

void RecordDigests::erase(std::uint64_t i, std::size_t record_bytes) {
  if (i < first_ || i - first_ >= digests_.size()) return;
  const std::vector<std::uint8_t> zero(record_bytes, 0);
  digests_[i - first_] = record_digest(i, zero);
}

Status RecordDigests::check(std::uint64_t index, std::span<const std::uint8_t> record) const {
  if (index < first_ || index - first_ >= digests_.size()) {
    return out_of_range_error(fmt::format("record {} has no digest", index));
  }
  const auto got = record_digest(index, record);
  if (!ct::memory_equal(got.data(), digests_[index - first_].data(), got.size())) {
    return data_loss_error(fmt::format(
        "record {} is not the one the signed index holds (its digest differs): the provider "
        "served a changed record",
        index));
  }
  return Status();
}

}  // namespace privsearch::index

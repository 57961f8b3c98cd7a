#include "index/artifacts/record_digests.h"

#include <fmt/format.h>

#include <cstring>

#include "core/bytes.h"
#include "core/constant_time.h"
#include "core/sha256.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/row_table.h"

namespace privsearch::index {
namespace {

constexpr std::uint8_t kDigestsMagic[4] = {'P', 'S', 'R', 'D'};
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
  put_row_table_header(w, kDigestsMagic, store.records(), first);
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
  ByteReader r(bytes);
  auto header = read_row_table_header(r, kDigestsMagic, "a record digest table");
  if (!header.ok()) return header.status().with_context(file.string());
  const std::uint64_t records = header->rows;
  RecordDigests out;
  out.first_ = header->first;
  if (records > r.remaining() / kRecordDigestBytes ||
      r.remaining() != records * kRecordDigestBytes) {
    return data_loss_error(
        fmt::format("`{}`: a record digest table of another size", file.string()));
  }
  out.digests_.resize(records);
  for (std::uint64_t i = 0; i < records; ++i) {
    std::memcpy(out.digests_[i].data(),
                bytes.data() + kRowTableHeaderBytes + i * kRecordDigestBytes, kRecordDigestBytes);
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

#include "index/artifacts/payload_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/bytes.h"
#include "index/artifacts/artifact_names.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::index {

namespace {
constexpr std::uint8_t kPayloadMagic[4] = {'P', 'S', 'P', 'L'};
constexpr std::size_t kPayloadHeaderBytes = 64;

// Cuts a UTF-8 string to at most `limit` bytes without splitting a character.
std::string cut_utf8(const std::string& s, std::size_t limit) {
  if (s.size() <= limit) return s;
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}
}  // namespace

std::string payload_body(const Document& d) {
  return d.title.empty() ? d.text : d.title + "\n\n" + d.text;
}

RecordFit record_fit(const std::vector<Document>& docs, std::size_t record_bytes) {
  RecordFit fit;
  for (const auto& d : docs) {
    const std::size_t need = 4 + d.text.size() + (d.title.empty() ? 0 : d.title.size() + 2);
    fit.largest_record = std::max(fit.largest_record, need);
    fit.cut += need > record_bytes ? 1 : 0;
  }
  return fit;
}

std::size_t record_bytes_for(const std::vector<Document>& docs) {
  const std::size_t largest = record_fit(docs, 0).largest_record;
  return std::clamp<std::size_t>((largest + 63) / 64 * 64, 64, std::size_t{1} << 20);
}

Status PayloadStore::write(const std::filesystem::path& file, const std::vector<Document>& docs,
                           std::size_t record_bytes) {
  return write(
      file, docs.size(), [&](std::size_t i) { return docs[i]; }, record_bytes);
}

Status PayloadStore::write(const std::filesystem::path& file, std::size_t count,
                           const std::function<Document(std::size_t)>& document,
                           std::size_t record_bytes) {
  if (record_bytes < 64 || record_bytes > (1u << 20)) {
    return invalid_argument_error(
        fmt::format("`record_bytes` = {} outside [64, 1048576]", record_bytes));
  }
  ByteWriter h;
  h.put_bytes(kPayloadMagic);
  h.put_u16(1);
  h.put_u16(0);
  h.put_u64(count);
  h.put_u32(static_cast<std::uint32_t>(record_bytes));
  std::vector<std::uint8_t> header = h.take();
  header.resize(kPayloadHeaderBytes, 0);
  return write_file_atomically(file, [&](std::FILE* f) {
    if (std::fwrite(header.data(), 1, header.size(), f) != header.size())
      return unavailable_error("short write");
    std::vector<std::uint8_t> rec(record_bytes);
    const std::size_t room = record_bytes - 4;
    for (std::size_t i = 0; i < count; ++i) {
      const Document d = document(i);
      std::string body = payload_body(d);
      const bool cut = body.size() > room;
      if (cut)
        body = cut_utf8(body, room - kTruncatedMarker.size()) + std::string(kTruncatedMarker);
      std::fill(rec.begin(), rec.end(), 0);
      const auto len = static_cast<std::uint32_t>(body.size()) | (cut ? kCutFlag : 0u);
      std::memcpy(rec.data(), &len, 4);
      std::memcpy(rec.data() + 4, body.data(), body.size());
      if (std::fwrite(rec.data(), 1, rec.size(), f) != rec.size())
        return unavailable_error("short write");
    }
    return Status();
  });
}

Result<PayloadStore> PayloadStore::open(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return not_found_error(fmt::format("cannot open payload store `{}`", file.string()));
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.size() < kPayloadHeaderBytes || std::memcmp(bytes.data(), kPayloadMagic, 4) != 0) {
    return data_loss_error(fmt::format("{}: not a payload store", file.string()));
  }
  ByteReader r({bytes.data() + 4, kPayloadHeaderBytes - 4});
  std::uint16_t version = 0, zero = 0;
  std::uint64_t records = 0;
  std::uint32_t record_bytes = 0;
  (void)r.get_u16(version);
  (void)r.get_u16(zero);
  (void)r.get_u64(records);
  (void)r.get_u32(record_bytes);
  std::size_t body = 0;
  if (version != 1 || record_bytes < 64 || !checked_mul(records, record_bytes, body) ||
      kPayloadHeaderBytes + body != bytes.size()) {
    return data_loss_error(
        fmt::format("{}: header ({} records of {} bytes, version {}) does not "
                    "match the file size {}",
                    file.string(), records, record_bytes, version, bytes.size()));
  }
  PayloadStore s;
  s.records_ = records;
  s.record_bytes_ = record_bytes;
  s.data_.assign(bytes.begin() + kPayloadHeaderBytes, bytes.end());
  return s;
}

Result<PayloadShape> payload_shape(const Manifest& manifest) {
  std::uint64_t body = 0;
  std::uint32_t files = 0;
  for (std::uint32_t g = 0; g <= index_generations(manifest); ++g) {
    const ArtifactEntry* e = manifest.find(generation_artifact(kPayloadsArtifact, g));
    if (e == nullptr) continue;
    if (e->bytes < kPayloadHeaderBytes) {
      return data_loss_error(
          fmt::format("payload file {} of {} bytes has no header", e->file, e->bytes));
    }
    body += e->bytes - kPayloadHeaderBytes;
    ++files;
  }
  if (files == 0) return not_found_error("the manifest lists no payloads");
  if (manifest.documents == 0 || body % manifest.documents != 0) {
    return data_loss_error(
        fmt::format("payload files of {} record bytes do not hold {} documents "
                    "in records of one size",
                    body, manifest.documents));
  }
  return PayloadShape{manifest.documents, body / manifest.documents};
}

Result<std::string> PayloadStore::decode_record(const std::uint8_t* record,
                                                std::size_t record_bytes) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto decoded, decode_payload(record, record_bytes));
  return std::move(decoded.text);
}

Result<DecodedPayload> PayloadStore::decode_payload(const std::uint8_t* record,
                                                    std::size_t record_bytes) {
  // The record size comes from the PIR database's public info (a provider's word): below the
  // 4-byte length it holds nothing, and record_bytes - 4 would wrap.
  if (record_bytes < 4) {
    return data_loss_error(
        fmt::format("a payload record of {} bytes holds no length", record_bytes));
  }
  std::uint32_t len = 0;
  std::memcpy(&len, record, 4);
  DecodedPayload out;
  out.cut = (len & kCutFlag) != 0;
  len &= ~kCutFlag;
  if (len > record_bytes - 4) {
    return data_loss_error(
        fmt::format("record declares {} bytes; it holds {}", len, record_bytes - 4));
  }
  out.text.assign(reinterpret_cast<const char*>(record + 4), len);
  return out;
}

Result<std::string> PayloadStore::text(std::size_t i) const {
  if (i >= records_) {
    return out_of_range_error(fmt::format("record {} of {}", i, records_));
  }
  return decode_record(record(i), record_bytes_);
}

std::string PayloadStore::title(std::size_t i) const {
  auto t = text(i);
  return t.ok() ? t.value().substr(0, t.value().find('\n')) : std::string();
}

Status PayloadStore::append(const PayloadStore& more) {
  if (more.record_bytes_ != record_bytes_) {
    return data_loss_error(fmt::format("payload records of {} bytes cannot follow records of {}",
                                       more.record_bytes_, record_bytes_));
  }
  data_.insert(data_.end(), more.data_.begin(), more.data_.end());
  records_ += more.records_;
  return Status();
}

void PayloadStore::erase(std::size_t i) {
  if (i < records_)
    std::fill_n(data_.begin() + static_cast<std::ptrdiff_t>(i * record_bytes_), record_bytes_, 0);
}

}  // namespace privsearch::index

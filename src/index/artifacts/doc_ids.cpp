#include "index/artifacts/doc_ids.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/bytes.h"
#include "index/artifacts/atomic_file.h"
#include "index/artifacts/row_table.h"

namespace privsearch::index {
namespace {

constexpr std::uint8_t kIdsMagic[4] = {'P', 'S', 'I', 'D'};

bool has_control(std::string_view id) {
  return std::any_of(id.begin(), id.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

}  // namespace

Status check_doc_id(std::string_view id) {
  if (id.empty()) return invalid_argument_error("a document id is empty");
  if (id.size() > kMaxDocIdBytes) {
    return invalid_argument_error(fmt::format("document id `{}...` is longer than {} bytes",
                                              id.substr(0, 32), kMaxDocIdBytes));
  }
  if (has_control(id)) {
    return invalid_argument_error(
        fmt::format("document id `{}` holds a control character", id.substr(0, 64)));
  }
  return Status();
}

Result<std::vector<std::uint8_t>> DocIds::encode(std::span<const std::string> ids,
                                                 std::uint64_t first) {
  ByteWriter w;
  put_row_table_header(w, kIdsMagic, ids.size(), first);
  for (const auto& id : ids) {
    PRIVSEARCH_RETURN_IF_ERROR(check_doc_id(id));
    w.put_u16(static_cast<std::uint16_t>(id.size()));
    w.put_bytes({reinterpret_cast<const std::uint8_t*>(id.data()), id.size()});
  }
  return w.take();
}

Status DocIds::write(const std::filesystem::path& file, std::span<const std::string> ids,
                     std::uint64_t first) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, encode(ids, first));
  return write_bytes_atomically(file, bytes);
}

Result<DocIds> DocIds::decode(std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto header,
                              read_row_table_header(r, kIdsMagic, "a document id table"));
  const std::uint64_t rows = header.rows;
  DocIds out;
  out.first_ = header.first;
  // Every row takes at least 3 bytes: a count past that is damage, before anything is sized.
  if (rows > r.remaining() / 3 || out.first_ > (1ull << 40)) {
    return data_loss_error("a document id table of another size");
  }
  out.ends_.reserve(rows);
  std::string id;
  for (std::uint64_t i = 0; i < rows; ++i) {
    std::uint16_t length = 0;
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(length));
    if (length == 0 || length > kMaxDocIdBytes || length > r.remaining()) {
      return data_loss_error(fmt::format("document id {}: a length of {} bytes", i, length));
    }
    id.resize(length);
    PRIVSEARCH_RETURN_IF_ERROR(
        r.get_bytes({reinterpret_cast<std::uint8_t*>(id.data()), id.size()}));
    if (has_control(id)) return data_loss_error(fmt::format("document id {} is not text", i));
    out.bytes_ += id;
    out.ends_.push_back(out.bytes_.size());
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return out;
}

Result<DocIds> DocIds::open(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  auto ids = decode(bytes);
  if (!ids.ok()) return ids.status().with_context(file.string());
  return ids;
}

Status DocIds::append(const DocIds& more) {
  if (more.first_ != records()) {
    return data_loss_error(fmt::format("a document id table starting at row {} after {} rows",
                                       more.first_, records()));
  }
  const std::uint64_t base = bytes_.size();
  bytes_ += more.bytes_;
  for (const auto end : more.ends_) ends_.push_back(base + end);
  return Status();
}

std::string_view DocIds::id(std::uint64_t row) const {
  if (row < first_ || row - first_ >= ends_.size()) return {};
  const std::uint64_t i = row - first_;
  const std::uint64_t begin = i == 0 ? 0 : ends_[i - 1];
  return std::string_view(bytes_).substr(begin, ends_[i] - begin);
}

Result<std::unordered_map<std::string_view, std::uint32_t>> DocIds::live_rows(
    std::span<const std::uint32_t> deleted) const {
  std::unordered_map<std::string_view, std::uint32_t> out;
  out.reserve(ends_.size());
  for (std::uint64_t row = first_; row < records(); ++row) {
    if (std::binary_search(deleted.begin(), deleted.end(), row)) continue;
    if (!out.emplace(id(row), static_cast<std::uint32_t>(row)).second) {
      return data_loss_error(fmt::format("document id `{}` names two live rows", id(row)));
    }
  }
  return out;
}

}  // namespace privsearch::index

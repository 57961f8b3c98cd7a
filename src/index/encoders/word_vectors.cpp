#include "index/encoders/word_vectors.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/bytes.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::index {

namespace {

constexpr std::uint16_t kVersion = 1;
constexpr std::size_t kMaxWord = 256;
constexpr std::size_t kMaxDim = 4096;

// SAX handler for the wink-embeddings JSON (nlohmann::json::sax_parse streams the file and
// calls these in order, so nothing of the 307 MB is kept but the vectors themselves). Depth 1 is
// the top object; "dimensions" is a depth-1 number; under "vectors" (depth 2) each key is a word
// and its array (depth 3) holds dim values followed by the norm and the word index.
class WinkHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit WinkHandler(const std::function<void(std::size_t)>& progress) : progress_(progress) {}

  bool key(string_t& k) override {
    if (depth_ == 1) {
      top_key_ = k;
      if (k == "vectors") {
        if (dim_ == 0) return fail("`vectors` before `dimensions`");
        have_vectors_ = true;
      }
    } else if (depth_ == 2 && top_key_ == "vectors") {
      if (k.empty() || k.size() > kMaxWord) return fail("word empty or longer than 256 bytes");
      if (!seen_.emplace(k, true).second) return fail("duplicate word `" + k + "`");
      word_ = k;
    }
    return true;
  }
  bool start_object(std::size_t) override { return enter(); }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override {
    if (in_vector_list()) {
      if (depth_ != 2) return fail("a word's vector must be a list of numbers");
      row_.clear();
    }
    return enter();
  }
  bool end_array() override {
    if (depth_ == 3 && in_vector_list()) {
      if (row_.size() < dim_) {
        return fail(fmt::format("`{}` has {} values, fewer than the {} dimensions", word_,
                                row_.size(), dim_));
      }
      words_.push_back(word_);
      for (std::size_t j = 0; j < dim_; ++j) values_.push_back(static_cast<float>(row_[j]));
      if (progress_ && words_.size() % 50000 == 0) progress_(words_.size());
    }
    return leave();
  }
  bool number_integer(number_integer_t v) override { return number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return number(v); }
  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool string(string_t&) override { return scalar(); }
  bool binary(binary_t&) override { return scalar(); }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    return fail(fmt::format("byte {}: {}", position, e.what()));
  }

  const std::string& error() const { return error_; }
  std::size_t dim() const { return dim_; }
  bool have_vectors() const { return have_vectors_; }
  std::vector<std::string> take_words() { return std::move(words_); }
  std::vector<float> take_values() { return std::move(values_); }

 private:
  bool in_vector_list() const { return depth_ >= 2 && top_key_ == "vectors"; }
  bool enter() {
    ++depth_;
    return true;
  }
  bool leave() {
    --depth_;
    return true;
  }
  bool scalar() {
    return !in_vector_list() || depth_ != 3 || fail("a vector value is not a number");
  }
  bool number(double v) {
    if (!std::isfinite(v)) return fail("non-finite number");
    if (depth_ == 1 && top_key_ == "dimensions") {
      if (v < 1 || v > kMaxDim || v != std::floor(v)) return fail("bad `dimensions`");
      dim_ = static_cast<std::size_t>(v);
    } else if (depth_ == 3 && in_vector_list()) {
      row_.push_back(v);
    } else if (depth_ == 2 && in_vector_list()) {
      return fail("a word's vector must be a list of numbers");
    }
    return true;
  }
  bool fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
    return false;
  }

  const std::function<void(std::size_t)>& progress_;
  int depth_ = 0;
  std::string top_key_, word_, error_;
  std::size_t dim_ = 0;
  bool have_vectors_ = false;
  std::vector<double> row_;
  std::vector<std::string> words_;
  std::vector<float> values_;
  std::unordered_map<std::string, bool> seen_;
};

}  // namespace

WordVectors::WordVectors(std::size_t dim, std::vector<std::string> words, std::vector<float> values)
    : dim_(dim), words_(std::move(words)), values_(std::move(values)) {
  index_.reserve(words_.size());
  for (std::size_t i = 0; i < words_.size(); ++i)
    index_.emplace(words_[i], static_cast<std::uint32_t>(i));
}

const float* WordVectors::find(std::string_view word) const {
  const auto it = index_.find(std::string(word));
  return it == index_.end() ? nullptr : values_.data() + std::size_t{it->second} * dim_;
}

Result<WordVectors> import_wink_json(const std::filesystem::path& file,
                                     const std::function<void(std::size_t)>& progress) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return not_found_error(fmt::format("{}: cannot open", file.string()));
  WinkHandler handler(progress);
  const bool ok = nlohmann::json::sax_parse(in, &handler);
  if (!ok || !handler.error().empty()) {
    return data_loss_error(fmt::format(
        "{}: {}", file.string(), handler.error().empty() ? "malformed JSON" : handler.error()));
  }
  if (!handler.have_vectors() || handler.dim() == 0) {
    return data_loss_error(fmt::format("{}: no word vectors", file.string()));
  }
  auto words = handler.take_words();
  if (words.empty()) return data_loss_error(fmt::format("{}: no word vectors", file.string()));
  return WordVectors(handler.dim(), std::move(words), handler.take_values());
}

Status WordVectors::save(const std::filesystem::path& file) const {
  ByteWriter w;
  w.put_bytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>("PSWV"), 4));
  w.put_u16(kVersion);
  w.put_u16(0);
  w.put_u32(static_cast<std::uint32_t>(dim_));
  w.put_u32(static_cast<std::uint32_t>(words_.size()));
  for (const auto& word : words_) {
    w.put_u16(static_cast<std::uint16_t>(word.size()));
    w.put_bytes({reinterpret_cast<const std::uint8_t*>(word.data()), word.size()});
  }
  for (const float v : values_) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    w.put_u32(bits);
  }
  const auto bytes = w.take();
  return write_bytes_atomically(file, bytes);
}

Result<WordVectors> WordVectors::load(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  return parse(bytes, file);
}

Result<WordVectors> WordVectors::parse(std::span<const std::uint8_t> bytes,
                                       const std::filesystem::path& file) {
  ByteReader r(bytes);
  auto fail = [&](const std::string& what) {
    return data_loss_error(fmt::format("{}: {}", file.string(), what));
  };
  std::uint8_t magic[4];
  std::uint16_t version = 0, reserved = 0;
  std::uint32_t dim = 0, count = 0;
  if (!r.get_bytes(magic).ok() || std::memcmp(magic, "PSWV", 4) != 0)
    return fail("not a word-vector file (magic)");
  if (!r.get_u16(version).ok() || version != kVersion) return fail("unsupported version");
  if (!r.get_u16(reserved).ok() || !r.get_u32(dim).ok() || !r.get_u32(count).ok())
    return fail("truncated header");
  if (reserved != 0) return fail("reserved header field is not zero");
  if (dim == 0 || dim > kMaxDim || count == 0) return fail("bad dimension or count");
  // Each word needs at least 3 bytes of name and 4 * dim of vector: refuse a count the file
  // cannot hold before reserving anything (found by the fuzzer).
  if (std::uint64_t{count} * (3 + 4 * std::uint64_t{dim}) > r.remaining()) {
    return fail(fmt::format("{} words of dimension {} do not fit the file", count, dim));
  }
  std::vector<std::string> words;
  words.reserve(count);
  std::unordered_map<std::string_view, bool> seen;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint16_t len = 0;
    if (!r.get_u16(len).ok() || len == 0 || len > kMaxWord)
      return fail(fmt::format("word {}: bad length", i));
    std::string word(len, '\0');
    if (!r.get_bytes({reinterpret_cast<std::uint8_t*>(word.data()), len}).ok())
      return fail("truncated words");
    words.push_back(std::move(word));
  }
  for (const auto& word : words) {
    if (!seen.emplace(word, true).second) return fail("duplicate word `" + word + "`");
  }
  const std::size_t n = std::size_t{count} * dim;
  if (r.remaining() < n * 4) return fail("truncated vectors");
  std::vector<float> values(n);
  for (auto& v : values) {
    std::uint32_t bits = 0;
    (void)r.get_u32(bits);
    std::memcpy(&v, &bits, 4);
    if (!std::isfinite(v)) return fail("non-finite vector value");
  }
  if (!r.expect_end().ok()) return fail("trailing bytes");
  return WordVectors(dim, std::move(words), std::move(values));
}

std::filesystem::path default_cache_dir() {
  if (const char* c = std::getenv("PRIVSEARCH_CACHE"); c != nullptr && *c != '\0') return c;
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return std::filesystem::path(h) / ".cache" / "privsearch";
  }
  return "/tmp/privsearch-cache";
}

std::filesystem::path default_word_vectors_path() {
  return default_cache_dir() / "glove-6b-100d.pswv";
}

}  // namespace privsearch::index

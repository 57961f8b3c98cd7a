#include "index/word_vectors.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

#include <fmt/format.h>

#include "core/bytes.h"
#include "index/atomic_file.h"

namespace privsearch::index {

namespace {

constexpr std::uint16_t kVersion = 1;
constexpr std::size_t kMaxWord = 256;
constexpr std::size_t kMaxDim = 4096;

// A forward-only reader over a FILE* with a 1 MiB buffer and the byte offset for messages.
class Scanner {
 public:
  Scanner(std::FILE* f, std::filesystem::path name) : f_(f), name_(std::move(name)), buf_(1 << 20) {}
  // -1 at the end of the file.
  int peek() {
    if (pos_ == len_ && !fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  int get() {
    const int c = peek();
    if (c >= 0) {
      ++pos_;
      ++offset_;
    }
    return c;
  }
  void skip_space() {
    while (true) {
      const int c = peek();
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      get();
    }
  }
  Status expect(char want) {
    skip_space();
    const int c = get();
    if (c != want) {
      return error(c < 0 ? fmt::format("unexpected end of file, expected '{}'", want)
                         : fmt::format("expected '{}', found '{}'", want, static_cast<char>(c)));
    }
    return Status();
  }
  // A JSON string (after skipping space); escapes \" \\ \/ \b \f \n \r \t and \uXXXX (BMP, as UTF-8).
  Status string(std::string& out) {
    PRIVSEARCH_RETURN_IF_ERROR(expect('"'));
    out.clear();
    while (true) {
      int c = get();
      if (c < 0) return error("unexpected end of file inside a string");
      if (c == '"') return Status();
      if (c == '\\') {
        c = get();
        switch (c) {
          case '"': case '\\': case '/': out += static_cast<char>(c); break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            unsigned cp = 0;
            for (int i = 0; i < 4; ++i) {
              const int h = get();
              const int v = h >= '0' && h <= '9' ? h - '0'
                            : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10 : -1;
              if (v < 0) return error("bad \\u escape");
              cp = cp * 16 + static_cast<unsigned>(v);
            }
            if (cp < 0x80) {
              out += static_cast<char>(cp);
            } else if (cp < 0x800) {
              out += static_cast<char>(0xc0 | (cp >> 6));
              out += static_cast<char>(0x80 | (cp & 0x3f));
            } else {
              out += static_cast<char>(0xe0 | (cp >> 12));
              out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
              out += static_cast<char>(0x80 | (cp & 0x3f));
            }
            break;
          }
          default: return error("bad escape in a string");
        }
      } else {
        out += static_cast<char>(c);
      }
      if (out.size() > 4 * kMaxWord) return error("string too long");
    }
  }
  Status number(double& out) {
    skip_space();
    char tok[64];
    std::size_t n = 0;
    while (n < sizeof(tok)) {
      const int c = peek();
      if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) break;
      tok[n++] = static_cast<char>(get());
    }
    const auto r = std::from_chars(tok, tok + n, out);
    if (n == 0 || r.ec != std::errc() || r.ptr != tok + n || !std::isfinite(out)) {
      return error(fmt::format("bad number `{}`", std::string_view(tok, n)));
    }
    return Status();
  }
  // Skips one JSON value (string, number, array, object, literal).
  Status skip_value() {
    skip_space();
    const int c = peek();
    if (c == '"') {
      std::string s;
      return string(s);
    }
    if (c == '[' || c == '{') {
      const char close = c == '[' ? ']' : '}';
      get();
      skip_space();
      if (peek() == close) {
        get();
        return Status();
      }
      while (true) {
        if (close == '}') {
          std::string key;
          PRIVSEARCH_RETURN_IF_ERROR(string(key));
          PRIVSEARCH_RETURN_IF_ERROR(expect(':'));
        }
        PRIVSEARCH_RETURN_IF_ERROR(skip_value());
        skip_space();
        const int d = get();
        if (d == close) return Status();
        if (d != ',') return error("expected ',' in a list");
      }
    }
    while (true) {  // number or literal
      const int d = peek();
      if (d < 0 || d == ',' || d == '}' || d == ']' || d == ' ' || d == '\n') return Status();
      get();
    }
  }
  Status error(const std::string& what) const {
    return data_loss_error(fmt::format("{}: byte {}: {}", name_.string(), offset_, what));
  }
  std::uint64_t offset() const { return offset_; }

 private:
  bool fill() {
    len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
    pos_ = 0;
    return len_ > 0;
  }
  std::FILE* f_;
  std::filesystem::path name_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, len_ = 0;
  std::uint64_t offset_ = 0;
};

}  // namespace

WordVectors::WordVectors(std::size_t dim, std::vector<std::string> words, std::vector<float> values)
    : dim_(dim), words_(std::move(words)), values_(std::move(values)) {
  index_.reserve(words_.size());
  for (std::size_t i = 0; i < words_.size(); ++i) index_.emplace(words_[i], static_cast<std::uint32_t>(i));
}

const float* WordVectors::find(std::string_view word) const {
  const auto it = index_.find(std::string(word));
  return it == index_.end() ? nullptr : values_.data() + std::size_t{it->second} * dim_;
}

Result<WordVectors> import_wink_json(const std::filesystem::path& file,
                                     const std::function<void(std::uint64_t)>& progress) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(file.c_str(), "rb"), &std::fclose);
  if (!f) return not_found_error(fmt::format("{}: cannot open", file.string()));
  Scanner s(f.get(), file);
  PRIVSEARCH_RETURN_IF_ERROR(s.expect('{'));
  std::size_t dim = 0;
  std::vector<std::string> words;
  std::vector<float> values;
  std::unordered_map<std::string, bool> seen;
  bool have_vectors = false;
  while (true) {
    std::string key;
    PRIVSEARCH_RETURN_IF_ERROR(s.string(key));
    PRIVSEARCH_RETURN_IF_ERROR(s.expect(':'));
    if (key == "dimensions") {
      double d = 0;
      PRIVSEARCH_RETURN_IF_ERROR(s.number(d));
      if (d < 1 || d > kMaxDim || d != std::floor(d)) return s.error("bad `dimensions`");
      dim = static_cast<std::size_t>(d);
    } else if (key == "vectors") {
      if (dim == 0) return s.error("`vectors` before `dimensions`");
      have_vectors = true;
      PRIVSEARCH_RETURN_IF_ERROR(s.expect('{'));
      s.skip_space();
      if (s.peek() == '}') {
        s.get();
      } else {
        std::string word;
        std::vector<double> row;
        while (true) {
          PRIVSEARCH_RETURN_IF_ERROR(s.string(word));
          if (word.empty() || word.size() > kMaxWord) return s.error("word empty or longer than 256 bytes");
          if (!seen.emplace(word, true).second) return s.error("duplicate word `" + word + "`");
          PRIVSEARCH_RETURN_IF_ERROR(s.expect(':'));
          PRIVSEARCH_RETURN_IF_ERROR(s.expect('['));
          row.clear();
          while (true) {
            double v = 0;
            PRIVSEARCH_RETURN_IF_ERROR(s.number(v));
            row.push_back(v);
            s.skip_space();
            const int c = s.get();
            if (c == ']') break;
            if (c != ',') return s.error("expected ',' or ']' in the vector of `" + word + "`");
          }
          if (row.size() < dim) {
            return s.error(fmt::format("`{}` has {} values, fewer than the {} dimensions", word,
                                       row.size(), dim));
          }
          words.push_back(word);
          for (std::size_t j = 0; j < dim; ++j) values.push_back(static_cast<float>(row[j]));
          if (progress && words.size() % 50000 == 0) progress(s.offset());
          s.skip_space();
          const int c = s.get();
          if (c == '}') break;
          if (c != ',') return s.error("expected ',' or '}' between words");
        }
      }
    } else {
      PRIVSEARCH_RETURN_IF_ERROR(s.skip_value());
    }
    s.skip_space();
    const int c = s.get();
    if (c == '}') break;
    if (c != ',') return s.error(c < 0 ? "unexpected end of file" : "expected ',' between keys");
  }
  if (!have_vectors || words.empty()) return s.error("no word vectors");
  return WordVectors(dim, std::move(words), std::move(values));
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
  ByteReader r(bytes);
  auto fail = [&](const std::string& what) {
    return data_loss_error(fmt::format("{}: {}", file.string(), what));
  };
  std::uint8_t magic[4];
  std::uint16_t version = 0, reserved = 0;
  std::uint32_t dim = 0, count = 0;
  if (!r.get_bytes(magic).ok() || std::memcmp(magic, "PSWV", 4) != 0) return fail("not a word-vector file (magic)");
  if (!r.get_u16(version).ok() || version != kVersion) return fail("unsupported version");
  if (!r.get_u16(reserved).ok() || !r.get_u32(dim).ok() || !r.get_u32(count).ok()) return fail("truncated header");
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
    if (!r.get_u16(len).ok() || len == 0 || len > kMaxWord) return fail(fmt::format("word {}: bad length", i));
    std::string word(len, '\0');
    if (!r.get_bytes({reinterpret_cast<std::uint8_t*>(word.data()), len}).ok()) return fail("truncated words");
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

std::filesystem::path default_word_vectors_path() {
  std::filesystem::path dir;
  if (const char* c = std::getenv("PRIVSEARCH_CACHE"); c != nullptr && *c != '\0') {
    dir = c;
  } else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    dir = std::filesystem::path(h) / ".cache" / "privsearch";
  } else {
    dir = "/tmp/privsearch-cache";
  }
  return dir / "glove-6b-100d.pswv";
}

}  // namespace privsearch::index

#include "index/encoders/lexical_encoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/bytes.h"
#include "core/csprng.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::index {

LexicalEncoder LexicalEncoder::fit(const std::vector<std::string>& documents,
                                   const LexicalEncoderConfig& config) {
  LexicalEncoder e;
  e.config_ = config;
  e.bm25_ = Bm25Model::fit(documents);
  return e;
}

std::vector<float> LexicalEncoder::project(const SparseVector& v) const {
  std::vector<float> out(config_.dim, 0.0f);
  Seed seed{};
  for (int i = 0; i < 8; ++i)
    seed[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(config_.seed >> (8 * i));
  const float scale = 1.0f / std::sqrt(static_cast<float>(config_.dim));
  std::vector<std::uint8_t> bits((config_.dim + 7) / 8);
  for (const auto& [term, w] : v) {
    // The term's sign row: stream `term` of the seeded generator.
    Prng prng = Prng::from_seed(seed, term);
    prng.fill(bits);
    for (std::size_t j = 0; j < config_.dim; ++j) {
      const float sign = ((bits[j >> 3] >> (j & 7)) & 1) != 0 ? 1.0f : -1.0f;
      out[j] += sign * w * scale;
    }
  }
  return out;
}

std::vector<float> LexicalEncoder::encode_document(std::string_view text) const {
  SparseVector d = bm25_.weigh_document(text);
  for (auto& [t, w] : d) w = static_cast<float>(w / std::pow(bm25_.idf(t), config_.alpha));
  if (d.size() > config_.doc_terms) {
    std::sort(d.begin(), d.end(), [](const auto& a, const auto& b) {
      return a.second > b.second || (a.second == b.second && a.first < b.first);
    });
    d.resize(config_.doc_terms);
  }
  return project(d);
}

std::vector<float> LexicalEncoder::encode_query(std::string_view text) const {
  SparseVector q = bm25_.query_vector(text);
  for (auto& [t, w] : q) w = static_cast<float>(w * std::pow(bm25_.idf(t), config_.alpha));
  return project(q);
}

std::string LexicalEncoder::id() const {
  return fmt::format("lexical-jl-v1/{}/{}/{:.2f}/{}/{}", config_.dim, config_.doc_terms,
                     config_.alpha, config_.seed, bm25_.vocabulary_size());
}

namespace {
constexpr std::uint8_t kEncoderMagic[4] = {'P', 'S', 'L', 'E'};
constexpr std::uint16_t kEncoderVersion = 1;
}  // namespace

Status LexicalEncoder::save(const std::filesystem::path& file) const {
  ByteWriter w;
  w.put_bytes(kEncoderMagic);
  w.put_u16(kEncoderVersion);
  w.put_u32(static_cast<std::uint32_t>(config_.dim));
  w.put_u32(static_cast<std::uint32_t>(config_.doc_terms));
  w.put_f64(config_.alpha);
  w.put_u64(config_.seed);
  bm25_.save(w);
  return write_bytes_atomically(file, w.bytes());
}

Result<LexicalEncoder> LexicalEncoder::load(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  ByteReader r(bytes);
  auto bad = [&](const std::string& what) {
    return Status(StatusCode::kDataLoss, "`" + file.string() + "`: " + what);
  };
  std::uint8_t magic[4];
  std::uint16_t version = 0;
  std::uint32_t dim = 0, doc_terms = 0;
  LexicalEncoder e;
  if (!r.get_bytes(magic).ok() || !std::equal(magic, magic + 4, kEncoderMagic)) {
    return bad("not a lexical encoder artifact");
  }
  if (!r.get_u16(version).ok() || version != kEncoderVersion) {
    return bad("unsupported encoder artifact version");
  }
  if (!r.get_u32(dim).ok() || !r.get_u32(doc_terms).ok() || !r.get_f64(e.config_.alpha).ok() ||
      !r.get_u64(e.config_.seed).ok()) {
    return bad("truncated encoder header");
  }
  if (dim == 0 || dim > 65536 || doc_terms == 0 || e.config_.alpha < 0 || e.config_.alpha > 4) {
    return bad("encoder settings out of range");
  }
  e.config_.dim = dim;
  e.config_.doc_terms = doc_terms;
  auto bm25 = Bm25Model::load(r);
  if (!bm25.ok()) return bad(bm25.status().message());
  e.bm25_ = std::move(bm25).value();
  if (!r.expect_end().ok()) return bad("trailing bytes");
  return e;
}

EncodedCorpus fit_and_encode(const std::vector<Document>& docs,
                             const LexicalEncoderConfig& config) {
  std::vector<std::string> texts;
  texts.reserve(docs.size());
  for (const auto& d : docs) texts.push_back(d.title + " " + d.text);
  EncodedCorpus out{LexicalEncoder::fit(texts, config), {}};
  out.vectors.rows = docs.size();
  out.vectors.cols = out.encoder.dim();
  out.vectors.data.reserve(out.vectors.rows * out.vectors.cols);
  for (const auto& t : texts) {
    const auto v = out.encoder.encode_document(t);
    out.vectors.data.insert(out.vectors.data.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace privsearch::index

#include "index/encoders/glove_encoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/bytes.h"
#include "index/artifacts/atomic_file.h"

namespace privsearch::index {

namespace {
constexpr double kSifA = 1e-3;
constexpr std::uint8_t kMagic[4] = {'P', 'S', 'G', 'E'};
constexpr std::uint16_t kArtifactVersion = 1;

std::vector<double> weighted_sum(const std::vector<std::string>& words, const WordVectors& v,
                                 const std::function<double(const std::string&)>& weight) {
  std::vector<double> out(v.dim(), 0.0);
  for (const auto& w : words) {
    const float* x = v.find(w);
    if (x == nullptr) continue;
    const double a = weight(w);
    for (std::size_t j = 0; j < out.size(); ++j) out[j] += a * x[j];
  }
  return out;
}
}  // namespace

std::vector<std::string> tokenize_words(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      cur += static_cast<char>(c);
    } else if (c >= 'A' && c <= 'Z') {
      cur += static_cast<char>(c - 'A' + 'a');
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

Result<GloveEncoder> GloveEncoder::fit(const std::vector<std::string>& documents,
                                       std::shared_ptr<const WordVectors> shared,
                                       GloveWeighting weighting, const Sha256Digest& digest) {
  if (documents.empty() || shared == nullptr || shared->size() == 0) {
    return invalid_argument_error("the word-vector encoder needs documents and word vectors");
  }
  GloveEncoder e;
  e.vectors_ = std::move(shared);
  e.vectors_digest_ = digest;
  e.weighting_ = weighting;
  const WordVectors& vectors = *e.vectors_;
  std::unordered_map<std::string, double> count, df;
  double total = 0;
  std::vector<std::vector<std::string>> tokens;
  tokens.reserve(documents.size());
  for (const auto& d : documents) {
    tokens.push_back(tokenize_words(d));
    std::unordered_map<std::string, bool> in_doc;
    for (const auto& w : tokens.back()) {
      count[w] += 1;
      total += 1;
      if (in_doc.emplace(w, true).second) df[w] += 1;
    }
  }
  const double n = static_cast<double>(documents.size());
  if (weighting == GloveWeighting::kIdf) {
    for (const auto& [w, f] : df) e.weights_[w] = std::log(1.0 + (n - f + 0.5) / (f + 0.5));
    e.unseen_weight_ = std::log(1.0 + (n + 0.5) / 0.5);
    return e;
  }
  for (const auto& [w, c] : count) e.weights_[w] = kSifA / (kSifA + c / std::max(total, 1.0));
  e.unseen_weight_ = 1.0;
  // First principal component of the (uncentred) document embeddings, by power iteration on
  // their 100 x 100 second-moment matrix.
  const std::size_t dim = vectors.dim();
  std::vector<double> cov(dim * dim, 0.0);
  for (const auto& t : tokens) {
    const auto x = weighted_sum(t, vectors, [&](const std::string& w) { return e.weight(w); });
    for (std::size_t i = 0; i < dim; ++i) {
      for (std::size_t j = 0; j < dim; ++j) cov[i * dim + j] += x[i] * x[j];
    }
  }
  std::vector<double> u(dim, 1.0 / std::sqrt(static_cast<double>(dim))), next(dim);
  for (int it = 0; it < 100; ++it) {
    double norm = 0;
    for (std::size_t i = 0; i < dim; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < dim; ++j) s += cov[i * dim + j] * u[j];
      next[i] = s;
      norm += s * s;
    }
    norm = std::sqrt(norm);
    if (norm == 0) break;
    for (std::size_t i = 0; i < dim; ++i) u[i] = next[i] / norm;
  }
  e.principal_ = u;
  return e;
}

double GloveEncoder::weight(const std::string& word) const {
  const auto it = weights_.find(word);
  return it == weights_.end() ? unseen_weight_ : it->second;
}

std::vector<float> GloveEncoder::encode(std::string_view text) const {
  auto x = weighted_sum(tokenize_words(text), *vectors_,
                        [&](const std::string& w) { return weight(w); });
  if (!principal_.empty()) {
    double dot = 0;
    for (std::size_t j = 0; j < x.size(); ++j) dot += x[j] * principal_[j];
    for (std::size_t j = 0; j < x.size(); ++j) x[j] -= dot * principal_[j];
  }
  double norm = 0;
  for (const double v : x) norm += v * v;
  norm = std::sqrt(norm);
  std::vector<float> out(x.size(), 0.0f);
  if (norm > 0) {
    for (std::size_t j = 0; j < x.size(); ++j) out[j] = static_cast<float>(x[j] / norm);
  }
  return out;
}

std::string GloveEncoder::id() const {
  return fmt::format("glove-{}-v1/{}/{}", weighting_ == GloveWeighting::kIdf ? "idf" : "sif", dim(),
                     weights_.size());
}

Result<LoadedWordVectors> load_word_vectors(const std::filesystem::path& file) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  LoadedWordVectors out;
  out.digest = sha256(bytes);
  PRIVSEARCH_ASSIGN_OR_RETURN(auto wv, WordVectors::parse(bytes, file));
  out.vectors = std::make_shared<const WordVectors>(std::move(wv));
  return out;
}

Result<GloveEncodedCorpus> fit_and_encode_glove(const std::vector<Document>& docs,
                                                const std::filesystem::path& word_vectors,
                                                GloveWeighting weighting) {
  if (!std::filesystem::exists(word_vectors)) {
    return not_found_error("word vectors " + word_vectors.string() +
                           " not found: run `make glove` (scripts/fetch_glove.sh)");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto loaded, load_word_vectors(word_vectors));
  std::vector<std::string> texts;
  texts.reserve(docs.size());
  for (const auto& d : docs) texts.push_back(d.title + " " + d.text);
  PRIVSEARCH_ASSIGN_OR_RETURN(auto enc,
                              GloveEncoder::fit(texts, loaded.vectors, weighting, loaded.digest));
  Matrix m;
  m.rows = texts.size();
  m.cols = enc.dim();
  m.data.reserve(m.rows * m.cols);
  for (const auto& t : texts) {
    const auto v = enc.encode(t);
    m.data.insert(m.data.end(), v.begin(), v.end());
  }
  return GloveEncodedCorpus{std::move(enc), std::move(m)};
}

Status GloveEncoder::save(const std::filesystem::path& file) const {
  ByteWriter w;
  w.put_bytes(std::span<const std::uint8_t>(kMagic, 4));
  w.put_u16(kArtifactVersion);
  w.put_u8(weighting_ == GloveWeighting::kIdf ? 1 : 2);
  w.put_u32(static_cast<std::uint32_t>(dim()));
  w.put_f64(unseen_weight_);
  std::vector<std::pair<std::string, double>> sorted(weights_.begin(), weights_.end());
  std::sort(sorted.begin(), sorted.end());  // deterministic bytes
  w.put_u32(static_cast<std::uint32_t>(sorted.size()));
  for (const auto& [word, weight] : sorted) {
    w.put_string(word);
    w.put_f64(weight);
  }
  w.put_u32(static_cast<std::uint32_t>(principal_.size()));
  for (const double v : principal_) w.put_f64(v);
  w.put_bytes(vectors_digest_);
  return write_bytes_atomically(file, w.bytes());
}

Result<GloveEncoder> GloveEncoder::load(const std::filesystem::path& file,
                                        const std::filesystem::path& word_vectors) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_file_bytes(file));
  ByteReader r(bytes);
  auto bad = [&](const std::string& what) {
    return data_loss_error("`" + file.string() + "`: " + what);
  };
  std::uint8_t magic[4];
  std::uint16_t version = 0;
  std::uint8_t weighting = 0;
  std::uint32_t dim = 0, count = 0, principal = 0;
  GloveEncoder e;
  if (!r.get_bytes(magic).ok() || !std::equal(magic, magic + 4, kMagic)) {
    return bad("not a word-vector encoder artifact");
  }
  if (!r.get_u16(version).ok() || version != kArtifactVersion) return bad("unsupported version");
  if (!r.get_u8(weighting).ok() || (weighting != 1 && weighting != 2)) return bad("bad weighting");
  e.weighting_ = weighting == 1 ? GloveWeighting::kIdf : GloveWeighting::kSif;
  if (!r.get_u32(dim).ok() || dim == 0 || dim > 4096) return bad("bad dimension");
  if (!r.get_f64(e.unseen_weight_).ok() || e.unseen_weight_ < 0) return bad("bad unseen weight");
  if (!r.get_u32(count).ok() || count > (1u << 24)) return bad("bad vocabulary size");
  for (std::uint32_t i = 0; i < count; ++i) {
    std::string word;
    double weight = 0;
    if (!r.get_string(word, 256).ok() || !r.get_f64(weight).ok() || weight < 0) {
      return bad("truncated or invalid vocabulary");
    }
    if (!e.weights_.emplace(std::move(word), weight).second) return bad("duplicate word");
  }
  if (!r.get_u32(principal).ok() || (principal != 0 && principal != dim)) {
    return bad("bad principal component");
  }
  e.principal_.resize(principal);
  for (auto& v : e.principal_) {
    if (!r.get_f64(v).ok()) return bad("truncated principal component");
  }
  if (!r.get_bytes(e.vectors_digest_).ok()) return bad("truncated word-vector digest");
  if (!r.expect_end().ok()) return bad("trailing bytes");
  if (!std::filesystem::exists(word_vectors)) {
    return not_found_error("this index's encoder needs the GloVe word vectors at " +
                           word_vectors.string() + ": run `make glove` (or set PRIVSEARCH_CACHE)");
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto loaded, load_word_vectors(word_vectors));
  if (loaded.digest != e.vectors_digest_) {
    return failed_precondition_error(
        "word vectors " + word_vectors.string() +
        " differ from those the index was built with (SHA-256 mismatch); run `make glove`");
  }
  if (loaded.vectors->dim() != dim) return bad("word-vector dimension differs from the artifact");
  e.vectors_ = loaded.vectors;
  return e;
}

}  // namespace privsearch::index

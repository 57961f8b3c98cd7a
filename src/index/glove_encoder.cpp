#include "index/glove_encoder.h"

#include <cmath>
#include <functional>

#include <fmt/format.h>

namespace privsearch::index {

namespace {
constexpr double kSifA = 1e-3;

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
                                       const WordVectors& vectors, GloveWeighting weighting) {
  if (documents.empty() || vectors.size() == 0) {
    return invalid_argument_error("the word-vector encoder needs documents and word vectors");
  }
  GloveEncoder e;
  e.vectors_ = &vectors;
  e.weighting_ = weighting;
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
  return fmt::format("glove-{}-v1/{}/{}", weighting_ == GloveWeighting::kIdf ? "idf" : "sif",
                     dim(), weights_.size());
}

}  // namespace privsearch::index

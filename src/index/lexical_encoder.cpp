#include "index/lexical_encoder.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/csprng.h"

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
  for (int i = 0; i < 8; ++i) seed[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(config_.seed >> (8 * i));
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

}  // namespace privsearch::index

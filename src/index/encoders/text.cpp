#include "index/encoders/text.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

namespace privsearch::index {

namespace {

const std::unordered_set<std::string_view>& stopwords() {
  static const std::unordered_set<std::string_view> words = {
      "a",     "an",    "and",  "are",   "as",   "at",    "be",    "but",     "by",   "for",
      "if",    "in",    "into", "is",    "it",   "no",    "not",   "of",      "on",   "or",
      "such",  "that",  "the",  "their", "then", "there", "these", "they",    "this", "to",
      "was",   "will",  "with", "we",    "were", "which", "from",  "has",     "have", "had",
      "been",  "can",   "its",  "than",  "also", "our",   "may",   "between", "both", "during",
      "after", "all",   "any",  "more",  "most", "other", "some",  "only",    "over", "under",
      "when",  "where", "who",  "whom",  "why",  "how",   "what",  "do",      "does", "did"};
  return words;
}

// Light English stemmer: plural and common verbal suffixes.
std::string stem(std::string w) {
  auto ends = [&](std::string_view s) {
    return w.size() > s.size() + 2 && w.compare(w.size() - s.size(), s.size(), s) == 0;
  };
  if (ends("ies")) {
    w.replace(w.size() - 3, 3, "y");
  } else if (ends("sses")) {
    w.erase(w.size() - 2);
  } else if (ends("s") && !ends("ss") && !ends("us") && !ends("is")) {
    w.pop_back();
  }
  if (ends("ing")) {
    w.erase(w.size() - 3);
  } else if (ends("ed")) {
    w.erase(w.size() - 2);
  }
  return w;
}

}  // namespace

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) {
      if (stopwords().count(cur) == 0) out.push_back(stem(cur));
      cur.clear();
    }
  };
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || c >= 0x80) {
      cur.push_back(static_cast<char>(std::tolower(c)));
    } else {
      flush();
    }
  }
  flush();
  return out;
}

Bm25Model Bm25Model::fit(const std::vector<std::string>& documents, double k1, double b) {
  Bm25Model m;
  std::vector<std::map<std::uint32_t, std::uint32_t>> counts(documents.size());
  std::vector<std::uint32_t> df;
  std::vector<std::size_t> lengths(documents.size());
  for (std::size_t i = 0; i < documents.size(); ++i) {
    const auto tokens = tokenize(documents[i]);
    lengths[i] = tokens.size();
    for (const auto& t : tokens) {
      auto [it, inserted] = m.vocab_.emplace(t, static_cast<std::uint32_t>(m.vocab_.size()));
      if (inserted) df.push_back(0);
      if (counts[i][it->second]++ == 0) ++df[it->second];
    }
  }
  const double n = static_cast<double>(documents.size());
  double avgdl = 0;
  for (auto l : lengths) avgdl += static_cast<double>(l) / n;
  m.k1_ = k1;
  m.b_ = b;
  m.avgdl_ = avgdl > 0 ? avgdl : 1;
  m.idf_.resize(df.size());
  for (std::size_t t = 0; t < df.size(); ++t) {
    m.idf_[t] = std::log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5));
  }
  m.doc_vectors_.resize(documents.size());
  for (std::size_t i = 0; i < documents.size(); ++i) {
    const double norm = k1 * (1 - b + b * static_cast<double>(lengths[i]) / avgdl);
    for (const auto& [t, tf] : counts[i]) {
      const double w = m.idf_[t] * tf * (k1 + 1) / (tf + norm);
      m.doc_vectors_[i].push_back({t, static_cast<float>(w)});
    }
  }
  return m;
}

void Bm25Model::save(ByteWriter& w) const {
  std::vector<const std::string*> terms(vocab_.size());
  for (const auto& [term, id] : vocab_) terms[id] = &term;
  w.put_f64(k1_);
  w.put_f64(b_);
  w.put_f64(avgdl_);
  w.put_u32(static_cast<std::uint32_t>(terms.size()));
  for (std::size_t t = 0; t < terms.size(); ++t) {
    w.put_string(*terms[t]);
    w.put_f64(idf_[t]);
  }
}

Result<Bm25Model> Bm25Model::load(ByteReader& r) {
  constexpr std::uint32_t kMaxVocabulary = 1u << 24;
  constexpr std::size_t kMaxTermBytes = 256;
  Bm25Model m;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(m.k1_));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(m.b_));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(m.avgdl_));
  if (m.k1_ < 0 || m.b_ < 0 || m.b_ > 1 || m.avgdl_ <= 0) {
    return Status(StatusCode::kDataLoss, "BM25 model: statistics out of range");
  }
  std::uint32_t n = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(n));
  if (n > kMaxVocabulary) return Status(StatusCode::kDataLoss, "BM25 model: vocabulary too large");
  // Each term takes at least 12 bytes (u32 length + f64 idf): check before reserving.
  if (std::size_t{n} * 12 > r.remaining()) {
    return Status(StatusCode::kDataLoss, "BM25 model: truncated vocabulary");
  }
  m.idf_.resize(n);
  m.vocab_.reserve(n);
  for (std::uint32_t t = 0; t < n; ++t) {
    std::string term;
    PRIVSEARCH_RETURN_IF_ERROR(r.get_string(term, kMaxTermBytes));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_f64(m.idf_[t]));
    if (m.idf_[t] < 0) return Status(StatusCode::kDataLoss, "BM25 model: negative idf");
    if (!m.vocab_.emplace(std::move(term), t).second) {
      return Status(StatusCode::kDataLoss, "BM25 model: duplicate term");
    }
  }
  return m;
}

SparseVector Bm25Model::query_vector(std::string_view query) const {
  std::map<std::uint32_t, float> counts;
  for (const auto& t : tokenize(query)) {
    const auto it = vocab_.find(t);
    if (it != vocab_.end()) counts[it->second] += 1.0f;
  }
  return SparseVector(counts.begin(), counts.end());
}

SparseVector Bm25Model::weigh_document(std::string_view text) const {
  std::map<std::uint32_t, std::uint32_t> counts;
  std::size_t length = 0;
  for (const auto& t : tokenize(text)) {
    ++length;
    const auto it = vocab_.find(t);
    if (it != vocab_.end()) ++counts[it->second];
  }
  const double norm = k1_ * (1 - b_ + b_ * static_cast<double>(length) / avgdl_);
  SparseVector out;
  for (const auto& [t, tf] : counts) {
    out.push_back({t, static_cast<float>(idf_[t] * tf * (k1_ + 1) / (tf + norm))});
  }
  return out;
}

std::int64_t Bm25Model::term_id(const std::string& term) const {
  const auto it = vocab_.find(term);
  return it == vocab_.end() ? -1 : static_cast<std::int64_t>(it->second);
}

double Bm25Model::dot(const SparseVector& a, const SparseVector& b) {
  double s = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].first == b[j].first) {
      s += static_cast<double>(a[i].second) * b[j].second;
      ++i;
      ++j;
    } else if (a[i].first < b[j].first) {
      ++i;
    } else {
      ++j;
    }
  }
  return s;
}

}  // namespace privsearch::index

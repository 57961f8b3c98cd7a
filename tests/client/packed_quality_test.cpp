// The packed kernel (the default preset, packed-n4096) on real collections: Cranfield and SciFact
// indexed with the built-in encoder at d' = 672, every judged query through SearchClient and an
// in-process provider over TLS, K = 100. The decrypted candidate scores must give the plaintext
// rerank's top 10 (the same candidates scored against the exact rows) for at least 99% of the
// queries and the same nDCG@10, within the stated error relative to the store's row-norm bound.
// The projected rows of these indexes reach norm ~20, far from the unit rows of the unit tests.
#include <gtest/gtest.h>

#include <cmath>

#include "ckks/param_sets.h"
#include "client/search_client.h"
#include "eval/metrics.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/exact_store.h"
#include "index/build.h"
#include "index/encoders/beir.h"
#include "index/encoders/lexical_encoder.h"
#include "protocol/provider_core.h"
#include "testing/tiny_collection.h"
#include "testing/tls_test_server.h"

namespace privsearch::client {
namespace {

const std::filesystem::path kData = PRIVSEARCH_SHARED_DATA;

struct Quality {
  std::size_t queries = 0, same_top10 = 0;
  double ndcg_encrypted = 0, ndcg_plain = 0, max_relative_error = 0;
};

std::vector<std::string> top10_ids(const std::vector<std::uint32_t>& cands,
                                   const std::vector<double>& scores, const index::Collection& c) {
  std::vector<std::string> out;
  for (const auto i : eval::top_indices(scores, 10)) out.push_back(c.corpus[cands[i]].id);
  return out;
}

Quality run_collection(const std::string& name) {
  testing::Collection tmp{"packed-quality-" + name};
  index::BuildOptions o;
  o.collection = kData / name;
  o.out = tmp.dir / "index";
  const auto manifest = *index::build_index(o, nullptr);
  const auto collection = *index::load_collection(o.collection);
  const auto store = *index::ExactStore::open(o.out / "exact.store");
  const auto params = *ckks::Params::create(*ckks::preset_literal(ckks::kDefaultServicePreset));
  protocol::ProviderConfig config(params);
  config.params_name = params.name();
  config.artifact_version = manifest.version_id;
  const auto core = *protocol::ProviderCore::create(std::move(config), &store);
  testing::TlsTestServer tls;
  tls.start(*core);
  auto sc = *SearchClient::open(o.out, tls.transport());
  const auto encoder = *index::LexicalEncoder::load(o.out / "encoder.bin");
  const auto proj = *index::load_projection(o.out / "projection.bin");
  SearchOptions so;
  so.candidates = 100;
  Quality q;
  for (const auto& query : collection.queries) {
    auto r = sc->search(Query::text(query.text), so);
    if (!r.ok()) continue;  // no known term: neither rung ranks anything
    // The plaintext rerank: the same candidates against the exact rows, unit query.
    std::vector<double> plain(r->candidates.size());
    auto z = proj.project_query(encoder.encode_query(query.text));
    double norm = 0;
    for (const float v : z) norm += static_cast<double>(v) * v;
    for (std::size_t i = 0; i < r->candidates.size(); ++i) {
      for (std::size_t j = 0; j < z.size(); ++j) {
        plain[i] += static_cast<double>(z[j]) * store.row(r->candidates[i])[j] / std::sqrt(norm);
      }
      q.max_relative_error = std::max(
          q.max_relative_error, std::abs(plain[i] - r->candidate_scores[i]) / store.max_row_norm());
    }
    const auto& judged = collection.qrels.at(query.id);
    const auto enc = top10_ids(r->candidates, r->candidate_scores, collection);
    const auto ref = top10_ids(r->candidates, plain, collection);
    q.same_top10 += enc == ref ? 1 : 0;
    q.ndcg_encrypted += eval::ndcg_at(enc, judged, 10);
    q.ndcg_plain += eval::ndcg_at(ref, judged, 10);
    ++q.queries;
  }
  tls.stop();
  return q;
}

void expect_quality(const std::string& name, std::size_t min_queries) {
  const auto q = run_collection(name);
  ASSERT_GE(q.queries, min_queries) << name;
  const double n = static_cast<double>(q.queries);
  EXPECT_GE(static_cast<double>(q.same_top10), 0.99 * n) << name;
  EXPECT_NEAR(q.ndcg_encrypted / n, q.ndcg_plain / n, 0.002) << name;
  EXPECT_LT(q.max_relative_error, 1e-5) << name;
  std::fprintf(stderr, "%s: %zu queries, identical top-10 %zu, nDCG@10 %.4f = %.4f, max err %.2e\n",
               name.c_str(), q.queries, q.same_top10, q.ndcg_encrypted / n, q.ndcg_plain / n,
               q.max_relative_error);
}

TEST(PackedQuality, CranfieldTop10AndNdcgEqualThePlaintextRerank) {
  expect_quality("cranfield", 200);
}
TEST(PackedQuality, SciFactTop10AndNdcgEqualThePlaintextRerank) { expect_quality("scifact", 280); }

}  // namespace
}  // namespace privsearch::client

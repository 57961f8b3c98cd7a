// Fuzz target: the access-private scoring decoders and the provider's PrivateScore handling.
// Input: one selector byte, then the body:
//   0 scoring layout file, 1 scoring matrix file, 2 scoring hint file: an accepted file
//     re-serializes byte-identically;
//   3 a PrivateScoreRequest (protobuf) through ProviderCore::private_score against a small
//     matrix: an answer of exactly m x R entries, or a refusal with a named code;
//   4 a provider answer (raw bytes) decoded by the client for a fixed 2-cluster query: never a
//     crash; of the right size it decodes to one score per placed document.

#include <memory>
#include <string>

#include "core/check.h"
#include "fuzz_common.h"
#include "fuzz_scoring_common.h"
#include "index/artifacts/exact_store.h"
#include "protocol/provider_core.h"
#include "scoring/client/private_query.h"
#include "scoring/layout.h"

namespace {

using namespace privsearch;

const scoring::ScoringArtifacts& artifacts() {
  static const scoring::ScoringArtifacts a = fuzz::small_scoring_artifacts();
  return a;
}

protocol::ProviderCore& core() {
  static const std::unique_ptr<index::ExactStore> store = fuzz::small_exact_store(
      4, 5, [](std::size_t) { return 0.25f; }, "scoring-store");
  static const std::unique_ptr<protocol::ProviderCore> c = [] {
    protocol::ProviderConfig config(fuzz::fuzz_params());
    config.params_name = "insecure-test-64";
    config.artifact_version = "fuzz";
    config.limits.max_message_bytes = 1 << 16;
    config.limits.max_private_queries = 4;
    config.scoring_matrix = std::make_shared<const scoring::ScoringMatrix>(artifacts().matrix);
    return protocol::ProviderCore::create(std::move(config), store.get()).value();
  }();
  return *c;
}

template <typename T>
void check_round_trip(const Result<T>& parsed, std::vector<std::uint8_t> (*serialize)(const T&),
                      const std::uint8_t* body, std::size_t size, const char* what) {
  if (!parsed.ok()) return;
  const auto again = serialize(*parsed);
  PRIVSEARCH_CHECK(again.size() == size && std::memcmp(again.data(), body, size) == 0, what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t* body = data + 1;
  const std::size_t n = size - 1;
  const std::span<const std::uint8_t> bytes(body, n);
  switch (data[0] % 5) {
    case 0:
      check_round_trip(scoring::parse_layout(bytes), &scoring::serialize_layout, body, n,
                       "scoring layout decode/encode is not a bijection");
      break;
    case 1:
      check_round_trip(scoring::parse_matrix(bytes), &scoring::serialize_matrix, body, n,
                       "scoring matrix decode/encode is not a bijection");
      break;
    case 2:
      check_round_trip(scoring::parse_hint(bytes), &scoring::serialize_hint, body, n,
                       "scoring hint decode/encode is not a bijection");
      break;
    case 3: {
      v1::PrivateScoreRequest req;
      if (!req.ParseFromArray(body, static_cast<int>(n))) break;
      const auto r = core().private_score(req);
      if (r.has_error()) {
        PRIVSEARCH_CHECK(
            r.error().code() != v1::ERROR_CODE_UNSPECIFIED && !r.error().message().empty(),
            "a refusal without a named code and message");
      } else {
        const auto& matrix = artifacts().matrix;
        PRIVSEARCH_CHECK(
            r.answers().size() == scoring::packed_answer_bytes(
                                      std::size_t{req.queries()} * matrix.rows, matrix.answer_bits),
            "an answer of the wrong size");
      }
      break;
    }
    default: {
      const auto& a = artifacts();
      auto scorer = scoring::PrivateScorer::create(&a.layout, &a.hint, true).value();
      Prng prng = Prng::from_seed(Seed{}, 9);
      const std::vector<float> z(16, 0.5f);
      const std::uint32_t clusters[] = {0, 2};
      auto pending = scorer.encrypt(z, clusters, prng).value();
      const std::string_view answers(reinterpret_cast<const char*>(body), n);
      const auto r = scorer.decode(std::move(pending), answers);
      // The corpus layout packs 2 x R answers into whole bytes (no padding bits to check).
      const std::size_t bits =
          std::size_t{2} * a.layout.shape.cluster_rows * a.layout.shape.answer_bits;
      PRIVSEARCH_CHECK(bits % 8 == 0, "the fuzz layout's answers need padding");
      if (n == bits / 8) {
        PRIVSEARCH_CHECK(r.ok(), "a well-sized answer must decode");
      } else {
        PRIVSEARCH_CHECK(!r.ok(), "a wrongly sized answer must be refused");
      }
      break;
    }
  }
  return 0;
}

// Mutations of real requests against the provider core (protocol/provider_core.h): every field of a
// captured UploadKeys and Rerank request, whole-message bit flips, truncations and splices of
// the protobuf encoding, and random values in the numeric fields. Every answer must be a payload
// or a typed refusal: never INTERNAL (a provider bug) and never an error without a code. The
// count is fixed and the generator seeded, so a failure names a reproducible mutation.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "ckks/param_sets.h"
#include "core/bytes.h"
#include "protocol/provider_core.h"
#include "protocol/provider_fixture.h"

namespace privsearch::protocol::testing_support {
namespace {

// Mutations per run (10^5 rerank + 10^4 upload by default, ~1 s under the test parameters);
// PRIVSEARCH_MUTATIONS overrides for longer runs.
std::size_t mutation_count(std::size_t fallback) {
  const char* env = std::getenv("PRIVSEARCH_MUTATIONS");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : fallback;
}

class MutationTest : public ProviderCoreTest {
 protected:
  MutationTest() = default;
  explicit MutationTest(const ckks::Params& p) : ProviderCoreTest(p) {}
  void run_mutations();

  // One mutation of `bytes`: flip 1-8 bits, truncate, extend, overwrite a run, or splice.
  std::string mutate(std::string bytes) {
    if (bytes.empty()) return std::string(1, static_cast<char>(prng.next_u64()));
    switch (prng.uniform_below(5)) {
      case 0: {
        const auto flips = 1 + prng.uniform_below(8);
        for (std::uint64_t i = 0; i < flips; ++i) {
          bytes[prng.uniform_below(bytes.size())] ^= static_cast<char>(1u << prng.uniform_below(8));
        }
        break;
      }
      case 1:
        bytes.resize(prng.uniform_below(bytes.size()));
        break;
      case 2:
        bytes.append(1 + prng.uniform_below(64), static_cast<char>(prng.next_u64()));
        break;
      case 3: {
        const auto at = prng.uniform_below(bytes.size());
        const auto len = std::min<std::uint64_t>(1 + prng.uniform_below(16), bytes.size() - at);
        for (std::uint64_t i = 0; i < len; ++i) bytes[at + i] = static_cast<char>(prng.next_u64());
        break;
      }
      default: {
        const auto a = prng.uniform_below(bytes.size()), b = prng.uniform_below(bytes.size());
        bytes = bytes.substr(0, std::min(a, b)) + bytes.substr(std::max(a, b));
        break;
      }
    }
    return bytes;
  }

  template <class Response>
  void expect_typed(const Response& r, const char* what, std::size_t i) {
    if (!r.has_error()) return;
    ++codes[r.error().code()];
    EXPECT_NE(r.error().code(), v1::INTERNAL)
        << what << " mutation " << i << ": " << r.error().message();
    EXPECT_NE(r.error().code(), v1::ERROR_CODE_UNSPECIFIED) << what << " mutation " << i;
  }

  std::map<int, std::size_t> codes;
};

// The same under the packed kernel's preset (at n = 64): its query is one level-0 ciphertext at
// the coefficient scale, its keys ten automorphisms.
class PackedMutationTest : public MutationTest {
 protected:
  PackedMutationTest() : MutationTest(small_packed()) {}
  static ckks::Params small_packed() {
    auto l = ckks::packed_n4096_literal();
    l.name = "insecure-test-packed-n64";
    l.n = 64;
    l.insecure_for_tests = true;
    return *ckks::Params::create(l);
  }
};

TEST_F(MutationTest, EveryMutatedRequestGetsAPayloadOrATypedRefusal) { run_mutations(); }
TEST_F(PackedMutationTest, EveryMutatedRequestGetsAPayloadOrATypedRefusal) { run_mutations(); }

void MutationTest::run_mutations() {
  ProviderLimits limits;
  limits.key_uploads = {0, 1};
  limits.scores_per_key_id = std::uint64_t{1} << 40;
  const auto core = make_core(limits);
  const auto upload = upload_request();
  const auto key_id = core->upload_keys(upload).key_id();
  const auto rerank = request(key_id, ids_);
  ASSERT_FALSE(core->rerank(rerank).has_error());

  const std::size_t n = mutation_count(100000);
  std::size_t served = 0;
  for (std::size_t i = 0; i < n; ++i) {
    v1::RerankRequest r = rerank;
    switch (prng.uniform_below(7)) {
      case 0:
        r.set_query(mutate(r.query()));
        break;
      case 1:
        r.set_key_id(mutate(r.key_id()));
        break;
      case 2:
        r.set_artifact_version(mutate(r.artifact_version()));
        break;
      case 3: {  // a random candidate value, or one removed, or one added
        const auto which = prng.uniform_below(3);
        if (which == 0) {
          r.set_candidate_ids(static_cast<int>(prng.uniform_below(ids_.size())),
                              prng.next_u64() >> prng.uniform_below(64));
        } else if (which == 1) {
          r.mutable_candidate_ids()->RemoveLast();
        } else {
          r.add_candidate_ids(prng.uniform_below(2 * kDocs));
        }
        break;
      }
      case 4: {  // the whole message's encoding
        v1::RerankRequest parsed;
        if (!parsed.ParseFromString(mutate(rerank.SerializeAsString()))) continue;
        r = parsed;
        break;
      }
      case 5:
        r.set_query(mutate(mutate(r.query())));
        break;
      default:
        r.set_query(r.query().substr(0, prng.uniform_below(r.query().size() + 1)));
        break;
    }
    const auto resp = core->rerank(r);
    served += resp.has_error() ? 0 : 1;
    expect_typed(resp, "rerank", i);
    if (HasFailure()) break;
  }
  // Upload mutations (fewer: each decodes a key set).
  for (std::size_t i = 0; i < n / 10; ++i) {
    v1::UploadKeysRequest u = upload;
    const auto field = prng.uniform_below(3);
    if (field == 0) u.set_galois_keys(mutate(u.galois_keys()));
    if (field == 1) u.set_params_id(mutate(u.params_id()));
    if (field == 2) u.set_public_key(mutate(u.public_key()));
    expect_typed(core->upload_keys(u), "upload", i);
    if (HasFailure()) break;
  }
  std::string summary;
  for (const auto& [code, count] : codes) {
    summary +=
        v1::ErrorCode_Name(static_cast<v1::ErrorCode>(code)) + "=" + std::to_string(count) + " ";
  }
  std::fprintf(stderr, "%zu rerank + %zu upload mutations: %zu served; %s\n", n, n / 10, served,
               summary.c_str());
  // The provider still serves the original request.
  EXPECT_FALSE(core->rerank(request(key_id, ids_)).has_error());
}

}  // namespace
}  // namespace privsearch::protocol::testing_support

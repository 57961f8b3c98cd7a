// The fixture of the hostile-client tests (hostile_client_test.cpp, transport_attack_test.cpp):
// the tiny index, a privsearch-provider process on it over real TLS on loopback, and a
// legitimate client's search (keys, one rerank, scores decrypted).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ckks/param_sets.h"
#include "client/provider_client.h"
#include "client/rerank_session.h"
#include "harness/random_vectors.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/exact_store.h"
#include "index/build.h"
#include "testing/test_util.h"
#include "testing/tiny_collection.h"

namespace privsearch {

// Under AddressSanitizer freed memory sits in a quarantine and the RSS says nothing about the
// provider's own bounds: the memory figures are checked in normal builds only.
#ifdef __SANITIZE_ADDRESS__
constexpr bool kRssIsMeaningful = false;
#else
constexpr bool kRssIsMeaningful = true;
#endif

class HostileClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    o = testing::tiny_index_options(c, 128);
    manifest = *index::build_index(o, nullptr);
  }
  std::unique_ptr<tools::SpawnedProvider> spawn(std::vector<std::string> extra) {
    tools::ProviderLaunch launch(o.out, c.dir / "work", {"--threads", "2"});
    launch.extra_args.insert(launch.extra_args.end(), extra.begin(), extra.end());
    launch.binary = PRIVSEARCH_PROVIDER_BIN;
    launch.start_timeout = std::chrono::seconds(60);
    auto p = tools::SpawnedProvider::start(launch);
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    return p.ok() ? std::move(p).value() : nullptr;
  }
  // A legitimate search: keys, one rerank, scores decrypted.
  Status legit_search(const tools::SpawnedProvider& p) { return legit_search(p.connect_options()); }
  Status legit_search(const client::ConnectOptions& co) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto cl, client::ProviderClient::connect(co));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto info, cl->server_info());
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, ckks::preset_literal(info.params_name()));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, ckks::Params::create(lit));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto session,
                                client::RerankSession::create(params, 16, Prng::create()));
    const std::vector<std::uint64_t> ids{5, 399, 0, 123};
    PRIVSEARCH_ASSIGN_OR_RETURN(auto up_req, session.make_key_upload(ids.size(), false));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto up, cl->upload_keys(up_req));
    if (up.has_error()) return client::provider_refusal("the keys", up.error());
    session.set_key_id(ids.size(), up.key_id());
    const auto z = tools::random_unit_vector(16, prng);
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto pending,
                                session.build_request({z, ids, manifest.version_id}));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto resp, cl->rerank(pending.request));
    return session.decode_response(pending, resp).status();
  }

  // A legitimate client as a real one runs: one connection and one key upload, then searches
  // (one rerank each, scores decrypted) as often as it likes.
  struct LegitClient {
    std::unique_ptr<client::ProviderClient> cl;
    std::optional<client::RerankSession> session;
  };
  Result<LegitClient> legit_client(const tools::SpawnedProvider& p) {
    LegitClient out;
    PRIVSEARCH_ASSIGN_OR_RETURN(out.cl, client::ProviderClient::connect(p.connect_options()));
    PRIVSEARCH_ASSIGN_OR_RETURN(
        const auto params,
        ckks::Params::create(*ckks::preset_literal(ckks::kDefaultServicePreset)));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto session,
                                client::RerankSession::create(params, 16, Prng::create()));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto up_req, session.make_key_upload(4, false));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto up, out.cl->upload_keys(up_req));
    if (up.has_error()) return client::provider_refusal("the keys", up.error());
    session.set_key_id(4, up.key_id());
    out.session.emplace(std::move(session));
    return out;
  }
  Status legit_rerank(LegitClient& lc) {
    const std::vector<std::uint64_t> ids{5, 399, 0, 123};
    const auto z = tools::random_unit_vector(16, prng);
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto pending,
                                lc.session->build_request({z, ids, manifest.version_id}));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto resp, lc.cl->rerank(pending.request));
    return lc.session->decode_response(pending, resp).status();
  }

  // One rerank of `ids` under a fresh key epoch: the provider's refusal code (0: served), and
  // the decrypted scores compared with the rows as they were when the index was built.
  v1::ErrorCode rerank_checked(const tools::SpawnedProvider& p,
                               const std::vector<std::uint64_t>& ids,
                               const index::ExactStore& original) {
    auto cl = *client::ProviderClient::connect(p.connect_options());
    const auto params = *ckks::Params::create(*ckks::preset_literal(ckks::kDefaultServicePreset));
    auto session = *client::RerankSession::create(params, 16, Prng::create());
    const auto up = *cl->upload_keys(*session.make_key_upload(ids.size(), false));
    session.set_key_id(ids.size(), up.key_id());
    const auto z = tools::random_unit_vector(16, prng);
    const auto pending = *session.build_request({z, ids, manifest.version_id});
    const auto resp = cl->rerank(pending.request);
    if (!resp.ok()) return v1::INTERNAL;  // the transport failed: the provider died
    if (resp->has_error()) return resp->error().code();
    const auto scores = *session.decode_response(pending, *resp);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      double want = 0;
      for (std::size_t j = 0; j < 16; ++j) want += z[j] * original.row(ids[i])[j];
      EXPECT_NEAR(scores[i], want, 1e-3) << "a wrong score for document " << ids[i];
    }
    return v1::ERROR_CODE_UNSPECIFIED;
  }

  testing::Collection c{"hostile"};
  index::BuildOptions o;
  index::Manifest manifest;
  Prng prng = testing::test_prng(31337);
};

}  // namespace privsearch

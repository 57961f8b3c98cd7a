// The fixture of the in-process client tests: the tiny collection's index built from its text
// (the built-in lexical encoder; d' = 16, PQ M = 4), its exact store, and a provider core served
// over TLS on 127.0.0.1 when a test starts it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ckks/param_sets.h"
#include "index/artifacts/artifacts.h"
#include "index/artifacts/exact_store.h"
#include "index/build.h"
#include "index/candidates/projection.h"
#include "index/encoders/lexical_encoder.h"
#include "protocol/provider_core.h"
#include "testing/tiny_collection.h"
#include "testing/tls_test_server.h"

namespace privsearch::testing {

class LexicalIndexTest : public ::testing::Test {
 protected:
  LexicalIndexTest(const std::string& tag, std::size_t record_bytes) : c(tag) {
    o.collection = c.dir;
    o.out = c.dir / "index";
    o.dim = 16;
    o.pq_m = 4;
    o.record_bytes = record_bytes;
  }
  // Builds the index (with what the test put in `o` first) and opens its exact store.
  void build() {
    manifest = *index::build_index(o, nullptr);
    store = std::make_unique<index::ExactStore>(*index::ExactStore::open(o.out / "exact.store"));
  }
  // The configuration every test starts from: the rerank preset, serving `artifact_version`.
  static protocol::ProviderConfig config_for(const std::string& artifact_version) {
    protocol::ProviderConfig config(*ckks::Params::create(*ckks::preset_literal("rerank-n8192")));
    config.params_name = "rerank-n8192";
    config.artifact_version = artifact_version;
    return config;
  }
  // A core over the exact store, served (a running server is replaced); `customize` adds what
  // the test serves beside it.
  void serve(protocol::ProviderConfig config,
             const std::function<void(server::ServeOptions&)>& customize = {}) {
    core = *protocol::ProviderCore::create(std::move(config), store.get());
    tls.start(*core, customize);
  }
  void TearDown() override { tls.stop(); }
  std::unique_ptr<client::ProviderClient> transport() { return tls.transport(); }
  // The projected query z (not normalized) of `text`, as the client computes it.
  std::vector<float> projected(const std::string& text) const {
    const auto enc = *index::LexicalEncoder::load(o.out / "encoder.bin");
    const auto proj = *index::load_projection(o.out / "projection.bin");
    return proj.project_query(enc.encode_query(text));
  }

  Collection c;
  index::BuildOptions o;
  index::Manifest manifest;
  std::unique_ptr<index::ExactStore> store;
  std::unique_ptr<protocol::ProviderCore> core;
  TlsTestServer tls;  // after what it serves: stopped first
};

}  // namespace privsearch::testing

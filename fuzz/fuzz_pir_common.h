// Shared setup for the PIR decoder fuzz targets: a deterministic tiny ZipPIR deployment
// (LWE n = 64, 256-bit Paillier, 24 records of 8 bytes) so valid messages are a few kilobytes.
// The server retains hints so a byte-identical query can be answered on every run.
#pragma once

#include <memory>
#include <optional>

#include "pir/zippir/zippir.h"
#include "pir/zippir/zippir_shard.h"

namespace privsearch::fuzz {

struct PirFixture {
  std::unique_ptr<pir::ZipPirServer> server;
  std::optional<pir::ZipPirClient> client;
  std::optional<pir::ZipPirPendingQuery> pending;
  std::vector<std::uint8_t> query;
  std::vector<std::uint8_t> response;
  std::vector<std::uint8_t> hint;
  std::vector<std::uint8_t> stored_hint;  // the query's hint as a shared store holds it
  // The same database in three row shards (one packed row each) and their parts of the answer.
  std::vector<std::unique_ptr<pir::ZipPirServer>> shards;
  std::vector<std::vector<std::uint8_t>> parts;
};

inline PirFixture& pir_fixture() {
  static PirFixture* f = [] {
    auto* fx = new PirFixture();
    pir::ZipPirParams params;
    params.lwe = *pir::find_lwe_params("insecure-test-n64-binary", true);
    params.paillier_bits = 256;
    params.allow_insecure = true;
    auto shape = *pir::choose_database_shape(24, 8, 32);
    auto db = *pir::LweDatabase::create(shape);
    db.fill_pseudorandom(5);
    pir::ZipPirServerLimits limits;
    limits.retain_hints_for_retries = true;
    fx->server = std::move(*pir::ZipPirServer::create(params, std::move(db), Seed{1}, 1, limits));
    Prng prng = Prng::from_seed(Seed{2});
    fx->client.emplace(std::move(*pir::ZipPirClient::create(fx->server->info(), prng)));
    const auto id = *fx->server->register_client(fx->client->setup_message());
    PRIVSEARCH_CHECK(fx->server->precompute(id, 0, 2, 1).ok(), "fixture precompute");
    fx->hint = *fx->server->export_hint(id, 1);
    fx->stored_hint = *fx->server->compute_hint(id, 0, 1);
    auto again = *pir::LweDatabase::create(shape);
    again.fill_pseudorandom(5);
    const auto plan = *pir::plan_row_shards(params, shape, 3);
    for (const auto& range : plan) {
      fx->shards.push_back(
          std::move(*pir::ZipPirServer::create_shard(params, again, range, Seed{1}, 1, limits)));
      PRIVSEARCH_CHECK(fx->shards.back()->register_client(fx->client->setup_message()).ok() &&
                           fx->shards.back()->precompute(id, 0, 1, 1).ok(),
                       "fixture shard");
    }
    fx->query = *fx->client->query(7, prng, fx->pending);
    fx->response = *fx->server->answer(fx->query);
    for (auto& s : fx->shards) fx->parts.push_back(*s->answer(fx->query));
    return fx;
  }();
  return *f;
}

}  // namespace privsearch::fuzz

#include "suites/bench_pir_hintless.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>

#include "core/elapsed.h"
#include "eval/statistics.h"
#include "harness/measure.h"
#include "harness/progress.h"
#include "index/artifacts/record_digests.h"
#include "pir/hintless/client/client.h"
#include "pir/hintless/server.h"

namespace privsearch::tools {
namespace {

using namespace privsearch::pir::hintless;
using Clock = std::chrono::steady_clock;

const Progress hintless_progress("bench pir (hintless): ");

// Record i: record_bytes pseudorandom bytes of its own stream, so the check needs no copy.
class SyntheticRecords {
 public:
  explicit SyntheticRecords(std::size_t bytes) : seed_(Prng::random_seed()), buffer_(bytes) {}
  std::span<const std::uint8_t> operator()(std::size_t i) {
    Prng prng = Prng::from_seed(seed_, i);
    prng.fill(buffer_);
    return buffer_;
  }
  std::vector<std::uint8_t> copy(std::size_t i) {
    const auto r = (*this)(i);
    return {r.begin(), r.end()};
  }

 private:
  Seed seed_;
  std::vector<std::uint8_t> buffer_;
};

struct ServerTiming {
  TimingStats wall;
  double cpu_s_per_answer = 0;
  std::vector<std::uint8_t> response;
};

// Decode + answer + encode of `queries` (one batch), `runs` times.
Result<ServerTiming> time_answers(const HintlessServer& server,
                                  const std::vector<std::vector<std::uint8_t>>& queries,
                                  std::size_t runs) {
  ServerTiming t;
  Status failure;
  const double cpu0 = own_cpu_seconds();
  t.wall = time_runs(1, runs, [&] {
    std::vector<HintlessQuery> decoded;
    for (const auto& q : queries) {
      auto d = decode_query(server.params(), server.shape(), q);
      if (!d.ok()) {
        failure = d.status();
        return;
      }
      decoded.push_back(std::move(*d));
    }
    auto r = server.answer(decoded);
    if (!r.ok()) {
      failure = r.status();
      return;
    }
    t.response = encode_response(server.params(), (*r)[0]);
  });
  PRIVSEARCH_RETURN_IF_ERROR(failure);
  t.cpu_s_per_answer = (own_cpu_seconds() - cpu0) / static_cast<double>(runs + 1);
  return t;
}

// Batches of o.batch queries (the records of one search) in one pass.
Result<ServerTiming> time_batches(const HintlessServer& server, const HintlessClient& client,
                                  std::size_t probe, const HintlessBenchOptions& o, Prng& prng) {
  std::vector<std::vector<std::uint8_t>> batch;
  for (std::size_t k = 0; k < o.batch; ++k) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto q,
                                client.make_query((probe + 7 * k) % client.shape().records, prng));
    batch.push_back(encode_query(client.params(), q.first));
  }
  hintless_progress(fmt::format("batches of {} queries", o.batch));
  return time_answers(server, batch, std::max<std::size_t>(3, o.runs / 4));
}

// What verifying a fetched record costs the client (index/artifacts/record_digests.h): one
// digest of the record, timed 200 times; no byte is added to a fetch (the digests travel with
// the index's public files, 16 bytes a record).
nlohmann::json verify_cost(std::size_t probe, const std::vector<std::uint8_t>& record,
                           double client_fetch_ms) {
  std::vector<double> us;
  for (int run = 0; run < 200; ++run) {
    const auto t0 = Clock::now();
    const auto d = index::record_digest(probe, record);
    us.push_back(seconds_since(t0) * 1e6 + (d[0] == 0 && d[1] == 0 ? 1e-9 : 0.0));
  }
  const auto check = eval::describe(us);
  return {{"extra_bytes_per_fetch", 0},
          {"digest_bytes_per_record", index::kRecordDigestBytes},
          {"check_us", {{"median", check.median}, {"p95", check.p95}}},
          {"client_time_ratio", client_fetch_ms > 0 ? check.median / (client_fetch_ms * 1000) : 0}};
}

}  // namespace

Result<nlohmann::json> run_hintless_pir_bench(const HintlessBenchOptions& o) {
  PRIVSEARCH_ASSIGN_OR_RETURN(const HintlessParams params, find_hintless_params("ypir-sp-d2048"));
  const std::size_t records = std::max<std::size_t>(1, (o.db_mb << 20) / o.record_bytes);
  PRIVSEARCH_ASSIGN_OR_RETURN(const HintlessShape shape,
                              choose_hintless_shape(params, records, o.record_bytes));
  SyntheticRecords source(o.record_bytes);
  hintless_progress(fmt::format("{} MiB of {} B records: {} columns x {} outputs, preprocessing",
                                o.db_mb, o.record_bytes, shape.columns, shape.outputs));
  HintlessServerOptions so;
  so.threads = o.threads;
  so.progress = [](std::size_t done, std::size_t all) {
    hintless_progress(fmt::format("preprocessed output {} of {}", done, all));
  };
  const double cpu0 = own_cpu_seconds();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto server,
                              HintlessServer::create(params, shape, std::ref(source), so));
  const double preprocess_cpu = own_cpu_seconds() - cpu0;

  // A new client: from the public parameters to its record.
  const std::size_t probe = records / 3;
  Prng prng = Prng::create();
  auto t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const HintlessClient client, HintlessClient::create(params, shape));
  const double client_setup_ms = seconds_since(t0) * 1000;
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(auto made, client.make_query(probe, prng));
  const std::vector<std::uint8_t> query = encode_query(params, made.first);
  const double query_ms = seconds_since(t0) * 1000;

  hintless_progress(fmt::format("online answers ({} runs, {} threads)", o.runs, o.threads));
  PRIVSEARCH_ASSIGN_OR_RETURN(const ServerTiming one, time_answers(*server, {query}, o.runs));
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(const HintlessResponse resp,
                              decode_response(params, shape, one.response));
  PRIVSEARCH_ASSIGN_OR_RETURN(const std::vector<std::uint8_t> got,
                              client.decode(made.second, resp));
  const double decode_ms = seconds_since(t0) * 1000;
  const bool recovered = got == source.copy(probe);
  const nlohmann::json verified = verify_cost(probe, got, query_ms + decode_ms);

  PRIVSEARCH_ASSIGN_OR_RETURN(const ServerTiming many,
                              time_batches(*server, client, probe, o, prng));

  nlohmann::json j;
  j["backend"] = "hintless";
  j["params"] = params.name;
  j["db_mb"] = o.db_mb;
  j["record_bytes"] = o.record_bytes;
  j["records"] = records;
  j["shape"] = {{"columns", shape.columns},
                {"outputs", shape.outputs},
                {"records_per_column", shape.records_per_column},
                {"rows", shape.rows(params)}};
  j["online_server_ms"] = {{"median", one.wall.median_us / 1000},
                           {"p95", one.wall.p95_us / 1000},
                           {"runs", one.wall.runs}};
  j["server_cpu_s_per_fetch"] = one.cpu_s_per_answer;
  j["offline_server_cpu_s_per_query"] = 0.0;  // nothing per client: the point of the scheme
  j["preprocess_s"] = server->preprocess_seconds();
  j["preprocess_cpu_s"] = preprocess_cpu;
  j["server_memory_bytes"] = server->memory_bytes();
  j["query_bytes"] = query.size();
  j["key_bytes"] = params.packing_key_bytes();  // inside the query, fresh per query
  j["response_bytes"] = one.response.size();
  j["client_ms"] = {{"setup", client_setup_ms},
                    {"query", query_ms},
                    {"decode", decode_ms},
                    {"total", query_ms + decode_ms}};
  j["first_fetch_ms"] = client_setup_ms + query_ms + one.wall.median_us / 1000 + decode_ms;
  j["batch"] = {
      {"queries", o.batch},
      {"server_ms", {{"median", many.wall.median_us / 1000}, {"p95", many.wall.p95_us / 1000}}},
      {"server_cpu_s", many.cpu_s_per_answer}};
  j["decoding_failure_log2"] = hintless_decoding_failure_log2(params, shape.columns, shape.outputs);
  j["record_recovered"] = recovered;
  j["verified_fetch"] = verified;
  j["threads"] = o.threads;
  return j;
}

}  // namespace privsearch::tools

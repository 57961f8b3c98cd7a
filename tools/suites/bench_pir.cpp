#include "suites/bench_pir.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "core/elapsed.h"
#include "harness/measure.h"
#include "pir/zippir/zippir.h"

namespace privsearch::tools {
namespace {

using Clock = std::chrono::steady_clock;
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
void progress(const std::string& s) { std::fprintf(stderr, "[bench pir] %s\n", s.c_str()); }

// The online answer timed over `runs` repetitions of one query, with its parts.
struct OnlineFigures {
  TimingStats answer;
  std::vector<double> db_ms, hint_ms, conv_ms, mv_ms, crt_ms;
  std::vector<std::uint8_t> response;
};

Result<OnlineFigures> time_online(pir::ZipPirServer& server, const std::vector<std::uint8_t>& query,
                                  std::size_t runs) {
  OnlineFigures f;
  Status failure;
  f.answer = time_runs(1, runs, [&] {
    pir::ZipPirAnswerTimings t;
    auto r = server.answer(query, &t);
    if (!r.ok()) {
      failure = r.status();
      return;
    }
    f.response = std::move(r).value();
    f.db_ms.push_back(t.db_pass_ms);
    f.hint_ms.push_back(t.hint_part_ms);
    f.conv_ms.push_back(t.offsets_to_rns_ms);
    f.mv_ms.push_back(t.rns_matvec_ms);
    f.crt_ms.push_back(t.crt_pack_add_ms);
  });
  PRIVSEARCH_RETURN_IF_ERROR(failure);
  return f;
}

// Everything one database size measures besides the online answer.
struct PirFigures {
  std::size_t db_mb = 0, records = 0;
  pir::DatabaseShape shape;
  pir::ZipPirParams params;
  std::size_t packed_rows = 0, state_bytes_per_query = 0;
  double preprocess_s = 0, keygen_s = 0, offline_wall = 0, offline_cpu = 0, offsets_s = 0;
  double client_query_ms = 0, extract_ms = 0;
  std::size_t query_bytes = 0, setup_bytes = 0;
  unsigned threads = 0;
  bool recovered = false;
};

nlohmann::json pir_json(const PirBenchOptions& o, const PirFigures& p, const OnlineFigures& f) {
  auto median = [](std::vector<double> v) { return eval::describe(std::move(v)).median; };
  const double bytes = static_cast<double>(p.shape.matrix_bytes());
  nlohmann::json j;
  j["db_mb"] = p.db_mb;
  j["db_bytes"] = p.shape.matrix_bytes();
  j["record_bytes"] = o.record_bytes;
  j["records"] = p.records;
  j["shape"] = {{"d1_rows", p.shape.rows}, {"d0_columns", p.shape.columns},
                {"packed_rows", p.packed_rows},
                {"slots_per_plaintext", p.params.slots_per_plaintext()},
                {"hint_bits", p.params.hint_bits}, {"lwe_n", p.params.lwe.n},
                {"paillier_bits", p.params.paillier_bits}};
  j["online_ms"] = {{"median", f.answer.median_us / 1000}, {"p95", f.answer.p95_us / 1000},
                    {"runs", f.answer.runs}};
  j["online_gbps"] = bytes / (f.answer.median_us * 1e-6) / 1e9;
  j["db_pass_ms"] = median(f.db_ms);
  j["db_pass_gbps"] = bytes / (median(f.db_ms) * 1e-3) / 1e9;
  j["hint_part_ms"] = median(f.hint_ms);
  j["hint_part_breakdown_ms"] = {{"offsets_to_rns", median(f.conv_ms)},
                                 {"rns_matvec", median(f.mv_ms)},
                                 {"crt_pack_paillier_add", median(f.crt_ms)}};
  j["offline_s_per_query"] = {{"wall_all_cores", p.offline_wall},
                              {"cpu_s", p.offline_cpu},
                              {"threads", p.threads}};
  j["offline_cpu_minutes_per_query"] = p.offline_cpu / 60;
  j["client_offsets_s"] = p.offsets_s;
  j["client_query_ms"] = p.client_query_ms;
  j["client_extract_ms"] = p.extract_ms;
  j["client_keygen_s"] = p.keygen_s;
  j["query_bytes"] = p.query_bytes;
  j["response_bytes"] = f.response.size();
  j["server_state_bytes_per_query"] = p.state_bytes_per_query;
  j["setup_upload_bytes"] = p.setup_bytes;
  j["server_preprocess_s"] = p.preprocess_s;
  j["record_recovered"] = p.recovered;
  j["decoding_failure_log2"] = p.params.correctness_log2(p.shape.columns);
  return j;
}

Result<nlohmann::json> run_one(const PirBenchOptions& o, std::size_t db_mb, unsigned threads) {
  using namespace privsearch::pir;
  PirFigures p;
  p.db_mb = db_mb;
  p.threads = threads;
  p.records = (db_mb << 20) / o.record_bytes;
  PRIVSEARCH_ASSIGN_OR_RETURN(p.shape, choose_database_shape(p.records, o.record_bytes));
  PRIVSEARCH_ASSIGN_OR_RETURN(p.params.lwe, find_lwe_params("zippir-n1400-binary"));
  p.params.paillier_bits = o.paillier_bits;
  if (o.hint_bits != 0) p.params.hint_bits = o.hint_bits;
  PRIVSEARCH_RETURN_IF_ERROR(p.params.validate());
  progress(std::to_string(db_mb) + " MiB: " + std::to_string(p.shape.rows) + " x " +
           std::to_string(p.shape.columns) + " bytes, filling");
  PRIVSEARCH_ASSIGN_OR_RETURN(LweDatabase db, LweDatabase::create(p.shape));
  db.fill_pseudorandom(db_mb);
  const std::size_t probe = p.records / 3;
  const std::vector<std::uint8_t> expected = db.record(probe);

  progress("server preprocessing (H = D A, rescaled exponents, P in RNS)");
  auto t0 = Clock::now();
  ZipPirServerLimits limits;
  limits.retain_hints_for_retries = true;  // time repeated answers of one query
  PRIVSEARCH_ASSIGN_OR_RETURN(auto server, ZipPirServer::create(p.params, std::move(db),
                                                                Prng::random_seed(), threads,
                                                                limits));
  p.preprocess_s = seconds_since(t0);
  p.packed_rows = server->packed_rows();
  p.state_bytes_per_query = server->state_bytes_per_query();
  progress("client key generation");
  Prng prng = Prng::create();
  t0 = Clock::now();
  PRIVSEARCH_ASSIGN_OR_RETURN(ZipPirClient client, ZipPirClient::create(server->info(), prng));
  p.keygen_s = seconds_since(t0);
  const auto setup = client.setup_message();
  p.setup_bytes = setup.size();
  PRIVSEARCH_ASSIGN_OR_RETURN(std::uint64_t id, server->register_client(setup));

  progress("offline hint for one query (all cores)");
  t0 = Clock::now();
  const double cpu0 = cpu_seconds();
  PRIVSEARCH_RETURN_IF_ERROR(server->precompute(id, 0, 1, threads));
  p.offline_wall = seconds_since(t0);
  p.offline_cpu = cpu_seconds() - cpu0;

  progress("client offsets (n Paillier decryptions) and query");
  t0 = Clock::now();
  PRIVSEARCH_RETURN_IF_ERROR(client.precompute_query(0, threads));
  p.offsets_s = seconds_since(t0);
  std::optional<ZipPirPendingQuery> pending;
  PRIVSEARCH_ASSIGN_OR_RETURN(auto query, client.query(probe, prng, pending, threads));
  p.client_query_ms = client.timings().query_ms;
  p.query_bytes = query.size();

  progress("online answers (one thread)");
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto online, time_online(*server, query, o.runs));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto record, client.extract(*pending, online.response, threads));
  p.extract_ms = client.timings().extract_ms;
  p.recovered = record == expected;
  return pir_json(o, p, online);
}

}  // namespace

Result<nlohmann::json> run_pir_bench(const PirBenchOptions& options) {
  const unsigned threads =
      options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  nlohmann::json out;
  out["suite"] = "pir";
  out["machine"] = machine_description();
  out["protocol"] = "ZipPIR (LWE n=1400 q=2^32 binary secret, Paillier, rescaled packed hint)";
  nlohmann::json sizes = nlohmann::json::array();
  for (std::size_t mb : options.db_mb) {
    PRIVSEARCH_ASSIGN_OR_RETURN(nlohmann::json one, run_one(options, mb, threads));
    sizes.push_back(one);
  }
  if (sizes.size() == 1) {
    for (auto& [k, v] : sizes[0].items()) out[k] = v;
  } else {
    out["sizes"] = sizes;
  }
  return out;
}

}  // namespace privsearch::tools

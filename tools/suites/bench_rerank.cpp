#include "suites/bench_rerank.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "harness/measure.h"
#include "ckks/client/keygen.h"
#include "ckks/compact.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"
#include "rerank/client/scores.h"
#include "rerank/kernels.h"

namespace privsearch::tools {

namespace {

using namespace privsearch::rerank;

// Cosine scores of unit vectors lie in [-1, 1]; 18 bits keep the response under 66,000 bytes.
constexpr ckks::CompactOptions kResponseCompaction{1.0, 18.0};

struct Case {
  Kernel kernel;
  std::size_t dim, k;
};

std::vector<double> unit_vector(Prng& prng, std::size_t d) {
  std::vector<double> v(d);
  double norm = 0;
  for (auto& x : v) {
    x = static_cast<double>(prng.next_u64() >> 11) * 0x1p-52 * 2.0 - 1.0;
    norm += x * x;
  }
  for (auto& x : v) x /= std::sqrt(norm);
  return v;
}

std::vector<std::size_t> top10(const std::vector<double>& scores) {
  std::vector<std::size_t> idx(scores.size());
  std::iota(idx.begin(), idx.end(), 0);
  const std::size_t m = std::min<std::size_t>(10, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(m), idx.end(),
                    [&](std::size_t a, std::size_t b) {
                      return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
                    });
  idx.resize(m);
  return idx;
}

ckks::Params params_for(Kernel kernel) {
  return kernel == Kernel::kFast ? *ckks::Params::create(ckks::rerank_n8192_literal())
                                 : *ckks::Params::create(ckks::paper_n8192_literal());
}

Result<nlohmann::json> bench_case(const Case& c, const RerankBenchOptions& o) {
  const ckks::Params params = params_for(c.kernel);
  Prng prng = Prng::create();
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto layout, make_layout(params, c.kernel, c.dim, c.k));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto encoder, ckks::Encoder::create(params));
  const ckks::Evaluator evaluator(params);
  const ckks::KeyGenerator keygen(params);
  const auto sk = keygen.create_secret_key(prng);
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto keys, make_rotation_keys(layout, keygen, sk, prng));
  const auto key_bytes = ckks::serialize_galois_keys(params, keys).size();

  // Candidate rows and a query: random unit vectors (float32 rows as the exact store holds).
  std::vector<float> rows(c.k * c.dim);
  for (std::size_t i = 0; i < c.k; ++i) {
    const auto v = unit_vector(prng, c.dim);
    for (std::size_t j = 0; j < c.dim; ++j) rows[i * c.dim + j] = static_cast<float>(v[j]);
  }
  auto plain_scores = [&](const std::vector<double>& z) {
    std::vector<double> s(c.k, 0.0);
    for (std::size_t i = 0; i < c.k; ++i) {
      for (std::size_t j = 0; j < c.dim; ++j) s[i] += z[j] * static_cast<double>(rows[i * c.dim + j]);
    }
    return s;
  };
  const bool compact_response = c.kernel == Kernel::kFast;

  // One request as the provider sees it: bytes in, bytes out.
  auto serve = [&](const std::vector<std::uint8_t>& request, KernelResult& result)
      -> Result<std::vector<std::vector<std::uint8_t>>> {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto query, ckks::deserialize_ciphertext(params, request));
    PRIVSEARCH_ASSIGN_OR_RETURN(result,
                                evaluate_kernel(layout, encoder, evaluator, keys, query, rows));
    std::vector<std::vector<std::uint8_t>> response;
    for (const auto& ct : result.outputs) {
      if (compact_response) {
        PRIVSEARCH_ASSIGN_OR_RETURN(const auto cc, ckks::compact(params, ct, kResponseCompaction));
        response.push_back(ckks::serialize_compact(cc));
      } else {
        PRIVSEARCH_ASSIGN_OR_RETURN(auto b, ckks::serialize_ciphertext(params, ct,
                                                                       ckks::CiphertextForm::kFull));
        response.push_back(std::move(b));
      }
    }
    return response;
  };
  auto client_decrypt = [&](const std::vector<std::vector<std::uint8_t>>& response)
      -> Result<std::vector<double>> {
    if (compact_response) {
      std::vector<ckks::CompactCiphertext> cts;
      for (const auto& b : response) {
        PRIVSEARCH_ASSIGN_OR_RETURN(auto cc, ckks::deserialize_compact(params, b));
        cts.push_back(std::move(cc));
      }
      return decrypt_compact_scores(layout, params, sk, cts);
    }
    std::vector<ckks::Ciphertext> cts;
    for (const auto& b : response) {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto ct, ckks::deserialize_ciphertext(params, b));
      cts.push_back(std::move(ct));
    }
    return decrypt_scores(layout, params, sk, cts);
  };

  const auto z = unit_vector(prng, c.dim);
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto query, encrypt_query(layout, params, sk, z, prng));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto request, ckks::serialize_ciphertext(
                                                      params, query, ckks::CiphertextForm::kSeeded));
  // Paper kernels are slow: fewer repetitions (still after a warm-up).
  const std::size_t runs = c.kernel == Kernel::kFast ? o.runs : std::max<std::size_t>(3, o.runs / 5);
  std::vector<double> server_ms, encode_ms, he_ms;
  KernelResult last;
  std::vector<std::vector<std::uint8_t>> response;
  Status failure;
  for (std::size_t r = 0; r < o.warmup + runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto resp = serve(request, last);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!resp.ok()) return resp.status();
    response = std::move(resp).value();
    if (r >= o.warmup) {
      server_ms.push_back(ms);
      encode_ms.push_back(last.encode_ms);
      he_ms.push_back(last.he_ms);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  auto p95 = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(0.95 * static_cast<double>(v.size())))];
  };
  std::size_t response_bytes = 0;
  for (const auto& b : response) response_bytes += b.size();
  const TimingStats dec = time_runs(1, 20, [&] { (void)client_decrypt(response).value(); });

  // Correctness after timing.
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scores, client_decrypt(response));
  const auto expected = plain_scores(z);
  double max_err = 0;
  for (std::size_t i = 0; i < c.k; ++i) max_err = std::fmax(max_err, std::fabs(scores[i] - expected[i]));

  // Exact top-10 order against the plaintext scores over fresh random queries.
  const std::size_t order_queries =
      c.kernel == Kernel::kFast ? o.order_queries : std::min<std::size_t>(o.order_queries, 10);
  std::size_t matches = 0;
  for (std::size_t qi = 0; qi < order_queries; ++qi) {
    const auto zq = unit_vector(prng, c.dim);
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto ctq, encrypt_query(layout, params, sk, zq, prng));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto req, ckks::serialize_ciphertext(
                                                    params, ctq, ckks::CiphertextForm::kSeeded));
    KernelResult kr;
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto resp, serve(req, kr));
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto got, client_decrypt(resp));
    if (top10(got) == top10(plain_scores(zq))) ++matches;
  }

  nlohmann::json j;
  j["kernel"] = std::string(kernel_name(c.kernel));
  j["preset"] = params.name();
  j["dim"] = c.dim;
  j["k"] = c.k;
  j["server_ms"] = {{"median", std::round(median(server_ms) * 1000) / 1000},
                    {"p95", std::round(p95(server_ms) * 1000) / 1000},
                    {"runs", server_ms.size()}};
  j["encode_ms"] = std::round(median(encode_ms) * 1000) / 1000;
  j["he_ms"] = std::round(median(he_ms) * 1000) / 1000;
  j["rotations"] = last.counts.rotations;
  j["multiply_plain"] = last.counts.multiply_plain;
  j["rescales"] = last.counts.rescales;
  j["additions"] = last.counts.additions;
  j["response_ciphertexts"] = response.size();
  j["response_bytes"] = response_bytes;
  j["request_bytes"] = request.size();
  j["galois_keys"] = keys.size();
  j["galois_key_bytes"] = key_bytes;
  j["client_decrypt_ms"] = std::round(dec.median_us) / 1000.0;
  j["max_abs_error"] = max_err;
  j["precision_bits"] = std::round(-std::log2(max_err) * 100) / 100;
  j["top10_order_match"] = static_cast<double>(matches) / static_cast<double>(order_queries);
  j["top10_queries"] = order_queries;
  if (c.kernel == Kernel::kFast) {
    j["layout"] = {{"period", layout.period}, {"width", layout.width},
                   {"windows", layout.windows}, {"blocks", layout.blocks},
                   {"baby", layout.baby}, {"giant", layout.giant}};
  }
  return j;
}

}  // namespace

Result<nlohmann::json> run_rerank_bench(const RerankBenchOptions& o) {
  std::vector<Case> cases;
  if (o.kernels.empty() && o.dims.empty() && o.ks.empty()) {
    for (Kernel k : {Kernel::kNaive, Kernel::kGrouped, Kernel::kOneResponse, Kernel::kFast}) {
      cases.push_back({k, 672, 100});
    }
    for (std::size_t k : {20, 200}) cases.push_back({Kernel::kFast, 672, k});
    for (std::size_t d : {192, 384, 768}) cases.push_back({Kernel::kFast, d, 100});
  } else {
    std::vector<Kernel> kernels;
    for (const auto& name : o.kernels) {
      PRIVSEARCH_ASSIGN_OR_RETURN(const Kernel k, kernel_from_name(name));
      kernels.push_back(k);
    }
    if (kernels.empty()) kernels = {Kernel::kFast};
    const auto dims = o.dims.empty() ? std::vector<std::size_t>{672} : o.dims;
    const auto ks = o.ks.empty() ? std::vector<std::size_t>{100} : o.ks;
    for (Kernel k : kernels) {
      for (std::size_t d : dims) {
        for (std::size_t kk : ks) cases.push_back({k, d, kk});
      }
    }
  }
  nlohmann::json out;
  out["suite"] = "rerank";
  out["machine"] = machine_description();
  out["threads"] = 1;
  out["note"] =
      "server_ms = query deserialize + plaintext encode + evaluation + response serialize; "
      "paper kernels on paper-n8192 with full ciphertexts, fast kernel on rerank-n8192 with a "
      "compact response";
  out["results"] = nlohmann::json::array();
  for (const auto& c : cases) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto r, bench_case(c, o));
    out["results"].push_back(std::move(r));
  }
  return out;
}

}  // namespace privsearch::tools

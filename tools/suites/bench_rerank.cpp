#include "suites/bench_rerank.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>

#include "ckks/client/keygen.h"
#include "ckks/compact.h"
#include "ckks/encoder.h"
#include "ckks/evaluator.h"
#include "ckks/param_sets.h"
#include "ckks/serialization.h"
#include "core/elapsed.h"
#include "harness/measure.h"
#include "harness/random_vectors.h"
#include "rerank/client/packed_scores.h"
#include "rerank/client/scores.h"
#include "rerank/kernels.h"
#include "rerank/messages.h"
#include "rerank/packed_response.h"

namespace privsearch::tools {

namespace {

using namespace privsearch::rerank;

// Cosine scores of unit vectors lie in [-1, 1]; 18 bits keep the response under 66,000 bytes.
constexpr ckks::CompactOptions kResponseCompaction{1.0, 18.0};
// The rows are unit vectors: the bound a provider would pass for them (its store's largest norm;
// the packed kernel's row scale follows from it, rerank/packed.h).
constexpr double kUnitRowNormBound = 1.0;

struct Case {
  Kernel kernel;
  std::size_t dim, k;
  std::size_t threads = 1;  // the fast kernel's (rerank/kernels.h)
};

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
  switch (kernel) {
    case Kernel::kFast:
      return *ckks::Params::create(ckks::rerank_n8192_literal());
    case Kernel::kPacked:
      return *ckks::Params::create(ckks::packed_n4096_literal());
    default:
      return *ckks::Params::create(ckks::paper_n8192_literal());
  }
}

// One case as the provider and the client see it: the provider's bytes-in/bytes-out step, the
// client's decryption, and the plaintext scores they must match.
class RerankCaseBench {
 public:
  static Result<std::unique_ptr<RerankCaseBench>> create(const Case& c) {
    std::unique_ptr<RerankCaseBench> b(new RerankCaseBench(c));
    PRIVSEARCH_ASSIGN_OR_RETURN(b->layout_, make_layout(b->params_, c.kernel, c.dim, c.k));
    PRIVSEARCH_ASSIGN_OR_RETURN(auto encoder, ckks::Encoder::create(b->params_));
    b->encoder_.emplace(std::move(encoder));
    PRIVSEARCH_ASSIGN_OR_RETURN(b->keys_,
                                make_rotation_keys(b->layout_, b->keygen_, b->sk_, b->prng_));
    // Candidate rows: random unit vectors (float32 rows as the exact store holds).
    b->rows_.resize(c.k * c.dim);
    for (std::size_t i = 0; i < c.k; ++i) {
      const auto v = random_unit_vector(c.dim, b->prng_);
      for (std::size_t j = 0; j < c.dim; ++j) b->rows_[i * c.dim + j] = static_cast<float>(v[j]);
    }
    return b;
  }

  std::vector<double> plain_scores(const std::vector<double>& z) const {
    std::vector<double> s(c_.k, 0.0);
    for (std::size_t i = 0; i < c_.k; ++i) {
      for (std::size_t j = 0; j < c_.dim; ++j) {
        s[i] += z[j] * static_cast<double>(rows_[i * c_.dim + j]);
      }
    }
    return s;
  }

  // A fresh random unit query, encrypted and serialized (seeded) as the client sends it.
  Result<std::vector<std::uint8_t>> request(std::vector<double>& z) {
    z = random_unit_vector(c_.dim, prng_);
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto query,
                                packed() ? encrypt_packed_query(layout_, params_, sk_, z, prng_)
                                         : encrypt_query(layout_, params_, sk_, z, prng_));
    return ckks::serialize_ciphertext(params_, query, ckks::CiphertextForm::kSeeded);
  }

  // One request as the provider sees it: bytes in, bytes out.
  Result<std::vector<std::vector<std::uint8_t>>> serve(const std::vector<std::uint8_t>& request,
                                                       KernelResult& result) const {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto query, ckks::deserialize_ciphertext(params_, request));
    PRIVSEARCH_ASSIGN_OR_RETURN(
        result, evaluate_kernel(layout_, *encoder_, evaluator_, keys_, query, rows_, c_.threads,
                                kUnitRowNormBound));
    std::vector<std::vector<std::uint8_t>> response;
    for (std::size_t w = 0; w < result.outputs.size(); ++w) {
      const auto& ct = result.outputs[w];
      if (packed()) {
        PRIVSEARCH_ASSIGN_OR_RETURN(
            const auto pc,
            compact_packed(params_, ct, packed_positions(layout_, w), kResponseCompaction));
        response.push_back(serialize_packed(pc));
      } else if (compact()) {
        PRIVSEARCH_ASSIGN_OR_RETURN(const auto cc, ckks::compact(params_, ct, kResponseCompaction));
        response.push_back(ckks::serialize_compact(cc));
      } else {
        PRIVSEARCH_ASSIGN_OR_RETURN(
            auto b, ckks::serialize_ciphertext(params_, ct, ckks::CiphertextForm::kFull));
        response.push_back(std::move(b));
      }
    }
    return response;
  }

  Result<std::vector<double>> client_decrypt(
      const std::vector<std::vector<std::uint8_t>>& response) const {
    if (packed()) {
      std::vector<PackedCiphertext> cts;
      for (std::size_t w = 0; w < response.size(); ++w) {
        PRIVSEARCH_ASSIGN_OR_RETURN(
            auto pc, deserialize_packed(params_, response[w], packed_positions(layout_, w).size()));
        cts.push_back(std::move(pc));
      }
      return decrypt_packed_scores(layout_, params_, sk_, cts);
    }
    if (compact()) {
      std::vector<ckks::CompactCiphertext> cts;
      for (const auto& b : response) {
        PRIVSEARCH_ASSIGN_OR_RETURN(auto cc, ckks::deserialize_compact(params_, b));
        cts.push_back(std::move(cc));
      }
      return decrypt_compact_scores(layout_, params_, sk_, cts);
    }
    std::vector<ckks::Ciphertext> cts;
    for (const auto& b : response) {
      PRIVSEARCH_ASSIGN_OR_RETURN(auto ct, ckks::deserialize_ciphertext(params_, b));
      cts.push_back(std::move(ct));
    }
    return decrypt_scores(layout_, params_, sk_, cts);
  }

  // Exact top-10 order against the plaintext scores over fresh random queries: the count.
  Result<std::size_t> order_matches(std::size_t queries) {
    std::size_t matches = 0;
    for (std::size_t qi = 0; qi < queries; ++qi) {
      std::vector<double> zq;
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto req, request(zq));
      KernelResult kr;
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto resp, serve(req, kr));
      PRIVSEARCH_ASSIGN_OR_RETURN(const auto got, client_decrypt(resp));
      if (top10(got) == top10(plain_scores(zq))) ++matches;
    }
    return matches;
  }

  bool compact() const { return c_.kernel == Kernel::kFast; }
  bool packed() const { return c_.kernel == Kernel::kPacked; }
  // The rerank request and response messages as they travel (rerank/messages.h: header, slot
  // map where the kernel sends one, ciphertexts).
  std::size_t request_message_bytes(std::vector<std::uint8_t> query) const {
    return serialize_request(request_for_layout(params_, layout_, std::move(query))).size();
  }
  std::size_t response_message_bytes(std::vector<std::vector<std::uint8_t>> outputs) const {
    return serialize_response(response_for_layout(params_, layout_, std::move(outputs))).size();
  }
  const ckks::Params& params() const { return params_; }
  const KernelLayout& layout() const { return layout_; }
  const ckks::GaloisKeys& keys() const { return keys_; }

 private:
  explicit RerankCaseBench(const Case& c)
      : c_(c),
        params_(params_for(c.kernel)),
        prng_(Prng::create()),
        evaluator_(params_),
        keygen_(params_),
        sk_(keygen_.create_secret_key(prng_)) {}

  Case c_;
  ckks::Params params_;
  Prng prng_;
  KernelLayout layout_;
  std::optional<ckks::Encoder> encoder_;
  ckks::Evaluator evaluator_;
  ckks::KeyGenerator keygen_;
  ckks::SecretKey sk_;
  ckks::GaloisKeys keys_;
  std::vector<float> rows_;
};

Result<RerankCaseResult> bench_case(const Case& c, const RerankBenchOptions& o) {
  PRIVSEARCH_ASSIGN_OR_RETURN(auto bench, RerankCaseBench::create(c));
  std::vector<double> z;
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto request, bench->request(z));
  // Paper kernels are slow: fewer repetitions (still after a warm-up).
  const bool fast_class = c.kernel == Kernel::kFast || c.kernel == Kernel::kPacked;
  const std::size_t runs = fast_class ? o.runs : std::max<std::size_t>(3, o.runs / 5);
  std::vector<double> server_ms, encode_ms, he_ms;
  KernelResult last;
  std::vector<std::vector<std::uint8_t>> response;
  for (std::size_t r = 0; r < o.warmup + runs; ++r) {
    const auto t0 = SteadyClock::now();
    PRIVSEARCH_ASSIGN_OR_RETURN(response, bench->serve(request, last));
    const double ms = ms_since(t0);
    if (r >= o.warmup) {
      server_ms.push_back(ms);
      encode_ms.push_back(last.encode_ms);
      he_ms.push_back(last.he_ms);
    }
  }
  RerankCaseResult out;
  out.kernel = std::string(kernel_name(c.kernel));
  out.preset = bench->params().name();
  out.dim = c.dim;
  out.k = c.k;
  out.threads = c.threads;
  out.server_ms = eval::describe(server_ms);
  out.encode_ms = eval::describe(encode_ms).median;
  out.he_ms = eval::describe(he_ms).median;
  out.counts = last.counts;
  out.response_ciphertexts = response.size();
  for (const auto& b : response) out.response_bytes += b.size();
  out.request_bytes = request.size();
  out.galois_keys = bench->keys().size();
  out.galois_key_bytes = ckks::serialize_galois_keys(bench->params(), bench->keys()).size();
  out.request_message_bytes = bench->request_message_bytes(request);
  out.response_message_bytes = bench->response_message_bytes(response);
  out.client_decrypt_ms =
      time_runs(1, 20, [&] { (void)bench->client_decrypt(response).value(); }).median_us / 1000.0;
  std::vector<double> z_scratch;
  out.client_encrypt_ms =
      time_runs(1, 20, [&] { (void)bench->request(z_scratch).value(); }).median_us / 1000.0;
  // Correctness after timing.
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto scores, bench->client_decrypt(response));
  const auto expected = bench->plain_scores(z);
  for (std::size_t i = 0; i < c.k; ++i) {
    out.max_abs_error = std::fmax(out.max_abs_error, std::fabs(scores[i] - expected[i]));
  }
  out.top10_queries = fast_class ? o.order_queries : std::min<std::size_t>(o.order_queries, 10);
  PRIVSEARCH_ASSIGN_OR_RETURN(const std::size_t matches, bench->order_matches(out.top10_queries));
  out.top10_order_match = static_cast<double>(matches) / static_cast<double>(out.top10_queries);
  if (c.kernel == Kernel::kFast) {
    const auto& l = bench->layout();
    out.layout = RerankCaseResult::Layout{l.period(), l.width(), l.windows(),
                                          l.blocks(), l.baby(),  l.giant()};
  }
  return out;
}

std::vector<Case> cases_for(const RerankBenchOptions& o) {
  std::vector<Case> cases;
  if (o.kernels.empty() && o.dims.empty() && o.ks.empty()) {
    for (Kernel k :
         {Kernel::kNaive, Kernel::kGrouped, Kernel::kOneResponse, Kernel::kFast, Kernel::kPacked}) {
      cases.push_back({k, 672, 100});
    }
    for (std::size_t k : {20, 200}) cases.push_back({Kernel::kFast, 672, k});
    for (std::size_t d : {192, 384, 768}) cases.push_back({Kernel::kFast, d, 100});
    // The provider's default: the fast kernel on two threads.
    for (std::size_t k : {20, 200, 1024}) cases.push_back({Kernel::kPacked, 672, k});
    // The provider's default: two kernel threads.
    for (Kernel k : {Kernel::kFast, Kernel::kPacked}) {
      if (o.threads.empty()) cases.push_back({k, 672, 100, 2});
      for (std::size_t t : o.threads) {
        if (t != 1) cases.push_back({k, 672, 100, t});
      }
    }
    return cases;
  }
  std::vector<Kernel> kernels;
  for (const auto& name : o.kernels) kernels.push_back(*kernel_from_name(name));
  if (kernels.empty()) kernels = {Kernel::kFast};
  const auto dims = o.dims.empty() ? std::vector<std::size_t>{672} : o.dims;
  const auto ks = o.ks.empty() ? std::vector<std::size_t>{100} : o.ks;
  const auto threads = o.threads.empty() ? std::vector<std::size_t>{1} : o.threads;
  for (Kernel k : kernels) {
    for (std::size_t d : dims) {
      for (std::size_t kk : ks) {
        for (std::size_t t : threads) {
          if (k == Kernel::kFast || k == Kernel::kPacked || t == 1) cases.push_back({k, d, kk, t});
        }
      }
    }
  }
  return cases;
}

}  // namespace

nlohmann::json RerankCaseResult::to_json() const {
  auto r3 = [](double v) { return std::round(v * 1000) / 1000; };
  nlohmann::json j;
  j["kernel"] = kernel;
  j["preset"] = preset;
  j["dim"] = dim;
  j["k"] = k;
  j["threads"] = threads;
  j["server_ms"] = {
      {"median", r3(server_ms.median)}, {"p95", r3(server_ms.p95)}, {"runs", server_ms.count}};
  j["encode_ms"] = r3(encode_ms);
  j["he_ms"] = r3(he_ms);
  j["rotations"] = counts.rotations;
  j["multiply_plain"] = counts.multiply_plain;
  j["rescales"] = counts.rescales;
  j["additions"] = counts.additions;
  j["response_ciphertexts"] = response_ciphertexts;
  j["response_bytes"] = response_bytes;
  j["request_bytes"] = request_bytes;
  j["galois_keys"] = galois_keys;
  j["galois_key_bytes"] = galois_key_bytes;
  j["key_bytes"] = galois_key_bytes;  // per key epoch (the public key only with --flood-bits)
  j["request_message_bytes"] = request_message_bytes;
  j["response_message_bytes"] = response_message_bytes;
  j["client_decrypt_ms"] = std::round(client_decrypt_ms * 1000) / 1000.0;
  j["client_encrypt_ms"] = std::round(client_encrypt_ms * 1000) / 1000.0;
  j["client_ms"] = std::round((client_encrypt_ms + client_decrypt_ms) * 1000) / 1000.0;
  j["max_abs_error"] = max_abs_error;
  j["precision_bits"] = std::round(-std::log2(max_abs_error) * 100) / 100;
  j["top10_order_match"] = top10_order_match;
  j["top10_queries"] = top10_queries;
  if (layout) {
    j["layout"] = {{"period", layout->period},   {"width", layout->width},
                   {"windows", layout->windows}, {"blocks", layout->blocks},
                   {"baby", layout->baby},       {"giant", layout->giant}};
  }
  return j;
}

nlohmann::json RerankBenchResult::to_json() const {
  nlohmann::json out;
  out["suite"] = "rerank";
  out["machine"] = machine;
  out["note"] =
      "server_ms = query deserialize + plaintext encode + evaluation + response serialize; "
      "paper kernels on paper-n8192 with full ciphertexts, fast kernel on rerank-n8192 with a "
      "compact response, packed kernel on packed-n4096 with c1 and the score coefficients of c0; "
      "request/response_bytes: the ciphertexts, *_message_bytes: the rerank messages around "
      "them; client_ms = client_encrypt_ms + client_decrypt_ms; `threads`: the kernel's (the "
      "provider's --kernel-threads)";
  out["results"] = nlohmann::json::array();
  for (const auto& r : results) out["results"].push_back(r.to_json());
  return out;
}

Result<RerankBenchResult> run_rerank_bench(const RerankBenchOptions& o) {
  for (const auto& name : o.kernels) PRIVSEARCH_RETURN_IF_ERROR(kernel_from_name(name).status());
  RerankBenchResult out;
  out.machine = machine_description();
  for (const auto& c : cases_for(o)) {
    PRIVSEARCH_ASSIGN_OR_RETURN(auto r, bench_case(c, o));
    out.results.push_back(std::move(r));
  }
  return out;
}

}  // namespace privsearch::tools

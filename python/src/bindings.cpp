// The `privsearch._privsearch` extension module (pybind11): the C++ library behind the Python
// package `privsearch` (python/privsearch/__init__.py holds the documented API and its .pyi).
//
// What crosses the boundary and how:
//  - query vectors: a C-contiguous float32 array is read in place (no copy); any other real
//    array (float64, integers, strided views) is converted once by numpy (forcecast). Complex,
//    object and string arrays, a wrong dimension and NaN/Inf values are refused with
//    InvalidArgumentError before any work;
//  - the GIL is released for everything that waits or computes (network, CKKS, PIR, builds),
//    so other Python threads run meanwhile;
//  - a Status that is not ok becomes the matching privsearch.Error subclass (privsearch/errors.py)
//    carrying the status code and, for a provider's refusal, its typed error code.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/payload_fetcher.h"
#include "client/provider_client.h"
#include "client/search_client.h"
#include "harness/spawned_provider.h"
#include "index/artifacts/artifact_names.h"
#include "index/artifacts/exact_store.h"
#include "index/artifacts/manifest.h"
#include "index/build.h"
#include "scoring/build.h"
#include "version/index_version.h"

namespace py = pybind11;

namespace privsearch::python {
namespace {

// Raises the privsearch.Error subclass for `s` (never returns).
[[noreturn]] void raise(const Status& s) {
  py::gil_scoped_acquire gil;
  const py::object errors = py::module_::import("privsearch.errors");
  const py::object error =
      errors.attr("from_status")(std::string(status_code_name(s.code())), s.message());
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw py::error_already_set();
}

template <typename T>
T value_or_raise(Result<T> r) {
  if (!r.ok()) raise(r.status());
  return std::move(r).value();
}

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

// A real-valued array as float32 rows of `dim` (0: any); refused before any work otherwise.
FloatArray as_rows(const py::array& input, std::size_t dim, const char* what) {
  const char kind = input.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u') {
    raise(Status(StatusCode::kInvalidArgument,
                 std::string(what) +
                     ": expected a real-valued array (float32, float64 or "
                     "integers), got dtype " +
                     std::string(py::str(input.dtype()))));
  }
  if (input.ndim() != 1 && input.ndim() != 2) {
    raise(Status(StatusCode::kInvalidArgument,
                 std::string(what) + ": expected one vector (1-D) or one per row (2-D), got " +
                     std::to_string(input.ndim()) + " dimensions"));
  }
  FloatArray a = FloatArray::ensure(input);  // no copy for C-contiguous float32
  const std::size_t cols = static_cast<std::size_t>(a.shape(a.ndim() - 1));
  if (dim != 0 && cols != dim) {
    raise(Status(StatusCode::kInvalidArgument,
                 std::string(what) + " of dimension " + std::to_string(cols) +
                     "; the index was built from vectors of dimension " + std::to_string(dim)));
  }
  const float* p = a.data();
  for (py::ssize_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(p[i])) {
      raise(Status(StatusCode::kInvalidArgument,
                   std::string(what) + ": value " + std::to_string(i) + " is NaN or infinite"));
    }
  }
  return a;
}

py::dict manifest_summary(const index::Manifest& m) {
  py::dict d;
  d["version"] = m.version_id;
  d["documents"] = m.documents;
  d["input_dim"] = m.input_dim;
  d["dim"] = m.dim;
  d["pq_m"] = m.pq_m;
  d["encoder"] = m.encoder_id;
  return d;
}

// Builds with the GIL released; the manifest's summary.
py::dict run_build(index::BuildOptions& o, bool access_private) {
  if (access_private) {
    scoring::ScoringBuildOptions so;
    so.seed = o.seed;
    o.extra_artifacts = scoring::scoring_artifacts_for_build(so);
  }
  Result<index::Manifest> man = Status(StatusCode::kInternal, "not built");
  {
    py::gil_scoped_release nogil;
    man = index::build_index(o, nullptr);
  }
  return manifest_summary(value_or_raise(std::move(man)));
}

py::dict build_from_vectors(const std::filesystem::path& out, const py::array& vectors,
                            std::optional<std::vector<std::string>> ids,
                            std::optional<std::vector<std::string>> payloads, std::size_t dim,
                            std::size_t pq_m, std::size_t record_bytes, std::uint64_t seed,
                            bool access_private) {
  const FloatArray a = as_rows(vectors, 0, "doc_vectors");
  if (a.ndim() != 2 || a.shape(0) == 0) {
    raise(Status(StatusCode::kInvalidArgument,
                 "doc_vectors: expected a 2-D array, one row per "
                 "document"));
  }
  const auto rows = static_cast<std::size_t>(a.shape(0));
  if (ids && ids->size() != rows) {
    raise(Status(StatusCode::kInvalidArgument,
                 std::to_string(ids->size()) + " ids for " + std::to_string(rows) + " vectors"));
  }
  if (payloads && payloads->size() != rows) {
    raise(Status(StatusCode::kInvalidArgument, std::to_string(payloads->size()) + " payloads for " +
                                                   std::to_string(rows) + " vectors"));
  }
  index::Matrix m;
  m.rows = rows;
  m.cols = static_cast<std::size_t>(a.shape(1));
  m.data.assign(a.data(), a.data() + a.size());
  std::vector<index::Document> docs(rows);
  // Payloads are bytes, stored byte for byte (no title, so the record is exactly them); one
  // that does not fit its record is refused rather than cut.
  const std::size_t room = record_bytes >= 4 ? record_bytes - 4 : 0;
  for (std::size_t i = 0; i < rows; ++i) {
    docs[i].id = ids ? (*ids)[i] : std::to_string(i);
    if (!payloads) continue;
    if ((*payloads)[i].size() > room) {
      raise(Status(StatusCode::kInvalidArgument,
                   "payloads[" + std::to_string(i) + "] has " +
                       std::to_string((*payloads)[i].size()) + " bytes; records of " +
                       std::to_string(record_bytes) + " bytes hold " + std::to_string(room) +
                       ": raise record_bytes"));
    }
    docs[i].text = (*payloads)[i];
  }
  index::BuildOptions o;
  o.out = out;
  o.vectors = &m;
  o.documents = &docs;
  o.encoder_id = "python";
  o.dim = dim;
  o.pq_m = pq_m;
  o.record_bytes = record_bytes;
  o.seed = seed;
  return run_build(o, access_private);
}

py::dict build_from_collection(const std::filesystem::path& out,
                               const std::filesystem::path& collection, const std::string& encoder,
                               std::size_t dim, std::uint64_t seed, bool access_private) {
  index::BuildOptions o;
  o.out = out;
  o.collection = collection;
  o.encoder = encoder;
  o.dim = dim;
  o.seed = seed;
  return run_build(o, access_private);
}

// The provider process (privsearch-provider), stopped by its pid.
class Provider {
 public:
  Provider(const std::filesystem::path& binary, const std::filesystem::path& index_dir,
           const std::filesystem::path& work_dir, std::vector<std::string> args,
           int start_timeout_s) {
    tools::ProviderLaunch l(index_dir, work_dir, std::move(args));
    l.binary = binary;
    l.start_timeout = std::chrono::seconds(start_timeout_s);
    l.log_file = work_dir / "provider.log";
    py::gil_scoped_release nogil;
    p_ = value_or_raise(tools::SpawnedProvider::start(l));
  }
  int pid() const { return p_ ? p_->pid() : -1; }
  int port() const { return p_ ? p_->port() : 0; }
  std::string fingerprint() const { return p_ ? p_->fingerprint() : ""; }
  bool running() const { return p_ != nullptr; }
  int stop() {
    if (!p_) return -1;
    py::gil_scoped_release nogil;
    const int status = p_->stop();
    p_.reset();
    return status;
  }

 private:
  std::unique_ptr<tools::SpawnedProvider> p_;
};

struct Hits {
  py::array_t<std::int64_t> ids;
  py::array_t<float> scores;
};

// A client: the index's public artifacts, the pinned connection, the secret key (never leaves
// this object), and a private fetcher made on first use.
class Client {
 public:
  Client(const std::filesystem::path& index_dir, const std::string& host, std::uint16_t port,
         const std::string& fingerprint, const std::string& ca_pem, const std::string& token,
         int deadline_ms, bool pir_test_params, const std::filesystem::path& trust_key,
         const std::filesystem::path& seen_versions, const std::string& candidate_index,
         const std::filesystem::path& list_cache, bool private_lists, bool constant_list_fetches)
      : pir_test_params_(pir_test_params) {
    client::OpenOptions oo;
    oo.trust = client::IndexTrust{trust_key, seen_versions};
    if (candidate_index == "flat") {
      oo.candidates = client::CandidateIndex::kFlat;
    } else if (candidate_index == "ivf") {
      oo.candidates = client::CandidateIndex::kIvf;
    } else if (candidate_index != "auto") {
      raise(Status(StatusCode::kInvalidArgument,
                   "candidate_index `" + candidate_index + "`: auto, flat or ivf"));
    }
    oo.list_cache = list_cache;
    oo.private_lists = private_lists;
    oo.constant_list_fetches = constant_list_fetches;
    oo.allow_insecure_pir = pir_test_params;
    client::ConnectOptions co;
    co.host = host;
    co.port = port;
    co.pinned_fingerprint = fingerprint;
    co.ca_pem = ca_pem;
    co.bearer_token = token;
    co.deadline_ms = deadline_ms;
    py::gil_scoped_release nogil;
    auto transport = value_or_raise(client::ProviderClient::connect(co));
    sc_ = value_or_raise(client::SearchClient::open(index_dir, std::move(transport), oo));
  }

  std::size_t input_dim() const { return sc_->input_dim(); }
  std::size_t dim() const { return sc_->dim(); }
  const std::string& artifact_version() const { return sc_->artifact_version(); }

  // One (ids, scores) per row of `queries` (a 1-D array is one query).
  // clusters = 0: candidate mode; m > 0: access-private search over m clusters.
  std::vector<std::pair<py::array, py::array>> search(const py::array& queries, std::size_t k,
                                                      std::size_t top, std::size_t clusters,
                                                      std::size_t nprobe) {
    const FloatArray a = as_rows(queries, sc_->input_dim(), "query vector");
    const std::size_t rows = a.ndim() == 1 ? 1 : static_cast<std::size_t>(a.shape(0));
    const std::size_t cols = sc_->input_dim();
    const client::SearchOptions so = options(k, top, clusters, nprobe);
    std::vector<client::SearchResult> results;
    {
      py::gil_scoped_release nogil;
      for (std::size_t r = 0; r < rows; ++r) {
        const std::span<const float> q(a.data() + r * cols, cols);
        results.push_back(value_or_raise(sc_->search(client::Query::vector(q), so)));
      }
    }
    return to_python(results);
  }

  std::pair<py::array, py::array> search_text(const std::string& text, std::size_t k,
                                              std::size_t top, std::size_t clusters,
                                              std::size_t nprobe) {
    const client::SearchOptions so = options(k, top, clusters, nprobe);
    std::vector<client::SearchResult> results;
    {
      py::gil_scoped_release nogil;
      results.push_back(value_or_raise(sc_->search(client::Query::text(text), so)));
    }
    return to_python(results).front();
  }

  // The projected query (what the provider's exact rows are compared with), for evaluation.
  py::array project(const py::array& query) {
    const FloatArray a = as_rows(query, sc_->input_dim(), "query vector");
    if (a.ndim() != 1) raise(Status(StatusCode::kInvalidArgument, "project: one 1-D vector"));
    const auto z = sc_->project_vector(std::span(a.data(), sc_->input_dim()));
    return py::array_t<float>(static_cast<py::ssize_t>(z.size()), z.data());
  }

  // The payload's bytes as stored (any bytes: NUL, invalid UTF-8), never decoded here.
  // Each row's document id (the corpus _id), from the signed table the client holds.
  std::vector<std::string> document_ids(const std::vector<std::uint64_t>& rows) const {
    std::vector<std::string> out;
    out.reserve(rows.size());
    for (const auto row : rows) out.push_back(sc_->document_id(row));
    return out;
  }

  py::bytes fetch(std::uint64_t doc) {
    std::string payload;
    {
      py::gil_scoped_release nogil;
      // Threads share one fetcher, made once (the fetcher serializes its own fetches).
      std::lock_guard lock(fetcher_mu_);
      if (!fetcher_) {
        client::FetchOptions fo;
        fo.allow_insecure = pir_test_params_;
        auto shape = sc_->payload_shape();
        if (!shape.ok() && shape.status().code() != StatusCode::kNotFound) raise(shape.status());
        if (shape.ok()) fo.expected_shape = *shape;
        fetcher_ = value_or_raise(
            client::PayloadFetcher::create(sc_->transport(), sc_->artifact_version(), fo));
      }
      payload = value_or_raise(fetcher_->fetch(doc));
    }
    return py::bytes(payload);
  }

  double last_search_ms() const { return last_total_ms_; }

 private:
  // clusters = 0: candidate mode (the CKKS rerank); m > 0: access-private over m clusters.
  static client::SearchOptions options(std::size_t k, std::size_t top, std::size_t clusters,
                                       std::size_t nprobe) {
    client::SearchOptions so;
    if (clusters > 0) so = client::access_private_search(clusters);
    so.candidates = k;
    so.top = top;
    so.nprobe = nprobe;
    return so;
  }
  std::vector<std::pair<py::array, py::array>> to_python(
      const std::vector<client::SearchResult>& results) {
    py::gil_scoped_acquire gil;
    std::vector<std::pair<py::array, py::array>> out;
    for (const auto& r : results) {
      py::array_t<std::int64_t> ids(static_cast<py::ssize_t>(r.hits.size()));
      py::array_t<float> scores(static_cast<py::ssize_t>(r.hits.size()));
      auto i = ids.mutable_unchecked<1>();
      auto s = scores.mutable_unchecked<1>();
      for (std::size_t h = 0; h < r.hits.size(); ++h) {
        i(static_cast<py::ssize_t>(h)) = static_cast<std::int64_t>(r.hits[h].doc);
        s(static_cast<py::ssize_t>(h)) = static_cast<float>(r.hits[h].score);
      }
      last_total_ms_ = r.timing.total_ms;
      out.emplace_back(std::move(ids), std::move(scores));
    }
    return out;
  }

  bool pir_test_params_;
  std::unique_ptr<client::SearchClient> sc_;
  std::mutex fetcher_mu_;
  std::unique_ptr<client::PayloadFetcher> fetcher_;
  double last_total_ms_ = 0;
};

// The index's projected document vectors (the provider's exact store): for evaluating results
// against exact inner products in numpy. Evaluation only: a client never has them.
py::array projected_documents(const std::filesystem::path& index_dir) {
  const auto v = value_or_raise(version::IndexVersion::open(index_dir, version::tool_spec()));
  auto store = value_or_raise(v.exact_store());
  py::array_t<float> out(
      {static_cast<py::ssize_t>(store.rows()), static_cast<py::ssize_t>(store.cols())});
  float* p = out.mutable_data();
  for (std::size_t r = 0; r < store.rows(); ++r) {
    std::copy(store.row(r), store.row(r) + store.cols(), p + r * store.cols());
  }
  return out;
}

}  // namespace
}  // namespace privsearch::python

PYBIND11_MODULE(_privsearch, m) {
  using namespace privsearch::python;
  m.doc() = "privsearch C++ core (use the `privsearch` package)";
  m.attr("default_provider_binary") = std::string(PRIVSEARCH_PROVIDER_BIN);
  m.def("build_from_vectors", &build_from_vectors, py::arg("out_dir"), py::arg("doc_vectors"),
        py::arg("ids"), py::arg("payloads"), py::arg("dim"), py::arg("pq_m"),
        py::arg("record_bytes"), py::arg("seed"), py::arg("access_private"));
  m.def("build_from_collection", &build_from_collection, py::arg("out_dir"), py::arg("collection"),
        py::arg("encoder"), py::arg("dim"), py::arg("seed"), py::arg("access_private"));
  m.def("projected_documents", &projected_documents, py::arg("index_dir"));
  py::class_<Provider>(m, "ProviderProcess")
      .def(py::init<const std::filesystem::path&, const std::filesystem::path&,
                    const std::filesystem::path&, std::vector<std::string>, int>(),
           py::arg("binary"), py::arg("index_dir"), py::arg("work_dir"), py::arg("args"),
           py::arg("start_timeout_s"))
      .def_property_readonly("pid", &Provider::pid)
      .def_property_readonly("port", &Provider::port)
      .def_property_readonly("fingerprint", &Provider::fingerprint)
      .def_property_readonly("running", &Provider::running)
      .def("stop", &Provider::stop);
  py::class_<Client>(m, "SearchClient")
      .def(py::init<const std::filesystem::path&, const std::string&, std::uint16_t,
                    const std::string&, const std::string&, const std::string&, int, bool,
                    const std::filesystem::path&, const std::filesystem::path&, const std::string&,
                    const std::filesystem::path&, bool, bool>(),
           py::arg("index_dir"), py::arg("host"), py::arg("port"), py::arg("fingerprint"),
           py::arg("ca_pem"), py::arg("token"), py::arg("deadline_ms"), py::arg("pir_test_params"),
           py::arg("trust_key"), py::arg("seen_versions"), py::arg("candidate_index"),
           py::arg("list_cache"), py::arg("private_lists"), py::arg("constant_list_fetches"))
      .def_property_readonly("input_dim", &Client::input_dim)
      .def_property_readonly("dim", &Client::dim)
      .def_property_readonly("artifact_version", &Client::artifact_version)
      .def_property_readonly("last_search_ms", &Client::last_search_ms)
      .def("search", &Client::search, py::arg("queries"), py::arg("k"), py::arg("top"),
           py::arg("clusters"), py::arg("nprobe"))
      .def("search_text", &Client::search_text, py::arg("text"), py::arg("k"), py::arg("top"),
           py::arg("clusters"), py::arg("nprobe"))
      .def("project", &Client::project, py::arg("query"))
      .def("fetch", &Client::fetch, py::arg("doc"))
      .def("document_ids", &Client::document_ids, py::arg("rows"));
}

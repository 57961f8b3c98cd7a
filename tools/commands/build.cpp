// `privsearch build`: index a BEIR collection (offline build of index/build.h).
#include "index/build.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "commands/command.h"
#include "index/artifacts/manifest_signature.h"
#include "scoring/build.h"

namespace privsearch::tools {

namespace {

// What the index is built from and its shape: the collection, vectors or encoder, d', PQ.
void add_input_options(CLI::App* cmd, index::BuildOptions& o) {
  cmd->add_option("--collection", o.collection,
                  "BEIR directory (corpus.jsonl, queries.jsonl, qrels/)")
      ->required()
      ->check(CLI::ExistingDirectory);
  auto* vectors_opt =
      cmd->add_option("--doc-vectors", o.doc_vectors,
                      "Document embeddings: .npy (float32/float64, C order) or .fvecs (default: "
                      "none, use the built-in encoder)")
          ->check(CLI::ExistingFile);
  cmd->add_option("--encoder", o.encoder,
                  "Built-in encoder when no --doc-vectors are given (default lexical: BM25 under a "
                  "seeded 2048-d projection; glove-idf / glove-sif: GloVe 100-d word vectors from "
                  "`make glove`; saved in the index for queries)")
      ->excludes(vectors_opt)
      ->check(CLI::IsMember({"lexical", "glove-idf", "glove-sif"}));
  cmd->add_option("--word-vectors", o.word_vectors,
                  "Word-vector file for the glove encoders (default $PRIVSEARCH_CACHE or "
                  "~/.cache/privsearch/glove-6b-100d.pswv; clients load the same file)");
  cmd->add_option("--doc-ids", o.doc_ids,
                  "One document id per vector row (default: rows in corpus order)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", o.out, "Index directory to write")->required();
  cmd->add_option("--dim", o.dim, "Projected dimension d' (default 672)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--pq-m", o.pq_m, "PQ subquantizers (default d'/8)");
  cmd->add_option("--seed", o.seed, "Seed of the samples and of the PQ training");
  cmd->add_option("--encoder-id", o.encoder_id,
                  "Name of the model that produced the vectors (recorded in the manifest)");
}

// The IVF index (`ivf` is on, off or auto) and the exact store's value type.
void add_ivf_options(CLI::App* cmd, index::BuildOptions& o, std::string& ivf) {
  cmd->add_option("--ivf", ivf,
                  "IVF-partitioned public index (clients fetch the lists they probe instead of "
                  "downloading every code): on, off, or auto = on from 2,000,000 documents "
                  "(default auto)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd->add_option("--ivf-lists", o.ivf_lists, "IVF lists (default N / 250)")
      ->check(CLI::Range(1, 1 << 22));
  cmd->add_option("--ivf-route-dim", o.ivf_route_dim,
                  "Coordinates of the projected vectors the IVF centroids keep and route on (a "
                  "prefix of the nested SVD basis; default 128, capped at d')")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--ivf-spill", o.ivf_spill,
                  "Lists each document is put in (its best ones; default 2: finds documents near "
                  "list boundaries with fewer probes, at that many times the list bytes)")
      ->check(CLI::Range(1, 8));
  cmd->add_option("--ivf-pq-m", o.ivf_pq_m,
                  "Subquantizers (bytes per document) of the IVF lists' own PQ codes (default: the "
                  "flat artifact's; fewer: fewer bytes per fetched list, coarser candidates)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option_function<std::string>(
         "--record-bytes",
         [&o](const std::string& v) { o.record_bytes = v == "auto" ? 0 : std::stoul(v); },
         "Bytes per payload record, what one private fetch returns (default 2048), or `auto`: "
         "the smallest size that keeps every document whole. A longer document is cut; the "
         "build says how many were and what `auto` would cost")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "auto") return {};
            const bool digits = !v.empty() && v.size() < 8 &&
                                v.find_first_not_of("0123456789") == std::string::npos;
            if (digits && std::stoul(v) >= 64 && std::stoul(v) <= (1u << 20)) return {};
            return "--record-bytes wants auto or a size in [64, 1048576]";
          },
          "auto|64..1048576"));
  cmd->add_option("--store-dtype", o.store_dtype,
                  "Value type of the provider's exact store: float32 (default) or float16 (half "
                  "the disk and page cache; rerank scores from rows rounded to 11 bits)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, index::StoreDtype>{
          {"float32", index::StoreDtype::kFloat32}, {"float16", index::StoreDtype::kFloat16}}));
}

// The access-private scoring database.
void add_scoring_options(CLI::App* cmd, scoring::ScoringBuildOptions& scoring, bool& no_private) {
  cmd->add_flag("--no-access-private", no_private,
                "Skip the access-private scoring database (clients then have candidate mode "
                "only); it adds a clustering pass and an LWE hint (R x 2048 products)");
  cmd->add_option("--private-dim", scoring.dim,
                  "Coordinates per document in the access-private scoring matrix (default 672, "
                  "capped at d'; fewer is cheaper per query and loses quality)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--cluster-rows", scoring.cluster_rows,
                  "Documents per access-private cluster (default 4 sqrt(N) within [64, 4096])")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--score-bits", scoring.score_bits,
                  "Access-private plaintext modulus bits log p (default 14: every score exact, "
                  "answers of 15 bits; more keeps a finer query at a wider answer)")
      ->check(CLI::Range(8u, 20u));
}

struct Signing {
  std::filesystem::path key, parent;
};

int run_build(index::BuildOptions& o, scoring::ScoringBuildOptions& scoring, bool no_private,
              const Signing& signing, const std::string& ivf) {
  if (ivf != "auto") o.ivf = ivf == "on";
  const Progress progress;
  std::optional<index::Ed25519SigningKey> key;
  if (!signing.key.empty()) {  // before the build: a bad key fails in a second
    auto k = index::Ed25519SigningKey::load(signing.key);
    if (!k.ok()) return fail(k.status(), "build");
    key.emplace(std::move(k).value());
  } else if (!signing.parent.empty()) {
    return fail(invalid_argument_error("--parent needs --signing-key"), "build");
  }
  if (!no_private) {
    scoring.seed = o.seed;
    o.extra_artifacts = scoring::scoring_artifacts_for_build(scoring);
  }
  // Signed in the staging directory, before it replaces --out (which may be the --parent).
  std::optional<index::Manifest> signed_manifest;
  if (key) {
    o.before_commit = [&](const std::filesystem::path& staged) -> Status {
      PRIVSEARCH_ASSIGN_OR_RETURN(signed_manifest, index::sign_index(staged, *key, signing.parent));
      return Status();
    };
  }
  auto result = index::build_index(o, progress.callback());
  if (!result.ok()) return fail(result.status(), "build");
  fmt::print("index written to {}: {} documents, d' = {}, M = {}, version {}\n", o.out.string(),
             result->documents, result->dim, result->pq_m, result->version_id.substr(0, 16));
  if (signed_manifest) fmt::print("{}", signed_summary(o.out, *signed_manifest, *key));
  return 0;
}

}  // namespace

Command add_build_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "build",
      "Build the index of a BEIR collection from document embeddings or the built-in encoder: SVD "
      "projection, private exact store, public PQ artifact, payload store, manifest");
  auto o = std::make_shared<index::BuildOptions>();
  add_input_options(cmd, *o);
  auto ivf = std::make_shared<std::string>("auto");
  add_ivf_options(cmd, *o, *ivf);
  auto scoring = std::make_shared<scoring::ScoringBuildOptions>();
  auto no_private = std::make_shared<bool>(false);
  add_scoring_options(cmd, *scoring, *no_private);
  auto signing = std::make_shared<Signing>();
  cmd->add_option("--signing-key", signing->key,
                  "Sign the new index version with this key (keygen-signing) when the build is "
                  "done, as `privsearch sign` does")
      ->check(CLI::ExistingFile);
  cmd->add_option("--parent", signing->parent,
                  "With --signing-key: the index version this one replaces (sequence = its + 1)")
      ->check(CLI::ExistingDirectory);
  return {cmd, [o, scoring, no_private, signing, ivf] {
            return run_build(*o, *scoring, *no_private, *signing, *ivf);
          }};
}

}  // namespace privsearch::tools

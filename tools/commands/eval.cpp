// `privsearch eval`: the retrieval-quality ladder, its encrypted rung, the paper's sweeps, and
// the self-retrieval scale track.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ckks/param_sets.h"
#include "commands/command.h"
#include "eval/ladder.h"
#include "eval/sweep.h"
#include "experiments/eval_encrypted.h"
#include "experiments/eval_private.h"
#include "experiments/eval_self_retrieval.h"
#include "experiments/report_html.h"
#include "experiments/reports.h"
#include "index/encoders/beir.h"

namespace privsearch::tools {
namespace {

struct EvalArgs {
  std::filesystem::path dataset, html;
  eval::LadderOptions ladder;
  bool encrypted = false, sweep = false;
  EncryptedEvalOptions encrypted_options;
  SelfRetrievalOptions self;
  std::size_t self_docs = 0;
  bool access_private = false;
  std::filesystem::path index_dir;
  PrivateEvalOptions private_options;
};

int run_eval(EvalArgs& a) {
  const Progress progress;
  if (a.self_docs != 0) {
    a.self.docs = a.self_docs;
    auto r = run_self_retrieval(a.self, progress.callback());
    if (!r.ok()) return fail(r.status(), "eval");
    std::cout << r->to_json().dump(2) << std::endl;
    return 0;
  }
  if (a.dataset.empty()) {
    return fail(invalid_argument_error("eval needs --dataset DIR (or --self-retrieval N)"), "eval");
  }
  if (a.access_private) {
    auto dir = a.index_dir.empty()
                   ? ensure_private_eval_index(a.dataset, a.ladder.encoder, a.ladder.dim,
                                               a.private_options.scoring, progress.callback())
                   : Result<std::filesystem::path>(a.index_dir);
    if (!dir.ok()) return fail(dir.status(), "eval");
    a.private_options.k = a.ladder.k;
    auto r = run_private_eval(*dir, a.dataset, a.private_options, progress.callback());
    if (!r.ok()) return fail(r.status(), "eval");
    std::cout
        << nlohmann::json{{"dataset", a.dataset.string()}, {"access_private", r->to_json()}}.dump(2)
        << std::endl;
    return r->encrypted_mismatches == 0 ? 0 : 1;
  }
  progress("loading " + a.dataset.string());
  auto collection = index::load_collection(a.dataset);
  if (!collection.ok()) return fail(collection.status(), "eval");
  if (a.sweep) {
    auto sweep = eval::run_sweep(*collection, eval::SweepOptions{}, progress.callback());
    if (!sweep.ok()) return fail(sweep.status(), "eval");
    return write_and_print(SweepReport{a.dataset.string(), std::move(sweep).value()}, a.html,
                           progress, "eval");
  }
  auto ladder = eval::run_ladder(*collection, a.ladder, progress.callback());
  if (!ladder.ok()) return fail(ladder.status(), "eval");
  EvalReport report{a.dataset.string(), std::move(ladder).value(), std::nullopt};
  if (a.encrypted) {
    a.encrypted_options.k = a.ladder.k;
    a.encrypted_options.dim = a.ladder.dim;
    a.encrypted_options.resamples = a.ladder.resamples;
    auto enc = run_encrypted_eval(*collection, a.dataset, a.encrypted_options, progress.callback());
    if (!enc.ok()) return fail(enc.status(), "eval");
    report.encrypted = std::move(enc).value();
  }
  return write_and_print(report, a.html, progress, "eval");
}

// The other runs than the ladder: encrypted, self-retrieval, the sweeps; the HTML report.
void add_mode_options(CLI::App* cmd, EvalArgs* a) {
  cmd->add_flag("--encrypted", a->encrypted,
                "Add the encrypted rerank through a real provider process (index built under "
                "build/eval-encrypted) and the CKKS-vs-plaintext decision (+-0.002)");
  cmd->add_option("--self-retrieval", a->self_docs,
                  "Run the self-retrieval scale track on N synthetic 768-d documents instead "
                  "(1000000 uses the index cached by `bench e2e`; ~7 min to build once)")
      ->check(CLI::Range(1000, 100000000));
  cmd->add_option("--self-noise", a->self.noise,
                  "Self-retrieval: query noise, q = unit(x + noise g), g from three other "
                  "documents (default 0.7)")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--html", a->html,
                  "Also write a self-contained HTML report (tables and SVG charts) here");
  cmd->add_flag("--sweep", a->sweep,
                "Run the paper's sweeps instead of the ladder: nested SVD dimensions, the joint PQ "
                "curve (M = d'/8), K in {20, 50, 100, 200}, M sensitivity and the projection "
                "controls, on a seeded validation/test split");
}

// The access-private comparison's options and the encrypted run's.
void add_private_and_encrypted_options(CLI::App* cmd, EvalArgs* a) {
  cmd->add_flag("--access-private", a->access_private,
                "Compare access-private search (m whole clusters scored under LWE) with candidate "
                "mode on the same judged queries: nDCG@10 of each, the share of relevant documents "
                "inside the chosen clusters, and every query's scores through the real LWE path "
                "checked against the plaintext integers");
  cmd->add_option("--index", a->index_dir,
                  "With --access-private: an index built with the scoring database (default: one "
                  "built once under build/eval-private/)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--clusters", a->private_options.m,
                  "With --access-private: clusters scored per query (m, default 8)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--private-dim", a->private_options.scoring.dim,
                  "With --access-private and no --index: coordinates per document in the scoring "
                  "matrix (default 672)");
  cmd->add_option("--score-bits", a->private_options.scoring.score_bits,
                  "With --access-private and no --index: plaintext modulus bits log p (default "
                  "14; answers take log p + 1 bits)")
      ->check(CLI::Range(8u, 20u));
  cmd->add_option("--preset", a->encrypted_options.preset,
                  "With --encrypted: the provider's CKKS preset, which picks the rerank kernel "
                  "(rerank-n8192: fast, packed-n4096: packed; default: the provider's)")
      ->check(CLI::IsMember(ckks::preset_names()));
  cmd->add_option("--per-query", a->encrypted_options.per_query_jsonl,
                  "With --encrypted: write one JSON line per query to this file");
}

}  // namespace

Command add_eval_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "eval",
      "Retrieval quality ladder on a BEIR collection with a built-in encoder (--encoder): exact "
      "search (raw and projected), PQ-only order, plaintext rerank of the PQ candidates; "
      "nDCG@10, MRR@10, Recall@10/100 with seeded bootstrap 95% intervals");
  auto a = std::make_shared<EvalArgs>();
  cmd->add_option("--dataset", a->dataset, "BEIR directory (required unless --self-retrieval)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--encoder", a->ladder.encoder,
                  "Text encoder: lexical (default), glove-idf, glove-sif (GloVe 6B 100-d word "
                  "vectors; fetch them once with `make glove`), or lexical+glove-sif:W (both, "
                  "scores adding W x the GloVe cosine)");
  cmd->add_option("--word-vectors", a->ladder.word_vectors,
                  "Converted word-vector file (default $PRIVSEARCH_CACHE or "
                  "~/.cache/privsearch/glove-6b-100d.pswv)");
  cmd->add_option("--dim", a->ladder.dim, "Projected dimension d' (default 672)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--k", a->ladder.k, "PQ candidates reranked (default 100)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--resamples", a->ladder.resamples, "Bootstrap resamples (default 10000)")
      ->check(CLI::Range(100, 1000000));
  cmd->add_flag("--json")->description(
      "Print one JSON object (the default and only format; accepted for scripts)");
  add_mode_options(cmd, a.get());
  add_private_and_encrypted_options(cmd, a.get());
  return {cmd, [a] { return run_eval(*a); }};
}

}  // namespace privsearch::tools

// `privsearch audit`: the leakage audits (eval/audit.h) plus the circuit-privacy boundary and,
// on request, the score-oracle extraction through provider processes.
#include "eval/audit.h"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands/command.h"
#include "experiments/audit_circuit.h"
#include "experiments/audit_extraction.h"
#include "experiments/audit_private.h"
#include "experiments/report_html.h"
#include "experiments/reports.h"
#include "index/encoders/beir.h"
#include "rerank/layout.h"

namespace privsearch::tools {
namespace {

struct AuditArgs {
  eval::AuditOptions audit;
  std::filesystem::path dataset, html;
  bool extraction = false;
  int flood_bits = 4;
  bool access_private = false;
  std::filesystem::path index_dir;
  PrivateAuditOptions private_options;
};

int run_audit(const AuditArgs& a) {
  const Progress progress;
  if (a.access_private) {
    auto po = a.private_options;
    po.max_queries = a.audit.max_queries;
    po.seed = a.audit.seed;
    auto r = run_private_audit(a.index_dir, a.dataset, po, progress.callback());
    if (!r.ok()) return fail(r.status(), "audit");
    std::cout
        << nlohmann::json{{"dataset", a.dataset.string()}, {"access_private", r->to_json()}}.dump(2)
        << std::endl;
    return 0;
  }
  progress("loading " + a.dataset.string());
  auto collection = index::load_collection(a.dataset);
  if (!collection.ok()) return fail(collection.status(), "audit");
  auto audit = eval::run_audit(*collection, a.audit, progress.callback());
  if (!audit.ok()) return fail(audit.status(), "audit");
  progress("circuit-privacy boundary (in process, rerank-n8192)");
  auto circuit = run_circuit_privacy_audit(20, 2026, a.flood_bits);
  if (!circuit.ok()) return fail(circuit.status(), "audit");
  AuditReport report{a.dataset.string(), std::move(audit).value(), std::move(circuit).value(),
                     std::nullopt};
  if (a.extraction) {
    ExtractionOptions eo;
    eo.dim = a.audit.dim;
    eo.seed = a.audit.seed;
    auto ex = run_extraction_audit(*collection, a.dataset, eo, progress.callback());
    if (!ex.ok()) return fail(ex.status(), "audit");
    report.extraction = std::move(ex).value();
  }
  return write_and_print(report, a.html, progress, "audit");
}

}  // namespace

Command add_audit_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "audit",
      "Leakage audits of the search paper on a BEIR collection: public-PQ reconstruction "
      "fidelity and what the candidate IDs reveal (centroid, log-rank, ridge estimators; top-K "
      "overlap; linkability AUC with and without the client's permutation), the circuit-privacy "
      "boundary with and without the provider's noise flooding; one JSON object");
  auto a = std::make_shared<AuditArgs>();
  cmd->add_option("--dataset", a->dataset, "BEIR directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--k", a->audit.ks, "Candidate counts K (default 20 50 100 200)")
      ->check(CLI::Range(std::size_t{4}, rerank::kMaxCandidates));
  cmd->add_option("--dim", a->audit.dim, "Projected dimension d' (default 672)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--sample", a->audit.reconstruction_sample,
                  "Documents in the PQ reconstruction sample (default 100000)");
  cmd->add_option("--max-queries", a->audit.max_queries, "Judged queries used (default: all)");
  cmd->add_option("--seed", a->audit.seed, "Seed of samples, shifts and permutations");
  cmd->add_flag("--extraction", a->extraction,
                "Also run the score-oracle extraction through provider processes (budget "
                "disabled, then the default budget; ~30 s)");
  cmd->add_option("--flood-bits", a->flood_bits,
                  "Statistical security of the re-randomized variant in the circuit-privacy "
                  "audit (default 4: what rerank-n8192 affords at K = 8 with ~9 bits left)")
      ->check(CLI::Range(1, 128));
  auto* ap = cmd->add_flag("--access-private", a->access_private,
                           "Audit access-private mode instead: what the provider observes "
                           "(request/response bytes, its time, the ciphertexts) and the "
                           "linkability and neighbourhood estimators on it, next to candidate "
                           "mode on the same queries; needs --index");
  auto* ix = cmd->add_option("--index", a->index_dir,
                             "With --access-private: an index built with the scoring database")
                 ->check(CLI::ExistingDirectory);
  ap->needs(ix);
  cmd->add_option("--clusters", a->private_options.m,
                  "With --access-private: clusters per query (m, default 8)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--html", a->html,
                  "Also write a self-contained HTML report (tables and SVG charts) here");
  cmd->add_flag("--json")->description(
      "Print one JSON object (the default and only format; accepted for scripts)");
  return {cmd, [a] { return run_audit(*a); }};
}

}  // namespace privsearch::tools

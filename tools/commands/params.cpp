// `privsearch params`: a CKKS parameter preset and its checks.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ckks/param_sets.h"
#include "ckks/serialization.h"
#include "commands/command.h"

namespace privsearch::tools {
namespace {

int run_params(const std::string& preset) {
  using namespace privsearch::ckks;
  auto lit = preset_literal(preset);
  if (!lit.ok()) return fail(lit.status(), "params");
  auto params = Params::create(*lit);
  if (!params.ok()) return fail(params.status(), "params");
  std::vector<std::uint64_t> q, p;
  for (const auto& m : params->q_moduli()) q.push_back(m.value());
  for (const auto& m : params->p_moduli()) p.push_back(m.value());
  fmt::print("preset      {}\n", params->name());
  fmt::print("n           {} ({} slots)\n", params->n(), params->slots());
  fmt::print("data primes {}\n", fmt::join(q, ", "));
  fmt::print("special     {}\n", fmt::join(p, ", "));
  fmt::print("log2(QP)    {:.4f} (128-bit bound {})\n", params->log_qp(),
             he_standard_max_log_qp(params->n()));
  fmt::print("scale       2^{}\n", params->log_scale());
  fmt::print("NTT path    {}\n", ring::ntt_path_name(params->ntt(0).default_path()));
  fmt::print("params id   {}\n", params_id_hex(params->id()));
  return 0;
}

}  // namespace

Command add_params_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("params", "Show a CKKS parameter preset and its checks");
  auto preset = std::make_shared<std::string>(ckks::kPaperPresetName);
  cmd->add_option("--preset", *preset, "Preset name")->check(CLI::IsMember(ckks::preset_names()));
  return {cmd, [preset] { return run_params(*preset); }};
}

}  // namespace privsearch::tools

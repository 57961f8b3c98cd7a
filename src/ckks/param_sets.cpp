#include "ckks/param_sets.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace privsearch::ckks {

ParamsLiteral paper_n8192_literal() {
  ParamsLiteral l;
  l.name = std::string(kPaperPresetName);
  l.n = 8192;
  l.q_bits = {60, 40};
  l.p_bits = {60};
  l.log_scale = 40;
  return l;
}

ParamsLiteral ifma_n8192_literal() {
  ParamsLiteral l;
  l.name = std::string(kIfmaPresetName);
  l.n = 8192;
  l.q_bits = {50, 40, 40};
  l.p_bits = {50};
  l.log_scale = 40;
  return l;
}

ParamsLiteral rerank_n8192_literal() {
  ParamsLiteral l;
  l.name = std::string(kRerankPresetName);
  l.n = 8192;
  l.q_bits = {35, 32, 32};
  l.p_bits = {50, 50};
  l.log_scale = 32;
  l.dnum = 1;
  return l;
}

ParamsLiteral packed_n4096_literal() {
  ParamsLiteral l;
  l.name = std::string(kPackedPresetName);
  l.n = 4096;
  l.q_bits = {45};
  l.p_bits = {49};
  l.log_scale = 24;
  return l;
}

ParamsLiteral insecure_test_literal(std::size_t n) {
  ParamsLiteral l;
  l.name = fmt::format("insecure-test-n{}", n);
  l.n = n;
  l.q_bits = {50, 40, 40};
  l.p_bits = {50};
  l.log_scale = 40;
  l.insecure_for_tests = true;
  return l;
}

std::vector<std::string> preset_names() {
  return {std::string(kPaperPresetName), std::string(kIfmaPresetName),
          std::string(kRerankPresetName), std::string(kPackedPresetName)};
}

Result<ParamsLiteral> preset_literal(std::string_view name) {
  if (name == kPaperPresetName) return paper_n8192_literal();
  if (name == kIfmaPresetName) return ifma_n8192_literal();
  if (name == kRerankPresetName) return rerank_n8192_literal();
  if (name == kPackedPresetName) return packed_n4096_literal();
  return not_found_error(fmt::format("unknown CKKS preset `{}`; known presets: {}", name,
                                     fmt::join(preset_names(), ", ")));
}

}  // namespace privsearch::ckks

// The HTML report renders every section it is given, escapes text, and writes atomically.
#include "report_html.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace privsearch::tools {
namespace {

nlohmann::json audit_result() {
  nlohmann::json leak = {{"cosine_mean", 0.6}, {"top10_overlap", 0.5}, {"top100_overlap", 0.6},
                         {"hit10", 0.7},       {"link_auc", 0.99},     {"link_tpr_at_1pct_fpr", 0.3}};
  nlohmann::json dist = {{"mean", 0.9}, {"p05", 0.85}, {"p95", 0.95}};
  return {{"dataset", "<b>data</b>"},
          {"pq_reconstruction",
           {{"sample", 10},
            {"projected", {{"cosine", dist}, {"relative_l2", dist}, {"rmse", 0.1}}},
            {"lifted", {{"cosine", dist}, {"relative_l2", dist}, {"rmse", 0.2}}}}},
          {"candidate_leakage", {{"K=100", {{"centroid", leak}}}, {"K=20", {{"centroid", leak}}}}},
          {"link_auc_set", 0.99},
          {"link_auc_set_permuted", 0.98},
          {"circuit_privacy",
           {{"repeats", 20}, {"fixed_request_unique_response_hashes", 1},
            {"fresh_encryption_unique_response_hashes", 20},
            {"explicit_output_sanitisation_present", false}, {"max_abs_error", 1e-6},
            {"provider_ms_median", 3.1}, {"response_bytes", 65714},
            {"max_flood_bits_8bit_precision", 4}, {"max_flood_bits_12bit_precision", 0},
            {"rerandomized",
             {{"flood_security_bits", 4}, {"fixed_request_unique_response_hashes", 20},
              {"max_abs_error", 6.8e-4}, {"predicted_precision_bits", 8.25},
              {"provider_ms_median", 4.1}, {"response_bytes", 49330},
              {"public_key_bytes", 203848}}}}}};
}

TEST(ReportHtml, RendersSectionsChartsAndEscapes) {
  const auto html = render_report_html("audit", audit_result());
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("Public-PQ reconstruction"), std::string::npos);
  EXPECT_NE(html.find("Circuit-privacy boundary"), std::string::npos);
  EXPECT_NE(html.find("--flood-bits 4"), std::string::npos);
  EXPECT_NE(html.find("203848"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;data&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>data</b>"), std::string::npos);
  EXPECT_LT(html.find("K=20"), html.find("K=100"));  // numeric K order
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(ReportHtml, WritesTheFileAtomically) {
  const auto file = std::filesystem::temp_directory_path() / "privsearch-report-test.html";
  ASSERT_TRUE(write_report_html(file, "audit", audit_result()).ok());
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  EXPECT_EQ(text.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 8), "</html>\n");
  std::filesystem::remove(file);
  EXPECT_FALSE(write_report_html("/nonexistent-dir/x/report.html", "audit", audit_result()).ok());
}

}  // namespace
}  // namespace privsearch::tools

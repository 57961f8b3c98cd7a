// The HTML report renders every section it is given, escapes text, and writes atomically.
#include "experiments/report_html.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tools/report_fixture.h"

namespace privsearch::tools {
namespace {

using testing_support::audit_report;

TEST(ReportHtml, RendersSectionsChartsAndEscapes) {
  const auto html = render_report_html(audit_report());
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
  ASSERT_TRUE(write_report_html(file, audit_report()).ok());
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  EXPECT_EQ(text.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 8), "</html>\n");
  std::filesystem::remove(file);
  EXPECT_FALSE(write_report_html("/nonexistent-dir/x/report.html", audit_report()).ok());
}

}  // namespace
}  // namespace privsearch::tools

namespace privsearch::tools {
namespace {

// The audit report's JSON keeps the field names of the sections scripts read.
TEST(ReportJson, AuditReportKeepsItsFieldNames) {
  const auto j = testing_support::audit_report().to_json();
  EXPECT_EQ(j["dataset"], "<b>data</b>");
  EXPECT_DOUBLE_EQ(j["link_auc_set"].get<double>(), 0.99);
  EXPECT_TRUE(j["candidate_leakage"].contains("K=100"));
  EXPECT_EQ(j["circuit_privacy"]["rerandomized"]["public_key_bytes"], 203848);
  EXPECT_FALSE(j.contains("score_oracle"));  // no extraction run
}

}  // namespace
}  // namespace privsearch::tools

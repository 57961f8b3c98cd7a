#include "core/status.h"

#include <gtest/gtest.h>

namespace privsearch {
namespace {

Result<int> parse_positive(int x) {
  if (x <= 0) return invalid_argument_error("`x` must be positive");
  return x;
}

Result<int> doubled(int x) {
  PRIVSEARCH_ASSIGN_OR_RETURN(int v, parse_positive(x));
  return 2 * v;
}

Status check_both(int a, int b) {
  PRIVSEARCH_RETURN_IF_ERROR(parse_positive(a).status());
  PRIVSEARCH_RETURN_IF_ERROR(parse_positive(b).status());
  return Status();
}

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.to_string(), "OK");
}

TEST(Status, ToStringNamesTheCode) {
  EXPECT_EQ(data_loss_error("truncated").to_string(), "DATA_LOSS: truncated");
  EXPECT_EQ(resource_exhausted_error("x").code(), StatusCode::kResourceExhausted);
}

TEST(Status, WithContextPrefixesTheMessage) {
  const Status s = out_of_range_error("too big").with_context("loading key");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "loading key: too big");
}

TEST(Result, AssignOrReturnPropagatesValuesAndErrors) {
  EXPECT_EQ(*doubled(21), 42);
  const auto r = doubled(-1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(Result, ReturnIfErrorStopsAtTheFirstError) {
  EXPECT_TRUE(check_both(1, 2).ok());
  EXPECT_EQ(check_both(1, -2).code(), StatusCode::kInvalidArgument);
}

TEST(ResultDeathTest, ValueOfAnErrorAborts) {
  EXPECT_DEATH((void)parse_positive(0).value(), "value\\(\\) on an error Result");
}

}  // namespace
}  // namespace privsearch

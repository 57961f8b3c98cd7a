#include "protocol/identities.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "protocol/rate_limiter.h"

namespace privsearch::protocol {
namespace {

struct TokensFile {
  explicit TokensFile(const std::string& text)
      : path(std::filesystem::temp_directory_path() /
             ("privsearch-tokens-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::ofstream(path) << text;
  }
  ~TokensFile() { std::filesystem::remove(path); }
  std::filesystem::path path;
};

TEST(IdentitiesTest, TokensMapToTheirIdentitiesOnly) {
  const std::string alice = new_token(), bob = new_token();
  EXPECT_EQ(alice.size(), 4u + 64u);
  EXPECT_EQ(alice.rfind("pst_", 0), 0u);
  EXPECT_NE(alice, bob);
  TokensFile f("# operators' tokens\n" + token_line("alice", alice) + "\n\n" +
               token_line("bob.svc-1", bob) + "\n");
  const auto reg = TokenRegistry::load(f.path).value();
  EXPECT_EQ(reg.size(), 2u);
  EXPECT_EQ(reg.identity_for(alice), "alice");
  EXPECT_EQ(reg.identity_for(bob), "bob.svc-1");
  EXPECT_EQ(reg.identity_for(alice + "x"), std::nullopt);
  EXPECT_EQ(reg.identity_for(""), std::nullopt);
  // The file holds hashes only: no token appears in it.
  std::ifstream in(f.path);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text.find(alice), std::string::npos);
}

TEST(IdentitiesTest, MalformedFilesAreRefusedNamingTheLine) {
  const std::string h = token_line("x", "t").substr(2);  // a valid hash
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"alice\n", "one field"},
           {"al ice " + h + "\n", "not a 64-digit hex"},
           {"alice zz" + h.substr(2) + "\n", "not a 64-digit hex"},
           {"al/ice " + h + "\n", "identity name"},
           {"alice " + h + "\nalice " + token_line("y", "u").substr(2) + "\n", "listed twice"},
           {"alice " + h + "\nbob " + h + "\n", "token hash listed twice"}}) {
    TokensFile f(text);
    const auto r = TokenRegistry::load(f.path);
    ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(TokenRegistry::load("/nonexistent/tokens").status().code(), StatusCode::kNotFound);
}

TEST(RateLimiterTest, BurstThenRefillAtTheRate) {
  RateLimiter limiter({/*per_minute=*/60, /*burst=*/3});
  EXPECT_EQ(limiter.take_at("a", 100.0), 0.0);
  EXPECT_EQ(limiter.take_at("a", 100.0), 0.0);
  EXPECT_EQ(limiter.take_at("a", 100.0), 0.0);
  EXPECT_NEAR(limiter.take_at("a", 100.0), 1.0, 1e-9);  // one a second
  EXPECT_EQ(limiter.take_at("b", 100.0), 0.0);          // other clients are independent
  EXPECT_NEAR(limiter.take_at("a", 100.5), 0.5, 1e-9);
  EXPECT_EQ(limiter.take_at("a", 101.0), 0.0);
  EXPECT_GT(limiter.take_at("a", 101.0), 0.0);
}

TEST(RateLimiterTest, ZeroRateIsUnlimitedAndMemoryIsBounded) {
  RateLimiter unlimited({0, 1});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(unlimited.take_at("a", 1.0), 0.0);
  RateLimiter bounded({60, 1}, /*max_clients=*/4);
  // Within the bound a limited client stays limited; beyond it the stalest bucket is dropped.
  EXPECT_EQ(bounded.take_at("a", 0.0), 0.0);
  EXPECT_EQ(bounded.take_at("b", 0.1), 0.0);
  EXPECT_GT(bounded.take_at("a", 0.2), 0.0);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(bounded.take_at("x" + std::to_string(i), 0.3 + 1e-3 * i), 0.0);
  }
  EXPECT_EQ(bounded.take_at("a", 0.5), 0.0);  // "a" was forgotten: a new bucket
}

// Per-address limits count an IPv6 host by its /64 (one host routinely holds a whole /64), an
// IPv4-mapped address as its IPv4, and leave IPv4 and anything unparsable as they are.
TEST(AddressGroup, Ipv6CountsPer64AndIpv4AsItIs) {
  EXPECT_EQ(address_group("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(address_group("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  EXPECT_EQ(address_group("2001:db8:1:2::9"), "2001:db8:1:2::/64");  // same /64, same key
  EXPECT_NE(address_group("2001:db8:1:3::9"), address_group("2001:db8:1:2::9"));
  EXPECT_EQ(address_group("::ffff:10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(address_group("::1"), "::/64");
  EXPECT_EQ(address_group("unix:/tmp/x"), "unix:/tmp/x");
  EXPECT_EQ(address_group(""), "");
}

}  // namespace
}  // namespace privsearch::protocol

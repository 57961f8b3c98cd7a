// The budget ledger on a real Redis (Debian's redis-server, started here on a unix socket in a
// temporary directory and stopped by its pid): atomic across replicas, durable across a Redis
// restart (append-only file), closed when Redis is down, and back once it returns.
#include "protocol/redis_ledger.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <limits>
#include <thread>

#include "harness/spawned_redis.h"
#include "protocol/redis_connection.h"

namespace privsearch::protocol {
namespace {

// True when the charge went through (recorded, every account had room).
bool charged(const Result<BudgetCharge>& r) { return r.ok() && r->charged(); }
// The index of the full account of a refused charge (-1: charged or failed).
long full_account(const Result<BudgetCharge>& r) {
  return r.ok() && r->full ? static_cast<long>(*r->full) : -1;
}

constexpr std::int64_t kFar = std::numeric_limits<std::int64_t>::max() / 2;

class RedisLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("privsearch-redis-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    auto r = tools::SpawnedRedis::start(dir);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    redis = std::move(r).value();
  }
  void TearDown() override {
    redis.reset();
    std::filesystem::remove_all(dir);
  }
  std::unique_ptr<BudgetLedger> ledger() {
    auto l = open_redis_ledger(redis->url());
    EXPECT_TRUE(l.ok()) << l.status().to_string();
    return l.ok() ? std::move(l).value() : nullptr;
  }

  std::filesystem::path dir;
  std::unique_ptr<tools::SpawnedRedis> redis;
};

TEST_F(RedisLedgerTest, ChargesCountDownAndAreAllOrNothing) {
  auto l = ledger();
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->where(), redis->url());
  const std::vector<BudgetAccount> both = {{"key:aa", 10, kFar}, {"identity:alice:1", 2, kFar}};
  const auto first = l->charge(both, 1);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(first->remaining, (std::vector<std::uint64_t>{9, 1}));
  EXPECT_EQ(l->charge(both, 1)->remaining, (std::vector<std::uint64_t>{8, 0}));
  const auto full = l->charge(both, 1);
  EXPECT_EQ(full_account(full), 1);              // identity:alice:1
  EXPECT_EQ(l->remaining(both[0]).value(), 8u);  // the refused request charged nothing
  // An account whose expiry has passed is gone: a fresh count.
  const BudgetAccount past{"key:old", 1, 1};
  EXPECT_TRUE(charged(l->charge(std::span(&past, 1), 1)));
  EXPECT_TRUE(charged(l->charge(std::span(&past, 1), 1)));
  // Units: a charge needs room for all of them, atomically in the script.
  const BudgetAccount scores{"key:scores", 1000, kFar};
  EXPECT_EQ(l->charge(std::span(&scores, 1), 600)->remaining, std::vector<std::uint64_t>{400});
  EXPECT_EQ(full_account(l->charge(std::span(&scores, 1), 401)), 0);
  EXPECT_EQ(l->remaining(scores).value(), 400u);
  EXPECT_EQ(l->charge(std::span(&scores, 1), 400)->remaining, std::vector<std::uint64_t>{0});
  EXPECT_EQ(l->charge(std::span(&scores, 1), 0).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RedisLedgerTest, TwoReplicasNeverExceedABudgetTogether) {
  // Two ledgers = two provider replicas; 10^4 concurrent charges against a budget of 1000.
  auto a = ledger(), b = ledger();
  ASSERT_TRUE(a && b);
  const BudgetAccount account{"identity:alice:0", 1000, kFar};
  std::atomic<int> passed{0}, refused{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      BudgetLedger& l = t % 2 == 0 ? *a : *b;
      for (int i = 0; i < 1250; ++i) {
        const auto r = l.charge(std::span(&account, 1), 1);
        if (charged(r)) {
          ++passed;
        } else if (full_account(r) == 0) {
          ++refused;
        } else {
          ++other;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(passed.load(), 1000);
  EXPECT_EQ(refused.load(), 9000);
  EXPECT_EQ(other.load(), 0);
}

TEST_F(RedisLedgerTest, CountsSurviveARedisRestartAndDownMeansClosed) {
  auto l = ledger();
  ASSERT_NE(l, nullptr);
  const BudgetAccount account{"key:bb", 100, kFar};
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(charged(l->charge(std::span(&account, 1), 1)));
  redis->stop();  // SIGTERM: Redis writes its append-only file and exits
  // Down: every charge fails closed, none is counted.
  const auto down = l->charge(std::span(&account, 1), 1);
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable) << down.status().to_string();
  EXPECT_EQ(l->remaining(account).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(open_redis_ledger(redis->url()).status().code(), StatusCode::kUnavailable);
  // Back (same directory: the AOF is replayed); the same ledger reconnects by itself.
  auto again = tools::SpawnedRedis::start(dir);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  redis = std::move(again).value();
  EXPECT_EQ(l->remaining(account).value(), 93u);
  EXPECT_EQ(l->charge(std::span(&account, 1), 1)->remaining, std::vector<std::uint64_t>{92});
}

TEST(RedisAuthTest, PasswordsAndAclUsersAuthenticateAndNeverAppearInErrors) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("privsearch-redis-auth-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto redis = tools::SpawnedRedis::start(dir, 0,
                                          {"--requirepass", "pw-default-7f3a", "--user", "alice",
                                           "on", ">pw-alice-91c2", "~*", "+@all"});
  ASSERT_TRUE(redis.ok()) << redis.status().to_string();
  const std::string url = (*redis)->url();
  struct Case {
    const char *user, *password;
    bool accepted;
  };
  for (const Case& c : {Case{nullptr, nullptr, false}, Case{nullptr, "wrong-5e1d", false},
                        Case{nullptr, "pw-default-7f3a", true},
                        Case{"alice", "pw-alice-91c2", true}, Case{"alice", "wrong-5e1d", false}}) {
    ::unsetenv("PRIVSEARCH_REDIS_USER");
    ::unsetenv("PRIVSEARCH_REDIS_PASSWORD");
    if (c.user != nullptr) ::setenv("PRIVSEARCH_REDIS_USER", c.user, 1);
    if (c.password != nullptr) ::setenv("PRIVSEARCH_REDIS_PASSWORD", c.password, 1);
    const auto l = open_redis_ledger(url);
    const std::string who =
        std::string(c.user ? c.user : "-") + "/" + (c.password ? c.password : "-");
    if (c.accepted) {
      ASSERT_TRUE(l.ok()) << who << ": " << l.status().to_string();
      const BudgetAccount a{"key:auth-" + who, 5, kFar};
      EXPECT_EQ((*l)->charge(std::span(&a, 1), 1)->remaining, std::vector<std::uint64_t>{4}) << who;
    } else {
      ASSERT_EQ(l.status().code(), StatusCode::kUnavailable) << who;
      if (c.password != nullptr) {
        EXPECT_EQ(l.status().message().find(c.password), std::string::npos) << who;
      }
    }
  }
  ::unsetenv("PRIVSEARCH_REDIS_USER");
  ::unsetenv("PRIVSEARCH_REDIS_PASSWORD");
  redis->reset();
  std::filesystem::remove_all(dir);
}

TEST(RedisLedgerUrlTest, CredentialsInTheUrlAreParsedAndEmptyOnesRefused) {
  const auto with_user = parse_redis_url("redis://alice:s3cret@10.0.0.7:6380/2");
  ASSERT_TRUE(with_user.ok()) << with_user.status().to_string();
  EXPECT_EQ(with_user->user, "alice");
  EXPECT_EQ(with_user->password, "s3cret");
  EXPECT_EQ(with_user->db, 2);
  EXPECT_EQ(with_user->display.find("s3cret"), std::string::npos);
  const auto default_user = parse_redis_url("redis://:s3cret@localhost:6379");
  ASSERT_TRUE(default_user.ok());
  EXPECT_EQ(default_user->user, "");
  EXPECT_EQ(default_user->password, "s3cret");
  EXPECT_EQ(parse_redis_url("redis://alice:@localhost:6379").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(parse_redis_url("redis://@localhost:6379").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(RedisLedgerUrlTest, MalformedUrlsAreRefusedNamingTheForm) {
  for (const char* url :
       {"redis://", "redis://host", "redis://host:0", "redis://host:99999", "redis://host:6379/x",
        "http://host:6379", "unix://relative/path", "unix:///tmp/s?db=x"}) {
    const auto r = open_redis_ledger(url);
    ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument) << url;
    EXPECT_NE(r.status().message().find("redis://"), std::string::npos) << url;
  }
  // Well-formed but nothing listening: unavailable, not a malformed URL.
  EXPECT_EQ(open_redis_ledger("unix:///nonexistent/redis.sock").status().code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace privsearch::protocol

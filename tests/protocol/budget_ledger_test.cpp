#include "protocol/budget_ledger.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

namespace privsearch::protocol {
namespace {

// True when the charge went through (recorded, every account had room).
bool charged(const Result<BudgetCharge>& r) { return r.ok() && r->charged(); }
// The index of the full account of a refused charge (-1: charged or failed).
long full_account(const Result<BudgetCharge>& r) {
  return r.ok() && r->full ? static_cast<long>(*r->full) : -1;
}

constexpr std::int64_t kFar = std::numeric_limits<std::int64_t>::max();

struct TempJournal {
  TempJournal()
      : dir(std::filesystem::temp_directory_path() /
            ("privsearch-ledger-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~TempJournal() { std::filesystem::remove_all(dir); }
  std::filesystem::path file() const { return dir / "budgets.journal"; }
  std::filesystem::path dir;
};

BudgetAccount account(const std::string& name, std::uint64_t limit, std::int64_t expires = kFar) {
  return BudgetAccount{name, limit, expires};
}

// Charges `a` until refused; returns the successful charges.
int drain(BudgetLedger& ledger, const BudgetAccount& a, int at_most = 1000) {
  int ok = 0;
  for (int i = 0; i < at_most; ++i) {
    auto r = ledger.charge(std::span(&a, 1), 1);
    if (!charged(r)) {
      EXPECT_EQ(full_account(r), 0) << r.status().to_string();
      break;
    }
    ++ok;
  }
  return ok;
}

TEST(BudgetLedgerTest, MemoryLedgerCountsDownAndRefusesAtTheLimit) {
  auto ledger = make_memory_ledger();
  const auto a = account("key:aa", 3);
  EXPECT_EQ(ledger->remaining(a).value(), 3u);
  EXPECT_EQ(ledger->charge(std::span(&a, 1), 1)->remaining, std::vector<std::uint64_t>{2});
  EXPECT_EQ(drain(*ledger, a), 2);
  EXPECT_EQ(ledger->remaining(a).value(), 0u);
  const auto r = ledger->charge(std::span(&a, 1), 1);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(full_account(r), 0);  // names the full account, typed
  EXPECT_TRUE(r->remaining.empty());
}

TEST(BudgetLedgerTest, ChargeIsAllOrNothingAcrossAccounts) {
  auto ledger = make_memory_ledger();
  const std::vector<BudgetAccount> both = {account("key:k1", 10), account("identity:alice", 2)};
  EXPECT_TRUE(charged(ledger->charge(both, 1)));
  EXPECT_TRUE(charged(ledger->charge(both, 1)));
  const auto r = ledger->charge(both, 1);
  EXPECT_EQ(full_account(r), 1);  // identity:alice
  // The refused request charged neither account.
  EXPECT_EQ(ledger->remaining(both[0]).value(), 8u);
}

TEST(BudgetLedgerTest, ExpiredAccountsStartAfresh) {
  auto ledger = make_memory_ledger();
  const auto past = account("identity:bob:1", 1, /*expires=*/1);  // 1970
  // An account that expired before the charge is a new one: its count restarts at 0 each time.
  EXPECT_TRUE(charged(ledger->charge(std::span(&past, 1), 1)));
  EXPECT_TRUE(charged(ledger->charge(std::span(&past, 1), 1)));
  const auto live = account("identity:bob:2", 1);
  EXPECT_TRUE(charged(ledger->charge(std::span(&live, 1), 1)));
  EXPECT_FALSE(charged(ledger->charge(std::span(&live, 1), 1)));
}

TEST(BudgetLedgerTest, NamesWithWhitespaceAndZeroUnitsAreRefused) {
  auto ledger = make_memory_ledger();
  const auto bad = account("key:a b", 5);
  EXPECT_EQ(ledger->charge(std::span(&bad, 1), 1).status().code(), StatusCode::kInvalidArgument);
  const auto good = account("key:ab", 5);
  EXPECT_EQ(ledger->charge(std::span(&good, 1), 0).status().code(), StatusCode::kInvalidArgument);
}

// Budgets count units (scores), not requests: a charge of K needs room for all K.
TEST(BudgetLedgerTest, ChargesOfManyUnitsNeedRoomForAllOfThem) {
  for (const bool journal : {false, true}) {
    TempJournal tmp;
    auto ledger = journal ? open_file_ledger(tmp.file()).value() : make_memory_ledger();
    const auto a = account("key:units", 1000);
    EXPECT_EQ(ledger->charge(std::span(&a, 1), 600)->remaining, std::vector<std::uint64_t>{400});
    // 401 do not fit in 400: refused whole, nothing charged.
    EXPECT_EQ(full_account(ledger->charge(std::span(&a, 1), 401)), 0);
    EXPECT_EQ(ledger->remaining(a).value(), 400u);
    EXPECT_EQ(ledger->charge(std::span(&a, 1), 400)->remaining, std::vector<std::uint64_t>{0});
    EXPECT_EQ(full_account(ledger->charge(std::span(&a, 1), 1)), 0);
    // Near the top of the range nothing overflows.
    const auto huge = account("key:huge", std::numeric_limits<std::uint64_t>::max() - 1);
    EXPECT_TRUE(charged(ledger->charge(std::span(&huge, 1), 5)));
    EXPECT_EQ(full_account(
                  ledger->charge(std::span(&huge, 1), std::numeric_limits<std::uint64_t>::max())),
              0);
  }
}

TEST(BudgetLedgerTest, ConcurrentChargesNeverExceedTheLimit) {
  // 10^4 concurrent requests from 8 threads against a budget of 1000: exactly 1000 pass.
  TempJournal tmp;
  auto ledger = open_file_ledger(tmp.file()).value();
  const std::vector<BudgetAccount> accounts = {account("key:shared", 100000),
                                               account("identity:alice:0", 1000)};
  std::atomic<int> passed{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1250; ++i) {
        const auto r = ledger->charge(accounts, 1);
        (charged(r) ? passed : refused)++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(passed.load(), 1000);
  EXPECT_EQ(refused.load(), 9000);
  // And the journal agrees after a restart.
  ledger.reset();
  auto reopened = open_file_ledger(tmp.file()).value();
  EXPECT_EQ(reopened->remaining(accounts[1]).value(), 0u);
  EXPECT_EQ(reopened->remaining(accounts[0]).value(), 99000u);
}

TEST(BudgetLedgerTest, FileLedgerSurvivesRestartAndCompaction) {
  TempJournal tmp;
  const auto a = account("key:0123", 5000);
  {
    auto ledger = open_file_ledger(tmp.file()).value();
    EXPECT_EQ(ledger->where(), "file:" + tmp.file().string());
    // Enough charges to compact the journal several times (past 4x accounts + 1024 lines).
    EXPECT_EQ(drain(*ledger, a, 3000), 3000);
  }
  auto ledger = open_file_ledger(tmp.file()).value();
  EXPECT_EQ(ledger->remaining(a).value(), 2000u);
  // Compaction at open left one line per live account.
  std::ifstream in(tmp.file());
  std::string header, line;
  std::getline(in, header);
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(header, "privsearch-budget-journal v1");
  EXPECT_EQ(lines, 1);
}

TEST(BudgetLedgerTest, TornLastLineIsDroppedAndAMalformedLineFailsClosed) {
  TempJournal tmp;
  {
    std::ofstream(tmp.file()) << "privsearch-budget-journal v1\nkey:aa 4 " << kFar
                              << "\nkey:aa 5 12";  // a crash mid-write
  }
  {
    auto ledger = open_file_ledger(tmp.file()).value();
    EXPECT_EQ(ledger->remaining(account("key:aa", 10)).value(), 6u);
  }
  std::ofstream(tmp.file()) << "privsearch-budget-journal v1\nkey:aa four 9\nkey:bb 1 9\n";
  const auto r = open_file_ledger(tmp.file());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("line 2"), std::string::npos) << r.status().message();
  std::ofstream(tmp.file()) << "not a journal\n";
  EXPECT_EQ(open_file_ledger(tmp.file()).status().code(), StatusCode::kDataLoss);
}

TEST(BudgetLedgerTest, ReplayKeepsTheLargestCount) {
  TempJournal tmp;
  // Lines carry totals: a duplicated or reordered older line never lowers a count.
  std::ofstream(tmp.file()) << "privsearch-budget-journal v1\nkey:aa 7 " << kFar << "\nkey:aa 3 "
                            << kFar << "\n";
  auto ledger = open_file_ledger(tmp.file()).value();
  EXPECT_EQ(ledger->remaining(account("key:aa", 10)).value(), 3u);
}

TEST(BudgetLedgerTest, SecondProviderOnTheSameJournalIsRefused) {
  TempJournal tmp;
  auto first = open_file_ledger(tmp.file()).value();
  const auto second = open_file_ledger(tmp.file());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("in use"), std::string::npos);
}

TEST(BudgetLedgerTest, UnrecordableChargeIsRefusedAndNotCounted) {
  TempJournal tmp;
  auto ledger = open_file_ledger(tmp.file()).value();
  const auto a = account("key:cc", 100);
  ASSERT_TRUE(charged(ledger->charge(std::span(&a, 1), 1)));
  // The file may not grow any more: the next write fails with EFBIG (SIGXFSZ ignored).
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit tight = old;
  tight.rlim_cur = std::filesystem::file_size(tmp.file());
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tight), 0);
  const auto r = ledger->charge(std::span(&a, 1), 1);
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().to_string();
  EXPECT_EQ(ledger->remaining(a).value(), 99u);  // the refused charge was taken back
}

TEST(BudgetLedgerTest, AShortWriteLeavesAJournalThatStillReplays) {
  TempJournal tmp;
  const auto a = account("key:dd", 100);
  {
    auto ledger = open_file_ledger(tmp.file()).value();
    ASSERT_TRUE(charged(ledger->charge(std::span(&a, 1), 1)));
    // Room for 5 more bytes only: the next line is written in part (a short write).
    auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
    rlimit old{};
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit tight = old;
    tight.rlim_cur = std::filesystem::file_size(tmp.file()) + 5;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tight), 0);
    const auto r = ledger->charge(std::span(&a, 1), 1);
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, old_handler);
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
    ASSERT_TRUE(charged(ledger->charge(std::span(&a, 1), 1)));  // room again
  }
  // The partial line was cut off: the journal replays, with the two recorded charges.
  auto reopened = open_file_ledger(tmp.file());
  ASSERT_TRUE(reopened.ok()) << reopened.status().to_string();
  EXPECT_EQ((*reopened)->remaining(a).value(), 98u);
}

}  // namespace
}  // namespace privsearch::protocol

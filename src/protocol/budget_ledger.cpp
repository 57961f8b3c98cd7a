#include "protocol/budget_ledger.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include "core/bytes.h"
#include "index/artifacts/atomic_file.h"
#include "protocol/redis_connection.h"
#include "protocol/redis_ledger.h"

namespace privsearch::protocol {
namespace {

constexpr std::string_view kJournalHeader = "privsearch-budget-journal v1\n";
// Purge expired accounts after this many charges (bounds memory without a timer thread).
constexpr std::uint64_t kPurgeEvery = 4096;

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 256) return false;
  for (const char c : name) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

// The process-local counting both ledgers share.
class BudgetCounts {
 public:
  // Checks every account for room for `units` at time `now_s`; when all have it, adds `units`
  // to each and returns what each may still spend.
  Result<BudgetCharge> charge(std::span<const BudgetAccount> accounts, std::uint64_t units,
                              std::int64_t now_s);
  // Takes back a charge that could not be recorded.
  void refund(std::span<const BudgetAccount> accounts, std::uint64_t units);
  std::uint64_t spent(const std::string& name, std::int64_t now_s) const;
  // Replay of a journal line: keeps the larger count.
  void merge(const std::string& name, std::uint64_t spent, std::int64_t expires_s);
  // Forgets accounts expired at `now_s`; returns the live ones.
  std::size_t purge(std::int64_t now_s);
  struct Entry {
    std::uint64_t spent = 0;
    std::int64_t expires_s = 0;
  };
  const std::map<std::string, Entry>& entries() const { return entries_; }

 private:
  std::map<std::string, Entry> entries_;
};

std::string journal_line(const std::string& name, const BudgetCounts::Entry& e) {
  return fmt::format("{} {} {}\n", name, e.spent, e.expires_s);
}

}  // namespace

std::int64_t unix_now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

Status check_charge(std::span<const BudgetAccount> accounts, std::uint64_t units) {
  if (units == 0) return Status(StatusCode::kInvalidArgument, "a budget charge of zero units");
  for (const auto& a : accounts) {
    if (!valid_name(a.name)) {
      return Status(StatusCode::kInvalidArgument, "budget account name with whitespace");
    }
  }
  return Status();
}

}  // namespace

Result<BudgetCharge> BudgetCounts::charge(std::span<const BudgetAccount> accounts,
                                          std::uint64_t units, std::int64_t now_s) {
  PRIVSEARCH_RETURN_IF_ERROR(check_charge(accounts, units));
  BudgetCharge out;
  for (std::size_t i = 0; i < accounts.size(); ++i) {
    const auto spent_now = spent(accounts[i].name, now_s);
    // Room for all `units`: spent + units <= limit, written so that nothing overflows.
    if (spent_now > accounts[i].limit || units > accounts[i].limit - spent_now) {
      out.full = i;
      return out;
    }
  }
  for (const auto& a : accounts) {
    auto& e = entries_[a.name];
    if (e.expires_s <= now_s) e = Entry{};  // expired: a fresh account
    e.spent += units;
    e.expires_s = std::max(e.expires_s, a.expires_s);
    out.remaining.push_back(a.limit - e.spent);
  }
  return out;
}

void BudgetCounts::refund(std::span<const BudgetAccount> accounts, std::uint64_t units) {
  for (const auto& a : accounts) {
    if (auto it = entries_.find(a.name); it != entries_.end()) {
      it->second.spent -= std::min(it->second.spent, units);
    }
  }
}

std::uint64_t BudgetCounts::spent(const std::string& name, std::int64_t now_s) const {
  const auto it = entries_.find(name);
  return it == entries_.end() || it->second.expires_s <= now_s ? 0 : it->second.spent;
}

void BudgetCounts::merge(const std::string& name, std::uint64_t spent, std::int64_t expires_s) {
  auto& e = entries_[name];
  e.spent = std::max(e.spent, spent);
  e.expires_s = std::max(e.expires_s, expires_s);
}

std::size_t BudgetCounts::purge(std::int64_t now_s) {
  std::erase_if(entries_, [now_s](const auto& kv) { return kv.second.expires_s <= now_s; });
  return entries_.size();
}

namespace {

class MemoryLedger final : public BudgetLedger {
 public:
  Result<BudgetCharge> charge(std::span<const BudgetAccount> accounts,
                              std::uint64_t units) override {
    std::lock_guard lock(mu_);
    const auto now = unix_now_s();
    if (++charges_ % kPurgeEvery == 0) counts_.purge(now);
    return counts_.charge(accounts, units, now);
  }
  Result<std::uint64_t> remaining(const BudgetAccount& account) override {
    std::lock_guard lock(mu_);
    const auto spent = counts_.spent(account.name, unix_now_s());
    return spent >= account.limit ? 0 : account.limit - spent;
  }
  std::string where() const override { return "memory"; }

 private:
  std::mutex mu_;
  BudgetCounts counts_;
  std::uint64_t charges_ = 0;
};

// Parses one journal line `<name> <spent> <expires_s>` (without its newline).
bool parse_line(std::string_view line, std::string& name, std::uint64_t& spent,
                std::int64_t& expires) {
  const auto a = line.find(' ');
  if (a == std::string_view::npos || a == 0) return false;
  const auto b = line.find(' ', a + 1);
  if (b == std::string_view::npos) return false;
  name.assign(line.substr(0, a));
  const auto s = line.substr(a + 1, b - a - 1);
  const auto e = line.substr(b + 1);
  const auto rs = std::from_chars(s.data(), s.data() + s.size(), spent);
  const auto re = std::from_chars(e.data(), e.data() + e.size(), expires);
  return rs.ec == std::errc() && rs.ptr == s.data() + s.size() && re.ec == std::errc() &&
         re.ptr == e.data() + e.size() && valid_name(name);
}

class FileLedger final : public BudgetLedger {
 public:
  FileLedger(std::filesystem::path path, unsigned fsync_every)
      : path_(std::move(path)), fsync_every_(fsync_every) {}
  ~FileLedger() override {
    if (fd_ >= 0) {
      ::fsync(fd_);
      ::close(fd_);  // releases the flock
    }
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }

  Status open() {
    std::error_code ec;
    if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), ec);
    // The lock lives on a sidecar file: compaction renames a new journal over the old one,
    // which would drop a lock held on the journal's own inode.
    const auto lock_path = path_.string() + ".lock";
    lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd_ < 0) {
      return Status(StatusCode::kUnavailable,
                    fmt::format("cannot open {}: {}", lock_path, std::strerror(errno)));
    }
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      return Status(StatusCode::kFailedPrecondition,
                    fmt::format("the budget journal {} is in use by another provider; give each "
                                "provider its own --state file",
                                path_.string()));
    }
    if (std::filesystem::exists(path_)) PRIVSEARCH_RETURN_IF_ERROR(replay());
    return compact_locked();
  }

  Result<BudgetCharge> charge(std::span<const BudgetAccount> accounts,
                              std::uint64_t units) override {
    std::lock_guard lock(mu_);
    const auto now = unix_now_s();
    PRIVSEARCH_ASSIGN_OR_RETURN(auto outcome, counts_.charge(accounts, units, now));
    if (!outcome.charged()) return outcome;
    std::string lines;
    for (const auto& a : accounts) lines += journal_line(a.name, counts_.entries().at(a.name));
    if (const Status s = append_locked(lines); !s.ok()) {
      counts_.refund(accounts, units);  // not recorded: refuse (fail closed)
      return s;
    }
    journal_lines_ += accounts.size();
    if (journal_lines_ > 4 * counts_.entries().size() + 1024) {
      counts_.purge(now);
      if (const Status s = compact_locked(); !s.ok()) return s;
    }
    return outcome;
  }

  Result<std::uint64_t> remaining(const BudgetAccount& account) override {
    std::lock_guard lock(mu_);
    const auto spent = counts_.spent(account.name, unix_now_s());
    return spent >= account.limit ? 0 : account.limit - spent;
  }
  std::string where() const override { return "file:" + path_.string(); }

 private:
  Status replay() {
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, index::read_file_bytes(path_));
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (text.substr(0, kJournalHeader.size()) != kJournalHeader) {
      return Status(StatusCode::kDataLoss,
                    path_.string() + " is not a privsearch budget journal (header)");
    }
    std::size_t pos = kJournalHeader.size(), line_no = 1;
    while (pos < text.size()) {
      ++line_no;
      const auto nl = text.find('\n', pos);
      if (nl == std::string_view::npos) break;  // a torn last line: the write never finished
      std::string name;
      std::uint64_t spent = 0;
      std::int64_t expires = 0;
      if (!parse_line(text.substr(pos, nl - pos), name, spent, expires)) {
        return Status(StatusCode::kDataLoss,
                      fmt::format("{} line {} is malformed; the budgets cannot be trusted "
                                  "(restore the file or remove it deliberately)",
                                  path_.string(), line_no));
      }
      counts_.merge(name, spent, expires);
      pos = nl + 1;
    }
    return Status();
  }

  Status compact_locked() {
    counts_.purge(unix_now_s());
    std::string text(kJournalHeader);
    for (const auto& [name, e] : counts_.entries()) text += journal_line(name, e);
    PRIVSEARCH_RETURN_IF_ERROR(index::write_bytes_atomically(path_, byte_view(text)));
    if (fd_ >= 0) ::close(fd_);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) {
      return Status(StatusCode::kUnavailable,
                    fmt::format("cannot reopen {}: {}", path_.string(), std::strerror(errno)));
    }
    journal_lines_ = counts_.entries().size();
    return Status();
  }

  Status append_locked(const std::string& lines) {
    if (fd_ < 0) return Status(StatusCode::kUnavailable, "the budget journal is not open");
    const ssize_t n = ::write(fd_, lines.data(), lines.size());
    if (n > 0 && n != static_cast<ssize_t>(lines.size())) {
      // A short write (disk full) left part of a line: cut it off, or the next append would
      // glue onto it and the journal would not replay.
      struct stat st {};
      if (::fstat(fd_, &st) == 0) (void)::ftruncate(fd_, st.st_size - n);
    }
    if (n != static_cast<ssize_t>(lines.size())) {
      return Status(StatusCode::kUnavailable,
                    fmt::format("cannot record a budget charge in {}: {}", path_.string(),
                                n < 0 ? std::strerror(errno) : "short write"));
    }
    if (fsync_every_ != 0 && ++unsynced_ >= fsync_every_) {
      unsynced_ = 0;
      if (::fdatasync(fd_) != 0) {
        return Status(StatusCode::kUnavailable,
                      fmt::format("fdatasync {}: {}", path_.string(), std::strerror(errno)));
      }
    }
    return Status();
  }

  const std::filesystem::path path_;
  const unsigned fsync_every_;
  std::mutex mu_;
  BudgetCounts counts_;
  int fd_ = -1, lock_fd_ = -1;
  std::size_t journal_lines_ = 0;
  unsigned unsynced_ = 0;
};

}  // namespace

std::unique_ptr<BudgetLedger> make_memory_ledger() { return std::make_unique<MemoryLedger>(); }

Result<std::unique_ptr<BudgetLedger>> open_ledger(const std::string& where) {
  if (where == "memory") return make_memory_ledger();
  if (where.rfind("file:", 0) == 0 && where.size() > 5) return open_file_ledger(where.substr(5));
  if (is_redis_url(where)) {
    return open_redis_ledger(where);
  }
  return Status(
      StatusCode::kInvalidArgument,
      "`" + where +
          "`: expected `memory`, `file:PATH`, `redis://[[USER]:PASSWORD@]HOST:PORT[/DB]` or "
          "`unix:///PATH[?db=N]`");
}

Result<std::unique_ptr<BudgetLedger>> open_file_ledger(const std::filesystem::path& journal,
                                                       unsigned fsync_every) {
  auto ledger = std::make_unique<FileLedger>(journal, fsync_every);
  PRIVSEARCH_RETURN_IF_ERROR(ledger->open());
  return std::unique_ptr<BudgetLedger>(std::move(ledger));
}

}  // namespace privsearch::protocol

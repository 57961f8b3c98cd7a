// Request budgets that outlive a key epoch, a reload and a restart: the provider's durable
// counters behind one interface (the Redis backend of the scale-out tier implements the same).
//
// Why: a finite number of exact scores bounds what the score oracle can extract (search paper,
// section 4.3; docs/SECURITY.md): with basis-vector queries every score is one coordinate of a
// row, so the unit counted is the score (a rerank of K candidates costs K units, an
// access-private query one), never the request, which may name up to max_candidates ids. A
// budget that a restart, a reload or a freshly minted key set resets bounds nothing. Accounts are
// named strings: `key:<hex key id>` (one key epoch), `identity:<name>:<window>` (one
// authenticated client per budget window), `private:<caller>:<window>` (access-private queries).
// A request charges every account it touches in one atomic step: all have room for its units
// and all are charged, or none is.
// Fail closed: when the ledger cannot record a charge (disk full, store unreachable) the charge
// is refused with kUnavailable and the request is not served.
// Thread safety: every member may be called concurrently.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace privsearch::protocol {

// What an account meters, for the caller's typed refusal (never read from the name).
enum class BudgetKind { kOther, kKeyId, kIdentity, kPrivateQueries };

struct BudgetAccount {
  std::string name;            // no whitespace (checked)
  std::uint64_t limit = 0;     // units (scores, queries) the account may spend
  std::int64_t expires_s = 0;  // Unix time after which the account is forgotten
  // Accounts charged together share a group: a sharded store (Redis Cluster) keeps a group on
  // one node so one request's charge stays one atomic script (the group is the Redis hash tag).
  // The provider groups by the caller's identity, else by the key id. Empty: the name.
  std::string group = {};
  BudgetKind kind = BudgetKind::kOther;  // local only: not stored by the ledger
};

// What a charge did: either every account was charged (`remaining` holds what each may still
// spend, in order) or none was, and `full` is the index of the first account without room. A
// typed outcome, so callers never read which budget ran out from a message.
struct BudgetCharge {
  std::vector<std::uint64_t> remaining;
  std::optional<std::size_t> full;
  bool charged() const { return !full.has_value(); }
};

class BudgetLedger {
 public:
  virtual ~BudgetLedger() = default;
  // Charges `units` (>= 1) to every account, atomically: an account has room when its spent
  // units plus `units` stay within its limit. kInvalidArgument for a bad name or zero units;
  // kUnavailable when the charge cannot be recorded (nothing served).
  virtual Result<BudgetCharge> charge(std::span<const BudgetAccount> accounts,
                                      std::uint64_t units) = 0;
  // Units `account` may still spend (its limit when unknown or expired).
  virtual Result<std::uint64_t> remaining(const BudgetAccount& account) = 0;
  // A human-readable name of where the counts live ("memory", "file:/path").
  virtual std::string where() const = 0;
};

// Counts in this process only (tests, and a provider started with `--state memory`): a restart
// resets them.
std::unique_ptr<BudgetLedger> make_memory_ledger();

// Counts in an append-only journal file (the embedded default). Each charge appends one line
// `<account> <spent> <expires_s>` with one write(2) before the request is served, so a killed
// process loses nothing (the page cache keeps the line); an operating-system crash can lose the
// lines since the last fsync (every `fsync_every` charges; 0: at compaction and close only).
// Replay keeps the largest count per account (lines carry totals, so a replayed or duplicated
// line never lowers a count); an incomplete last line (a crash mid-write) is dropped, any other
// malformed line refuses to open (kDataLoss): a budget file that cannot be read fails closed.
// The journal is compacted (rewritten atomically with one line per live account) at open and
// when it grows past 4x the live accounts. An exclusive flock() keeps a second provider from
// sharing the file (kFailedPrecondition naming the file).
Result<std::unique_ptr<BudgetLedger>> open_file_ledger(const std::filesystem::path& journal,
                                                       unsigned fsync_every = 0);

// The ledger a provider's --state names: `memory`, `file:PATH` (open_file_ledger),
// `redis://...` or `unix://...` (open_redis_ledger). kInvalidArgument for anything else.
Result<std::unique_ptr<BudgetLedger>> open_ledger(const std::string& where);

// Seconds since the Unix epoch (the ledgers' clock).
std::int64_t unix_now_s();

}  // namespace privsearch::protocol

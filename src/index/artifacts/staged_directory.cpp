#include "index/artifacts/staged_directory.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "index/artifacts/manifest.h"

namespace privsearch::index {
namespace fs = std::filesystem;

namespace {

std::string staging_prefix(const fs::path& out) {
  return "." + out.filename().string() + ".staging-";
}

// Staging directories of `out` left by builds that died (their pid is gone): removed.
void remove_stale_staging(const fs::path& parent, const fs::path& out) {
  const std::string prefix = staging_prefix(out);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      fs::remove_all(entry.path(), ec);
    }
  }
}

// What `out` holds that is not its index: top-level entries the manifest does not list.
std::set<std::string> index_entries(const fs::path& dir) {
  std::set<std::string> names = {"manifest.json", "manifest.sig"};
  if (const auto m = load_manifest(dir, /*verify=*/false); m.ok()) {
    for (const auto& a : m->artifacts) names.insert(fs::path(a.file).begin()->string());
  }
  return names;
}

// renameat2(RENAME_EXCHANGE): both names stay valid throughout (glibc 2.36 has the wrapper,
// older ones not; the system call is the same).
bool exchange_paths(const fs::path& a, const fs::path& b) {
  constexpr unsigned kRenameExchange = 1u << 1;
  return ::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), kRenameExchange) == 0;
}

Status refuse_foreign_out(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return Status();
  if (!fs::is_directory(out, ec)) {
    return failed_precondition_error(
        fmt::format("`{}` exists and is not a directory", out.string()));
  }
  if (fs::exists(out / "manifest.json", ec) || fs::is_empty(out, ec)) return Status();
  return failed_precondition_error(fmt::format(
      "`{}` is not empty and holds no index (no manifest.json): a build there would replace "
      "what it holds; choose a new or empty directory",
      out.string()));
}

}  // namespace

Result<StagedDirectory> StagedDirectory::begin(const fs::path& out_arg) {
  const fs::path out = fs::absolute(out_arg).lexically_normal();
  const fs::path clean = out.filename().empty() ? out.parent_path() : out;
  PRIVSEARCH_RETURN_IF_ERROR(refuse_foreign_out(clean));
  const fs::path parent = clean.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    return unavailable_error(fmt::format("cannot create `{}`: {}", parent.string(), ec.message()));
  }
  remove_stale_staging(parent, clean);
  std::string pattern =
      (parent / (staging_prefix(clean) + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return unavailable_error(fmt::format("cannot create a staging directory beside `{}`: {}",
                                         clean.string(), std::strerror(errno)));
  }
  // mkdtemp makes it 0700; an index directory is as readable as create_directories makes one
  // (a provider may run as another user).
  fs::permissions(pattern,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
  return StagedDirectory(clean, fs::path(pattern));
}

StagedDirectory::StagedDirectory(StagedDirectory&& o) noexcept
    : out_(std::move(o.out_)), staging_(std::move(o.staging_)), done_(o.done_) {
  o.done_ = true;
}

StagedDirectory::~StagedDirectory() {
  if (done_ || staging_.empty()) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

Status StagedDirectory::commit() {
  if (done_) return failed_precondition_error("the staged index was already committed");
  std::error_code ec;
  if (!fs::exists(out_, ec)) {
    if (::rename(staging_.c_str(), out_.c_str()) != 0) {
      return unavailable_error(fmt::format("cannot move the new index to `{}`: {}", out_.string(),
                                           std::strerror(errno)));
    }
    done_ = true;
    return Status();
  }
  const auto old_index = index_entries(out_);
  if (!exchange_paths(staging_, out_)) {
    return unavailable_error(fmt::format("cannot swap the new index into `{}`: {}", out_.string(),
                                         std::strerror(errno)));
  }
  done_ = true;
  // staging_ now holds the old directory: keep what was not its index, drop the rest.
  for (const auto& entry : fs::directory_iterator(staging_, ec)) {
    const auto name = entry.path().filename().string();
    if (old_index.count(name) != 0 || fs::exists(out_ / name)) continue;
    fs::rename(entry.path(), out_ / name, ec);
  }
  fs::remove_all(staging_, ec);
  return Status();
}

}  // namespace privsearch::index

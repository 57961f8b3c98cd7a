// A whole index directory written beside its final place and swapped in only when complete, so
// a failed or killed build never destroys the index a provider serves (issue 53: a failed
// `build --out` over an existing index used to overwrite its files in place, then fail, and
// `search` and `serve` both refused the directory).
//
//   begin(out)  refuses an `out` that exists but is not an index directory (no manifest.json and
//               not empty: a build there would replace whatever it holds), removes staging
//               directories of earlier builds of `out` whose process is gone (killed), and
//               makes `<parent>/.<name>.staging-<pid>-<random>` (0700) on the same filesystem;
//   path()      where the build writes;
//   commit()    swaps the staging directory with `out` in one step (renameat2 RENAME_EXCHANGE;
//               a plain rename when `out` does not exist), carries over the entries of the old
//               directory that were not part of its index (files a user or tool kept there:
//               anything the old manifest does not list), and removes the old index's files.
//               Readers that hold the old files open (a provider serving the previous version)
//               keep them until they close them (Linux unlink semantics);
//   destructor  without commit(): removes the staging directory (nothing partial is left).
// Move-only; one owner.
#pragma once

#include <filesystem>

#include "core/status.h"

namespace privsearch::index {

class StagedDirectory {
 public:
  static Result<StagedDirectory> begin(const std::filesystem::path& out);
  StagedDirectory(StagedDirectory&& o) noexcept;
  StagedDirectory& operator=(StagedDirectory&&) = delete;
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;
  ~StagedDirectory();

  const std::filesystem::path& path() const { return staging_; }
  const std::filesystem::path& out() const { return out_; }
  Status commit();

 private:
  StagedDirectory(std::filesystem::path out, std::filesystem::path staging)
      : out_(std::move(out)), staging_(std::move(staging)) {}
  std::filesystem::path out_, staging_;
  bool done_ = false;
};

}  // namespace privsearch::index

#include "index/artifacts/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

#include "core/csprng.h"
#include "core/sha256.h"

namespace privsearch::index {

Status write_file_atomically(const std::filesystem::path& path,
                             const std::function<Status(std::FILE*)>& write) {
  Prng prng = Prng::create();
  std::uint8_t tag[6];
  prng.fill(tag);
  const std::filesystem::path tmp = path.string() + ".tmp-" + to_hex(tag);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return unavailable_error(fmt::format("cannot create `{}`", tmp.string()));
  }
  Status s = write(f);
  if (s.ok() && std::fflush(f) != 0) s = unavailable_error("flush failed");
  if (s.ok() && ::fsync(::fileno(f)) != 0) s = unavailable_error("fsync failed");
  if (std::fclose(f) != 0 && s.ok()) s = unavailable_error("close failed");
  if (s.ok()) {
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec)
      s = unavailable_error(fmt::format("rename to `{}` failed: {}", path.string(), ec.message()));
  }
  if (!s.ok()) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return s.with_context(fmt::format("writing `{}`", path.string()));
  }
  return Status();
}

Status write_bytes_atomically(const std::filesystem::path& path,
                              std::span<const std::uint8_t> bytes) {
  return write_file_atomically(path, [&](std::FILE* f) {
    // An empty span may carry a null pointer, which fwrite must not receive.
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      return unavailable_error("short write");
    }
    return Status();
  });
}

Result<std::vector<std::uint8_t>> read_file_bytes(const std::filesystem::path& path) {
  // A directory opens as a stream on Linux and throws on the first read: refuse it here.
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(path, ec)) in.open(path, std::ios::binary);
  if (!in.is_open()) {
    return Status(StatusCode::kNotFound,
                  "cannot open `" + path.string() + "` (not a readable file)");
  }
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::filesystem::path ResumableFile::partial_path(const std::filesystem::path& path) {
  return path.string() + ".partial";
}

Result<ResumableFile> ResumableFile::open(const std::filesystem::path& path,
                                          std::uint64_t keep_bytes) {
  const auto partial = partial_path(path);
  const int fd = ::open(partial.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return unavailable_error(fmt::format("cannot open `{}`", partial.string()));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < keep_bytes) {
    ::close(fd);
    return data_loss_error(fmt::format("`{}` is shorter than its checkpoint ({} bytes)",
                                       partial.string(), keep_bytes));
  }
  if (::ftruncate(fd, static_cast<off_t>(keep_bytes)) != 0 ||
      ::lseek(fd, static_cast<off_t>(keep_bytes), SEEK_SET) < 0) {
    ::close(fd);
    return unavailable_error(fmt::format("cannot cut `{}` to its checkpoint", partial.string()));
  }
  ResumableFile f;
  f.path_ = path;
  f.fd_ = fd;
  f.size_ = keep_bytes;
  return f;
}

ResumableFile::ResumableFile(ResumableFile&& o) noexcept
    : path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)), size_(o.size_) {}

ResumableFile& ResumableFile::operator=(ResumableFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = std::exchange(o.fd_, -1);
    size_ = o.size_;
  }
  return *this;
}

ResumableFile::~ResumableFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status ResumableFile::append(std::span<const std::uint8_t> bytes) {
  if (fd_ < 0) return failed_precondition_error("the file is finished");
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return unavailable_error(fmt::format("writing `{}` failed: {}", partial_path(path_).string(),
                                           std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  size_ += bytes.size();
  return Status();
}

Status ResumableFile::sync() {
  if (fd_ < 0) return failed_precondition_error("the file is finished");
  if (::fdatasync(fd_) != 0) {
    return unavailable_error(fmt::format("fdatasync `{}` failed", partial_path(path_).string()));
  }
  return Status();
}

Status ResumableFile::finish() {
  PRIVSEARCH_RETURN_IF_ERROR(sync());
  ::close(std::exchange(fd_, -1));
  std::error_code ec;
  std::filesystem::rename(partial_path(path_), path_, ec);
  if (ec) {
    return unavailable_error(
        fmt::format("rename to `{}` failed: {}", path_.string(), ec.message()));
  }
  return Status();
}

Result<FileLock> FileLock::lock(const std::filesystem::path& file, bool wait) {
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  const auto lock_path = file.string() + ".lock";
  FileLock l;
  l.fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (l.fd_ < 0) {
    return unavailable_error(fmt::format("cannot open {}: {}", lock_path, std::strerror(errno)));
  }
  if (::flock(l.fd_, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    if (!wait && errno == EWOULDBLOCK) {
      return failed_precondition_error(
          fmt::format("{} is held by another process (one update at a time)", lock_path));
    }
    return unavailable_error(fmt::format("cannot lock {}: {}", lock_path, std::strerror(errno)));
  }
  return l;
}

Result<FileLock> FileLock::acquire(const std::filesystem::path& file) { return lock(file, true); }
Result<FileLock> FileLock::try_acquire(const std::filesystem::path& file) {
  return lock(file, false);
}

FileLock::FileLock(FileLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace privsearch::index

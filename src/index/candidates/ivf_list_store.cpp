// IvfListStore (index/candidates/ivf.h): the provider's pread view of the list files of every
// generation, each segment checked against its directory hash at open and against the fingerprint
// recorded then whenever it is served.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/bytes.h"
#include "core/fast_hash.h"
#include "core/sha256.h"
#include "index/candidates/ivf.h"

namespace privsearch::index {

namespace {

// Whether two descriptors name one file (the same device and inode).
bool same_file(int a, int b) {
  struct stat sa {
  }, sb{};
  return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

Result<IvfListStore> IvfListStore::open(const std::filesystem::path& file, IvfIndex index,
                                        const IvfListStore* previous) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return unavailable_error(
        fmt::format("cannot open `{}`: {}", file.string(), std::strerror(errno)));
  IvfListStore s;
  s.fds_.push_back(fd);
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size < 0 || static_cast<std::uint64_t>(size) != index.lists_file_bytes) {
    return data_loss_error(fmt::format("`{}` has {} bytes; the IVF directory expects {}",
                                       file.string(), static_cast<long long>(size),
                                       index.lists_file_bytes));
  }
  s.index_ = std::move(index);
  PRIVSEARCH_RETURN_IF_ERROR(s.fingerprint(0, previous));
  return s;
}

Status IvfListStore::open_generation(std::uint32_t generation, const std::filesystem::path& file,
                                     const IvfListStore* previous) {
  if (generation != fds_.size() || generation > index_.deltas.size()) {
    return failed_precondition_error(fmt::format(
        "IVF lists of generation {} opened out of order (next {}, the directory has {})",
        generation, fds_.size(), index_.deltas.size()));
  }
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return unavailable_error(
        fmt::format("cannot open `{}`: {}", file.string(), std::strerror(errno)));
  const off_t size = ::lseek(fd, 0, SEEK_END);
  const std::uint64_t expected = index_.deltas[generation - 1].lists_file_bytes;
  if (size < 0 || static_cast<std::uint64_t>(size) != expected) {
    ::close(fd);
    return data_loss_error(fmt::format("`{}` has {} bytes; the IVF delta directory expects {}",
                                       file.string(), static_cast<long long>(size), expected));
  }
  fds_.push_back(fd);
  if (Status st = fingerprint(generation, previous); !st.ok()) {
    ::close(fds_.back());
    fds_.pop_back();
    return st;
  }
  return Status();
}

Status IvfListStore::fingerprint(std::uint32_t generation, const IvfListStore* previous) {
  std::vector<std::uint64_t> prints(index_.lists, 0);
  const bool reusable = previous != nullptr && generation < previous->fds_.size() &&
                        generation < previous->fingerprints_.size() &&
                        same_file(fds_[generation], previous->fds_[generation]);
  for (std::uint32_t list = 0; list < index_.lists; ++list) {
    const auto& ref = index_.ref(list, generation);
    if (generation > 0 && ref.bytes == 0) continue;
    if (reusable && list < previous->index_.lists) {
      const auto& old = previous->index_.ref(list, generation);
      if (old.sha256 == ref.sha256 && old.offset == ref.offset && old.bytes == ref.bytes) {
        prints[list] = previous->fingerprints_[generation][list];
        continue;
      }
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(const auto bytes, read_segment(list, generation));
    if (sha256(byte_view(bytes)) != ref.sha256) {
      return data_loss_error(
          fmt::format("list {}'s segment (generation {}) is not the one the IVF directory names",
                      list, generation));
    }
    prints[list] = fast_hash(bytes.data(), bytes.size(), list);
  }
  fingerprints_.push_back(std::move(prints));
  return Status();
}

IvfListStore::IvfListStore(IvfListStore&& o) noexcept
    : index_(std::move(o.index_)),
      fds_(std::exchange(o.fds_, {})),
      fingerprints_(std::move(o.fingerprints_)) {}

IvfListStore& IvfListStore::operator=(IvfListStore&& o) noexcept {
  if (this != &o) {
    for (const int fd : fds_) ::close(fd);
    index_ = std::move(o.index_);
    fds_ = std::exchange(o.fds_, {});
    fingerprints_ = std::move(o.fingerprints_);
  }
  return *this;
}

IvfListStore::~IvfListStore() {
  for (const int fd : fds_) ::close(fd);
}

Result<std::string> IvfListStore::read_segment(std::uint32_t list, std::uint32_t generation) const {
  const auto& ref = index_.ref(list, generation);
  std::string bytes(ref.bytes, '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fds_[generation], bytes.data() + done, bytes.size() - done,
                              static_cast<off_t>(ref.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return data_loss_error(fmt::format("list {}'s segment is cut off on disk ({} of {} bytes)",
                                         list, done, bytes.size()));
    }
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

Result<std::string> IvfListStore::segment(std::uint32_t list, std::uint32_t generation) const {
  if (list >= index_.lists) {
    return out_of_range_error(fmt::format("list {} outside the index's {}", list, index_.lists));
  }
  if (generation >= fds_.size()) {
    return not_found_error(
        fmt::format("generation {} is not served (the index has {})", generation, fds_.size() - 1));
  }
  const auto& ref = index_.ref(list, generation);
  if (generation > 0 && ref.bytes == 0) {
    return not_found_error(
        fmt::format("list {} gained nothing in generation {}", list, generation));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto bytes, read_segment(list, generation));
  if (fast_hash(bytes.data(), bytes.size(), list) != fingerprints_[generation][list]) {
    return data_loss_error(
        fmt::format("list {}'s segment changed on disk since the index was "
                    "verified",
                    list));
  }
  return bytes;
}

}  // namespace privsearch::index

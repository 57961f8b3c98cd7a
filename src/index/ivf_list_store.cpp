// IvfListStore (index/ivf.h): the provider's pread view of the list files of every generation,
// each segment checked before it is served (its directory hash the first time, then the
// fingerprint recorded by that check).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/bytes.h"
#include "core/fast_hash.h"
#include "core/sha256.h"
#include "index/ivf.h"

namespace privsearch::index {

Result<IvfListStore> IvfListStore::open(const std::filesystem::path& file, IvfIndex index) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return unavailable_error(fmt::format("cannot open `{}`: {}", file.string(), std::strerror(errno)));
  IvfListStore s;
  s.fds_.push_back(fd);
  s.verified_.push_back(std::make_unique<std::atomic<std::uint64_t>[]>(index.lists));
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size < 0 || static_cast<std::uint64_t>(size) != index.lists_file_bytes) {
    return data_loss_error(fmt::format("`{}` has {} bytes; the IVF directory expects {}",
                                       file.string(), static_cast<long long>(size),
                                       index.lists_file_bytes));
  }
  s.index_ = std::move(index);
  return s;
}

Status IvfListStore::open_generation(std::uint32_t generation, const std::filesystem::path& file) {
  if (generation != fds_.size() || generation > index_.deltas.size()) {
    return failed_precondition_error(fmt::format(
        "IVF lists of generation {} opened out of order (next {}, the directory has {})",
        generation, fds_.size(), index_.deltas.size()));
  }
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return unavailable_error(fmt::format("cannot open `{}`: {}", file.string(), std::strerror(errno)));
  const off_t size = ::lseek(fd, 0, SEEK_END);
  const std::uint64_t expected = index_.deltas[generation - 1].lists_file_bytes;
  if (size < 0 || static_cast<std::uint64_t>(size) != expected) {
    ::close(fd);
    return data_loss_error(fmt::format("`{}` has {} bytes; the IVF delta directory expects {}",
                                       file.string(), static_cast<long long>(size), expected));
  }
  fds_.push_back(fd);
  verified_.push_back(std::make_unique<std::atomic<std::uint64_t>[]>(index_.lists));
  return Status();
}

IvfListStore::IvfListStore(IvfListStore&& o) noexcept
    : index_(std::move(o.index_)),
      fds_(std::exchange(o.fds_, {})),
      verified_(std::move(o.verified_)) {}

IvfListStore& IvfListStore::operator=(IvfListStore&& o) noexcept {
  if (this != &o) {
    for (const int fd : fds_) ::close(fd);
    index_ = std::move(o.index_);
    fds_ = std::exchange(o.fds_, {});
    verified_ = std::move(o.verified_);
  }
  return *this;
}

IvfListStore::~IvfListStore() {
  for (const int fd : fds_) ::close(fd);
}

Result<std::string> IvfListStore::segment(std::uint32_t list, std::uint32_t generation) const {
  if (list >= index_.lists) {
    return out_of_range_error(fmt::format("list {} outside the index's {}", list, index_.lists));
  }
  if (generation >= fds_.size()) {
    return not_found_error(fmt::format("generation {} is not served (the index has {})",
                                       generation, fds_.size() - 1));
  }
  const auto& ref = index_.ref(list, generation);
  if (generation > 0 && ref.bytes == 0) {
    return not_found_error(fmt::format("list {} gained nothing in generation {}", list, generation));
  }
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
  // The first serve checks the SHA-256 and records the fingerprint; later ones check that.
  std::atomic<std::uint64_t>& seen = verified_[generation][list];
  const std::uint64_t fingerprint = fast_hash(bytes.data(), bytes.size(), list) | 1;
  const std::uint64_t recorded = seen.load(std::memory_order_acquire);
  if (recorded != 0) {
    if (fingerprint == recorded) return bytes;
  } else if (sha256(byte_view(bytes)) == ref.sha256) {
    seen.store(fingerprint, std::memory_order_release);
    return bytes;
  }
  return data_loss_error(fmt::format("list {}'s segment changed on disk since the index was "
                                     "verified", list));
}

}  // namespace privsearch::index

#include "index/atomic_file.h"

#include <fstream>
#include <iterator>

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

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
    if (ec) s = unavailable_error(fmt::format("rename to `{}` failed: {}", path.string(), ec.message()));
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
    return Status(StatusCode::kNotFound, "cannot open `" + path.string() + "` (not a readable file)");
  }
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace privsearch::index

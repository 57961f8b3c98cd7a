// Replays every file of the given corpus directories (or files) through a fuzz target's
// LLVMFuzzerTestOneInput. Built with the normal compiler so ctest checks the corpus on every
// run; a crash or CHECK failure fails the test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <vector>

// One allocation past 2 GiB aborts the replay, as libFuzzer's -malloc_limit_mb (its default, the
// 2,048 MB RSS limit) stops a fuzzing run: a decoder that sizes a buffer from a length field it
// has not checked against its input fails here too, not only on a machine short of memory
// (operator new only: a library's direct malloc is not counted).
constexpr std::size_t kMallocLimitBytes = std::size_t{2048} << 20;

void* operator new(std::size_t bytes) {
  if (bytes > kMallocLimitBytes) {
    std::fprintf(stderr,
                 "replay: one allocation of %zu bytes (limit %zu): a length field "
                 "trusted before it was checked\n",
                 bytes, kMallocLimitBytes);
    std::abort();
  }
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<fs::path> files;
    if (fs::is_directory(argv[i])) {
      for (const auto& e : fs::directory_iterator(argv[i])) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else {
      files.emplace_back(argv[i]);
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++count;
    }
  }
  if (count == 0) {
    std::fprintf(stderr, "replay: no corpus files found\n");
    return 1;
  }
  std::printf("replayed %zu inputs\n", count);
  return 0;
}

#include "core/check.h"

#include <cstdio>
#include <cstdlib>

namespace privsearch::detail {

void check_failed(const char* file, int line, const char* condition, const char* message) {
  std::fprintf(stderr, "privsearch: CHECK failed at %s:%d: %s (%s)\n", file, line, condition,
               message);
  std::abort();
}

}  // namespace privsearch::detail

// core/parallel.h: every task runs once on a worker index below the thread count, the first
// failure by task index is returned, an exception becomes kInternal.
#include "core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <vector>

namespace privsearch {
namespace {

TEST(RunTasks, EveryTaskRunsOnceOnAWorkerBelowTheThreadCount) {
  for (const std::size_t threads : {1u, 2u, 3u, 16u}) {
    for (const std::size_t tasks : {0u, 1u, 5u, 64u}) {
      std::vector<std::atomic<int>> runs(tasks);
      std::atomic<std::size_t> max_worker{0};
      const Status s = run_tasks(threads, tasks, [&](std::size_t t, std::size_t w) {
        ++runs[t];
        std::size_t seen = max_worker.load();
        while (w > seen && !max_worker.compare_exchange_weak(seen, w)) {
        }
        return Status();
      });
      EXPECT_TRUE(s.ok()) << s.to_string();
      for (std::size_t t = 0; t < tasks; ++t) EXPECT_EQ(runs[t].load(), 1) << t;
      if (tasks > 0) {
        EXPECT_LT(max_worker.load(), std::min(threads, tasks));
      }
    }
  }
}

TEST(RunTasks, TheFirstFailureByTaskIndexIsReturnedAndEveryTaskStillRuns) {
  std::atomic<int> ran{0};
  const Status s = run_tasks(3, 10, [&](std::size_t t, std::size_t) -> Status {
    ++ran;
    if (t == 7) return Status(StatusCode::kDataLoss, "task 7");
    if (t == 4) return Status(StatusCode::kInvalidArgument, "task 4");
    return Status();
  });
  EXPECT_EQ(ran.load(), 10);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "task 4");
}

TEST(RunTasks, AnExceptionInATaskIsAnInternalError) {
  const Status s = run_tasks(2, 4, [&](std::size_t t, std::size_t) -> Status {
    if (t == 2) throw std::runtime_error("boom");
    return Status();
  });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("boom"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace privsearch

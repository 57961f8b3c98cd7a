// Independent tasks of one request spread over a few threads: the caller's thread and up to
// threads - 1 short-lived helpers take tasks in index order from a shared counter. Used where a
// single request's latency matters and its parts are independent (the rerank kernel's giant
// steps); the work a task does must not depend on which worker runs it, so results are the same
// for any thread count.
// Errors: the first failed task's Status (by task index); an exception in a task becomes
// kInternal. Every task runs even when one fails (tasks are short; no cancellation).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/status.h"

namespace privsearch {

// fn(task, worker) -> Status for task in [0, tasks); worker in [0, workers) names the thread
// (0 is the caller), for per-worker scratch sized by `threads`.
template <class Fn>
Status run_tasks(std::size_t threads, std::size_t tasks, Fn&& fn) {
  const std::size_t workers = std::max<std::size_t>(1, std::min(threads, tasks));
  std::vector<Status> status(tasks);
  std::atomic<std::size_t> next{0};
  auto work = [&](std::size_t worker) {
    for (std::size_t t = next.fetch_add(1); t < tasks; t = next.fetch_add(1)) {
      try {
        status[t] = fn(t, worker);
      } catch (const std::exception& e) {
        status[t] = Status(StatusCode::kInternal, std::string("task failed: ") + e.what());
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(workers - 1);
  try {
    for (std::size_t w = 1; w < workers; ++w) helpers.emplace_back(work, w);
  } catch (const std::system_error&) {
    // No thread to be had (resource limits): the caller's thread does the rest.
  }
  work(0);
  for (auto& h : helpers) h.join();
  for (auto& s : status) {
    if (!s.ok()) return s;
  }
  return Status();
}

}  // namespace privsearch

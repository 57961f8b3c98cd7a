// The transport attacks of docs/SECURITY.md ("the transport") against a privsearch-provider process
// at its defaults (which put it behind the HTTP/2 front, server/http2_front.h), over real TLS on
// loopback: one hostile client per test, the legitimate client's failures asserted during the
// attack, and the memory of the provider and of its front after it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "harness/h2_attacks.h"
#include "harness/measure.h"
#include "harness/stalled_streams.h"
#include "server/hostile_fixture.h"

namespace privsearch {
namespace {

// Legitimate searches for `length` (at most `max_searches`, at least 3) by one client that
// connects and uploads its keys first: the failures, and each search's milliseconds.
struct LegitRun {
  int attempted = 0, failed = 0;
  std::vector<double> ms;
  std::string last_error;
};

class TransportAttackTest : public HostileClientTest {
 protected:
  LegitRun searches_during(const tools::SpawnedProvider& p, std::chrono::seconds length,
                           int max_searches = 40) {
    LegitRun run;
    auto legit = legit_client(p);
    if (!legit.ok()) {
      run.attempted = run.failed = 1;
      run.last_error = legit.status().to_string();
      return run;
    }
    const auto until = std::chrono::steady_clock::now() + length;
    while ((std::chrono::steady_clock::now() < until || run.attempted < 3) &&
           run.attempted < max_searches) {
      const auto t0 = std::chrono::steady_clock::now();
      const Status st = legit_rerank(*legit);
      ++run.attempted;
      if (!st.ok()) {
        ++run.failed;
        run.last_error = st.to_string();
      }
      run.ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return run;
  }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Row 1: connections with an initial window of 0 open 32 GetServerInfo streams each and never
// read an answer, reconnecting when dropped. Straight at gRPC 1.51 every legitimate call failed
// "Server Threadpool Exhausted" for ~355 s; behind the front the answers wait in the front's
// buffers and the provider's threads are free.
TEST_F(TransportAttackTest, UnreadAnswersDoNotStarveLegitimateClients) {
  const auto provider = spawn({});
  ASSERT_NE(provider, nullptr);
  const LegitRun idle = searches_during(*provider, std::chrono::seconds(0), 5);
  ASSERT_EQ(idle.failed, 0) << idle.last_error;
  tools::UnreadResponsesSpec spec;
  spec.port = provider->port();
  spec.source = "127.0.0.2";
  spec.connections = 4;  // 128 unread streams, 4x the provider's worker-thread quota
  auto attack = tools::UnreadResponses::start(spec);
  ASSERT_TRUE(attack.ok()) << attack.status().to_string();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the streams are open and stuck
  const LegitRun during = searches_during(*provider, std::chrono::seconds(6));
  std::fprintf(stderr,
               "unread answers: %llu streams opened, %llu connections dropped; legit %d/%d "
               "failed, median %.1f ms (idle %.1f ms)\n",
               static_cast<unsigned long long>((*attack)->streams_opened()),
               static_cast<unsigned long long>((*attack)->connections_dropped()), during.failed,
               during.attempted, median(during.ms), median(idle.ms));
  EXPECT_GE((*attack)->streams_opened(), 128u);
  EXPECT_EQ(during.failed, 0) << during.last_error;
  attack->reset();
  EXPECT_TRUE(legit_search(*provider).ok());
}

// The unread answers that outgrow the front: FetchLists of all 8 lists of a 20,000-document IVF
// index, an answer several times the ~80 KB the front buffers per stream, on 4 connections x 32
// streams with window 0. The provider thread writing such an answer waits until the stream
// dies (the front's client timeout, 60 s). The caller's share of the workers is held until then
// (server/call_holds.h), so the attacker holds that many threads and the rest of its streams are
// refused OVERLOADED in answers the front does buffer. Released when the handler returned (the
// code before), the 128 streams took the server's whole thread quota and every legitimate call
// failed "Server Threadpool Exhausted".
TEST_F(TransportAttackTest, UnreadAnswersPastTheFrontsBuffersHoldOnlyTheirClientsShare) {
  testing::Collection big("hostile-big", 20000);
  o = testing::tiny_index_options(big, 128);
  o.ivf = true;
  o.ivf_lists = 8;
  manifest = *index::build_index(o, nullptr);
  const auto provider = spawn({});
  ASSERT_NE(provider, nullptr);
  v1::FetchListsRequest lists;
  lists.set_artifact_version(manifest.version_id);
  for (std::uint32_t i = 0; i < 8; ++i) lists.add_lists(i);
  const std::string path = "/privsearch.v1.Provider/FetchLists";
  // The answer, read by a client that reads it.
  auto reader = client::ProviderClient::connect(provider->connect_options());
  ASSERT_TRUE(reader.ok()) << reader.status().to_string();
  const auto answer = (*reader)->fetch_lists(lists);
  ASSERT_TRUE(answer.ok()) << answer.status().to_string();
  ASSERT_FALSE(answer->has_error()) << answer->error().message();
  const std::size_t answer_bytes = answer->ByteSizeLong();
  ASSERT_GT(answer_bytes, 2u * 80 * 1024) << "not past what the front buffers";
  const LegitRun idle = searches_during(*provider, std::chrono::seconds(0), 5);
  ASSERT_EQ(idle.failed, 0) << idle.last_error;
  const std::size_t threads_before = tools::process_threads(provider->pid());

  tools::UnreadResponsesSpec spec;
  spec.port = provider->port();
  spec.source = "127.0.0.2";
  spec.connections = 4;
  spec.rpc_path = path;
  spec.request = lists.SerializeAsString();
  auto attack = tools::UnreadResponses::start(spec);
  ASSERT_TRUE(attack.ok()) << attack.status().to_string();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // every stream answered or stuck
  const std::size_t threads_during = tools::process_threads(provider->pid());
  const LegitRun during = searches_during(*provider, std::chrono::seconds(6));
  std::fprintf(stderr,
               "unread %zu-byte answers: %llu streams opened; provider threads %zu -> %zu; legit "
               "%d/%d failed, median %.1f ms (idle %.1f ms)\n",
               answer_bytes, static_cast<unsigned long long>((*attack)->streams_opened()),
               threads_before, threads_during, during.failed, during.attempted, median(during.ms),
               median(idle.ms));
  EXPECT_GE((*attack)->streams_opened(), 128u);
  EXPECT_EQ(during.failed, 0) << during.last_error;
  // The attacker's share (1 worker at --threads 2) and gRPC's own pollers, not 128 writers.
  EXPECT_LE(threads_during, threads_before + 4);
  attack->reset();
  EXPECT_TRUE(legit_search(*provider).ok());
}

// Row 3: HEADERS without END_HEADERS, then CONTINUATION frames of ~15 KB with new 3 KB fields,
// 128 MB in all. gRPC 1.51 kept every byte (RSS 48 MB -> 1.69 GB for 1.5 GB sent, never freed,
// CVE-2023-33953); the front refuses a header block past its 16 KB buffer and closes the
// connection, so the attacker has to reconnect again and again and nothing piles up anywhere.
TEST_F(TransportAttackTest, ContinuationFloodEndsAtTheFront) {
  const auto provider = spawn({});
  ASSERT_NE(provider, nullptr);
  ASSERT_TRUE(legit_search(*provider).ok());
  const int front = tools::first_child_pid(provider->pid());
  ASSERT_GT(front, 0) << "no front process under the provider";
  const std::uint64_t provider_base = tools::process_rss_bytes(provider->pid());
  const std::uint64_t front_base = tools::process_rss_bytes(front);
  tools::ContinuationFloodSpec spec;
  spec.port = provider->port();
  spec.source = "127.0.0.3";
  // 128 MB: ~150 connections, within the front's 300 new connections per address per 10 s (a
  // faster attacker is refused at accept, which the connection-flood test covers).
  spec.total_bytes = std::uint64_t{128} << 20;
  auto flood = tools::ContinuationFlood::start(spec);
  ASSERT_TRUE(flood.ok()) << flood.status().to_string();
  std::uint64_t provider_peak = provider_base, front_peak = front_base;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until && (*flood)->bytes_sent() < spec.total_bytes) {
    provider_peak = std::max(provider_peak, tools::process_rss_bytes(provider->pid()));
    front_peak = std::max(front_peak, tools::process_rss_bytes(front));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  (*flood)->wait();
  std::fprintf(stderr,
               "continuation flood: %.0f MB sent over %llu connections (longest block %.1f MB); "
               "provider rss %.0f -> %.0f MB, front %.0f -> %.0f MB\n",
               static_cast<double>((*flood)->bytes_sent()) / 1e6,
               static_cast<unsigned long long>((*flood)->connections_made()),
               static_cast<double>((*flood)->longest_block()) / 1e6,
               static_cast<double>(provider_base) / 1e6, static_cast<double>(provider_peak) / 1e6,
               static_cast<double>(front_base) / 1e6, static_cast<double>(front_peak) / 1e6);
  EXPECT_GE((*flood)->bytes_sent(), spec.total_bytes);
  // Each connection was cut short: 128 MB took many of them (one would have taken it all).
  EXPECT_GE((*flood)->connections_made(), 32u);
  if (kRssIsMeaningful) {
    EXPECT_LT(provider_peak, provider_base + (std::uint64_t{64} << 20));
    EXPECT_LT(front_peak, front_base + (std::uint64_t{64} << 20));
  }
  EXPECT_TRUE(legit_search(*provider).ok());
}

// Row 2: 1,100 idle TCP connections from 20 addresses plus 2,000 attempts from one more.
// Straight at gRPC 1.51 a flood past the fd limit ("accept4: Too many open files") stopped the
// accept loop for good (CVE-2023-4785). The front holds at most 64 per address, serves the
// legitimate client during the flood, and accepts new connections at once after it.
TEST_F(TransportAttackTest, ConnectionFloodLeavesTheAcceptLoopServing) {
  const auto provider = spawn({});
  ASSERT_NE(provider, nullptr);
  ASSERT_TRUE(legit_search(*provider).ok());
  tools::ConnectionFloodSpec spec;
  spec.port = provider->port();
  spec.attempts_from_one = 2000;
  auto flood = tools::ConnectionFlood::start(spec);
  ASSERT_TRUE(flood.ok()) << flood.status().to_string();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the front has judged them all
  const std::size_t open = (*flood)->still_open();
  const std::size_t connected = (*flood)->connected();
  const LegitRun during = searches_during(*provider, std::chrono::seconds(2), 10);
  (*flood)->release();
  const auto t0 = std::chrono::steady_clock::now();
  Status after = legit_search(*provider);
  while (!after.ok() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    after = legit_search(*provider);
  }
  const double served_after_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr,
               "connection flood: %zu connected, %zu still open after 0.5 s; legit %d/%d failed "
               "during; first search after it in %.0f ms\n",
               connected, open, during.failed, during.attempted, served_after_ms);
  EXPECT_GE(connected, 1100u);
  // 20 addresses x 55 are within the per-address cap; of the 2,000 from one address, 64.
  EXPECT_LE(open, 20u * 55u + 64u);
  EXPECT_EQ(during.failed, 0) << during.last_error;
  EXPECT_TRUE(after.ok()) << after.to_string();
  EXPECT_LT(served_after_ms, 5000);
}

// The provider retires its connections at max-age (+ grace), here every 1 + 1 s: behind the
// front that retires the front's provider connection under a client that stays connected to
// the front. Its searches go on without a failure (the front opens a new provider connection;
// a stream caught by the GOAWAY is retried by the client).
TEST_F(TransportAttackTest, RetiredProviderConnectionsAreInvisibleToClients) {
  const auto provider = spawn({"--connection-max-age-s", "1", "--connection-grace-s", "1"});
  ASSERT_NE(provider, nullptr);
  const LegitRun run = searches_during(*provider, std::chrono::seconds(6), 5000);
  std::fprintf(stderr, "retired connections: %d/%d searches failed, median %.1f ms\n", run.failed,
               run.attempted, median(run.ms));
  EXPECT_EQ(run.failed, 0) << run.last_error;
  EXPECT_GE(run.attempted, 10);
}

// The client's address reaches the provider from the front only: a client that sends its own
// x-privsearch-peer naming someone else spends its own key-upload burst (10), not theirs. One
// upload a minute after the burst, so that a slow, loaded machine does not refill it mid-test
// (at the default 30 a minute, 16 calls taking 5 s got 2.5 tokens back).
TEST_F(TransportAttackTest, ClientsCannotChooseTheAddressTheirLimitsCount) {
  const auto provider = spawn({"--key-uploads-per-minute", "1"});
  ASSERT_NE(provider, nullptr);
  auto rate_limited = [&](const std::string& source, std::size_t calls,
                          const std::vector<std::pair<std::string, std::string>>& headers) {
    const auto limited = tools::rate_limited_uploads(provider->port(), source, calls, headers);
    EXPECT_TRUE(limited.ok()) << limited.status().to_string();
    return limited.ok() ? *limited : 0;
  };
  EXPECT_GE(rate_limited("127.0.0.5", 16, {{"x-privsearch-peer", "127.0.0.6"}}), 5u);
  EXPECT_EQ(rate_limited("127.0.0.6", 3, {}), 0u);  // the victim's burst is untouched
  EXPECT_GE(rate_limited("127.0.0.5", 2, {}), 2u);  // and the forger's own is spent
}

// Row 4: 50 connections x 32 streams announcing 8 MB messages, never finished, round after round.
// Before, the memory was never returned: 7 rounds took RSS to 862 MB, after which searches
// failed ("Handshake read failed"). Now every round's streams end (the provider retires its
// connections at max-age + grace, the front resets the streams), the heap goes back within 30 s
// (trimmed every 10 s), each round starts from the baseline again, and searches go on.
TEST_F(TransportAttackTest, RepeatedStalledStreamRoundsDoNotRatchet) {
  const auto provider = spawn({"--connection-max-age-s", "2", "--connection-grace-s", "2"});
  ASSERT_NE(provider, nullptr);
  ASSERT_TRUE(legit_search(*provider).ok());
  const std::uint64_t baseline = tools::process_rss_bytes(provider->pid());
  for (int round = 0; round < 3; ++round) {
    tools::StalledStreamsSpec spec;
    spec.port = provider->port();
    spec.source = "127.0.0.4";
    spec.connections = 50;
    spec.streams_per_connection = 32;
    auto attack = tools::StalledStreams::start(spec);
    ASSERT_TRUE(attack.ok()) << attack.status().to_string();
    const std::uint64_t streams = spec.streams_per_connection * (*attack)->connections();
    std::uint64_t peak = baseline;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < until &&
           (*attack)->streams_reset() +
                   (*attack)->connections_closed() * spec.streams_per_connection <
               streams) {
      peak = std::max(peak, tools::process_rss_bytes(provider->pid()));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    attack->reset();
    std::uint64_t after = tools::process_rss_bytes(provider->pid());
    const auto back_by = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < back_by &&
           after > baseline + (std::uint64_t{64} << 20)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      after = tools::process_rss_bytes(provider->pid());
    }
    std::fprintf(stderr, "stalled round %d: rss %.0f MB -> peak %.0f MB -> %.0f MB\n", round,
                 static_cast<double>(baseline) / 1e6, static_cast<double>(peak) / 1e6,
                 static_cast<double>(after) / 1e6);
    if (kRssIsMeaningful) {
      EXPECT_LT(peak, baseline + (std::uint64_t{512} << 20)) << "round " << round;
      EXPECT_LT(after, baseline + (std::uint64_t{64} << 20)) << "round " << round;
    }
    EXPECT_TRUE(legit_search(*provider).ok()) << "round " << round;
  }
}

}  // namespace
}  // namespace privsearch

// The provider's HTTP/2 front on its own (server/http2_front.h): the generated configuration
// holds every limit it promises, haproxy accepts it and starts on an inherited socket, refuses a
// broken one with its own reason, stops by pid; the public listener and the private directory
// (stale ones of dead providers removed, live ones kept).
#include "server/http2_front.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "net/tls.h"

namespace privsearch::server {
namespace {

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(Http2FrontConfigTest, EveryLimitIsInTheConfiguration) {
  FrontSpec spec;
  spec.backend_socket = "/run/x/provider.sock";
  spec.run_dir = "/run/x";
  spec.limits.max_connections = 100;
  spec.limits.max_connections_per_source = 7;
  spec.limits.header_buffer_bytes = 12345;
  spec.limits.client_timeout_s = 41;
  spec.limits.request_header_timeout_s = 9;
  const std::string cfg = front_config(spec, "/run/x/front.pem");
  EXPECT_TRUE(contains(cfg, "maxconn 100"));
  EXPECT_TRUE(contains(cfg, "tune.bufsize 12345"));
  EXPECT_TRUE(contains(cfg, "tune.h2.max-concurrent-streams 32"));
  EXPECT_TRUE(contains(cfg, "timeout client 41s"));
  EXPECT_TRUE(contains(cfg, "timeout http-request 9s"));
  EXPECT_TRUE(contains(cfg, "tcp-request connection track-sc0 src,ipmask(32,64)"));
  EXPECT_TRUE(contains(cfg, "reject if { sc0_conn_cur gt 7 } || { sc0_conn_rate gt 300 }"));
  EXPECT_TRUE(contains(cfg, "timeout http-keep-alive 15s"));
  EXPECT_TRUE(contains(cfg, "http-request set-header x-privsearch-peer %[src]"));
  EXPECT_TRUE(contains(cfg, "http-reuse never"));
  EXPECT_TRUE(contains(cfg, "bind fd@3 ssl crt /run/x/front.pem alpn h2"));
  EXPECT_TRUE(contains(cfg, "server provider unix@/run/x/provider.sock proto h2"));
  EXPECT_FALSE(contains(cfg, "expect-proxy"));  // nobody may send PROXY unless trusted
  spec.browser.listen_fd = 4;
  spec.browser.backend_socket = "/run/x/web.sock";
  const std::string web = front_config(spec, "/run/x/front.pem");
  EXPECT_TRUE(contains(web, "bind fd@4 ssl crt /run/x/front.pem alpn http/1.1"));
  EXPECT_TRUE(contains(web, "return status 416"));
  EXPECT_TRUE(contains(web, "req.fhdr(range) -m sub ,"));  // hdr() would split the list
  EXPECT_TRUE(contains(web, "if { sc1_conn_cur gt 4 }"));
  EXPECT_TRUE(contains(web, "server web unix@/run/x/web.sock ssl verify none maxconn 16"));
  spec.browser.trusted_http_proxies = {"10.9.0.0/16"};
  const std::string proxied = front_config(spec, "/run/x/front.pem");
  EXPECT_TRUE(contains(proxied, "acl from_web_proxy src 10.9.0.0/16"));
  EXPECT_TRUE(contains(proxied,
                       "track-sc1 req.hdr_ip(x-forwarded-for,-1),ipmask(32,64) if from_web_proxy"));
  spec.browser = {};
  spec.limits.trusted_proxies = {"10.0.0.5", "10.0.1.0/24"};
  const std::string behind = front_config(spec, "/run/x/front.pem");
  EXPECT_TRUE(contains(behind, "acl from_balancer src 10.0.0.5 10.0.1.0/24"));
  EXPECT_TRUE(contains(behind, "tcp-request connection expect-proxy layer4 if from_balancer"));
  EXPECT_TRUE(contains(behind, "tcp-request session track-sc0 src,ipmask(32,64)"));
  EXPECT_TRUE(contains(behind, "tcp-request session reject if { sc0_conn_cur gt 7 }"));
}

TEST(Http2FrontConfigTest, ListenerBindsAndRefusesBadAddresses) {
  auto any = bind_tcp_listener("127.0.0.1:0");
  ASSERT_TRUE(any.ok()) << any.status().to_string();
  EXPECT_GT(any->port, 0);
  EXPECT_EQ(bind_tcp_listener("127.0.0.1:" + std::to_string(any->port)).status().code(),
            StatusCode::kUnavailable);  // taken
  EXPECT_EQ(bind_tcp_listener("no-port").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bind_tcp_listener("127.0.0.1:").status().code(), StatusCode::kInvalidArgument);
  ::close(any->fd);
}

// Judged by the owner's lock where there is one (a pid in the name may belong to another PID
// namespace sharing TMPDIR), else by the pid.
TEST(Http2FrontConfigTest, StaleRunDirectoriesOfDeadProvidersAreRemoved) {
  const auto base =
      std::filesystem::temp_directory_path() / ("http2-front-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(base);
  ::setenv("TMPDIR", base.c_str(), 1);
  const std::string own = "privsearch-front-" + std::to_string(::getpid());
  const auto dead = base / "privsearch-front-999999999-abcdef";  // no such pid, no lock file
  const auto alive = base / (own + "-old");                      // a live pid, no lock file
  const auto unlocked = base / (own + "-unlocked");  // a live pid here, its lock free: stale
  const auto locked = base / "privsearch-front-999999999-locked";  // a dead pid, lock held
  const auto other = base / "something-else";
  for (const auto& d : {dead, alive, unlocked, locked, other})
    std::filesystem::create_directories(d);
  std::ofstream(unlocked / "owner.lock").put('x');
  const int held = ::open((locked / "owner.lock").c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  auto made = make_private_run_dir();
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_FALSE(std::filesystem::exists(unlocked));
  EXPECT_TRUE(std::filesystem::exists(alive));
  EXPECT_TRUE(std::filesystem::exists(locked));
  EXPECT_TRUE(std::filesystem::exists(other));
  struct stat st {};
  ASSERT_EQ(::stat(made->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // The new directory's own lock is held: the next provider's cleanup keeps it.
  EXPECT_TRUE(std::filesystem::exists(*made / "owner.lock"));
  auto next = make_private_run_dir();
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(std::filesystem::exists(*made));
  ::close(held);  // its owner exits: the next cleanup removes it
  ASSERT_TRUE(make_private_run_dir().ok());
  EXPECT_FALSE(std::filesystem::exists(locked));
  ::unsetenv("TMPDIR");
  std::filesystem::remove_all(base);
}

TEST(Http2FrontProcessTest, StartsOnTheInheritedSocketAndStops) {
  if (find_haproxy().empty()) GTEST_SKIP() << "haproxy is not installed (scripts/setup.sh)";
  auto dir = make_private_run_dir();
  ASSERT_TRUE(dir.ok());
  auto listener = bind_tcp_listener("127.0.0.1:0");
  ASSERT_TRUE(listener.ok());
  const auto identity = *net::make_self_signed("localhost", 1);
  FrontSpec spec;
  spec.listen_fd = listener->fd;
  spec.backend_socket = *dir / "provider.sock";
  spec.run_dir = *dir;
  auto front = Http2Front::start(spec, identity);
  ASSERT_TRUE(front.ok()) << front.status().to_string();
  EXPECT_TRUE((*front)->alive());
  // The placeholder is gone, and no file in the directory ever held the identity's key.
  EXPECT_FALSE(std::filesystem::exists(*dir / "front.pem"));
  for (const auto& entry : std::filesystem::directory_iterator(*dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_FALSE(contains(text, identity.private_key_pem())) << entry.path();
  }
  // The front speaks TLS with the identity on the inherited socket.
  const auto pem = net::fetch_server_certificate("127.0.0.1", listener->port, 5000);
  ASSERT_TRUE(pem.ok()) << pem.status().to_string();
  EXPECT_EQ(*net::certificate_fingerprint(*pem),
            *net::certificate_fingerprint(identity.certificate_pem()));
  // A new identity, installed in memory: new connections get it. One haproxy refuses (a key
  // that is not the certificate's) leaves the one served.
  const auto renewed = *net::make_self_signed("localhost", 2);
  ASSERT_TRUE((*front)->install_identity(renewed).ok());
  const auto renewed_pem = net::fetch_server_certificate("127.0.0.1", listener->port, 5000);
  ASSERT_TRUE(renewed_pem.ok()) << renewed_pem.status().to_string();
  EXPECT_EQ(*net::certificate_fingerprint(*renewed_pem),
            *net::certificate_fingerprint(renewed.certificate_pem()));
  const net::TlsIdentity mismatched(identity.certificate_pem(), renewed.private_key_pem());
  const Status refused_identity = (*front)->install_identity(mismatched);
  EXPECT_EQ(refused_identity.code(), StatusCode::kInvalidArgument) << refused_identity.to_string();
  const auto kept_pem = net::fetch_server_certificate("127.0.0.1", listener->port, 5000);
  ASSERT_TRUE(kept_pem.ok());
  EXPECT_EQ(*net::certificate_fingerprint(*kept_pem),
            *net::certificate_fingerprint(renewed.certificate_pem()));
  const pid_t pid = (*front)->pid();
  (*front)->stop();
  EXPECT_FALSE((*front)->alive());
  EXPECT_NE(::kill(pid, 0), 0);  // reaped
  // A configuration haproxy refuses: its reason is in the error.
  spec.limits.header_buffer_bytes = 10;  // below what haproxy accepts
  auto refused = Http2Front::start(spec, identity);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(refused.status().message(), "refused the front's configuration"))
      << refused.status().message();
  EXPECT_FALSE(std::filesystem::exists(*dir / "front.pem"));
  ::close(listener->fd);
  std::filesystem::remove_all(*dir);
}

}  // namespace
}  // namespace privsearch::server

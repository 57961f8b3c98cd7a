// The browser endpoint's test fixture (server/web_gateway.h over real TLS on 127.0.0.1): a
// provider core served over gRPC and the endpoint in front of it, an HTTPS client trusting only
// the test's certificate, and raw clients that send exactly the bytes a test (or an attacker)
// chooses, from any loopback address. Used by web_gateway_test and web_endpoint_attack_test.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/bytes.h"
#include "core/sha256.h"
#include "index/artifacts/client_files.h"
#include "index/artifacts/manifest.h"
#include "protocol/identities.h"
#include "protocol/provider_fixture.h"
#include "server/web_gateway.h"
#include "testing/tls_test_server.h"

namespace privsearch::web_testing {

namespace fs = std::filesystem;
using protocol::testing_support::ProviderCoreTest;

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A raw client of the endpoint that sends its bytes as slowly as it likes and watches for the
// server's answer or its close (no certificate check: it only tests the server's clock).
class SlowClient {
 public:
  SlowClient(int port, bool tls, const char* source = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (source != nullptr) {  // another loopback address: another client as the server sees it
      sockaddr_in from{};
      from.sin_family = AF_INET;
      ::inet_pton(AF_INET, source, &from.sin_addr);
      ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from);
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    if (connected_ && tls) {
      ctx_ = SSL_CTX_new(TLS_client_method());
      ssl_ = SSL_new(ctx_);
      SSL_set_fd(ssl_, fd_);
      connected_ = SSL_connect(ssl_) == 1;
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  }
  ~SlowClient() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (ctx_ != nullptr) SSL_CTX_free(ctx_);
    ::close(fd_);
  }
  bool connected() const { return connected_; }

  // Sends `bytes` one at a time, `gap` apart (all at once for a zero gap); false as soon as the
  // server has closed.
  bool trickle(const std::string& bytes, milliseconds gap) {
    if (gap.count() == 0) {
      for (const char b : bytes) {
        if (!send_byte(b)) return false;
      }
      return true;
    }
    for (const char b : bytes) {
      if (!read_for(milliseconds(0)) || !send_byte(b)) return false;
      std::this_thread::sleep_for(gap);
    }
    return true;
  }
  // Reads what arrives for up to `limit` (stopping early once `until` has arrived); false when
  // the server closed the connection.
  bool read_for(milliseconds limit, const std::string& until = {}) {
    const auto end = Clock::now() + limit;
    do {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[4096];
      const int n = ssl_ != nullptr ? SSL_read(ssl_, buf, sizeof buf)
                                    : static_cast<int>(::recv(fd_, buf, sizeof buf, 0));
      if (n > 0) {
        received_.append(buf, static_cast<std::size_t>(n));
        if (!until.empty() && received_.find(until) != std::string::npos) return true;
      } else if (ssl_ == nullptr || SSL_get_error(ssl_, n) != SSL_ERROR_WANT_READ) {
        return false;  // TLS 1.3 session tickets come as records without data: WANT_READ
      }
    } while (Clock::now() < end);
    return true;
  }
  const std::string& received() const { return received_; }
  // The status of the first answer received ("HTTP/1.1 NNN"), or 0.
  int status() const {
    return received_.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(received_.c_str() + 9) : 0;
  }

 private:
  bool send_byte(char b) {
    if (ssl_ == nullptr) return ::send(fd_, &b, 1, MSG_NOSIGNAL) == 1;
    for (int tries = 0; tries < 100; ++tries) {
      const int n = SSL_write(ssl_, &b, 1);
      if (n == 1) return true;
      if (SSL_get_error(ssl_, n) != SSL_ERROR_WANT_WRITE) return false;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }
  int fd_ = -1;
  bool connected_ = false;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string received_;
};

// SIGPIPE blocked on the calling thread while it lives (a write to a connection the server cut).
class NoSigpipe {
 public:
  NoSigpipe() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &saved_);
  }
  ~NoSigpipe() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }

 private:
  sigset_t saved_;
};

// One request sent whole on a fresh connection (from `source`, a loopback address, when given);
// what came back within 5 s (or until `until` arrived).
struct RawAnswer {
  int status = 0;
  std::string text;
};
inline RawAnswer raw_request(int port, const std::string& request, const char* source = nullptr,
                             const std::string& until = "\r\n\r\n") {
  const NoSigpipe quiet;
  SlowClient c(port, /*tls=*/true, source);
  EXPECT_TRUE(c.connected());
  c.trickle(request, milliseconds(0));
  c.read_for(milliseconds(5000), until);
  return {c.status(), c.received()};
}

inline std::string post_head(const std::string& method, std::size_t length,
                             const std::string& extra) {
  return "POST /privsearch.v1.Provider/" + method + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
         "Content-Type: application/x-protobuf\r\nConnection: close\r\nContent-Length: " +
         std::to_string(length) + "\r\n" + extra + "\r\n";
}

class WebGatewayTest : public ProviderCoreTest {
 protected:
  void SetUp() override {
    core = make_core();
    // A served index directory: a manifest listing public and private artifacts.
    for (const char* f : {"pq.bin", "payloads.bin", "projection.bin"}) {
      std::ofstream(dir / f) << "bytes of " << f;
    }
    index::Manifest m;
    m.collection = "test";
    m.documents = protocol::testing_support::kDocs;
    m.artifacts = {{"pq", "pq.bin", 0, ""},
                   {"payloads", "payloads.bin", 0, ""},
                   {"projection", "projection.bin", 0, ""},
                   {"exact_store", "exact.bin", 0, ""}};
    ASSERT_TRUE(index::write_manifest(dir, m).ok());
  }
  void TearDown() override {
    if (web) web->stop();
    tls.stop();
  }

  void start(server::WebOptions o = {}, const protocol::TokenRegistry* tokens = nullptr) {
    tls.start(*core, [&](server::ServeOptions& so) {
      so.tokens = tokens;
      so.request_log = [this](const std::string& line) {
        std::lock_guard lock(log_mu);
        log_lines.push_back(line);
      };
    });
    o.identity = tls.identity.get();
    std::vector<std::string> names{"pq", "projection"};
    if (payloads) names.emplace_back("payloads");
    o.public_file = [d = dir, names](const std::string& file) {
      return index::public_index_file(d, file, names);
    };
    o.max_body_bytes = 1 << 20;
    web = *server::WebGateway::start(*tls.server, o);
  }

  // An HTTPS client that trusts only the test's certificate.
  std::unique_ptr<httplib::SSLClient> client() {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", web->port());
    BIO* bio = BIO_new_mem_buf(tls.identity->certificate_pem().data(),
                               static_cast<int>(tls.identity->certificate_pem().size()));
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    X509_STORE* trusted = X509_STORE_new();
    X509_STORE_add_cert(trusted, cert);
    X509_free(cert);
    BIO_free(bio);
    c->set_ca_cert_store(trusted);
    c->enable_server_certificate_verification(true);
    c->set_read_timeout(20, 0);
    return c;
  }

  template <typename Response, typename Request>
  Response call(const std::string& method, const Request& request,
                const httplib::Headers& headers = {}) {
    auto res = client()->Post(("/privsearch.v1.Provider/" + method).c_str(), headers,
                              request.SerializeAsString(), "application/x-protobuf");
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    Response out;
    if (res) {
      EXPECT_EQ(res->status, 200) << res->body;
      EXPECT_TRUE(out.ParseFromString(res->body));
    }
    return out;
  }

  bool payloads = false;  // the payload store among the public files
  std::unique_ptr<protocol::ProviderCore> core;
  testing::TlsTestServer tls;
  std::unique_ptr<server::WebGateway> web;
  std::mutex log_mu;
  std::vector<std::string> log_lines;
};

}  // namespace privsearch::web_testing

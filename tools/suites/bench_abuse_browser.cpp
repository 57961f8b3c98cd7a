#include "suites/bench_abuse_browser.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "ckks/param_sets.h"
#include "client/rerank_session.h"
#include "harness/h2_wire.h"
#include "harness/random_vectors.h"

namespace privsearch::tools::abuse {
namespace {

using Clock = std::chrono::steady_clock;

// One HTTP/1.1 exchange's outcome as the attacker saw it.
struct Exchange {
  int status = 0;  // 0: no answer (closed or timed out first)
  std::string body;
  std::uint64_t sent = 0;
};

// The status and (for a Content-Length answer) the whole body of the first answer in `in`;
// false while it is incomplete.
bool parse_answer(const std::string& in, Exchange& out) {
  const auto head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos || in.rfind("HTTP/1.1 ", 0) != 0) return false;
  out.status = std::atoi(in.c_str() + 9);
  const auto cl = in.find("Content-Length: ");
  const std::size_t length =
      cl == std::string::npos || cl > head_end ? 0 : std::stoull(in.substr(cl + 16, 20));
  if (in.size() < head_end + 4 + length) return false;
  out.body = in.substr(head_end + 4, length);
  return true;
}

// Sends `head` then `body` (stopping when the server closes) and reads one answer for up to
// `wait`; a connection per exchange, from `source`.
Exchange exchange(SSL_CTX* ctx, const std::string& source, std::uint16_t port,
                  const std::string& head, const std::string& body = {},
                  std::chrono::milliseconds wait = std::chrono::milliseconds(5000)) {
  Exchange out;
  auto c = h2::TlsConnection::open(ctx, source, port, 50);
  if (!c.ok() || !c.write_all(head)) return out;
  out.sent = head.size();
  for (std::size_t at = 0; at < body.size(); at += 1 << 16) {
    const auto piece = body.substr(at, 1 << 16);
    if (!c.write_all(piece)) break;
    out.sent += piece.size();
  }
  std::string in;
  const auto until = Clock::now() + wait;
  while (Clock::now() < until && !parse_answer(in, out)) {
    if (c.read_some(in) < 0) {
      parse_answer(in, out);
      break;
    }
  }
  return out;
}

std::string post_head(const std::string& method, std::size_t length, const std::string& extra) {
  return "POST /privsearch.v1.Provider/" + method +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
         "Content-Type: application/x-protobuf\r\nContent-Length: " +
         std::to_string(length) + "\r\n" + extra + "\r\n";
}

// 256 MiB of zeros, gzip-compressed (~261 KB): what inflated to 500 MB on the landed endpoint.
std::string gzip_bomb() {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 16 + 15, 9, Z_DEFAULT_STRATEGY);
  const std::string zeros(1 << 20, '\0');
  std::string out;
  char buf[1 << 16];
  for (int i = 0; i < 256; ++i) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
    z.avail_in = static_cast<uInt>(zeros.size());
    const int flush = i == 255 ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      deflate(&z, flush);
      out.append(buf, sizeof buf - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

// Threads repeating `step` (true: the endpoint refused or cut it as it should).
struct Workers {
  std::atomic<bool> running{false};
  std::atomic<std::uint64_t> attempts{0}, refused{0};
  std::mutex mu;
  std::map<int, std::uint64_t> statuses;
  std::vector<std::thread> threads;
  void start(int n, std::function<int()> step) {
    running = true;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([this, step] {
        h2::ignore_sigpipe_in_this_thread();
        while (running) {
          const int status = step();
          if (status < 0) continue;  // nothing was sent
          ++attempts;
          if (status != 200 && status != 206) ++refused;
          std::lock_guard lock(mu);
          ++statuses[status];
        }
      });
    }
  }
  void stop() {
    running = false;
    for (auto& t : threads) t.join();
    threads.clear();
  }
  nlohmann::json report() {
    nlohmann::json by_status;
    std::lock_guard lock(mu);
    for (const auto& [s, n] : statuses) by_status[s == 0 ? "cut" : std::to_string(s)] = n;
    return {{"requests", attempts.load()}, {"refused", refused.load()}, {"answers", by_status}};
  }
};

// A legitimate browser meanwhile: GetServerInfo from its own address, counted.
class LegitBrowser {
 public:
  explicit LegitBrowser(std::uint16_t port) : port_(port) {}
  void start(SSL_CTX* ctx) {
    const std::string body = v1::ServerInfoRequest().SerializeAsString();
    worker_.start(1, [this, ctx, body] {
      const auto r = exchange(ctx, "127.0.0.200", port_, post_head("GetServerInfo", 0, ""));
      v1::ServerInfo info;
      const bool ok =
          r.status == 200 && info.ParseFromString(r.body) && !info.params_name().empty();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return ok ? 200 : (r.status == 0 ? 599 : r.status);
    });
  }
  void stop() { worker_.stop(); }
  nlohmann::json report() {
    return {{"calls", worker_.attempts.load()}, {"failures", worker_.refused.load()}};
  }

 private:
  std::uint16_t port_;
  Workers worker_;
};

// The frame every browser class shares: an attacker's TLS context, its workers, the legitimate
// browser, and the report.
class BrowserClass : public AbuseClass {
 public:
  explicit BrowserClass(const Target& t) : t_(t), legit_(t.web_port) {
    ctx_ = h2::attacker_tls_context();
  }
  ~BrowserClass() override { SSL_CTX_free(ctx_); }
  Status start() override {
    if (t_.web_port == 0) return invalid_argument_error("bench abuse: no browser endpoint");
    legit_.start(ctx_);
    attack();
    return Status();
  }
  void stop() override {
    workers_.stop();
    legit_.stop();
    report_ = workers_.report();
    report_["legit_browser"] = legit_.report();
    extend(report_);
  }
  nlohmann::json report() const override { return report_; }

 protected:
  virtual void attack() = 0;
  virtual void extend(nlohmann::json&) {}
  const Target& t_;
  SSL_CTX* ctx_ = nullptr;
  Workers workers_;

 private:
  LegitBrowser legit_;
  nlohmann::json report_;
};

class BodiesClass : public BrowserClass {
 public:
  explicit BodiesClass(const Target& t) : BrowserClass(t), bomb_(gzip_bomb()) {}

 protected:
  void attack() override {
    workers_.start(4, [this] {
      const auto kind = next_++ % 3;
      if (kind == 0) {  // chunked: a chunk announcing 256 MiB, then 4 MiB of it
        const std::string head =
            "POST /privsearch.v1.Provider/UploadKeys HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/x-protobuf\r\nTransfer-Encoding: chunked\r\n\r\n"
            "10000000\r\n";
        return exchange(ctx_, "127.0.0.20", t_.web_port, head, std::string(4 << 20, 'x')).status;
      }
      if (kind == 1) {
        return exchange(ctx_, "127.0.0.21", t_.web_port,
                        post_head("UploadKeys", bomb_.size(), "Content-Encoding: gzip\r\n"), bomb_)
            .status;
      }
      return exchange(ctx_, "127.0.0.22", t_.web_port,
                      post_head("UploadKeys", std::size_t{1} << 30, ""), std::string(4 << 20, 'x'))
          .status;
    });
  }
  void extend(nlohmann::json& r) override { r["gzip_bomb_bytes"] = bomb_.size(); }

 private:
  const std::string bomb_;
  std::atomic<std::uint64_t> next_{0};
};

class RangesClass : public BrowserClass {
 public:
  using BrowserClass::BrowserClass;

 protected:
  void attack() override {
    std::string ranges = "bytes=0-";
    for (int i = 1; i < 2700; ++i) ranges += ",0-";
    const std::string get =
        "GET /index/" + t_.largest_public_file +
        " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nRange: " + ranges + "\r\n\r\n";
    // The same list on a call, its commas percent-encoded (each range would be a copy of the
    // answer).
    std::string encoded = "bytes=0-";
    for (int i = 1; i < 1500; ++i) encoded += "%2c0-";
    const std::string call =
        "POST /privsearch.v1.Provider/GetServerInfo HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Connection: close\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n"
        "Range: " +
        encoded + "\r\n\r\n";
    workers_.start(2, [this, get, call] {
      const auto& request = next_++ % 2 == 0 ? get : call;
      return exchange(ctx_, "127.0.0.23", t_.web_port, request).status;
    });
  }

 private:
  std::atomic<std::uint64_t> next_{0};
};

// Readers that take the head of a large file and never read on; each is re-opened when cut.
class SlowReadsClass : public BrowserClass {
 public:
  using BrowserClass::BrowserClass;

 protected:
  void attack() override {
    // With mallory's token: the files are behind the tokens like the calls.
    const std::string get = "GET /index/" + t_.largest_public_file +
                            " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + t_.mallory +
                            "\r\n\r\n";
    workers_.start(24, [this, get] {
      const auto source = "127.0.0." + std::to_string(30 + next_++ % 12);
      auto c = h2::TlsConnection::open(ctx_, source, t_.web_port, 100);
      if (!c.ok() || !c.write_all(get)) return 0;
      std::string in;
      while (in.find("\r\n\r\n") == std::string::npos && c.read_some(in) >= 0) {
      }
      const int status = in.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(in.c_str() + 9) : 0;
      // Hold it unread until the endpoint cuts it or the class stops.
      const auto until = Clock::now() + std::chrono::seconds(30);
      while (workers_.running && Clock::now() < until && ::SSL_get_shutdown(c.ssl()) == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      return status == 200 ? 1 : status;  // a served slow read counts as served, not refused
    });
  }

 private:
  std::atomic<std::uint64_t> next_{0};
};

class BadHeadersClass : public BrowserClass {
 public:
  using BrowserClass::BrowserClass;

 protected:
  void attack() override {
    workers_.start(2, [this] {
      static const char* forged[] = {"Bearer %01", "Bearer \xc3\xa9t\xc3\xa9", "Bearer a\x7f"};
      const auto auth = std::string("Authorization: ") + forged[next_++ % 3] + "\r\n";
      return exchange(ctx_, "127.0.0.24", t_.web_port, post_head("GetServerInfo", 0, auth)).status;
    });
  }

 private:
  std::atomic<std::uint64_t> next_{0};
};

class CrossOriginClass : public BrowserClass {
 public:
  using BrowserClass::BrowserClass;

 protected:
  void attack() override {
    workers_.start(2, [this] {
      const bool plain = next_++ % 2 == 0;
      std::string head = post_head("UploadKeys", 4096, "Origin: https://evil.example\r\n");
      if (plain) {
        head.replace(head.find("application/x-protobuf"), 22, "text/plain");
      }
      return exchange(ctx_, "127.0.0.25", t_.web_port, head, std::string(4096, 'k')).status;
    });
  }

 private:
  std::atomic<std::uint64_t> next_{0};
};

// Fourteen anonymous browsers from 14 addresses: each uploads its own K = 100 key set and
// reranks once; the report counts the addresses that were served.
class ManyAddressesClass : public BrowserClass {
 public:
  static Result<std::unique_ptr<AbuseClass>> make(const Target& t);

 protected:
  void attack() override;
  void extend(nlohmann::json& r) override;

 private:
  explicit ManyAddressesClass(const Target& t) : BrowserClass(t) {}
  struct Browser {
    std::string source;
    v1::UploadKeysRequest upload;
    std::unique_ptr<client::RerankSession> session;
    std::vector<std::uint64_t> ids;
    std::atomic<std::uint64_t> served{0}, refused{0};
  };
  int round(Browser& b);
  std::vector<std::unique_ptr<Browser>> browsers_;
  std::string version_;
  std::size_t dim_ = 0;
  std::atomic<std::uint64_t> next_{0};
};

Result<std::unique_ptr<AbuseClass>> ManyAddressesClass::make(const Target& t) {
  std::unique_ptr<ManyAddressesClass> c(new ManyAddressesClass(t));
  PRIVSEARCH_ASSIGN_OR_RETURN(auto conn, t.connect(""));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto info, conn->server_info());
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto lit, ckks::preset_literal(info.params_name()));
  PRIVSEARCH_ASSIGN_OR_RETURN(const auto params, ckks::Params::create(lit));
  c->version_ = info.artifact_version();
  c->dim_ = info.dim();
  for (int i = 0; i < 14; ++i) {
    auto b = std::make_unique<Browser>();
    b->source = "127.0.1." + std::to_string(2 + i);
    PRIVSEARCH_ASSIGN_OR_RETURN(auto s,
                                client::RerankSession::create(params, info.dim(), Prng::create()));
    b->session = std::make_unique<client::RerankSession>(std::move(s));
    PRIVSEARCH_ASSIGN_OR_RETURN(b->upload, b->session->make_key_upload(100, false));
    for (std::uint64_t j = 0; j < 100; ++j) b->ids.push_back((j * 31 + i) % info.documents());
    std::sort(b->ids.begin(), b->ids.end());
    b->ids.erase(std::unique(b->ids.begin(), b->ids.end()), b->ids.end());
    c->browsers_.push_back(std::move(b));
  }
  return std::unique_ptr<AbuseClass>(std::move(c));
}

// One anonymous browser's upload and rerank through the endpoint (this class's provider runs
// without tokens: each address is then its own account): 200 when both were served.
int ManyAddressesClass::round(Browser& b) {
  const std::string auth;
  const auto body = b.upload.SerializeAsString();
  const auto up = exchange(ctx_, b.source, t_.web_port, post_head("UploadKeys", body.size(), auth),
                           body, std::chrono::milliseconds(20000));
  v1::UploadKeysResponse keys;
  if (up.status != 200 || !keys.ParseFromString(up.body) || keys.has_error()) return 429;
  b.session->set_key_id(100, keys.key_id());
  Prng prng = Prng::create();
  const auto z = random_unit_vector(dim_, prng);
  auto pending = b.session->build_request({z, b.ids, version_});
  if (!pending.ok()) return 500;
  const auto req = pending->request.SerializeAsString();
  const auto r = exchange(ctx_, b.source, t_.web_port, post_head("Rerank", req.size(), auth), req,
                          std::chrono::milliseconds(20000));
  v1::RerankResponse scores;
  return r.status == 200 && scores.ParseFromString(r.body) && !scores.has_error() ? 200 : 429;
}

// Each browser once (its own upload rate, 30 a minute, is not what is measured here).
void ManyAddressesClass::attack() {
  workers_.start(2, [this] {
    const auto i = next_++;
    if (i >= browsers_.size()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return -1;
    }
    auto& b = *browsers_[i];
    const int status = round(b);
    (status == 200 ? b.served : b.refused)++;
    return status;
  });
}

void ManyAddressesClass::extend(nlohmann::json& r) {
  std::size_t always = 0;
  for (const auto& b : browsers_) always += b->served > 0 && b->refused == 0 ? 1 : 0;
  r["browsers"] = browsers_.size();
  r["browsers_served"] = always;
}

}  // namespace

bool is_browser_class(const std::string& name) { return name.rfind("browser_", 0) == 0; }

const std::vector<std::string>& browser_class_names() {
  static const std::vector<std::string> names = {"browser_bodies",       "browser_ranges",
                                                 "browser_slow_reads",   "browser_bad_headers",
                                                 "browser_cross_origin", "browser_many_addresses"};
  return names;
}

Result<std::unique_ptr<AbuseClass>> make_browser_class(const std::string& name, const Target& t) {
  if (name == "browser_bodies") return std::unique_ptr<AbuseClass>(new BodiesClass(t));
  if (name == "browser_ranges") return std::unique_ptr<AbuseClass>(new RangesClass(t));
  if (name == "browser_slow_reads") return std::unique_ptr<AbuseClass>(new SlowReadsClass(t));
  if (name == "browser_bad_headers") return std::unique_ptr<AbuseClass>(new BadHeadersClass(t));
  if (name == "browser_cross_origin") return std::unique_ptr<AbuseClass>(new CrossOriginClass(t));
  if (name == "browser_many_addresses") return ManyAddressesClass::make(t);
  return invalid_argument_error("bench abuse: unknown browser class `" + name + "`");
}

}  // namespace privsearch::tools::abuse

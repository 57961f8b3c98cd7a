// What a call's admission holds (its place in the in-flight count, one of its client's share of
// the workers) is released when gRPC has finished the call, not when its handler returns.
//
// Why: the sync server writes a handler's answer on the handler's own thread after the handler
// returns, and blocks there while the client's HTTP/2 window is closed. An answer larger than
// what the HTTP/2 front buffers per stream (~80 KB: the window plus one buffer) whose client
// never reads it holds that thread until the stream dies (the front's client timeout, 60 s).
// Released at the handler's return, the share would let one client open stream after stream
// until every thread of the server's quota waits on a write ("Server Threadpool Exhausted" for
// everyone); held until the call ends, that client waits on its own share and is refused
// OVERLOADED past it, in a small answer that never blocks.
//
// How: a server interceptor on every Provider call, whose destructor runs when gRPC frees the
// call's context, after the answer is written or the stream has died. A handler parks what it
// holds with keep(); the interceptor's end releases it.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace privsearch::server {

class CallHolds {
 public:
  CallHolds() = default;
  CallHolds(const CallHolds&) = delete;
  CallHolds& operator=(const CallHolds&) = delete;

  // Keeps `hold` until the call of `context` ends. A call the interceptor does not see (a server
  // built without interceptor()) releases it now: never held forever.
  void keep(const grpc::ServerContextBase* context, std::shared_ptr<void> hold);

  // The interceptor factory to install on the server; it refers to this object, which must
  // outlive the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> interceptor();

  // Calls whose holds wait for their end (tests).
  std::size_t calls_holding() const;

 private:
  class Interceptor;
  class Factory;
  void opened(const grpc::ServerContextBase* context);
  void closed(const grpc::ServerContextBase* context);

  mutable std::mutex mu_;
  // Every open call seen by the interceptor, with what its handler parked.
  std::unordered_map<const grpc::ServerContextBase*, std::vector<std::shared_ptr<void>>> calls_;
};

}  // namespace privsearch::server

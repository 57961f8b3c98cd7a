#include "server/call_holds.h"

#include <string_view>
#include <utility>

namespace privsearch::server {

class CallHolds::Interceptor final : public grpc::experimental::Interceptor {
 public:
  Interceptor(CallHolds& holds, const grpc::ServerContextBase* context)
      : holds_(holds), context_(context) {
    holds_.opened(context_);
  }
  // Runs when gRPC frees the call's ServerRpcInfo, in ~ServerContextBase: the call is over.
  ~Interceptor() override { holds_.closed(context_); }
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    methods->Proceed();
  }

 private:
  CallHolds& holds_;
  const grpc::ServerContextBase* context_;
};

class CallHolds::Factory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit Factory(CallHolds& holds) : holds_(holds) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    constexpr std::string_view kService = "/privsearch.v1.Provider/";
    const std::string_view method = info->method() == nullptr ? "" : info->method();
    if (method.substr(0, kService.size()) != kService) return nullptr;  // health checks
    return new Interceptor(holds_, info->server_context());
  }

 private:
  CallHolds& holds_;
};

void CallHolds::keep(const grpc::ServerContextBase* context, std::shared_ptr<void> hold) {
  std::lock_guard lock(mu_);
  const auto it = calls_.find(context);
  if (it != calls_.end()) it->second.push_back(std::move(hold));
  // else: `hold` is released as this returns.
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> CallHolds::interceptor() {
  return std::make_unique<Factory>(*this);
}

std::size_t CallHolds::calls_holding() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const auto& [context, holds] : calls_) n += holds.empty() ? 0 : 1;
  return n;
}

void CallHolds::opened(const grpc::ServerContextBase* context) {
  std::lock_guard lock(mu_);
  calls_[context];
}

void CallHolds::closed(const grpc::ServerContextBase* context) {
  std::vector<std::shared_ptr<void>> released;  // destroyed after the lock: they take others
  {
    std::lock_guard lock(mu_);
    const auto it = calls_.find(context);
    if (it == calls_.end()) return;
    released = std::move(it->second);
    calls_.erase(it);
  }
}

}  // namespace privsearch::server

#include "server/typed_parse.h"

#include <grpcpp/grpcpp.h>

#include <string>

namespace privsearch::server {
namespace {

constexpr std::string_view kService = "/privsearch.v1.Provider/";

class TypedParseInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit TypedParseInterceptor(std::string method) : method_(std::move(method)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      if (status.error_code() == grpc::StatusCode::INTERNAL) {
        methods->ModifySendStatus(
            grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                         "MALFORMED_REQUEST: the request to " + method_ +
                             " does not parse as its protobuf message (docs/PROTOCOL.md)"));
      }
    }
    methods->Proceed();
  }

 private:
  std::string method_;
};

class TypedParseFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    const std::string_view method = info->method() == nullptr ? "" : info->method();
    if (method.substr(0, kService.size()) != kService) return nullptr;  // not ours
    return new TypedParseInterceptor(std::string(method.substr(kService.size())));
  }
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> typed_parse_errors() {
  return std::make_unique<TypedParseFactory>();
}

}  // namespace privsearch::server

// Requests that do not parse as their protobuf message get INVALID_ARGUMENT naming the method,
// not gRPC's bare INTERNAL (the code its generic deserializer returns, with an empty message
// for proto3): a malformed request is the client's mistake; INTERNAL says the provider failed.
//
// How: a server interceptor rewrites the status at PRE_SEND_STATUS. Every Provider handler
// answers grpc::Status::OK and carries its refusals in the response's typed Error, so an
// INTERNAL status on one of its calls can only come from gRPC itself, before the handler ran:
// the request failed to parse. Other services (health checks) and other codes pass unchanged.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <memory>

namespace privsearch::server {

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> typed_parse_errors();

}  // namespace privsearch::server

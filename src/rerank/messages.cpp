#include "rerank/messages.h"

#include <fmt/format.h>

#include <cmath>

#include "ckks/serialization.h"
#include "core/bytes.h"

namespace privsearch::rerank {

namespace {
constexpr std::uint8_t kMessageMagic[4] = {'P', 'S', 'R', 'R'};
constexpr std::uint16_t kMessageVersion = 1;
constexpr std::uint16_t kTypeRequest = 1, kTypeResponse = 2;

struct Header {
  ckks::ParamsId params_id{};
  Kernel kernel = Kernel::kFast;
  std::size_t dim = 0, period = 0, k = 0;
};

void write_header(ByteWriter& w, std::uint16_t type, const Header& h) {
  w.put_bytes(kMessageMagic);
  w.put_u16(kMessageVersion);
  w.put_u16(type);
  w.put_bytes(h.params_id);
  w.put_u8(static_cast<std::uint8_t>(h.kernel));
  w.put_u32(static_cast<std::uint32_t>(h.dim));
  w.put_u32(static_cast<std::uint32_t>(h.period));
  w.put_u32(static_cast<std::uint32_t>(h.k));
}

Status read_header(ByteReader& r, std::uint16_t type, const MessageLimits& limits, Header& h) {
  std::uint8_t magic[4];
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(magic));
  if (!std::equal(std::begin(magic), std::end(magic), std::begin(kMessageMagic))) {
    return data_loss_error("bad magic: not a privsearch rerank message");
  }
  std::uint16_t version = 0, got_type = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(version));
  if (version != kMessageVersion) {
    return data_loss_error(fmt::format("unsupported rerank message version {}", version));
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u16(got_type));
  if (got_type != type) {
    return data_loss_error(fmt::format("rerank message type {} where {} was expected", got_type,
                                       type == kTypeRequest ? "a request" : "a response"));
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.get_bytes(h.params_id));
  std::uint8_t kernel = 0;
  std::uint32_t dim = 0, period = 0, k = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(kernel));
  if (kernel < 1 || kernel > 5) return data_loss_error(fmt::format("unknown kernel {}", kernel));
  h.kernel = static_cast<Kernel>(kernel);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(dim));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(period));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(k));
  if (k == 0 || k > limits.max_candidates) {
    return resource_exhausted_error(fmt::format(
        "K = {} candidates outside [1, {}] (`max_candidates`)", k, limits.max_candidates));
  }
  h.dim = dim;
  h.period = period;
  h.k = k;
  return Status();
}

Status read_blob(ByteReader& r, const MessageLimits& limits, std::vector<std::uint8_t>& out) {
  std::uint32_t len = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(len));
  if (len > limits.max_ciphertext_bytes) {
    return resource_exhausted_error(
        fmt::format("ciphertext of {} bytes exceeds `max_ciphertext_bytes` = {}", len,
                    limits.max_ciphertext_bytes));
  }
  if (len > r.remaining()) return data_loss_error("truncated ciphertext");
  out.resize(len);
  return r.get_bytes(out);
}
}  // namespace

RerankRequest request_for_layout(const ckks::Params& params, const KernelLayout& layout,
                                 std::vector<std::uint8_t> query) {
  RerankRequest r;
  r.params_id = params.id();
  r.kernel = layout.kernel();
  r.dim = layout.dim();
  r.period = layout.period();
  r.k = layout.k();
  r.query = std::move(query);
  return r;
}

RerankResponse response_for_layout(const ckks::Params& params, const KernelLayout& layout,
                                   std::vector<std::vector<std::uint8_t>> outputs) {
  RerankResponse r;
  r.params_id = params.id();
  r.kernel = layout.kernel();
  r.dim = layout.dim();
  r.period = layout.period();
  r.k = layout.k();
  if (layout.kernel() != Kernel::kPacked) r.slot_map = layout.slot_map();
  r.compact = layout.kernel() == Kernel::kFast || layout.kernel() == Kernel::kPacked;
  r.outputs = std::move(outputs);
  return r;
}

std::vector<std::uint8_t> serialize_request(const RerankRequest& q) {
  ByteWriter w;
  write_header(w, kTypeRequest, {q.params_id, q.kernel, q.dim, q.period, q.k});
  w.put_u32(static_cast<std::uint32_t>(q.query.size()));
  w.put_bytes(q.query);
  return w.take();
}

Result<RerankRequest> deserialize_request(std::span<const std::uint8_t> bytes,
                                          const MessageLimits& limits) {
  ByteReader r(bytes);
  Header h;
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, kTypeRequest, limits, h));
  RerankRequest q{h.params_id, h.kernel, h.dim, h.period, h.k, {}};
  PRIVSEARCH_RETURN_IF_ERROR(read_blob(r, limits, q.query));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return q;
}

std::vector<std::uint8_t> serialize_response(const RerankResponse& p) {
  ByteWriter w;
  write_header(w, kTypeResponse, {p.params_id, p.kernel, p.dim, p.period, p.k});
  // The packed kernel's positions follow from the header (layout.h): not sent (K x 8 bytes).
  if (p.kernel != Kernel::kPacked) {
    for (const auto& ref : p.slot_map) {
      w.put_u32(static_cast<std::uint32_t>(ref.ciphertext));
      w.put_u32(static_cast<std::uint32_t>(ref.slot));
    }
  }
  w.put_u8(p.compact ? 1 : 0);
  w.put_u32(static_cast<std::uint32_t>(p.outputs.size()));
  for (const auto& o : p.outputs) {
    w.put_u32(static_cast<std::uint32_t>(o.size()));
    w.put_bytes(o);
  }
  return w.take();
}

Result<RerankResponse> deserialize_response(std::span<const std::uint8_t> bytes,
                                            const MessageLimits& limits) {
  ByteReader r(bytes);
  Header h;
  PRIVSEARCH_RETURN_IF_ERROR(read_header(r, kTypeResponse, limits, h));
  RerankResponse p;
  p.params_id = h.params_id;
  p.kernel = h.kernel;
  p.dim = h.dim;
  p.period = h.period;
  p.k = h.k;
  const std::size_t map_entries = h.kernel == Kernel::kPacked ? 0 : h.k;
  if (r.remaining() < map_entries * 8) return data_loss_error("truncated slot map");
  p.slot_map.resize(map_entries);
  for (auto& ref : p.slot_map) {
    std::uint32_t ct = 0, slot = 0;
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(ct));
    PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(slot));
    ref = {ct, slot};
  }
  std::uint8_t compact = 0;
  std::uint32_t count = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u8(compact));
  if (compact > 1) return data_loss_error("compact flag is not 0 or 1");
  p.compact = compact == 1;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(count));
  if (count == 0 || count > limits.max_outputs) {
    return resource_exhausted_error(
        fmt::format("{} response ciphertexts outside [1, {}]", count, limits.max_outputs));
  }
  p.outputs.resize(count);
  for (auto& o : p.outputs) PRIVSEARCH_RETURN_IF_ERROR(read_blob(r, limits, o));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return p;
}

Result<AcceptedRequest> accept_request(const ckks::Params& params, const RerankRequest& q,
                                       const MessageLimits& limits) {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, q.params_id, "rerank request"));
  if (q.k > limits.max_candidates) {
    return resource_exhausted_error(
        fmt::format("K = {} exceeds `max_candidates` = {}", q.k, limits.max_candidates));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto layout, make_layout(params, q.kernel, q.dim, q.k));
  if (layout.period() != q.period) {
    return invalid_argument_error(fmt::format(
        "padded length {} does not match the {} kernel's layout for d' = {}, K = {} ({})", q.period,
        kernel_name(q.kernel), q.dim, q.k, layout.period()));
  }
  if (layout.outputs() > limits.max_outputs) {
    return resource_exhausted_error(
        fmt::format("the request needs {} response ciphertexts; the limit is {}", layout.outputs(),
                    limits.max_outputs));
  }
  PRIVSEARCH_ASSIGN_OR_RETURN(auto query, ckks::deserialize_ciphertext(params, q.query));
  if (query.level() != params.max_level()) {
    return failed_precondition_error(
        fmt::format("query ciphertext at level {}; the kernels need the top level {}",
                    query.level(), params.max_level()));
  }
  // The kernels' rescales and masks are planned for a query at the preset's scale; any other
  // scale would fail inside the evaluation (or give scores off by the ratio).
  if (query.scale() != params.default_scale()) {
    return invalid_argument_error(
        fmt::format("query ciphertext at scale 2^{:.2f}; the kernels need the preset's 2^{}",
                    std::log2(query.scale()), params.log_scale()));
  }
  return AcceptedRequest{std::move(layout), std::move(query)};
}

Status check_response(const ckks::Params& params, const KernelLayout& layout,
                      const RerankResponse& p) {
  PRIVSEARCH_RETURN_IF_ERROR(check_params_id(params, p.params_id, "rerank response"));
  if (p.kernel != layout.kernel() || p.dim != layout.dim() || p.k != layout.k() ||
      p.period != layout.period()) {
    return failed_precondition_error(fmt::format(
        "response is for kernel {}, d' = {}, K = {}, period {}; the request was kernel {}, "
        "d' = {}, K = {}, period {}",
        kernel_name(p.kernel), p.dim, p.k, p.period, kernel_name(layout.kernel()), layout.dim(),
        layout.k(), layout.period()));
  }
  const std::size_t map_entries = layout.kernel() == Kernel::kPacked ? 0 : layout.k();
  if (p.slot_map.size() != map_entries) {
    return failed_precondition_error(fmt::format("response has {} slot map entries, expected {}",
                                                 p.slot_map.size(), map_entries));
  }
  if (p.outputs.size() != layout.outputs()) {
    return failed_precondition_error(fmt::format("response has {} ciphertexts, expected {}",
                                                 p.outputs.size(), layout.outputs()));
  }
  for (std::size_t c = 0; c < p.slot_map.size(); ++c) {
    if (p.slot_map[c].ciphertext != layout.slot_map()[c].ciphertext ||
        p.slot_map[c].slot != layout.slot_map()[c].slot) {
      return failed_precondition_error(fmt::format("slot map differs at candidate {}", c));
    }
  }
  return Status();
}

}  // namespace privsearch::rerank

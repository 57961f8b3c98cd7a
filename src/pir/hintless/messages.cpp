#include "pir/hintless/messages.h"

#include <limits>
#include <string>

#include "core/bytes.h"

namespace privsearch::pir::hintless {
namespace {

constexpr std::uint32_t kQueryMagic = 0x31515048;     // "HPQ1"
constexpr std::uint32_t kResponseMagic = 0x31525048;  // "HPR1"
constexpr std::uint32_t kInfoMagic = 0x31495048;      // "HPI1"
constexpr int kResidueBits = 28;

std::size_t key_values(const HintlessParams& p) {
  return static_cast<std::size_t>(p.log_d()) * p.gadget_digits * p.d;
}

void put_residues(ByteWriter& w, const std::uint32_t* v, std::size_t count, int bits) {
  std::vector<std::uint64_t> wide(v, v + count);
  w.put_packed(wide, bits);
}

Status get_residues(ByteReader& r, std::uint32_t* out, std::size_t count, int bits,
                    std::uint64_t bound, std::string_view what) {
  std::vector<std::uint64_t> wide(count);
  PRIVSEARCH_RETURN_IF_ERROR(r.get_packed(wide, bits, bound, what));
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::uint32_t>(wide[i]);
  return Status();
}

// The header fields every decoder checks first.
Status check_header(ByteReader& r, std::uint32_t magic, const HintlessParams& params,
                    std::string_view what) {
  std::uint32_t got_magic = 0, id = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(got_magic));
  if (got_magic != magic) {
    return data_loss_error("not a hintless PIR " + std::string(what) + " (bad magic)");
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(id));
  if (id != params.id) {
    return failed_precondition_error("hintless PIR " + std::string(what) + " for params id " +
                                     std::to_string(id) + ", the database uses " +
                                     std::to_string(params.id));
  }
  return Status();
}

}  // namespace

std::size_t hintless_query_bytes(const HintlessParams& params, std::size_t columns) {
  return 16 + 2 * packed_bytes(columns, kResidueBits) +
         2 * packed_bytes(key_values(params), kResidueBits);
}

std::size_t hintless_response_bytes(const HintlessParams& params, std::size_t outputs) {
  return 12 + outputs * (packed_bytes(params.d, kResidueBits) +
                         packed_bytes(params.d, params.response_b_bits));
}

std::vector<std::uint8_t> encode_query(const HintlessParams& params, const HintlessQuery& query) {
  ByteWriter w;
  w.reserve(hintless_query_bytes(params, query.columns));
  w.put_u32(kQueryMagic);
  w.put_u32(query.params_id);
  w.put_u64(query.columns);
  const std::size_t n = query.columns, k = key_values(params);
  put_residues(w, query.c1.data(), n, kResidueBits);
  put_residues(w, query.c1.data() + n, n, kResidueBits);
  // key_b is Poly2-major: gather the q_a halves, then the q_b halves.
  std::vector<std::uint32_t> half(k);
  for (int p = 0; p < 2; ++p) {
    for (std::size_t poly = 0; poly < k / params.d; ++poly) {
      for (std::size_t i = 0; i < params.d; ++i) {
        half[poly * params.d + i] = query.key_b[(2 * poly + p) * params.d + i];
      }
    }
    put_residues(w, half.data(), k, kResidueBits);
  }
  return w.take();
}

Result<HintlessQuery> decode_query(const HintlessParams& params, const HintlessShape& shape,
                                   std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(check_header(r, kQueryMagic, params, "query"));
  HintlessQuery q;
  q.params_id = params.id;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(q.columns));
  if (q.columns != shape.columns) {
    return failed_precondition_error("hintless PIR query for " + std::to_string(q.columns) +
                                     " columns, the database has " + std::to_string(shape.columns));
  }
  if (bytes.size() != hintless_query_bytes(params, shape.columns)) {
    return data_loss_error("hintless PIR query of " + std::to_string(bytes.size()) +
                           " bytes, expected " +
                           std::to_string(hintless_query_bytes(params, shape.columns)));
  }
  const std::size_t n = shape.columns, k = key_values(params);
  q.c1.resize(2 * n);
  PRIVSEARCH_RETURN_IF_ERROR(get_residues(r, q.c1.data(), n, kResidueBits, params.q_a, "c1"));
  PRIVSEARCH_RETURN_IF_ERROR(get_residues(r, q.c1.data() + n, n, kResidueBits, params.q_b, "c1"));
  q.key_b.resize(2 * k);
  std::vector<std::uint32_t> half(k);
  for (int p = 0; p < 2; ++p) {
    PRIVSEARCH_RETURN_IF_ERROR(get_residues(r, half.data(), k, kResidueBits,
                                            p == 0 ? params.q_a : params.q_b, "packing key"));
    for (std::size_t poly = 0; poly < k / params.d; ++poly) {
      for (std::size_t i = 0; i < params.d; ++i) {
        q.key_b[(2 * poly + p) * params.d + i] = half[poly * params.d + i];
      }
    }
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return q;
}

std::vector<std::uint8_t> encode_response(const HintlessParams& params,
                                          const HintlessResponse& response) {
  ByteWriter w;
  w.reserve(hintless_response_bytes(params, response.outputs));
  w.put_u32(kResponseMagic);
  w.put_u32(response.params_id);
  w.put_u32(response.outputs);
  for (std::size_t o = 0; o < response.outputs; ++o) {
    put_residues(w, response.a.data() + o * params.d, params.d, kResidueBits);
    put_residues(w, response.b.data() + o * params.d, params.d, params.response_b_bits);
  }
  return w.take();
}

Result<HintlessResponse> decode_response(const HintlessParams& params, const HintlessShape& shape,
                                         std::span<const std::uint8_t> bytes) {
  return decode_response_part(params, shape.outputs, bytes);
}

Result<HintlessResponse> decode_response_part(const HintlessParams& params, std::size_t outputs,
                                              std::span<const std::uint8_t> bytes) {
  ByteReader r(bytes);
  PRIVSEARCH_RETURN_IF_ERROR(check_header(r, kResponseMagic, params, "response"));
  HintlessResponse resp;
  resp.params_id = params.id;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(resp.outputs));
  if (resp.outputs != outputs || bytes.size() != hintless_response_bytes(params, outputs)) {
    return data_loss_error("hintless PIR response of " + std::to_string(bytes.size()) +
                           " bytes with " + std::to_string(resp.outputs) + " outputs, expected " +
                           std::to_string(hintless_response_bytes(params, outputs)) +
                           " bytes with " + std::to_string(outputs));
  }
  resp.a.resize(outputs * params.d);
  resp.b.resize(outputs * params.d);
  const std::uint64_t b_bound = std::uint64_t{1} << params.response_b_bits;
  for (std::size_t o = 0; o < outputs; ++o) {
    PRIVSEARCH_RETURN_IF_ERROR(get_residues(r, resp.a.data() + o * params.d, params.d, kResidueBits,
                                            params.q_a, "response a-part"));
    PRIVSEARCH_RETURN_IF_ERROR(get_residues(r, resp.b.data() + o * params.d, params.d,
                                            params.response_b_bits, b_bound, "response b-part"));
  }
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  return resp;
}

Result<std::vector<std::uint8_t>> join_response_parts(
    const HintlessParams& params, const HintlessShape& shape,
    std::span<const std::span<const std::uint8_t>> parts) {
  HintlessResponse joined;
  joined.params_id = params.id;
  std::size_t total = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    ByteReader r(parts[i]);
    std::uint32_t magic = 0, id = 0, outputs = 0;
    if (!r.get_u32(magic).ok() || !r.get_u32(id).ok() || !r.get_u32(outputs).ok() || outputs == 0 ||
        total + outputs > shape.outputs) {
      return data_loss_error("hintless PIR part " + std::to_string(i) +
                             " does not fit the database's " + std::to_string(shape.outputs) +
                             " outputs");
    }
    PRIVSEARCH_ASSIGN_OR_RETURN(const HintlessResponse part,
                                decode_response_part(params, outputs, parts[i]));
    joined.a.insert(joined.a.end(), part.a.begin(), part.a.end());
    joined.b.insert(joined.b.end(), part.b.begin(), part.b.end());
    total += outputs;
  }
  joined.outputs = static_cast<std::uint32_t>(total);
  if (total != shape.outputs) {
    return data_loss_error("hintless PIR parts hold " + std::to_string(total) + " of " +
                           std::to_string(shape.outputs) + " outputs");
  }
  return encode_response(params, joined);
}

Status check_shape(const HintlessParams& params, const HintlessShape& s) {
  std::size_t room = 0;
  if (s.records == 0 || s.record_bytes == 0 || s.outputs == 0 || s.outputs > kDefaultMaxOutputs ||
      s.columns == 0 || s.columns > kMaxColumns || s.records_per_column == 0 ||
      !checked_mul(s.records_per_column, s.record_bytes, room) || room > s.column_bytes(params) ||
      s.records > s.columns * s.records_per_column ||
      s.records <= (s.columns - 1) * s.records_per_column) {
    return invalid_argument_error("hintless PIR shape (" + std::to_string(s.records) +
                                  " records of " + std::to_string(s.record_bytes) + " B in " +
                                  std::to_string(s.columns) + " columns x " +
                                  std::to_string(s.outputs) + " outputs) does not fit");
  }
  return Status();
}

std::vector<std::uint8_t> encode_public_info(const HintlessParams& params,
                                             const HintlessShape& shape) {
  ByteWriter w;
  w.put_u32(kInfoMagic);
  w.put_u32(params.id);
  w.put_u64(shape.records);
  w.put_u64(shape.record_bytes);
  w.put_u32(static_cast<std::uint32_t>(shape.outputs));
  w.put_u64(shape.records_per_column);
  w.put_u64(shape.columns);
  return w.take();
}

Result<HintlessPublicInfo> decode_public_info(std::span<const std::uint8_t> bytes,
                                              bool allow_insecure) {
  ByteReader r(bytes);
  std::uint32_t magic = 0, id = 0, outputs = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(magic));
  if (magic != kInfoMagic) return data_loss_error("not a hintless PIR public info (bad magic)");
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(id));
  HintlessPublicInfo info;
  std::uint64_t records = 0, record_bytes = 0, per_column = 0, columns = 0;
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(records));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(record_bytes));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u32(outputs));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(per_column));
  PRIVSEARCH_RETURN_IF_ERROR(r.get_u64(columns));
  PRIVSEARCH_RETURN_IF_ERROR(r.expect_end());
  PRIVSEARCH_ASSIGN_OR_RETURN(info.params, hintless_params_by_id(id, allow_insecure));
  // A 32-bit client (the WebAssembly one) must not truncate a hostile shape into a valid one.
  for (const std::uint64_t v : {records, record_bytes, per_column, columns}) {
    if (v > std::numeric_limits<std::size_t>::max()) {
      return data_loss_error(
          "hintless PIR public info: a shape field exceeds this client's size_t");
    }
  }
  info.shape = {static_cast<std::size_t>(records), static_cast<std::size_t>(record_bytes), outputs,
                static_cast<std::size_t>(per_column), static_cast<std::size_t>(columns)};
  PRIVSEARCH_RETURN_IF_ERROR(check_shape(info.params, info.shape));
  return info;
}

}  // namespace privsearch::pir::hintless

// Fresh RLWE noise and ephemeral secrets for the client: CBD(21) errors and ternary u, sampled
// in coefficient form, mapped to the requested key-basis rows and transformed to NTT form.
// Client library only. Constant time: samplers and mapping are branch-free.
#pragma once

#include <cstddef>
#include <vector>

#include "ckks/params.h"
#include "core/csprng.h"
#include "ring/rns_poly.h"

namespace privsearch::ckks {

ring::RnsPoly sample_error_ntt(const Params& params, const std::vector<std::size_t>& rows,
                               Prng& prng);
ring::RnsPoly sample_ternary_ntt(const Params& params, const std::vector<std::size_t>& rows,
                                 Prng& prng);

}  // namespace privsearch::ckks

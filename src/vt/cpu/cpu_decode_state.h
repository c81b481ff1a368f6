// The CPU backend's DecodeState (private to vt/cpu): host arena buffers written in place
// through Backend::host_write, read back as views, argmax and advance as CPU ops.
#pragma once

#include <memory>

#include "vt/decode_state.h"

namespace vt::cpu {

std::unique_ptr<DecodeState> make_decode_state(Backend& backend, int32_t padded, int32_t vocab,
                                               int block_size);

}  // namespace vt::cpu

// What cuDNN says about its opaque weight space: one OpaqueEntry per (pseudo-layer, linLayerID,
// matrix | bias), asked of cudnnGetRNNWeightParams one at a time (the matrix query with a NULL
// bias part, then the bias query with a NULL matrix part, as PyTorch does). The layout is never
// assumed: opaque_layout() (policy/convert/flat_layout.h) checks the table and builds the map.
#pragma once

#include <cudnn.h>

#include <cstddef>

#include "policy/convert/flat_layout.h"
#include "policy/core_spec.h"

namespace recur::policy::cudnn {

// weight_space: a device allocation of weight_space_bytes (cudnnGetRNNWeightSpaceSize); cuDNN
// only does address arithmetic on it. Offsets are in elements of `type` (the descriptor's data
// type: float, half or bfloat16, each tensor checked to have it) from its start; -1 where cuDNN
// returned no address or a tensor of no elements.
OpaqueTable query_weight_table(cudnnHandle_t handle, cudnnRNNDescriptor_t rnn, const CoreSpec& spec,
                               const void* weight_space, size_t weight_space_bytes,
                               cudnnDataType_t type = CUDNN_DATA_FLOAT);

// True when the table is what PyTorch's get_parameters asserts (docs/RNN_LAYOUT.md): per
// pseudo-layer the W matrices in id order, back to back, then the R matrices; the biases the
// same. For reports only: recur does not rely on it.
bool is_pytorch_contiguous(const CoreSpec& spec, const OpaqueTable& table);

}  // namespace recur::policy::cudnn

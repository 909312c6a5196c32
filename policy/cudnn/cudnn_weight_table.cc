#include "policy/cudnn/cudnn_weight_table.h"

#include <cstdint>

#include "core/error.h"
#include "policy/cudnn/cudnn_handles.h"

namespace recur::policy::cudnn {
namespace {

size_t element_bytes(cudnnDataType_t type) {
  switch (type) {
    case CUDNN_DATA_FLOAT:
      return 4;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16:
      return 2;
    default:
      break;
  }
  RECUR_ASSERT(false);
  return 4;
}

// The entry of one query: offset and dims of the descriptor cuDNN filled, or offset -1.
OpaqueEntry read_entry(int layer, int id, bool bias, const void* address, const TensorDescriptor& d,
                       const void* base, size_t bytes, cudnnDataType_t expected) {
  OpaqueEntry e;
  e.pseudo_layer = layer;
  e.lin_id = id;
  e.bias = bias;
  if (address == nullptr) return e;
  cudnnDataType_t type{};
  int nb_dims = 0;
  int dims[8] = {};
  int strides[8] = {};
  CUDNN_CHECK(cudnnGetTensorNdDescriptor(d.get(), 8, &type, &nb_dims, dims, strides));
  RECUR_CHECK(type == expected,
              "cuDNN weight layer {} id {} ({}): data type {}, expected the descriptor's {}", layer,
              id, bias ? "bias" : "matrix", static_cast<int>(type), static_cast<int>(expected));
  const size_t element = element_bytes(expected);
  RECUR_ASSERT(nb_dims >= 0 && nb_dims <= 8);
  int64_t numel = 1;
  for (int i = 0; i < nb_dims; ++i) {
    e.dims.push_back(dims[i]);
    numel *= dims[i];
  }
  const auto delta = reinterpret_cast<uintptr_t>(address) - reinterpret_cast<uintptr_t>(base);
  RECUR_CHECK(reinterpret_cast<uintptr_t>(address) >= reinterpret_cast<uintptr_t>(base) &&
                  delta < bytes && delta % element == 0,
              "cuDNN weight layer {} id {} ({}): address {} bytes from the weight space start, "
              "outside its {} bytes or not aligned to its {}-byte elements",
              layer, id, bias ? "bias" : "matrix", static_cast<int64_t>(delta), bytes, element);
  if (numel > 0) e.offset = static_cast<int64_t>(delta / element);
  return e;
}

}  // namespace

OpaqueTable query_weight_table(cudnnHandle_t handle, cudnnRNNDescriptor_t rnn, const CoreSpec& spec,
                               const void* weight_space, size_t weight_space_bytes,
                               cudnnDataType_t type) {
  const size_t element = element_bytes(type);
  RECUR_ASSERT(weight_space != nullptr && weight_space_bytes % element == 0);
  OpaqueTable table;
  table.size = static_cast<int64_t>(weight_space_bytes / element);
  TensorDescriptor m_desc, b_desc;
  for (int layer = 0; layer < spec.layers; ++layer) {  // unidirectional: pseudo-layer = layer
    for (int id = 0; id < 2 * spec.gates(); ++id) {
      void* m_addr = nullptr;
      CUDNN_CHECK(cudnnGetRNNWeightParams(handle, rnn, layer, weight_space_bytes, weight_space, id,
                                          m_desc.get(), &m_addr, nullptr, nullptr));
      table.entries.push_back(
          read_entry(layer, id, false, m_addr, m_desc, weight_space, weight_space_bytes, type));
      void* b_addr = nullptr;
      CUDNN_CHECK(cudnnGetRNNWeightParams(handle, rnn, layer, weight_space_bytes, weight_space, id,
                                          nullptr, nullptr, b_desc.get(), &b_addr));
      table.entries.push_back(
          read_entry(layer, id, true, b_addr, b_desc, weight_space, weight_space_bytes, type));
    }
  }
  return table;
}

bool is_pytorch_contiguous(const CoreSpec& spec, const OpaqueTable& table) {
  auto find = [&](int layer, int id, bool bias) -> const OpaqueEntry* {
    for (const auto& e : table.entries)
      if (e.pseudo_layer == layer && e.lin_id == id && e.bias == bias) return &e;
    return nullptr;
  };
  const int G = spec.gates();
  for (int layer = 0; layer < spec.layers; ++layer)
    for (bool bias : {false, true})
      for (int half = 0; half < 2; ++half) {
        const OpaqueEntry* first = find(layer, half * G, bias);
        if (first == nullptr || first->offset < 0) return false;
        int64_t expected = first->offset;
        for (int g = 0; g < G; ++g) {
          const OpaqueEntry* e = find(layer, half * G + g, bias);
          if (e == nullptr || e->offset != expected) return false;
          int64_t numel = 1;
          for (int d : e->dims) numel *= d;
          expected += numel;
        }
      }
  return true;
}

}  // namespace recur::policy::cudnn

#include "policy/cudnn/cudnn_handles.h"

#include "core/error.h"

namespace recur::policy::cudnn {

Handle::Handle() {
  CUDNN_CHECK(cudnnCreate(&handle_));
}
Handle::~Handle() {
  if (handle_) cudnnDestroy(handle_);
}

RnnDescriptor::RnnDescriptor() {
  CUDNN_CHECK(cudnnCreateRNNDescriptor(&desc_));
}
RnnDescriptor::~RnnDescriptor() {
  if (desc_) cudnnDestroyRNNDescriptor(desc_);
}

RnnDataDescriptor::RnnDataDescriptor() {
  CUDNN_CHECK(cudnnCreateRNNDataDescriptor(&desc_));
}
RnnDataDescriptor::~RnnDataDescriptor() {
  if (desc_) cudnnDestroyRNNDataDescriptor(desc_);
}

void RnnDataDescriptor::set_seq_major_padded(int max_length, int vector_size,
                                             std::span<const int> lengths, cudnnDataType_t type) {
  RECUR_ASSERT(!lengths.empty());
  // Padded outputs are zeros. cuDNN reads the fill as the data type and takes a non-const host
  // pointer; all-zero bits are +0 in float, half and bfloat16 alike.
  static double fill = 0.0;
  CUDNN_CHECK(cudnnSetRNNDataDescriptor(desc_, type, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                        max_length, static_cast<int>(lengths.size()), vector_size,
                                        lengths.data(), &fill));
}

TensorDescriptor::TensorDescriptor() {
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc_));
}
TensorDescriptor::~TensorDescriptor() {
  if (desc_) cudnnDestroyTensorDescriptor(desc_);
}

void TensorDescriptor::set_packed_3d(int d0, int d1, int d2, cudnnDataType_t type) {
  const int dims[3] = {d0, d1, d2};
  const int strides[3] = {d1 * d2, d2, 1};
  CUDNN_CHECK(cudnnSetTensorNdDescriptor(desc_, type, 3, dims, strides));
}

NoDropoutDescriptor::NoDropoutDescriptor(cudnnHandle_t handle) {
  CUDNN_CHECK(cudnnCreateDropoutDescriptor(&desc_));
  try {
    CUDNN_CHECK(cudnnSetDropoutDescriptor(desc_, handle, 0.0f, nullptr, 0, 0));
  } catch (...) {
    cudnnDestroyDropoutDescriptor(desc_);
    desc_ = nullptr;
    throw;
  }
}
NoDropoutDescriptor::~NoDropoutDescriptor() {
  if (desc_) cudnnDestroyDropoutDescriptor(desc_);
}

}  // namespace recur::policy::cudnn

// RAII owners of the cuDNN objects the sequence executor holds (CUDA builds only). Each wraps one
// create/destroy pair; creation failures throw recur::DeviceError through CUDNN_CHECK, destructors
// never throw. The descriptors' contents are set by their owners (the executor, the weight
// table), which see every argument; these classes only own.
#pragma once

#include <cudnn.h>

#include <span>

namespace recur::policy::cudnn {

class Handle {
 public:
  Handle();
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cudnnHandle_t get() const { return handle_; }

 private:
  cudnnHandle_t handle_ = nullptr;
};

class RnnDescriptor {
 public:
  RnnDescriptor();
  ~RnnDescriptor();
  RnnDescriptor(const RnnDescriptor&) = delete;
  RnnDescriptor& operator=(const RnnDescriptor&) = delete;
  cudnnRNNDescriptor_t get() const { return desc_; }

 private:
  cudnnRNNDescriptor_t desc_ = nullptr;
};

class RnnDataDescriptor {
 public:
  RnnDataDescriptor();
  ~RnnDataDescriptor();
  RnnDataDescriptor(const RnnDataDescriptor&) = delete;
  RnnDataDescriptor& operator=(const RnnDataDescriptor&) = delete;
  cudnnRNNDataDescriptor_t get() const { return desc_; }

  // `type` (float, half or bfloat16), SEQ_MAJOR_UNPACKED (max_length, batch, vector), padding of
  // outputs filled with 0. lengths (batch), each in 1..max_length (host; cuDNN copies it).
  void set_seq_major_padded(int max_length, int vector_size, std::span<const int> lengths,
                            cudnnDataType_t type = CUDNN_DATA_FLOAT);

 private:
  cudnnRNNDataDescriptor_t desc_ = nullptr;
};

class TensorDescriptor {
 public:
  TensorDescriptor();
  ~TensorDescriptor();
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;
  cudnnTensorDescriptor_t get() const { return desc_; }

  // `type` (d0, d1, d2), fully packed: strides (d1*d2, d2, 1). cuDNN's h/c layout.
  void set_packed_3d(int d0, int d1, int d2, cudnnDataType_t type = CUDNN_DATA_FLOAT);

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

// A dropout descriptor with dropout 0 and no state buffer: what PyTorch hands cuDNN when there
// is no dropout (no random state is initialised at probability 0).
class NoDropoutDescriptor {
 public:
  explicit NoDropoutDescriptor(cudnnHandle_t handle);
  ~NoDropoutDescriptor();
  NoDropoutDescriptor(const NoDropoutDescriptor&) = delete;
  NoDropoutDescriptor& operator=(const NoDropoutDescriptor&) = delete;
  cudnnDropoutDescriptor_t get() const { return desc_; }

 private:
  cudnnDropoutDescriptor_t desc_ = nullptr;
};

}  // namespace recur::policy::cudnn

#include "agent/adam.h"

#include <cmath>

#include "core/error.h"
#include "kernels/learner_math.h"
#include "policy/lane_sum.h"

namespace recur::agent {

Adam::Adam(const std::vector<policy::ParamGroup>& groups, AdamConfig config) : config_(config) {
  for (const auto& g : groups) {
    names_.push_back(g.name);
    layouts_.push_back(g.layout);
    m_.emplace_back(g.values.size(), 0.0f);
    v_.emplace_back(g.values.size(), 0.0f);
  }
}

void Adam::step(const std::vector<policy::ParamGroup>& groups, float lr) {
  RECUR_ASSERT(groups.size() == m_.size());
  ++t_;
  // The same element update as the device learner's kernel (kernels/learner_math.h).
  const kernels::AdamCoefficients a =
      kernels::adam_coefficients(config_.beta1, config_.beta2, config_.eps, lr, t_);
  for (size_t k = 0; k < groups.size(); ++k) {
    auto& m = m_[k];
    auto& v = v_[k];
    const auto& g = groups[k];
    RECUR_ASSERT(g.values.size() == m.size() && g.grads.size() == m.size());
    // Four distinct buffers: __restrict lets the compiler vectorize the element update (the
    // arithmetic per element is unchanged, so the results are bitwise those of the scalar loop).
    float* __restrict p = g.values.data();
    const float* __restrict grad = g.grads.data();
    float* __restrict mk = m.data();
    float* __restrict vk = v.data();
    const size_t n = m.size();
    for (size_t i = 0; i < n; ++i) kernels::adam_element(p[i], grad[i], mk[i], vk[i], a);
  }
}

policy::TensorMap Adam::to_tensors() const {
  policy::TensorMap out;
  for (size_t k = 0; k < names_.size(); ++k) {
    for (auto [prefix, src] :
         {std::pair{"optim.adam.m.", &m_[k]}, std::pair{"optim.adam.v.", &v_[k]}}) {
      std::vector<float> data = *src;
      if (layouts_[k]) {
        data.resize(layouts_[k]->position.size());
        policy::gather_canonical(*layouts_[k], *src, data);
      }
      out[prefix + names_[k]] = policy::Tensor({static_cast<int64_t>(data.size())}, data);
    }
  }
  // The step count as a float tensor (safetensors F32): exact up to 2^24 updates.
  out["optim.adam.step"] = policy::Tensor({1}, {static_cast<float>(t_)});
  return out;
}

void Adam::load_tensors(const policy::TensorMap& tensors) {
  for (size_t k = 0; k < names_.size(); ++k) {
    for (auto [prefix, dst] :
         {std::pair{"optim.adam.m.", &m_[k]}, std::pair{"optim.adam.v.", &v_[k]}}) {
      const auto it = tensors.find(prefix + names_[k]);
      const size_t expected = layouts_[k] ? layouts_[k]->position.size() : dst->size();
      RECUR_CHECK(it != tensors.end() && it->second.data.size() == expected,
                  "optimizer state '{}' is missing or has the wrong size", prefix + names_[k]);
      if (layouts_[k])
        policy::scatter_canonical(*layouts_[k], it->second.data, *dst);  // gaps stay zero
      else
        *dst = it->second.data;
    }
  }
  const auto it = tensors.find("optim.adam.step");
  RECUR_CHECK(it != tensors.end() && it->second.data.size() == 1,
              "optimizer state 'optim.adam.step' is missing");
  t_ = static_cast<int64_t>(it->second.data[0]);
}

double global_grad_norm(const std::vector<policy::ParamGroup>& groups) {
  // In vector lanes (policy/lane_sum.h): one chain of dependent double additions over every
  // parameter was 4% of the main job's wall time.
  double sq = 0;
  for (const auto& g : groups) {
    const float* x = g.grads.data();
    sq += policy::lane_sum<double>(g.grads.size(), [x](size_t i) { return double{x[i]} * x[i]; });
  }
  return std::sqrt(sq);
}

double clip_grad_norm(const std::vector<policy::ParamGroup>& groups, double max_norm) {
  const double norm = global_grad_norm(groups);
  const float scale = kernels::clip_scale(norm, max_norm);
  if (scale != 1.0f) {
    for (const auto& g : groups)
      for (float& x : g.grads) x *= scale;
  }
  return norm;
}

}  // namespace recur::agent

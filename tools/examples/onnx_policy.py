#!/usr/bin/env python3
"""The smallest deployment of a recur policy: ONNX Runtime steps a Gymnasium env and carries the
recurrent state between calls. Needs numpy, gymnasium and onnxruntime; not recur.

    recur convert export runs/cartpole-*/ --to onnx --out policy.onnx
    python3 tools/examples/onnx_policy.py policy.onnx CartPole-v1
"""
import sys

import gymnasium as gym
import numpy as np
import onnxruntime as ort

sess = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
names = [o.name for o in sess.get_outputs()]
# Every state input (h_in, c_in, critic_*) is [layers, batch, hidden]: zeros for one env.
state = {i.name: np.zeros((i.shape[0], 1, i.shape[2]), np.float32)
         for i in sess.get_inputs() if i.name.endswith("_in")}
env = gym.make(sys.argv[2])
obs, _ = env.reset(seed=0)
start, total, done = 1.0, 0.0, False
while not done:
    feeds = {"obs": obs[None].astype(np.float32), "episode_start": np.array([start], np.float32)}
    out = dict(zip(names, sess.run(None, {**feeds, **state})))
    state = {k[:-4] + "_in": v for k, v in out.items() if k.endswith("_out")}  # h_out -> h_in
    obs, reward, terminated, truncated, _ = env.step(out["actions"][0])
    total, start, done = total + reward, 0.0, terminated or truncated
print(f"return {total:.1f}")

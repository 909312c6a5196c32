"""recur on Python Gymnasium envs against sb3-contrib RecurrentPPO, and against recur's own C++ env.

For each env (Gymnasium's CartPole-v1 with velocities masked, LunarLander-v3), with the same
settings on both sides (LSTM size, n_envs, n_steps, epochs, minibatches, lr, total steps):

  recur-python  recur.train(config, env=factory): C++ actor and learner, the Gymnasium env in a
                SAME_STEP SyncVectorEnv stepped once per batched step
  sb3-contrib   RecurrentPPO("MlpLstmPolicy") on a DummyVecEnv of the same factory
  recur-cpp     recur.train(config) on recur's built-in env of the same id (CartPoleNoVel-v1,
                LunarLander-v3): the overhead of the Python path

and prints env-steps/s and the final deterministic evaluation (10 episodes) side by side.

    /tmp/recur-bench-venv/bin/python tools/bench/bench_python_env.py [--steps 50000] [--envs cartpole]

Needs torch, stable-baselines3, sb3-contrib, gymnasium[box2d] and the recur package (the
extension built for this interpreter: PYTHONPATH=build-bench/tools/python).
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import tempfile
import time

import gymnasium as gym
import numpy as np

import recur

REPO = pathlib.Path(__file__).resolve().parents[2]


class MaskVelocity(gym.ObservationWrapper):
    """CartPole-v1 observing only (x, theta), as recur's CartPoleNoVel-v1."""

    def __init__(self, env):
        super().__init__(env)
        low, high = env.observation_space.low[[0, 2]], env.observation_space.high[[0, 2]]
        self.observation_space = gym.spaces.Box(low, high, (2,), np.float32)

    def observation(self, obs):
        return obs[[0, 2]].astype(np.float32)


ENVS = {
    "cartpole": dict(
        factory=lambda: MaskVelocity(gym.make("CartPole-v1")),
        recur_id="CartPoleNoVel-v1",
        config="configs/cartpole_novel.yaml",
        steps=50_000,
    ),
    "lunarlander": dict(
        factory=lambda: gym.make("LunarLander-v3"),
        recur_id="LunarLander-v3",
        config="configs/lunar_lander.yaml",
        steps=100_000,
    ),
}


def resolved(run: pathlib.Path) -> dict:
    """Sections of the run's resolved config.yaml ('key: value' lines)."""
    out, section = {}, None
    for line in (run / "config.yaml").read_text().splitlines():
        if line and not line.startswith((" ", "#")) and line.endswith(":"):
            section = line[:-1]
        elif section and ":" in line and line.startswith("  "):
            k, v = line.strip().split(":", 1)
            out[f"{section}.{k}"] = v.strip().strip('"')
    return out


def recur_run(config, steps, out, env=None, eval_env=None):
    t0 = time.perf_counter()
    run = recur.train(REPO / config, {"run.output_dir": out, "run.eval_every": 0,
                                      "run.final_eval_episodes": 10, "run.threads": 1},
                      env=env, run__total_env_steps=steps)
    seconds = time.perf_counter() - t0
    rows = list(csv.DictReader(open(run / "progress.csv")))
    train_s = float(rows[-1]["time_s"])
    final = list(csv.DictReader(open(run / "eval.csv")))[-1]
    return dict(steps=int(rows[-1]["env_steps"]), fps=int(rows[-1]["env_steps"]) / train_s,
                wall=seconds, score=float(final["return_mean"]), run=run)


def sb3_run(factory, cfg, steps):
    import torch
    from sb3_contrib import RecurrentPPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecNormalize

    torch.set_num_threads(1)
    n = int(cfg["env.num_envs"])
    venv = make_vec_env(factory, n_envs=n, seed=0)
    venv = VecNormalize(venv, norm_obs=cfg["env.normalize_obs"] == "true",
                        norm_reward=cfg["env.normalize_reward"] == "true",
                        gamma=float(cfg["algo.gamma"]))
    n_steps = int(cfg["algo.rollout_steps"])
    model = RecurrentPPO(
        "MlpLstmPolicy", venv, n_steps=n_steps,
        batch_size=n * n_steps // int(cfg["algo.num_minibatches"]),
        n_epochs=int(cfg["algo.epochs"]), learning_rate=float(cfg["algo.learning_rate"]),
        gamma=float(cfg["algo.gamma"]), gae_lambda=float(cfg["algo.gae_lambda"]),
        ent_coef=float(cfg["algo.ent_coef"]), vf_coef=float(cfg["algo.vf_coef"]),
        max_grad_norm=float(cfg["algo.max_grad_norm"]),
        policy_kwargs=dict(lstm_hidden_size=int(cfg["policy.hidden"]), n_lstm_layers=1,
                           net_arch=[], enable_critic_lstm=True),
        seed=0, device="cpu", verbose=0)
    t0 = time.perf_counter()
    model.learn(total_timesteps=steps)
    train_s = time.perf_counter() - t0
    eval_env = VecNormalize(make_vec_env(factory, n_envs=1, seed=1234), training=False,
                            norm_reward=False)
    eval_env.obs_rms = venv.obs_rms
    mean, _ = evaluate_policy(model, eval_env, n_eval_episodes=10, deterministic=True)
    return dict(steps=steps, fps=steps / train_s, wall=train_s, score=float(mean))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--envs", default="cartpole,lunarlander")
    ap.add_argument("--steps", type=int, default=0, help="total env steps (0: per env default)")
    ap.add_argument("--skip-sb3", action="store_true")
    args = ap.parse_args()
    recur.set_log_level("warn")
    out = tempfile.mkdtemp(prefix="recur-bench-py-")
    print(f"{'env':12} {'runner':13} {'env steps':>9} {'steps/s':>9} {'final eval':>10}")
    for name in args.envs.split(","):
        e = ENVS[name]
        steps = args.steps or e["steps"]
        rows = []
        py = recur_run(e["config"], steps, out, env=e["factory"])
        rows.append(("recur-python", py))
        rows.append(("recur-cpp", recur_run(e["config"], steps, out)))
        if not args.skip_sb3:
            rows.append(("sb3-contrib", sb3_run(e["factory"], resolved(py["run"]), steps)))
        for runner, r in rows:
            print(f"{name:12} {runner:13} {r['steps']:>9} {r['fps']:>9.0f} {r['score']:>10.1f}",
                  flush=True)


if __name__ == "__main__":
    main()

"""A feed-forward baseline on the T-maze: Stable-Baselines3 PPO with MlpPolicy (no memory).

recur has no feed-forward core, so the "memory is needed" claim of docs/PERFORMANCE.md ("T-maze:
memory needed") is measured against SB3. recur's Python package does not load env plugins, so
TMaze below is a line-by-line port of tools/examples/tmaze/tmaze.cc (same cells, observations,
actions, rewards and time limit; the cue is drawn from the env's own RNG, so episodes are not
bit-identical to recur's, only equal in distribution). Keep the two in step when either changes.

    python3 -m venv /tmp/recur-bench-venv
    /tmp/recur-bench-venv/bin/pip install torch stable-baselines3 sb3-contrib gymnasium
    /tmp/recur-bench-venv/bin/python tools/examples/tmaze/feedforward_baseline.py --seeds 0 1 2

Prints, per seed, the deterministic evaluation over --eval-episodes episodes: mean return and the
fraction of episodes ending in the goal arm. `--recurrent` trains sb3-contrib's RecurrentPPO
(MlpLstmPolicy) instead, as a check that the port is solvable with memory. With `--recurrent
--lstm-hidden 32 --no-mlp --eval-every 8192` it has configs/tmaze.yaml's shape (one LSTM-32 per
tower, linear heads) and prints a 20-episode deterministic evaluation every 8192 env steps, the
curve recur's eval.csv holds (docs/PERFORMANCE.md, "The T-maze's forgetting is PPO's").
"""

import argparse
import time

import gymnasium as gym
import numpy as np

NORTH, EAST, SOUTH, WEST = 0, 1, 2, 3
GOAL_REWARD, WRONG_ARM_REWARD = 4.0, -0.1


class TMaze(gym.Env):
    """Port of tmaze.cc's TMaze: goal +1 north (cue [0,1,1]), -1 south (cue [1,1,0])."""

    def __init__(self, length=8, step_penalty=0.0):
        self.length, self.step_penalty = length, step_penalty
        self.observation_space = gym.spaces.Box(0.0, 1.0, (3,), np.float32)
        self.action_space = gym.spaces.Discrete(4)
        self.x, self.arm, self.goal = 0, 0, 1

    def _obs(self):
        if self.arm != 0:
            o = (0, 0, 0)
        elif self.x == 0:
            o = (0, 1, 1) if self.goal > 0 else (1, 1, 0)
        elif self.x == self.length:
            o = (0, 1, 0)
        else:
            o = (1, 0, 1)
        return np.array(o, dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x, self.arm = 0, 0
        self.goal = 1 if self.np_random.integers(2) == 0 else -1
        return self._obs(), {}

    def step(self, action):
        a = int(action)
        if self.x == self.length and a in (NORTH, SOUTH):
            self.arm = 1 if a == NORTH else -1
            reward = GOAL_REWARD if self.arm == self.goal else WRONG_ARM_REWARD
            return self._obs(), reward, True, False, {"is_success": self.arm == self.goal}
        if a == EAST:
            self.x = min(self.x + 1, self.length)
        if a == WEST:
            self.x = max(self.x - 1, 0)
        return self._obs(), self.step_penalty, False, False, {}


def make_env(length):
    # The registered time limit of tmaze.cc: 4 * length + 8.
    return gym.wrappers.TimeLimit(TMaze(length), max_episode_steps=4 * length + 8)


def evaluate(model, length, episodes, seed, recurrent):
    env = make_env(length)
    returns, successes = [], 0
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        state, start, total, done = None, np.ones((1,), dtype=bool), 0.0, False
        while not done:
            if recurrent:
                action, state = model.predict(obs, state=state, episode_start=start,
                                              deterministic=True)
                start = np.zeros((1,), dtype=bool)
            else:
                action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            done = terminated or truncated
        successes += bool(info.get("is_success", False))
        returns.append(total)
    return float(np.mean(returns)), successes / episodes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--length", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--eval-episodes", type=int, default=200)
    parser.add_argument("--recurrent", action="store_true", help="RecurrentPPO (LSTM) instead")
    parser.add_argument("--lstm-hidden", type=int, default=256, help="RecurrentPPO's LSTM width")
    parser.add_argument("--no-mlp", action="store_true",
                        help="RecurrentPPO: linear heads on the LSTMs (net_arch []), as recur's")
    parser.add_argument("--eval-every", type=int, default=0,
                        help="also evaluate 20 episodes every N env steps and print the curve")
    args = parser.parse_args()

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    class Curve(BaseCallback):
        """Deterministic 20-episode evaluations every --eval-every env steps (recur's eval.csv)."""

        def __init__(self, seed):
            super().__init__()
            self.seed, self.next, self.points = seed, args.eval_every, []

        def _on_step(self):
            if args.eval_every and self.num_timesteps >= self.next:
                self.next += args.eval_every
                mean, _ = evaluate(self.model, args.length, 20,
                                   10_000 * (self.seed + 1) + self.num_timesteps, args.recurrent)
                self.points.append((self.num_timesteps, mean))
            return True

    torch.set_num_threads(1)
    for seed in args.seeds:
        venv = make_vec_env(lambda: make_env(args.length), n_envs=16, seed=seed)
        # The same PPO settings as configs/tmaze.yaml where SB3 has them (16 envs x 64 steps,
        # 8 epochs, 4 minibatches, lr 2e-3, gamma 0.98, lambda 0.95, entropy 0.01).
        common = dict(n_steps=64, batch_size=256, n_epochs=8, learning_rate=2e-3, gamma=0.98,
                      gae_lambda=0.95, ent_coef=0.01, seed=seed, verbose=0, device="cpu")
        if args.recurrent:
            from sb3_contrib import RecurrentPPO
            arch = dict(lstm_hidden_size=args.lstm_hidden)
            if args.no_mlp:
                arch["net_arch"] = []
            model = RecurrentPPO("MlpLstmPolicy", venv, policy_kwargs=arch, **common)
        else:
            model = PPO("MlpPolicy", venv, **common)
        start = time.time()
        curve = Curve(seed)
        model.learn(total_timesteps=args.steps, callback=curve)
        mean, success = evaluate(model, args.length, args.eval_episodes, 10_000 * (seed + 1),
                                 args.recurrent)
        kind = "RecurrentPPO MlpLstmPolicy" if args.recurrent else "PPO MlpPolicy"
        print(f"{kind} TMaze length {args.length} seed {seed}: {args.steps} steps in "
              f"{time.time() - start:.0f} s; deterministic eval over {args.eval_episodes} "
              f"episodes: return {mean:.2f}, goal arm {100 * success:.0f}%", flush=True)
        if curve.points:
            # After the first evaluation at the threshold (3.8), how many fell below it again.
            first = next((i for i, (_, m) in enumerate(curve.points) if m >= 3.8), None)
            later = [] if first is None else [m for _, m in curve.points[first + 1:]]
            print(f"  curve: {' '.join(f'{m:.2f}' for _, m in curve.points)}; first >= 3.8 at "
                  f"{None if first is None else curve.points[first][0]}, "
                  f"{sum(m < 3.8 for m in later)} of {len(later)} later below", flush=True)


if __name__ == "__main__":
    main()

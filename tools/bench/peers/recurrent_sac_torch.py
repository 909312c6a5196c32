#!/usr/bin/env python3
"""PyTorch peer of recur's recurrent SAC / TD3 on Pendulum-V: the same algorithm, network and
replay, run on the same CPU, so wall clock and update rate compare side by side. A benchmark, not
a test. Written from the design of Ni et al.'s pomdp-baselines ("Recurrent model-free RL can be
a strong baseline for many POMDPs", 2022): separate actor and critic RNNs, windows replayed from
a zero initial state.

Env: Gymnasium Pendulum-v1 with the angular velocity removed (obs = [cos th, sin th]), 200 steps,
--envs N in a gymnasium.vector.SyncVectorEnv (same-step autoreset: the final observation of a
truncated episode is kept as that transition's next_obs). The learner works in normalized
actions a in (-1, 1); the env receives low + 0.5 (a + 1) (high - low). --prev-action-reward
appends the previous env action, the previous reward and a first-step flag to each observation,
as recur's env.options prev_action/prev_reward do (the shipped Pendulum-V configs' inputs).

Networks (sizes by --embed / --hidden / --mlp):
  actor   obs -> Linear(obs, E) + ReLU -> LSTM(E, H) -> Linear(H, M) + ReLU -> Linear(M, 2d | d)
          SAC: [mean, raw]; log_std = -5 + 3.5 (tanh(raw) + 1); a = tanh(mean + std eps);
          log pi = sum[-eps^2/2 - log_std - log(2 pi)/2 - log(1 - a^2 + 1e-6)].
          TD3: a = tanh(mean); exploring a = clamp(a + 0.1 eps, -1, 1).
  critic  one encoder obs -> Linear(obs, E) + ReLU -> LSTM(E, H) = h_t shared by twin heads
          Q_i(h_t, a_t) = Linear(H + d, M) + ReLU -> Linear(M, 1). Target critic by Polyak.
Replay: a ring per env; an update samples B windows: env uniform, start transition t uniform among
its stored ones, window t .. t+L-1 cut at the episode's end (terminated or truncated) or at the
newest transition; observations obs_t, next_obs_t .. next_obs_{t+len-1} (len + 1 of them), zero
LSTM state at the window's start, loss positions masked after len.
SAC update: y_t = r_t + gamma (1 - term_t) [min_i Q'_i(h'_{t+1}, a'_{t+1}) - alpha log pi(a'_{t+1})],
  a' from the current actor run over the same len + 1 observations; critic loss
  0.5 sum_i masked-mean (Q_i - y)^2; actor loss masked-mean(alpha log pi - min_i Q_i(h_t.detach(), a))
  where h_t is the critic encoder's output of this update's critic forward (before its step);
  alpha loss -masked-mean(log_alpha (log pi + target_entropy).detach()), target_entropy = -d;
  order critic, actor, alpha, then Polyak of the target critic (every update).
TD3 update: target actor with smoothing noise clamp(0.2 eps, -0.5, 0.5), y without entropy; actor
  (loss -masked-mean Q_1(h_t.detach(), tanh(mean)), Fujimoto's Q_1), target actor and target
  critic updated every --policy-delay (2) updates.
Schedule: --learning-starts env steps (total over envs) of uniform random actions, then one
gradient update per --train-every env steps (credit carried over, so with N envs and
--train-every 1 each vector step is followed by N updates). Every --eval-every env steps: 10
deterministic episodes (a = tanh(mean)) on a separate vector env of 10; one CSV line
env_steps,wall_s,mean_return; stops when mean_return >= --target or at --steps.
wall_s counts from the first env step and includes evaluation time.

Last lines (key=value):
  training     time_to_target_s=... | target_not_reached, env_steps=, wall_s=, env_steps_per_s=, updates=
  --bench-updates K: a buffer filled with --bench-fill random-action transitions, 5 warm-up
               updates, then K updates timed with no env steps: updates_per_s=, B=, L=, H=, threads=

Threads: --threads sets torch.set_num_threads (default 2). On a machine whose cores are busy with
other work, OpenMP's default spin-waiting stalls whole updates (seen: 2 threads on 2 loaded cores,
seconds per update); run with OMP_WAIT_POLICY=PASSIVE there, or --threads 1. The value in effect
is printed (omp_wait_policy=).

PyTorch is not in tools/requirements.txt. To run this (CPU):
    python3 -m venv /tmp/peer && /tmp/peer/bin/pip install torch gymnasium numpy \\
        --extra-index-url https://download.pytorch.org/whl/cpu
    /tmp/peer/bin/python tools/bench/peers/recurrent_sac_torch.py --bench-updates 50 --threads 2
    /tmp/peer/bin/python tools/bench/peers/recurrent_sac_torch.py --steps 50000 --threads 2
    /tmp/peer/bin/python tools/bench/peers/recurrent_sac_torch.py --algo td3 --steps 50000
    # configs/pendulum_novel_sac.yaml's settings (gamma 0.9, previous action and reward):
    /tmp/peer/bin/python tools/bench/peers/recurrent_sac_torch.py --gamma 0.9 \
        --prev-action-reward --steps 50000 --threads 1
    # learner sanity check, fully observed Pendulum-v1 (reached -227 after 2752 updates):
    /tmp/peer/bin/python tools/bench/peers/recurrent_sac_torch.py --keep-velocity --steps 12000 \
        --train-every 4 --eval-every 2000
"""
import argparse
import copy
import math
import os
import sys
import time

import gymnasium as gym
import numpy as np
import torch
from torch import nn

HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_STD_MIN, LOG_STD_MAX, TANH_EPS = -5.0, 2.0, 1e-6


# ---------------------------------------------------------------- env

class NoVelocity(gym.ObservationWrapper):
    """Pendulum-V: [cos th, sin th, th_dot] -> [cos th, sin th]."""

    def __init__(self, env):
        super().__init__(env)
        box = env.observation_space
        self.observation_space = gym.spaces.Box(box.low[:2], box.high[:2], dtype=np.float32)

    def observation(self, obs):
        return obs[:2].astype(np.float32)


class PreviousStep(gym.Wrapper):
    """recur's env.options prev_action + prev_reward (envs/wrappers/previous_step.h): the
    observation gets the previous action (clipped to the action space), the previous reward and a
    flag that is 1 on an episode's first observation (where the action and reward are zeros)."""

    def __init__(self, env):
        super().__init__(env)
        box, act = env.observation_space, env.action_space
        n = act.shape[0] + 2
        self.observation_space = gym.spaces.Box(
            np.concatenate([box.low, np.full(n, -np.inf)]).astype(np.float32),
            np.concatenate([box.high, np.full(n, np.inf)]).astype(np.float32), dtype=np.float32)

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        tail = np.zeros(self.env.action_space.shape[0] + 2, np.float32)
        tail[-1] = 1.0
        return np.concatenate([obs, tail]).astype(np.float32), info

    def step(self, action):
        obs, r, term, trunc, info = self.env.step(action)
        a = np.clip(action, self.env.action_space.low, self.env.action_space.high)
        tail = np.concatenate([a, [r, 0.0]]).astype(np.float32)
        return np.concatenate([obs, tail]).astype(np.float32), r, term, trunc, info


def make_vec(n, max_steps, keep_velocity=False, prev_action_reward=False):
    def thunk():
        env = gym.make("Pendulum-v1", max_episode_steps=max_steps)
        env = env if keep_velocity else NoVelocity(env)
        return PreviousStep(env) if prev_action_reward else env
    return gym.vector.SyncVectorEnv([thunk for _ in range(n)],
                                    autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)


# ---------------------------------------------------------------- networks

class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, embed, hidden, mlp, stochastic):
        super().__init__()
        self.act_dim, self.stochastic = act_dim, stochastic
        self.pre = nn.Linear(obs_dim, embed)
        self.lstm = nn.LSTM(embed, hidden)
        self.mid = nn.Linear(hidden, mlp)
        self.out = nn.Linear(mlp, 2 * act_dim if stochastic else act_dim)

    def forward(self, obs, state=None):
        """obs (T, B, obs_dim) -> head (T, B, 2d | d), state."""
        x = torch.relu(self.pre(obs))
        x, state = self.lstm(x, state)
        return self.out(torch.relu(self.mid(x))), state

    def sample(self, head):
        """SAC: reparameterized a, log pi(a) (summed over action dims)."""
        mean, raw = head.split(self.act_dim, dim=-1)
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (torch.tanh(raw) + 1.0)
        eps = torch.randn_like(mean)
        a = torch.tanh(mean + log_std.exp() * eps)
        logp = (-0.5 * eps * eps - log_std - HALF_LOG_2PI
                - torch.log(1.0 - a * a + TANH_EPS)).sum(-1)
        return a, logp

    def deterministic(self, head):
        return torch.tanh(head[..., :self.act_dim])


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim, embed, hidden, mlp):
        super().__init__()
        self.pre = nn.Linear(obs_dim, embed)
        self.lstm = nn.LSTM(embed, hidden)
        self.q1 = nn.Sequential(nn.Linear(hidden + act_dim, mlp), nn.ReLU(), nn.Linear(mlp, 1))
        self.q2 = nn.Sequential(nn.Linear(hidden + act_dim, mlp), nn.ReLU(), nn.Linear(mlp, 1))

    def encode(self, obs):
        return self.lstm(torch.relu(self.pre(obs)))[0]

    def heads(self, h, a):
        x = torch.cat([h, a], dim=-1)
        return self.q1(x).squeeze(-1), self.q2(x).squeeze(-1)


def polyak(target, source, tau):
    with torch.no_grad():
        torch._foreach_lerp_(list(target.parameters()), list(source.parameters()), tau)


# ---------------------------------------------------------------- replay

class SequenceReplay:
    """One ring per env; windows of up to L transitions inside one episode."""

    def __init__(self, n_envs, capacity, obs_dim, act_dim, seed):
        self.n, self.cap = n_envs, max(1, -(-capacity // n_envs))
        self.obs = np.zeros((n_envs, self.cap, obs_dim), np.float32)
        self.next_obs = np.zeros((n_envs, self.cap, obs_dim), np.float32)
        self.act = np.zeros((n_envs, self.cap, act_dim), np.float32)
        self.rew = np.zeros((n_envs, self.cap), np.float32)
        self.term = np.zeros((n_envs, self.cap), np.float32)
        self.done = np.zeros((n_envs, self.cap), bool)
        self.head, self.size = 0, 0
        self.rng = np.random.default_rng(seed)

    def add(self, obs, act, rew, next_obs, term, trunc):
        """One vector step: arrays with a leading env axis."""
        i = self.head
        self.obs[:, i], self.act[:, i], self.rew[:, i] = obs, act, rew
        self.next_obs[:, i], self.term[:, i] = next_obs, term
        self.done[:, i] = np.logical_or(term, trunc)
        self.head = (i + 1) % self.cap
        self.size = min(self.size + 1, self.cap)

    def sample(self, batch, length):
        rng, cap = self.rng, self.cap
        env = rng.integers(self.n, size=batch)
        k = rng.integers(self.size, size=batch)           # age rank: 0 = oldest stored
        start = (self.head - self.size + k) % cap
        idx = (start[:, None] + np.arange(length)) % cap   # (B, L)
        done = self.done[env[:, None], idx]
        first_done = np.where(done.any(1), done.argmax(1) + 1, length)
        n = np.minimum(np.minimum(first_done, self.size - k), length)
        mask = np.arange(length)[None, :] < n[:, None]     # (B, L)
        e = env[:, None]
        obs_seq = np.concatenate([self.obs[env, start][:, None], self.next_obs[e, idx]], 1)
        obs_seq[:, 1:] *= mask[..., None]
        act = self.act[e, idx] * mask[..., None]
        rew = self.rew[e, idx] * mask
        term = self.term[e, idx] * mask
        t = lambda x: torch.from_numpy(np.ascontiguousarray(np.swapaxes(x, 0, 1)))
        # time-major: obs (L+1, B, o), act (L, B, d), rew/term/mask (L, B)
        return t(obs_seq), t(act), t(rew), t(term), t(mask.astype(np.float32))


# ---------------------------------------------------------------- learner

class Learner:
    def __init__(self, args, obs_dim, act_dim):
        self.args, self.d = args, act_dim
        self.sac = args.algo == "sac"
        self.actor = Actor(obs_dim, act_dim, args.embed, args.hidden, args.mlp, self.sac)
        self.critic = Critic(obs_dim, act_dim, args.embed, args.hidden, args.mlp)
        self.critic_t = copy.deepcopy(self.critic).requires_grad_(False)
        self.actor_t = None if self.sac else copy.deepcopy(self.actor).requires_grad_(False)
        self.opt_c = torch.optim.Adam(self.critic.parameters(), lr=args.lr)
        self.opt_a = torch.optim.Adam(self.actor.parameters(), lr=args.lr)
        self.log_alpha = torch.zeros((), requires_grad=True)      # alpha = 1
        self.opt_al = torch.optim.Adam([self.log_alpha], lr=args.lr)
        self.target_entropy = -float(act_dim)
        self.updates = 0

    def update(self, obs, act, rew, term, mask):
        a, L = self.args, act.shape[0]
        msum = mask.sum().clamp_min(1.0)
        mmean = lambda x: (x * mask).sum() / msum
        alpha = self.log_alpha.exp().detach()
        with torch.no_grad():
            h_t = self.critic_t.encode(obs)[1:]
            if self.sac:
                a2, logp2 = self.actor.sample(self.actor(obs)[0][1:])
            else:
                mean2 = torch.tanh(self.actor_t(obs)[0][1:])
                noise = (a.target_noise * torch.randn_like(mean2)).clamp(-a.noise_clip, a.noise_clip)
                a2 = (mean2 + noise).clamp(-1.0, 1.0)
            q1t, q2t = self.critic_t.heads(h_t, a2)
            v = torch.min(q1t, q2t)
            if self.sac:
                v = v - alpha * logp2
            y = rew + a.gamma * (1.0 - term) * v
        h = self.critic.encode(obs[:L])
        q1, q2 = self.critic.heads(h, act)
        loss_c = 0.5 * (mmean((q1 - y) ** 2) + mmean((q2 - y) ** 2))
        self.opt_c.zero_grad(set_to_none=True)
        loss_c.backward()
        self.opt_c.step()
        self.updates += 1

        hd = h.detach()
        if self.sac:
            pi, logp = self.actor.sample(self.actor(obs[:L])[0])
            qa1, qa2 = self.critic.heads(hd, pi)
            loss_a = mmean(alpha * logp - torch.min(qa1, qa2))
            self.opt_a.zero_grad(set_to_none=True)
            loss_a.backward()
            self.opt_a.step()
            loss_al = -mmean(self.log_alpha * (logp.detach() + self.target_entropy))
            self.opt_al.zero_grad(set_to_none=True)
            loss_al.backward()
            self.opt_al.step()
            polyak(self.critic_t, self.critic, a.tau)
        elif self.updates % a.policy_delay == 0:
            pi = torch.tanh(self.actor(obs[:L])[0])
            loss_a = -mmean(self.critic.heads(hd, pi)[0])
            self.opt_a.zero_grad(set_to_none=True)
            loss_a.backward()
            self.opt_a.step()
            polyak(self.critic_t, self.critic, a.tau)
            polyak(self.actor_t, self.actor, a.tau)

    @torch.no_grad()
    def act(self, obs, state, explore):
        """obs (N, o) numpy -> normalized actions (N, d) numpy, new state."""
        head, state = self.actor(torch.from_numpy(obs).float()[None], state)
        head = head[0]
        if not explore:
            a = self.actor.deterministic(head)
        elif self.sac:
            a = self.actor.sample(head)[0]
        else:
            a = (torch.tanh(head) + self.args.expl_noise * torch.randn_like(head)).clamp(-1.0, 1.0)
        return a.numpy(), state


def reset_state(state, done):
    """Zero the LSTM state of the envs whose episode just ended."""
    if state is None or not done.any():
        return state
    keep = torch.from_numpy(~done).float()[None, :, None]
    return state[0] * keep, state[1] * keep


def to_env(a, space):
    return space.low + 0.5 * (a + 1.0) * (space.high - space.low)


def evaluate(learner, env, episodes, seed):
    obs, _ = env.reset(seed=seed)
    state, returns = None, np.zeros(episodes)
    finished, ret = np.zeros(episodes, bool), np.zeros(episodes)
    space = env.single_action_space
    while not finished.all():
        a, state = learner.act(obs, state, explore=False)
        obs, r, term, trunc, _ = env.step(to_env(a, space))
        ret += r * ~finished
        done = np.logical_or(term, trunc)
        returns[done & ~finished] = ret[done & ~finished]
        finished |= done
        state = reset_state(state, done)
    return float(returns.mean())


def step_vec(env, obs, a_norm):
    """One vector step; next_obs is the final observation where an episode ended."""
    nobs, r, term, trunc, info = env.step(to_env(a_norm, env.single_action_space))
    next_obs = nobs.copy()
    if "_final_obs" in info:
        for i in np.nonzero(info["_final_obs"])[0]:
            next_obs[i] = info["final_obs"][i]
    return nobs, next_obs, r, term, trunc


def random_fill(env, buf, steps, rng):
    obs, _ = env.reset(seed=int(rng.integers(1 << 31)))
    for _ in range(-(-steps // env.num_envs)):
        a = rng.uniform(-1.0, 1.0, (env.num_envs, buf.act.shape[-1])).astype(np.float32)
        nobs, next_obs, r, term, trunc = step_vec(env, obs, a)
        buf.add(obs, a, r, next_obs, term, trunc)
        obs = nobs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--algo", choices=["sac", "td3"], default="sac")
    p.add_argument("--envs", type=int, default=8)
    p.add_argument("--keep-velocity", action="store_true",
                   help="fully observed Pendulum-v1 (a sanity check of the learner, not Pendulum-V)")
    p.add_argument("--prev-action-reward", action="store_true",
                   help="the previous action and reward as inputs (recur's env.options "
                        "prev_action/prev_reward, Ni et al.'s 'oar')")
    p.add_argument("--max-episode-steps", type=int, default=200)
    p.add_argument("--steps", type=int, default=50000, help="env steps, total over envs")
    p.add_argument("--learning-starts", type=int, default=1000)
    p.add_argument("--train-every", type=float, default=1.0,
                   help="env steps (total over envs) per gradient update")
    p.add_argument("--batch", type=int, default=32, help="B windows per update")
    p.add_argument("--seq-len", type=int, default=32, help="L transitions per window")
    p.add_argument("--embed", type=int, default=64)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--mlp", type=int, default=64)
    p.add_argument("--buffer-size", type=int, default=1_000_000, help="transitions, total")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--tau", type=float, default=0.005)
    p.add_argument("--policy-delay", type=int, default=2)
    p.add_argument("--target-noise", type=float, default=0.2)
    p.add_argument("--noise-clip", type=float, default=0.5)
    p.add_argument("--expl-noise", type=float, default=0.1)
    p.add_argument("--eval-every", type=int, default=5000)
    p.add_argument("--eval-episodes", type=int, default=10)
    p.add_argument("--target", type=float, default=-200.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--bench-updates", type=int, default=0,
                   help="K > 0: time K updates on random data and exit")
    p.add_argument("--bench-fill", type=int, default=10000)
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    env = make_vec(args.envs, args.max_episode_steps, args.keep_velocity, args.prev_action_reward)
    obs_dim = env.single_observation_space.shape[0]
    act_dim = env.single_action_space.shape[0]
    learner = Learner(args, obs_dim, act_dim)
    buf = SequenceReplay(args.envs, args.buffer_size, obs_dim, act_dim, args.seed + 1)
    B, L, H = args.batch, args.seq_len, args.hidden

    if args.bench_updates > 0:
        random_fill(env, buf, args.bench_fill, rng)
        for _ in range(5):
            learner.update(*buf.sample(B, L))
        t0 = time.perf_counter()
        for _ in range(args.bench_updates):
            learner.update(*buf.sample(B, L))
        dt = time.perf_counter() - t0
        print(f"algo={args.algo} omp_wait_policy={os.environ.get('OMP_WAIT_POLICY', 'default')}")
        print(f"updates_per_s={args.bench_updates / dt:.1f}")
        print(f"B={B} L={L + 1} H={H} threads={args.threads} updates={args.bench_updates} "
              f"wall_s={dt:.3f}")
        return 0

    eval_env = make_vec(args.eval_episodes, args.max_episode_steps, args.keep_velocity,
                        args.prev_action_reward)
    print("env_steps,wall_s,mean_return", flush=True)
    t0 = time.perf_counter()
    obs, _ = env.reset(seed=args.seed)
    state, steps, credit, next_eval, reached = None, 0, 0.0, args.eval_every, None
    while steps < args.steps:
        a, state = learner.act(obs, state, explore=True)
        if steps < args.learning_starts:
            a = rng.uniform(-1.0, 1.0, a.shape).astype(np.float32)
        nobs, next_obs, r, term, trunc = step_vec(env, obs, a)
        buf.add(obs, a, r, next_obs, term, trunc)
        state = reset_state(state, np.logical_or(term, trunc))
        obs = nobs
        steps += args.envs
        if steps >= args.learning_starts:
            credit += args.envs / args.train_every
            while credit >= 1.0:
                learner.update(*buf.sample(B, L))
                credit -= 1.0
        if steps >= next_eval or steps >= args.steps:
            next_eval += args.eval_every
            ret = evaluate(learner, eval_env, args.eval_episodes, args.seed + 10_000 + steps)
            wall = time.perf_counter() - t0
            print(f"{steps},{wall:.2f},{ret:.2f}", flush=True)
            if ret >= args.target:
                reached = wall
                break
    wall = time.perf_counter() - t0
    print(f"algo={args.algo} threads={args.threads} "
          f"omp_wait_policy={os.environ.get('OMP_WAIT_POLICY', 'default')}")
    print(f"time_to_target_s={reached:.2f}" if reached is not None else "target_not_reached")
    print(f"env_steps={steps}")
    print(f"wall_s={wall:.2f}")
    print(f"env_steps_per_s={steps / wall:.1f}")
    print(f"updates={learner.updates}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

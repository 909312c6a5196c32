#!/usr/bin/env python3
"""A PyTorch LSTM-PPO in the CleanRL style (the structure of CleanRL's ppo_atari_lstm.py: one file,
rollout then update, the recurrent state replayed per minibatch from the rollout's first state
with episode-start resets), the peer of `recur train` / `recur bench train` on LunarLander-v3
(issue 36: the same env, policy shape, horizon and batch on the same GPU). A benchmark, not a test.

Envs (--envs):
  gymnasium  Gymnasium's Box2D LunarLander-v3 (or CartPole-v1, --env). --env-workers 0: one
             SyncVectorEnv in this process; W > 0: W worker processes, each stepping a
             SyncVectorEnv of its slice of the envs, observations and rewards in shared memory
             (one process per env, as gymnasium.vector.AsyncVectorEnv does, is hopeless at 1024).
  recur      recur's C++ envs through its Python vector env (recur.make_vec, C++ threads =
             --env-workers, at least 1), when `import recur` works (tools/python/README.md).
  Both autoreset SAME_STEP: the step that ends an episode returns the next episode's first
  observation; the ended one's last is infos["final_obs"].
Policy (as recur's policy section; presets below): obs -> encoder MLP (--encoder, [] = none) ->
  LSTM(H) per tower; one tower shared by actor and critic (--shared-core) or one each; heads
  MLP(--head) -> linear (actor gain 0.01, critic 1.0, orthogonal init, forget-gate bias 1).
  Discrete actions only. Episode starts zero the state of that env before the step reads it.
PPO: GAE(gamma, lambda); truncation bootstrapped (r += gamma V(final_obs), the critic stepped once
  from its post-step state, as recur and SB3 do); advantages normalized per minibatch; clipped
  surrogate, unclipped value loss * vf_coef, entropy bonus; Adam(eps 1e-5), global-norm clip;
  minibatches of whole env columns (num_envs / minibatches sequences of T steps); constant rate.
  Observations and rewards normalized by running statistics (VecNormalize's, clip 10).
Presets (--preset; any flag given after it overrides):
  gpu   configs/lunar_lander_gpu.yaml: 1024 envs, T 32, encoder [], LSTM-256 actor and critic
        (separate), heads [64] relu, 4 epochs, 4 minibatches, lr 1e-3, gamma .999, lambda .98.
  fast  GPU_SCALE.md section 4's throughput shape: encoder [128], one shared LSTM-128, linear
        heads, 1 epoch, 4 minibatches; 4096 envs.
  cpu   a smoke shape for a 2-core machine: 16 envs, T 32, encoder [64], shared LSTM-64, 4 epochs.

Time to target: wall seconds and env steps when the mean return of the last --target-window
completed training episodes (stochastic policy, raw rewards) first reaches --target (LunarLander
200, CartPole 475 by default). Clock: from the first env step (envs built, reset and the model on
the device before it); --stop-at-target ends the run there.
Output: a progress line every --log-every updates; last line `RESULT {json}` with env_steps,
wall_s, env_steps_per_s (overall), env_steps_per_s_steady (updates 2.., without the first
update's warm-up), the phase split act_s (policy forward, sampling, host<->device copies,
normalization), env_s (vector env step), learn_s (GAE + the PPO epochs, synchronized), and
time_to_target_s / steps_to_target (null when not reached).

Run (CPU, here):
    python3 tools/bench/peers/cleanrl_lstm_ppo.py --preset cpu --env CartPole-v1 --total-steps 100000
    python3 tools/bench/peers/cleanrl_lstm_ppo.py --preset cpu --total-steps 200000
On the device (tools/gpu/peers.sh runs these beside recur and Sample Factory):
    python3 tools/bench/peers/cleanrl_lstm_ppo.py --preset gpu --device cuda --env-workers 12 \\
        --stop-at-target --tf32 off
"""
import argparse
import json
import math
import multiprocessing as mp
import os
import sys
import time
from collections import deque

import numpy as np

PRESETS = {
    "gpu": dict(num_envs=1024, rollout=32, encoder="", hidden=256, shared_core=False, head="64",
                activation="relu", epochs=4, minibatches=4, lr=1e-3, gamma=0.999,
                gae_lambda=0.98, ent_coef=0.01),
    "fast": dict(num_envs=4096, rollout=32, encoder="128", hidden=128, shared_core=True, head="",
                 activation="relu", epochs=1, minibatches=4, lr=1e-3, gamma=0.999,
                 gae_lambda=0.98, ent_coef=0.01),
    "cpu": dict(num_envs=16, rollout=32, encoder="64", hidden=64, shared_core=True, head="",
                activation="tanh", epochs=4, minibatches=4, lr=1e-3, gamma=0.99,
                gae_lambda=0.95, ent_coef=0.01),
}
TARGETS = {"LunarLander-v3": 200.0, "CartPole-v1": 475.0}


def widths(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated widths like 64,64 or '', got '{text}'")
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"widths must be >= 1, got '{text}'")
    return values


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), default="gpu")
    p.add_argument("--env", default="LunarLander-v3", help="a Gymnasium or recur id, discrete actions")
    p.add_argument("--envs", choices=["gymnasium", "recur"], default="gymnasium")
    p.add_argument("--env-workers", type=int, default=0,
                   help="gymnasium: worker processes (0 = step in this process); recur: C++ threads")
    p.add_argument("--num-envs", type=int)
    p.add_argument("--rollout", type=int, help="T, steps per env per update")
    p.add_argument("--encoder", type=widths)
    p.add_argument("--hidden", type=int)
    p.add_argument("--shared-core", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--head", type=widths)
    p.add_argument("--activation", choices=["tanh", "relu"])
    p.add_argument("--epochs", type=int)
    p.add_argument("--minibatches", type=int)
    p.add_argument("--lr", type=float)
    p.add_argument("--gamma", type=float)
    p.add_argument("--gae-lambda", type=float)
    p.add_argument("--ent-coef", type=float)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--no-normalize", action="store_true", help="no observation/reward normalization")
    p.add_argument("--total-steps", type=int, default=10_000_000)
    p.add_argument("--target", type=float, help="default: 200 LunarLander-v3, 475 CartPole-v1")
    p.add_argument("--target-window", type=int, default=100, help="episodes in the target mean")
    p.add_argument("--stop-at-target", action="store_true")
    p.add_argument("--max-seconds", type=float, default=math.inf,
                   help="end after the update that passes this wall time (RESULT still printed)")
    p.add_argument("--device", default="auto", help="cuda, cpu or auto (cuda when available)")
    p.add_argument("--tf32", choices=["on", "off"], default="off",
                   help="TF32 in cuBLAS and cuDNN (off: fp32, recur's cudnn_math=fma)")
    p.add_argument("--threads", type=int, default=0, help="torch host threads (0: torch's default)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=10, help="updates between progress lines")
    args = p.parse_args(argv)
    for key, value in PRESETS[args.preset].items():
        if getattr(args, key) is None:
            setattr(args, key, widths(value) if key in ("encoder", "head") else value)
    if args.target is None:
        args.target = TARGETS.get(args.env, math.inf)
    if args.num_envs % args.minibatches:
        p.error(f"--num-envs {args.num_envs} must be divisible by --minibatches {args.minibatches}")
    if args.env_workers < 0 or args.num_envs < 1 or args.rollout < 1:
        p.error("--env-workers >= 0, --num-envs >= 1 and --rollout >= 1 expected")
    return args


# ---------------------------------------------------------------------------------------------
# Vector envs: all three give SAME_STEP autoreset and the (obs, reward, term, trunc, final_obs)
# arrays the trainer needs, final_obs a dense array (rows valid where term | trunc).

def stub_pygame():
    """Gymnasium's box2d package imports pygame (CarRacing's renderer) even for LunarLander, which
    needs it only to render: without pygame (the device image has none, and its wheel is 14 MB of
    the 64 MiB carry) an empty module stands in, so `gymnasium.make("LunarLander-v3")` works."""
    try:
        import pygame  # noqa: F401
    except ImportError:
        import types
        stub = types.ModuleType("pygame")
        stub.gfxdraw = types.ModuleType("pygame.gfxdraw")
        sys.modules.setdefault("pygame", stub)
        sys.modules.setdefault("pygame.gfxdraw", stub.gfxdraw)


def _same_step_gym_vec(env_id, n):
    stub_pygame()
    import gymnasium as gym
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="sync",
                        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP})


def _dense_final(infos, obs):
    final = np.zeros_like(obs)
    if "final_obs" in infos:
        for i in np.flatnonzero(infos["_final_obs"]):
            final[i] = infos["final_obs"][i]
    return final


class InProcessVec:
    def __init__(self, env_id, n, seed, backend, threads):
        if backend == "recur":
            import recur
            self.envs = recur.make_vec(env_id, n, seed=seed, num_threads=max(1, threads))
        else:
            self.envs = _same_step_gym_vec(env_id, n)
        self.seed = seed
        self.obs_dim = self.envs.single_observation_space.shape[0]
        self.n_actions = int(self.envs.single_action_space.n)

    def reset(self):
        obs, _ = self.envs.reset(seed=self.seed)
        return obs.astype(np.float32)

    def step(self, actions):
        obs, rew, term, trunc, infos = self.envs.step(actions)
        return (obs.astype(np.float32), rew.astype(np.float32), term, trunc,
                _dense_final(infos, obs).astype(np.float32))

    def close(self):
        self.envs.close()


def _worker(conn, env_id, lo, hi, seed, bufs):
    envs = _same_step_gym_vec(env_id, hi - lo)
    obs_b, rew_b, term_b, trunc_b, final_b, act_b = bufs
    while True:
        cmd = conn.recv()
        if cmd == "reset":
            obs, _ = envs.reset(seed=[seed + i for i in range(lo, hi)])
            obs_b[lo:hi] = obs
        elif cmd == "step":
            obs, rew, term, trunc, infos = envs.step(act_b[lo:hi])
            obs_b[lo:hi] = obs
            rew_b[lo:hi] = rew
            term_b[lo:hi] = term
            trunc_b[lo:hi] = trunc
            final_b[lo:hi] = _dense_final(infos, obs)
        else:
            envs.close()
            conn.send("closed")
            return
        conn.send(None)


class ProcessVec:
    """W processes, each a SyncVectorEnv over a contiguous slice; arrays in shared memory, so a
    step moves only a one-word message each way per worker. Built before CUDA starts (fork)."""

    def __init__(self, env_id, n, seed, workers):
        probe = _same_step_gym_vec(env_id, 1)
        self.obs_dim = probe.single_observation_space.shape[0]
        self.n_actions = int(probe.single_action_space.n)
        probe.close()
        ctx = mp.get_context("fork")

        def shared(shape, ctype, dtype):
            raw = ctx.RawArray(ctype, int(np.prod(shape)))
            return np.frombuffer(raw, dtype=dtype).reshape(shape)

        self.obs = shared((n, self.obs_dim), "f", np.float32)
        self.rew = shared((n,), "f", np.float32)
        self.term = shared((n,), "b", np.int8)
        self.trunc = shared((n,), "b", np.int8)
        self.final = shared((n, self.obs_dim), "f", np.float32)
        self.act = shared((n,), "l", np.int64)
        bufs = (self.obs, self.rew, self.term, self.trunc, self.final, self.act)
        bounds = np.linspace(0, n, workers + 1).astype(int)
        self.conns, self.procs = [], []
        for w in range(workers):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, daemon=True,
                               args=(child, env_id, bounds[w], bounds[w + 1], seed, bufs))
            proc.start()
            self.conns.append(parent)
            self.procs.append(proc)

    def _all(self, cmd):
        for c in self.conns:
            c.send(cmd)
        for c in self.conns:
            c.recv()

    def reset(self):
        self._all("reset")
        return self.obs.copy()

    def step(self, actions):
        self.act[:] = actions
        self._all("step")
        return (self.obs.copy(), self.rew.copy(), self.term.astype(bool), self.trunc.astype(bool),
                self.final.copy())

    def close(self):
        self._all("close")
        for p in self.procs:
            p.join(timeout=5)


class RunningMeanStd:
    def __init__(self, shape=()):
        self.mean = np.zeros(shape, np.float64)
        self.var = np.ones(shape, np.float64)
        self.count = 1e-4

    def update(self, x):
        b_mean, b_var, b_count = x.mean(0), x.var(0), x.shape[0]
        delta, total = b_mean - self.mean, self.count + b_count
        self.mean = self.mean + delta * b_count / total
        m2 = self.var * self.count + b_var * b_count + delta**2 * self.count * b_count / total
        self.var, self.count = m2 / total, total


class Normalizer:
    """VecNormalize's: observations by running mean/std, rewards by the std of the running
    discounted return (reset at episode ends), both clipped to +-10."""

    def __init__(self, obs_dim, n, gamma, enabled):
        self.enabled, self.gamma = enabled, gamma
        self.obs_rms, self.ret_rms = RunningMeanStd((obs_dim,)), RunningMeanStd()
        self.ret = np.zeros(n, np.float64)

    def obs(self, obs, update=True):
        if not self.enabled:
            return obs
        if update:
            self.obs_rms.update(obs)
        return np.clip((obs - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + 1e-8),
                       -10, 10).astype(np.float32)

    def reward(self, rew, done):
        if not self.enabled:
            return rew
        self.ret = self.ret * self.gamma + rew
        self.ret_rms.update(self.ret)
        self.ret[done] = 0.0
        return np.clip(rew / np.sqrt(self.ret_rms.var + 1e-8), -10, 10).astype(np.float32)


# ---------------------------------------------------------------------------------------------

def build_agent(torch, nn, obs_dim, n_actions, args):
    act = nn.Tanh if args.activation == "tanh" else nn.ReLU

    def linear(i, o, gain=math.sqrt(2)):
        layer = nn.Linear(i, o)
        nn.init.orthogonal_(layer.weight, gain)
        nn.init.zeros_(layer.bias)
        return layer

    def mlp(i, hidden):
        layers = []
        for w in hidden:
            layers += [linear(i, w), act()]
            i = w
        return nn.Sequential(*layers), i

    class Tower(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, width = mlp(obs_dim, args.encoder)
            self.lstm = nn.LSTM(width, args.hidden)
            for name, param in self.lstm.named_parameters():
                if "bias" in name:
                    nn.init.zeros_(param)
                    param.data[args.hidden:2 * args.hidden] = 0.5  # b_ih + b_hh: forget bias 1
                else:
                    nn.init.orthogonal_(param, 1.0)

        def step(self, x, state, start):
            keep = (1.0 - start).view(1, -1, 1)
            out, state = self.lstm(self.encoder(x).unsqueeze(0), (state[0] * keep, state[1] * keep))
            return out[0], state

        def unroll(self, x, state, starts):
            # CleanRL's loop: one LSTM step per time step, the state zeroed where an episode
            # starts. x [T, B, obs], starts [T, B].
            z = self.encoder(x)
            h, c = state
            outs = []
            for t in range(z.shape[0]):
                keep = (1.0 - starts[t]).view(1, -1, 1)
                out, (h, c) = self.lstm(z[t:t + 1], (h * keep, c * keep))
                outs.append(out)
            return torch.cat(outs)

    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.towers = nn.ModuleList(Tower() for _ in range(1 if args.shared_core else 2))
            self.actor_mlp, a_in = mlp(args.hidden, args.head)
            self.critic_mlp, c_in = mlp(args.hidden, args.head)
            self.actor_out = linear(a_in, n_actions, 0.01)
            self.critic_out = linear(c_in, 1, 1.0)

        def initial_state(self, n, device):
            z = torch.zeros(1, n, args.hidden, device=device)
            return [(z.clone(), z.clone()) for _ in self.towers]

        def heads(self, feats):
            logits = self.actor_out(self.actor_mlp(feats[0]))
            value = self.critic_out(self.critic_mlp(feats[-1])).squeeze(-1)
            return logits, value

        def step(self, x, states, start):
            feats, new = [], []
            for tower, s in zip(self.towers, states):
                f, s = tower.step(x, s, start)
                feats.append(f)
                new.append(s)
            return feats, new

        def critic_step(self, x, states):
            f, _ = self.towers[-1].step(x, states[-1], torch.zeros(x.shape[0], device=x.device))
            return self.critic_out(self.critic_mlp(f)).squeeze(-1)

        def unroll(self, x, states, starts):
            return [tower.unroll(x, s, starts) for tower, s in zip(self.towers, states)]

    return Agent()


def main(argv=None):
    args = parse_args(argv)
    # Envs first: worker processes fork before CUDA starts in this one.
    if args.envs == "gymnasium" and args.env_workers > 0:
        vec = ProcessVec(args.env, args.num_envs, args.seed, args.env_workers)
    else:
        vec = InProcessVec(args.env, args.num_envs, args.seed, args.envs, args.env_workers)

    import torch
    import torch.nn as nn

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    tf32 = args.tf32 == "on"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32  # torch's default is True: off must be said
    # Resolved only now: asking CUDA before the env workers fork would start it in this process.
    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu")
                          if args.device == "auto" else args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True

    n, T, obs_dim = args.num_envs, args.rollout, vec.obs_dim
    agent = build_agent(torch, nn, obs_dim, vec.n_actions, args).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    norm = Normalizer(obs_dim, n, args.gamma, not args.no_normalize)

    buf_obs = torch.zeros(T, n, obs_dim, device=device)
    buf_start = torch.zeros(T, n, device=device)
    buf_act = torch.zeros(T, n, dtype=torch.long, device=device)
    buf_logp = torch.zeros(T, n, device=device)
    buf_val = torch.zeros(T, n, device=device)
    buf_rew = torch.zeros(T, n, device=device)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    raw_obs = vec.reset()
    obs = norm.obs(raw_obs)
    start = np.ones(n, np.float32)  # every env begins an episode
    state = agent.initial_state(n, device)
    ep_ret, ep_len = np.zeros(n), np.zeros(n, np.int64)
    recent = deque(maxlen=args.target_window)
    episodes = 0
    steps = updates = 0
    act_s = env_s = learn_s = 0.0
    first_update_end = None
    hit = None  # (wall_s, env_steps, mean) when the target is first reached
    print(f"cleanrl_lstm_ppo: env {args.env} ({args.envs}, workers {args.env_workers}), "
          f"{n} envs x T {T}, encoder {args.encoder}, LSTM-{args.hidden} "
          f"{'shared' if args.shared_core else 'separate actor/critic'}, head {args.head}, "
          f"epochs {args.epochs}, minibatches {args.minibatches}, device {device}, tf32 {args.tf32}, "
          f"torch {torch.__version__} threads {torch.get_num_threads()}", flush=True)
    sync()
    t_start = time.perf_counter()
    while steps < args.total_steps and time.perf_counter() - t_start < args.max_seconds:
        state0 = [(h.clone(), c.clone()) for h, c in state]
        for t in range(T):
            t0 = time.perf_counter()
            with torch.no_grad():
                x = torch.from_numpy(obs).to(device, non_blocking=True)
                s = torch.from_numpy(start).to(device, non_blocking=True)
                feats, state = agent.step(x, state, s)
                logits, value = agent.heads(feats)
                # Gumbel-max sampling: one kernel chain, no torch.distributions object per step.
                u = torch.rand_like(logits).clamp_(1e-10, 1.0)
                action = torch.argmax(logits - torch.log(-torch.log(u)), dim=-1)
                logp = torch.log_softmax(logits, -1).gather(1, action[:, None]).squeeze(1)
                buf_obs[t], buf_start[t], buf_act[t], buf_logp[t], buf_val[t] = x, s, action, logp, value
                actions = action.cpu().numpy()
            t1 = time.perf_counter()
            raw_obs, rew, term, trunc, final = vec.step(actions)
            t2 = time.perf_counter()
            done = term | trunc
            ep_ret += rew
            ep_len += 1
            for i in np.flatnonzero(done):
                recent.append(ep_ret[i])
                episodes += 1
            ep_ret[done] = 0.0
            ep_len[done] = 0
            r = norm.reward(rew.astype(np.float64), done)
            cut = trunc & ~term
            with torch.no_grad():
                r_t = torch.from_numpy(np.asarray(r, np.float32)).to(device)
                if cut.any():  # bootstrap a time limit: r += gamma V(final_obs)
                    idx = torch.from_numpy(np.flatnonzero(cut)).to(device)
                    fo = torch.from_numpy(norm.obs(final[cut], update=False)).to(device)
                    sub = [(h[:, idx], c[:, idx]) for h, c in state]
                    r_t[idx] += args.gamma * agent.critic_step(fo, sub)
                buf_rew[t] = r_t
            obs = norm.obs(raw_obs)
            start = done.astype(np.float32)
            steps += n
            act_s += (t1 - t0) + (time.perf_counter() - t2)
            env_s += t2 - t1
            if hit is None and len(recent) == args.target_window and np.mean(recent) >= args.target:
                sync()
                hit = (time.perf_counter() - t_start, steps, float(np.mean(recent)))
                print(f"TARGET mean return {hit[2]:.1f} over the last {args.target_window} episodes "
                      f">= {args.target} at {steps} env steps, {hit[0]:.2f} s", flush=True)
        if hit and args.stop_at_target:
            break

        t3 = time.perf_counter()
        with torch.no_grad():
            x = torch.from_numpy(obs).to(device)
            s = torch.from_numpy(start).to(device)
            feats, _ = agent.step(x, state, s)
            next_value = agent.heads(feats)[1]
            adv = torch.zeros(T, n, device=device)
            last = torch.zeros(n, device=device)
            for t in reversed(range(T)):
                nxt_start, nxt_val = (s, next_value) if t == T - 1 else (buf_start[t + 1], buf_val[t + 1])
                nonterminal = 1.0 - nxt_start
                delta = buf_rew[t] + args.gamma * nxt_val * nonterminal - buf_val[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                adv[t] = last
            ret = adv + buf_val
        per_mb = n // args.minibatches
        clipfracs, kl = [], 0.0
        for _ in range(args.epochs):
            perm = torch.randperm(n, device=device)
            for k in range(args.minibatches):
                cols = perm[k * per_mb:(k + 1) * per_mb]
                init = [(h[:, cols], c[:, cols]) for h, c in state0]
                feats = agent.unroll(buf_obs[:, cols], init, buf_start[:, cols])
                logits, value = agent.heads(feats)
                logp_all = torch.log_softmax(logits, -1)
                logp = logp_all.gather(-1, buf_act[:, cols, None]).squeeze(-1)
                entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
                log_ratio = logp - buf_logp[:, cols]
                ratio = log_ratio.exp()
                a = adv[:, cols]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                v_loss = 0.5 * ((value - ret[:, cols]) ** 2).mean()
                loss = pg + args.vf_coef * v_loss - args.ent_coef * entropy
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
                with torch.no_grad():
                    kl = ((ratio - 1) - log_ratio).mean()
                    clipfracs.append(((ratio - 1).abs() > args.clip).float().mean())
        sync()
        learn_s += time.perf_counter() - t3
        updates += 1
        if updates == 1:
            first_update_end = (time.perf_counter() - t_start, steps)
        if updates % args.log_every == 0:
            wall = time.perf_counter() - t_start
            mean = f"{np.mean(recent):.1f}" if recent else "n/a"
            print(f"update {updates} steps {steps} wall {wall:.1f}s sps {steps / wall:.0f} "
                  f"return(last {len(recent)}) {mean} episodes {episodes} act {act_s:.1f}s "
                  f"env {env_s:.1f}s learn {learn_s:.1f}s kl {float(kl):.4f} "
                  f"clipfrac {float(torch.stack(clipfracs).mean()):.3f}", flush=True)
    sync()
    wall = time.perf_counter() - t_start
    vec.close()
    steady = None
    if first_update_end and steps > first_update_end[1]:
        steady = (steps - first_update_end[1]) / (wall - first_update_end[0])
    result = dict(
        peer="cleanrl_lstm_ppo", env=args.env, envs=args.envs, env_workers=args.env_workers,
        preset=args.preset, num_envs=n, rollout=T, encoder=args.encoder, hidden=args.hidden,
        shared_core=args.shared_core, head=args.head, epochs=args.epochs,
        minibatches=args.minibatches, device=str(device), tf32=args.tf32,
        torch=torch.__version__, seed=args.seed, env_steps=steps, updates=updates,
        wall_s=round(wall, 3), env_steps_per_s=round(steps / wall, 1),
        env_steps_per_s_steady=round(steady, 1) if steady else None,
        act_s=round(act_s, 3), env_s=round(env_s, 3), learn_s=round(learn_s, 3),
        rollout_steps_per_s=round(steps / max(act_s + env_s, 1e-9), 1),
        episodes=episodes, last_mean_return=round(float(np.mean(recent)), 2) if recent else None,
        target=args.target, target_window=args.target_window,
        time_to_target_s=round(hit[0], 3) if hit else None,
        steps_to_target=hit[1] if hit else None)
    print("RESULT " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

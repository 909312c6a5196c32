"""recur.train / evaluate / record_video on Python Gymnasium envs (recur.gym_batch)."""

import csv

import gymnasium as gym
import numpy as np
import pytest

import recur
from conftest import CONFIGS
from recur.gym_batch import GymBatch

NEXT, SAME = gym.vector.AutoresetMode.NEXT_STEP, gym.vector.AutoresetMode.SAME_STEP


class Countdown(gym.Env):
    """Episodes of exactly `length` steps: obs = [steps taken this episode], reward 1 a step."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, length=3, render_mode=None):
        self.length, self.render_mode, self.t = length, render_mode, 0
        self.observation_space = gym.spaces.Box(0, 100, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0], np.float32), {}

    def step(self, action):
        self.t += 1
        return np.array([self.t], np.float32), 1.0, self.t >= self.length, False, {}

    def render(self):
        return np.full((33, 47, 3), 10 * self.t, np.uint8)  # odd sizes: recur crops a pixel


class MatchSign(gym.Env):
    """obs = [s] with s = +-1 at random; reward 1 when action == (s > 0); 10 steps an episode."""

    def __init__(self):
        self.observation_space = gym.spaces.Box(-1, 1, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def _obs(self):
        self.s = 1.0 if self.np_random.random() < 0.5 else -1.0
        return np.array([self.s], np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        reward = float(int(action) == int(self.s > 0))
        self.t += 1
        return self._obs(), reward, False, self.t >= 10, {}


def lengths_env(lengths, mode, vector=gym.vector.SyncVectorEnv):
    fns = [lambda n=n: Countdown(n) for n in lengths]
    return vector(fns, autoreset_mode=mode)


def steps(batch, k):
    """k steps of `batch`; per step a copy of its buffers."""
    rows = []
    for _ in range(k):
        batch.step()
        rows.append(
            {
                "obs": batch.obs[:, 0].tolist(),
                "start": batch.episode_start.tolist(),
                "transition": batch.transition.tolist(),
                "terminated": batch.terminated.tolist(),
                "reward": batch.rewards.tolist(),
                "final_obs": batch.final_obs[:, 0].tolist(),
                "final_length": batch.final_length.tolist(),
            }
        )
    return rows


def test_same_step_episode_starts_by_hand():
    b = GymBatch(lengths_env([2, 3], SAME), "countdown")
    b.reset(0)
    assert b.mode == "SAME_STEP" and b.episode_start.tolist() == [1, 1]
    r = steps(b, 4)
    # Env 0 (2 steps) ends on steps 2 and 4, env 1 (3 steps) on step 3: the obs row is already
    # the next episode's first (0), the final observation the ended one's last.
    assert [s["start"] for s in r] == [[0, 0], [1, 0], [0, 1], [1, 0]]
    assert [s["obs"] for s in r] == [[1, 1], [0, 2], [1, 0], [0, 1]]
    assert r[1]["final_obs"][0] == 2 and r[2]["final_obs"][1] == 3
    assert r[1]["final_length"][0] == 2 and r[2]["final_length"][1] == 3
    assert all(s["transition"] == [1, 1] for s in r)


def test_next_step_reset_steps_by_hand():
    b = GymBatch(lengths_env([2, 3], NEXT), "countdown")
    b.reset(0)
    assert b.mode == "NEXT_STEP"
    r = steps(b, 6)
    # Env 0: steps 1-2 are its first episode (ends on 2 with obs [2]), step 3 its reset step
    # (no transition, reward 0, then episode_start: obs [0] begins episode 2), steps 4-5 episode
    # 2, step 6 its reset step. Env 1: steps 1-3, reset step 4.
    assert [s["terminated"] for s in r] == [[0, 0], [1, 0], [0, 1], [0, 0], [1, 0], [0, 0]]
    assert [s["transition"] for s in r] == [[1, 1], [1, 1], [0, 1], [1, 0], [1, 1], [0, 1]]
    assert [s["start"] for s in r] == [[0, 0], [0, 0], [1, 0], [0, 1], [0, 0], [1, 0]]
    assert [s["obs"] for s in r] == [[1, 1], [2, 2], [0, 3], [1, 0], [2, 1], [0, 2]]
    assert [s["reward"] for s in r][2] == [0.0, 1.0]
    assert r[1]["final_obs"][0] == 2 and r[2]["final_obs"][1] == 3
    # Lengths (read where episode_start is 1) do not count the reset step.
    assert r[2]["final_length"][0] == 2 and r[3]["final_length"][1] == 3
    assert r[5]["final_length"][0] == 2


def test_disabled_autoreset_and_unsupported_spaces_are_refused():
    with pytest.raises(recur.Error, match="autoreset mode DISABLED"):
        GymBatch(lengths_env([2], gym.vector.AutoresetMode.DISABLED), "countdown")

    class Image(Countdown):
        def __init__(self):
            super().__init__()
            self.observation_space = gym.spaces.Box(0, 1, (4, 4), np.float32)

    class Multi(Countdown):
        def __init__(self):
            super().__init__()
            self.action_space = gym.spaces.MultiDiscrete([2, 3])

    with pytest.raises(recur.Error, match=r"observation space Box.*\(4, 4\).*1-D Box"):
        recur.train(CONFIGS / "cartpole.yaml", env=Image)
    with pytest.raises(recur.Error, match=r"action space MultiDiscrete"):
        recur.train(CONFIGS / "cartpole.yaml", env=Multi)
    with pytest.raises(recur.Error, match="factory"):
        recur.train(CONFIGS / "cartpole.yaml", env=Countdown())


def short_run(tmp_path, env, steps, **overrides):
    return recur.train(
        CONFIGS / "cartpole.yaml",
        {"run.output_dir": str(tmp_path), "env.num_envs": 4, "algo.rollout_steps": 32,
         "algo.num_minibatches": 2, "run.eval_every": 0, "run.final_eval_episodes": 10},
        env=env,
        run__total_env_steps=steps,
        **overrides,
    )


def test_train_factory_reaches_target(tmp_path):
    run = short_run(tmp_path, MatchSign, 6144, algo__learning_rate=3e-3)
    evals = list(csv.DictReader(open(run / "eval.csv")))
    assert float(evals[-1]["return_mean"]) >= 9.0, evals
    assert "id: \"python:MatchSign\"" in (run / "config.yaml").read_text()
    # The checkpoint records that its env came from Python.
    policy = recur.Policy.load(run)
    assert policy.metadata["run.env_source"] == "python"
    assert policy.env_id == "python:MatchSign"
    with pytest.raises(recur.Error, match="from python"):
        recur.evaluate(run)
    r = recur.evaluate(run, env=MatchSign, episodes=6, deterministic=True)
    assert r["return_mean"] >= 9.0 and r["lengths"] == [10] * 6


def test_decorrelate_steps_is_refused_for_python_envs(tmp_path):
    # Python envs step as one batch: no env can take its own number of random steps.
    with pytest.raises(recur.Error, match=r"env.decorrelate_steps = 20 needs recur's own envs"):
        short_run(tmp_path, MatchSign, 256, env__decorrelate_steps=20)


def test_async_next_step_vector_env(tmp_path):
    envs = lengths_env([3, 3, 3, 3], NEXT, gym.vector.AsyncVectorEnv)
    try:
        run = short_run(tmp_path, envs, 512)
    finally:
        envs.close()
    with open(run / "monitor.csv") as f:
        rows = list(csv.reader(f))[2:]
    # 512 env steps of 3-step episodes with a reset step each: 128 steps per env, every fourth
    # one a reset step; lengths and returns count transitions only.
    assert len(rows) >= 4 * 31 and {r[1] for r in rows} == {"3"} and {float(r[0]) for r in rows} == {3.0}
    evals = list(csv.DictReader(open(run / "eval.csv")))
    assert evals and float(evals[-1]["length_mean"]) == 3


def test_video_of_a_python_env(tmp_path):
    run = short_run(tmp_path, lambda: Countdown(4, render_mode="rgb_array"), 256,
                    run__video_every_evals=1)
    videos = list((run / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0
    path = tmp_path / "v" / "ep.mp4"
    ret = recur.record_video(run, lambda: Countdown(4, render_mode="rgb_array"), path)
    assert ret == 4.0 and path.stat().st_size > 0


def test_resume_restarts_python_episodes(tmp_path):
    run = short_run(tmp_path, MatchSign, 256)
    again = recur.train(resume=run, env=MatchSign, run__total_env_steps=512)
    rows = list(csv.DictReader(open(again / "progress.csv")))
    assert again == run and int(rows[-1]["env_steps"]) == 512

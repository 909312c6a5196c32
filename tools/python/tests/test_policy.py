"""recur.Policy against the C++ evaluation (`recur eval`) on checkpoints of short training runs."""

import json
import subprocess

import numpy as np
import pytest

import recur


def python_eval(run, episodes, seed, num_envs, deterministic):
    """agent::evaluate_policy's loop, written with recur.make_vec and recur.Policy: env i runs
    episodes i, i + n, ...; the state is reset where the previous step ended an episode."""
    policy = recur.Policy.load(run, seed=seed)
    n = max(1, min(num_envs, episodes))
    envs = recur.make_vec(policy.env_id, n, **policy.env_options)
    obs, _ = envs.reset(seed=seed)
    state = policy.initial_state(n)
    starts = np.ones(n, dtype=bool)
    target = [(episodes - i + n - 1) // n for i in range(n)]
    done = [0] * n
    returns, lengths = [], []
    while len(returns) < episodes:
        actions, state = policy.act(obs, state, starts, deterministic)
        obs, _, terminations, truncations, infos = envs.step(actions)
        starts = terminations | truncations
        for i in np.flatnonzero(starts):
            if done[i] < target[i]:
                returns.append(float(infos["final_info"]["episode"]["r"][i]))
                lengths.append(int(infos["final_info"]["episode"]["l"][i]))
                done[i] += 1
    return returns, lengths


def test_run_directory(cartpole_run):
    assert cartpole_run.is_absolute()
    for name in ["config.yaml", "progress.csv", "monitor.csv", "checkpoints/latest.safetensors"]:
        assert (cartpole_run / name).exists(), name


@pytest.mark.parametrize("run_name", ["cartpole_run", "pendulum_run"])
def test_load_and_state_shapes(request, run_name):
    run = request.getfixturevalue(run_name)
    policy = recur.Policy.load(run, seed=0)
    assert policy.device == "cpu"
    envs = recur.make_vec(policy.env_id, 3, **policy.env_options)
    assert policy.obs_dim == envs.single_observation_space.shape[0]
    hidden = int(policy.spec["core.hidden"])
    cores = 1 if policy.spec["policy.shared_core"] == "true" else 2
    assert policy.state_size == cores * 2 * hidden  # LSTM: h and c per core
    state = policy.initial_state(3)
    assert state.shape == (3, policy.state_size) and state.dtype == np.float32
    assert not state.any()
    obs, _ = envs.reset(seed=0)
    actions, new_state, info = policy.act(obs, state, np.ones(3, bool), return_info=True)
    assert new_state.shape == state.shape and new_state.dtype == np.float32
    assert new_state.any()
    assert info["log_prob"].shape == (3,) and info["value"].shape == (3,)
    if policy.discrete:
        assert actions.shape == (3,) and actions.dtype == np.int64
    else:
        assert actions.shape == (3, policy.action_dim) and actions.dtype == np.float32
    assert envs.step(actions)[0].shape == obs.shape  # the env takes the actions as they are


def test_act_is_functional_in_the_state(cartpole_run):
    """Same inputs give the same outputs; episode_start zeroes the state before the step."""
    policy = recur.Policy.load(cartpole_run, seed=0)
    obs = np.random.default_rng(0).normal(size=(4, policy.obs_dim)).astype(np.float32)
    state = np.random.default_rng(1).normal(size=(4, policy.state_size)).astype(np.float32)
    a1, s1 = policy.act(obs, state, None, deterministic=True)
    a2, s2 = policy.act(obs, state, None, deterministic=True)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(s1, s2)
    starts = np.array([True, False, True, False])
    a3, s3 = policy.act(obs, state, starts, deterministic=True)
    zeroed = state.copy()
    zeroed[starts] = 0
    a4, s4 = policy.act(obs, zeroed, None, deterministic=True)
    np.testing.assert_array_equal(a3, a4)
    np.testing.assert_array_equal(s3, s4)
    # Rows are independent: row 0 alone gives row 0 of the batch, up to float rounding (the
    # matrix products block differently for another batch size; exact only for equal sizes).
    a5, s5 = policy.act(obs[:1], state[:1], None, deterministic=True)
    np.testing.assert_array_equal(a5, a1[:1])
    np.testing.assert_allclose(s5, s1[:1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("run_name", ["cartpole_run", "pendulum_run"])
@pytest.mark.parametrize("deterministic", [True, False])
def test_act_equals_cpp_evaluation(request, run_name, deterministic):
    """A Python loop over make_vec + Policy.act reproduces agent::evaluate_policy (the C++
    PolicyActor of `recur eval`) episode for episode, sampling included."""
    run = request.getfixturevalue(run_name)
    episodes, seed, num_envs = 6, 5, 3
    returns, lengths = python_eval(run, episodes, seed, num_envs, deterministic)
    cpp = recur.evaluate(
        run, episodes, seed=seed, num_envs=num_envs, deterministic=deterministic
    )
    assert returns == cpp["returns"]
    assert lengths == cpp["lengths"]


def test_evaluate_threads(pendulum_run, cartpole_run):
    """threads= steps the envs on a pool (recur eval --threads): the same episodes for any
    count, sampled actions included; a count below 1 and threads with Gymnasium envs are
    refused by name."""
    one = recur.evaluate(pendulum_run, 6, seed=4, num_envs=3, deterministic=False)
    for threads in (2, 3):
        many = recur.evaluate(
            pendulum_run, 6, seed=4, num_envs=3, deterministic=False, threads=threads
        )
        assert many["returns"] == one["returns"]
        assert many["lengths"] == one["lengths"]
    with pytest.raises(recur.Error, match=r"evaluate: threads=0 is not a thread count"):
        recur.evaluate(cartpole_run, 2, threads=0)
    with pytest.raises(ValueError, match=r"threads=2 steps recur's registered envs"):
        recur.evaluate(cartpole_run, 2, env=lambda: None, threads=2)


def test_evaluate_env_options(pendulum_run, cartpole_run):
    """env_options apply on top of the run's (recur eval --option): the default's value changes
    nothing, another changes the returns, an unknown key is named."""
    plain = recur.evaluate(pendulum_run, 2, deterministic=True)
    same = recur.evaluate(pendulum_run, 2, deterministic=True, env_options={"g": 10.0})
    other = recur.evaluate(pendulum_run, 2, deterministic=True, env_options={"g": 2.5})
    assert same["returns"] == plain["returns"]
    assert other["returns"] != plain["returns"]
    with pytest.raises(recur.Error, match=r"unknown option 'gg' \(from .* and recur.evaluate"):
        recur.evaluate(pendulum_run, 1, env_options={"gg": 1})
    with pytest.raises(ValueError, match=r"env_options configure recur's registered envs"):
        recur.evaluate(cartpole_run, 1, env=lambda: None, env_options={"x": 1})


def test_act_equals_recur_eval_cli(cartpole_run, recur_cli):
    episodes, seed, num_envs = 8, 11, 4
    out = subprocess.run(
        [recur_cli, "--log-level", "warn", "eval", str(cartpole_run), "--episodes", str(episodes),
         "--seed", str(seed), "--num-envs", str(num_envs), "--deterministic", "--json"],
        check=True, capture_output=True, text=True,
    )
    cli = json.loads(out.stdout)
    returns, lengths = python_eval(cartpole_run, episodes, seed, num_envs, True)
    assert cli["episodes"] == episodes
    assert np.mean(returns) == pytest.approx(cli["return_mean"], rel=1e-12)
    assert np.mean(lengths) == pytest.approx(cli["length_mean"], rel=1e-12)


def test_bad_input(cartpole_run, tmp_path):
    policy = recur.Policy.load(cartpole_run)
    state = policy.initial_state(4)
    with pytest.raises(ValueError, match=r"act: obs has 12 floats, expected 4 x 4"):
        policy.act(np.zeros((4, 3), np.float32), state)
    with pytest.raises(ValueError, match=r"obs must be a batch"):
        policy.act(np.zeros(4, np.float32), state)
    size = policy.state_size
    with pytest.raises(ValueError, match=rf"act: state has shape \(4, 10\); expected \(n, "
                       rf"state_size\) = \(4, {size}\) .*policy.initial_state\(4\)"):
        policy.act(np.zeros((4, 4), np.float32), state[:, :10])
    # None once became one NaN: "set_states: 1 floats, expected 4096".
    with pytest.raises(ValueError, match=rf"act: state is None; expected float32 of shape "
                       rf"\(n, state_size\) = \(4, {size}\) for 4 observations: pass "
                       r"policy.initial_state\(4\) on the first step"):
        policy.act(np.zeros((4, 4), np.float32), None, np.ones(4, bool))
    with pytest.raises(ValueError, match=r"act: obs is None; expected float32 observations of "
                       r"shape \(n, obs_dim\) = \(n, 4\)"):
        policy.act(None, state)
    with pytest.raises(ValueError, match=r"act: episode_start has shape \(3,\); expected \(4,\)"):
        policy.act(np.zeros((4, 4), np.float32), state, np.ones(3, bool))
    with pytest.raises(recur.Error, match="has no checkpoints"):
        recur.Policy.load(tmp_path)
    with pytest.raises(recur.Error, match="cannot open checkpoint"):
        recur.Policy.load(tmp_path / "missing.safetensors")


def test_cuda_device(cartpole_run):
    if not recur.cuda_built:
        with pytest.raises(recur.Error, match="cuda"):
            recur.Policy.load(cartpole_run, device="cuda")
        return
    try:
        gpu = recur.Policy.load(cartpole_run, device="cuda")
    except recur.Error as e:  # a CUDA build on a machine without a usable GPU
        pytest.skip(str(e))
    cpu = recur.Policy.load(cartpole_run, device="cpu")
    obs = np.random.default_rng(0).normal(size=(8, cpu.obs_dim)).astype(np.float32)
    state = cpu.initial_state(8)
    for _ in range(5):
        a_cpu, s_cpu, i_cpu = cpu.act(obs, state, None, True, return_info=True)
        a_gpu, s_gpu, i_gpu = gpu.act(obs, state, None, True, return_info=True)
        np.testing.assert_allclose(s_gpu, s_cpu, atol=1e-4)
        np.testing.assert_allclose(i_gpu["value"], i_cpu["value"], atol=1e-4)
        state = s_cpu

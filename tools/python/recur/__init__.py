"""recur: an RL runtime for recurrent policies, from Python.

    import recur
    envs = recur.make_vec("CartPoleNoVel-v1", 16, seed=0)    # gymnasium.vector.VectorEnv
    env = recur.make("Pendulum-v1", g=9.81)                  # gymnasium.Env
    run = recur.train("configs/cartpole_novel.yaml", run__total_env_steps=20000)
    policy = recur.Policy.load(run)                          # acts as `recur eval` does
    state = policy.initial_state(16)
    obs, _ = envs.reset()
    starts = np.ones(16, bool)
    actions, state = policy.act(obs, state, starts, deterministic=True)
    obs, rewards, terminations, truncations, infos = envs.step(actions)
    starts = terminations | truncations                      # SAME_STEP autoreset

    recur.record_dataset(run, dataset_id="me/cartpole/ppo-v0", episodes=10)  # Minari dataset
    recur.load_plugin("libtmaze_plugin.so")                  # a C++ env plugin's envs

Every recur env is also registered in Gymnasium as ``recur/<id>``.
"""

from . import _recur
from ._recur import Error, derive_seed, env_ids, set_log_level
from .envs import (
    RecurEnv,
    RecurVectorEnv,
    load_plugin,
    loaded_plugins,
    make,
    make_vec,
    register_gymnasium_ids,
)
from .policy import Policy, evaluate, record_dataset, record_video
from .training import train

__version__ = _recur.__version__
cuda_built: bool = _recur.cuda_built

__all__ = [
    "Error",
    "Policy",
    "RecurEnv",
    "RecurVectorEnv",
    "cuda_built",
    "derive_seed",
    "env_ids",
    "evaluate",
    "load_plugin",
    "loaded_plugins",
    "make",
    "make_vec",
    "record_dataset",
    "record_video",
    "set_log_level",
    "train",
]

register_gymnasium_ids()

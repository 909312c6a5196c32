"""Writes gymnasium_<id>.txt: Gymnasium's own rgb_array frames of the classic-control envs at the
reference states of tests/envs/render_test.cc, in the format the test reads (the frame reduced to
block means, plus exact-colour pixel counts). recur's frames are checked against these within a
tolerance (pygame's and Cairo's rasterisers differ at edges).

    python -m venv /tmp/gym && /tmp/gym/bin/pip install "gymnasium[classic-control]==1.4.0"
    /tmp/gym/bin/python tests/data/render/gen_gymnasium_frames.py tests/data/render
"""
import sys

import gymnasium as gym
import numpy as np

BLOCK = 20
# id -> (state, last_u); keep in step with kReferenceCases in tests/envs/render_test.cc.
CASES = {
    "CartPole-v1": ([0.3, 0.0, 0.15, 0.0], None),
    "Pendulum-v1": ([0.8, 0.0], -1.5),
    "MountainCar-v0": ([-0.5, 0.0], None),
    "MountainCarContinuous-v0": ([0.2, 0.0], None),
    "Acrobot-v1": ([0.7, -1.2, 0.0, 0.0], None),
}
PALETTE = [(255, 255, 255), (0, 0, 0), (202, 152, 101), (129, 132, 203), (204, 77, 77),
           (128, 128, 128), (204, 204, 0), (0, 204, 204)]


def write(path, id_, state, last_u, frame, who):
    h, w, _ = frame.shape
    blocks = frame.reshape(h // BLOCK, BLOCK, w // BLOCK, BLOCK, 3).astype(np.int64).sum((1, 3))
    means = (blocks * 2 + BLOCK * BLOCK) // (2 * BLOCK * BLOCK)  # floor(mean + 0.5)
    with open(path, "w") as f:
        f.write(f"# {who}\n")
        f.write(f"id {id_}\nstate {' '.join(repr(float(v)) for v in state)}\n")
        f.write(f"last_u {'none' if last_u is None else repr(float(last_u))}\n")
        f.write(f"size {w} {h}\nblock {BLOCK}\nrows {h // BLOCK}\n")
        for row in means:
            f.write(" ".join(f"{r:02x}{g:02x}{b:02x}" for r, g, b in row) + "\n")
        f.write(f"colors {len(PALETTE)}\n")
        for c in PALETTE:
            f.write(f"{c[0]} {c[1]} {c[2]} {int(np.all(frame == c, axis=-1).sum())}\n")


def main(out_dir):
    for id_, (state, last_u) in CASES.items():
        env = gym.make(id_, render_mode="rgb_array")
        env.reset(seed=0)
        env.unwrapped.state = np.array(state, dtype=np.float64)
        if last_u is not None:
            env.unwrapped.last_u = last_u
        frame = env.render()
        write(f"{out_dir}/gymnasium_{id_}.txt", id_, state, last_u, frame,
              f"Gymnasium {gym.__version__} rgb_array frame; written by gen_gymnasium_frames.py")
        env.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")

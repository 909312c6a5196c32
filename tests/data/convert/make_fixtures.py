"""Writes the tiny fixtures of the `recur convert` CLI tests (stdlib only, deterministic).

keras_lstm.safetensors: a 2-layer Keras LSTM (input 3, units 2) under Keras' variable names
  (lstm/lstm_cell/kernel, ...), values on a 2^-10 grid; run: python3 make_fixtures.py
"""
import json
import random
import struct


def write_safetensors(path, tensors, metadata):
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        shape, values = tensors[name]
        blob = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def grid(rng, n):
    return [round(rng.uniform(-1, 1) * 1024) / 1024 for _ in range(n)]


def main():
    rng = random.Random(7)
    units, tensors = 2, {}
    for k, width in enumerate([3, units]):
        layer = "lstm" if k == 0 else "lstm_%d" % k
        tensors[layer + "/lstm_cell/kernel"] = ([width, 4 * units], grid(rng, width * 4 * units))
        tensors[layer + "/lstm_cell/recurrent_kernel"] = ([units, 4 * units], grid(rng, 4 * units * units))
        tensors[layer + "/lstm_cell/bias"] = ([4 * units], grid(rng, 4 * units))
    tensors["dense/kernel"] = ([units, 1], grid(rng, units))
    write_safetensors("keras_lstm.safetensors", tensors, {"source": "make_fixtures.py"})


if __name__ == "__main__":
    main()

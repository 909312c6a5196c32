"""Holds kernels/low_float_math.h's encodings (dumped by low_float_oracle.cc) against NumPy's
float16 and ml_dtypes' bfloat16 conversions. Exits 1 on any mismatch.

    pip install numpy ml_dtypes
    python3 tools/check/low_float_oracle.py /tmp/lf
"""

import sys

import ml_dtypes
import numpy as np


def main() -> int:
    prefix = sys.argv[1]
    x = np.fromfile(prefix + ".f32", dtype=np.float32)
    half = np.fromfile(prefix + ".f16", dtype=np.uint16)
    bf16 = np.fromfile(prefix + ".bf16", dtype=np.uint16)
    with np.errstate(over="ignore"):
        want_half = x.astype(np.float16).view(np.uint16)
    want_bf16 = x.astype(ml_dtypes.bfloat16).view(np.uint16)
    bad_half = int((want_half != half).sum())
    bad_bf16 = int((want_bf16 != bf16).sum())
    print(f"{len(x)} values: half mismatches {bad_half} (NumPy float16), "
          f"bfloat16 mismatches {bad_bf16} (ml_dtypes)")
    return 0 if bad_half == 0 and bad_bf16 == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

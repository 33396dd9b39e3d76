"""Suite-wide settings: single-threaded BLAS (2-core machines; threads only contend)."""

import os

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

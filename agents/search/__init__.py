"""Search kernels the agents share (numba): one module per algorithm."""

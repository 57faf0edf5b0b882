"""The Triton kernels of the windowed path (`fused="triton"`, PyTorch, forward and backward) against
the `keras.ops` path, in Triton's interpreter (TRITON_INTERPRET=1) on the CPU: outputs and
gradients (with respect to the inputs and every weight, B included), both forms, windows with
w1 != w2 and wider than the sequence, grouped key/value heads, the calls that fall back, and a
training step. Run in a PyTorch subprocess, whatever the suite's backend
(tests/layers/fused_checks.py)."""

import os
import textwrap

import keras
import pytest
from backend_process import run_on_backend
from triton_site import interpreter_missing, with_triton

from keras_simplicial import SimplicialAttention

PRELUDE = textwrap.dedent(
    """
    import keras
    from fused_checks import check, check_fallbacks, check_training_step
    assert keras.backend.backend() == "torch"
    """
)

# Tiny: w1 != w2 with w2 > N, 2 query heads sharing 1 key/value head; windows of one key.
SMALL = """
for form in ("scalar_product", "trilinear"):
    check("triton", form, (3, 7), n=6, kv_heads=1)
    check("triton", form, (1, 2), n=4, batch=2)
print("TRITON_OK")
"""

GRID = """
import numpy as np
import pytest
from keras_simplicial import SimplicialAttention, _triton

for form in ("scalar_product", "trilinear"):
    for window in ((4, 2), (10, 10), (1, 3), (16, 5), (5, 3)):
        for kv_heads in (None, 1):
            check("triton", form, window, n=10, batch=2, kv_heads=kv_heads)
    check("triton", form, (6, 4), n=12, batch=2, heads=4, kv_heads=2)
check_fallbacks("triton")
check_training_step("triton")
# Without the interpreter, CPU tensors are refused by name.
_triton.INTERPRET = False
layer = SimplicialAttention(num_heads=1, key_dim=2, window=(2, 2), fused="triton")
with pytest.raises(RuntimeError, match="TRITON_INTERPRET=1"):
    layer(np.zeros((1, 3, 4), "float32"), np.zeros((1, 3, 4), "float32"))
print("TRITON_OK")
"""


def run_torch(script):
    reason = interpreter_missing()
    if reason:
        pytest.skip(reason)
    environment = with_triton(dict(os.environ, TRITON_INTERPRET="1"))
    run_on_backend("torch", PRELUDE + script, "TRITON_OK", **environment)


@pytest.mark.integration
def test_triton_kernels_match_the_keras_ops_path_on_tiny_cases():
    run_torch(SMALL)


@pytest.mark.slow  # about a minute: the interpreter runs every program of each grid in Python
def test_triton_kernels_match_the_keras_ops_path_in_interpret_mode():
    run_torch(GRID)


@pytest.mark.skipif(keras.backend.backend() == "torch", reason="checks a backend other than torch")
def test_triton_needs_the_torch_backend():
    with pytest.raises(ValueError, match="needs the torch backend"):
        SimplicialAttention(window=(2, 2), fused="triton")


def test_triton_needs_a_window():
    with pytest.raises(ValueError, match="window"):
        SimplicialAttention(fused="triton")

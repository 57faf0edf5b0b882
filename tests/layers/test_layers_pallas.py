"""The Pallas kernels of the windowed path (`fused="pallas"`, JAX, forward and backward) against the
`keras.ops` path, in Pallas's interpreter on the CPU: outputs and gradients (with respect to the
inputs and every weight, B included), both forms, windows with w1 != w2 and wider than the
sequence, grouped key/value heads, several query blocks (whose key gradients overlap), the calls
that fall back, and a compiled training step. Run in a JAX subprocess, whatever the suite's
backend (tests/layers/fused_checks.py)."""

import importlib.util
import textwrap

import keras
import pytest
from backend_process import run_on_backend

from keras_simplicial import SimplicialAttention

PRELUDE = textwrap.dedent(
    """
    import keras
    from fused_checks import check, check_fallbacks, check_training_step
    from keras_simplicial import _pallas
    assert keras.backend.backend() == "jax"
    """
)

# Tiny: 2 query blocks of 2 (so the key gradients of neighbouring blocks overlap), a window pair
# with w1 != w2 and w2 > N, 2 query heads sharing 1 key/value head.
SMALL = """
_pallas.MAX_BLOCK = 2
for form in ("scalar_product", "trilinear"):
    check("pallas", form, (3, 5), n=4, kv_heads=1)
print("PALLAS_OK")
"""

GRID = """
for form in ("scalar_product", "trilinear"):
    for window in ((4, 2), (10, 10), (1, 3), (16, 5)):
        for kv_heads in (None, 1):
            check("pallas", form, window, n=10, batch=2, kv_heads=kv_heads)
    _pallas.MAX_BLOCK = 4  # blocks of 2 queries, windows wider than a block
    check("pallas", form, (5, 3), n=10, batch=2, heads=4, kv_heads=2)
    _pallas.MAX_BLOCK = 128
check_fallbacks("pallas")
check_training_step("pallas")
print("PALLAS_OK")
"""


def run_jax(script):
    if importlib.util.find_spec("jax") is None:
        pytest.skip("JAX is not installed (the [backends] extra brings it)")
    run_on_backend("jax", PRELUDE + script, "PALLAS_OK", JAX_PLATFORMS="cpu")


@pytest.mark.integration
def test_pallas_kernels_match_the_keras_ops_path_on_a_tiny_case():
    run_jax(SMALL)


@pytest.mark.slow  # a few minutes: the interpreter runs every program of each grid in Python
def test_pallas_kernels_match_the_keras_ops_path_in_interpret_mode():
    run_jax(GRID)


@pytest.mark.parametrize(
    "kwargs,name",
    [({"fused": "cuda", "window": (2, 2)}, "fused"), ({"fused": "pallas"}, "window")],
)
def test_bad_fused_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        SimplicialAttention(**kwargs)


@pytest.mark.skipif(keras.backend.backend() == "jax", reason="checks a backend other than JAX")
def test_pallas_needs_the_jax_backend():
    with pytest.raises(ValueError, match="needs the jax backend"):
        SimplicialAttention(window=(2, 2), fused="pallas")

"""benchmarks/fused_kernel_cost.py: its FLOP count (`keras_simplicial._fused_cost`), its refusal
without a GPU, and a `--dry-run` through the kernels' interpreters on the CPU (the command is
measured on a lent GPU only)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from triton_site import interpreter_missing, with_triton

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "fused_kernel_cost.py"


def test_the_counted_flops_are_the_valid_pairs_times_the_products():
    from keras_simplicial._fused_cost import windowed_attention_flops as counted_flops

    # N = 3, windows (2, 3): 1 x 1 + 2 x 2 + 2 x 3 = 11 valid pairs, 1 + 2 + 2 = 5 keys j.
    assert counted_flops(3, (2, 3), 1, 1, "trilinear", 1, 1) == 11 * 4
    assert counted_flops(3, (2, 3), 2, 3, "scalar_product", 2, 5) == 10 * (
        11 * (4 + 6) + 5 * 2 * 9 + 3 * 2 * 27
    )
    # Away from the start, FBGEMM's 4 x head_dim x w1 x w2 per query and head.
    far = counted_flops(200, (4, 8), 16, 16, "trilinear", 1, 1)
    near = counted_flops(199, (4, 8), 16, 16, "trilinear", 1, 1)
    assert far - near == 4 * 16 * 4 * 8


def run(*argv):
    env = with_triton(dict(os.environ, CUDA_VISIBLE_DEVICES="", JAX_PLATFORMS="cpu"))
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run(
        [sys.executable, str(SCRIPT), *argv], env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_without_a_gpu_the_command_refuses_by_name():
    result = run("--backend", "torch")
    assert result.returncode != 0
    assert "no GPU" in result.stderr and "--dry-run" in result.stderr


def dry_run(backend, tmp_path):
    result = run("--backend", backend, "--dry-run", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr[-4000:]
    record = json.loads((tmp_path / f"fused_kernel_cost_{backend}.json").read_text())
    assert record["fbgemm_published"]["figures"].startswith("up to 588")
    assert [case["form"] for case in record["cases"]] == ["trilinear", "scalar_product"]
    for case in record["cases"]:
        assert case["max_abs_difference"] < 1e-5, case
        assert case["fused_forward_backward_tflops"] > 0, case


@pytest.mark.integration
def test_a_dry_run_measures_the_triton_kernels_on_the_cpu(tmp_path):
    reason = interpreter_missing()
    if reason:
        pytest.skip(reason)
    dry_run("torch", tmp_path)


@pytest.mark.slow  # about 15 s: Pallas's interpreter compiles both kernels for both forms
@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed")
def test_a_dry_run_measures_the_pallas_kernels_on_the_cpu(tmp_path):
    dry_run("jax", tmp_path)

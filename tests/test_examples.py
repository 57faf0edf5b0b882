"""The sequence decoder example runs end to end (one short epoch on PyTorch, which compiles
nothing, so it takes seconds)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.integration
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_sequence_decoder_example_runs():
    env = dict(os.environ, KERAS_BACKEND="torch", CUDA_VISIBLE_DEVICES="")
    result = subprocess.run(
        [sys.executable, "examples/sequence_decoder.py", "--epochs", "1", "--samples", "32"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "simplicial_block_8" in result.stdout  # model.summary()
    assert "TwoSimplicialTransformerBlock" in result.stdout
    assert "held-out next-token accuracy" in result.stdout
    assert "generated tokens that follow the rule" in result.stdout
    assert "cached and recomputed generation agree on 1.000 of the tokens" in result.stdout

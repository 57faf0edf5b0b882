"""Time and TFLOP/s of the fused windowed 2-simplicial kernels on a lent GPU, forward and forward +
backward, against the `keras.ops` path (fused=None) of the same layer on the same backend, with
FBGEMM's published figures printed beside them. It has not been run on a GPU yet.

    python benchmarks/fused_kernel_cost.py --backend torch --out DIR   # Triton (fused="triton")
    python benchmarks/fused_kernel_cost.py --backend jax --out DIR     # Pallas (fused="pallas")
    python benchmarks/fused_kernel_cost.py --backend torch --dry-run   # tiny, CPU, interpreters

Without a GPU it refuses (the kernels would run in an interpreter, which measures nothing); with
`--dry-run` it runs tiny shapes on the CPU through Pallas's and Triton's interpreters instead
(tests/layers/test_fused_kernel_cost.py), to show the command runs. One backend a process (Keras
picks its backend once); `--out` gets fused_kernel_cost_<backend>.json, naming the code that
measured it (`provenance`: its commit and its sources' hash).

On the device (its image has JAX, PyTorch and Triton but no Keras): here, once, the wheels it
lacks (`.venv/bin/python benchmarks/engine_gpu.py wheels --dir .whl`, `.whl/` ignored); there
(device `run`, carry [".whl"], timeout_s 600):

    python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \\
        --no-cache-dir --upgrade --target /tmp/site .whl/*.whl . \\
        && export PYTHONPATH=/tmp/site || exit;
    for b in torch jax; do PYTHONUNBUFFERED=1 python3 benchmarks/fused_kernel_cost.py \\
        --backend $b --out $OUT; done

What is timed: one `SimplicialAttention(window=(w1, w2), num_key_value_heads=...)` call on [batch,
N, width] inputs attending to themselves (the projections included, the same on both paths), once
with `fused` set and once with fused=None (same weights; their outputs' largest difference is
recorded): the forward pass, and the gradient of sum(outputs) with respect to the inputs and every
weight (forward + backward). JAX: `jax.jit` of each; PyTorch: eager, `torch.cuda.synchronize`
after each call. The median of --repeats calls after one warm-up. A case that fails (a kernel the
GPU compiler rejects, memory) is recorded with its error and the others go on.

FLOPs counted (the attention only, not the projections; per batch element and query head), by
`keras_simplicial._fused_cost.windowed_attention_flops`:
pairs = sum_i min(i + 1, w1) min(i + 1, w2) valid key pairs, keys = sum_i min(i + 1, w1);
- trilinear: pairs x (2 d + 2 dv): the logit sum_d p_d l1_jd l2_kd and the output's
  w_jk u1_j (.) u2_k, a multiply-add per coordinate each, as FBGEMM counts its kernels (4 x
  head_dim x w1 x w2 per query, `simplicial/utils.py`, with d = dv = head_dim);
- the paper's form: pairs x (2 d + 2 dv) (the Gram entry l1_j . l2_k and sum_k w_jk u_k) + keys x
  2 dv^2 (sum_j u_j (x) inner_j) + N x 2 dv^3 (the contraction with B);
the per-key Gram entries and the per-pair triple product and softmax (O(1) each) are not counted.
Forward + backward counts 3.5 x the forward (the backward as 2.5 forwards, FlashAttention's
benchmarks' convention). TFLOP/s = counted FLOPs / median seconds.

FBGEMM's published figures (`FBGEMM`, printed beside ours) are for the trilinear form's forward pass
in bfloat16 on an H100, with their own kernels and shapes; ours run in float32 (`tl.dot` with
input_precision="ieee", no TF32) on whatever GPU is lent, so they are a scale, not a like-for-like
comparison.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

# The checkout this script is in: the package may run from an installed copy, and the record names
# the code of this tree (its commit where it is a git checkout, and its sources' hash).
CHECKOUT = Path(__file__).resolve().parents[1]

FUSED = {"jax": "pallas", "torch": "triton"}

#: FBGEMM's published 2-simplicial kernel figures, as their sources state them.
FBGEMM = {
    "source": "Chen et al., 'Fast 2-Simplicial Attention: Hardware-Efficient Kernels in TLX', "
    "PyTorch blog, September 2025, https://pytorch.org/blog/"
    "fast-2-simplicial-attention-hardware-efficient-kernels-in-tlx/ (linked from FBGEMM's "
    "fbgemm_gpu/experimental/simplicial_attention/README.md)",
    "figures": "up to 588 Tensor Core BF16 TFLOPs (about 60% tensor core utilization) in the "
    "forward pass on an NVIDIA H100 with the TLX kernel, about 1.74x the original Triton "
    "kernel's 337 peak TFLOPs",
    "shapes": "FBGEMM's benchmarks/bench_fwd.py: bfloat16, trilinear form, batch 4, 1 key/value "
    "head, head_dim 128, w1 = 32, w2 in {256, 512, 1024}, 64 or 128 query heads, N from 1,024 "
    "to 16,384 (the blog's peak is not tied to one of them in its summary)",
}


def gpu_name(backend):
    """The GPU's name, or None where the backend sees none."""
    if backend == "torch":
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    import jax

    return jax.devices()[0].device_kind if jax.default_backend() == "gpu" else None


class Timer:
    """Compiled (JAX) or eager (PyTorch) forward and forward + backward calls of a layer."""

    def __init__(self, layer, x):
        import keras

        self.backend = keras.backend.backend()
        self.layer = layer
        if self.backend == "jax":
            import jax

            self.x = jax.numpy.asarray(x)
            weights = [v.value for v in layer.trainable_variables]

            def forward(weights, x):
                return layer.stateless_call(weights, [], x, x)[0]

            def loss(weights, x):
                return jax.numpy.sum(forward(weights, x).astype("float32"))

            compiled = jax.jit(forward)
            gradient = jax.jit(jax.grad(loss, argnums=(0, 1)))
            self.forward = lambda: jax.block_until_ready(compiled(weights, self.x))
            self.backward = lambda: jax.block_until_ready(gradient(weights, self.x))
        else:
            import torch

            self.x = keras.ops.convert_to_tensor(x)
            sync = torch.cuda.synchronize if self.x.is_cuda else (lambda: None)

            def forward():
                with torch.no_grad():
                    out = layer(self.x, self.x)
                sync()
                return out

            def backward():
                inputs = self.x.detach().requires_grad_(True)
                for variable in layer.trainable_variables:
                    variable.value.grad = None
                layer(inputs, inputs).float().sum().backward()
                sync()

            self.forward, self.backward = forward, backward

    def output(self):
        import keras

        return keras.ops.convert_to_numpy(keras.ops.cast(self.forward(), "float32"))


def median_seconds(call, repeats):
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(args, n, form):
    """One case: seconds and TFLOP/s of the fused and the keras.ops paths."""
    import keras
    import numpy as np

    from keras_simplicial import SimplicialAttention
    from keras_simplicial._fused_cost import windowed_attention_flops

    backend = keras.backend.backend()
    common = dict(
        num_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        key_dim=args.key_dim,
        value_dim=args.value_dim,
        form=form,
        window=tuple(args.window),
    )
    x = np.random.default_rng(0).normal(size=(args.batch, n, args.width)).astype("float32")
    reference = SimplicialAttention(**common)
    fused = SimplicialAttention(fused=FUSED[backend], **common)
    reference.build(x.shape, x.shape)
    fused.build(x.shape, x.shape)
    fused.set_weights(reference.get_weights())
    flops = windowed_attention_flops(
        n, args.window, args.key_dim, args.value_dim or args.key_dim, form, args.batch, args.heads
    )
    case = {"n": n, "form": form, "forward_gflop": flops / 1e9}
    timers = {}
    for name, layer in (("fused", fused), ("keras_ops", reference)):
        try:
            timer = timers[name] = Timer(layer, x)
            for part, call, count in (
                ("forward", timer.forward, flops),
                ("forward_backward", timer.backward, 3.5 * flops),
            ):
                seconds = median_seconds(call, args.repeats)
                case[f"{name}_{part}_ms"] = seconds * 1e3
                case[f"{name}_{part}_tflops"] = count / seconds / 1e12
        except Exception as error:  # a kernel the GPU compiler rejects, memory: record, go on
            case[f"{name}_error"] = f"{type(error).__name__}: {error}"[:2000]
    for part in ("forward", "forward_backward"):
        if f"fused_{part}_ms" in case and f"keras_ops_{part}_ms" in case:
            case[f"{part}_speedup"] = case[f"keras_ops_{part}_ms"] / case[f"fused_{part}_ms"]
    if "fused_error" not in case and "keras_ops_error" not in case:
        difference = np.abs(timers["fused"].output() - timers["keras_ops"].output())
        case["max_abs_difference"] = float(difference.max())
    return case


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=sorted(FUSED), required=True)
    parser.add_argument("--out", default=None, help="folder of the results JSON ($OUT there)")
    parser.add_argument("--dry-run", action="store_true", help="tiny shapes on the CPU")
    parser.add_argument("--n", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--forms", nargs="+", default=["trilinear", "scalar_product"])
    parser.add_argument("--window", type=int, nargs=2, default=(32, 64))
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--kv-heads", type=int, default=1)
    parser.add_argument("--key-dim", type=int, default=64)
    parser.add_argument("--value-dim", type=int, default=None)
    parser.add_argument("--width", type=int, default=256, help="the inputs' feature size")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    if args.dry_run:
        args.n, args.window, args.batch, args.heads = [8], (3, 5), 1, 2
        args.kv_heads, args.key_dim, args.value_dim, args.width, args.repeats = 1, 4, 3, 6, 1
        if args.backend == "torch":
            os.environ["TRITON_INTERPRET"] = "1"  # before Keras imports Triton
    os.environ["KERAS_BACKEND"] = args.backend
    device = gpu_name(args.backend)
    if device is None and not args.dry_run:
        sys.exit(
            f"fused_kernel_cost: no GPU on this machine for {args.backend}; this command measures "
            "the fused kernels on a lent GPU only (see its docstring for the device command). "
            "`--dry-run` checks it on a CPU with tiny shapes through the interpreters."
        )
    import keras

    from keras_simplicial.agents.atomic_files import atomic_write_json
    from keras_simplicial.agents.provenance import provenance

    record = {
        "command": "benchmarks/fused_kernel_cost.py",
        "code": provenance(CHECKOUT),
        "backend": args.backend,
        "fused": FUSED[args.backend],
        "device": device or f"CPU ({platform.machine()}), interpreters (--dry-run)",
        "keras": keras.__version__,
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "backend")},
        "flops": "attention only, forward; forward + backward = 3.5 x (module docstring)",
        "fbgemm_published": FBGEMM,
        "cases": [],
    }
    print(f"{args.backend} ({record['fused']} against keras.ops) on {record['device']}")
    print(f"FBGEMM, published: {FBGEMM['figures']} [{FBGEMM['source']}]")
    for n in args.n:
        for form in args.forms:
            case = measure(args, n, form)
            record["cases"].append(case)
            print(json.dumps(case), flush=True)
            if args.out:
                out = Path(args.out)
                out.mkdir(parents=True, exist_ok=True)
                path = out / f"fused_kernel_cost_{args.backend}.json"
                atomic_write_json(path, record)
    return record


if __name__ == "__main__":
    main()

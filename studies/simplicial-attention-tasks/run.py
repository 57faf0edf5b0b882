"""When does 2-simplicial attention beat dot-product attention? One-block models on Match3, Match2
and the two- and three-key tasks (keras_simplicial.tasks), trained run by run.

    .venv/bin/python studies/simplicial-attention-tasks/run.py --dry-run  # the plan, its time
    .venv/bin/python studies/simplicial-attention-tasks/run.py            # every run not done
    .venv/bin/python studies/simplicial-attention-tasks/report.py         # then the page
    .venv/bin/python studies/simplicial-attention-tasks/run.py --length-cost  # length 16's cost
    .venv/bin/python studies/simplicial-attention-tasks/run.py --tasks match3-16  # the secondary

For each task x model x seed: a training set and a held-out set drawn from the seed, a model built
from the seed, the task's `EPOCHS` of Adam, and after every epoch the accuracy on the held-out
set. One JSON per run in studies/simplicial-attention-tasks/results/ (written atomically, so an
interrupted run leaves nothing); a run whose JSON exists is skipped, so running the script again
resumes. Every constant below is fixed by the pre-registration
(studies/simplicial-attention-tasks/preregistration.md, whose SHA-256 each run records): change none
of them after the first run. The secondary, Match3 at length 16 (task "match3-16"), has its own
pre-registration (length-16-preregistration.md, recorded by its runs instead) and its own results
folder (length-16/results/), and runs alone: `--tasks match3-16`.

The models (one block each, `build_model`): an entity embedding Dense(D), one block, and a readout
(a logit per entity for Match2 / Match3, a logit after max pooling over the entities for the key
tasks, the agents' readout). The blocks differ in their attention only; the feed-forward width of
each is solved so that every model's parameter count is within 10% of the dot-product model's.
"""

import argparse
import functools
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

from keras_simplicial import tasks  # noqa: E402
from keras_simplicial.agents.provenance import provenance  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STUDY = Path(__file__).resolve().parent
RESULTS = STUDY / "results"
PREREGISTRATION = STUDY / "preregistration.md"
# The secondary at length 16: its own pre-registration, results and pilot.
SECONDARY = "match3-16"
SECONDARY_PREREGISTRATION = STUDY / "length-16-preregistration.md"
SECONDARY_RESULTS = STUDY / "length-16" / "results"
SECONDARY_PILOT = STUDY / "length-16" / "pilot"
CHECK_RESULTS = STUDY / "length-16" / "checks"
# Which layers this process trains: read once, at import, as later edits or commits in the checkout
# do not change the code already imported.
PROVENANCE = provenance()

# ------------------------------------------------------------------ the pre-registered constants
SEEDS = (1, 2, 3, 4, 5, 6, 7, 8)
TRAIN_SIZE = 8_000
TEST_SIZE = 2_000
BATCH_SIZE = 64
LEARNING_RATE = 3e-3
WIDTH = 32  # D, the entities' width
HEADS = 2
KEY_DIM = 16
SIMPLICIAL_VALUE_DIM = 8  # B has value_dim^3 entries per head (value_dim^4 for order 3)
TRIPLES_VALUE_DIM = 6
DOT_FEEDFORWARD = 128
VIRTUAL_ENTITIES = 2
PARAMETER_TOLERANCE = 0.10
JIT_COMPILE = True  # XLA on TensorFlow and JAX

# Each task: its generator in keras_simplicial.tasks, the generator's arguments, and the epochs
# (the endpoint is the held-out accuracy after the last one).
TASKS = {
    "match3": {"generator": "match3", "length": 8, "modulus": 23, "balanced": True},
    "match2": {"generator": "match2", "length": 8, "modulus": 23, "balanced": True},
    # The secondary: M = 197 puts about half of a uniform draw's positions in a triple at N = 16
    # (1 - (1 - 1/197)^136 = 0.50), as M = 23 does at N = 8 with its 36 pairs (0.80).
    SECONDARY: {"generator": "match3", "length": 16, "modulus": 197, "balanced": True},
    "two-key": {
        "generator": "key_task",
        "num_keys": 2,
        "num_colours": 8,
        "num_distractors": 4,
        "num_held_out": 6,
    },
    "three-key": {
        "generator": "key_task",
        "num_keys": 3,
        "num_colours": 8,
        "num_distractors": 2,
        "num_held_out": 12,
    },
}
# The secondary's 30: its pilot's plateau (length-16-preregistration.md, section 2).
EPOCHS = {"match3": 40, "match2": 40, "two-key": 20, "three-key": 20, SECONDARY: 30}
PRIMARY_TASKS = ("match3", "match2", "two-key", "three-key")
# The attention of each model; "pairs" / "triples" attend to all pairs / triples of entities.
MODELS = {
    "dot-product": {"attention": "dot_product"},
    "simplicial-pairs": {"attention": "simplicial", "form": "scalar_product", "order": 2},
    "simplicial-virtual": {"attention": "virtual", "form": "scalar_product", "order": 2},
    "trilinear-pairs": {"attention": "simplicial", "form": "trilinear", "order": 2},
    "simplicial-triples": {"attention": "simplicial", "form": "scalar_product", "order": 3},
}
BASE_MODELS = ("dot-product", "simplicial-pairs", "simplicial-virtual", "trilinear-pairs")
MODELS_OF_TASK = {
    "match3": BASE_MODELS,
    "match2": BASE_MODELS,
    SECONDARY: BASE_MODELS,
    "two-key": BASE_MODELS,
    "three-key": BASE_MODELS + ("simplicial-triples",),
}

# --length-16-checks: exploratory, after the secondary's campaign, and tested by nothing: why every
# model stays near chance at length 16. Each check changes one thing of the secondary's task:
# "match3-8-m197" its length back to 8, keeping M = 197 (is it the 197 residues the embedding must
# learn from one-hot inputs, rather than the length?); "match3-16-data4x" 4 times the training
# sequences (is it the data?). The secondary's epochs, seeds 100 and 101 (no campaign's seeds).
CHECKS = {
    "match3-8-m197": {
        "task": {"generator": "match3", "length": 8, "modulus": 197, "balanced": True},
        "train_factor": 1,
    },
    "match3-16-data4x": {"task": TASKS[SECONDARY], "train_factor": 4},
}
CHECK_SEEDS = (100, 101)

# Seconds per epoch measured on this 2-core machine (TensorFlow + XLA, beside another training, 3
# epochs of seed 100), and per run outside the epochs (data, building, compiling, the held-out
# evaluations): the dry run's estimate until runs exist, whose own seconds then replace these.
# Match2 has Match3's shapes, so its times.
MEASURED_SECONDS_PER_EPOCH = {
    ("match3", "dot-product"): 0.67,
    ("match3", "simplicial-pairs"): 1.33,
    ("match3", "simplicial-virtual"): 1.31,
    ("match3", "trilinear-pairs"): 1.35,
    ("match2", "dot-product"): 0.67,
    ("match2", "simplicial-pairs"): 1.33,
    ("match2", "simplicial-virtual"): 1.31,
    ("match2", "trilinear-pairs"): 1.35,
    # Length 16: results/length-16-cost.json (idle, TensorFlow's own threads).
    (SECONDARY, "dot-product"): 1.71,
    (SECONDARY, "simplicial-pairs"): 2.92,
    (SECONDARY, "simplicial-virtual"): 2.83,
    (SECONDARY, "trilinear-pairs"): 3.17,
    ("two-key", "dot-product"): 0.72,
    ("two-key", "simplicial-pairs"): 1.34,
    ("two-key", "simplicial-virtual"): 1.35,
    ("two-key", "trilinear-pairs"): 1.33,
    ("three-key", "dot-product"): 0.69,
    ("three-key", "simplicial-pairs"): 1.32,
    ("three-key", "simplicial-virtual"): 1.14,
    ("three-key", "trilinear-pairs"): 1.26,
    ("three-key", "simplicial-triples"): 10.30,
}
SECONDS_PER_RUN_OUTSIDE_EPOCHS = 15.0

# --quick: seconds, for the tests.
QUICK = {"epochs": 2, "train_size": 128, "test_size": 64}


def task_settings(task):
    """The generator and arguments of `task`: a pre-registered task or a length-16 check."""
    return TASKS[task] if task in TASKS else CHECKS[task]["task"]


def task_data(task, size, seed, split):
    """`tasks.Examples` of `task` for (seed, split)."""
    settings = dict(task_settings(task))
    generator = getattr(tasks, settings.pop("generator"))
    return generator(size, seed=seed, split=split, **settings)


def per_position(task):
    return task_settings(task)["generator"] != "key_task"


# ---------------------------------------------------------------------------------------- models
def _block_output(model_name, x, feedforward):
    """The block of `model_name` on the embedded entities x [B, N, D] -> [B, N, D]."""
    import keras

    from keras_simplicial import (
        SimplicialAttention,
        TransformerBlock,
        TwoSimplicialTransformerBlock,
        VirtualEntities,
    )

    spec = MODELS[model_name]
    if spec["attention"] == "dot_product":
        block = TransformerBlock(num_heads=HEADS, key_dim=KEY_DIM, feedforward_dim=feedforward)
        return block(x)
    if spec["attention"] == "virtual":
        block = TwoSimplicialTransformerBlock(
            num_virtual_entities=VIRTUAL_ENTITIES,
            num_heads=HEADS,
            key_dim=KEY_DIM,
            num_simplicial_heads=HEADS,
            simplicial_key_dim=KEY_DIM,
            simplicial_value_dim=SIMPLICIAL_VALUE_DIM,
            simplicial_order=spec["order"],
            simplicial_form=spec["form"],
            feedforward_dim=feedforward,
        )
        return block(VirtualEntities(VIRTUAL_ENTITIES)(x))[:, :-VIRTUAL_ENTITIES]
    # Attention over all pairs (triples) of entities, in the paper's block otherwise:
    # e' = LayerNorm(e + g(LayerNorm(a2))), a2 from x = LayerNorm(e) (eqs. efrmov0, efromv).
    value_dim = TRIPLES_VALUE_DIM if spec["order"] == 3 else SIMPLICIAL_VALUE_DIM
    normed = keras.layers.LayerNormalization(epsilon=1e-5)(x)
    a2 = SimplicialAttention(
        num_heads=HEADS,
        key_dim=KEY_DIM,
        value_dim=value_dim,
        order=spec["order"],
        form=spec["form"],
    )(normed, normed)
    a2 = keras.layers.LayerNormalization(epsilon=1e-5)(a2)
    hidden = keras.layers.Dense(feedforward, activation="relu")(a2)
    return keras.layers.LayerNormalization(epsilon=1e-5)(x + keras.layers.Dense(WIDTH)(hidden))


def build_model(task, model_name, feedforward, num_entities, num_features):
    import keras

    entities = keras.Input((num_entities, num_features))
    x = _block_output(model_name, keras.layers.Dense(WIDTH)(entities), feedforward)
    if per_position(task):
        logits = keras.layers.Dense(1)(x)[..., 0]
    else:
        logits = keras.layers.Dense(1)(keras.layers.GlobalMaxPooling1D()(x))[:, 0]
    return keras.Model(entities, logits, name=model_name)


@functools.lru_cache(maxsize=None)
def _parameters(task, model_name, feedforward, num_entities, num_features):
    return build_model(task, model_name, feedforward, num_entities, num_features).count_params()


def matched_feedforward(task, model_name, num_entities, num_features):
    """(feedforward width, parameters) of `model_name`: the width whose parameter count is nearest
    the dot-product model's (feed-forward width `DOT_FEEDFORWARD`), and that count."""
    shape = (num_entities, num_features)
    target = _parameters(task, "dot-product", DOT_FEEDFORWARD, *shape)
    if model_name == "dot-product":
        return DOT_FEEDFORWARD, target
    # The count is affine in the width: two builds give the line.
    low = _parameters(task, model_name, 1, *shape)
    high = _parameters(task, model_name, 2, *shape)
    width = max(1, round((target - low) / (high - low)) + 1)
    count = low + (width - 1) * (high - low)
    if abs(count - target) > PARAMETER_TOLERANCE * target:
        raise ValueError(
            f"{model_name} on {task}: no feed-forward width brings its {count} parameters within "
            f"{PARAMETER_TOLERANCE:.0%} of the dot-product model's {target}."
        )
    return width, count


# -------------------------------------------------------------------------------------- training
def registration(task):
    """The pre-registration that fixes `task`'s runs."""
    return SECONDARY_PREREGISTRATION if task == SECONDARY else PREREGISTRATION


def _preregistration_sha256(task):
    path = registration(task)
    if not path.exists():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_atomically(path, data):
    """Writes JSON to a temporary file beside `path`, then renames it over `path`: a run is either
    complete or absent. open() (not tempfile) keeps the umask's permissions."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1)
        out.write("\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


def _write_plan(path, planned):
    """Writes plan.json unless the one there plans the same (the commit that wrote it aside), so
    that running a finished campaign again leaves the checkout as it was."""
    try:
        existing = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        existing = None
    if isinstance(existing, dict):
        same = {k: v for k, v in existing.items() if k != "provenance"}
        if same == {k: v for k, v in planned.items() if k != "provenance"}:
            return
    _write_atomically(path, planned)


def run_path(out, task, model_name, seed):
    return Path(out) / f"{task}--{model_name}--seed{seed}.json"


def train_run(task, model_name, seed, epochs, train_size, test_size):
    """Trains one model; returns the run's record (configuration, per-epoch curves, times)."""
    import keras

    train = task_data(task, train_size, seed, "train")
    test = task_data(task, test_size, seed, "test")
    num_entities, num_features = (int(n) for n in train.inputs.shape[1:])
    feedforward, parameters = matched_feedforward(task, model_name, num_entities, num_features)
    keras.utils.set_random_seed(seed)
    model = build_model(task, model_name, feedforward, num_entities, num_features)
    assert model.count_params() == parameters
    model.compile(
        optimizer=keras.optimizers.Adam(LEARNING_RATE),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.BinaryAccuracy(threshold=0.0, name="accuracy")],
        jit_compile=JIT_COMPILE,
    )
    x_train, y_train = train.inputs, train.labels.astype("float32")
    x_test, y_test = test.inputs, test.labels.astype("float32")
    rows = []
    started = time.time()
    for epoch in range(1, epochs + 1):
        tick = time.perf_counter()
        history = model.fit(
            x_train, y_train, batch_size=BATCH_SIZE, epochs=1, shuffle=True, verbose=0
        )
        seconds = time.perf_counter() - tick
        test_loss, test_accuracy = model.evaluate(x_test, y_test, batch_size=512, verbose=0)
        rows.append(
            {
                "epoch": epoch,
                "train_loss": float(history.history["loss"][0]),
                "train_accuracy": float(history.history["accuracy"][0]),
                "test_loss": float(test_loss),
                "test_accuracy": float(test_accuracy),
                "seconds": seconds,
            }
        )
    return {
        "task": task,
        "model": model_name,
        "seed": seed,
        "endpoint": {"test_accuracy": rows[-1]["test_accuracy"], "epoch": epochs},
        "parameters": parameters,
        "feedforward_dim": feedforward,
        # The first epoch includes compiling: the median is the epoch's cost.
        "seconds_per_epoch": float(np.median([row["seconds"] for row in rows])),
        "seconds_total": time.time() - started,
        "epochs": rows,
        "settings": {
            "task": task_settings(task),
            "model": MODELS[model_name],
            "epochs": epochs,
            "train_size": train_size,
            "test_size": test_size,
            "batch_size": BATCH_SIZE,
            "learning_rate": LEARNING_RATE,
            "width": WIDTH,
            "heads": HEADS,
            "key_dim": KEY_DIM,
            "positive_rate_train": float(train.labels.mean()),
            "positive_rate_test": float(test.labels.mean()),
        },
        "environment": {
            "backend": keras.backend.backend(),
            "keras": keras.__version__,
            "python": platform.python_version(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        },
        "preregistration_sha256": _preregistration_sha256(task),
        # Which layers trained it: the package version and the commit checked out.
        "provenance": PROVENANCE,
    }


# ---------------------------------------------------------------------------------- the campaign
def planned_runs(selected_tasks, selected_models, seeds):
    """(task, model, seed), seed by seed: a campaign stopped half way has as many seeds of every
    model."""
    return [
        (task, model_name, seed)
        for seed in seeds
        for task in selected_tasks
        for model_name in MODELS_OF_TASK[task]
        if model_name in selected_models
    ]


def plan(selected_tasks, selected_models, seeds, epochs, train_size, test_size):
    """What the campaign runs, with each model's parameter count: OUT/plan.json, which the report
    reads to describe the set-up before any run has finished."""
    models = {}
    for task in selected_tasks:
        example = task_data(task, 2, 0, "train")
        num_entities, num_features = (int(n) for n in example.inputs.shape[1:])
        for model_name in MODELS_OF_TASK[task]:
            if model_name in selected_models:
                width, count = matched_feedforward(task, model_name, num_entities, num_features)
                models[f"{task}/{model_name}"] = {
                    "task": task,
                    "model": model_name,
                    "parameters": count,
                    "feedforward_dim": width,
                    "entities": int(num_entities),
                    "features": int(num_features),
                }
    return {
        "seeds": list(seeds),
        "tasks": {task: TASKS[task] for task in selected_tasks},
        "epochs": {task: epochs or EPOCHS[task] for task in selected_tasks},
        "models": MODELS,
        "runs": models,
        "train_size": train_size,
        "test_size": test_size,
        "batch_size": BATCH_SIZE,
        "learning_rate": LEARNING_RATE,
        "width": WIDTH,
        "heads": HEADS,
        "key_dim": KEY_DIM,
        "simplicial_value_dim": SIMPLICIAL_VALUE_DIM,
        "triples_value_dim": TRIPLES_VALUE_DIM,
        "dot_feedforward_dim": DOT_FEEDFORWARD,
        "virtual_entities": VIRTUAL_ENTITIES,
        "positive_rates_uniform": {
            task: tasks.positive_rate(
                getattr(tasks, f"{TASKS[task]['generator']}_labels"),
                TASKS[task]["length"],
                TASKS[task]["modulus"],
            )
            for task in selected_tasks
            if per_position(task)
        },
        "measured_seconds_per_epoch": {
            f"{task}/{model_name}": seconds
            for (task, model_name), seconds in MEASURED_SECONDS_PER_EPOCH.items()
            if task in selected_tasks
        },
        "seconds_per_run_outside_epochs": SECONDS_PER_RUN_OUTSIDE_EPOCHS,
        "preregistration_sha256": _preregistration_sha256(selected_tasks[0]),
        "provenance": PROVENANCE,
    }


def estimated_seconds(runs, out, epochs=None):
    """Seconds the runs not done yet should take: the measured seconds per epoch of finished runs
    of the same task and model where there are some, the table above otherwise."""
    done = {}
    for path in Path(out).glob("*.json"):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            key = (record["task"], record["model"])
            done.setdefault(key, []).append(record["seconds_per_epoch"])
        except (ValueError, KeyError, TypeError):
            continue
    total = 0.0
    for task, model_name, _ in runs:
        per_epoch = (
            float(np.median(done[(task, model_name)]))
            if (task, model_name) in done
            else MEASURED_SECONDS_PER_EPOCH[(task, model_name)]
        )
        total += SECONDS_PER_RUN_OUTSIDE_EPOCHS + (epochs or EPOCHS[task]) * per_epoch
    return total


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tasks",
        nargs="+",
        choices=list(TASKS),
        default=list(PRIMARY_TASKS),
        help=f"default: the primary campaign's; {SECONDARY!r} (the secondary) runs alone",
    )
    parser.add_argument(
        "--length-cost",
        action="store_true",
        help="time Match3's models at lengths 8 and 16 instead (no run of the campaign)",
    )
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument(
        "--length-16-checks",
        action="store_true",
        help="exploratory: train the checks of why length 16 stays near chance "
        f"({', '.join(CHECKS)}; seeds {', '.join(map(str, CHECK_SEEDS))}) into "
        f"{CHECK_RESULTS.relative_to(ROOT)} instead (no run of the campaign)",
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=None,
        help=f"default: {', '.join(map(str, SEEDS))} ({', '.join(map(str, CHECK_SEEDS))} for the "
        "checks)",
    )
    parser.add_argument(
        "--out",
        default=None,
        help=f"folder of the runs' JSON files (default: {RESULTS.relative_to(ROOT)}, or "
        f"{SECONDARY_RESULTS.relative_to(ROOT)} for {SECONDARY})",
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="epochs of every run instead of each task's pre-registered ones (a pilot); refuses "
        "the committed results folders",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan and its estimated time, write OUT/plan.json, train nothing",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"tiny runs ({QUICK}) for tests; refuses the committed results folder",
    )
    parser.add_argument(
        "--max-runs", type=int, default=None, help="stop after this many new runs (resumable)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="TensorFlow's intra- and inter-op threads (default: its own choice), for a machine "
        "whose cores other jobs share",
    )
    args = parser.parse_args(argv)
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads must be a positive integer, got {args.threads}.")
    if args.epochs is not None and args.epochs < 1:
        parser.error(f"--epochs must be a positive integer, got {args.epochs}.")
    if SECONDARY in args.tasks and len(set(args.tasks)) > 1:
        parser.error(
            f"--tasks: {SECONDARY} is the secondary, with its own pre-registration and results "
            f"folder: run it alone (--tasks {SECONDARY}), not with {', '.join(args.tasks)}."
        )
    if args.seeds is None:
        args.seeds = list(CHECK_SEEDS if args.length_16_checks else SEEDS)
    if args.out is None:
        if args.length_16_checks:
            args.out = str(CHECK_RESULTS)
        else:
            args.out = str(SECONDARY_RESULTS if args.tasks == [SECONDARY] else RESULTS)
    if args.length_16_checks and (args.epochs is not None or args.length_cost):
        parser.error(
            "--length-16-checks trains the secondary's epochs: give it neither --epochs nor "
            "--length-cost."
        )
    committed = {RESULTS.resolve(), SECONDARY_RESULTS.resolve(), CHECK_RESULTS.resolve()}
    if (args.quick or args.epochs is not None) and Path(args.out).resolve() in committed:
        parser.error(
            "--quick and --epochs runs are not the pre-registered ones: give another --out."
        )
    return args


# --length-cost: the tasks timed, and the campaign they are scaled to.
LENGTH_COST = ("match3", SECONDARY)
COST_SEED, COST_EPOCHS, CAMPAIGN_EPOCHS = 100, 3, 40
MATCH3_MODELS = ("dot-product", "simplicial-pairs", "simplicial-virtual", "trilinear-pairs")


def length_cost():
    """What a Match3 secondary at length 16 would cost here (`--length-cost`): seconds per epoch
    of each Match3 model at the campaign's length (N = 8, M = 23) and at N = 16 (M = 197, the
    secondary's task), back to back in this process, and what a
    campaign of the same shape (4 models x 8 seeds x 40 epochs) would take at N = 16, from the
    campaign's own seconds per epoch at N = 8 scaled by each model's ratio. Seed 100 (a pilot
    seed), 3 epochs a model (the median skips the first, which compiles). Writes
    results/length-16-cost.json; trains nothing that enters a comparison."""
    rows = []
    for model in MATCH3_MODELS:
        row = {"model": model}
        for task in LENGTH_COST:
            record = train_run(task, model, COST_SEED, COST_EPOCHS, TRAIN_SIZE, TEST_SIZE)
            row[task] = record["seconds_per_epoch"]  # the median over its epochs
            print(f"{model} {task}: {row[task]:.1f} s per epoch", flush=True)
        row["ratio"] = row[SECONDARY] / row["match3"]
        rows.append(row)
    # The campaign's own seconds per epoch at N = 8, scaled by each model's measured ratio.
    committed = {}
    for model in MATCH3_MODELS:
        records = [
            json.loads(path.read_text(encoding="utf-8"))
            for path in RESULTS.glob(f"match3--{model}--seed*.json")
        ]
        committed[model] = statistics.median(r["seconds_per_epoch"] for r in records)
    seconds = sum(
        len(SEEDS) * CAMPAIGN_EPOCHS * committed[row["model"]] * row["ratio"] for row in rows
    )
    hours = seconds / 3600
    result = {
        "lengths": {task: (TASKS[task]["length"], TASKS[task]["modulus"]) for task in LENGTH_COST},
        "seed": COST_SEED,
        "epochs_timed": COST_EPOCHS,
        "rows": rows,
        "campaign_seconds_per_epoch_at_8": committed,
        "hours_at_16_for_4_models_x_8_seeds_x_40_epochs": hours,
    }
    out = RESULTS / "length-16-cost.json"
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for row in rows:
        print(
            f"| {row['model']} | {row['match3']:.1f} | {row[SECONDARY]:.1f} | {row['ratio']:.1f} |"
        )
    print(f"a campaign at N = 16 (4 models x 8 seeds x 40 epochs): about {hours:.1f} hours")
    return 0


def length_16_checks(out, models, seeds, quick):
    """`--length-16-checks`: each check x Match3 model x seed not done yet, one JSON each in `out`
    (resumable, as the campaign), with the secondary's epochs."""
    epochs = QUICK["epochs"] if quick else EPOCHS[SECONDARY]
    base = QUICK["train_size"] if quick else TRAIN_SIZE
    test_size = QUICK["test_size"] if quick else TEST_SIZE
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        for check, spec in CHECKS.items():
            for model_name in MATCH3_MODELS:
                path = run_path(out, check, model_name, seed)
                if model_name not in models or path.exists():
                    continue
                train_size = spec["train_factor"] * base
                record = train_run(check, model_name, seed, epochs, train_size, test_size)
                record["exploratory"] = True
                record["preregistration_sha256"] = None  # no pre-registration fixes the checks
                if quick:
                    record["quick"] = True
                _write_atomically(path, record)
                print(
                    f"{path.name}: held-out accuracy {record['endpoint']['test_accuracy']:.3f}, "
                    f"training {record['epochs'][-1]['train_accuracy']:.3f}",
                    flush=True,
                )
    return 0


def main(argv=None):
    args = parse_args(argv)
    if args.length_cost:
        return length_cost()
    if args.threads is not None:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    out = Path(args.out)
    if args.length_16_checks:
        return length_16_checks(out, args.models, args.seeds, args.quick)
    # None: each task's EPOCHS
    epochs = QUICK["epochs"] if args.quick else args.epochs
    train_size = QUICK["train_size"] if args.quick else TRAIN_SIZE
    test_size = QUICK["test_size"] if args.quick else TEST_SIZE
    runs = planned_runs(args.tasks, args.models, args.seeds)
    pending = [run for run in runs if not run_path(out, *run).exists()]
    estimate = estimated_seconds(pending, out, epochs)
    print(
        f"{len(runs)} runs planned, {len(runs) - len(pending)} done, {len(pending)} to do: "
        f"about {estimate / 3600:.1f} h ({estimate / 60:.0f} min) on this machine"
    )
    out.mkdir(parents=True, exist_ok=True)
    planned = plan(args.tasks, args.models, args.seeds, epochs, train_size, test_size)
    _write_plan(out / "plan.json", planned)
    if args.dry_run:
        for task in args.tasks:
            for model_name in MODELS_OF_TASK[task]:
                todo = [run for run in pending if run[:2] == (task, model_name)]
                if todo:
                    minutes = estimated_seconds(todo, out, epochs) / 60
                    seeds = " ".join(str(seed) for _, _, seed in todo)
                    count = planned["runs"][f"{task}/{model_name}"]["parameters"]
                    print(
                        f"  {task:10s} {model_name:19s} {count:6,} parameters, seeds {seeds}: "
                        f"about {minutes:.0f} min"
                    )
        return 0
    for count, (task, model_name, seed) in enumerate(pending):
        if args.max_runs is not None and count >= args.max_runs:
            break
        path = run_path(out, task, model_name, seed)
        if path.exists():  # another process finished it meanwhile
            continue
        record = train_run(task, model_name, seed, epochs or EPOCHS[task], train_size, test_size)
        if args.quick:
            record["quick"] = True
        _write_atomically(path, record)
        print(
            f"{path.name}: held-out accuracy {record['endpoint']['test_accuracy']:.3f} after "
            f"{record['endpoint']['epoch']} epochs, {record['seconds_per_epoch']:.2f} s/epoch, "
            f"{record['parameters']} parameters",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

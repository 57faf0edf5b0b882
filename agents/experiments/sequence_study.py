"""Causal sequence tasks in which order matters (`keras_simplicial.sequence_tasks`), learnt by
small decoder stacks that differ in one block's attention: the models, one training run and its
record. The study's scripts (studies/sequence-tasks/) fix the settings and call these.

A model: Dense(width) on each token, a causal `TransformerBlock`, then the block under test, then
Dense(classes) on every position. The block under test is a second causal `TransformerBlock`
("dot-product") or a causal `TwoSimplicialTransformerBlock(num_virtual_entities=0)` whose
2-simplicial attention goes over all pairs (j, k <= i) or over the windows `window` ("-window"),
in the paper's form ("simplicial") or the trilinear one ("trilinear"). Its feed-forward width is
solved so that each model has the parameters of the dot-product model to within `tolerance`.
"""

import dataclasses
import functools
import os
import platform
import time

import numpy as np

import keras_simplicial
from keras_simplicial import sequence_tasks
from keras_simplicial.agents.provenance import provenance

MODELS = {
    "dot-product": None,
    "simplicial": ("scalar_product", False),
    "simplicial-window": ("scalar_product", True),
    "trilinear": ("trilinear", False),
    "trilinear-window": ("trilinear", True),
}


@dataclasses.dataclass(frozen=True)
class Settings:
    """Everything a run depends on besides (task, model, seed)."""

    tasks: dict  # name -> (generator in sequence_tasks, its keyword arguments)
    epochs: int
    train_size: int
    test_size: int
    batch_size: int = 64
    learning_rate: float = 3e-3
    width: int = 32
    heads: int = 2
    key_dim: int = 8
    simplicial_key_dim: int = 8
    simplicial_value_dim: int = 8
    feedforward_dim: int = 64  # of the dot-product model's blocks
    window: tuple = (8, 4)
    tolerance: float = 0.10
    jit_compile: bool = True


def check_model(model_name):
    if model_name not in MODELS:
        raise ValueError(f"`model` must be one of {tuple(MODELS)}, received {model_name!r}.")
    return model_name


def task_data(settings, task, size, seed, split):
    if task not in settings.tasks:
        raise ValueError(f"`task` must be one of {tuple(settings.tasks)}, received {task!r}.")
    generator, arguments = settings.tasks[task]
    return getattr(sequence_tasks, generator)(size, seed=seed, split=split, **arguments)


def build_model(settings, model_name, feedforward, length, features, classes):
    import keras

    from keras_simplicial import TransformerBlock, TwoSimplicialTransformerBlock

    inputs = keras.Input((length, features))
    x = keras.layers.Dense(settings.width)(inputs)
    common = {"num_heads": settings.heads, "key_dim": settings.key_dim}
    x = TransformerBlock(feedforward_dim=settings.feedforward_dim, **common)(
        x, use_causal_mask=True
    )
    spec = MODELS[check_model(model_name)]
    if spec is None:
        block = TransformerBlock(feedforward_dim=feedforward, **common)
    else:
        form, windowed = spec
        block = TwoSimplicialTransformerBlock(
            num_virtual_entities=0,
            num_simplicial_heads=1,
            simplicial_key_dim=settings.simplicial_key_dim,
            simplicial_value_dim=settings.simplicial_value_dim,
            simplicial_form=form,
            simplicial_window=tuple(settings.window) if windowed else None,
            feedforward_dim=feedforward,
            **common,
        )
    x = block(x, use_causal_mask=True)
    return keras.Model(inputs, keras.layers.Dense(classes)(x), name=model_name)


@functools.lru_cache(maxsize=None)
def _parameters(settings_key, model_name, feedforward, length, features, classes):
    settings = _SETTINGS[settings_key]
    return build_model(settings, model_name, feedforward, length, features, classes).count_params()


_SETTINGS = {}


def matched_feedforward(settings, model_name, length, features, classes):
    """(feed-forward width of the block under test, parameters): the width whose count is nearest
    the dot-product model's; the count is affine in the width, so two builds give the line."""
    key = repr(settings)
    _SETTINGS[key] = settings
    shape = (length, features, classes)
    target = _parameters(key, "dot-product", settings.feedforward_dim, *shape)
    if model_name == "dot-product":
        return settings.feedforward_dim, target
    low, high = (_parameters(key, model_name, w, *shape) for w in (1, 2))
    width = max(1, round((target - low) / (high - low)) + 1)
    count = low + (width - 1) * (high - low)
    if abs(count - target) > settings.tolerance * target:
        raise ValueError(
            f"{model_name}: no feed-forward width brings its {count} parameters within "
            f"{settings.tolerance:.0%} of the dot-product model's {target}."
        )
    return width, count


def _accuracy(logits, labels):
    scored = labels != sequence_tasks.IGNORED
    return float((np.argmax(logits, -1)[scored] == labels[scored]).mean())


@functools.lru_cache(maxsize=None)
def git_commit():
    """The repository's HEAD commit when first asked (the process's start, as the code it runs),
    or None outside a git checkout (`keras_simplicial.agents.provenance`)."""
    return provenance()["git_commit"]


def train_runs(settings, task, model_name, seeds):
    """Trains one model per seed, yielding (seed, record) as each finishes: the endpoint (test
    accuracy after the last epoch), per-epoch curves and seconds, the chance level, and what
    trained it.

    The model is compiled once for all the seeds (compiling costs more than these trainings on a
    CPU): each seed's weights come from a model built from that seed and copied in, the
    optimizer's state is restored to its state before the first step, and the data and the
    shuffling are drawn from the seed, so a run is the same whichever seeds come before it.
    """
    import keras

    compiled = initial_state = None
    for seed in seeds:
        train = task_data(settings, task, settings.train_size, seed, "train")
        test = task_data(settings, task, settings.test_size, seed, "test")
        length, features = (int(n) for n in train.inputs.shape[1:])
        classes = _classes(settings, task)
        feedforward, parameters = matched_feedforward(
            settings, model_name, length, features, classes
        )
        keras.utils.set_random_seed(seed)
        model = build_model(settings, model_name, feedforward, length, features, classes)
        if compiled is None:
            compiled = model
            compiled.compile(
                optimizer=keras.optimizers.Adam(settings.learning_rate),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                jit_compile=settings.jit_compile,
            )
            compiled.optimizer.build(compiled.trainable_variables)
            initial_state = [keras.ops.convert_to_numpy(v) for v in compiled.optimizer.variables]
        else:
            compiled.set_weights(model.get_weights())
            for variable, value in zip(compiled.optimizer.variables, initial_state):
                variable.assign(value)
        keras.utils.set_random_seed(seed)
        yield seed, _train(settings, compiled, train, test, task, model_name, seed, feedforward)


def _classes(settings, task):
    generator, arguments = settings.tasks[task]
    if generator == "pair_recall":
        return int(arguments.get("num_values", 8))
    return 2


def _train(settings, model, train, test, task, model_name, seed, feedforward):
    import keras

    weights = (train.labels != sequence_tasks.IGNORED).astype("float32")
    targets = np.maximum(train.labels, 0)
    rows, started = [], time.time()
    for epoch in range(1, settings.epochs + 1):
        tick = time.perf_counter()
        history = model.fit(
            train.inputs,
            targets,
            sample_weight=weights,
            batch_size=settings.batch_size,
            epochs=1,
            shuffle=True,
            verbose=0,
        )
        seconds = time.perf_counter() - tick
        logits = model.predict(test.inputs, batch_size=512, verbose=0)
        rows.append(
            {
                "epoch": epoch,
                "train_loss": float(history.history["loss"][0]),
                "test_accuracy": _accuracy(logits, test.labels),
                "seconds": seconds,
            }
        )
    return {
        "task": task,
        "model": model_name,
        "seed": seed,
        "endpoint": {"test_accuracy": rows[-1]["test_accuracy"], "epoch": settings.epochs},
        "chance": sequence_tasks.per_position_majority_accuracy(train.labels, test.labels),
        "parameters": model.count_params(),
        "feedforward_dim": feedforward,
        # The first seed's first epoch includes compiling: the median is the epoch's cost.
        "seconds_per_epoch": float(np.median([row["seconds"] for row in rows])),
        "seconds_total": time.time() - started,
        "epochs": rows,
        "settings": dataclasses.asdict(settings),
        "environment": {
            "keras_simplicial": keras_simplicial.__version__,
            "git_commit": git_commit(),
            "backend": keras.backend.backend(),
            "keras": keras.__version__,
            "python": platform.python_version(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        },
    }


@dataclasses.dataclass(frozen=True)
class Row:
    """One (task, model) of the study: its seeds' endpoints and costs, and the pre-registered test
    against the reference model (None for the reference itself)."""

    task: str
    model: str
    seeds: tuple
    endpoints: tuple
    chance: float
    seconds_per_epoch: float
    cost_ratio: float
    comparison: object  # statistics.SeedComparison against the reference, or None
    holm_p_value: float | None

    @property
    def decision(self):
        """ "better", "worse" or "no difference shown" (Holm-adjusted p <= 0.05 and the sign)."""
        if self.comparison is None:
            return "reference"
        if self.holm_p_value > SIGNIFICANCE_LEVEL:
            return "no difference shown"
        return "better" if self.comparison.difference > 0 else "worse"


SIGNIFICANCE_LEVEL = 0.05


def summarise(records, reference="dot-product"):
    """Rows per (task, model), in the order of `MODELS`, from run records: every model against
    `reference` by the exact permutation test on the endpoints of their common seeds, the p-values
    of all tasks and models adjusted together by Holm's method."""
    from keras_simplicial.agents.experiments.statistics import compare_seeds, holm_adjusted

    groups = {}
    for record in records:
        groups.setdefault((record["task"], record["model"]), []).append(record)
    tasks = sorted({task for task, _ in groups})
    rows, tests = [], []
    for task in tasks:
        base = {r["seed"]: r for r in groups.get((task, reference), [])}
        for model_name in MODELS:
            runs = sorted(groups.get((task, model_name), []), key=lambda r: r["seed"])
            if not runs:
                continue
            endpoints = tuple(r["endpoint"]["test_accuracy"] for r in runs)
            seconds = float(np.median([r["seconds_per_epoch"] for r in runs]))
            base_seconds = float(np.median([r["seconds_per_epoch"] for r in base.values()] or [0]))
            comparison = None
            if model_name != reference and len(runs) >= 2 and len(base) >= 2:
                comparison = compare_seeds(
                    [r["endpoint"]["test_accuracy"] for r in base.values()], endpoints
                )
                tests.append(len(rows))
            rows.append(
                dict(
                    task=task,
                    model=model_name,
                    seeds=tuple(r["seed"] for r in runs),
                    endpoints=endpoints,
                    chance=float(np.mean([r["chance"] for r in runs])),
                    seconds_per_epoch=seconds,
                    cost_ratio=seconds / base_seconds if base_seconds else float("nan"),
                    comparison=comparison,
                    holm_p_value=None,
                )
            )
    adjusted = holm_adjusted([rows[i]["comparison"].p_value for i in tests]) if tests else []
    for i, p in zip(tests, adjusted):
        rows[i]["holm_p_value"] = p
    return [Row(**row) for row in rows]

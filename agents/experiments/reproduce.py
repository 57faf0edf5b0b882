"""The paper's comparison (Figure 3) at any preset, from training to the report
(`keras-simplicial reproduce`).

    options = ReproduceOptions(preset="bridge-small", seeds=(1, 2, 3), stop_timesteps=3_000_000)
    reproduce(options)                    # train (or resume) every run, then the report
    reproduce(dataclasses.replace(options, report_only=True))   # the report from the runs alone

Phase 1 trains the relational and the simplicial agent on the preset for every seed to
`stop_timesteps`, one run at a time, in `<out>/<agent>-seed<k>`; a run directory that holds a
run is resumed, one that is complete is left alone, so the command runs over several sittings
(Ctrl-C checkpoints and stops it). Once a run stops, only its latest and its best checkpoint stay,
so run directories are small enough to commit and resume from a clone. After the runs, both
agents' frames/s are measured back to back for Appendix C (`measured_throughput`).

Phase 2 reads the run directories and nothing else (`findings`) and writes the report (`render`)
to `doc` with its figures in `figures`, and `<out>/reproduction.json`.
"""

import dataclasses
from pathlib import Path
from typing import Optional

from keras_simplicial.agents.experiments.findings import AGENTS, findings
from keras_simplicial.agents.experiments.report import render
from keras_simplicial.agents.experiments.sweep import sweep_run_dir, train_or_resume
from keras_simplicial.agents.experiments.throughput import measured_throughput
from keras_simplicial.agents.training.presets import PRESETS, lr_schedule_over
from keras_simplicial.agents.training.run_arguments import RunArguments, run_argument_flags


def comparison_arguments(preset, stop_timesteps, **changes):
    """The `RunArguments` of the comparison's runs: the preset's recipe with its learning-rate
    schedule stretched to end at `stop_timesteps` (`lr_schedule_over`), and `changes` (fields of
    `RunArguments`, as `RunArguments.from_preset` takes them) on top; an lr given without a
    schedule replaces the schedule."""
    if preset not in PRESETS:
        raise ValueError(f"--preset must be one of {sorted(PRESETS)}, got {preset!r}.")
    given = dict(changes.pop("overrides", None) or {})
    schedule = lr_schedule_over(PRESETS[preset], stop_timesteps)
    if schedule and not ("lr" in given and "lr_schedule" not in given):
        given = {"lr_schedule": schedule, **given}
    return RunArguments.from_preset(preset, overrides=given, **changes)


@dataclasses.dataclass(frozen=True)
class ReproduceOptions:
    """What the comparison trains and reports (the options of `keras-simplicial reproduce`).

    Attributes:
        arguments: the `RunArguments` of every run, whose agent and seed each run replaces;
            None: the preset's recipe unchanged but for its learning-rate schedule, stretched to
            end at `stop_timesteps` (`comparison_arguments`).
        out: the run directories (default: runs/reproduce-<preset>); doc, figures: the report
            and its figures (default: in `out`; the repository's `make reproduce-small` writes
            studies/bridge-small-reproduction/ and the committed runs in benchmarks/results/).
    """

    preset: str = "bridge-small"
    seeds: tuple = (1, 2, 3)
    stop_timesteps: int = 3_000_000
    out: Optional[str] = None
    doc: Optional[str] = None
    figures: Optional[str] = None
    eval_episodes: int = 1000
    probe_episodes: int = 1000
    report_only: bool = False
    address: Optional[str] = None
    arguments: Optional[RunArguments] = None
    checkpoint_every: int = 5
    throughput_seconds: float = 60.0

    def __post_init__(self):
        if self.preset not in PRESETS:
            raise ValueError(f"--preset must be one of {sorted(PRESETS)}, got {self.preset!r}.")
        if len(self.seeds) < 2:
            raise ValueError("--seeds needs at least 2 seeds per agent to compare them.")
        for name in ("stop_timesteps", "eval_episodes", "probe_episodes", "checkpoint_every"):
            if int(getattr(self, name)) <= 0:
                flag = "--" + name.replace("_", "-")
                raise ValueError(f"{flag} must be a positive number, got {getattr(self, name)}.")
        if self.throughput_seconds <= 0:
            raise ValueError(
                "--throughput-seconds must be a positive number of seconds, got "
                f"{self.throughput_seconds}."
            )
        if self.arguments is None:
            arguments = comparison_arguments(self.preset, self.stop_timesteps)
            object.__setattr__(self, "arguments", arguments)
        elif not isinstance(self.arguments, RunArguments):
            raise ValueError(f"arguments must be a RunArguments, got {self.arguments!r}.")
        if self.out is None:
            object.__setattr__(self, "out", f"runs/reproduce-{self.preset}")
        if self.doc is None:
            object.__setattr__(self, "doc", str(Path(self.out) / "reproduction.md"))
        if self.figures is None:
            object.__setattr__(self, "figures", str(Path(self.out) / "figures"))
        self.command()  # the report's header names it: refused now, not after the training

    def command(self):
        """The `keras-simplicial reproduce` command line of these options (what the report says
        it was generated by): the run arguments as flags where they differ from the preset's."""
        words = ["keras-simplicial reproduce", "--preset", self.preset, "--seeds"]
        words += [str(seed) for seed in self.seeds]
        words += ["--stop-timesteps", str(self.stop_timesteps)]
        words += ["--out", self.out, "--doc", self.doc, "--figures", self.figures]
        defaults = {field.name: field.default for field in dataclasses.fields(self)}
        for name in ("eval_episodes", "probe_episodes"):
            if getattr(self, name) != defaults[name]:
                words += ["--" + name.replace("_", "-"), str(getattr(self, name))]
        reference = comparison_arguments(self.preset, self.stop_timesteps)
        flags = run_argument_flags(self.arguments, reference, exclude=("agent", "seed"))
        return " ".join(words + flags)  # agent and seed: each run's own (`run_arguments`)

    def run_arguments(self, agent, seed):
        """The `RunArguments` of one run of the comparison."""
        return dataclasses.replace(self.arguments, agent=agent, seed=seed)


def run_dirs(options):
    """{(agent, seed): run directory}, seed by seed (both agents of a seed before the next), so a
    comparison is possible from the first sitting on."""
    return {
        (agent, seed): sweep_run_dir(options.out, agent, seed)
        for seed in options.seeds
        for agent in AGENTS
    }


def throughput(options):
    """Both agents' frames/s of `options.preset` on this machine (`measured_throughput`)."""
    return measured_throughput(
        options.out,
        options.preset,
        options.arguments,
        seconds=options.throughput_seconds,
        address=options.address,
    )


def train_all(options):
    """Trains (or resumes) every run, keeps each one's latest and best checkpoint, then measures
    the frames/s of Appendix C while nothing else trains."""
    import ray

    from keras_simplicial.agents.training.run_directory import RunDirectory

    for (agent, seed), run_dir in run_dirs(options).items():
        try:
            train_or_resume(
                run_dir,
                options.run_arguments(agent, seed),
                options.stop_timesteps,
                address=options.address,
                checkpoint_every=options.checkpoint_every,
            )
        finally:
            ray.shutdown()
            RunDirectory(run_dir).prune_checkpoints(keep=1)
    throughput(options)


def write_report(options):
    """Writes `options.doc`, its figures and `<out>/reproduction.json` from the run directories."""
    from keras_simplicial.agents.atomic_files import atomic_write_json, atomic_write_text

    found = findings(options, run_dirs(options), throughput(options))
    atomic_write_text(options.doc, render(options, found))
    data = {
        "options": dataclasses.asdict(options),
        "runs": {
            f"{a}-seed{s}": {k: v for k, v in r.items() if k != "best_sampled_report"}
            for (a, s), r in found.runs.items()
        },
        "comparisons": {k: c.to_json() for k, c in found.comparisons.items()},
        "random_policy_win_rate": found.random_rate,
        "throughput": found.throughput,
        "time_factor": found.time_factor,
    }
    atomic_write_json(Path(options.out) / "reproduction.json", data, default=str)
    print(f"Wrote {options.doc} and its figures in {options.figures}")


def reproduce(options):
    """Phase 1 (unless `options.report_only`), then phase 2."""
    if not options.report_only:
        train_all(options)
    write_report(options)

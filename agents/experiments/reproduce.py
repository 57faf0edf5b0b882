"""The paper's comparison (Figure 4) at any preset, from training to the report
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
import json
from pathlib import Path
from typing import Optional

from keras_simplicial.agents.experiments.findings import AGENTS, findings
from keras_simplicial.agents.experiments.report import render
from keras_simplicial.agents.experiments.sweep import sweep_run_dir, train_or_resume
from keras_simplicial.agents.experiments.throughput import measured_throughput
from keras_simplicial.agents.training.run_arguments import (
    DEFAULT_NUM_ENV_RUNNERS,
    DEFAULT_NUM_ENVS_PER_ENV_RUNNER,
    RunArguments,
)


@dataclasses.dataclass(frozen=True)
class ReproduceOptions:
    """What the comparison trains and reports (the options of `keras-simplicial reproduce`).

    Both agents train the preset's recipe unchanged but for its learning-rate schedule, which is
    stretched to end at `stop_timesteps` (`config`); the batched sampler, seed per run.
    """

    preset: str = "bridge-small"
    seeds: tuple = (1, 2, 3)
    stop_timesteps: int = 3_000_000
    out: str = "benchmarks/results/bridge-small"
    doc: str = "docs/reproduction.md"
    figures: str = "docs/figures/reproduction"
    eval_episodes: int = 1000
    probe_episodes: int = 1000
    report_only: bool = False
    address: Optional[str] = None
    num_env_runners: int = DEFAULT_NUM_ENV_RUNNERS
    num_envs: int = DEFAULT_NUM_ENVS_PER_ENV_RUNNER
    checkpoint_every: int = 5
    throughput_seconds: float = 60.0

    def __post_init__(self):
        from keras_simplicial.agents.training.impala import PRESETS

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

    @property
    def config(self):
        """The IMPALA overrides on top of the preset's: its schedule stretched to the run."""
        from keras_simplicial.agents.training.impala import PRESETS, lr_schedule_over

        schedule = lr_schedule_over(PRESETS[self.preset], self.stop_timesteps)
        return {"lr_schedule": schedule} if schedule else {}

    @property
    def model_config(self):
        """The architecture overrides: none, the preset's agents as they are."""
        return {}

    def run_arguments(self, agent, seed):
        """The `RunArguments` of one run of the comparison."""
        return RunArguments.from_preset(
            self.preset,
            agent,
            config=self.config,
            model_config=self.model_config,
            seed=seed,
            num_env_runners=self.num_env_runners,
            num_envs_per_env_runner=self.num_envs,
        )


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
        seconds=options.throughput_seconds,
        address=options.address,
        num_env_runners=options.num_env_runners,
        num_envs=options.num_envs,
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
    from keras_simplicial.agents.training.run_directory import atomic_write_text

    found = findings(options, run_dirs(options), throughput(options))
    atomic_write_text(options.doc, render(options, found))
    data = {
        "options": {**dataclasses.asdict(options), "config": options.config},
        "runs": {
            f"{a}-seed{s}": {k: v for k, v in r.items() if k != "best_sampled_report"}
            for (a, s), r in found.runs.items()
        },
        "comparisons": {k: c.to_json() for k, c in found.comparisons.items()},
        "random_policy_win_rate": found.random_rate,
        "throughput": found.throughput,
        "time_factor": found.time_factor,
    }
    atomic_write_text(
        Path(options.out) / "reproduction.json", json.dumps(data, indent=2, default=str)
    )
    print(f"Wrote {options.doc} and its figures in {options.figures}")


def reproduce(options):
    """Phase 1 (unless `options.report_only`), then phase 2."""
    if not options.report_only:
        train_all(options)
    write_report(options)

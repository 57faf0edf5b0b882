"""The paper's comparison (Figure 4) at a scale one machine can run, from training to the report.

    make reproduce-small            # = .venv/bin/python benchmarks/reproduce_small.py
    .venv/bin/python benchmarks/reproduce_small.py --report-only   # redraw from the runs alone

Phase 1 trains the relational and the simplicial agent on `--preset` (default `bridge-small`,
agents/training/impala.py) for every `--seeds` to `--stop-timesteps`, one run at a time, in
`<out>/<agent>-seed<k>`; a run directory that holds a run is resumed, one that is complete is
left alone, so the command can run over several sittings (Ctrl-C checkpoints and stops it).
Each run directory is kept small enough to commit (the default `--out` is tracked by git, so the
report can be re-computed and the runs resumed from a clone): once a run stops, only its latest
and its best checkpoint stay, and TensorBoard events and plots are ignored.

Phase 2 reads the run directories and nothing else and writes `--doc` (docs/reproduction.md) with
its figures in `--figures`:
- the learning curves as in Figure 4 (mean and standard deviation per agent), Figures 5-6 (one
  panel per run) and Appendix C's time-adjusted axis (steps scaled by the frames/s ratio of the
  two agents trained back to back on one machine, `<out>/throughput.json`: the runs' own
  frames/s come from sittings on machines that name themselves alike and differ 2x);
- the set-up, with every way it differs from the paper's (board, puzzles, architecture, recipe,
  actors), read from the preset, Table 1 (`PAPER_IMPALA_HYPERPARAMETERS`) and the architecture's
  defaults;
- per run: steps to a sustained 0.5 / 0.9 of the training win rate (the first step from which the
  next `SUSTAIN_WINDOW` steps average at least that), the mean training win rate over the last
  tenth of the run, and the best and final checkpoints played on `--eval-episodes` fresh
  episodes, greedily and sampling (cached in the run directory);
- the comparison: simplicial minus relational over seeds, with the exact permutation p-value (a
  bootstrap 95% interval only from 5 seeds per agent; agents/analysis/comparison.py);
- per-puzzle-type win rates of the best checkpoints as in Figures 10-11, and why their lost
  episodes ended (opened the bridge, opened another wrong box, out of steps);
- the logic probe of the best checkpoints (Section 6: bridge avoidance when the source/sink rule
  locates the bridge against when it cannot);
- attention figures of the best simplicial and relational checkpoints on one bridge episode.

The same comparison at the paper's scale (7 x 9 board, no step limit, Figure 4's four runs per
agent to 5.5e9 steps) on a Ray cluster, one run at a time using every CPU of the cluster:

    python benchmarks/reproduce_small.py --preset paper --seeds 1 2 3 4 \
        --stop-timesteps 5500000000 --address HEAD:6379 --num-env-runners 190 \
        --out runs/paper --doc runs/paper/reproduction.md --figures runs/paper/figures
"""

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import learning_curve  # noqa: E402  (benchmarks/learning_curve.py: training and evaluations)
import train_throughput  # noqa: E402  (benchmarks/train_throughput.py: frames/s of one config)

AGENTS = ("relational", "simplicial")
LATE_FRACTION = 0.1  # "late in the run": the last tenth of the steps
PLATEAU_BELOW = 0.9  # a run whose late training win rate stays below this is held at a plateau
SUSTAIN_WINDOW = 200_000  # a level is reached where the next this many steps average at least it
SUSTAINED_LEVELS = (0.5, 0.9)  # the levels whose steps the report shows
PLAN_BOARDS = 2000  # boards on which the oracle's shortest plans are measured
THROUGHPUT_FILE = "throughput.json"  # in --out: Appendix C's frames/s, both agents, one machine
ATTENTION_BOARD_SEEDS = range(100)  # where to look for a bridge episode to draw
CHURN_GAP = 0.1  # a final checkpoint this far below the run's late training win rate is named
# The paper's 2-simplicial block where PAPER_DEFAULTS (agents/model/architecture.py) deviates from
# it: unscaled 2-simplicial logits and a gain of 1 on the 2-simplicial branch.
PAPER_SIMPLICIAL_BLOCK = {"simplicial_logit_scale": None, "simplicial_gain_initializer": "ones"}
GAIN_AT_START = {"zeros": "starts at 0", "ones": "1"}  # by simplicial_gain_initializer
# The paper's actors (Section 5's hardware remark and the original code's settings).
PAPER_ACTORS = "one board per worker, 63 workers per machine, ~200 CPUs + 1 GPU learner"
RECIPE_LABELS = {
    "gamma": "discount gamma",
    "rollout_fragment_length": "unroll length (steps)",
    "entropy_coeff": "entropy bonus",
}
NOT_RECIPE = ("min_time_s_per_iteration",)  # how often a metrics row is written, not training


class Measure(NamedTuple):
    """How the agents are compared over seeds on one measure."""

    value: Callable  # of one run's record (see `findings`)
    higher_is_better: bool
    answers: str  # "early" (how early an agent learns) or "end" (where it ends)
    counts_never: bool = False  # steps to a level: a run that never got there counts as its length


def _win_rate(checkpoint, mode):
    return lambda r: r["evaluations"][checkpoint][mode]["win_rate"]


MEASURES = {
    "mean training win rate over the run": Measure(lambda r: r["whole"], True, "early"),
    "steps to a sustained training win rate of 0.9 (millions)": Measure(
        lambda r: r["steps_to_sustained_0.9"], False, "early", counts_never=True
    ),
    "steps to a sustained 0.9, time-adjusted (Appendix C; millions)": Measure(
        lambda r: r["steps_to_sustained_0.9_time_adjusted"], False, "early", counts_never=True
    ),
    "mean training win rate, last tenth of the run": Measure(lambda r: r["late"], True, "end"),
    "best checkpoint, sampled": Measure(_win_rate("best", "sampled"), True, "end"),
    "best checkpoint, greedy": Measure(_win_rate("best", "greedy"), True, "end"),
    "final checkpoint, sampled": Measure(_win_rate("final", "sampled"), True, "end"),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="bridge-small")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument(
        "--stop-timesteps",
        type=int,
        default=3_000_000,
        help="steps per run; the preset's learning-rate schedule is stretched to end there",
    )
    parser.add_argument(
        "--out",
        default="benchmarks/results/bridge-small",
        help="the run directories (the default is committed with the report)",
    )
    parser.add_argument("--doc", default="docs/reproduction.md")
    parser.add_argument("--figures", default="docs/figures/reproduction")
    parser.add_argument("--eval-episodes", type=int, default=1000)
    parser.add_argument("--probe-episodes", type=int, default=1000)
    parser.add_argument(
        "--report-only", action="store_true", help="skip training; report on the runs there"
    )
    parser.add_argument(
        "--address", default=None, help="a running Ray cluster (HOST:PORT) to train on"
    )
    parser.add_argument(
        "--num-env-runners",
        type=int,
        default=0,
        help="remote env runners (0: sample in the driver, best on 2 cores)",
    )
    parser.add_argument("--num-envs", type=int, default=64, help="boards per env runner")
    parser.add_argument("--checkpoint-every", type=int, default=5)
    parser.add_argument(
        "--throughput-seconds",
        type=float,
        default=60.0,
        help="seconds each agent trains for Appendix C's frames/s (after a warm-up of half as "
        "long, at most 20 s); measured once into <out>/throughput.json, delete it to re-measure",
    )
    args = parser.parse_args(argv)
    from keras_simplicial.agents.training.impala import PRESETS, lr_schedule_over

    if args.preset not in PRESETS:
        parser.error(f"--preset must be one of {sorted(PRESETS)}, got {args.preset!r}")
    if len(args.seeds) < 2:
        parser.error("--seeds needs at least 2 seeds per agent to compare them")
    if args.stop_timesteps <= 0:
        parser.error(
            f"--stop-timesteps must be a positive number of steps, got {args.stop_timesteps}"
        )
    if args.throughput_seconds <= 0:
        parser.error(
            f"--throughput-seconds must be a positive number of seconds, got "
            f"{args.throughput_seconds}"
        )
    # What learning_curve.train_or_resume reads besides these.
    schedule = lr_schedule_over(PRESETS[args.preset], args.stop_timesteps)
    args.config = {"lr_schedule": schedule} if schedule else {}
    args.model_config = {}
    args.sampler = "batched"
    return args


def run_dirs(args):
    """{(agent, seed): run directory}, seed by seed (both agents of a seed before the next), so a
    comparison is possible from the first sitting on."""
    return {
        (agent, seed): Path(args.out) / f"{agent}-seed{seed}"
        for seed in args.seeds
        for agent in AGENTS
    }


def train_all(args):
    import ray

    from keras_simplicial.agents.training.impala import PRESETS
    from keras_simplicial.agents.training.run_directory import RunDirectory

    preset = PRESETS[args.preset]
    for (agent, seed), run_dir in run_dirs(args).items():
        try:
            learning_curve.train_or_resume(run_dir, agent, seed, preset, args)
        finally:
            ray.shutdown()
            RunDirectory(run_dir).prune_checkpoints(keep=1)
    # After the runs, while nothing else trains: the frames/s of Appendix C.
    measured_throughput(args)


def measured_throughput(args):
    """{"machine", "frames_per_s": {agent: frames/s}, ...}: both agents of `args.preset` trained
    back to back in this process, in the runs' layout (batched sampler, `--num-env-runners`,
    `--num-envs`; seed 0), cached in `<out>/throughput.json`.

    Appendix C scales steps by a ratio of speeds, and a ratio is only meaningful within one
    machine and one sitting: the runs' own medians mix sittings (this project's runs trained the
    relational agent at 1,700 frames/s in one and 3,400 in another, on CPUs that name themselves
    alike). Measured when missing, or when the preset, the cluster or the layout differ.
    """
    import ray

    from keras_simplicial.agents.training.run_directory import atomic_write_text, this_machine
    from keras_simplicial.agents.training.train import start_ray

    path = Path(args.out) / THROUGHPUT_FILE
    setting = {
        "preset": args.preset,
        "ray": args.address or "embedded local Ray",
        "layout": {
            "sampler": "batched",
            "num_env_runners": args.num_env_runners,
            "num_envs_per_env_runner": args.num_envs,
        },
    }
    if path.exists():
        stored = json.loads(path.read_text())
        if all(stored.get(key) == value for key, value in setting.items()):
            return stored
    warmup_s = min(20.0, args.throughput_seconds / 2)
    print(
        f"Measuring Appendix C's frames/s: each agent trains {args.throughput_seconds:g} s "
        f"after {warmup_s:g} s of warm-up ({path})",
        flush=True,
    )
    start_ray(address=args.address, num_env_runners=args.num_env_runners)
    try:
        frames_per_s = {
            agent: train_throughput.measure_layout(
                args.preset,
                agent,
                sampler="batched",
                num_runners=args.num_env_runners,
                num_envs=args.num_envs,
                seconds=args.throughput_seconds,
                warmup_s=warmup_s,
            )["sampled_fps"]
            for agent in AGENTS
        }
    finally:
        ray.shutdown()
    stored = {
        **setting,
        "machine": this_machine(),
        "seconds": args.throughput_seconds,
        "warmup_s": warmup_s,
        "frames_per_s": frames_per_s,
    }
    Path(args.out).mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(stored, indent=2) + "\n")
    return stored


def cached_json(path, checkpoint, compute):
    """`compute()` of the run's `checkpoint`, stored at `path` and reused while its "checkpoint"
    entry names the same one (`learning_curve.checkpoint_key`)."""
    from keras_simplicial.agents.training.run_directory import atomic_write_text

    path, key = Path(path), learning_curve.checkpoint_key(checkpoint)
    if path.exists():
        stored = json.loads(path.read_text())
        if learning_curve.checkpoint_key(stored.get("checkpoint", "")) == key:
            return stored
    value = {**compute(), "checkpoint": key}
    atomic_write_text(path, json.dumps(value, indent=2) + "\n")
    return value


def best_sampled_report(run_dir, checkpoint, episodes):
    """The sampled evaluation report of the run's best `checkpoint`, per puzzle type and with why
    its episodes ended. learning_curve caches it once per checkpoint (as the final checkpoint's
    when the best one is the final one); a cached report from before evaluations recorded
    `ended_by` is played again through that cache."""
    key = learning_curve.checkpoint_key(checkpoint)

    def cached_as(which):
        path = Path(run_dir) / f"evaluation_{which}_sampled.json"
        return (
            path.exists()
            and learning_curve.checkpoint_key(json.loads(path.read_text())["checkpoint"]) == key
        )

    which = next((which for which in ("best", "final") if cached_as(which)), "best")
    learning_curve.evaluate_checkpoints(
        run_dir, {which: checkpoint}, episodes, record_ended_by=("sampled",)
    )
    return json.loads((Path(run_dir) / f"evaluation_{which}_sampled.json").read_text())


def win_rate_curve(run_dir):
    from keras_simplicial.agents.analysis.training_curves import load_curve

    _, steps, wins, _ = load_curve(run_dir)
    if len(steps) == 0:
        raise SystemExit(
            f"{run_dir} has no training win rate yet (no iteration had finished episodes); "
            "train it longer (a larger --stop-timesteps)."
        )
    return steps, wins


def late_win_rate(run_dir):
    """The training win rate averaged over the last `LATE_FRACTION` of the run's steps."""
    from keras_simplicial.agents.analysis.comparison import mean_win_rate_between

    steps, wins = win_rate_curve(run_dir)
    end = float(steps[-1])
    return mean_win_rate_between(steps, wins, end * (1 - LATE_FRACTION), end)


def whole_run_win_rate(run_dir):
    """The training win rate averaged over the whole run (the area under Figure 4's curve
    divided by the run's steps): how early an agent learns, not only where it ends."""
    from keras_simplicial.agents.analysis.comparison import mean_win_rate_between

    steps, wins = win_rate_curve(run_dir)
    return mean_win_rate_between(steps, wins, 0.0, float(steps[-1]))


def sustained_steps(run_dir):
    """{level: the first step from which the run's training win rate averaged over the next
    `SUSTAIN_WINDOW` environment steps is at least the level, or None} for `SUSTAINED_LEVELS`."""
    from keras_simplicial.agents.analysis.comparison import first_sustained_step

    steps, wins = win_rate_curve(run_dir)
    return {
        str(level): first_sustained_step(steps, wins, level, SUSTAIN_WINDOW)
        for level in SUSTAINED_LEVELS
    }


def training_minutes(run_dir):
    """(wall-clock minutes the run trained, summed over its sittings; the sittings): metrics.csv's
    `time_s` restarts with each process that resumed the run."""
    from keras_simplicial.agents.training.run_directory import RunDirectory

    total, previous, sittings = 0.0, 0.0, 1
    for row in RunDirectory(run_dir).read_metrics():
        time_s = float(row["time_s"])
        if time_s < previous:
            total, sittings = total + previous, sittings + 1
        previous = time_s
    return (total + previous) / 60, sittings


def probe(run_dir, checkpoint, episodes, env_id, env_config):
    from keras_simplicial.agents.analysis.logic_probe import logic_probe
    from keras_simplicial.agents.training.checkpoints import load_attention_agent

    def compute():
        agent, _ = load_attention_agent(checkpoint)
        return logic_probe(agent, env_id, env_config, episodes=episodes, seed=0).to_json()

    return cached_json(Path(run_dir) / "probe_best.json", checkpoint, compute)


def attention_figures(checkpoint, out_dir, prefix):
    """Figures of the first won bridge episode (greedy) of `checkpoint`, named
    `<prefix>_<figure>.png` (the README links them); (board seed, episode record, paths)."""
    from keras_simplicial.agents.analysis.attention_figures import save_figures
    from keras_simplicial.agents.analysis.episode import play_episode
    from keras_simplicial.agents.training.checkpoints import load_attention_agent

    agent, arguments = load_attention_agent(checkpoint)
    chosen = None
    for board in ATTENTION_BOARD_SEEDS:
        record = play_episode(agent, arguments.env, arguments.env_config, seed=board, greedy=True)
        if record.has_bridge and record.outcome() == "won":
            chosen = (board, record)
            break
        chosen = chosen or (board, record)
    board, record = chosen
    paths = save_figures(record, out_dir)
    named = []
    for path in paths:
        target = Path(out_dir) / f"{prefix}_{Path(path).name.split('_', 2)[2]}"
        Path(path).replace(target)
        named.append(target)
    return board, record, named


def number(value):
    """A hyperparameter as the report writes it: `1,280`, `0.0005`, `5e-5`, or JSON."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"`{json.dumps(value)}`"
    return f"{value:,}" if isinstance(value, int) else f"{value:g}".replace("e-0", "e-")


def entity_count(env_id, env_config):
    """N, the entities the agents' block attends over: the board's observation after the
    convolutions (the "entities" layer of `build_agent_model`)."""
    import gymnasium as gym

    from keras_simplicial.agents.model.architecture import build_agent_model

    env = gym.make(env_id, **env_config)
    model = build_agent_model("relational", env.observation_space.shape, env.action_space.n)
    return int(model.get_layer("entities").output.shape[1])


def shortest_plan_lengths(env_id, env_config, boards=PLAN_BOARDS):
    """(mean, longest) steps of the oracle's shortest plan (`keras_simplicial.envs.oracle`) on the
    boards of `reset(seed=k)`, k < `boards`."""
    import gymnasium as gym

    from keras_simplicial.envs.oracle import plan_actions

    env = gym.make(env_id, **env_config).unwrapped
    lengths = []
    for seed in range(boards):
        env.reset(seed=seed)
        lengths.append(len(plan_actions(env)))
    return sum(lengths) / len(lengths), max(lengths)


def puzzle_setting(env_id, env_config):
    """{what: how} of the puzzles of `env_id` with `env_config`, the paper's defaults filled in
    (`BoxWorldConfig`)."""
    import gymnasium as gym

    from keras_simplicial.envs import BoxWorldConfig

    config = BoxWorldConfig.create(gym.spec(env_id).kwargs["mode"], **env_config)
    lengths = sorted({config.min_solution_length, config.max_solution_length})
    distractors = sorted({config.min_distractors, config.max_distractors})
    return {
        "environment": f"`{env_id}`",
        "board": f"{config.rows} x {config.cols}, N = {entity_count(env_id, env_config)} entities",
        "solution lengths": "-".join(map(str, lengths)),
        "bridges": f"in {config.bridge_probability:.0%} of the episodes",
        "distractors": "-".join(map(str, distractors)),
        "colours": str(config.num_colours),
        "start": "random" if config.random_start else "fixed",
        "episode limit": f"{config.max_steps} steps" if config.max_steps else "none",
    }


def puzzle_deviations(preset):
    """[(what, these runs, the paper)] where `preset`'s puzzles differ from the paper's; a step
    limit is given with the oracle's shortest plans beside it."""
    from keras_simplicial.agents.training.impala import PRESETS

    paper = PRESETS["paper"]
    ours = puzzle_setting(preset["env"], preset["env_config"])
    theirs = puzzle_setting(paper["env"], paper["env_config"])
    if ours["episode limit"] != theirs["episode limit"]:
        mean, longest = shortest_plan_lengths(preset["env"], preset["env_config"])
        ours["episode limit"] += (
            f" (shortest plans: {mean:.1f} steps on average, at most {longest}, on "
            f"{PLAN_BOARDS:,} boards)"
        )
    return [(what, ours[what], theirs[what]) for what in ours if ours[what] != theirs[what]]


def simplicial_block(params):
    """{what: how} of the 2-simplicial block of the architecture hyperparameters `params`."""
    from keras_simplicial.simplicial_attention import resolve_logit_scale

    value = params["simplicial_logit_scale"]
    scale = resolve_logit_scale(value, params["simplicial_key_dim"], 2)
    scaled = f"scaled by 1/{1 / scale:.4g} (`simplicial_logit_scale={json.dumps(value)}`" + (
        ": simplicial_key_dim^-1)" if value == "auto" else ")"
    )
    gain = params["simplicial_gain_initializer"]
    return {
        "2-simplicial logits": "unscaled" if value is None else scaled,
        "gain on the 2-simplicial branch": GAIN_AT_START[gain]
        + (f' (`simplicial_gain_initializer="{gain}"`)' if gain != "ones" else ""),
    }


def architecture_deviations(model_config):
    """[(what, these runs, the paper)] where the simplicial agent of `model_config` (on
    PAPER_DEFAULTS) differs from the paper's; any other key of `model_config` is named too."""
    from keras_simplicial.agents.model.architecture import PAPER_DEFAULTS, agent_hyperparameters

    ours = agent_hyperparameters("simplicial", **model_config)
    paper = {**PAPER_DEFAULTS, **PAPER_SIMPLICIAL_BLOCK}
    rows = [
        (what, mine, theirs)
        for (what, mine), theirs in zip(
            simplicial_block(ours).items(), simplicial_block(paper).values()
        )
        if mine != theirs
    ]
    return rows + [
        (f"`{key}`", number(ours[key]), number(paper[key]))
        for key in PAPER_DEFAULTS
        if key not in PAPER_SIMPLICIAL_BLOCK and ours[key] != paper[key]
    ]


def impala_setting(overrides, keys):
    """{key: value} of IMPALA as `impala_config` trains it: `overrides` on Table 1's
    hyperparameters, RLlib's defaults for the rest."""
    from ray.rllib.algorithms.impala import IMPALAConfig

    from keras_simplicial.agents.training.impala import PAPER_IMPALA_HYPERPARAMETERS

    defaults, merged = IMPALAConfig(), {**PAPER_IMPALA_HYPERPARAMETERS, **overrides}
    return {key: merged[key] if key in merged else getattr(defaults, key) for key in keys}


def learning_rate(setting):
    """The optimiser and its learning rate, constant or a linear schedule over steps."""
    optimiser = {"rmsprop": "RMSProp", "adam": "Adam"}.get(setting["opt_type"], setting["opt_type"])
    schedule = setting["lr_schedule"]
    if not schedule:
        return f"{optimiser}, {number(setting['lr'])} constant"
    points = " to ".join(f"{number(lr)} at step {step:,}" for step, lr in schedule)
    return f"{optimiser}, {points}, linear in between"


def batches(setting):
    """The train batch and how many times each is trained on."""
    epochs = setting["num_epochs"]
    times = f"each trained on {epochs} times (`num_epochs`)" if epochs > 1 else "trained on once"
    return f"{number(setting['train_batch_size'])} steps, {times}"


def recipe_deviations(overrides):
    """([(what, these runs, the paper)] where IMPALA with `overrides` differs from Table 1,
    [(key, value)] of Table 1's hyperparameters it keeps)."""
    from keras_simplicial.agents.training.impala import PAPER_IMPALA_HYPERPARAMETERS

    keys = (
        set(PAPER_IMPALA_HYPERPARAMETERS) | set(overrides) | {"num_epochs", "lr_schedule"}
    ) - set(NOT_RECIPE)
    ours, paper = impala_setting(overrides, keys), impala_setting({}, keys)
    combined = {
        "optimiser, learning rate": (learning_rate, {"opt_type", "lr", "lr_schedule"}),
        "batch": (batches, {"train_batch_size", "num_epochs"}),
    }
    rows = [
        (what, describe(ours), describe(paper))
        for what, (describe, _) in combined.items()
        if describe(ours) != describe(paper)
    ]
    alone = sorted(keys - set().union(*(used for _, used in combined.values())))
    rows += [
        (RECIPE_LABELS.get(key, f"`{key}`"), number(ours[key]), number(paper[key]))
        for key in alone
        if ours[key] != paper[key]
    ]
    kept = [
        (key, ours[key])
        for key in alone
        if key in PAPER_IMPALA_HYPERPARAMETERS and ours[key] == paper[key]
    ]
    return rows, kept


def actors(args, machines):
    """Where the runs sampled their episodes: the layout and the machines they trained on."""
    layout = (
        f"{args.num_envs} boards sampled in the learner's process"
        if args.num_env_runners == 0
        else f"{args.num_env_runners} env runners of {args.num_envs} boards each"
    )
    return f"{layout}, on {', '.join(sorted(machines))} (CPU model x logical CPUs)"


def paper_deviations(args, preset, machines):
    """Every way these runs differ from the paper's, the same for both agents: ([(what, these
    runs, the paper)], Table 1's hyperparameters kept as [(key, value)])."""
    from keras_simplicial.agents.training.impala import preset_overrides

    recipe, kept = recipe_deviations(preset_overrides(preset, args.config))
    rows = (
        puzzle_deviations(preset)
        + architecture_deviations(args.model_config)
        + recipe
        + [("actors", actors(args, machines), PAPER_ACTORS)]
    )
    return rows, kept


def lost_outcomes():
    """The ways an episode ends lost: `OUTCOMES` but "won"."""
    from keras_simplicial.envs import OUTCOMES

    return tuple(outcome for outcome in OUTCOMES if outcome != "won")


def loss_causes(reports):
    """{agent: {puzzle type: {lost outcome: share of the type's episodes that ended so, the mean
    over the agent's reports}}} for the lost outcomes of `OUTCOMES`."""
    import numpy as np

    from keras_simplicial.agents.analysis.win_rate_figures import parse_puzzle_type

    shares = {}
    for report in reports:
        for name, entry in report["per_puzzle_type"].items():
            if entry.get("episodes", 0) == 0:
                continue
            by_outcome = shares.setdefault(report["agent"], {}).setdefault(
                parse_puzzle_type(name), {}
            )
            for outcome in lost_outcomes():
                by_outcome.setdefault(outcome, []).append(entry["ended_by"][outcome])
    return {
        agent: {
            puzzle_type: {outcome: float(np.mean(v)) for outcome, v in by_outcome.items()}
            for puzzle_type, by_outcome in sorted(by_type.items())
        }
        for agent, by_type in sorted(shares.items())
    }


@dataclass
class Findings:
    """What the report shows, every field computed from the run directories by `findings`."""

    preset: dict
    deviations: list  # [(what, these runs, the paper)]: `paper_deviations`
    kept_from_table_1: list  # [(IMPALA hyperparameter, value)] the runs share with the paper
    runs: dict  # {(agent, seed): one run's record, see `findings`}
    comparisons: dict  # {measure: agents.analysis.comparison result}, simplicial vs relational
    per_type: dict  # {agent: {puzzle type: (mean, std, rates)}} of the best checkpoints, sampled
    loss_causes: dict  # {agent: {puzzle type: {lost outcome: mean share}}}: `loss_causes`
    random_rate: float  # a uniformly random policy's win rate on the preset's puzzles
    time_factor: dict  # {agent: Appendix C's factor on its steps}
    throughput: dict  # `measured_throughput`: the frames/s behind time_factor and their machine
    curve_paths: dict  # {"figure4" | "per_run" | "time_adjusted": figure path}
    per_type_path: Path
    attention: dict  # {agent: (seed, board seed, episode record, figure paths)}


def findings(args):
    """Evaluate, probe and draw every run of `args` (cached evaluations are reused)."""
    from keras_simplicial.agents.analysis.comparison import compare_seeds
    from keras_simplicial.agents.analysis.training_curves import (
        appendix_c_factors,
        plot_training_curves,
    )
    from keras_simplicial.agents.analysis.win_rate_figures import (
        per_type_statistics,
        plot_per_type_win_rates,
    )
    from keras_simplicial.agents.training.impala import PRESETS
    from keras_simplicial.agents.training.run_directory import RunDirectory

    preset = PRESETS[args.preset]
    figures = Path(args.figures)
    figures.mkdir(parents=True, exist_ok=True)
    dirs = {key: d for key, d in run_dirs(args).items() if RunDirectory(d).metrics_file.exists()}
    missing = sorted(set(run_dirs(args)) - set(dirs))
    if missing:
        raise SystemExit(f"No run yet for {missing}; run without --report-only first.")

    curve_paths = {
        "figure4": figures / "learning_curves.png",
        "per_run": figures / "learning_curves_per_run.png",
        "time_adjusted": figures / "learning_curves_time_adjusted.png",
    }
    ordered = [str(d) for d in dirs.values()]
    throughput = measured_throughput(args)
    plot_training_curves(ordered, curve_paths["figure4"], seed_lines=True)
    plot_training_curves(ordered, curve_paths["per_run"], per_run_panels=True)
    plot_training_curves(
        ordered,
        curve_paths["time_adjusted"],
        time_adjusted=True,
        frames_per_s=throughput["frames_per_s"],
    )

    runs = {}
    for (agent, seed), run_dir in dirs.items():
        summary = learning_curve.summarise(run_dir)
        sustained = sustained_steps(run_dir)
        evaluations = learning_curve.evaluate_run(run_dir, args.eval_episodes)
        best = evaluations["best"]["checkpoint"]
        reached = sustained["0.9"]
        runs[(agent, seed)] = {
            "summary": summary,
            "sustained": sustained,
            "training_minutes": training_minutes(run_dir),
            "late": late_win_rate(run_dir),
            "whole": whole_run_win_rate(run_dir),
            # A run that never sustained 0.9 counts as its length (a lower bound on its steps).
            "steps_to_sustained_0.9": (reached if reached is not None else summary["timesteps"])
            / 1e6,
            "evaluations": evaluations,
            "best_sampled_report": best_sampled_report(run_dir, best, args.eval_episodes),
            "probe": probe(run_dir, best, args.probe_episodes, preset["env"], preset["env_config"]),
        }
    time_factor = appendix_c_factors(throughput["frames_per_s"])
    for (agent, _), r in runs.items():
        r["steps_to_sustained_0.9_time_adjusted"] = r["steps_to_sustained_0.9"] * time_factor[agent]

    comparisons = {}
    for name, measure in MEASURES.items():
        values = {a: [measure.value(r) for (b, _), r in runs.items() if b == a] for a in AGENTS}
        comparisons[name] = compare_seeds(
            values["relational"], values["simplicial"], higher_is_better=measure.higher_is_better
        )

    reports = [r["best_sampled_report"] for r in runs.values()]
    per_type_path = figures / "win_rate_per_puzzle_type.png"
    plot_per_type_win_rates(reports, per_type_path, title="best checkpoints, sampled")

    best_of = {}
    for agent in AGENTS:
        key = max(
            ((a, s) for a, s in runs if a == agent),
            key=lambda k: runs[k]["evaluations"]["best"]["sampled"]["win_rate"],
        )
        best_of[agent] = (key, runs[key]["evaluations"]["best"]["checkpoint"])
    attention = {
        agent: (key[1], *attention_figures(checkpoint, figures, f"{agent}_best"))
        for agent, (key, checkpoint) in best_of.items()
    }
    machines = {
        entry["machine"] for d in dirs.values() for entry in RunDirectory(d).read_machines()
    }
    deviations, kept = paper_deviations(args, preset, machines or {"unrecorded machines"})
    return Findings(
        preset=preset,
        deviations=deviations,
        kept_from_table_1=kept,
        runs=runs,
        comparisons=comparisons,
        per_type=per_type_statistics(reports),
        loss_causes=loss_causes(reports),
        random_rate=learning_curve.random_policy_win_rate(preset["env"], preset["env_config"]),
        time_factor=time_factor,
        throughput=throughput,
        curve_paths=curve_paths,
        per_type_path=per_type_path,
        attention=attention,
    )


def report(args):
    """Write `args.doc` and `<out>/reproduction.json` from the run directories."""
    from keras_simplicial.agents.training.run_directory import atomic_write_text

    found = findings(args)
    atomic_write_text(args.doc, render(args, found))
    data = {
        "args": {k: v for k, v in vars(args).items()},
        "runs": {
            f"{a}-seed{s}": {k: v for k, v in r.items() if k != "best_sampled_report"}
            for (a, s), r in found.runs.items()
        },
        "comparisons": {k: c.to_json() for k, c in found.comparisons.items()},
        "random_policy_win_rate": found.random_rate,
        "throughput": found.throughput,
        "time_factor": found.time_factor,
    }
    atomic_write_text(Path(args.out) / "reproduction.json", json.dumps(data, indent=2, default=str))
    print(f"Wrote {args.doc} and its figures in {args.figures}")


def relative(path, doc):
    return os.path.relpath(path, Path(doc).parent)


def render(args, found):
    """docs/reproduction.md: one section after the other, each from `found` alone."""
    sections = [
        setup_section(args, found),
        summary_section(found),
        curves_section(args, found),
        per_run_section(found),
        ahead_section(found),
        per_type_section(args, found),
        probe_section(found),
        attention_section(args, found),
    ]
    if args.preset != "paper":
        sections.append(scale_section(found))
    return "\n".join(line for section in sections for line in section)


def setup_section(args, found):
    preset = found.preset
    lines = [
        "# Reproduction at small scale: relational vs simplicial on a small bridge BoxWorld",
        "",
        "Generated by `make reproduce-small` (`benchmarks/reproduce_small.py`) from the run",
        f"directories in `{args.out}`; every number below is re-computed from them.",
        "",
        "## Set-up",
        "",
        f"- Preset `{args.preset}`: `{preset['env']}` with "
        f"`{json.dumps(preset['env_config'], sort_keys=True)}`; IMPALA overrides "
        f"`{json.dumps({**preset['overrides'], **args.config}, sort_keys=True)}`.",
        f"- Seeds {', '.join(map(str, args.seeds))} per agent, {args.stop_timesteps:,} "
        "environment steps per run, one run at a time.",
    ]
    unfinished = [
        f"{agent}-seed{seed} ({r['summary']['timesteps']:,} steps)"
        for (agent, seed), r in found.runs.items()
        if r["summary"]["timesteps"] < args.stop_timesteps
    ]
    if unfinished:
        lines.append(
            "- **Runs still in progress**, reported as far as they went: "
            + ", ".join(unfinished)
            + "."
        )
    lines += [
        f"- A uniformly random policy wins {found.random_rate:.3f} of the same puzzles.",
        f"- Checkpoints played on {args.eval_episodes:,} fresh episodes each way; logic probe on "
        f"{args.probe_episodes:,} episodes.",
        "",
    ]
    return lines + deviations_table(found)


def deviations_table(found):
    """Every way the runs differ from the paper's, then what of Table 1 they keep."""
    lines = [
        "How these runs differ from the paper's (read from the preset, `PRESETS` in "
        "agents/training/impala.py, Table 1's `PAPER_IMPALA_HYPERPARAMETERS` there, and "
        "`PAPER_DEFAULTS` in agents/model/architecture.py); the 2-simplicial rows concern the "
        "simplicial agent, every other row both agents alike:",
        "",
        "| | these runs | the paper |",
        "|---|---|---|",
    ]
    lines += [f"| {what} | {ours} | {paper} |" for what, ours, paper in found.deviations]
    kept = ", ".join(f"`{key}` {number(value)}" for key, value in found.kept_from_table_1)
    return lines + [
        "",
        "Everything else is the paper's: the rest of Section 5.1's architecture, and these "
        f"IMPALA settings of Table 1 and the original code: {kept}.",
        "",
    ]


def summary_section(found):
    """The answer first: how many runs of each agent solve the board, who learns faster, who
    ends stronger, and how much confidence this many seeds can give at all."""
    seeds = seed_counts(found)

    def runs_that(passes):
        return ", ".join(
            f"{agent} {sum(passes(r) for (a, _), r in found.runs.items() if a == agent)} of "
            f"{seeds[agent]}"
            for agent in AGENTS
        )

    def answering(question):
        return {
            name: c
            for name, c in found.comparisons.items()
            if name in MEASURES and MEASURES[name].answers == question
        }

    level = str(PLATEAU_BELOW)
    return [
        "## Summary",
        "",
        "- Runs that solve the board (training win rate over the last tenth of the run at least "
        f"{PLATEAU_BELOW}): {runs_that(lambda r: r['late'] >= PLATEAU_BELOW)}; that sustain "
        f"{PLATEAU_BELOW} (from some step on, the next {SUSTAIN_WINDOW:,} steps average at least "
        f"{PLATEAU_BELOW}): {runs_that(lambda r: r['sustained'][level] is not None)}; whose best "
        f"checkpoint wins at least {PLATEAU_BELOW} greedily on fresh episodes: "
        + runs_that(lambda r: r["evaluations"]["best"]["greedy"]["win_rate"] >= PLATEAU_BELOW)
        + ".",
        f"- How early they learn: {conclusion(answering('early'))}",
        f"- Where they end: {conclusion(answering('end'))}",
        f"- Confidence: {confidence(found.comparisons, seeds)} A gap that rests on one run's "
        "plateau may close or flip with more seeds.",
        "",
    ]


def seed_counts(found):
    """{agent: how many runs it has}."""
    return {agent: sum(a == agent for a, _ in found.runs) for agent in AGENTS}


def confidence(comparisons, seeds):
    """What this many seeds allow: only the permutation test calls an agent ahead, the smallest
    p-value the numbers of runs can reach, and whether a bootstrap interval is given."""
    from keras_simplicial.agents.analysis.comparison import (
        MIN_RUNS_FOR_BOOTSTRAP,
        SIGNIFICANCE_LEVEL,
    )

    smallest = min((c.min_p_value for c in comparisons.values()), default=1.0)
    hopeless = not any(c.can_be_significant for c in comparisons.values())
    text = (
        "only the exact permutation test over seeds calls an agent ahead (two-sided p at most "
        f"{SIGNIFICANCE_LEVEL}). With {' v '.join(str(seeds[a]) for a in AGENTS)} seeds the "
        f"smallest attainable p is {smallest:.2f}, reached only when every run of one agent beats "
        "every run of the other" + (", so no difference can be significant." if hopeless else ".")
    )
    if min(seeds.values()) < MIN_RUNS_FOR_BOOTSTRAP:
        text += (
            f" Below {MIN_RUNS_FOR_BOOTSTRAP} seeds per agent no bootstrap interval is given: "
            "resampling so few runs gives an interval about half as wide as an honest one."
        )
    return text


def curves_section(args, found):
    paths, factor, measured = found.curve_paths, found.time_factor, found.throughput
    speed = measured["frames_per_s"]
    return [
        "## Learning curves (Figures 4-6, Appendix C)",
        "",
        f"![mean and standard deviation per agent]({relative(paths['figure4'], args.doc)})",
        "",
        f"![one panel per run]({relative(paths['per_run'], args.doc)})",
        "",
        "Time-adjusted (Appendix C): frames/s of both agents trained back to back on one "
        f"machine ({measured['machine']}, {measured['ray']}, {measured['seconds']:g} s each, "
        f"`{relative(Path(args.out) / THROUGHPUT_FILE, args.doc)}`): "
        + ", ".join(f"{agent} {speed[agent]:,.0f}" for agent in sorted(speed))
        + " (the runs' own frames/s in the table below come from several sittings and are not "
        "compared); the slower agent's steps are multiplied by "
        + ", ".join(f"{factor[a]:.2f} ({a})" for a in sorted(factor) if factor[a] != 1.0)
        + " (the paper: 1.9/1.4 = 1.36 on its cluster).",
        "",
        f"![time-adjusted]({relative(paths['time_adjusted'], args.doc)})",
        "",
    ]


def per_run_section(found):
    count = learning_curve.count
    levels = " / ".join(map(str, SUSTAINED_LEVELS))
    lines = [
        "## Per run",
        "",
        f"Steps to a sustained {levels}: the first step from which the training win rate averaged "
        f"over the next {SUSTAIN_WINDOW:,} environment steps is at least that level (never: not "
        "within the run). Frames/s: the median of the run's iterations; training time: wall "
        "clock, summed over the sittings the run was trained in (both from its metrics.csv).",
        "",
        f"| run | steps | steps to a sustained {levels} | training win rate: whole run, last "
        "tenth | best: greedy, sampled | final: greedy, sampled | frames/s | training time, "
        "minutes (sittings) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (agent, seed), r in found.runs.items():
        s, e = r["summary"], r["evaluations"]
        to = " / ".join(
            "never" if r["sustained"][str(level)] is None else count(r["sustained"][str(level)])
            for level in SUSTAINED_LEVELS
        )
        minutes, sittings = r["training_minutes"]
        lines.append(
            f"| {agent}-seed{seed} | {s['timesteps']:,} | {to} | {r['whole']:.3f}, "
            f"{r['late']:.3f} | "
            f"**{e['best']['greedy']['win_rate']:.3f}**, {e['best']['sampled']['win_rate']:.3f} | "
            f"**{e['final']['greedy']['win_rate']:.3f}**, {e['final']['sampled']['win_rate']:.3f} "
            f"| {count(s['median_frames_per_s'])} | {minutes:.0f} ({sittings}) |"
        )
    churned = [
        f"{agent}-seed{seed} (last tenth {r['late']:.3f}, final checkpoint "
        f"{r['evaluations']['final']['greedy']['win_rate']:.3f} greedy)"
        for (agent, seed), r in found.runs.items()
        if r["late"] - r["evaluations"]["final"]["greedy"]["win_rate"] > CHURN_GAP
    ]
    lines += [
        "",
        "The training win rate averages the many versions of the weights that play during an "
        "iteration (the learner updates them 15-30 times a second); a checkpoint is one of "
        "them. That is why the best checkpoint is chosen by playing it (docs/benchmarks.md, "
        '"Snapshots churn").',
    ]
    if churned:
        lines[-1] += (
            f" Final checkpoints more than {CHURN_GAP} below their run's late training win "
            "rate, one unlucky snapshot rather than a run that forgot: " + "; ".join(churned) + "."
        )
    return lines + [""]


def ahead_section(found):
    """The comparison table: every measure of `MEASURES`, simplicial minus relational."""
    level = str(PLATEAU_BELOW)
    never = {
        agent: [
            s for (a, s), r in found.runs.items() if a == agent and r["sustained"][level] is None
        ]
        for agent in AGENTS
    }
    listed = [f"{agent}-seed{seed}" for agent, seeds in never.items() for seed in seeds]
    intervals = any(c.ci95 is not None for c in found.comparisons.values())
    lines = [
        "## Which agent is ahead",
        "",
        "Simplicial minus relational, over seeds: the difference of the means and the exact "
        "permutation p-value (two-sided; in brackets the smallest these numbers of runs allow)"
        + (", with a bootstrap 95% interval" if intervals else "")
        + f". The test: {confidence(found.comparisons, seed_counts(found))} Higher is better "
        f"except for the steps to a sustained {PLATEAU_BELOW}, where a run that never sustained it "
        "counts as its length, a lower bound on the steps it needs, so those means are lower "
        "bounds too ("
        + (f"never: {', '.join(listed)}" if listed else "every run sustained it")
        + "). Time-adjusted steps are multiplied by the agent's Appendix C factor above.",
        "",
        "| measure | relational | simplicial | difference |"
        + (" 95% interval |" if intervals else "")
        + " p |",
        "|---|---|---|---|" + ("---|" if intervals else "") + "---|",
    ]
    for name, c in found.comparisons.items():
        counts_never = name in MEASURES and MEASURES[name].counts_never
        means = [
            f"{mean:.3f}"
            + (f" ({len(never[agent])} never)" if counts_never and never[agent] else "")
            for agent, mean in zip(AGENTS, (c.mean_a, c.mean_b))
        ]
        interval = f" [{c.ci95[0]:+.3f}, {c.ci95[1]:+.3f}] |" if c.ci95 is not None else " - |"
        lines.append(
            f"| {name} | {means[0]} | {means[1]} | {c.difference:+.3f} |"
            + (interval if intervals else "")
            + f" {c.p_value:.2f} ({c.min_p_value:.2f}) |"
        )
    return lines + ["", conclusion(found.comparisons), ""]


def per_type_section(args, found):
    """Figures 10-11's win rate per puzzle type, and beside it why the lost episodes ended."""
    per_type, causes, lost = found.per_type, found.loss_causes, lost_outcomes()
    lines = [
        "## Win rate per puzzle type (Figures 10-11)",
        "",
        f"Best checkpoints, sampled, on {args.eval_episodes:,} fresh episodes per run: the win "
        "rate, mean (standard deviation) over seeds, and beside it the share of the type's "
        "episodes lost each way, mean over seeds: "
        + ", ".join(f"{outcome.replace('_', ' ')}" for outcome in lost)
        + " (`ended_by` of the evaluation; one cached before evaluations recorded it is played "
        "again). Puzzle type (a, b, c): solution length a, bridge from b to c, (a, 0, 0) without "
        "a bridge (Section 6.2).",
        "",
        f"![per puzzle type]({relative(found.per_type_path, args.doc)})",
        "",
        "| puzzle type | agent | win rate | "
        + " | ".join(f"lost: {outcome.replace('_', ' ')}" for outcome in lost)
        + " |",
        "|---|---|---|" + "---|" * len(lost),
    ]
    for t in sorted({t for by_type in per_type.values() for t in by_type}):
        for agent in (a for a in per_type if t in per_type[a]):
            mean, std, _ = per_type[agent][t]
            shares = causes[agent][t]
            lines.append(
                f"| {t} | {agent} | {mean:.3f} ({std:.3f}) | "
                + " | ".join(f"{shares[outcome]:.3f}" for outcome in lost)
                + " |"
            )
    return lines + [""]


def probe_section(found):
    from keras_simplicial.agents.analysis.bridge_rule import RULE_CANNOT

    lines = [
        "## Logic probe",
        "",
        "Bridge episodes of the best checkpoints (sampled), summed over seeds, by whether the "
        "source/sink rule of Remark B.1 locates the bridge on the board the agent sees at the "
        "first moment it could open it; an agent that reasons with the rule avoids the bridge "
        "more often where the rule applies.",
        "",
        "| agent | row | episodes | bridge avoided | rate | won |",
        "|---|---|---|---|---|---|",
    ]
    for agent in AGENTS:
        rows = {}
        for (a, _), r in found.runs.items():
            if a != agent:
                continue
            for row, entry in r["probe"]["rows"].items():
                total = rows.setdefault(row, {"episodes": 0, "avoided": 0, "won": 0})
                for k in total:
                    total[k] += entry[k]
        for row, total in rows.items():
            rate = f"{total['avoided'] / total['episodes']:.3f}" if total["episodes"] else "-"
            lines.append(
                f"| {agent} | {row} | {total['episodes']} | {total['avoided']} | {rate} | "
                f"{total['won']} |"
            )
    cannot = sum(
        r["probe"]["rows"].get(RULE_CANNOT, {}).get("episodes", 0) for r in found.runs.values()
    )
    if cannot == 0:
        lines += [
            "",
            f'No episode of any run falls in the row "{RULE_CANNOT}": on these puzzles the rule '
            "finds the bridge every time the agent faces it, so the probe has no contrast and "
            "cannot tell an agent that reasons with the rule from one that has learnt to avoid "
            "the bridge by its look. The contrast needs longer solution paths, where collected "
            "keys can remove a source or a sink (the paper preset).",
        ]
    return lines + [""]


def attention_section(args, found):
    lines = ["## Attention of the trained agents (Section 6.1)", ""]
    for agent, (seed, board, record, paths) in found.attention.items():
        lines += [
            f"{agent} agent, best checkpoint of its best run (seed {seed}), greedy on the board "
            f"of seed {board}: puzzle type {record.puzzle_type}, {record.length} steps, "
            f"{record.outcome()}; the figures show its last decision.",
            "",
        ]
        lines += [f"![{path.stem}]({relative(path, args.doc)})" for path in paths]
        lines.append("")
    return lines


def plateaus(found):
    """Runs whose training win rate over their last tenth stays below `PLATEAU_BELOW`, each with
    the puzzle type its best checkpoint loses most, how those episodes were lost and its final
    checkpoint's greedy win rate: [(agent, seed, late rate, type, its rate, {lost outcome: share
    of the type's episodes, those above 0}, final greedy)]."""
    from keras_simplicial.agents.analysis.win_rate_figures import parse_puzzle_type

    held = []
    for (agent, seed), r in found.runs.items():
        if r["late"] >= PLATEAU_BELOW:
            continue
        by_type = {
            parse_puzzle_type(name): entry
            for name, entry in r["best_sampled_report"]["per_puzzle_type"].items()
            if entry.get("episodes", 0) > 0
        }
        weakest = min(by_type, key=lambda t: by_type[t]["win_rate"])
        entry = by_type[weakest]
        losses = {o: entry["ended_by"][o] for o in lost_outcomes() if entry["ended_by"][o] > 0}
        final = r["evaluations"]["final"]["greedy"]["win_rate"]
        held.append((agent, seed, r["late"], weakest, entry["win_rate"], losses, final))
    return held


def scale_section(found):
    config = found.preset.get("env_config", {})
    board = f"{config.get('rows', '?')} x {config.get('cols', '?')}"
    lengths = config.get("max_solution_length", "?")
    types = sorted({t for by_type in found.per_type.values() for t in by_type})
    held = plateaus(found)
    if held:
        listed = "; ".join(
            f"{agent}-seed{seed} at {late:.3f} (its best checkpoint wins {rate:.3f} of "
            f"{puzzle_type} puzzles, sampled"
            + "".join(f"; lost: {o.replace('_', ' ')} {share:.3f}" for o, share in losses.items())
            + f"; its final checkpoint {final:.3f} greedy"
            + (", so it left the plateau in its last steps" if final >= PLATEAU_BELOW else "")
            + ")"
            for agent, seed, late, puzzle_type, rate, losses, final in held
        )
        counts = " and ".join(
            f"{sum(a == agent for a, *_ in held)} of {sum(a == agent for a, _ in found.runs)} "
            f"{agent}"
            for agent in AGENTS
        )
        plateau = (
            f"Runs whose training win rate over the last tenth stays below {PLATEAU_BELOW}: "
            f"{listed}; {counts} runs. A run held by a bridge type looks like the paper's "
            "plateau but sits earlier: in the paper both agents climb to 0.85 by solving "
            "(1,1,2), so a run that has not solved it here is stuck before the stage where the "
            "paper's agents part, within this scale's steps."
        )
    else:
        plateau = (
            f"Every run ends above a {PLATEAU_BELOW} training win rate: at this scale neither "
            "agent is held by a puzzle type, so the comparison above is one of learning speed."
        )
    return [
        "## What this does and does not say about the paper's claim",
        "",
        f"The paper's claim is about bridge BoxWorld at full size ({paper_puzzles()}) after "
        'billions of steps: the mean training curve of four runs per agent shows "a clear '
        "advantage of the simplicial agent\" (Section 5, Figure 4). Both agents' training curves "
        "show a common plateau at 0.85, which both reach by solving the shortest bridge type "
        '(1,1,2) (Section 6.2, "The plateau"), so the advantage lies in the mean curve beyond '
        "that plateau, on the other puzzle types; the paper's text does not say which of them "
        f"either agent goes on to solve. This comparison plays a {board} board with solution "
        f"lengths up to {lengths} (puzzle types "
        + (", ".join(map(str, types)) or "-")
        + ") and a horizon of "
        f"{config.get('max_steps', 'no limit')} steps, for a tiny fraction of the paper's steps "
        "on the machine named in the set-up. With solution length 1 it covers only the stage "
        "both agents passed in the paper: it says which agent learns the short bridge puzzles "
        "sooner and more reliably at this size, over these seeds; it can neither confirm nor "
        "refute that the simplicial agent's mean curve pulls ahead beyond the plateau, which "
        "needs the longer bridge types and the paper's scale (the cluster command in the README).",
        "",
        plateau,
        "",
    ]


def paper_puzzles():
    """The paper's bridge BoxWorld in a few words (the `paper` preset's puzzles)."""
    import gymnasium as gym

    from keras_simplicial.agents.training.impala import PRESETS
    from keras_simplicial.envs import BoxWorldConfig

    paper = PRESETS["paper"]
    config = BoxWorldConfig.create(gym.spec(paper["env"]).kwargs["mode"], **paper["env_config"])
    limit = f"at most {config.max_steps} steps" if config.max_steps else "no step limit"
    return (
        f"{config.rows} x {config.cols}, solution lengths {config.min_solution_length}-"
        f"{config.max_solution_length}, {limit}"
    )


def conclusion(comparisons):
    """One sentence per measure, from the numbers. Only the permutation test calls an agent
    ahead (p at most `SIGNIFICANCE_LEVEL`); where every run of one agent beats every run of the
    other but there are too few runs for that p-value, the sentence says so and gives no lead."""
    sentences = []
    for name, c in comparisons.items():
        interval = f"95% interval [{c.ci95[0]:+.3f}, {c.ci95[1]:+.3f}], " if c.ci95 else ""
        numbers = f"difference {c.difference:+.3f}, {interval}p = {c.p_value:.2f}"
        better = "simplicial" if c.leader == "b" else "relational"
        if c.significant:
            sentences.append(
                f"On the {name}, the {better} agent is ahead by {abs(c.difference):.3f} "
                f"({numbers})."
            )
        elif c.separated:
            sentences.append(
                f"On the {name}, every {better} run is better than every other run, which with "
                f"{len(c.a)} v {len(c.b)} seeds is not significant ({numbers}, the smallest p "
                "these runs allow)."
            )
        else:
            sentences.append(f"On the {name}, neither agent is ahead ({numbers}).")
    return " ".join(sentences)


def main(argv=None):
    args = parse_args(argv)
    try:
        if not args.report_only:
            train_all(args)
        report(args)
    except (ValueError, FileNotFoundError) as error:  # e.g. a damaged checkpoint, named
        if os.environ.get("KERAS_SIMPLICIAL_DEBUG"):
            raise
        print(f"reproduce_small: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

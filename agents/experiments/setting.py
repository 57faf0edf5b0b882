"""How a comparison's runs are set up, and every way that set-up differs from the paper's: the
puzzles, the policy's moves, the 2-simplicial block, the IMPALA recipe and the actors, each read
from the runs' own run.json files, Table 1 (`PAPER_IMPALA_HYPERPARAMETERS`) and the
architecture's defaults (`PAPER_DEFAULTS`), never retyped.

    runs = {name: RunArguments.read(run_json) for name, run_json in ...}
    rows, kept = paper_deviations(options, machines, runs)
    # rows: [(what, these runs, the paper)]; kept: [(Table 1 key, value)] the runs share

The rows describe what the runs trained with, not what a new run would: a run keeps the
gradient clipping it started with when it resumes, and a run given `--env-config` or
`--mask-blocked-moves` is described with them. Runs of one comparison share their puzzles,
policy and architecture (`shared_setting`); their IMPALA recipes may differ, a row then naming
each value with its runs.
"""

import dataclasses
import json

from keras_simplicial.agents.training.run_arguments import CLIP_EACH_VARIABLE

PLAN_BOARDS = 2000  # boards on which the oracle's shortest plans are measured
# The paper's 2-simplicial block where PAPER_DEFAULTS (agents/model/architecture.py) deviates from
# it: unscaled 2-simplicial logits and a gain of 1 on the 2-simplicial branch.
PAPER_SIMPLICIAL_BLOCK = {"simplicial_logit_scale": None, "simplicial_gain_initializer": "ones"}

GAIN_AT_START = {"zeros": "starts at 0", "ones": "1"}  # by simplicial_gain_initializer
# The paper's actors (Section 5's hardware remark and the original code's settings).
PAPER_ACTORS = "one board per worker, 63 workers per machine, ~200 CPUs + 1 GPU learner"
# The policy's moves: the paper's agent chooses among all four, whatever the board blocks.
PAPER_POLICY = "any of the 4 moves"
MASKED_POLICY = "only the moves the board lets through (`--mask-blocked-moves`)"

RECIPE_LABELS = {
    "gamma": "discount gamma",
    "rollout_fragment_length": "unroll length (steps)",
    "entropy_coeff": "entropy bonus",
}

NOT_RECIPE = ("min_time_s_per_iteration",)  # how often a metrics row is written, not training


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


def puzzle_config(env_id, env_config):
    """The `BoxWorldConfig` of `env_id` with `env_config`: its mode's defaults filled in."""
    import gymnasium as gym

    from keras_simplicial.envs import BoxWorldConfig

    return BoxWorldConfig.create(gym.spec(env_id).kwargs["mode"], **env_config)


def puzzle_setting(env_id, env_config):
    """{what: how} of the puzzles of `env_id` with `env_config`, the paper's defaults filled in
    (`BoxWorldConfig`)."""
    config = puzzle_config(env_id, env_config)
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
        "a move the board blocks": f"rewarded {config.blocked_move_reward:g}"
        if config.blocked_move_reward
        else "no cost",
    }


def puzzle_deviations(env_id, env_config):
    """[(what, these runs, the paper)] where the puzzles of `env_id` with `env_config` differ
    from the paper's; a step limit is given with the oracle's shortest plans beside it."""
    from keras_simplicial.agents.training.presets import PRESETS

    paper = PRESETS["paper"]
    ours = puzzle_setting(env_id, env_config)
    theirs = puzzle_setting(paper["env"], paper["env_config"])
    if ours["episode limit"] != theirs["episode limit"]:
        mean, longest = shortest_plan_lengths(env_id, env_config)
        ours["episode limit"] += (
            f" (shortest plans: {mean:.1f} steps on average, at most {longest}, on "
            f"{PLAN_BOARDS:,} boards)"
        )
    return [(what, ours[what], theirs[what]) for what in ours if ours[what] != theirs[what]]


def policy_deviations(mask_blocked_moves):
    """[(what, these runs, the paper)] of the policy's moves: a row when the runs mask out the
    moves the board blocks (`RunArguments.mask_blocked_moves`)."""
    return [("policy", MASKED_POLICY, PAPER_POLICY)] if mask_blocked_moves else []


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
        if key not in PAPER_SIMPLICIAL_BLOCK and as_json(ours[key]) != as_json(paper[key])
    ]


def as_json(value):
    """`value` as run.json holds it: a tuple of the defaults (`(12, 24)`) is a list there."""
    return list(value) if isinstance(value, tuple) else value


def impala_setting(overrides, keys):
    """{key: value} of IMPALA as `impala_config` trains it: `overrides` on Table 1's
    hyperparameters, RLlib's defaults for the rest."""
    import tensorflow  # noqa: F401  (before RLlib: see agents/__init__.py)
    from ray.rllib.algorithms.impala import IMPALAConfig

    from keras_simplicial.agents.training.presets import PAPER_IMPALA_HYPERPARAMETERS

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


def gradient_clipping(setting):
    """What the gradient is clipped to: each tensor's norm or the global norm, or nothing."""
    if setting["grad_clip"] is None:
        return "none"
    what = "each gradient tensor's norm" if setting[CLIP_EACH_VARIABLE] else "the global norm"
    return f"{what} to {number(setting['grad_clip'])}"


def recipe_deviations(overrides):
    """([(what, these runs, the paper)] where IMPALA with `overrides` differs from Table 1,
    [(key, value)] of Table 1's hyperparameters it keeps)."""
    from keras_simplicial.agents.training.presets import PAPER_IMPALA_HYPERPARAMETERS

    keys = (
        set(PAPER_IMPALA_HYPERPARAMETERS) | set(overrides) | {"num_epochs", "lr_schedule"}
    ) - set(NOT_RECIPE)
    ours, paper = impala_setting(overrides, keys), impala_setting({}, keys)
    combined = {
        "optimiser, learning rate": (learning_rate, {"opt_type", "lr", "lr_schedule"}),
        "batch": (batches, {"train_batch_size", "num_epochs"}),
        "gradient clipping": (gradient_clipping, {"grad_clip", CLIP_EACH_VARIABLE}),
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
    if gradient_clipping(ours) == gradient_clipping(paper):
        kept = sorted(kept + [("grad_clip", ours["grad_clip"])])
    return rows, kept


def actors(options, machines):
    """Where the runs sampled their episodes: the layout and the machines they trained on."""
    runners, boards = options.arguments.num_env_runners, options.arguments.num_envs_per_env_runner
    layout = (
        f"{boards} boards sampled in the learner's process"
        if runners == 0
        else f"{runners} env runners of {boards} boards each"
    )
    return f"{layout}, on {', '.join(sorted(machines))} (CPU model x logical CPUs)"


def runs_recipe_deviations(trained_with):
    """`recipe_deviations` of runs that may differ: `trained_with` is {run name: its IMPALA
    overrides}. Where the runs differ, a row gives each value with the runs that trained with it
    (`value (run, run); value (run)`), and only what all of them share counts as kept."""
    groups = {}
    for name, overrides in trained_with.items():
        groups.setdefault(json.dumps(overrides, sort_keys=True), []).append(name)
    results = [(names, recipe_deviations(json.loads(key))) for key, names in groups.items()]
    if len(results) == 1:
        return results[0][1]
    paper, order = {}, []
    for _, (rows, _) in results:
        for what, _, theirs in rows:
            if what not in paper:
                paper[what] = theirs
                order.append(what)
    merged = []
    for what in order:
        values = {}
        for names, (rows, _) in results:
            ours = {row[0]: row[1] for row in rows}.get(what, paper[what])
            values.setdefault(ours, []).extend(names)
        ours = "; ".join(f"{value} ({', '.join(sorted(names))})" for value, names in values.items())
        merged.append((what, next(iter(values)) if len(values) == 1 else ours, paper[what]))
    shared = set.intersection(*(set(kept) for _, (_, kept) in results))
    return merged, sorted(shared)


@dataclasses.dataclass(frozen=True)
class SharedSetting:
    """What every run of a comparison has in common: its puzzles, its policy's moves and its
    architecture (the `RunArguments` fields of the same names)."""

    env: str
    env_config: dict
    mask_blocked_moves: bool
    architecture: dict

    @classmethod
    def of(cls, arguments):
        return cls(
            arguments.env,
            dict(arguments.env_config),
            arguments.mask_blocked_moves,
            arguments.architecture,
        )

    def key(self):
        """What two settings are compared by: the puzzles as `BoxWorldConfig` fills them in (so
        `{}` and `{"random_start": false}` are the same puzzles), the mask and the
        architecture."""
        config = puzzle_config(self.env, self.env_config)
        return json.dumps(
            [self.env, config.to_kwargs(), self.mask_blocked_moves, self.architecture],
            sort_keys=True,
        )


def shared_setting(runs):
    """The `SharedSetting` of the runs `runs` ({run name: RunArguments}); a `ValueError` that
    names the runs and what differs when they do not share one (agents compared on other
    puzzles, or with another policy, are not compared)."""
    groups = {}
    for name, arguments in runs.items():
        setting = SharedSetting.of(arguments)
        groups.setdefault(setting.key(), (setting, []))[1].append(name)
    if len(groups) != 1:
        described = "; ".join(
            f"{', '.join(sorted(names))}: {json.dumps(dataclasses.asdict(setting), sort_keys=True)}"
            for setting, names in groups.values()
        )
        raise ValueError(
            "the runs of a comparison must share env, env_config, mask_blocked_moves and the "
            f"architecture (their run.json files), got {described}."
        )
    return next(iter(groups.values()))[0]


def paper_deviations(options, machines, runs=None):
    """Every way these runs differ from the paper's, the same for both agents: ([(what, these
    runs, the paper)], Table 1's hyperparameters kept as [(key, value)]).

    `runs` ({run name: the `RunArguments` of its run.json}) is what the rows describe (their
    `shared_setting`, and each run's IMPALA overrides); without it, what `options` would train
    now.
    """
    if runs:
        setting = shared_setting(runs)
        recipe, kept = runs_recipe_deviations(
            {name: arguments.overrides for name, arguments in runs.items()}
        )
    else:
        setting = SharedSetting.of(options.arguments)
        recipe, kept = recipe_deviations(options.arguments.overrides)
    rows = (
        puzzle_deviations(setting.env, setting.env_config)
        + policy_deviations(setting.mask_blocked_moves)
        + architecture_deviations(setting.architecture)
        + recipe
        + [("actors", actors(options, machines), PAPER_ACTORS)]
    )
    return rows, kept


def paper_puzzles():
    """The paper's bridge BoxWorld in a few words (the `paper` preset's puzzles)."""
    from keras_simplicial.agents.training.presets import PRESETS

    paper = PRESETS["paper"]
    config = puzzle_config(paper["env"], paper["env_config"])
    limit = f"at most {config.max_steps} steps" if config.max_steps else "no step limit"
    return (
        f"{config.rows} x {config.cols}, solution lengths {config.min_solution_length}-"
        f"{config.max_solution_length}, {limit}"
    )

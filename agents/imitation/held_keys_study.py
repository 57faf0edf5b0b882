"""The held-keys study's plan (studies/held-keys/): every run its plans fix, in one place.

The settings below are fixed by the study's plans, each written and committed before its runs
(pilot-plan.md, ladder-plan.md, second-pilot-plan.md, comparison-plan.md); the study's run.py
trains `planned_runs()`, and its report.py and diagnose.py read the same settings from here.
"""

from keras_simplicial.agents.imitation.held_keys_budget import BudgetRun

# ---------------------------------------------------------- fixed by pilot-plan.md (section 2)
SEED = 1  # not 0, the seed of the earlier probe's runs (benchmarks/results/held-keys/)
TRAIN_SIZE = 32_000
TEST_SIZE = 1_000
EVAL_EVERY = 500
MODELS = (("relational", None), ("simplicial", "zeros"), ("simplicial", "ones"))
# The rung, its cap of updates: the probe itself, then the ladder's two easier views.
RUNGS = (("board", 8_000), ("locks-marked", 3_000), ("gem-locks-only", 3_000))
# ---------------------------------------------------------- fixed by ladder-plan.md (section 3)
# The second stage: the rung, the learning rate, the cap of updates.
SECOND_STAGE = (
    ("colours-one-hot", 3e-4, 4_000),
    ("gem-locks-only", 1e-3, 4_000),
    ("gem-locks-only", 3e-5, 4_000),
)
# ------------------------------------------------------ fixed by second-pilot-plan.md (section 2)
# The third stage: the board at the learning rate that left the flat start.
THIRD_STAGE = (
    ("board", 3e-5, 20_000),
    ("locks-marked", 3e-5, 8_000),
    ("gem-locks-only", 1e-5, 8_000),
)
# ------------------------------------------------------- fixed by comparison-plan.md (section 2)
# The comparison: every model on the board at this rate and cap, on seeds the pilots never used.
COMPARISON_SEEDS = (2, 3, 4, 5, 6)
COMPARISON_RATE = 3e-5
COMPARISON_CAP = 20_000


def planned_runs(comparison=True):
    """Every run of the plans: the pilot, the ladder's stages, the second pilot and (unless
    `comparison` is false) the comparison of comparison-plan.md."""
    stages = [(rung, 3e-4, cap) for rung, cap in RUNGS] + [*SECOND_STAGE, *THIRD_STAGE]
    runs = [
        BudgetRun(
            agent=agent,
            gain=gain,
            rung=rung,
            train_size=TRAIN_SIZE,
            max_updates=cap,
            learning_rate=learning_rate,
            eval_every=EVAL_EVERY,
            test_size=TEST_SIZE,
            seed=SEED,
        )
        for rung, learning_rate, cap in stages
        for agent, gain in MODELS
    ]
    if comparison:
        runs += [
            BudgetRun(
                agent=agent,
                gain=gain,
                rung="board",
                train_size=TRAIN_SIZE,
                max_updates=COMPARISON_CAP,
                learning_rate=COMPARISON_RATE,
                eval_every=EVAL_EVERY,
                test_size=TEST_SIZE,
                seed=seed,
            )
            for seed in COMPARISON_SEEDS
            for agent, gain in MODELS
        ]
    return runs

"""What DAgger costs beside its model: training and labelling against the bare model (issue 31).

Two ratios, both measured in this one process on bridge-medium boards (7 x 6, lengths 1-2):

- **training**: labelled moves per second of DAgger's epoch (`dagger._epoch`: shuffling, gathering
  minibatches of uint8 states from the labelled set, the set loss, Adam) against the bare
  model's forward + backward samples per second on one fixed minibatch of the same size (the
  same compiled step, no data handling). Timed alternately so that machine load hits both alike.
  Aim: at least 0.8.
- **labelling**: the step-optimal oracle's share of a round: building its table for every board
  and looking up every state's optimal actions, against the whole round (the learner playing
  the boards, the labelling, and the round's training epochs). Aim: at most a tenth.

    .venv/bin/python benchmarks/dagger_cost.py [--agent relational] [--boards 500] [--epochs 3]
"""

import argparse
import os
import platform
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

import keras_simplicial.agents  # noqa: E402, F401  (TensorFlow set up before Keras)
from keras_simplicial.agents.imitation import dagger  # noqa: E402
from keras_simplicial.agents.imitation.labelled_play import (  # noqa: E402
    learner_moves,
    oracle_moves,
    play_labelled,
)
from keras_simplicial.envs import make_vector_env  # noqa: E402
from keras_simplicial.envs.step_oracle import StepOracle  # noqa: E402


def labelling_seconds(env_id, env_config, episodes):
    """Seconds the oracle alone takes for `episodes`: a table per board, a look-up per state."""
    core = make_vector_env(env_id, 1, env_config).core
    from gymnasium.utils import seeding

    offsets = np.concatenate([[0], np.cumsum(episodes.lengths)])
    total = 0.0
    for episode, seed in enumerate(episodes.seeds):
        core.seed(0, seeding.np_random(int(seed))[0])
        core.reset_boards([0])
        started = time.perf_counter()
        oracle = StepOracle(core, 0)
        total += time.perf_counter() - started
        for t in range(offsets[episode], offsets[episode + 1]):
            core.step(np.asarray([episodes.actions[t]]), autoreset=False)
            started = time.perf_counter()
            oracle.optimal_actions(core, 0)
            total += time.perf_counter() - started
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agent", default="relational", choices=("relational", "simplicial"))
    parser.add_argument("--boards", type=int, default=500, help="boards per round")
    parser.add_argument("--epochs", type=int, default=3, help="epochs per round")
    parser.add_argument("--repeats", type=int, default=3, help="alternating timings")
    args = parser.parse_args()

    config = dagger.DaggerConfig(agent=args.agent, oracle_episodes=args.boards)
    env_id, env_config = config.env
    rng = np.random.default_rng(0)
    episodes = play_labelled(
        oracle_moves(rng), env_id, env_config, np.arange(args.boards), horizon=config.horizon
    )
    learner = dagger.Learner(config, episodes.observations.shape[1:])
    state = {"learning_rate": config.learning_rate}
    batch = config.batch_size
    fixed = (episodes.observations[:batch], episodes.labels[:batch])
    dagger._epoch(learner, episodes, config, state, rng)  # compiles the step
    usable = len(episodes) - len(episodes) % batch
    epoch_rates, bare_rates = [], []
    for _ in range(args.repeats):
        started = time.perf_counter()
        dagger._epoch(learner, episodes, config, state, rng)
        epoch_rates.append(usable / (time.perf_counter() - started))
        started = time.perf_counter()
        for _ in range(usable // batch):
            learner.train_step(*fixed)
        np.asarray(learner.train_step(*fixed)[0])
        bare_rates.append((usable + batch) / (time.perf_counter() - started))
    epoch_rate, bare_rate = float(np.median(epoch_rates)), float(np.median(bare_rates))

    # One learner round: play (greedy and sampled, labels included), then train on everything.
    started = time.perf_counter()
    rounds = []
    for player in ("greedy", "sampled"):
        rounds.append(
            play_labelled(
                learner_moves(learner.logits, player == "greedy", rng),
                env_id,
                env_config,
                10_000 + np.arange(args.boards // 2),
                horizon=config.horizon,
                player=player,
                end_at_repeat=player == "greedy",
            )
        )
    collected = time.perf_counter() - started
    new = rounds[0].extend(rounds[1])
    data = episodes.extend(new)
    started = time.perf_counter()
    for _ in range(args.epochs):
        dagger._epoch(learner, data, config, state, rng)
    trained = time.perf_counter() - started
    labelling = sum(labelling_seconds(env_id, env_config, part) for part in rounds)
    round_seconds = collected + trained

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(f"{args.agent} agent, bridge-medium, minibatch {batch}")
    print(
        f"training: DAgger epoch {epoch_rate:,.0f} labelled moves/s, bare model "
        f"{bare_rate:,.0f} samples/s forward+backward: ratio {epoch_rate / bare_rate:.2f}"
    )
    print(
        f"a round of {args.boards} boards ({len(new):,} new moves, {len(data):,} in all, "
        f"{args.epochs} epochs): {round_seconds:.1f} s = playing and labelling {collected:.1f} s "
        f"+ training {trained:.1f} s; the oracle's share {labelling:.2f} s = "
        f"{labelling / round_seconds:.3f} of the round"
    )


if __name__ == "__main__":
    main()

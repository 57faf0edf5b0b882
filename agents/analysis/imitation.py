"""Can the agent represent the solution? It imitates the shortest-plan player, supervised.

    result = imitation_check("relational", "BridgeBoxWorld-v0", env_config, episodes=4000)
    print(result.to_markdown())

When reinforcement learning stalls, two causes look alike: the model cannot represent the
policy, or RL does not find it. This check removes RL: the oracle of `keras_simplicial.envs.oracle`
walks the shortest plan of each training puzzle (`plan_actions`), every observation on the way is
labelled with the oracle's action, and a freshly built agent model (`build_agent_model`, the
architecture RL trains) learns the labels by cross-entropy. The imitator then plays fresh puzzles
greedily (`episode_outcomes`: win rate and why episodes end, per puzzle type). If it solves a
puzzle type, the architecture can represent a policy that solves it, and a stall there is RL's.

The oracle's plan never opens the bridge, so on bridge puzzles the imitator learns which box not
to open from demonstrations alone; it never sees what a wrong box does.
"""

import dataclasses

import keras
import numpy as np
import tensorflow as tf

from keras_simplicial.agents.analysis.evaluation import LOOP_COLUMNS, loop_shares, summarise
from keras_simplicial.agents.analysis.results import Result, cell, markdown_table
from keras_simplicial.agents.rollout import episode_outcomes
from keras_simplicial.envs import BoxWorldEnv, episode_step_limit
from keras_simplicial.envs.oracle import plan_actions

# Board seeds: demonstrations from 0 on, held-out labels and the greedy games far from them.
DEMONSTRATION_SEED = 0
HELD_OUT_SEED = 2_000_000
GAME_SEED = 3_000_000


def demonstrations(env_id, env_config, episodes, seed=DEMONSTRATION_SEED):
    """(observations [n, R, C+1, 3] uint8, actions [n]) of the oracle walking its shortest plan
    on the boards of `reset(seed=seed + k)`, k < `episodes`."""
    import gymnasium as gym

    env = gym.make(env_id, **dict(env_config or {})).unwrapped
    if not isinstance(env, BoxWorldEnv):
        raise ValueError(f"env must be a BoxWorld id, got {env_id!r}.")
    observations, actions = [], []
    for k in range(int(episodes)):
        observation, _ = env.reset(seed=seed + k)
        for action in plan_actions(env) or []:
            observations.append(observation)
            actions.append(action)
            observation, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
    return np.stack(observations), np.asarray(actions, np.int64)


@dataclasses.dataclass
class ImitationResult(Result):
    """What the imitator learnt: label accuracy on held-out boards and its greedy games."""

    agent: str
    train_samples: int
    epochs: int
    train_accuracy: float
    held_out_accuracy: float
    games: dict  # `summarise` of the greedy games: per puzzle type, with ended_by and loops

    def to_markdown(self):
        header = ["puzzle type", "win rate", "lost: bridge", "lost: no time"] + [
            f"loops: {title}" for title in LOOP_COLUMNS.values()
        ]
        rows = []
        for name, entry in [
            *self.games["per_puzzle_type"].items(),
            ("overall", self.games["overall"]),
        ]:
            ended = entry["ended_by"]
            loops = loop_shares(entry.get("loops") or {})
            rows.append(
                [
                    name,
                    cell(entry["win_rate"]),
                    cell(ended["opened_bridge"]),
                    cell(ended["out_of_steps"]),
                ]
                + [cell(share) for share in loops.values()]
            )
        return (
            f"{self.agent} agent imitating the shortest-plan player: {self.train_samples:,} "
            f"labelled steps, {self.epochs} epochs; label accuracy: training "
            f"{self.train_accuracy:.3f}, held-out boards {self.held_out_accuracy:.3f}; "
            f"greedy games ({self.games['overall']['episodes']} fresh boards):\n\n"
            + markdown_table(header, rows)
        )


def imitation_check(
    agent,
    env_id,
    env_config=None,
    *,
    episodes=4000,
    epochs=8,
    batch_size=256,
    learning_rate=1e-3,
    games=1000,
    model_overrides=None,
    seed=0,
):
    """Trains a fresh `agent` model on the oracle's demonstrations and plays it greedily.

    Args:
        agent: "relational" or "simplicial".
        env_id, env_config: the environment (e.g. a preset's).
        episodes: demonstration boards (about 10-25 labelled steps each on bridge-medium).
        epochs, batch_size, learning_rate: Adam on the cross-entropy of the oracle's action.
        games: fresh boards the imitator then plays greedily.
        model_overrides: architecture overrides (as `--model-config`).
        seed: the model's initialisation and the shuffling.

    Returns:
        An `ImitationResult`.
    """
    from keras_simplicial.agents.model.architecture import build_agent_model
    from keras_simplicial.agents.model.model_config import split_model_config

    for name, value in (("episodes", episodes), ("epochs", epochs), ("games", games)):
        if int(value) < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    observations, actions = demonstrations(env_id, env_config, episodes)
    held_observations, held_actions = demonstrations(
        env_id, env_config, max(1, int(episodes) // 10), seed=HELD_OUT_SEED
    )
    keras.utils.set_random_seed(int(seed))
    architecture, _ = split_model_config(model_overrides)
    model = build_agent_model(agent, observations.shape[1:], 4, **architecture)
    variables = model.trainable_variables
    optimizer = keras.optimizers.Adam(learning_rate)
    optimizer.build(variables)

    @tf.function(jit_compile=True)
    def train_step(batch, labels):
        with tf.GradientTape() as tape:
            logits = model(tf.cast(batch, tf.float32))[0]
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
        gradients = tape.gradient(loss, variables)  # None for the value head: no label
        optimizer.apply_gradients(
            [(gradient, v) for gradient, v in zip(gradients, variables) if gradient is not None]
        )
        return loss

    @tf.function(jit_compile=True)
    def logits_of(batch):
        return model(tf.cast(batch, tf.float32))[0]

    rng = np.random.default_rng(seed)
    size = len(actions) - len(actions) % batch_size or len(actions)
    for _ in range(int(epochs)):
        order = rng.permutation(len(actions))[:size]
        for start in range(0, size, batch_size):
            chosen = order[start : start + batch_size]
            train_step(observations[chosen], actions[chosen])

    def accuracy(batch_observations, batch_actions):
        predicted = np.concatenate(
            [
                logits_of(batch_observations[start : start + batch_size]).numpy().argmax(-1)
                for start in range(0, len(batch_actions), batch_size)
            ]
        )
        return float(np.mean(predicted == batch_actions))

    outcomes = episode_outcomes(
        lambda batch: logits_of(batch).numpy(),
        env_id,
        env_config,
        int(games),
        num_envs=min(64, int(games)),
        seed=GAME_SEED,
        max_steps=episode_step_limit(env_config),
        greedy=True,
    )
    return ImitationResult(
        agent=agent,
        train_samples=len(actions),
        epochs=int(epochs),
        train_accuracy=accuracy(observations, actions),
        held_out_accuracy=accuracy(held_observations, held_actions),
        games=summarise(outcomes, loops=True),
    )

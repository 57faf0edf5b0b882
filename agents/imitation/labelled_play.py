"""Episodes played on fresh boards, every state labelled with the step-optimal oracle's moves.

    episodes = play_labelled(oracle_moves(rng), "BridgeBoxWorld-v0", config, seeds, horizon=100)
    episodes.observations, episodes.labels   # [T, R, C+1, 3] uint8, [T, 4] bool

A player chooses actions for a batch of boards (`oracle_moves`: a random one of the optimal
actions; `learner_moves`: a model's most probable or sampled action; `replayed_moves`: actions
recorded before); each state it reaches is labelled with the set of optimal actions of
`keras_simplicial.envs.step_oracle.StepOracle`, before the move is made. An episode ends when the
board ends it (the Gem, a wrong box), after ``horizon`` moves, or, for a greedy learner, at the
first repeated observation (a memoryless policy repeats itself from there on).

What is kept is small: the board seed and the moves of each episode. The observations and the
labels follow from them (`replay`), so a data set of a million labelled moves is a few MB.
"""

import dataclasses

import numpy as np
from gymnasium.utils import seeding

from keras_simplicial.agents.rollout import choose_actions
from keras_simplicial.envs import make_vector_env
from keras_simplicial.envs.step_oracle import StepOracle

#: How an episode was played (`LabelledEpisodes.players`): the oracle, the learner greedily, the
#: learner sampling from its policy.
PLAYERS = ("oracle", "greedy", "sampled")


@dataclasses.dataclass
class LabelledEpisodes:
    """Episodes and their labelled states, in the order the episodes were played.

    seeds: [E] int64, the board of `reset(seed=...)`; players: [E] int8, an index of `PLAYERS`;
    rounds: [E] int16, the DAgger round that added the episode; lengths: [E] int32, moves made;
    actions: [T] int8, the moves of all episodes one after another (T = lengths.sum()); and,
    not saved (`replay` recomputes them): observations [T, R, C+1, 3] uint8 (the state each move
    was chosen in) and labels [T, 4] bool (its optimal actions).
    """

    seeds: np.ndarray
    players: np.ndarray
    rounds: np.ndarray
    lengths: np.ndarray
    actions: np.ndarray
    observations: np.ndarray = None
    labels: np.ndarray = None

    @classmethod
    def empty(cls, observation_shape):
        return cls(
            np.zeros(0, np.int64),
            np.zeros(0, np.int8),
            np.zeros(0, np.int16),
            np.zeros(0, np.int32),
            np.zeros(0, np.int8),
            np.zeros((0, *observation_shape), np.uint8),
            np.zeros((0, 4), bool),
        )

    def __len__(self):
        return int(self.actions.size)

    def extend(self, other):
        """A new set: these episodes followed by `other`'s."""
        return LabelledEpisodes(
            *(
                np.concatenate([getattr(self, f.name), getattr(other, f.name)])
                for f in dataclasses.fields(self)
            )
        )

    def select(self, episodes):
        """A new set of the episodes at indices `episodes`, in that order, with their
        observations and labels where these have them."""
        episodes = np.asarray(episodes, np.int64).reshape(-1)
        offsets = np.concatenate([[0], np.cumsum(self.lengths)])
        moves = (
            np.concatenate([np.arange(offsets[e], offsets[e + 1]) for e in episodes])
            if episodes.size
            else np.zeros(0, np.int64)
        )
        return LabelledEpisodes(
            seeds=self.seeds[episodes],
            players=self.players[episodes],
            rounds=self.rounds[episodes],
            lengths=self.lengths[episodes],
            actions=self.actions[moves],
            observations=None if self.observations is None else self.observations[moves],
            labels=None if self.labels is None else self.labels[moves],
        )

    def save(self, path):
        """The episodes (not their observations or labels) as a compressed .npz."""
        np.savez_compressed(
            path,
            seeds=self.seeds,
            players=self.players,
            rounds=self.rounds,
            lengths=self.lengths,
            actions=self.actions,
        )

    @classmethod
    def load(cls, path, env_id, env_config, num_boards=64):
        """Episodes saved by `save`, with their observations and labels replayed."""
        with np.load(path) as saved:
            record = cls(**{name: saved[name] for name in saved.files})
        return replay(record, env_id, env_config, num_boards)


def oracle_moves(rng):
    """A player that takes one of the optimal actions, uniformly at random."""

    def choose(observations, labels):
        draws = rng.random(labels.shape) * labels
        return draws.argmax(axis=1)

    return choose


def learner_moves(logits_of, greedy, rng):
    """A player that takes the most probable action of `logits_of(observations)` (logits [B, 4])
    or samples one from its softmax (`rollout.choose_actions`)."""

    def choose(observations, labels):
        return choose_actions(logits_of(observations), greedy, rng)[0]

    return choose


def play_labelled(
    choose,
    env_id,
    env_config,
    seeds,
    *,
    horizon,
    player="oracle",
    round_index=0,
    end_at_repeat=False,
    num_boards=64,
    replayed=None,
):
    """Plays one episode on the board of each of `seeds` and labels every state reached.

    Args:
        choose: (observations [B, R, C+1, 3] uint8, labels [B, 4] bool) -> actions [B], for all
            `num_boards` boards at once (rows of boards without an episode are ignored), e.g.
            `oracle_moves(rng)` or `learner_moves(...)`.
        env_id, env_config: the environment.
        seeds: the boards, one episode each.
        horizon: the most moves an episode makes.
        player: one of `PLAYERS`, recorded with each episode.
        round_index: the DAgger round, recorded with each episode.
        end_at_repeat: end an episode at its first repeated observation (a greedy learner).
        num_boards: boards played at once.
        replayed: [E] arrays of moves, one per seed (`replay`); `choose` is then not called.

    Returns:
        `LabelledEpisodes` with observations and labels.
    """
    seeds = np.asarray(seeds, np.int64).reshape(-1)
    if player not in PLAYERS:
        raise ValueError(f"player must be one of {PLAYERS}, got {player!r}.")
    config = {**dict(env_config or {}), "max_steps": int(horizon)}
    num_boards = max(1, min(int(num_boards), len(seeds)))
    core = make_vector_env(env_id, num_boards, config, copy=False).core
    episode_of = np.full(num_boards, -1, np.int64)
    oracles = [None] * num_boards
    seen = [set() for _ in range(num_boards)]
    moves = [[] for _ in seeds]
    observations = [[] for _ in seeds]
    labels = [[] for _ in seeds]
    next_episode = 0

    def start(board):
        nonlocal next_episode
        if next_episode >= len(seeds):
            episode_of[board] = -1
            return
        episode_of[board] = next_episode
        core.seed(board, seeding.np_random(int(seeds[next_episode]))[0])
        core.reset_boards([board])
        oracles[board] = StepOracle(core, board)
        seen[board] = {core.obs[board].tobytes()}
        next_episode += 1

    for board in range(num_boards):
        start(board)
    all_actions = np.zeros(num_boards, np.int64)
    while (boards := np.flatnonzero(episode_of >= 0)).size:
        state = core.obs.copy()
        optimal = np.zeros((num_boards, 4), bool)
        for board in boards:
            optimal[board] = oracles[board].optimal_actions(core, board)
        if replayed is None:
            all_actions[:] = choose(state, optimal)
        else:
            for board in boards:
                episode = episode_of[board]
                all_actions[board] = replayed[episode][len(moves[episode])]
        for board in boards:
            episode = episode_of[board]
            moves[episode].append(all_actions[board])
            observations[episode].append(state[board])
            labels[episode].append(optimal[board])
        _, terminated, truncated, _ = core.step(all_actions, autoreset=False)
        for board in boards:
            episode = episode_of[board]
            ended = terminated[board] or truncated[board]
            if replayed is not None:
                ended = len(moves[episode]) == len(replayed[episode])
            elif end_at_repeat and not ended:
                observation = core.obs[board].tobytes()
                ended = observation in seen[board]
                seen[board].add(observation)
            if ended:
                start(board)
    lengths = np.asarray([len(m) for m in moves], np.int32)
    shape = core.obs.shape[1:]
    return LabelledEpisodes(
        seeds=seeds,
        players=np.full(len(seeds), PLAYERS.index(player), np.int8),
        rounds=np.full(len(seeds), int(round_index), np.int16),
        lengths=lengths,
        actions=np.asarray([a for m in moves for a in m], np.int8),
        observations=np.asarray([o for episode in observations for o in episode], np.uint8).reshape(
            -1, *shape
        ),
        labels=np.asarray([x for episode in labels for x in episode], bool).reshape(-1, 4),
    )


def replay(record, env_id, env_config, num_boards=64):
    """`record`'s episodes played again from their seeds and moves: the same episodes with their
    observations and labels."""
    offsets = np.concatenate([[0], np.cumsum(record.lengths)])
    replayed = [record.actions[offsets[e] : offsets[e + 1]] for e in range(len(record.seeds))]
    played = play_labelled(
        None,
        env_id,
        env_config,
        record.seeds,
        horizon=max(1, int(record.lengths.max(initial=1))),
        num_boards=num_boards,
        replayed=replayed,
    )
    return dataclasses.replace(record, observations=played.observations, labels=played.labels)

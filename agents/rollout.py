"""How an agent plays episodes, here and in the benchmarks: a batch of boards stepped together.

    for step in play_episodes(agent.logits, "BoxWorld-v0", env_config, episodes=1000):
        step.boards[step.ended], step.core.is_success[step.boards[step.ended]]

Evaluation, the logic probe, the recorded episodes behind the explanations and figures, and the
benchmarks all play through `play_episodes`, which settles once:

- the boards: episode k (k = 0, 1, ..., numbered as episodes start) is the board of
  `reset(seed=seed + k)`, however many boards are played at once and however long each episode
  lasts (greedy results do not depend on `num_envs`; sampled ones draw their actions in batches);
- the step limit: `keras_simplicial.envs.episode_step_limit` (the caller's `max_steps`, else the
  env's, else 500: the paper's env has none and an untrained policy may never finish);
- the actions: sampled from softmax(logits) with `numpy.random.default_rng(seed)`, or the most
  probable one (`greedy=True`); with `mask_blocked_moves=True`, as a run trained with
  `--mask-blocked-moves` plays, among the moves the board lets through only
  (`BoxWorldCore.allowed_moves`, `mask_logits`);
- the resets: a board whose episode ended keeps its final state until the consumer has seen the
  step, then starts the next episode not yet started; with none left it leaves the batch;
- cycles (`end_cycles=True`, greedy play only): the agents are memoryless and the board shows the
  whole state, so once a greedy episode meets an observation it has seen, it repeats forever. It
  is ended there as the step limit would have ended it (truncated, `core.steps` = the limit, why:
  `OUT_OF_STEPS`, or `OPENED_WRONG_BOX` where the Gem was lost), without playing the loop out: a
  greedy check of an untrained agent on an uncapped board costs a few dozen steps, not hundreds.
  What it was repeating is recorded (`Step.loops`, one of `LOOPS`): a move the board does not
  allow (one of the env's `OBSTACLES`, e.g. the Gem box's locks with one of its two keys held:
  the observation repeats at once) or a cycle of moves.
"""

import dataclasses
from typing import NamedTuple, Optional

import numpy as np
from gymnasium.utils import seeding

from keras_simplicial.envs import OBSTACLES, episode_step_limit, make_vector_env

#: What a greedy episode ended at a repeated observation was repeating: a move against one of the
#: env's `OBSTACLES` (the board did not change), or a cycle of moves ("cycle").
LOOPS = OBSTACLES + ("cycle",)


@dataclasses.dataclass
class Step:
    """One step of the boards still playing; arrays are indexed like `boards`.

    Read the state after the step, final states of ended episodes included, from `core`
    (`core.is_success[boards]`, `core.steps[boards]` (episode lengths), `core.puzzle(board)`,
    `core.held_keys(board)`, `core.opened_sequence(board)`, ...).
    """

    core: object  # the `BoxWorldCore` of all boards
    boards: np.ndarray  # [b] the boards that took this step, ascending
    episodes: np.ndarray  # [b] the episode k each of them plays
    first: np.ndarray  # [b] whether this is the first decision of that episode
    observations: np.ndarray  # [b, R, C+1, 3] uint8: what the actions were chosen on
    outputs: object  # what the policy returned for all boards (rows by board)
    probabilities: np.ndarray  # [b, A]
    actions: np.ndarray  # [b]
    rewards: np.ndarray  # [b]
    terminated: np.ndarray  # [b]
    truncated: np.ndarray  # [b]
    loops: np.ndarray = None  # [b] object: one of `LOOPS` where `end_cycles` ended the episode

    @property
    def ended(self):
        return self.terminated | self.truncated


#: The logit a blocked move is given where moves the board blocks are masked out of the policy:
#: its probability is 0 in float32 and float64, its log-probability stays finite (so an entropy
#: sum of p * log p has no 0 * inf).
BLOCKED_MOVE_LOGIT = -1e9


def mask_logits(logits, allowed):
    """`logits` [B, A] with every move not `allowed` ([B, A] bool) set to `BLOCKED_MOVE_LOGIT`."""
    return np.where(allowed, logits, BLOCKED_MOVE_LOGIT).astype(np.asarray(logits).dtype)


def choose_actions(logits, greedy, rng):
    """Greedy (argmax) or sampled actions for logits [B, A]; also the probabilities."""
    logits = np.asarray(logits, dtype=np.float64)
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=-1, keepdims=True)
    if greedy:
        return probabilities.argmax(axis=-1), probabilities
    cumulative = probabilities.cumsum(axis=-1)
    draws = rng.random((len(logits), 1))
    actions = np.minimum((draws > cumulative).sum(axis=-1), logits.shape[-1] - 1)
    return actions, probabilities


def sample_actions(logits, rng, explore=True):
    """Actions and their log-probabilities under softmax(`logits`) [B, A] (float32), drawn by
    Gumbel-max with `rng` (`numpy.random.Generator`), or the most probable (`explore=False`).

    What training acts with: the old stack's `BatchedEnvRunner` and the Keras engine
    (`keras_engine`) alike, so both sample the same actions from the same logits and generator.
    """
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    if explore:
        gumbel = -np.log(-np.log(rng.uniform(1e-12, 1.0, logits.shape)))
        chosen = np.argmax(log_probs + gumbel, axis=1)
    else:
        chosen = np.argmax(log_probs, axis=1)
    return chosen, log_probs[np.arange(len(chosen)), chosen]


def play_episodes(
    policy,
    env_id,
    env_config=None,
    *,
    episodes,
    num_envs=32,
    seed=0,
    greedy=False,
    max_steps=None,
    end_cycles=False,
    mask_blocked_moves=False,
    observe=None,
):
    """Plays `episodes` episodes with `policy`, yielding a `Step` per step of the batch.

    Args:
        policy: observations [B, R, C+1, 3] (uint8, all B boards) -> logits [B, A], or a tuple
            whose first element is the logits (e.g. `AttentionAgent`: logits, value, attention).
        env_id: the environment's id (usually the run's).
        env_config: the environment's arguments (usually the run's).
        episodes: how many episodes to play.
        num_envs: boards played at once (at most `episodes`).
        seed: the boards (episode k: `reset(seed=seed + k)`) and the sampling of actions.
        greedy: take the most probable action instead of sampling.
        max_steps: the step limit of an episode (default: the env's `max_steps`, else 500).
        end_cycles: end a greedy episode at its first repeated observation, as if it had run to
            the step limit (see above); only with `greedy=True`.
        mask_blocked_moves: choose among the moves the board lets through only (what a run
            trained with `--mask-blocked-moves` does); `Step.probabilities` are then those of
            the masked policy.
        observe: called as ``observe(core, boards)`` before each move is chosen, with the state
            it is chosen in (the `BoxWorldCore` of all boards, and those with an episode): what
            an analysis judges each move by (`analysis.learner_errors`).
    """
    episodes = int(episodes)
    if episodes < 1:
        raise ValueError(f"episodes must be a positive integer, got {episodes!r}.")
    if end_cycles and not greedy:
        raise ValueError("end_cycles=True needs greedy=True: a sampled episode does not cycle.")
    limit = episode_step_limit(env_config, max_steps)
    config = {**dict(env_config or {}), "max_steps": limit}
    num_boards = max(1, min(int(num_envs), episodes))
    core = make_vector_env(env_id, num_boards, config, copy=False).core
    rng = np.random.default_rng(seed)
    episode_of = np.full(num_boards, -1, np.int64)  # -1: no episode left for the board
    first = np.ones(num_boards, bool)
    seen = [set() for _ in range(num_boards)]  # observations of each episode (end_cycles)

    def start(boards, first_episode):
        for offset, board in enumerate(boards):
            episode_of[board] = first_episode + offset
            core.seed(board, seeding.np_random(int(seed) + first_episode + offset)[0])
        core.reset_boards(boards)
        first[boards] = True
        if end_cycles:
            for board in boards:
                seen[board] = {core.obs[board].tobytes()}

    start(np.arange(num_boards), 0)
    next_episode = num_boards
    all_actions = np.zeros(num_boards, np.int64)
    no_loops = np.full(num_boards, None, object)  # sampled play: no episode ends at a repeat
    while (boards := np.flatnonzero(episode_of >= 0)).size:
        # Every board is evaluated and stepped, also those without an episode left (their rows
        # are never looked at): one batch size, so a compiled model is compiled once.
        observations = core.obs.copy()
        if observe is not None:
            observe(core, boards)
        outputs = policy(observations)
        logits = np.asarray(outputs[0] if isinstance(outputs, tuple) else outputs)
        if mask_blocked_moves:
            logits = mask_logits(logits, core.allowed_moves())
        actions, probabilities = choose_actions(logits[boards], greedy, rng)
        all_actions[boards] = actions
        rewards, terminated, truncated, _ = core.step(all_actions, autoreset=False)
        loops = no_loops
        if end_cycles:
            loops = np.full(num_boards, None, object)
            cycling = _repeated_observations(core, boards[~(terminated | truncated)[boards]], seen)
            for board in cycling:
                stood_still = np.array_equal(core.obs[board], observations[board])
                loops[board] = core.obstacle(board, all_actions[board]) if stood_still else "cycle"
            core.truncate(cycling)
            core.steps[cycling] = limit
            truncated[cycling] = True
        step = Step(
            core,
            boards,
            episode_of[boards].copy(),
            first[boards].copy(),
            observations[boards],
            outputs,
            probabilities,
            actions,
            rewards[boards],
            terminated[boards],
            truncated[boards],
            loops[boards],
        )
        first[boards] = False
        yield step
        ended = boards[step.ended]
        restarting = ended[: max(0, episodes - next_episode)]
        episode_of[ended[len(restarting) :]] = -1
        if restarting.size:
            start(restarting, next_episode)
            next_episode += restarting.size


def _repeated_observations(core, boards, seen):
    """The `boards` whose observation is already in their episode's `seen` set (others add it)."""
    repeated = []
    for board in boards:
        observation = core.obs[board].tobytes()
        if observation in seen[board]:
            repeated.append(board)
        else:
            seen[board].add(observation)
    return np.asarray(repeated, np.int64)


class EpisodeOutcome(NamedTuple):
    """How one episode went: its puzzle type (a, b, c), whether it was won, its length in steps,
    why it ended (one of `OUTCOMES`: won, opened_bridge, opened_wrong_box, out_of_steps) and, for
    a greedy episode ended at a repeated observation, what it was repeating (one of `LOOPS`)."""

    puzzle_type: tuple
    won: bool
    length: int
    ended_by: str
    loop: Optional[str] = None


def episode_outcomes(
    logits,
    env_id,
    env_config,
    episodes,
    num_envs=32,
    seed=0,
    max_steps=None,
    greedy=False,
    mask_blocked_moves=False,
):
    """Plays `episodes` episodes; returns an `EpisodeOutcome` per episode.

    Greedy episodes end at their first repeated observation (`play_episodes(end_cycles=True)`):
    the outcome and length are those of playing on to the step limit. `mask_blocked_moves`: as in
    `play_episodes`.
    """
    results = []
    for step in play_episodes(
        logits,
        env_id,
        env_config,
        episodes=episodes,
        num_envs=num_envs,
        seed=seed,
        greedy=greedy,
        max_steps=max_steps,
        end_cycles=greedy,
        mask_blocked_moves=mask_blocked_moves,
    ):
        core = step.core
        for board, loop in zip(step.boards[step.ended], step.loops[step.ended]):
            results.append(
                EpisodeOutcome(
                    tuple(int(v) for v in core.puzzle_type[board]),
                    bool(core.is_success[board]),
                    int(core.steps[board]),
                    core.outcome(board),
                    loop,
                )
            )
    return results

"""One episode played by an agent, with everything the analysis needs recorded at every step.

    agent = AttentionAgent(model, "simplicial")
    record = play_episode(agent, seed=3)
    record.observations[t], record.actions[t], record.attention[t]   # decision t
    record.puzzle, record.opened_steps, record.proof_tree(), record.won

Decision t is taken on observation t (t = 0 is the first board of the episode); `observations` also
holds the final board, so it has one more entry than `actions`. Episodes are reproducible: the
board comes from `reset(seed=seed)` and sampled actions from `numpy.random.default_rng(seed)`.
"""

import dataclasses

import numpy as np

from keras_simplicial.agents.rollout import play_episodes
from keras_simplicial.envs import BRIDGE_BOX_WORLD_ID

ACTION_ARROWS = ("←", "↑", "→", "↓")


@dataclasses.dataclass
class EpisodeRecord:
    """What happened in one episode (see the module docstring)."""

    kind: str
    env_id: str
    env_config: dict
    seed: int
    greedy: bool
    puzzle: object  # keras_simplicial.envs.logic.Puzzle at the start
    observations: np.ndarray  # [T+1, R, C+1, 3] uint8
    actions: np.ndarray  # [T]
    rewards: np.ndarray  # [T]
    probabilities: np.ndarray  # [T, A]: the policy at each decision
    values: np.ndarray  # [T]
    attention: list  # [T] of attention.Attention (batch axis dropped), or []
    held: list  # [T+1] keys held before decision t (and at the end)
    opened: list  # [T+1] slots opened before decision t (and at the end)
    opened_steps: list  # (slot, step) of every opening, in order
    won: bool
    truncated: bool

    @property
    def length(self):
        return len(self.actions)

    @property
    def puzzle_type(self):
        return tuple(self.puzzle.puzzle_type)

    @property
    def has_bridge(self):
        return self.puzzle.mode == "bridge" and self.puzzle.puzzle_type[1] > 0

    def proof_tree(self):
        """The proof tree (Appendix B) of the boxes the agent opened, in order."""
        return self.puzzle.proof_tree([slot for slot, _ in self.opened_steps])

    def outcome(self):
        """ "won", "opened the bridge", "opened a distractor", "step limit" or "not finished"."""
        if self.won:
            return "won"
        fatal = [slot for slot, _ in self.opened_steps if self.puzzle.box(slot).fatal]
        if fatal:
            return "opened the bridge" if self.puzzle.mode == "bridge" else "opened a distractor"
        return "step limit" if self.truncated else "not finished"


def play_episode(
    agent,
    env_id=BRIDGE_BOX_WORLD_ID,
    env_config=None,
    seed=0,
    greedy=False,
    max_steps=None,
    record_attention=True,
):
    """Plays one episode with `agent` (an `AttentionAgent`) and records it.

    Args:
        env_id: the environment's id (usually the run's, from run.json).
        env_config: the environment's arguments (usually the run's).
        seed: the episode's board and the sampling of actions.
        greedy: take the most likely action instead of sampling from the policy.
        max_steps: stop after this many steps (default: env_config's `max_steps`, else 500, since
            an agent that never finishes would otherwise play forever).
        record_attention: keep the attention of every decision (False saves memory and time).
    """
    observations, actions, rewards, probabilities, values, attention = [], [], [], [], [], []
    held, opened = [()], [()]  # nothing is held or opened when an episode starts
    policy = agent if record_attention else agent.logits
    for step in play_episodes(
        policy,
        env_id,
        env_config,
        episodes=1,
        num_envs=1,
        seed=seed,
        greedy=greedy,
        max_steps=max_steps,
        mask_blocked_moves=agent.mask_blocked_moves,
    ):
        core = step.core
        if record_attention:
            _, value, scores = step.outputs
            attention.append(scores.at(0))
            values.append(float(value[0]))
        else:
            values.append(float("nan"))
        observations.append(step.observations[0])
        actions.append(int(step.actions[0]))
        rewards.append(float(step.rewards[0]))
        probabilities.append(step.probabilities[0])
        held.append(core.held_keys(0))
        opened.append(tuple(core.opened_sequence(0)))
    observations.append(core.obs[0].copy())
    opened_steps = [(slot, int(core.open_step[0, slot])) for slot in core.opened_sequence(0)]
    return EpisodeRecord(
        kind=agent.kind,
        env_id=env_id,
        env_config={**dict(env_config or {}), "max_steps": int(core.config.max_steps)},
        seed=int(seed),
        greedy=bool(greedy),
        puzzle=core.puzzle(0),
        observations=np.stack(observations),
        actions=np.array(actions),
        rewards=np.array(rewards),
        probabilities=np.stack(probabilities),
        values=np.array(values),
        attention=attention,
        held=held,
        opened=opened,
        opened_steps=opened_steps,
        won=bool(core.is_success[0]),
        truncated=bool(step.truncated[0] and not step.terminated[0]),
    )

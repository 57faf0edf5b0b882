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

ACTION_NAMES = ("left", "up", "right", "down")
ACTION_ARROWS = ("←", "↑", "→", "↓")
DEFAULT_MAX_STEPS = 500


@dataclasses.dataclass
class EpisodeRecord:
    """What happened in one episode (see the module docstring)."""

    kind: str
    env_id: str
    env_config: dict
    seed: int
    greedy: bool
    puzzle: object                 # keras_simplicial.envs.logic.Puzzle at the start
    observations: np.ndarray       # [T+1, R, C+1, 3] uint8
    actions: np.ndarray            # [T]
    rewards: np.ndarray            # [T]
    probabilities: np.ndarray      # [T, A]: the policy at each decision
    values: np.ndarray             # [T]
    attention: list                # [T] of attention.Attention (batch axis dropped), or []
    held: list                     # [T+1] keys held before decision t (and at the end)
    opened: list                   # [T+1] slots opened before decision t (and at the end)
    opened_steps: list             # (slot, step) of every opening, in order
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
        """"won", "opened the bridge", "opened a distractor", "step limit" or "not finished"."""
        if self.won:
            return "won"
        fatal = [slot for slot, _ in self.opened_steps if self.puzzle.box(slot).fatal]
        if fatal:
            return "opened the bridge" if self.puzzle.mode == "bridge" else "opened a distractor"
        return "step limit" if self.truncated else "not finished"


def make_env(env_id, env_config, render_mode=None):
    """A single (bridge) BoxWorld environment of `env_id` with `env_config`."""
    import gymnasium

    import keras_simplicial.envs  # noqa: F401  (registers the ids)

    return gymnasium.make(env_id, render_mode=render_mode, **dict(env_config or {}))


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


def play_episode(agent, env_id="BridgeBoxWorld-v0", env_config=None, seed=0, greedy=False,
                 max_steps=None, record_attention=True):
    """Plays one episode with `agent` (an `AttentionAgent`) and records it.

    Args:
        env_id, env_config: the environment (usually the run's, from run.json).
        seed: the episode's board and the sampling of actions.
        greedy: take the most likely action instead of sampling from the policy.
        max_steps: stop after this many steps (default: env_config's `max_steps`, else 500, since
            an agent that never finishes would otherwise play forever).
        record_attention: keep the attention of every decision (False saves memory and time).
    """
    config = dict(env_config or {})
    limit = int(max_steps or config.get("max_steps") or DEFAULT_MAX_STEPS)
    config["max_steps"] = limit
    env = make_env(env_id, config)
    base = env.unwrapped
    rng = np.random.default_rng(seed)
    observation, info = env.reset(seed=int(seed))
    puzzle = base.puzzle()
    observations, actions, rewards, probabilities, values, attention = [observation], [], [], [], \
        [], []
    held, opened = [base.held_keys()], [tuple(base.opened())]
    terminated = truncated = False
    while not (terminated or truncated):
        if record_attention:
            logits, value, scores = agent(observation[None])
            attention.append(scores.at(0))
        else:
            logits, value = agent.logits(observation[None]), np.array([np.nan])
        action, policy = choose_actions(logits, greedy, rng)
        observation, reward, terminated, truncated, info = env.step(int(action[0]))
        observations.append(observation)
        actions.append(int(action[0]))
        rewards.append(float(reward))
        probabilities.append(policy[0])
        values.append(float(value[0]))
        held.append(base.held_keys())
        opened.append(tuple(base.opened()))
    record = EpisodeRecord(
        kind=agent.kind, env_id=env_id, env_config=config, seed=int(seed), greedy=bool(greedy),
        puzzle=puzzle, observations=np.stack(observations), actions=np.array(actions),
        rewards=np.array(rewards), probabilities=np.stack(probabilities),
        values=np.array(values), attention=attention, held=held, opened=opened,
        opened_steps=base.opened_steps(), won=bool(info["is_success"]),
        truncated=bool(truncated and not terminated))
    env.close()
    return record

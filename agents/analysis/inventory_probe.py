"""Does the policy read its inventory? Its actions with the held keys shown, hidden and changed.

    result = inventory_probe(agent.logits, "BridgeBoxWorld-v0", env_config, episodes=200)
    print(result.to_markdown())

The inventory (the rightmost column of the observation) is the only place the held keys show, and
bridge BoxWorld's Gem box opens only with both of its lock colours held: the axiom
X1 ⊗ X2 ⊸ Gem (Section 1 of the paper). A policy that takes it for X1 ⊸ Gem walks into the Gem
box holding one of its keys, where nothing happens; a memoryless greedy policy loops there.

The probe plays `episodes` episodes (sampled by default) and keeps every distinct state in which
a key is held (and as many colours on no tile as keys held, to recolour them with: on bridge
BoxWorld's 20 colours, always). On each it compares the policy on the observation as seen with
the policy on the same observation with the inventory

- emptied (every slot shown empty), and
- recoloured (each held key shown in its own colour that is on no tile and not held),

as the mean total-variation distance between the two policies and the share of states whose most
probable action changes. A policy that reads its inventory changes; one that plans from the board
alone does not. At the states where the player stands at the Gem box's lock holding one of its
two keys it also gives the probability of walking into the lock: as seen (a policy that has the
axiom right walks away), with the inventory emptied, and with the missing key added (then walking
in wins).
"""

import dataclasses

import numpy as np

from keras_simplicial.agents.analysis.results import Result, cell, markdown_table
from keras_simplicial.agents.rollout import choose_actions, play_episodes
from keras_simplicial.envs import BRIDGE_BOX_WORLD_ID, make_vector_env
from keras_simplicial.envs.palette import EMPTY_SLOT_RGB

# Policies are evaluated on at most this many observations at once.
BATCH = 256


@dataclasses.dataclass
class InventoryProbe(Result):
    """What the policy does with the inventory as seen, emptied and recoloured."""

    episodes: int
    states: int  # states with at least one key held
    emptied: dict  # {"total_variation", "greedy_changed"}: means over `states`
    recoloured: dict
    gem_box_states: int  # at the Gem box's lock holding one of its two keys
    walks_into_gem_box: dict  # {"as_seen", "emptied", "both_keys"}: mean probability, or None

    def to_markdown(self):
        walks = self.walks_into_gem_box
        return "\n".join(
            [
                f"{self.states:,} distinct states holding a key, from {self.episodes:,} episodes:",
                "",
                markdown_table(
                    ["inventory", "policy change (TV)", "greedy action changed"],
                    [
                        [name, cell(entry["total_variation"]), cell(entry["greedy_changed"])]
                        for name, entry in (
                            ("emptied", self.emptied),
                            ("recoloured", self.recoloured),
                        )
                    ],
                ),
                "",
                f"{self.gem_box_states:,} states at the Gem box's lock holding one of its two "
                "keys: probability of walking into it",
                "",
                markdown_table(
                    ["inventory", "probability"],
                    [
                        [title, cell(walks[name])]
                        for name, title in (
                            ("as_seen", "as seen"),
                            ("emptied", "emptied"),
                            ("both_keys", "both keys held"),
                        )
                    ],
                ),
            ]
        )


@dataclasses.dataclass
class _HeldState:
    observation: np.ndarray  # [R, C+1, 3] uint8
    held: dict  # {inventory slot: colour held} (palette indices)
    free_colours: list  # colours on no tile of the board and not held
    gem_push: int  # the action into the Gem box's lock holding one of its keys, or -1
    missing: int  # that Gem box's lock colour not held, or -1


def inventory_probe(
    logits,
    env_id=BRIDGE_BOX_WORLD_ID,
    env_config=None,
    episodes=200,
    seed=0,
    num_envs=32,
    greedy=False,
    max_steps=None,
    max_states=10_000,
    mask_blocked_moves=False,
):
    """Plays `episodes` episodes with `logits` (observations -> logits [B, 4]) and probes the
    states holding a key (at most `max_states`, in the order played); see the module docstring.
    Episode k is the board of `reset(seed=seed + k)`; recolouring draws from `seed`.
    `mask_blocked_moves`: the episodes are played among the moves the board lets through only
    (an agent trained with `--mask-blocked-moves`); the probe reads the model's own logits."""
    colour_rgb = make_vector_env(env_id, 1, env_config).core.colour_rgb
    states = _held_states(
        logits,
        max_states,
        env_id=env_id,
        env_config=env_config,
        episodes=episodes,
        seed=seed,
        num_envs=num_envs,
        greedy=greedy,
        max_steps=max_steps,
        mask_blocked_moves=mask_blocked_moves,
    )
    if not states:
        raise ValueError(
            f"no state with a key held in {episodes} episodes: play more (--episodes) or longer."
        )
    rng = np.random.default_rng(seed)

    def shown(colours_of, which):
        observations = [_with_inventory(s.observation, colours_of(s), colour_rgb) for s in which]
        return _policy(logits, np.stack(observations))

    as_seen = _policy(logits, np.stack([state.observation for state in states]))
    emptied = shown(lambda state: {}, states)
    recoloured = shown(
        lambda state: dict(
            zip(state.held, rng.choice(state.free_colours, size=len(state.held), replace=False))
        ),
        states,
    )
    at_gem = [i for i, state in enumerate(states) if state.gem_push >= 0]
    pushes = np.asarray([states[i].gem_push for i in at_gem], np.int64)

    def walks_in(probabilities):
        if not at_gem:
            return None
        return round(float(probabilities[np.arange(len(at_gem)), pushes].mean()), 4)

    both_keys = (
        shown(
            lambda state: {**state.held, _first_empty(state): state.missing},
            [states[i] for i in at_gem],
        )
        if at_gem
        else None
    )

    return InventoryProbe(
        episodes=int(episodes),
        states=len(states),
        emptied=_change(as_seen, emptied),
        recoloured=_change(as_seen, recoloured),
        gem_box_states=len(at_gem),
        walks_into_gem_box={
            "as_seen": walks_in(as_seen[at_gem]),
            "emptied": walks_in(emptied[at_gem]),
            "both_keys": walks_in(both_keys),
        },
    )


def _held_states(logits, cap, **play):
    """The distinct states in which a key is held (at most `cap`) of the episodes
    `play_episodes(logits, **play)` plays."""
    states, seen = [], set()
    for step in play_episodes(logits, **play):
        core = step.core
        # After the step, a board whose episode goes on is at its next decision.
        for board in step.boards[~step.ended]:
            inventory = core.inventory[board]
            held = {slot: int(colour) for slot, colour in enumerate(inventory) if colour >= 0}
            observation = core.obs[board]
            if not held or len(states) >= cap or observation.tobytes() in seen:
                continue
            on_board = {tuple(rgb) for rgb in core.obs[board, :, :-1].reshape(-1, 3)}
            free = [
                colour
                for colour in range(core.gem)
                if colour not in held.values() and tuple(core.colour_rgb[colour]) not in on_board
            ]
            if len(free) < len(held):
                continue
            seen.add(observation.tobytes())
            gem_push = next(
                (a for a in range(4) if core.obstacle(board, a) == "gem_box_one_key"), -1
            )
            missing = -1
            if gem_push >= 0:  # the Gem box is the one box with two locks
                gem_box = int(np.flatnonzero(core.lock2[board] >= 0)[0])
                locks = (int(core.lock[board, gem_box]), int(core.lock2[board, gem_box]))
                missing = locks[0] if locks[1] in held.values() else locks[1]
            states.append(_HeldState(observation.copy(), held, free, gem_push, missing))
    return states


def _with_inventory(observation, colours, colour_rgb):
    """`observation` with its inventory column showing `colours` ({slot: palette index}) and
    every other slot empty."""
    changed = observation.copy()
    changed[:, -1] = EMPTY_SLOT_RGB
    for slot, colour in colours.items():
        changed[slot, -1] = colour_rgb[colour]
    return changed


def _first_empty(state):
    return next(slot for slot in range(len(state.observation)) if slot not in state.held)


def _policy(logits, observations):
    """softmax(logits) of `observations`, evaluated `BATCH` at a time."""
    return np.concatenate(
        [
            choose_actions(np.asarray(logits(observations[i : i + BATCH])), True, None)[1]
            for i in range(0, len(observations), BATCH)
        ]
    )


def _change(before, after):
    """Mean total-variation distance between two policies [S, 4], and the share of states whose
    most probable action differs."""
    return {
        "total_variation": round(float(0.5 * np.abs(before - after).sum(axis=1).mean()), 4),
        "greedy_changed": round(float((before.argmax(1) != after.argmax(1)).mean()), 4),
    }

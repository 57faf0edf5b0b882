"""Proofs from behaviour (Appendix B) and the source/sink logic probe (Remark B.1), on scripted
episodes whose logic is known, and the probe's bookkeeping with a freshly initialised agent."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import keras_simplicial.envs  # noqa: E402,F401  (registers the ids)
from keras_simplicial.agents.analysis.bridge_rule import (  # noqa: E402
    NEVER_FACED,
    PROBE_ROWS,
    RULE_CANNOT,
    RULE_LOCATES,
    bridge_decision,
    rule_verdict,
    visible_axioms,
)
from keras_simplicial.agents.analysis.episode import EpisodeRecord  # noqa: E402
from keras_simplicial.agents.analysis.explanations import explain_episode, format_explanation  # noqa: E402
from keras_simplicial.agents.analysis.logic_probe import logic_probe  # noqa: E402

# Seed 3 of BridgeBoxWorld-v0 is a (1, 1, 2) puzzle: Gem C6 (x) C2 |- G (slot 0), loose keys
# |- C6 (slot 1) and |- C2 (slot 4), and the bridge C6 |- C2 (slot 7).
SEED = 3


def scripted_record(slots, seed=SEED):
    """An EpisodeRecord of a player who walks to the boxes `slots` in order (oracle paths)."""
    from keras_simplicial.envs.oracle import path_to

    env = gym.make("BridgeBoxWorld-v0", max_steps=200)
    base = env.unwrapped
    observation, info = env.reset(seed=seed)
    puzzle = base.puzzle()
    observations, actions, held, opened = [observation], [], [base.held_keys()], [()]
    done = False
    for slot in slots:
        for action in path_to(base.core, 0, slot):
            observation, _, terminated, truncated, info = env.step(action)
            observations.append(observation)
            actions.append(action)
            held.append(base.held_keys())
            opened.append(tuple(base.opened()))
            done = terminated or truncated
            if done:
                break
        if done:
            break
    return EpisodeRecord(
        kind="scripted",
        env_id="BridgeBoxWorld-v0",
        env_config={},
        seed=seed,
        greedy=True,
        puzzle=puzzle,
        observations=np.stack(observations),
        actions=np.array(actions),
        rewards=np.zeros(len(actions)),
        probabilities=np.zeros((len(actions), 4)),
        values=np.zeros(len(actions)),
        attention=[],
        held=held,
        opened=opened,
        opened_steps=base.opened_steps(),
        won=bool(info["is_success"]),
        truncated=False,
    )


def test_the_scripted_puzzle_is_the_documented_one():
    record = scripted_record([])
    puzzle = record.puzzle
    assert puzzle.puzzle_type == (1, 1, 2)
    assert {box.slot: (box.locks, box.key, box.fatal) for box in puzzle.boxes} == {
        0: ((6, 2), -1, False),
        1: ((), 6, False),
        4: ((), 2, False),
        7: ((6,), 2, True),
    }


def test_opening_the_bridge_is_explained_against_the_rule():
    record = scripted_record([1, 7])
    explanation = explain_episode(record)
    assert explanation.outcome == "opened the bridge" and not record.won
    assert explanation.bridge.slot == 7 and explanation.rule_at_start.bridge.slot == 7
    decision = explanation.decision
    # The first moment the bridge can be opened is right after picking up C6.
    assert decision.step == dict(record.opened_steps)[1]
    assert decision.verdict == RULE_LOCATES and decision.opened_bridge
    text = format_explanation(explanation)
    assert "C₆ ⊢ C₂ at tile" in text and "<- bridge" in text
    assert "against the rule's conclusion" in text
    assert "does not prove the Gem" in text
    steps = [line for line in text.splitlines() if line.strip().startswith("π^")]
    assert len(steps) == 2  # pi^{|- C6} and pi^{C6 |- C2}


def test_a_won_episode_is_a_proof_of_the_gem_and_the_rule_depends_on_held_keys():
    record = scripted_record([4, 1, 0])  # C2 first, then C6, then the Gem
    assert record.won
    explanation = explain_episode(record)
    assert explanation.proof_tree.proves_gem
    text = format_explanation(explanation, "ascii")
    assert "Outcome: won; the proof proves the Gem." in text
    assert "cut" in text and "|- G" in text
    assert "did not open the bridge, as the rule concludes." in text
    # When C6 is picked up the loose key |- C2 is gone: the sink (|- C2, C6 |- C2) survives only
    # if the held key counts as the axiom |- C2.
    decision = explanation.decision
    assert decision.verdict == RULE_LOCATES and not decision.opened_bridge
    board_only = explain_episode(record, include_held=False).decision
    assert board_only.step == decision.step and board_only.verdict == RULE_CANNOT
    opened, held = record.opened[decision.step], record.held[decision.step]
    assert sorted(held) == [2, 6]
    assert any(box.slot < 0 and box.key == 2 for box in visible_axioms(record.puzzle, opened, held))
    verdict, result = rule_verdict(record.puzzle, opened, held, include_held=False)
    assert verdict == RULE_CANNOT and result.sinks == ()


def test_no_decision_when_the_bridge_never_opens():
    record = scripted_record([4])
    assert (
        bridge_decision(record.puzzle, record.opened[:-1], record.held[:-1], record.opened[-1])
        is None
    )
    assert "never faced the choice" in format_explanation(explain_episode(record))


def test_logic_probe_counts_every_bridge_episode_once():
    from keras_simplicial.agents.model.architecture import build_agent_model
    from keras_simplicial.agents.model.attention_agent import AttentionAgent

    agent = AttentionAgent(build_agent_model("relational", (7, 10, 3), 4), "relational")
    result = logic_probe(
        agent,
        env_config={"max_solution_length": 1, "max_steps": 40},
        episodes=24,
        num_envs=8,
        seed=0,
    )
    # Boards of seeds 0..23: the bridge episodes are known from the environment alone.
    expected = sum(
        gym.make("BridgeBoxWorld-v0", max_solution_length=1).reset(seed=s)[1]["puzzle_type"][1] > 0
        for s in range(24)
    )
    assert result.bridge_episodes == expected == sum(r["episodes"] for r in result.rows.values())
    for row in PROBE_ROWS:
        assert 0 <= result.rows[row]["avoided"] <= result.rows[row]["episodes"]
        assert 0 <= result.rows[row]["won"] <= result.rows[row]["episodes"]
    assert result.rows[NEVER_FACED]["avoided"] == 0
    table = result.to_markdown()
    assert all(f"| {row} |" in table for row in PROBE_ROWS) and "| 95% interval |" in table
    again = logic_probe(
        agent,
        env_config={"max_solution_length": 1, "max_steps": 40},
        episodes=24,
        num_envs=8,
        seed=0,
    )
    assert again.rows == result.rows
    as_json = result.to_dict()
    assert as_json["rows"][RULE_LOCATES]["episodes"] == result.rows[RULE_LOCATES]["episodes"]
    with pytest.raises(ValueError, match="episodes"):
        logic_probe(agent, episodes=0)

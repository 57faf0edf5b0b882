"""Logic of a puzzle (Section 1, Appendix B): axioms, solver, proof trees, source/sink rule."""

import numpy as np
import pytest

from keras_simplicial.envs import (
    GEM,
    Box,
    BoxWorldEnv,
    BoxWorldVectorEnv,
    Puzzle,
    Sequent,
    proof_tree,
    solve,
    source_sink,
)
from keras_simplicial.envs.oracle import plan_actions

# The episode of Figure 2 (puzzle type (3, 2, 5)): green g, orange o, dark green g', magenta m,
# purple p, blue b; the bridge O |- P.
g, o, g2, m, p, b = range(6)
FIGURE_2 = Puzzle(
    boxes=(
        Box(0, (g2, b), GEM),
        Box(1, (), g),
        Box(2, (g,), o),
        Box(3, (o,), g2),
        Box(4, (), m),
        Box(5, (m,), p),
        Box(6, (p,), b),
        Box(7, (o,), p, fatal=True),
    ),
    puzzle_type=(3, 2, 5),
    solution_length=3,
)
PAPER_ORDER = (1, 2, 3, 4, 5, 6, 0)


def test_gamma_prints_in_unicode_and_ascii():
    assert str(FIGURE_2.box(0).sequent) == "C₂ ⊗ C₅ ⊢ 𝔾"
    assert str(FIGURE_2.box(1).sequent) == "⊢ C₀"
    assert FIGURE_2.box(7).sequent.format("ascii") == "C1 |- C4"
    text = FIGURE_2.format_gamma("ascii")
    assert text.startswith("C2 (x) C5 |- G, |- C0, C0 |- C1") and text.endswith("|- G")
    assert FIGURE_2.box(0).sequent.format("latex") == r"C_{2} \otimes C_{5} \vdash \mathbb{G}"
    with pytest.raises(ValueError, match="style must be one of"):
        FIGURE_2.format_gamma("html")


def test_solver_finds_a_shortest_plan_and_detects_the_bridge():
    plan = FIGURE_2.solve()
    assert plan is not None and len(plan) == 7 and plan[-1] == 0 and 7 not in plan
    # After the bridge (lock O consumed, P obtained) the Gem is gone.
    assert FIGURE_2.solve(opened=(1, 2, 7), held=(p,)) is None
    # Holding O, opening O |- G' instead keeps it obtainable.
    assert FIGURE_2.solve(opened=(1, 2, 3), held=(g2,)) is not None
    # A multiset matters: two locks of the same colour need two keys.
    twin = [Box(0, (3, 3), GEM), Box(1, (), 3)]
    assert solve(twin) is None and solve(twin, held=[3]) == (1, 0)
    assert solve([], held=[GEM]) == ()


def test_proof_tree_matches_the_example_of_appendix_b():
    tree = FIGURE_2.proof_tree(PAPER_ORDER)
    premises = [str(s.premise) for s in tree.steps]
    conclusions = [str(s.conclusion) for s in tree.steps]
    assert premises == [
        "⊢ C₀",
        "C₀ ⊢ C₁",
        "C₁ ⊢ C₂",
        "C₂ ⊢ C₂ ⊗ C₃",
        "C₂ ⊗ C₃ ⊢ C₂ ⊗ C₄",
        "C₂ ⊗ C₄ ⊢ C₂ ⊗ C₅",
        "C₂ ⊗ C₅ ⊢ 𝔾",
    ]
    assert conclusions[1:] == ["⊢ C₁", "⊢ C₂", "⊢ C₂ ⊗ C₃", "⊢ C₂ ⊗ C₄", "⊢ C₂ ⊗ C₅", "⊢ 𝔾"]
    assert tree.proves_gem
    assert tree.steps[3].name() == "π^{⊢ C₃}_{C₂}"
    text = tree.format("ascii")
    assert "pi^{|- C3}_{C2}" in text and text.count("cut") == 6
    latex = tree.latex()
    assert latex.startswith(r"\begin{prooftree}") and latex.endswith(r"\end{prooftree}")
    assert latex.count(r"\BinaryInfC") == 6 and r"\pi^{\vdash C_{3}}_{C_{2}}" in latex
    assert tree.format("latex") == latex
    with pytest.raises(ValueError, match="without C₃"):
        proof_tree(FIGURE_2.boxes, (1, 5))


def test_source_sink_rule_locates_the_bridge():
    rule = FIGURE_2.source_sink()
    assert rule.bridge is not None and rule.bridge.slot == 7
    assert {(a.slot, b.slot) for a, b in rule.sources} == {(3, 7)}
    assert {(a.slot, b.slot) for a, b in rule.sinks} == {(5, 7)}
    no_bridge = source_sink(FIGURE_2.boxes[:7])
    assert no_bridge.bridge is None and not no_bridge.sources and not no_bridge.sinks
    # A source alone does not locate the bridge.
    assert source_sink([FIGURE_2.box(3), FIGURE_2.box(7)]).bridge is None


def test_source_sink_rule_on_sampled_bridge_puzzles():
    vec = BoxWorldVectorEnv(300, bridge_probability=1.0)
    vec.reset(seed=1)
    for i in range(300):
        puzzle = vec.core.puzzle(i)
        bridge = [box for box in puzzle.boxes if box.fatal]
        assert len(bridge) == 1
        assert puzzle.source_sink().bridge == bridge[0]


@pytest.mark.parametrize("mode", ["bridge", "standard"])
def test_solver_plans_win_when_walked(mode):
    env = BoxWorldEnv(mode=mode)
    for seed in range(40):
        env.reset(seed=seed)
        plan = env.plan()
        actions = plan_actions(env)
        assert actions, seed
        for k, action in enumerate(actions):
            obs, reward, terminated, truncated, info = env.step(action)
            assert info["solvable"]
            assert terminated == (k == len(actions) - 1), (seed, k)
        assert reward == 10.0 and info["is_success"]
        assert tuple(env.opened()) == plan
        tree = env.proof_tree()
        assert tree.proves_gem and len(tree.steps) == len(plan)
        assert [step for _, step in env.opened_steps()] == sorted(s for _, s in env.opened_steps())


def test_solvable_info_agrees_with_the_solver_on_random_play():
    env = BoxWorldEnv(max_solution_length=2)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(25):
        env.reset(seed=seed)
        for _ in range(600):
            _, reward, terminated, _, info = env.step(int(rng.integers(4)))
            if reward != 0:
                expected = info["is_success"] or env.plan() is not None
                assert info["solvable"] == expected
                checked += 1
            if terminated:
                break
    assert checked > 40


def test_sequent_formatting_of_the_empty_context():
    assert Sequent((), (3,)).format("ascii") == "|- C3"
    assert Sequent((1, 2), (GEM,)).format() == "C₁ ⊗ C₂ ⊢ 𝔾"

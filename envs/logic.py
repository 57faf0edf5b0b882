"""The logic of a puzzle: axioms, solver, proof trees and the source/sink rule.

Section 1 of the paper: for a colour ``c`` the proposition ``C`` reads "a key of colour c is
obtainable". Each object of an episode is an axiom (Appendix B): a loose key ``|- C``, a box locked
by ``c`` holding ``c'`` is ``C |- C'``, the two-lock Gem box is ``C (x) C' |- G``. The multiset
``Gamma`` of these axioms is what an episode shows, and a strategy for the Gem is a proof of
``Gamma |- G`` in intuitionistic linear logic.

This module is pure Python and knows nothing about boards: a `Puzzle` is a tuple of
`Box` objects. Colours are ints (palette indices); `GEM` is the Gem.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Iterable, Optional, Sequence

GEM = -1
"""The key inside the Gem box (the proposition G)."""

STYLES = ("unicode", "ascii", "latex")

_TURNSTILE = {"unicode": "⊢", "ascii": "|-", "latex": r"\vdash"}
_TENSOR = {"unicode": " ⊗ ", "ascii": " (x) ", "latex": r" \otimes "}
_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _check_style(style: str) -> None:
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")


def proposition(colour: int, style: str = "unicode") -> str:
    """The proposition of a key colour: ``C₇`` / ``C7`` / ``C_{7}``; the Gem is ``𝔾`` / ``G``."""
    _check_style(style)
    if colour == GEM:
        return {"unicode": "𝔾", "ascii": "G", "latex": r"\mathbb{G}"}[style]
    if style == "unicode":
        return "C" + str(colour).translate(_SUBSCRIPT)
    return f"C{colour}" if style == "ascii" else f"C_{{{colour}}}"


def tensor(colours: Iterable[int], style: str = "unicode") -> str:
    """The linear conjunction of ``colours`` (empty string for the empty context)."""
    return _TENSOR[style].join(proposition(c, style) for c in colours)


@dataclasses.dataclass(frozen=True)
class Sequent:
    """``antecedent |- consequent``, each side a tensor of propositions (tuples of colours)."""

    antecedent: tuple
    consequent: tuple

    def format(self, style: str = "unicode") -> str:
        _check_style(style)
        left = tensor(self.antecedent, style)
        right = tensor(self.consequent, style)
        return f"{left} {_TURNSTILE[style]} {right}" if left else f"{_TURNSTILE[style]} {right}"

    def __str__(self) -> str:
        return self.format("unicode")


@dataclasses.dataclass(frozen=True)
class Box:
    """An object of a puzzle, with the sequent ``X_beta |- Y_beta`` of Appendix B.

    ``locks`` is ``()`` for a loose key, ``(c,)`` for a box, ``(c, c')`` for the bridge-mode Gem
    box; ``key`` is the colour inside (`GEM` for the Gem box); ``fatal`` marks distractors
    and the bridge (opening it makes the Gem unobtainable); ``position`` is the (row, col) of its
    key tile.
    """

    slot: int
    locks: tuple
    key: int
    position: Optional[tuple] = None
    fatal: bool = False

    @property
    def sequent(self) -> Sequent:
        return Sequent(tuple(self.locks), (self.key,))

    @property
    def is_loose_key(self) -> bool:
        return not self.locks

    @property
    def is_gem(self) -> bool:
        return self.key == GEM

    def __str__(self) -> str:
        return str(self.sequent)


# -- solver --------------------------------------------------------------------------------------
def solve(boxes: Sequence[Box], held: Iterable[int] = ()) -> Optional[tuple]:
    """A shortest plan for the Gem: the slots of the boxes to open, in order, or ``None``.

    Breadth-first search over the sets of opened boxes (the inventory is determined by that set
    and the keys ``held`` at the start), so the plan has the fewest openings, loose keys counted.
    ``()`` means the Gem is already held.
    """
    start = collections.Counter(held)
    if start[GEM] > 0:
        return ()
    boxes = list(boxes)
    parent = {0: None}
    frontier = collections.deque([(0, start)])
    while frontier:
        mask, inventory = frontier.popleft()
        for i, box in enumerate(boxes):
            bit = 1 << i
            needed = collections.Counter(box.locks).items()
            if mask & bit or any(inventory[c] < n for c, n in needed):
                continue
            child = mask | bit
            if child in parent:
                continue
            parent[child] = (mask, i)
            if box.key == GEM:
                plan = []
                while parent[child] is not None:
                    child, j = parent[child]
                    plan.append(boxes[j].slot)
                return tuple(reversed(plan))
            after = inventory.copy()
            after.subtract(box.locks)
            after[box.key] += 1
            frontier.append((child, after))
    return None


def is_obtainable(boxes: Sequence[Box], held: Iterable[int] = ()) -> bool:
    """Whether ``Gamma, held |- G`` is provable: the Gem can still be obtained."""
    return solve(boxes, held) is not None


# -- the source/sink rule (Remark B.1) -------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SourceSink:
    """Sources (same lock colour, distinct keys), sinks (same key, distinct locks) and the bridge
    when the rule locates it (``None`` otherwise)."""

    sources: tuple
    sinks: tuple
    bridge: Optional[Box]


def source_sink(boxes: Sequence[Box]) -> SourceSink:
    """Remark B.1: if ``alpha, beta`` is a source or a sink, one of them is the bridge; a source and
    a sink together locate it. Returns the pairs and the box common to all of them, if unique."""
    boxes = list(boxes)
    sources, sinks = [], []
    for i, alpha in enumerate(boxes):
        for beta in boxes[i + 1 :]:
            if set(alpha.locks) & set(beta.locks) and alpha.key != beta.key:
                sources.append((alpha, beta))
            if alpha.key == beta.key and set(alpha.locks) != set(beta.locks):
                sinks.append((alpha, beta))
    bridge = None
    if sources and sinks:
        common = set.intersection(*({a.slot, b.slot} for a, b in sources + sinks))
        if len(common) == 1:
            slot = common.pop()
            bridge = next(box for box in boxes if box.slot == slot)
    return SourceSink(tuple(sources), tuple(sinks), bridge)


# -- proof trees (Appendix B) ----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ProofStep:
    """One opening: the proof ``pi^beta_A`` of ``A (x) X_beta |- A (x) Y_beta`` and the sequent
    ``|- A (x) Y_beta`` obtained by cutting it against the proof so far."""

    box: Box
    context: tuple  # A: the inventory not consumed by the box
    premise: Sequent
    conclusion: Sequent

    def name(self, style: str = "unicode") -> str:
        """``pi^{X |- Y}_{A}`` in the requested style."""
        box = self.box.sequent.format(style)
        context = tensor(self.context, style)
        if style == "latex":
            return rf"\pi^{{{box}}}" + (rf"_{{{context}}}" if context else "")
        pi = "π" if style == "unicode" else "pi"
        return f"{pi}^{{{box}}}" + (f"_{{{context}}}" if context else "")


@dataclasses.dataclass(frozen=True)
class ProofTree:
    """The cut sequence of Appendix B for a trajectory: ``steps[i]`` is ``pi^{beta_i}_{I_i}``."""

    held: tuple
    steps: tuple

    @property
    def conclusion(self) -> Sequent:
        return self.steps[-1].conclusion if self.steps else Sequent((), tuple(self.held))

    @property
    def proves_gem(self) -> bool:
        return GEM in self.conclusion.consequent

    def format(self, style: str = "unicode") -> str:
        """One line per proof ``pi^beta_A`` with its sequent, then the sequent after the cut."""
        if style == "latex":
            return self.latex()
        _check_style(style)
        rows = []
        for k, step in enumerate(self.steps):
            rows.append((step.name(style), step.premise.format(style)))
            if k > 0 or self.held:
                rows.append(("  cut", step.conclusion.format(style)))
        width = max((len(a) for a, _ in rows), default=0)
        return "\n".join(f"{a.ljust(width)}   {b}" for a, b in rows)

    def latex(self) -> str:
        """The tree in LaTeX ``bussproofs`` (unlabelled binary rules are cuts, as in Appendix B)."""
        lines = [r"\begin{prooftree}"]
        if self.held:
            lines.append(rf"\AxiomC{{${Sequent((), tuple(self.held)).format('latex')}$}}")
        for k, step in enumerate(self.steps):
            lines.append(rf"\AxiomC{{${step.name('latex')}$}}")
            lines.append(r"\noLine")
            lines.append(rf"\UnaryInfC{{${step.premise.format('latex')}$}}")
            if k > 0 or self.held:
                lines.append(rf"\BinaryInfC{{${step.conclusion.format('latex')}$}}")
        lines.append(r"\end{prooftree}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format("unicode")


def proof_tree(boxes: Sequence[Box], opened: Sequence[int], held: Iterable[int] = ()) -> ProofTree:
    """The proof tree of a trajectory that opened the boxes with slots ``opened`` in this order.

    The inventory ``I_i`` at each opening is replayed from ``held`` (the keys held at the start):
    a box consumes its lock colours and its key is appended. Raises ``ValueError`` if a box is
    opened without its keys.
    """
    by_slot = {box.slot: box for box in boxes}
    inventory = list(held)
    steps = []
    for slot in opened:
        if slot not in by_slot:
            raise ValueError(f"opened contains slot {slot}, not one of the boxes {sorted(by_slot)}")
        box = by_slot[slot]
        context = list(inventory)
        for colour in box.locks:
            if colour not in context:
                raise ValueError(
                    f"box {box} was opened without {proposition(colour)} "
                    f"(inventory {tensor(inventory) or 'empty'})"
                )
            context.remove(colour)
        premise = Sequent(tuple(context) + tuple(box.locks), tuple(context) + (box.key,))
        inventory = context + [box.key]
        steps.append(ProofStep(box, tuple(context), premise, Sequent((), tuple(inventory))))
    return ProofTree(tuple(held), tuple(steps))


# -- a puzzle -------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Puzzle:
    """One episode's axioms: its boxes, puzzle type (a, b, c) of Section 6 and solution length."""

    boxes: tuple
    puzzle_type: tuple
    solution_length: int
    mode: str = "bridge"

    def gamma(self) -> list:
        """``Gamma``: the sequent of every object, in slot order."""
        return [box.sequent for box in self.boxes]

    def format_gamma(self, style: str = "unicode") -> str:
        """``Gamma |- G`` as text, in slot order (the Gem box first), e.g.
        ``C₇ ⊗ C₂ ⊢ 𝔾, ⊢ C₃, C₃ ⊢ C₇, ... ⊢ 𝔾``."""
        axioms = ", ".join(s.format(style) for s in self.gamma())
        return f"{axioms} {_TURNSTILE[style]} {proposition(GEM, style)}"

    def box(self, slot: int) -> Box:
        for box in self.boxes:
            if box.slot == slot:
                return box
        raise ValueError(f"no box in slot {slot}; slots are {[b.slot for b in self.boxes]}")

    def remaining(self, opened: Iterable[int] = ()) -> tuple:
        opened = set(opened)
        return tuple(box for box in self.boxes if box.slot not in opened)

    def solve(self, opened: Iterable[int] = (), held: Iterable[int] = ()) -> Optional[tuple]:
        """Shortest plan (slots) from the state where ``opened`` are gone and ``held`` is held."""
        return solve(self.remaining(opened), held)

    def source_sink(self) -> SourceSink:
        return source_sink(self.boxes)

    def proof_tree(self, opened: Sequence[int], held: Iterable[int] = ()) -> ProofTree:
        return proof_tree(self.boxes, opened, held)

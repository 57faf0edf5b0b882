"""Valid ranges of hyperparameters, checked before anything starts.

    check_ranges({"lr": -1}, {"lr": Real(low=0, low_open=True)}, "--config")
    # ValueError: --config: lr must be a finite number > 0, got -1.

RLlib and Keras check the types and signs of few hyperparameters: a negative learning rate
trains by gradient ascent and exits 0. The tables that use these rules are
`impala.CONFIG_RANGES` (`--config`) and `architecture.MODEL_RANGES` (`--model-config`); each field
of `RunArguments` declares one too.
"""

import dataclasses
import json
import math
import numbers
from typing import Optional


@dataclasses.dataclass(frozen=True)
class Real:
    """A finite real number in [low, high] (bounds optional; `*_open` excludes the bound)."""

    low: Optional[float] = None
    high: Optional[float] = None
    low_open: bool = False
    high_open: bool = False

    def accepts(self, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        value = float(value)
        if not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        if self.high is not None and (value >= self.high if self.high_open else value > self.high):
            return False
        return True

    def describe(self):
        if self.low is not None and self.high is not None:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"a finite number in {left}{self.low:g}, {self.high:g}{right}"
        if self.low is not None:
            return f"a finite number {'>' if self.low_open else '>='} {self.low:g}"
        if self.high is not None:
            return f"a finite number {'<' if self.high_open else '<='} {self.high:g}"
        return "a finite number"


@dataclasses.dataclass(frozen=True)
class Integer:
    """An integer >= `low` (None: any integer; a float such as 2.0 is not one)."""

    low: Optional[int] = 0

    def accepts(self, value):
        return (
            not isinstance(value, bool)
            and isinstance(value, numbers.Integral)
            and (self.low is None or value >= self.low)
        )

    def describe(self):
        return "an integer" if self.low is None else f"an integer >= {self.low}"


@dataclasses.dataclass(frozen=True)
class Boolean:
    """true or false (not 0, 1 or a string)."""

    def accepts(self, value):
        return isinstance(value, bool)

    def describe(self):
        return "true or false"


@dataclasses.dataclass(frozen=True)
class OneOf:
    """One of `choices`."""

    choices: tuple

    def accepts(self, value):
        return isinstance(value, str) and value in self.choices

    def describe(self):
        return f"one of {self.choices}"


@dataclasses.dataclass(frozen=True)
class Text:
    """A non-empty string (a path, a name)."""

    def accepts(self, value):
        return isinstance(value, str) and value.strip() != ""

    def describe(self):
        return "a non-empty string"


@dataclasses.dataclass(frozen=True)
class JsonObject:
    """A JSON object: a dict with string keys."""

    def accepts(self, value):
        return isinstance(value, dict) and all(isinstance(key, str) for key in value)

    def describe(self):
        return "a JSON object (dict)"


@dataclasses.dataclass(frozen=True)
class OrNone:
    """`rule`, or None (JSON null)."""

    rule: object

    def accepts(self, value):
        return value is None or self.rule.accepts(value)

    def describe(self):
        return f"{self.rule.describe()}, or null"


@dataclasses.dataclass(frozen=True)
class Sequence:
    """A non-empty list of values that each follow `rule`."""

    rule: object

    def accepts(self, value):
        return (
            isinstance(value, (list, tuple))
            and len(value) > 0
            and all(self.rule.accepts(item) for item in value)
        )

    def describe(self):
        return f"a non-empty list, each item {self.rule.describe()}"


@dataclasses.dataclass(frozen=True)
class Schedule:
    """RLlib's piecewise-linear schedule: [[timestep, value], ...], timesteps integers >= 0 in
    ascending order, values following `value`; or None."""

    value: object

    def accepts(self, schedule):
        if schedule is None:
            return True
        if not isinstance(schedule, (list, tuple)) or not schedule:
            return False
        steps = []
        for point in schedule:
            if not isinstance(point, (list, tuple)) or len(point) != 2:
                return False
            step, value = point
            if not Integer(0).accepts(step) or not self.value.accepts(value):
                return False
            steps.append(step)
        return steps == sorted(steps)

    def describe(self):
        return (
            "null or a list of [timestep, value] pairs, timesteps integers >= 0 in ascending "
            f"order, each value {self.value.describe()}"
        )


def check_ranges(values, ranges, where):
    """Raises `ValueError` for the first entry of `values` outside its rule in `ranges` (names
    without a rule are not checked here): "<where>: <key> must be <range>, got <value>."."""
    for key, rule in ranges.items():
        if key in values and not rule.accepts(values[key]):
            raise ValueError(f"{where}: {key} must be {rule.describe()}, got {values[key]!r}.")


def parse_json_object(text, argument, accepted=""):
    """The JSON object `text` given for `argument` on the command line; a one-line ValueError
    naming `argument` (and `accepted`, what else it takes, e.g. " or one of ['paper']") when it
    is malformed or not an object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{argument} is not valid JSON ({error.msg} at position {error.pos}){accepted}: "
            f"{text!r}"
        ) from None
    if not isinstance(value, dict):
        raise ValueError(
            f"{argument} must be a JSON object like '{{\"lr\": 1e-4}}'{accepted}, got {text!r}"
        )
    return value

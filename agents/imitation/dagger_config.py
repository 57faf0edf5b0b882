"""The settings of a DAgger run (its dagger.json): plain data, read without TensorFlow.

config = DaggerConfig.from_preset(agent="simplicial", preset="bridge-medium", seed=1)
config.run_arguments()      # the model and its environment, as a training run's run.json
"""

import copy
import dataclasses

from keras_simplicial.agents.imitation.colour_permutation import AUGMENTATIONS
from keras_simplicial.agents.training.presets import PRESETS
from keras_simplicial.agents.training.run_arguments import AGENTS, RunArguments


@dataclasses.dataclass(frozen=True)
class DaggerConfig:
    """Everything a DAgger run depends on (its dagger.json).

    Attributes:
        agent: "relational" or "simplicial".
        preset: a training preset (`PRESETS`) whose environment the run uses.
        env_config: overrides of the preset's env config.
        model_overrides: architecture overrides of the agent model, on the architecture's
            defaults (`from_preset`, the command line's new run: the preset's model with
            `--model-config` over it).
        seed: the model's initialisation, the shuffling and the training boards.
        oracle_episodes: boards the oracle plays in round 0.
        rounds: learner rounds after round 0.
        episodes_per_round: boards the learner plays each round (half greedy, half sampled).
        horizon: the most moves of an episode played for labels.
        max_labelled_moves: no new round starts once this many moves are labelled.
        batch_size, learning_rate: Adam's minibatch and starting learning rate.
        min_improvement: the relative fall of an epoch's training loss below which the rate halves.
        halvings: halvings of the rate that end a round's training (the plateau).
        max_epochs: epochs of a round at most.
        held_out_episodes: boards of the held-out oracle states (accuracy on unseen boards).
        validation_episodes: validation games after each round, on the preset's puzzles and on
            its length-2 puzzles each.
        labels_from: a DAgger run directory whose labelled episodes round 0 trains on instead
            of the oracle's new ones ("": the oracle plays `oracle_episodes` boards), on the
            same environment; e.g. a fresh model on what another run has labelled.
        labels_share: the share of `labels_from`'s episodes taken, whole episodes drawn by a
            permutation fixed by `seed` (a smaller share's episodes are among a larger one's).
        augment: "none" (train on the labelled states as they are) or "colour-permutations"
            (each state of each batch with its key colours renamed by a fresh random
            permutation of the palette, which leaves its optimal moves as they are;
            `colour_permutation.permute_key_colours`).
    """

    agent: str = "relational"
    preset: str = "bridge-medium"
    env_config: dict = dataclasses.field(default_factory=dict)
    model_overrides: dict = dataclasses.field(default_factory=dict)
    seed: int = 1
    oracle_episodes: int = 2000
    rounds: int = 8
    episodes_per_round: int = 1000
    horizon: int = 100
    max_labelled_moves: int = 600_000
    batch_size: int = 256
    learning_rate: float = 1e-3
    min_improvement: float = 0.01
    halvings: int = 3
    max_epochs: int = 12
    held_out_episodes: int = 300
    validation_episodes: int = 500
    labels_from: str = ""
    labels_share: float = 1.0
    augment: str = "none"

    def __post_init__(self):
        if self.agent not in AGENTS:
            raise ValueError(f"agent must be one of {AGENTS}, got {self.agent!r}.")
        if self.preset not in PRESETS:
            raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {self.preset!r}.")
        for name in (
            "oracle_episodes",
            "episodes_per_round",
            "horizon",
            "max_labelled_moves",
            "batch_size",
            "halvings",
            "max_epochs",
            "held_out_episodes",
            "validation_episodes",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}.")
        if isinstance(self.rounds, bool) or not isinstance(self.rounds, int) or self.rounds < 0:
            raise ValueError(f"rounds must be an int >= 0, got {self.rounds!r}.")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}.")
        if not isinstance(self.labels_from, str):
            raise ValueError(f"labels_from must be a path (str), got {self.labels_from!r}.")
        if isinstance(self.labels_share, bool) or not (
            isinstance(self.labels_share, (int, float)) and 0 < self.labels_share <= 1
        ):
            raise ValueError(f"labels_share must be in (0, 1], got {self.labels_share!r}.")
        if self.labels_share != 1 and not self.labels_from:
            raise ValueError("labels_share needs labels_from: the run whose labels it shares.")
        if self.augment not in AUGMENTATIONS:
            raise ValueError(f"augment must be one of {AUGMENTATIONS}, got {self.augment!r}.")
        if not 0 <= self.min_improvement < 1:
            raise ValueError(f"min_improvement must be in [0, 1), got {self.min_improvement!r}.")

    @property
    def env(self):
        """(env id, env config) of the run: the preset's, with `env_config` on top."""
        preset = PRESETS[self.preset]
        return preset["env"], {**preset["env_config"], **self.env_config}

    def run_arguments(self):
        """The `RunArguments` that describe the model and its environment (run.json)."""
        env, env_config = self.env
        return RunArguments(
            env=env,
            agent=self.agent,
            env_config=env_config,
            model_overrides=dict(self.model_overrides),
            seed=self.seed,
        )

    @classmethod
    def from_preset(cls, **given):
        """The settings of a new run: `given` (fields; those left out take their defaults), its
        model the preset's (`PRESETS[preset]["model_overrides"]`) with `model_overrides` merged
        over it, as `RunArguments.from_preset` makes a training run's, so that the best round
        starts a training run of the same preset and model config (`--init-policy`). The
        constructor, which a dagger.json is read back with, takes `model_overrides` as they
        are, on the architecture's defaults."""
        config = cls(**given)  # the settings checked, the preset among them
        model = {**PRESETS[config.preset]["model_overrides"], **config.model_overrides}
        return dataclasses.replace(config, model_overrides=copy.deepcopy(model))

    def to_json(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, values):
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown DAgger settings {unknown}; accepted: {sorted(known)}")
        return cls(**values)

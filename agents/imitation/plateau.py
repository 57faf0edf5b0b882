"""How a supervised probe trains to a plateau (no TensorFlow here: the CLI reads its defaults)."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class PlateauSchedule:
    """Adam to a plateau: every `check_every` updates the loss on the training set (at most
    `check_size` of its examples) is measured; when it has not fallen below (1 - `min_improvement`)
    of its best for `patience` checks in a row, the learning rate halves; training stops after
    `halvings` halvings, at `max_updates`, or once the loss is below `target_loss` (the set
    memorised).

    `flat_loss`, when given, is the loss of the best constant prediction (log 2 for balanced
    binary labels). A model can sit there for thousands of updates before it starts to learn (a
    saddle, not a plateau of what it can learn), so the rule counts no plateau until the loss has
    fallen below (1 - `min_improvement`) of it. Whether a fresh model leaves that flat start at
    all is chance (the same seed left it or not with one or two CPU threads): a model still there
    after `flat_updates` updates is given up, and the caller starts a fresh one, at most
    `starts` in all."""

    # At 1e-3 four of six fresh relational models on 250 held-keys states collapsed to a constant
    # output within 1,500 updates; at 3e-4 all six (three per architecture) fitted the set.
    learning_rate: float = 3e-4
    batch_size: int = 64
    max_updates: int = 12_000
    check_every: int = 250
    check_size: int = 2_048
    patience: int = 4
    min_improvement: float = 0.02
    halvings: int = 3
    target_loss: float = 0.01
    flat_loss: float | None = None
    flat_updates: int = 1_500
    starts: int = 4

    def __post_init__(self):
        counts = ("batch_size", "max_updates", "check_every", "check_size", "patience")
        for name in counts + ("halvings", "flat_updates", "starts"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)!r}.")
        if not (0 < self.learning_rate and 0 <= self.min_improvement < 1):
            raise ValueError(
                "learning_rate must be > 0 and min_improvement in [0, 1), got "
                f"{self.learning_rate!r} and {self.min_improvement!r}."
            )

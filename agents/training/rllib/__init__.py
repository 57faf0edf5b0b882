"""The RLlib adapter's room: IMPALA on Ray RLlib's two API stacks, driven by the same loop as the
Keras engine.

trainer.py             open_rllib, RLlibTrainer: Ray started, IMPALA built and restored
results.py             RLlib's train() result as an `Iteration`, once, at the edge
impala.py              impala_config(RunArguments): the old API stack (TensorFlow); ResilientIMPALA
impala_torch.py        torch_impala_config(RunArguments): the new API stack (PyTorch)
torch_learner.py       KerasAgentIMPALALearner: the new stack's Learner with Table 1's RMSProp
new_stack.py           a new-stack algorithm's step counter and learner weights
envs.py                the env ids for RLlib, and the batched core as an RLlib VectorEnv
batched_env_runner.py  BatchedEnvRunner: an env runner stepping all its boards as one batch
callbacks.py           WinRateCallbacks: each episode's metrics as RLlib custom metrics
diagnostic_policy.py   DiagnosticImpalaTF2Policy: gradient norms per part, schedules, restores
checkpoints.py         the Keras weights and TF2 policy an RLlib checkpoint holds (pickles)

`OLD_STACK_ENGINE` and `NEW_STACK_ENGINE` are the two engines' records
(`engines.ENGINES["rllib-old"]`, `["rllib-new"]`); their functions import RLlib when called, so
reading the records needs neither TensorFlow nor Ray.
"""

from keras_simplicial.agents.training.engine_record import Engine

_INSTALL = 'pip install "keras-simplicial[agents]" (TensorFlow, Ray RLlib)'


def impala_config(arguments):
    """`impala.impala_config`: IMPALA on the old API stack, every argument checked."""
    from keras_simplicial.agents.training.rllib.impala import impala_config

    return impala_config(arguments)


def torch_impala_config(arguments):
    """`impala_torch.torch_impala_config`: IMPALA on the new API stack, every argument checked."""
    from keras_simplicial.agents.training.rllib.impala_torch import torch_impala_config

    return torch_impala_config(arguments)


def open_rllib(arguments, config, checkpoint=None, address=None):
    """`trainer.open_rllib`: Ray started, IMPALA built from `config`, restored from
    `checkpoint`."""
    from keras_simplicial.agents.training.rllib.trainer import open_rllib

    return open_rllib(arguments, config, checkpoint, address)


def saved_policy_weights(checkpoint, keras_model=None):
    """`checkpoints.saved_policy_weights`: the Keras weights of an old-stack checkpoint."""
    from keras_simplicial.agents.training.rllib.checkpoints import saved_policy_weights

    return saved_policy_weights(checkpoint, keras_model)


def saved_module_weights(checkpoint, keras_model):
    """`checkpoints.saved_module_weights`: the Keras weights of a new-stack checkpoint."""
    from keras_simplicial.agents.training.rllib.checkpoints import saved_module_weights

    return saved_module_weights(checkpoint, keras_model)


def load_tf2_policy(checkpoint):
    """`checkpoints.load_tf2_policy`: the RLlib TF2 `Policy` of an old-stack checkpoint."""
    from keras_simplicial.agents.training.rllib.checkpoints import load_tf2_policy

    return load_tf2_policy(checkpoint)


OLD_STACK_ENGINE = Engine(
    name="rllib-old",
    description="IMPALA on RLlib's old API stack, Keras on TensorFlow (the reference)",
    keras_backend="tensorflow",
    requires=("tensorflow", "ray"),
    install=_INSTALL,
    configure=impala_config,
    open=open_rllib,
    checkpoint_marker="policies",
    saved_weights=saved_policy_weights,
    api_stack="old",
    masks_blocked_moves=True,
    load_policy=load_tf2_policy,
)
NEW_STACK_ENGINE = Engine(
    name="rllib-new",
    description="IMPALA on RLlib's new API stack, Keras on PyTorch",
    keras_backend="torch",
    requires=("tensorflow", "ray", "torch"),
    install=_INSTALL + " and PyTorch",
    configure=torch_impala_config,
    open=open_rllib,
    checkpoint_marker="learner_group",
    saved_weights=saved_module_weights,
    api_stack="new",
)

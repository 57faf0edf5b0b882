"""Loading what a training run saved: its checkpoints, its arguments and the agent in them.

    policy = load_policy("runs/a")                     # the run's latest checkpoint
    agent, arguments = load_attention_agent("runs/a/checkpoints/iter_000120")
    weights = saved_keras_weights(checkpoint, model)   # either API stack, for a model of its agent

Checkpoints of every engine load here (`engines.engine_of_checkpoint` tells which wrote one). An
old-stack checkpoint (`policies/`) holds the TF2 policy; a new-stack one (`learner_group/`,
`torch_impala_config`) the state of the `KerasAgentRLModule`; a Keras-engine one
(`keras_engine.json`) the model's weights as numpy arrays. The Keras weights of the last two load
into a fresh model of the run's agent on whatever backend this process runs Keras
(`SavedKerasPolicy`): evaluation and the probes read all three alike.

A path is a checkpoint directory (`OUT/checkpoints/iter_NNNNNN`), a run directory (`OUT`, whose
latest checkpoint is meant), or a checkpoint's policy exported as Keras weights
(`export_policy`, `exported_policy`: `OUT/exported/iter_NNNNNN` by default), which every reader
here plays as it plays its checkpoint. `load_attention_agent` also reads a Keras policy: a
directory holding `policy.keras` (or that file itself) with the run.json of its run there or one
folder up, as supervised runs (`keras-simplicial dagger`) write them. Every checkpoint and
exported policy is verified before it is read (`checkpoint_integrity`): a damaged one is named in
a `ValueError`, never half-loaded.
"""

import json
from pathlib import Path

import numpy as np

from keras_simplicial.agents.training.checkpoint_integrity import (
    MANIFEST,
    DamagedCheckpointError,
    read_manifest,
    verify_checkpoint,
)
from keras_simplicial.agents.training.engines import engine_of_checkpoint
from keras_simplicial.agents.training.exported_policy import (
    RUN_COPY,
    exported_policy_dir,
    load_exported_weights,
    write_exported_policy,
)
from keras_simplicial.agents.training.run_arguments import RunArguments
from keras_simplicial.agents.training.run_directory import RunDirectory, iteration_of
from keras_simplicial.envs import BRIDGE_BOX_WORLD_ID

#: The file of a policy saved by Keras (`model.save`, the agent model with outputs [logits, value]).
KERAS_POLICY_FILE = "policy.keras"


def keras_policy_file(path):
    """`path`'s Keras policy file (`path` itself or `path/policy.keras`), or None."""
    path = Path(path)
    candidate = path if path.suffix == ".keras" else path / KERAS_POLICY_FILE
    return candidate if candidate.is_file() else None


def load_keras_agent(path):
    """(`AttentionAgent`, `RunArguments`) of a Keras policy (see `keras_policy_file`)."""
    import keras

    import keras_simplicial  # noqa: F401  (registers the layers for load_model)
    from keras_simplicial.agents.model.architecture import AGENT_KINDS
    from keras_simplicial.agents.model.attention_agent import AttentionAgent

    policy_file = keras_policy_file(path)
    if policy_file is None:
        raise FileNotFoundError(f"No {KERAS_POLICY_FILE} at {path}.")
    run_files = [policy_file.parent / "run.json", policy_file.parent.parent / "run.json"]
    run_file = next((f for f in run_files if f.is_file()), None)
    if run_file is None:
        raise FileNotFoundError(
            f"{policy_file} has no run.json beside it or one folder up: it says which agent and "
            "environment the model is for."
        )
    arguments = RunArguments.read(run_file)
    if arguments.agent not in AGENT_KINDS:
        raise ValueError(f"{run_file}: agent must be one of {AGENT_KINDS}, got {arguments.agent!r}")
    model = keras.models.load_model(policy_file, compile=False)
    agent = AttentionAgent(
        model, arguments.agent, arguments.architecture, arguments.mask_blocked_moves
    )
    return agent, arguments


def resolve_checkpoint(path):
    """A checkpoint directory, an exported policy, or a run directory (-> its latest
    checkpoint), as an absolute path (RLlib reads checkpoints through pyarrow, which takes a
    relative path for a URI), verified.

    Raises `DamagedCheckpointError` (a `ValueError`) naming the damaged file; for a run directory
    it also names the newest intact checkpoint, which can be passed instead, and for a finished
    run kept without its checkpoints, its exported policies.
    """
    path = Path(path).resolve()
    exported = exported_policy_dir(path)
    if exported is not None:
        if read_manifest(exported) is None:
            raise DamagedCheckpointError(exported, MANIFEST, "is missing")
        verify_checkpoint(exported)
        return exported
    if engine_of_checkpoint(path) is not None:
        verify_checkpoint(path)
        return path
    run = RunDirectory(path)
    latest = run.latest_checkpoint() if run.checkpoints_dir.is_dir() else None
    if latest is None:
        policies = ", ".join(str(policy) for policy in run.exported_policies())
        kept = f" It keeps these exported policies: {policies}." if policies else ""
        raise FileNotFoundError(
            f"No checkpoint at {path} (expected a checkpoint directory, with policies/, "
            "learner_group/ or keras_engine.json, an exported policy, with policy.json, or a run "
            f"directory with checkpoints/).{kept}"
        )
    try:
        verify_checkpoint(latest)
    except DamagedCheckpointError as error:
        intact, _ = run.resume_point()
        hint = f" The newest intact one is {intact}." if intact is not None else ""
        raise DamagedCheckpointError(latest, error.file, f"{error.reason}.{hint}") from None
    return latest


def best_checkpoint_of(path):
    """`path` itself when it is a checkpoint, or the best checkpoint of the run directory `path`
    (the one its `best.json` names; once it is gone, its exported policy). Raises
    FileNotFoundError when a run directory has neither."""
    path = Path(path)
    if not (path / "checkpoints").is_dir():
        return path
    best = RunDirectory(path).best_policy()
    if best is None:
        raise FileNotFoundError(
            f"{path} has no best checkpoint (checkpoints/best.json), nor an exported policy of it."
        )
    return Path(best[0])


def run_directory_of(checkpoint):
    """The run directory a checkpoint (or its exported policy) belongs to (OUT/checkpoints/iter_N,
    OUT/exported/iter_N -> OUT), or None."""
    checkpoint = Path(checkpoint)
    candidate = checkpoint.parent.parent
    return RunDirectory(candidate) if (candidate / "run.json").is_file() else None


def run_arguments_of(checkpoint):
    """The `RunArguments` of the run a checkpoint belongs to (its run.json, else the checkpoint's
    own copy of it), or None (a checkpoint on its own from before the copies existed). An
    exported policy's are its copy's."""
    checkpoint = Path(checkpoint)
    if exported_policy_dir(checkpoint) is not None:
        return RunArguments.read(checkpoint / RUN_COPY)
    copy = checkpoint / "run.json"
    run = run_directory_of(checkpoint)
    if run is None:
        return RunArguments.read(copy) if copy.is_file() else None
    try:
        return RunArguments.read(run.run_file)
    except ValueError:
        if copy.is_file():
            return RunArguments.read(copy)
        raise


def saved_keras_weights(checkpoint, keras_model):
    """The weights a checkpoint (of any engine) saved for `keras_model`, a model of the run's
    agent on any backend, in `keras_model.weights` order (`keras_model.set_weights` takes them).
    """
    checkpoint = resolve_checkpoint(checkpoint)
    return engine_of_checkpoint(checkpoint).saved_weights(checkpoint, keras_model)


def keras_logits_and_values(model):
    """`observations -> (logits, value)` of a Keras agent model, as arrays of its backend that
    `numpy.asarray` reads: a traced `tf.function` on TensorFlow, a call without gradients on
    PyTorch, a `jax.jit` on JAX."""
    import keras

    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        traced = tf.function(lambda x: model(tf.cast(x, tf.float32), training=False))
        return lambda observations: traced(observations)
    if backend == "torch":
        import torch

        def forward(observations):
            with torch.no_grad():
                outputs = model(torch.as_tensor(np.asarray(observations, np.float32)))
            return tuple(output.cpu() for output in outputs)

        return forward
    if backend == "jax":
        import jax

        # The weights are arguments, not constants of the trace: `set_weights` between calls
        # (a greedy check of each checkpoint) must change what the compiled forward computes.
        def outputs(trainable, non_trainable, x):
            return model.stateless_call(trainable, non_trainable, x.astype("float32"))[0]

        compiled = jax.jit(outputs)
        return lambda observations: tuple(
            compiled(
                [v.value for v in model.trainable_variables],
                [v.value for v in model.non_trainable_variables],
                np.asarray(observations),
            )
        )
    raise ValueError(f"Keras runs on {backend!r}: evaluation needs TensorFlow, PyTorch or JAX.")


class SavedKerasPolicy:
    """The policy of a checkpoint (of any engine) or of an exported policy as `load_policy`
    returns it for all but the old stack's: its agent model rebuilt on this process's Keras
    backend with the saved weights, where the old stack's TF2 policy has them
    (`policy.model.base_model`, `.kind`, `.logits_and_values`; `observation_space`,
    `get_weights()`).

    Args:
        checkpoint: a checkpoint directory or an exported policy (verified).
        arguments: the `RunArguments` of its run (agent, architecture, env).
    """

    def __init__(self, checkpoint, arguments):
        import gymnasium

        import keras_simplicial.envs  # noqa: F401  (registers the env ids)
        from keras_simplicial.agents.model.architecture import build_agent_model

        env = gymnasium.make(arguments.env, **dict(arguments.env_config))
        self.observation_space, self.action_space = env.observation_space, env.action_space
        env.close()
        self.model = self  # as `policy.model` of an old-stack policy
        self.kind = arguments.agent
        self.base_model = build_agent_model(
            arguments.agent,
            self.observation_space.shape,
            int(self.action_space.n),
            **arguments.architecture,
        )
        if exported_policy_dir(checkpoint) is not None:
            load_exported_weights(checkpoint, self.base_model)
        else:
            self.base_model.set_weights(saved_keras_weights(checkpoint, self.base_model))
        self.logits_and_values = keras_logits_and_values(self.base_model)

    def get_weights(self):
        return self.base_model.get_weights()


def load_policy(checkpoint):
    """The policy of a checkpoint, with its Keras agent model at `policy.model.base_model`: the
    RLlib TF2 policy of an old-stack checkpoint, a `SavedKerasPolicy` of any other engine's and
    of an exported policy."""
    checkpoint = resolve_checkpoint(checkpoint)
    engine = engine_of_checkpoint(checkpoint)  # None for an exported policy
    if engine is not None and engine.load_policy is not None:
        return engine.load_policy(checkpoint)
    arguments = run_arguments_of(checkpoint)
    if arguments is None:
        raise ValueError(
            f"{checkpoint} holds no run.json (nor its run's): it says which agent the "
            "saved module is."
        )
    return SavedKerasPolicy(checkpoint, arguments)


def load_attention_agent(checkpoint):
    """(`AttentionAgent`, `RunArguments`) of a checkpoint, an exported policy or a run directory,
    or of a Keras policy.

    A checkpoint without its run directory gets the arguments of its agent on bridge BoxWorld.
    """
    from keras_simplicial.agents.model.attention_agent import AttentionAgent

    if keras_policy_file(checkpoint) is not None:
        return load_keras_agent(checkpoint)
    checkpoint = resolve_checkpoint(checkpoint)
    policy = load_policy(checkpoint)
    model = policy.model
    arguments = run_arguments_of(checkpoint) or RunArguments(
        env=BRIDGE_BOX_WORLD_ID, agent=model.kind
    )
    agent = AttentionAgent(
        model.base_model, model.kind, arguments.architecture, arguments.mask_blocked_moves
    )
    return agent, arguments


def export_policy(checkpoint, out=None):
    """Writes the trained policy of `checkpoint` (a checkpoint directory of any engine, or a run
    directory: its latest) as Keras weights (`exported_policy`) to the folder `out`, by default
    the run's `exported/<checkpoint name>`; returns the folder.

    Needs no Ray or RLlib: the weights are read from the checkpoint's files
    (`saved_keras_weights`) into a fresh model of the run's agent.
    """
    from keras_simplicial.agents.provenance import provenance

    checkpoint = resolve_checkpoint(checkpoint)
    if exported_policy_dir(checkpoint) is not None:
        raise ValueError(f"{checkpoint} is an exported policy already, not a checkpoint.")
    arguments = run_arguments_of(checkpoint)
    if arguments is None:
        raise ValueError(
            f"{checkpoint} holds no run.json (nor its run's): it says which agent the weights "
            "are of."
        )
    run = run_directory_of(checkpoint)
    if out is None:
        if run is None:
            raise ValueError(
                f"{checkpoint} is not in a run directory (OUT/checkpoints/iter_N): give --out."
            )
        out = run.exported_dir / checkpoint.name
    iteration = iteration_of(checkpoint)
    rows = run.read_metrics() if run is not None else []
    steps = {int(row["training_iteration"]): int(row["timesteps"]) for row in rows}
    try:  # as the user would type it, where it is under the current directory
        source = checkpoint.relative_to(Path.cwd())
    except ValueError:
        source = checkpoint
    record = {
        "checkpoint": checkpoint.name,
        "source": str(source),
        "engine": engine_of_checkpoint(checkpoint).name,
        "iteration": iteration,
        "timesteps": steps.get(iteration),
        "exported_by": provenance(),
    }
    policy = SavedKerasPolicy(checkpoint, arguments)
    return write_exported_policy(out, policy.base_model, arguments, record)


def environment_of(arguments, env_id=None, env_config=None):
    """(env id, env config) a checkpoint plays on: the run's own (`arguments`, a `RunArguments`
    or None), with `env_config` (a command's `--env-config`) merged over the run's env config, so
    that `{"min_solution_length": 2}` keeps the board the agent trained on. With another `env_id`
    than the run's, `env_config` is taken as it is."""
    run_env = arguments.env if arguments else BRIDGE_BOX_WORLD_ID
    env_id = env_id or run_env
    base = arguments.env_config if arguments and env_id == run_env else {}
    return env_id, {**base, **dict(env_config or {})}


def check_observation_shape(model_shape, env_id, env_config):
    """Raises a ValueError naming the board sizes when the environment's observations are not the
    shape the agent's model was built for (`model_shape`, (rows, cols + 1, 3))."""
    import gymnasium

    env = gymnasium.make(env_id, **dict(env_config))
    shape = tuple(int(d) for d in env.observation_space.shape)
    env.close()
    model_shape = tuple(int(d) for d in model_shape)
    if shape != model_shape:
        raise ValueError(
            f"--env/--env-config give a {shape[0]} x {shape[1] - 1} board, but the agent was "
            f"trained on {model_shape[0]} x {model_shape[1] - 1} boards and its model takes only "
            f"those (env config: {json.dumps(dict(env_config), sort_keys=True)})."
        )

"""RLlib's IMPALA as `train` drives it: the adapter between an RLlib `Algorithm` (either API
stack) and the loop every engine shares.

    trainer = open_rllib(arguments, config, checkpoint=None, address=None)
    iteration = trainer.train()          # RLlib's result, converted once (`results.py`)

`open_rllib` starts Ray (embedded, or a cluster joined at `address`: `start_ray`), registers the
agent models and envs for this job, builds IMPALA from the run's config and restores it from the
checkpoint. `RLlibTrainer` answers what `train.Trainer` asks, whichever stack the algorithm is on.
"""

import os
from pathlib import Path

from keras_simplicial.agents.training.rllib.results import (
    new_stack_iteration,
    old_stack_iteration,
)

# Ray workers inherit these: quiet TensorFlow, and Keras 2 behind `tf.keras` for RLlib.
WORKER_ENV_VARS = {
    "TF_USE_LEGACY_KERAS": "1",
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "PYTHONWARNINGS": "ignore::DeprecationWarning",
}


class RLlibTrainer:
    """An RLlib IMPALA `Algorithm` (either API stack) as `train` drives it (`train.Trainer`).

    Args:
        algorithm: the built (and restored) algorithm.
        arguments: its run's `RunArguments`.
        config: the config it was built from.
    """

    def __init__(self, algorithm, arguments, config):
        self.algorithm, self.arguments = algorithm, arguments
        self.smoothing = int(config.metrics_num_episodes_for_smoothing)
        self.new_stack = bool(algorithm.config.enable_rl_module_and_learner)
        self._diagnostics = None

    @property
    def iteration(self):
        return self.algorithm.iteration

    def environment_steps(self):
        return environment_steps(self.algorithm)

    def train(self):
        result = self.algorithm.train()
        return new_stack_iteration(result) if self.new_stack else old_stack_iteration(result)

    def diagnostics(self):
        """The attention statistics and trainability of the learner's current weights."""
        if self._diagnostics is None:
            self._diagnostics = _learner_diagnostics(self.algorithm, self.arguments)
        return self._diagnostics()

    def save(self, path):
        return self.algorithm.save(path)

    def layout(self):
        """One line: where the boards are sampled (the env runners per node, or this
        process)."""
        nodes = env_runner_nodes(self.algorithm)
        boards = self.arguments.num_envs_per_env_runner
        if not nodes and self.new_stack:
            return (
                f"Sampling {boards} boards in this process, then updating the learner in this "
                "process (no remote env runner)."
            )
        if not nodes:
            return (
                f"Sampling {boards} boards in this process, beside the learner thread (no "
                "remote env runner)."
            )
        return f"{len(nodes)} env runner(s) on {len(set(nodes))} node(s): " + ", ".join(
            f"{ip} x{nodes.count(ip)}" for ip in sorted(set(nodes))
        )

    def stop(self):
        self.algorithm.stop()


def open_rllib(arguments, config, checkpoint=None, address=None):
    """The `RLlibTrainer` of a run on an RLlib engine (the records' `open`): Ray started
    (`start_ray`), IMPALA built from `config` and restored from `checkpoint` when given."""
    start_ray(address, arguments.num_env_runners, arguments.api_stack)
    return RLlibTrainer(build_algorithm(arguments, checkpoint, config), arguments, config)


def start_ray(address=None, num_env_runners=1, api_stack="old"):
    """Joins the cluster at `address`, or starts an embedded local Ray sized for the run (unless
    Ray is running already), and registers the agent models and envs for this job.

    The workers run Keras on the backend of `api_stack`'s engine; a Ray already running keeps
    the environment it was started with.
    """
    import ray

    from keras_simplicial.agents.training.engines import API_STACK_ENGINES, ENGINES

    if not ray.is_initialized():
        backend = ENGINES[API_STACK_ENGINES[api_stack]].keras_backend
        runtime_env = {"env_vars": {**WORKER_ENV_VARS, "KERAS_BACKEND": backend}}
        if address:
            ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
        else:
            # One CPU for the learner and one per env runner, even if that oversubscribes a
            # laptop: Ray would otherwise wait forever for CPUs that do not exist.
            # address="local" starts a new Ray even if a cluster (or RAY_ADDRESS) is around.
            num_cpus = max(os.cpu_count() or 1, 1 + int(num_env_runners))
            ray.init(
                address="local",
                num_cpus=num_cpus,
                include_dashboard=False,
                runtime_env=runtime_env,
                log_to_driver=False,
                configure_logging=True,
                logging_level="ERROR",
            )
    register_for_this_job(api_stack)


def register_for_this_job(api_stack="old"):
    """Registers the agent models and the envs under the job this driver now is.

    Ray's registry keys what it holds by the job id it first saw and forgets what it has sent
    (ray 2.60, `ray.tune.registry._Registry`; ray-project/ray#8205). A driver that joins a
    cluster again after `ray.shutdown()` (one run after another, as `make reproduce-small
    --address` does) is a new job, and its env runners look the models up under that job's id:
    "Registry value for rllib_model/simplicial_agent doesn't exist". An embedded local Ray is
    new each time and its first job has the same id, which is why only clusters showed it.
    """
    from ray.tune.registry import _global_registry

    from keras_simplicial.agents.model.rllib_model import register_agent_models
    from keras_simplicial.agents.training.rllib.envs import register_envs

    _global_registry._prefix = None  # taken from the current job at the next use
    register_agent_models()
    register_envs()
    if api_stack == "new":
        from keras_simplicial.agents.training.rllib.impala_torch import register_new_stack_envs

        register_new_stack_envs()


def build_algorithm(arguments, checkpoint=None, config=None):
    """The IMPALA `Algorithm` of a run's `RunArguments` (built from `config`, else from its
    engine's config builder), restored from `checkpoint` if given.

    Restoring brings back the weights, the optimizer state and the timestep counters.
    """
    from keras_simplicial.agents.training.engines import engine_named

    if config is None:
        config = engine_named(arguments.engine).configure(arguments)
    algorithm = config.build_algo()
    if checkpoint is not None:
        # RLlib reads the checkpoint through pyarrow, which takes absolute paths only.
        algorithm.restore(str(Path(checkpoint).resolve()))
    return algorithm


def environment_steps(algorithm):
    """Environment steps sampled over the whole run (restored with a checkpoint), on either
    stack."""
    if algorithm.config.enable_rl_module_and_learner:
        from keras_simplicial.agents.training.rllib import new_stack

        return new_stack.environment_steps(algorithm)
    return int(algorithm._counters.get("num_env_steps_sampled", 0))


def env_runner_nodes(algorithm):
    """The node IP address of each remote env runner, in runner order."""
    import ray

    return algorithm.env_runner_group.foreach_env_runner(
        lambda runner: ray.util.get_node_ip_address(), local_env_runner=False
    )


def _learner_diagnostics(algorithm, arguments):
    """() -> the attention statistics of the learner's current weights, on either stack."""
    from keras_simplicial.agents.training.attention_health import AttentionHealth

    def health(model):
        return AttentionHealth(
            model, arguments.agent, arguments.architecture, arguments.env, arguments.env_config
        )

    if not algorithm.config.enable_rl_module_and_learner:
        return health(algorithm.get_policy().model.base_model)
    import torch

    from keras_simplicial.agents.training.rllib import new_stack

    learner = new_stack.LearnerModel(algorithm, arguments)
    attention_health = health(learner.model)

    def diagnostics():
        learner.refresh()
        with torch.no_grad():
            return attention_health()

    return diagnostics

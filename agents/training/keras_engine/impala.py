"""The Keras engine: IMPALA in one process, no Ray, on whatever backend Keras runs.

    engine = KerasIMPALA(RunArguments.from_preset("easy", "relational", engine="keras", seed=1))
    iteration = engine.train()           # one iteration: an `Iteration`
    engine.save(path); engine.restore(path)

What `train --engine keras` runs, top to bottom (`KerasIMPALA.train`, then `act` and `learn`):

    B boards of the run's environment (`num_envs_per_env_runner`), one numpy core
    every iteration, until `min_time_s_per_iteration` has passed:
        act: for t in 0 .. T-1 (T = rollout_fragment_length):
            logits, V = model(x_t)           one compiled forward pass of all B boards
            a_t ~ softmax(logits)            `rollout.sample_actions`, as the old stack's runner
            step the B boards; report and restart the ended ones
        V(x_T) bootstraps the unrolls, and starts the next act
        learn: the B unrolls cut into train batches of train_batch_size / T unrolls; each
            trained on num_epochs times by one compiled learner step
            (`learner_steps.LearnerStep`): V-trace targets and the IMPALA loss
            (`vtrace.impala_loss`), the gradient clipped, RMSProp or Adam, the learning rate of
            the preset's schedule at the environment steps sampled so far
        report: an `Iteration` (the episodes' window, the updates' mean statistics, timings)

The recipe is the run's: Table 1 (`PAPER_IMPALA_HYPERPARAMETERS`), the preset's overrides and
`--config` (`settings.engine_settings`). The train batch, the unroll, the epochs and the schedule
are the old stack's, so an update sees the same number of environment steps, and as many updates
follow each sampled step.

One deviation from the paper's IMPALA: acting and learning take turns, so an unroll is acted by
the weights of the latest update, but for its first step: the forward pass that ends an unroll
(V(x_T), the bootstrap value) also gives the next unroll's first logits, before the learn between
them (a lag of one learn on 1 step in T; V-trace's importance weights correct for it, as for the
`num_epochs` passes over a batch). The learner bootstraps from that V(x_T) of the acting weights,
where RLlib's learner recomputes it with its own. The paper's learner ran beside 63 actors per
machine, whose weights were some updates behind.

A checkpoint (`save`, `checkpoint.py`) is the model's weights and the optimizer's variables
(numpy arrays, backend independent), the counters and the random generators; a resumed run's
boards start new episodes.
"""

import collections
import json
import time

import numpy as np

from keras_simplicial.agents.rollout import mask_logits, sample_actions
from keras_simplicial.agents.training.board_episodes import BoardEpisodes
from keras_simplicial.agents.training.iteration import Iteration
from keras_simplicial.agents.training.keras_engine.checkpoint import (
    read_checkpoint,
    write_checkpoint,
)
from keras_simplicial.agents.training.keras_engine.learner_steps import (
    LEARNER_STEPS,
    make_optimizer,
)
from keras_simplicial.agents.training.keras_engine.settings import engine_settings, scheduled

# Seeds of the action sampler: the old stack's runner's (`BatchedEnvRunner`, seed + 7919).
SAMPLER_SEED_OFFSET = 7919


class KerasIMPALA:
    """IMPALA in one process: the run's boards act with the current weights, then the learner
    step trains on what they played (see the module's docstring). It is the trainer `train`
    drives (`train.Trainer`).

    Args:
        arguments: the run's `RunArguments` (engine "keras").
        settings: its `engine_settings` (made here when None).

    Attributes:
        iteration: training iterations so far (restored with a checkpoint).
        timesteps: environment steps sampled so far (restored with a checkpoint).
        updates: learner updates so far (restored with a checkpoint).
        smoothing: episodes in the window of the reported means.
    """

    def __init__(self, arguments, settings=None):
        import keras

        from keras_simplicial.agents.model.architecture import build_agent_model
        from keras_simplicial.envs import make_vector_env

        self.arguments = arguments
        self.settings = settings or engine_settings(arguments)
        backend = keras.backend.backend()
        if backend not in LEARNER_STEPS:
            raise ValueError(
                f"The keras engine runs Keras on {sorted(LEARNER_STEPS)}, but Keras runs on "
                f"{backend!r}: set KERAS_BACKEND to one of them before Keras is imported."
            )
        self.backend = backend
        seed = arguments.seed
        if seed is not None:
            keras.utils.set_random_seed(seed)
        self.env = make_vector_env(
            arguments.env, arguments.num_envs_per_env_runner, arguments.env_config, copy=False
        )
        self.env.reset(seed=seed)  # board i: seed + i, as the old stack's runner seeds them
        self.core = self.env.core
        self.rng = np.random.default_rng(None if seed is None else seed + SAMPLER_SEED_OFFSET)
        self.model = build_agent_model(
            arguments.agent,
            self.env.single_observation_space.shape,
            int(self.env.single_action_space.n),
            **arguments.architecture,
        )
        self.learner = LEARNER_STEPS[backend](
            self.model, make_optimizer(self.settings), self.settings, arguments.jit_compile
        )
        self.iteration, self.timesteps, self.updates = 0, 0, 0
        self.smoothing = int(self.settings["metrics_num_episodes_for_smoothing"])
        self._episodes = collections.deque(maxlen=self.smoothing)
        self._attention_health = None
        self._reset_episodes()

    def _reset_episodes(self):
        self._board_episodes = BoardEpisodes(self.core)
        self._ended_this_iteration = 0
        self._pending = None  # (logits, values) of the current observations

    # -- the loop -----------------------------------------------------------------------------
    def train(self):
        """One training iteration: act and learn until `min_time_s_per_iteration` seconds and
        `min_sample_timesteps_per_iteration` steps have passed. Returns its `Iteration`."""
        started, first_step = time.perf_counter(), self.timesteps
        self._ended_this_iteration = 0
        stats, act_s, learn_s = [], 0.0, 0.0
        while True:
            phase = time.perf_counter()
            batch = self.act()
            act_s += time.perf_counter() - phase
            phase = time.perf_counter()
            stats += self.learn(batch)
            learn_s += time.perf_counter() - phase
            elapsed = time.perf_counter() - started
            if elapsed >= float(self.settings["min_time_s_per_iteration"] or 0) and (
                self.timesteps - first_step
                >= int(self.settings["min_sample_timesteps_per_iteration"])
            ):
                break
        self.iteration += 1
        return self._report(stats, self.timesteps - first_step, elapsed, act_s, learn_s)

    def act(self):
        """One unroll of T steps on every board; returns the time-major batch (numpy):
        observations [T, B, R, C+1, 3] uint8, actions [T, B] int32, behaviour_logp, rewards and
        terminateds [T, B] float32, bootstrap_value [B] float32 (V(x_T), 0 after a
        termination), and allowed [T, B, A] bool where the run masks blocked moves."""
        core, boards = self.core, self.core.num_boards
        steps = int(self.settings["rollout_fragment_length"])
        masking = self.arguments.mask_blocked_moves
        observations = np.empty((steps, boards) + core.obs.shape[1:], np.uint8)
        actions = np.empty((steps, boards), np.int32)
        behaviour_logp = np.empty((steps, boards), np.float32)
        rewards = np.empty((steps, boards), np.float32)
        terminateds = np.empty((steps, boards), np.float32)
        allowed = np.empty((steps, boards, 4), bool) if masking else None
        if self._pending is None:
            self._pending = self.learner.act(core.obs)
        for t in range(steps):
            observations[t] = core.obs
            logits = self._pending[0]
            if masking:
                allowed[t] = core.allowed_moves()
                logits = mask_logits(logits, allowed[t])
            actions[t], behaviour_logp[t] = sample_actions(logits, self.rng)
            reward, terminated, truncated, _ = core.step(actions[t], autoreset=False)
            rewards[t], terminateds[t] = reward, terminated
            self._end_episodes(reward, terminated | truncated)
            self._pending = self.learner.act(core.obs)
        batch = {
            "observations": observations,
            "actions": actions,
            "behaviour_logp": behaviour_logp,
            "rewards": rewards,
            "terminateds": terminateds,
            "bootstrap_value": np.where(terminateds[-1] > 0, 0.0, self._pending[1]).astype(
                np.float32
            ),
        }
        if masking:
            batch["allowed"] = allowed
        self.timesteps += steps * boards
        return batch

    def _end_episodes(self, reward, done):
        ended, reports = self._board_episodes.step(reward, done)
        self._episodes.extend(reports)
        self._ended_this_iteration += ended.size

    def learn(self, batch):
        """Trains on `batch` (`act`): each train batch of its unrolls `num_epochs` times.
        Returns the statistics of each update."""
        steps = int(self.settings["rollout_fragment_length"])
        per_update = int(self.settings["train_batch_size"]) // steps
        boards = batch["actions"].shape[1]
        learning_rate = scheduled(self.settings["lr_schedule"], self.timesteps)
        entropy_coeff = scheduled(self.settings["entropy_coeff_schedule"], self.timesteps)
        stats = []
        for start in range(0, boards, per_update):
            part = {
                name: value[start : start + per_update]
                if name == "bootstrap_value"
                else value[:, start : start + per_update]
                for name, value in batch.items()
            }
            for _ in range(int(self.settings["num_epochs"])):
                stats.append(
                    {
                        **self.learner.learn(part, learning_rate, entropy_coeff),
                        "lr": learning_rate,
                    }
                )
                self.updates += 1
        return stats

    def _report(self, stats, steps, elapsed, act_s, learn_s):
        """The `Iteration` of `steps` sampled in `elapsed` seconds, with the statistics of each
        of its updates (`learn`)."""
        episodes = list(self._episodes)
        means = collections.defaultdict(list)
        for _, _, metrics in episodes:
            for name, value in metrics.items():
                means[name].append(value)
        learner = {name: float(np.mean([s[name] for s in stats])) for name in stats[0]}
        learner["lr"] = stats[-1]["lr"]
        return Iteration(
            number=self.iteration,
            timesteps=self.timesteps,
            frames_per_s=steps / max(elapsed, 1e-9),
            episodes=self._ended_this_iteration,
            episode_return_mean=np.mean([e[0] for e in episodes]) if episodes else None,
            episode_len_mean=np.mean([e[1] for e in episodes]) if episodes else None,
            episode_means={name: float(np.mean(values)) for name, values in means.items()},
            learner=learner,
            timings={"act_s": act_s, "learn_s": learn_s},
        )

    # -- what `train` reads besides the iterations ------------------------------------------
    def environment_steps(self):
        return self.timesteps

    def diagnostics(self):
        """The attention statistics and trainability of the learner's current weights
        (`AttentionHealth`)."""
        from keras_simplicial.agents.training.attention_health import AttentionHealth

        if self._attention_health is None:
            arguments = self.arguments
            self._attention_health = AttentionHealth(
                self.model,
                arguments.agent,
                arguments.architecture,
                arguments.env,
                arguments.env_config,
            )
        self.keras_model()
        return self._attention_health()

    def layout(self):
        return (
            f"Acting on {self.arguments.num_envs_per_env_runner} boards, then learning, in this "
            f"process (the keras engine, Keras on {self.backend}; no Ray)."
        )

    def stop(self):
        self.env.close()

    def keras_model(self):
        """The agent model holding the learner's current weights."""
        self.learner.sync_model()
        return self.model

    # -- checkpoints --------------------------------------------------------------------------
    def save(self, path):
        """Writes the engine's state into the directory `path` (`checkpoint.write_checkpoint`):
        the model's weights, the optimizer's variables, the counters and the random
        generators."""
        weights, optimizer_variables = self.learner.state()
        state = {
            "engine": "keras",
            "backend": self.backend,
            "iteration": self.iteration,
            "timesteps": self.timesteps,
            "updates": self.updates,
            "sampler": self.rng.bit_generator.state,
            "boards": [rng.bit_generator.state for rng in self.core.rngs],
        }
        return write_checkpoint(path, weights, optimizer_variables, state)

    def start_from_policy(self, path):
        """Sets the model's weights to those of the saved policy at `path` (anything `evaluate`
        plays, `checkpoints.load_attention_agent`), checked to be of the run's agent,
        architecture and observation shape; the optimizer's state stays new."""
        from keras_simplicial.agents.model.architecture import agent_hyperparameters
        from keras_simplicial.agents.training.checkpoints import load_attention_agent

        arguments = self.arguments
        try:
            agent, source = load_attention_agent(path)
        except (FileNotFoundError, ValueError) as error:
            raise type(error)(f"init_policy (--init-policy): {error}") from None
        if agent.kind != arguments.agent:
            raise ValueError(
                f"init_policy (--init-policy) {path} is a {agent.kind} agent; the run trains a "
                f"{arguments.agent} agent (--agent)."
            )

        def comparable(params):  # a JSON list and the defaults' tuple are one value
            return {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}

        wanted = comparable(agent_hyperparameters(arguments.agent, **arguments.architecture))
        saved = comparable(agent.params)
        differ = sorted(k for k in {*wanted, *saved} if wanted.get(k) != saved.get(k))
        if differ:
            found = ", ".join(f"{k} {saved.get(k)!r} (run: {wanted.get(k)!r})" for k in differ)
            raise ValueError(
                f"init_policy (--init-policy) {path} was built with another architecture: "
                f"{found}; give the run its --model-config {json.dumps(source.model_overrides)}."
            )
        shape = tuple(self.env.single_observation_space.shape)
        if agent.observation_shape != shape:
            raise ValueError(
                f"init_policy (--init-policy) {path} sees boards of shape "
                f"{agent.observation_shape}, the run's are {shape} (--env-config: rows, cols)."
            )
        _, optimizer_variables = self.learner.state()
        self.learner.set_state(agent.base_model.get_weights(), optimizer_variables)
        return self

    def restore(self, path):
        """Loads `save`'s state from the checkpoint directory `path` (also one saved on another
        backend); the boards start new episodes from their saved generators."""
        state, weights, optimizer_variables = read_checkpoint(path)
        expected = [tuple(w.shape) for w in self.model.weights]
        if [tuple(w.shape) for w in weights] != expected:
            raise ValueError(
                f"{path} holds weights of another model ({len(weights)} arrays, "
                f"{len(expected)} expected): was it trained with another agent or board?"
            )
        expected = [tuple(v.shape) for v in self.learner.optimizer.variables]
        if [tuple(v.shape) for v in optimizer_variables] != expected:
            raise ValueError(
                f"{path} holds another optimizer's variables: was the run "
                "trained with another opt_type?"
            )
        if len(state["boards"]) != self.core.num_boards:
            raise ValueError(
                f"{path} was saved with {len(state['boards'])} boards, the run has "
                f"{self.core.num_boards} (num_envs_per_env_runner)."
            )
        self.learner.set_state(weights, optimizer_variables)
        self.iteration, self.timesteps = int(state["iteration"]), int(state["timesteps"])
        self.updates = int(state["updates"])
        self.rng.bit_generator.state = state["sampler"]
        for rng, board_state in zip(self.core.rngs, state["boards"]):
            rng.bit_generator.state = board_state
        self.core.reset_boards()
        self._reset_episodes()
        return self


def open_keras_engine(arguments, settings, checkpoint=None, address=None):
    """The `KerasIMPALA` of a run (the record's `open`), restored from `checkpoint`, or for a new
    run started from `arguments.init_policy`'s weights where it names one."""
    if address:
        raise ValueError(
            "--address joins a Ray cluster, but the keras engine runs in one process without "
            "Ray: leave --address out, or train with --engine rllib-old."
        )
    engine = KerasIMPALA(arguments, settings)
    if checkpoint is not None:
        engine.restore(checkpoint)
    elif arguments.init_policy is not None:
        engine.start_from_policy(arguments.init_policy)
    return engine

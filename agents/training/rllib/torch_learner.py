"""IMPALA's PyTorch Learner (new API stack) trained the way the old stack trains the agents:
Table 1's RMSProp and the V-trace losses summed over the batch.

    config.training(learner_class=KerasAgentIMPALALearner)   # what `torch_impala_config` does

Two differences between RLlib 2.60's stacks would otherwise change the recipe of every preset:

- the optimizer: the new stack's Learner builds `torch.optim.Adam` whatever `opt_type` says.
  `RMSPropRootEpsilon` is TensorFlow's RMSProp, which the old stack (tf2) used and the paper
  analyses in Appendix D: $r \\leftarrow \\rho r + (1 - \\rho) g^2$,
  $x \\leftarrow x - \\eta\\, g / \\sqrt{r + \\epsilon}$, the epsilon *inside* the root
  (`torch.optim.RMSprop` adds it outside, $g / (\\sqrt{r} + \\epsilon)$: with the presets'
  $\\epsilon = 0.1$ a very different step);
- the loss: the new stack averages the policy, value and entropy terms over the batch's
  timesteps, the old stack sums them. The presets' learning rates and the gradient clip of 40
  were tuned on sums, so the mean loss is multiplied back by the number of timesteps counted
  (the loss mask's sum), which gives the old stack's sum exactly.

And it mends how RLlib 2.60's new stack bootstraps V-trace at the end of an unfinished rollout
(`without_phantom_importance_weights`): as it came, every 10-step chunk of an episode was learned
as if the episode ended there with nothing more to win.

It also logs what the old stack's `DiagnosticImpalaTF2Policy` logs beside RLlib's statistics: the
norm of each model part's clipped gradient (`grad_norm/<part>`, `model_parts.MODEL_PARTS`).
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import tensorflow  # noqa: E402, F401  (before RLlib: see agents/__init__.py)
import torch  # noqa: E402
from ray.rllib.algorithms.impala.torch.impala_torch_learner import (  # noqa: E402
    IMPALATorchLearner,
)
from ray.rllib.core.columns import Columns  # noqa: E402

from keras_simplicial.agents.model.model_parts import model_part  # noqa: E402


class RMSPropRootEpsilon(torch.optim.Optimizer):
    """TensorFlow's RMSProp in PyTorch: epsilon inside the square root.

    Per parameter $x$ with gradient $g$: $r \\leftarrow \\rho r + (1 - \\rho) g^2$ (from 0),
    $m \\leftarrow \\mu m + \\eta\\, g / \\sqrt{r + \\epsilon}$, $x \\leftarrow x - m$
    (without momentum, $\\mu = 0$: $x \\leftarrow x - \\eta\\, g / \\sqrt{r + \\epsilon}$).

    Args:
        params: the parameters (or parameter groups).
        lr: $\\eta$ (RLlib's Learner sets it on every update from `lr`, a schedule or not).
        decay: $\\rho$, in [0, 1).
        epsilon: $\\epsilon$ > 0.
        momentum: $\\mu$, in [0, 1).
    """

    def __init__(self, params, lr=1e-3, decay=0.99, epsilon=0.1, momentum=0.0):
        if not 0.0 <= decay < 1.0:
            raise ValueError(f"decay must be in [0, 1), got {decay!r}.")
        if not epsilon > 0.0:
            raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum!r}.")
        defaults = {"lr": lr, "decay": decay, "epsilon": epsilon, "momentum": momentum}
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, decay = group["lr"], group["decay"]
            epsilon, momentum = group["epsilon"], group["momentum"]
            for parameter in group["params"]:
                if parameter.grad is None:
                    continue
                gradient = parameter.grad
                state = self.state[parameter]
                if not state:
                    state["square_average"] = torch.zeros_like(parameter)
                    if momentum > 0:
                        state["momentum"] = torch.zeros_like(parameter)
                square_average = state["square_average"]
                square_average.mul_(decay).addcmul_(gradient, gradient, value=1.0 - decay)
                step = gradient / (square_average + epsilon).sqrt() * lr
                if momentum > 0:
                    step = state["momentum"].mul_(momentum).add_(step)
                parameter.sub_(step)
        return loss


# A behaviour log-probability so large that exp(target - it) is 0 in float32 (not inf: 0 * inf).
PHANTOM_BEHAVIOUR_LOGP = 1e4


def without_phantom_importance_weights(batch):
    """The batch with the importance weight of every appended bootstrap timestep set to 0.

    RLlib 2.60's new stack appends one phantom timestep to each episode chunk
    (`AddOneTsToEpisodesAndTruncate`): the chunk's next observation, so that its value
    $V(x_{s+n})$ is computed, with the last action, its behaviour log-probability and reward 0
    copied in, and `LOSS_MASK` false. IMPALA's loss then gives it discount 0 and runs V-trace
    (Espeholt et al. 2018, eq. 1) over it. At the phantom step $\\delta = \\rho (0 - V(x_{s+n}))$
    with $\\rho$ the ratio of two unrelated probabilities (often 1), so its target is
    $v_{s+n} = (1 - \\rho) V(x_{s+n})$ instead of $V(x_{s+n})$, and through the recursion
    $v_s - V(x_s) = \\delta_s + \\gamma c_s (v_{s+1} - V(x_{s+1}))$ the bootstrap value is taken
    back out of every target and advantage of the chunk: with $\\rho = 1$, an unfinished chunk is
    learned as if its episode had ended with value 0 (tests/agents/training/test_new_stack.py).

    No action is taken at the phantom step, so its weight $\\rho$ must be 0: then
    $v_{s+n} = V(x_{s+n})$, the bootstrap of eq. 1. Its behaviour log-probability is replaced by
    `PHANTOM_BEHAVIOUR_LOGP` where `LOSS_MASK` is false; counted timesteps are left as they are.
    """
    counted = batch[Columns.LOSS_MASK].bool()
    behaviour_logp = batch[Columns.ACTION_LOGP]
    phantom = torch.full_like(behaviour_logp, PHANTOM_BEHAVIOUR_LOGP)
    return {**batch, Columns.ACTION_LOGP: torch.where(counted, behaviour_logp, phantom)}


class KerasAgentIMPALALearner(IMPALATorchLearner):
    """RLlib's IMPALA Learner (PyTorch) with `opt_type` honoured, the losses summed, V-trace
    bootstrapped at chunk ends and the gradient norm of each model part logged.

    `opt_type` "rmsprop" (the presets', Table 1's) trains with `RMSPropRootEpsilon` of the
    config's `decay`, `epsilon` and `momentum`; "adam" with `torch.optim.Adam`. The learning rate
    is the config's `lr`, a number or a schedule over environment steps. Each update logs
    `grad_norm/<part>` (the norm of the part's gradient after clipping, as the old stack's) under
    the module's results.
    """

    def configure_optimizers_for_module(self, module_id, config=None):
        module = self._module[module_id]
        params = self.get_parameters(module)
        if config.opt_type == "rmsprop":
            optimizer = RMSPropRootEpsilon(
                params,
                decay=float(config.decay),
                epsilon=float(config.epsilon),
                momentum=float(config.momentum),
            )
        else:
            optimizer = torch.optim.Adam(params)
        self.register_optimizer(
            module_id=module_id, optimizer=optimizer, params=params, lr_or_lr_schedule=config.lr
        )

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        """IMPALA's loss summed over the batch's counted timesteps, as on the old stack, with
        V-trace bootstrapped from the value after each chunk
        (`without_phantom_importance_weights`)."""
        mean_loss = super().compute_loss_for_module(
            module_id=module_id,
            config=config,
            batch=without_phantom_importance_weights(batch),
            fwd_out=fwd_out,
        )
        return mean_loss * torch.sum(batch[Columns.LOSS_MASK].float())

    def postprocess_gradients_for_module(self, *, module_id, config=None, module_gradients_dict):
        """RLlib's clipping, then the clipped gradient's norm per model part (logged)."""
        clipped = super().postprocess_gradients_for_module(
            module_id=module_id, config=config, module_gradients_dict=module_gradients_dict
        )
        for part, norm in self.part_norms(module_id, clipped).items():
            self.metrics.log_value(key=(module_id, f"grad_norm/{part}"), value=norm, window=1)
        return clipped

    def part_norms(self, module_id, gradients):
        """{part: norm of its gradients} of `{parameter: gradient}` of the module's Keras model
        (`model_part` of each variable's path, worked out once per module)."""
        parts = self._parts_of_parameters(module_id)
        squares = {}
        for parameter, gradient in gradients.items():
            part = parts.get(id(parameter))
            if gradient is not None and part is not None:
                squares[part] = squares.get(part, 0.0) + torch.sum(gradient.detach() ** 2)
        return {part: float(torch.sqrt(total)) for part, total in squares.items()}

    def _parts_of_parameters(self, module_id):
        """{id(parameter): its `model_part`} of the module's Keras model, cached."""
        cache = self.__dict__.setdefault("_model_parts", {})
        if module_id not in cache:
            cache[module_id] = {
                id(variable.value): model_part(variable.path)
                for variable in self.module[module_id].unwrapped().keras_model.trainable_weights
            }
        return cache[module_id]

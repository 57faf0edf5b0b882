"""The agent models in a `TorchRLModule` (RLlib's new API stack, Keras on PyTorch): the module's
parameters are the Keras model's trainable weights, its outputs the model's, and its state loads
into a model of the same agent on TensorFlow (what evaluation and the probes do).

Keras chooses its backend once per process, so the PyTorch side runs in a subprocess."""

import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

# Every agent with the options of `--model-config` changed from the paper's.
MODEL_CONFIGS = [
    ("relational", {}),
    ("simplicial", {}),
    ("relational", {"num_heads": 4, "key_dim": 8, "mlp_units": [32, 32], "jit_compile": False}),
    (
        "simplicial",
        {
            "conv_filters": [8, 16],
            "entity_dim": 32,
            "num_simplicial_heads": 2,
            "simplicial_key_dim": 16,
            "num_virtual_entities": 3,
            "feedforward_dim": 32,
            "num_block_iterations": 1,
            "layer_norm_epsilon": 1e-3,
            "simplicial_logit_scale": None,
            "simplicial_gain_initializer": "ones",
        },
    ),
]
OBSERVATION_SHAPE = (5, 7, 3)

ON_TORCH = r"""
import json, pickle, sys
import gymnasium, numpy as np, torch
from ray.rllib.core.columns import Columns
from keras_simplicial.agents.model.module_state import keras_weights
from keras_simplicial.agents.model.architecture import build_agent_model
from keras_simplicial.agents.model.torch_rl_module import KerasAgentRLModule

cases, shape, out = json.loads(sys.argv[1]), tuple(json.loads(sys.argv[2])), sys.argv[3]
observation_space = gymnasium.spaces.Box(0, 255, shape, np.uint8)
action_space = gymnasium.spaces.Discrete(4)
observations = np.random.default_rng(0).integers(0, 256, (6,) + shape).astype(np.uint8)
saved = []
for kind, config in cases:
    torch.manual_seed(0)
    module = KerasAgentRLModule(
        observation_space=observation_space, action_space=action_space,
        model_config={"kind": kind, **config},
    )
    model = module.keras_model
    parameters = list(module.parameters())
    trainable = model.trainable_weights
    assert len(parameters) == len(trainable), (len(parameters), len(trainable))
    assert sorted(p.numel() for p in parameters) == sorted(
        int(np.prod(w.shape)) for w in trainable)
    assert {id(p) for p in parameters} == {id(w.value) for w in trainable}
    batch = {Columns.OBS: torch.as_tensor(observations)}
    out_train = module.forward_train(batch)
    logits, value = model(torch.as_tensor(observations, dtype=torch.float32))
    torch.testing.assert_close(out_train[Columns.ACTION_DIST_INPUTS], logits)
    values = module.compute_values(batch, embeddings=out_train[Columns.EMBEDDINGS])
    assert values.shape == (6,)
    torch.testing.assert_close(values, value[:, 0])
    torch.testing.assert_close(module.compute_values(batch), value[:, 0])
    with torch.no_grad():
        inference = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    torch.testing.assert_close(inference, logits.detach())
    # Every parameter gets a gradient from the policy and value heads.
    (logits.sum() + value.sum()).backward()
    assert all(p.grad is not None for p in parameters)
    # The state (RLlib's weight sync and checkpoints) carries every weight to another module.
    state = module.get_state()
    assert len(state) == len(model.weights)
    torch.manual_seed(1)
    other = KerasAgentRLModule(
        observation_space=observation_space, action_space=action_space,
        model_config={"kind": kind, **config},
    )
    other.set_state(state)
    with torch.no_grad():
        torch.testing.assert_close(
            other.forward_inference(batch)[Columns.ACTION_DIST_INPUTS], inference)
    architecture = {k: v for k, v in config.items() if k != "jit_compile"}
    fresh = build_agent_model(kind, shape, 4, **architecture)
    fresh.set_weights(keras_weights(state, fresh))
    saved.append({"state": state, "logits": inference.numpy()})
with open(out, "wb") as stream:
    pickle.dump({"observations": observations, "cases": saved}, stream)
print("ok")
"""


def run_on_torch(tmp_path, cases):
    out = tmp_path / "states.pkl"
    env = {**os.environ, "KERAS_BACKEND": "torch", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", ON_TORCH, json.dumps(cases), json.dumps(OBSERVATION_SHAPE), out],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
    with open(out, "rb") as stream:
        return pickle.load(stream)


@pytest.mark.integration
def test_the_module_is_the_keras_model_and_its_state_loads_on_tensorflow(tmp_path):
    saved = run_on_torch(tmp_path, MODEL_CONFIGS)
    import keras

    from keras_simplicial.agents.model.architecture import build_agent_model
    from keras_simplicial.agents.model.module_state import keras_weights

    # This process runs Keras on its default backend, as `evaluate` does.
    for (kind, config), case in zip(MODEL_CONFIGS, saved["cases"]):
        architecture = {k: v for k, v in config.items() if k != "jit_compile"}
        model = build_agent_model(kind, OBSERVATION_SHAPE, 4, **architecture)
        model.set_weights(keras_weights(case["state"], model))
        logits, _ = model(saved["observations"].astype(np.float32))
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(logits), case["logits"], rtol=1e-4, atol=1e-5
        )


def test_a_state_of_another_architecture_is_refused_by_name():
    from keras_simplicial.agents.model.architecture import build_agent_model
    from keras_simplicial.agents.model.module_state import keras_weights

    model = build_agent_model("relational", OBSERVATION_SHAPE, 4, mlp_units=[8])
    state = {f"keras_model._torch_params.{w.path}": np.zeros(w.shape) for w in model.weights}
    other = build_agent_model("relational", OBSERVATION_SHAPE, 4, mlp_units=[16])
    with pytest.raises(ValueError, match="mlp_1/kernel has shape"):
        keras_weights(state, other)
    with pytest.raises(ValueError, match="holds no"):
        keras_weights({}, other)

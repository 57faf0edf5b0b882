"""BoxWorld and bridge BoxWorld (Section 3 of the paper) as gymnasium environments.

Importing this package registers ``BridgeBoxWorld-v0`` (``mode="bridge"``) and ``BoxWorld-v0``
(``mode="standard"``), each with a native vector entry point:

    import gymnasium as gym

    import keras_simplicial.envs  # registers the ids

    env = gym.make("BridgeBoxWorld-v0")
    vec = gym.make_vec("BridgeBoxWorld-v0", num_envs=64, vectorization_mode="vector_entry_point")

This package is the one home of the env ids (``ENV_IDS``) and of the step limit of episodes played
outside training (``EPISODE_STEP_LIMIT``, ``episode_step_limit``).
"""

from typing import Optional

from keras_simplicial.extras import missing_extra

try:
    import gymnasium as gym
except ModuleNotFoundError as error:
    raise missing_extra(error, "envs", "keras_simplicial.envs") from error

from .config import EPISODE_STEP_LIMIT, BoxWorldConfig, episode_step_limit
from .core import OBSTACLES, OUTCOMES, BoxWorldCore
from .logic import (
    GEM,
    Box,
    ProofStep,
    ProofTree,
    Puzzle,
    Sequent,
    SourceSink,
    is_obtainable,
    proof_tree,
    proposition,
    solve,
    source_sink,
)
from .palette import PALETTE, make_palette
from .single_env import BoxWorldEnv
from .vector_env import BoxWorldVectorEnv

BRIDGE_BOX_WORLD_ID = "BridgeBoxWorld-v0"
BOX_WORLD_ID = "BoxWorld-v0"
ENV_IDS = (BRIDGE_BOX_WORLD_ID, BOX_WORLD_ID)


def register_envs() -> None:
    """Register both ids with gymnasium (idempotent)."""
    for env_id, mode in ((BRIDGE_BOX_WORLD_ID, "bridge"), (BOX_WORLD_ID, "standard")):
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=f"{__name__}.single_env:BoxWorldEnv",
                vector_entry_point=f"{__name__}.vector_env:BoxWorldVectorEnv",
                kwargs={"mode": mode},
            )


def make_vector_env(
    env_id: str, num_envs: int, env_config: Optional[dict] = None, copy: bool = True
) -> BoxWorldVectorEnv:
    """``num_envs`` boards of the registered ``env_id`` with ``env_config`` as one vector env."""
    if env_id not in ENV_IDS:
        raise ValueError(f"env must be one of {ENV_IDS}, got {env_id!r}")
    arguments = {**gym.spec(env_id).kwargs, **dict(env_config or {})}
    return BoxWorldVectorEnv(int(num_envs), copy=copy, **arguments)


register_envs()

__all__ = [
    "BOX_WORLD_ID",
    "BRIDGE_BOX_WORLD_ID",
    "ENV_IDS",
    "EPISODE_STEP_LIMIT",
    "GEM",
    "OBSTACLES",
    "OUTCOMES",
    "PALETTE",
    "Box",
    "BoxWorldConfig",
    "BoxWorldCore",
    "BoxWorldEnv",
    "BoxWorldVectorEnv",
    "ProofStep",
    "ProofTree",
    "Puzzle",
    "Sequent",
    "SourceSink",
    "episode_step_limit",
    "is_obtainable",
    "make_palette",
    "make_vector_env",
    "proof_tree",
    "proposition",
    "register_envs",
    "solve",
    "source_sink",
]

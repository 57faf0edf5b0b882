"""A checkpoint's trained policy kept as Keras weights: what a finished run keeps of a checkpoint
that a figure, probe or test still plays, once RLlib's checkpoints (optimizer state included,
about twice the weights) are gone.

    folder = export_policy("runs/a/checkpoints/iter_000120")  # -> runs/a/exported/iter_000120
    agent, arguments = load_attention_agent(folder)           # wherever a checkpoint is taken

(`export_policy` and the loaders are in `checkpoints`; `keras-simplicial export-policy` on the
command line.) An exported policy is a folder:

    policy.weights.h5   the agent model's weights (`model.save_weights` of `build_agent_model`
                        for the run's agent and architecture), read on any Keras backend
    policy.json         what they are: the checkpoint they were read from (`checkpoint`, its name;
                        `source`, its path), its training iteration and environment steps, the
                        engine that wrote it, and the code that exported it (`provenance`)
    run.json            a copy of the run's arguments (agent, architecture, environment, masking),
                        as every checkpoint carries one
    manifest.json       the size and SHA-256 of each file (`checkpoint_integrity`), verified
                        before it is read

It is named after its checkpoint (`iter_000120`), so that the results a run cached of that
checkpoint, keyed by its name (`sweep.checkpoint_key`), stay its results.
"""

import json
from pathlib import Path

from keras_simplicial.agents.atomic_files import atomic_directory, atomic_write_json
from keras_simplicial.agents.training.checkpoint_integrity import write_manifest

POLICY_WEIGHTS = "policy.weights.h5"
POLICY_RECORD = "policy.json"
RUN_COPY = "run.json"
#: The keys of policy.json.
RECORD_KEYS = ("checkpoint", "source", "engine", "iteration", "timesteps", "exported_by")


def exported_policy_dir(path):
    """The exported policy at `path` (its folder, or one of its files), or None."""
    path = Path(path)
    folder = path.parent if path.name in (POLICY_WEIGHTS, POLICY_RECORD) else path
    is_policy = (folder / POLICY_WEIGHTS).is_file() and (folder / POLICY_RECORD).is_file()
    return folder if is_policy else None


def write_exported_policy(out, model, arguments, record):
    """Writes the exported policy of `model` (an agent model of `arguments`, a `RunArguments`)
    to the folder `out`, with `record` (`RECORD_KEYS`) as its policy.json; returns `out`.

    The folder is written under a temporary name beside `out` and renamed into place complete
    (over an earlier export of the same checkpoint): a reader sees the old folder or the new one.
    """
    missing = [key for key in RECORD_KEYS if key not in record]
    if missing:
        raise ValueError(f"the record of an exported policy lacks {missing}.")
    out = Path(out)
    with atomic_directory(out, prefix=f".{out.name}.exporting-") as staging:
        model.save_weights(staging / POLICY_WEIGHTS)
        atomic_write_json(staging / POLICY_RECORD, {key: record[key] for key in RECORD_KEYS})
        arguments.write(staging / RUN_COPY)
        write_manifest(staging)
    return out


def read_policy_record(folder):
    """The policy.json of the exported policy `folder`; a `ValueError` naming it when damaged."""
    path = Path(folder) / POLICY_RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is damaged: not valid JSON ({error}).") from None
    if not isinstance(record, dict) or not isinstance(record.get("checkpoint"), str):
        raise ValueError(f'{path} is damaged: expected {{"checkpoint": "iter_NNNNNN", ...}}.')
    return record


def load_exported_weights(folder, model):
    """Loads the weights of the exported policy `folder` into `model`, an agent model of its
    run's agent and architecture on any Keras backend."""
    model.load_weights(Path(folder) / POLICY_WEIGHTS)

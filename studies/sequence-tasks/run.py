"""Causal tasks in which order matters: does a 2-simplicial block in a small decoder learn them
better than a dot-product block of the same size, and at what cost per epoch? (The plan:
studies/sequence-tasks/preregistration.md.)

    .venv/bin/python studies/sequence-tasks/run.py --dry-run          # the plan, parameter counts
    nice -n 19 .venv/bin/python studies/sequence-tasks/run.py         # every run not done yet
    nice -n 19 .venv/bin/python studies/sequence-tasks/run.py --task pair-recall  # one task
    .venv/bin/python studies/sequence-tasks/report.py                 # then the page

One JSON per (task, model, seed) in studies/sequence-tasks/results/, written atomically; a run
whose JSON exists is skipped, so running the script again resumes. The constants below are fixed
by the pre-registration (whose SHA-256 each run records): change none of them after the first run.
"""

import argparse
import hashlib
import json
import os
from pathlib import Path

from keras_simplicial.agents.atomic_files import atomic_write_json
from keras_simplicial.agents.experiments import sequence_study

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
PREREGISTRATION = HERE / "preregistration.md"

SEEDS = (1, 2, 3, 4, 5, 6, 7, 8)
SETTINGS = sequence_study.Settings(
    tasks={
        "causal-match3": ("causal_match3", {"length": 12, "modulus": 31}),
        "pair-recall": ("pair_recall", {"num_keys": 8, "num_values": 8, "num_queries": 2}),
    },
    epochs=10,
    train_size=2000,
    test_size=1000,
    window=(8, 4),
)


def run_path(task, model_name, seed):
    return RESULTS / f"{task}--{model_name}--seed{seed}.json"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=sorted(SETTINGS.tasks), action="append")
    parser.add_argument("--model", choices=list(sequence_study.MODELS), action="append")
    parser.add_argument("--dry-run", action="store_true", help="print the plan; train nothing")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    sha = hashlib.sha256(PREREGISTRATION.read_bytes()).hexdigest()
    for task in args.task or sorted(SETTINGS.tasks):
        for model_name in args.model or list(sequence_study.MODELS):
            seeds = [s for s in SEEDS if not run_path(task, model_name, s).exists()]
            if args.dry_run:
                sample = sequence_study.task_data(SETTINGS, task, 1, 0, "train")
                shape = (*sample.inputs.shape[1:], sequence_study._classes(SETTINGS, task))
                width, count = sequence_study.matched_feedforward(SETTINGS, model_name, *shape)
                print(
                    json.dumps(
                        {
                            "task": task,
                            "model": model_name,
                            "feedforward": width,
                            "parameters": count,
                            "seeds_left": seeds,
                        }
                    )
                )
                continue
            for seed, record in sequence_study.train_runs(SETTINGS, task, model_name, seeds):
                record["preregistration_sha256"] = sha
                atomic_write_json(run_path(task, model_name, seed), record)
                print(task, model_name, seed, record["endpoint"], flush=True)


if __name__ == "__main__":
    main()

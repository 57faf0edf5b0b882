"""A copy of a study's shell script run against a stand-in `.venv`: its `python` is this
interpreter and its `keras-simplicial` is `FAKE_CLI` (or another script), so a test sees which
commands the script runs, in which order, without training anything."""

import sys

# Logs each call to $LOG and writes what the next step of a script reads: a DAgger run's
# dagger.json and best/, an evaluation winning $WIN (0 unless set), an `errors` result, a
# training run's run.json, metrics.csv (at --stop-timesteps) and checkpoints.
FAKE_CLI = r"""#!/usr/bin/env bash
echo "$*" >> "$LOG"
command=$1; shift
out=; output=; stop=
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift ;;
    --output) output=$2; shift ;;
    --stop-timesteps) stop=$2; shift ;;
  esac
  shift
done
case $command in
  dagger) mkdir -p "$out/best"; echo {} > "$out/dagger.json" ;;
  evaluate) echo "{\"overall\": {\"win_rate\": ${WIN:-0}}}" > "$output" ;;
  errors) echo {} > "$output" ;;
  train)
    mkdir -p "$out/checkpoints"; echo {} > "$out/run.json"
    printf 'training_iteration,timesteps\n1,%s\n' "$stop" > "$out/metrics.csv"
    echo iter_000001 > "$out/checkpoints/latest"
    echo '{"checkpoint": "iter_000001"}' > "$out/checkpoints/best.json" ;;
esac
"""


def fake_venv(root, cli=None):
    """`root/.venv/bin` with `python` (this interpreter) and, unless `cli` is None, a
    `keras-simplicial` whose text is `cli`."""
    bin_folder = root / ".venv" / "bin"
    bin_folder.mkdir(parents=True)
    tools = {"python": f'#!/bin/sh\nexec "{sys.executable}" "$@"\n'}
    if cli is not None:
        tools["keras-simplicial"] = cli
    for name, text in tools.items():
        (bin_folder / name).write_text(text)
        (bin_folder / name).chmod(0o755)

#!/usr/bin/env bash
# Bridge-small with the front end (front-end-rl-plan.md, step 3): run-bridge-small.sh (rl-plan.md's
# runs) with the front end's model instead of the remedy and its own results folder; starts only
# once the front end's bridge-medium pilot has decided. Resumable: run it again to go on.
set -euo pipefail
cd "$(dirname "$0")/../.."
decision=$(.venv/bin/python studies/trainability/report.py --front-end-pilot-decision)
if [ "$decision" = open ]; then
  echo "The front end's bridge-medium pilot has not decided: front-end-rl-plan.md runs this after it." >&2
  exit 1
fi
# On a line of its own: set -e stops here if report.py fails (in front of exec it would not, and
# the pilot's script would train its default, the remedy).
front_end=$(.venv/bin/python studies/trainability/report.py --front-end-config)
MODEL=$front_end OUT=studies/trainability/results/bridge-small-front-end \
  exec bash studies/trainability/run-bridge-small.sh

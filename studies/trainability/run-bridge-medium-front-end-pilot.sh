#!/usr/bin/env bash
# The front end's pilot on bridge-medium (front-end-rl-plan.md, step 2): run-bridge-medium-pilot.sh
# (pilot-plan.md's runs) with the front end's model instead of the remedy and its own results
# folder; starts only once the first pilot has decided. Resumable: run it again to go on.
set -euo pipefail
cd "$(dirname "$0")/../.."
decision=$(.venv/bin/python studies/trainability/report.py --pilot-decision)
if [ "$decision" = open ]; then
  echo "The first bridge-medium pilot has not decided: front-end-rl-plan.md runs this after it." >&2
  exit 1
fi
# On a line of its own: set -e stops here if report.py fails (in front of exec it would not, and
# the pilot's script would train its default, the remedy).
front_end=$(.venv/bin/python studies/trainability/report.py --front-end-config)
MODEL=$front_end OUT=studies/trainability/results/bridge-medium-front-end-pilot \
  exec bash studies/trainability/run-bridge-medium-pilot.sh

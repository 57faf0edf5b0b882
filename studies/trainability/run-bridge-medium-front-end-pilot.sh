#!/usr/bin/env bash
# The front end's pilot on bridge-medium (front-end-rl-plan.md, step 2): pilot-plan.md's runs with
# the front end's model instead of the remedy; starts only once the first pilot has decided.
# Seed 1 per agent, relational first, 20M steps, resumable: run it again to go on. Then the
# length-2 evaluation of each run's best checkpoint.
set -euo pipefail
cd "$(dirname "$0")/../.."
decision=$(.venv/bin/python studies/trainability/report.py --pilot-decision)
if [ "$decision" = open ]; then
  echo "The first bridge-medium pilot has not decided: front-end-rl-plan.md runs this after it." >&2
  exit 1
fi
FRONT_END='{"entity_norm": true, "mlp_units": [256], "centre_pixels": true, "conv_filters": [128, 128]}'
OUT=studies/trainability/results/bridge-medium-front-end-pilot
for agent in relational simplicial; do
  nice -n 19 .venv/bin/keras-simplicial sweep --preset bridge-medium --engine keras \
    --agents "$agent" --seeds 1 --model-config "$FRONT_END" \
    --stop-timesteps 20000000 --eval-episodes 1000 --out "$OUT"
  run="$OUT/$agent-seed1"
  best=$(.venv/bin/python -c 'import json, sys; print(json.load(open(sys.argv[1]))["checkpoint"])' \
    "$run/checkpoints/best.json")
  [ -f "$run/evaluation_best_greedy_length2.json" ] || nice -n 19 .venv/bin/keras-simplicial \
    evaluate "$run/checkpoints/$best" --greedy --episodes 1000 \
    --env-config '{"min_solution_length": 2}' --output "$run/evaluation_best_greedy_length2.json"
done

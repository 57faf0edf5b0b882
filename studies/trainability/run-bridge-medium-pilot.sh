#!/usr/bin/env bash
# The bridge-medium pilot (pilot-plan.md): the remedy on bridge-medium at its default preset on
# the Keras engine, seed 1 per agent, 20M steps, relational first; resumable: run it again to go
# on. Then the length-2 evaluation of each run's best checkpoint (pilot-plan.md, section 4).
# MODEL and OUT in the environment replace the remedy and the results folder
# (run-bridge-medium-front-end-pilot.sh: the front end's pilot).
set -euo pipefail
cd "$(dirname "$0")/../.."
# The remedy on the architecture's defaults, whole: the presets' own model is the front end.
REMEDY='{"entity_norm": true, "mlp_units": [256], "centre_pixels": false, "conv_filters": [12, 24]}'
MODEL=${MODEL:-$REMEDY}
OUT=${OUT:-studies/trainability/results/bridge-medium-pilot}
for agent in relational simplicial; do
  nice -n 19 .venv/bin/keras-simplicial sweep --preset bridge-medium --engine keras \
    --agents "$agent" --seeds 1 --model-config "$MODEL" \
    --stop-timesteps 20000000 --eval-episodes 1000 --out "$OUT"
  run="$OUT/$agent-seed1"
  best=$(.venv/bin/python -c 'import json, sys; print(json.load(open(sys.argv[1]))["checkpoint"])' \
    "$run/checkpoints/best.json")
  [ -f "$run/evaluation_best_greedy_length2.json" ] || nice -n 19 .venv/bin/keras-simplicial \
    evaluate "$run/checkpoints/$best" --greedy --episodes 1000 \
    --env-config '{"min_solution_length": 2}' --output "$run/evaluation_best_greedy_length2.json"
done

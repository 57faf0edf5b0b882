#!/usr/bin/env bash
# The remedy in RL (rl-plan.md): bridge-small at its default preset on the Keras engine, seeds 1-8,
# seed by seed, simplicial then relational; resumable: run it again to go on. SEEDS="2" trains
# seed 2 only. MODEL and OUT in the environment replace the remedy and the results folder
# (run-bridge-small-front-end.sh: bridge-small with the front end).
set -euo pipefail
cd "$(dirname "$0")/../.."
# The remedy on the architecture's defaults, whole: the presets' own model is the front end.
REMEDY='{"entity_norm": true, "mlp_units": [256], "centre_pixels": false, "conv_filters": [12, 24]}'
MODEL=${MODEL:-$REMEDY}
OUT=${OUT:-studies/trainability/results/bridge-small}
for seed in ${SEEDS:-1 2 3 4 5 6 7 8}; do
  for agent in simplicial relational; do
    nice -n 19 .venv/bin/keras-simplicial sweep --preset bridge-small --engine keras \
      --agents "$agent" --seeds "$seed" --model-config "$MODEL" \
      --stop-timesteps 3000000 --eval-episodes 1000 \
      --out "$OUT"
  done
done

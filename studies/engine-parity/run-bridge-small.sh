#!/usr/bin/env bash
# The Keras engine on bridge-small with stage E's recipe (preregistration.md, addendum), seed by
# seed, simplicial then relational: resumable, run it again to go on. SEEDS="2" trains seed 2 only.
# The model its runs trained: the presets' model before the front end (`pre-front-end`).
set -euo pipefail
cd "$(dirname "$0")/../.."
for seed in ${SEEDS:-1 2}; do
  for agent in simplicial relational; do
    nice -n 19 .venv/bin/keras-simplicial sweep --preset bridge-small --engine keras \
      --agents "$agent" --seeds "$seed" \
      --env-config '{"random_start": true}' --mask-blocked-moves \
      --stop-timesteps 3000000 --eval-episodes 1000 --model-config pre-front-end \
      --out studies/engine-parity/results/bridge-small
  done
done

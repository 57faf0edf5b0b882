#!/usr/bin/env bash
# The Keras engine's runs of the parity study (preregistration.md), seed by seed, both agents:
# resumable, run it again to go on. SEEDS="3 4" trains those seeds only.
# The model its runs trained: the presets' model before the front end (`pre-front-end`).
set -euo pipefail
cd "$(dirname "$0")/../.."
for seed in ${SEEDS:-1 2 3 4 5}; do
  nice -n 19 .venv/bin/keras-simplicial sweep --preset easy --engine keras \
    --agents relational simplicial --seeds "$seed" --stop-timesteps 600000 \
    --budget 100000 200000 300000 400000 500000 --eval-episodes 1000 --model-config pre-front-end \
    --config '{"_tf_policy_handles_more_than_one_loss": false}' \
    --out studies/engine-parity/results/keras
done

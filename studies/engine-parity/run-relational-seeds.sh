#!/usr/bin/env bash
# The relational agent on seeds 6-15, both engines (preregistration.md, addendum 2), seed by
# seed, the old stack then the Keras engine: resumable, run it again to go on. SEEDS="6 7" trains
# those seeds only.
# The model its runs trained: the presets' model before the front end (`pre-front-end`).
set -euo pipefail
cd "$(dirname "$0")/../.."
for seed in ${SEEDS:-6 7 8 9 10 11 12 13 14 15}; do
  for engine in rllib-old keras; do
    nice -n 19 .venv/bin/keras-simplicial sweep --preset easy --engine "$engine" \
      --agents relational --seeds "$seed" --stop-timesteps 600000 \
      --budget 500000 --eval-episodes 1000 --model-config pre-front-end \
      --config '{"_tf_policy_handles_more_than_one_loss": false}' \
      --out "studies/engine-parity/results/relational-seeds/$engine"
  done
done

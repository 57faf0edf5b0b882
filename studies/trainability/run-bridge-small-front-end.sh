#!/usr/bin/env bash
# Bridge-small with the front end (front-end-rl-plan.md, step 3): rl-plan.md's runs with the front
# end's model instead of the remedy; starts only once the front end's bridge-medium pilot has
# decided. Seeds 1-8, seed by seed, simplicial then relational; resumable: run it again to go on.
set -euo pipefail
cd "$(dirname "$0")/../.."
decision=$(.venv/bin/python studies/trainability/report.py --front-end-pilot-decision)
if [ "$decision" = open ]; then
  echo "The front end's bridge-medium pilot has not decided: front-end-rl-plan.md runs this after it." >&2
  exit 1
fi
FRONT_END='{"entity_norm": true, "mlp_units": [256], "centre_pixels": true, "conv_filters": [128, 128]}'
for seed in ${SEEDS:-1 2 3 4 5 6 7 8}; do
  for agent in simplicial relational; do
    nice -n 19 .venv/bin/keras-simplicial sweep --preset bridge-small --engine keras \
      --agents "$agent" --seeds "$seed" --model-config "$FRONT_END" \
      --stop-timesteps 3000000 --eval-episodes 1000 \
      --out studies/trainability/results/bridge-small-front-end
  done
done

#!/usr/bin/env bash
# The paper's comparison on bridge-medium (comparison-plan.md): runs only when the pilot's
# decision (pilot-plan.md, section 5) is "go". The remedy for both agents on the Keras engine,
# seeds 2-6, relational then simplicial for each seed, 20M steps; resumable: run it again to go
# on. Then each run's best and final checkpoints, greedily, on 1,000 length-2 episodes.
set -euo pipefail
cd "$(dirname "$0")/../.."
decision=$(.venv/bin/python studies/trainability/report.py --pilot-decision)
if [ "$decision" != go ]; then
  echo "The bridge-medium pilot's decision is '$decision', not 'go': comparison-plan.md runs only on go." >&2
  exit 1
fi
REMEDY='{"entity_norm": true, "mlp_units": [256]}'
OUT=studies/trainability/results/bridge-medium-comparison
for seed in ${SEEDS:-2 3 4 5 6}; do
  for agent in relational simplicial; do
    nice -n 19 .venv/bin/keras-simplicial sweep --preset bridge-medium --engine keras \
      --agents "$agent" --seeds "$seed" --model-config "$REMEDY" \
      --stop-timesteps 20000000 --eval-episodes 1000 --out "$OUT"
    run="$OUT/$agent-seed$seed"
    best=$(.venv/bin/python -c 'import json, sys; print(json.load(open(sys.argv[1]))["checkpoint"])' \
      "$run/checkpoints/best.json")
    final=$(cat "$run/checkpoints/latest")
    for kind in best final; do
      checkpoint=$best; [ "$kind" = final ] && checkpoint=$final
      [ -f "$run/evaluation_${kind}_greedy_length2.json" ] && continue
      nice -n 19 .venv/bin/keras-simplicial evaluate "$run/checkpoints/$checkpoint" --greedy \
        --episodes 1000 --env-config '{"min_solution_length": 2}' \
        --output "$run/evaluation_${kind}_greedy_length2.json"
    done
  done
done

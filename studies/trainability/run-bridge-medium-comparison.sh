#!/usr/bin/env bash
# The paper's comparison on bridge-medium (comparison-plan.md): runs only when the committed
# results call for it (front-end-rl-plan.md, section 3: a pilot said go), with the model they
# name (the front end's, or the remedy's) for both agents on the Keras engine,
# seeds 2-6, relational then simplicial for each seed, 20M steps; resumable: run it again to go
# on. Then each run's best and final checkpoints, greedily, on 1,000 length-2 episodes.
set -euo pipefail
cd "$(dirname "$0")/../.."
campaign=$(.venv/bin/python studies/trainability/report.py --campaign)
field() {  # NAME: a field of the answer (a string as it is, anything else as JSON)
  .venv/bin/python -c 'import json, sys; v = json.loads(sys.argv[1])[sys.argv[2]]; print(v if isinstance(v, str) else json.dumps(v))' "$campaign" "$1"
}
if [ "$(field campaign)" != comparison ]; then
  echo "The committed results call for '$(field campaign)', not 'comparison' (front-end-rl-plan.md, section 3)." >&2
  exit 1
fi
MODEL=$(field model_config)
OUT=studies/trainability/results/bridge-medium-comparison
for seed in ${SEEDS:-2 3 4 5 6}; do
  for agent in relational simplicial; do
    nice -n 19 .venv/bin/keras-simplicial sweep --preset bridge-medium --engine keras \
      --agents "$agent" --seeds "$seed" --model-config "$MODEL" \
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

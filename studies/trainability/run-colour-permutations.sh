#!/usr/bin/env bash
# After the label curve (colour-permutations-plan.md): runs only once both agents' curves are read
# and at least one is not flat. For each agent, relational first, the curve's share-1.0 run again
# with each batch's key colours permuted afresh, evaluated greedily on rung 1's 1,000 length-2
# episodes and its errors measured there. Resumable: run it again to go on.
set -euo pipefail
cd "$(dirname "$0")/../.."
LADDER=keras_simplicial.agents.experiments.trainability_ladder  # the plans' numbers and rules
RESULTS=studies/trainability/results
due=$(.venv/bin/python -c "from $LADDER import colour_permutations_due, label_curve_runs; d = colour_permutations_due(label_curve_runs('$RESULTS/label-curve')); print({None: 'open', True: 'due', False: 'flat'}[d])")
if [ "$due" != due ]; then
  echo "The label curve reads '$due': no colour permutations (colour-permutations-plan.md)."
  exit 0
fi
LENGTH_2='{"min_solution_length": 2}'
for agent in relational simplicial; do
  run="$RESULTS/colour-permutations/$agent-share-1.0"
  if [ -f "$run/dagger.json" ]; then
    nice -n 19 .venv/bin/keras-simplicial dagger --resume --out "$run"
  else
    # The label curve's share-1.0 run with one change: the same labels, seed and epoch cap.
    nice -n 19 .venv/bin/keras-simplicial dagger --preset bridge-medium --agent "$agent" \
      --seed 1 --rounds 0 --labels-from "$RESULTS/bridge-medium-dagger/$agent-seed1" \
      --labels-share 1.0 --max-epochs 12 --augment colour-permutations --out "$run"
  fi
  [ -f "$run/evaluation_best_greedy_length2.json" ] || nice -n 19 .venv/bin/keras-simplicial \
    evaluate "$run/best" --greedy --episodes 1000 --env-config "$LENGTH_2" \
    --output "$run/evaluation_best_greedy_length2.json"
  [ -f "$run/errors_best_length2.json" ] || nice -n 19 .venv/bin/keras-simplicial errors \
    "$run/best" --episodes 1000 --env-config "$LENGTH_2" --output "$run/errors_best_length2.json"
done

#!/usr/bin/env bash
# After rung 1 (label-curve-plan.md): runs only when rung 1 has stopped the ladder (neither best
# model at 0.9 of the length-2 episodes). For each agent, fresh models on nested shares of its
# rung-1 run's labelled episodes, relational first and the smallest share first, each evaluated
# greedily on rung 1's 1,000 length-2 episodes and its errors measured there. Resumable: run it
# again to go on.
set -euo pipefail
cd "$(dirname "$0")/../.."
LADDER=keras_simplicial.agents.experiments.trainability_ladder  # the plans' numbers and rules
RESULTS=studies/trainability/results
answer=$(.venv/bin/python -c "from $LADDER import dagger_runs, rung_1_answer; a = rung_1_answer(dagger_runs('$RESULTS/bridge-medium-dagger')); print('open' if a is None else a['answer'])")
if [ "$answer" != stop ]; then
  echo "Rung 1's answer is '$answer', not 'stop': no label curve (label-curve-plan.md)."
  exit 0
fi
SHARES=$(.venv/bin/python -c "from $LADDER import LABEL_SHARES; print(*LABEL_SHARES)")
LENGTH_2='{"min_solution_length": 2}'
for agent in relational simplicial; do
  for share in $SHARES; do
    run="$RESULTS/label-curve/$agent-share-$share"
    if [ -f "$run/dagger.json" ]; then
      nice -n 19 .venv/bin/keras-simplicial dagger --resume --out "$run"
    else
      # The same updates at most for every share: 12 epochs over all the labels.
      epochs=$(.venv/bin/python -c "import sys; from $LADDER import label_curve_epochs; print(label_curve_epochs(float(sys.argv[1])))" "$share")
      nice -n 19 .venv/bin/keras-simplicial dagger --preset bridge-medium --agent "$agent" \
        --seed 1 --rounds 0 --labels-from "$RESULTS/bridge-medium-dagger/$agent-seed1" \
        --labels-share "$share" --max-epochs "$epochs" --out "$run"
    fi
    [ -f "$run/evaluation_best_greedy_length2.json" ] || nice -n 19 .venv/bin/keras-simplicial \
      evaluate "$run/best" --greedy --episodes 1000 --env-config "$LENGTH_2" \
      --output "$run/evaluation_best_greedy_length2.json"
    [ -f "$run/errors_best_length2.json" ] || nice -n 19 .venv/bin/keras-simplicial errors \
      "$run/best" --episodes 1000 --env-config "$LENGTH_2" --output "$run/errors_best_length2.json"
  done
done

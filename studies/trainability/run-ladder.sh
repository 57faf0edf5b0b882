#!/usr/bin/env bash
# The ladder on no-go (ladder-plan.md): runs only when the committed results call for it
# (front-end-rl-plan.md, section 3: both pilots said no-go), with the model they name (the front
# end's). Rung 1: tie-aware DAgger with it, relational then simplicial, each best model
# evaluated greedily on 1,000 length-2 episodes and its errors measured (errors-plan.md). Rung 2: RL started from each rung-1 model that won
# at least 0.9 of them, 5M steps, then the same evaluation of its best and final checkpoints.
# Resumable: run it again to go on.
set -euo pipefail
cd "$(dirname "$0")/../.."
campaign=$(.venv/bin/python studies/trainability/report.py --campaign)
field() {  # NAME: a field of the answer (a string as it is, anything else as JSON)
  .venv/bin/python -c 'import json, sys; v = json.loads(sys.argv[1])[sys.argv[2]]; print(v if isinstance(v, str) else json.dumps(v))' "$campaign" "$1"
}
if [ "$(field campaign)" != ladder ]; then
  echo "The committed results call for '$(field campaign)', not 'ladder' (front-end-rl-plan.md, section 3)." >&2
  exit 1
fi
MODEL=$(field model_config)
LENGTH_2='{"min_solution_length": 2}'
LADDER=keras_simplicial.agents.experiments.trainability_ladder  # ladder-plan.md's numbers
RUNG_2_STEPS=$(.venv/bin/python -c "from $LADDER import RUNG_2_STEPS; print(RUNG_2_STEPS)")
RESULTS=studies/trainability/results
length2() {  # CHECKPOINT OUTPUT: the greedy length-2 evaluation, once
  [ -f "$2" ] || nice -n 19 .venv/bin/keras-simplicial evaluate "$1" --greedy --episodes 1000 \
    --env-config "$LENGTH_2" --output "$2"
}
for agent in relational simplicial; do
  dagger="$RESULTS/bridge-medium-dagger/$agent-seed1"
  if [ -f "$dagger/dagger.json" ]; then
    nice -n 19 .venv/bin/keras-simplicial dagger --resume --out "$dagger"
  else
    nice -n 19 .venv/bin/keras-simplicial dagger --preset bridge-medium --agent "$agent" \
      --seed 1 --model-config "$MODEL" --out "$dagger"
  fi
  length2 "$dagger/best" "$dagger/evaluation_best_greedy_length2.json"
  # errors-plan.md: where its greedy play goes wrong, on the same episodes (it trains nothing).
  [ -f "$dagger/errors_best_length2.json" ] || nice -n 19 .venv/bin/keras-simplicial errors \
    "$dagger/best" --episodes 1000 --env-config "$LENGTH_2" --output "$dagger/errors_best_length2.json"
done
for agent in relational simplicial; do
  dagger="$RESULTS/bridge-medium-dagger/$agent-seed1"
  passed=$(.venv/bin/python -c "import sys; from $LADDER import rung_1_passed; print(rung_1_passed(sys.argv[1]))" \
    "$dagger/evaluation_best_greedy_length2.json")
  if [ "$passed" != True ]; then
    echo "Rung 1: the $agent model does not pass (ladder-plan.md, rung 1): no rung 2 for it."
    continue
  fi
  run="$RESULTS/bridge-medium-from-dagger/$agent-seed1"
  # As a sweep does (`sweep.train_or_resume`): a finished run is left as it is, a checkpointed one
  # resumed, one cut off before its first checkpoint started again.
  steps=$(.venv/bin/python -c 'import sys; from keras_simplicial.agents.experiments.sweep import trained_steps; print(trained_steps(sys.argv[1]))' "$run")
  if [ "$steps" -ge "$RUNG_2_STEPS" ]; then
    echo "Rung 2: the $agent run has its $RUNG_2_STEPS steps."
  elif [ -f "$run/checkpoints/latest" ]; then
    nice -n 19 .venv/bin/keras-simplicial train --resume --out "$run" \
      --stop-timesteps "$RUNG_2_STEPS"
  else
    rm -rf "$run"
    nice -n 19 .venv/bin/keras-simplicial train --preset bridge-medium --engine keras \
      --agent "$agent" --seed 1 --model-config "$MODEL" --init-policy "$dagger/best" \
      --stop-timesteps "$RUNG_2_STEPS" --out "$run"
  fi
  best=$(.venv/bin/python -c 'import json, sys; print(json.load(open(sys.argv[1]))["checkpoint"])' \
    "$run/checkpoints/best.json")
  length2 "$run/checkpoints/$best" "$run/evaluation_best_greedy_length2.json"
  length2 "$run/checkpoints/$(cat "$run/checkpoints/latest")" "$run/evaluation_final_greedy_length2.json"
done

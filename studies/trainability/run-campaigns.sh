#!/usr/bin/env bash
# The trainability study's RL campaigns in front-end-rl-plan.md's order, from where they stand:
# the first bridge-medium pilot (run-bridge-medium-pilot.sh), the front end's pilot, bridge-small
# with the front end, the easy preset with it where bridge-small held (defaults-plan.md), then
# what the committed results call for (`report.py --campaign`): the comparison or the ladder
# (and after its rung 1, where that stops it, the label curve: label-curve-plan.md, then colour
# permutations where a curve is not flat: colour-permutations-plan.md).
# Each step resumes its runs and skips the finished ones; one that refuses (the step before it has
# not decided) or fails stops the chain. Run it again to go on.
set -euo pipefail
cd "$(dirname "$0")/../.."
unset MODEL OUT SEEDS  # the steps' own settings, which an exported variable would replace
STUDY=studies/trainability
bash "$STUDY/run-bridge-medium-pilot.sh"
bash "$STUDY/run-bridge-medium-front-end-pilot.sh"
bash "$STUDY/run-bridge-small-front-end.sh"
bash "$STUDY/run-easy-front-end.sh"
next=$(.venv/bin/python "$STUDY/report.py" --campaign |
  .venv/bin/python -c 'import json, sys; print(json.load(sys.stdin)["campaign"])')
case "$next" in
  comparison) exec bash "$STUDY/run-bridge-medium-comparison.sh" ;;
  ladder)
    bash "$STUDY/run-ladder.sh"
    bash "$STUDY/run-label-curve.sh" # runs only once rung 1 has stopped the ladder
    exec bash "$STUDY/run-colour-permutations.sh" # only once a label curve is read, not flat
    ;;
  *)
    echo "The committed results call for '$next' after bridge-small with the front end." >&2
    exit 1
    ;;
esac

#!/usr/bin/env bash
# The check before the front end becomes every preset's default (defaults-plan.md): the easy
# preset's acceptance runs (both agents, seeds 1-5, 600,000 steps, RLlib's old stack) with the
# front end; starts only once bridge-small with the front end has finished, and trains nothing
# when it did not hold. Resumable: run it again to go on.
set -euo pipefail
cd "$(dirname "$0")/../.."
decision=$(.venv/bin/python studies/trainability/report.py --bridge-small-front-end-decision)
case "$decision" in
  open)
    echo "Bridge-small with the front end has not finished: defaults-plan.md runs after it." >&2
    exit 1
    ;;
  does-not-hold)
    echo "Bridge-small with the front end did not hold: defaults-plan.md's check does not run."
    exit 0
    ;;
  holds) ;;
  *)
    echo "report.py --bridge-small-front-end-decision answered '$decision'." >&2
    exit 1
    ;;
esac
nice -n 19 .venv/bin/keras-simplicial sweep --preset easy --engine rllib-old \
  --agents relational simplicial --seeds 1 2 3 4 5 --stop-timesteps 600000 --budget 300000 500000 --model-config front-end \
  --eval-episodes 1000 --out studies/trainability/results/easy-front-end

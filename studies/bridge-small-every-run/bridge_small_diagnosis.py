"""The command of `keras_simplicial.agents.experiments.bridge_small_diagnosis`, whose docstring says
what it does and how to run it; the logic lives in the package, where its tests import it."""

import sys

from keras_simplicial.agents.experiments.bridge_small_diagnosis import main

if __name__ == "__main__":
    sys.exit(main())

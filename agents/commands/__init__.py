"""The `keras-simplicial` commands: each command's arguments beside the function that runs it,
one light module per group (`keras_simplicial_cli` builds the parser from `COMMANDS`).

    training.py     train (and --resume), export-policy
    inspection.py   evaluate and the looks inside: plot, summary, visualize, explain, probe,
                    inventory, plot-types, policy-map, errors, imitate,
                    held-keys, held-keys-budget
    experiments.py  sweep, reproduce, dagger
    play.py         play
    arguments.py    what they share: `Command`, the value parsers, the flags generated from
                    `RunArguments`

Light: importing them loads no Keras, TensorFlow, RLlib, gymnasium or matplotlib; a command
imports what it needs when it runs, so `--help` and argument errors answer at once.
"""

from keras_simplicial.agents.commands import experiments, inspection, play, training

# In the order of `keras-simplicial --help`.
COMMANDS = (
    *training.COMMANDS,
    *inspection.COMMANDS,
    *play.COMMANDS,
    *experiments.COMMANDS,
)

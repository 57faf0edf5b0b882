"""`keras-simplicial play`: (bridge) BoxWorld in the terminal. It needs the environments only
(gymnasium), not Keras or TensorFlow; `python -m keras_simplicial.envs.play` takes the same
options (a test keeps them equal)."""

from keras_simplicial.agents.commands.arguments import Command, json_object
from keras_simplicial.agents.training.run_arguments import ENVS


def play_arguments(parser):
    parser.add_argument("--env", default=ENVS[0], choices=ENVS, help="default: %(default)s")
    parser.add_argument("--seed", type=int, default=None, help="seed of the first puzzle")
    parser.add_argument(
        "--env-config",
        type=json_object("--env-config"),
        default={},
        help="JSON object of environment arguments, e.g. '{\"max_solution_length\": 2}'",
    )


def play(args):
    from keras_simplicial.envs.play import main

    return main(args.env, seed=args.seed, env_config=args.env_config)


COMMANDS = (
    Command(
        "play",
        play_arguments,
        play,
        "play (bridge) BoxWorld yourself in the terminal",
        description="Arrow keys or h/j/k/l move, ? takes a step of the shortest plan, r draws a "
        "new puzzle, q quits. Without a terminal, keys are read from stdin, e.g. "
        "echo 'l l j q' | keras-simplicial play",
        extra="envs",
    ),
)

"""Training the agents with IMPALA (Table 1), on any engine, and what a run leaves on disk.

train.py               train(): a run, top to bottom; the loop every engine shares
engines.py             ENGINES: one record per engine, gathered from the rooms below
engine_record.py       Engine: what a record says (config builder, trainer, checkpoints, backend)
iteration.py           Iteration: what one training iteration reports, on every engine
keras_engine/          the Keras engine: IMPALA in one process, no Ray, on any Keras backend
rllib/                 the RLlib adapter: IMPALA on RLlib's old and new API stacks
presets.py             Table 1's hyperparameters and the presets (plain data)
run_arguments.py       RunArguments: a run's arguments, declared once (flags, run.json, engines)
vtrace.py              V-trace targets and the IMPALA loss (the Keras engine's, in keras.ops)
board_episodes.py      BoardEpisodes: each board's episode so far, and what an ended one reports
metric_rows.py         each episode's metrics, and the metrics.csv row of an `Iteration`
attention_health.py    attention statistics and trainability of the weights, every row
greedy_check.py        GreedyCheck: a saved checkpoint played greedily, to pick the best
run_directory.py       RunDirectory: run.json, metrics.csv, events, checkpoints, plots
checkpoints.py         loading a checkpoint's policy or agent, of any engine
checkpoint_integrity.py  manifests: a damaged checkpoint is named, never half-loaded
exported_policy.py     a checkpoint's policy as Keras weights, the format to share
curve.py               the learning curve of a run
progress.py            the progress display
"""

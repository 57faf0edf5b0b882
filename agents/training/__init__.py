"""Training the agents with IMPALA on Ray RLlib (Table 1), and what a run leaves on disk.

impala.py              impala_config: Table 1's hyperparameters, the presets, ResilientIMPALA
rllib_envs.py          the env ids for RLlib, and the batched core as an RLlib VectorEnv
batched_env_runner.py  BatchedEnvRunner: an env runner stepping all its boards as one batch
metrics.py             win rates from every episode, and the metrics row of an iteration
diagnostics.py         gradient norms per model part and attention health
run_arguments.py       RunArguments: what a run trains, read from and written to run.json
run_directory.py       RunDirectory: run.json, metrics.csv, events, checkpoints, plots
checkpoints.py         loading a checkpoint's policy or agent
progress.py            the progress display
train.py               train(): a run, top to bottom
"""

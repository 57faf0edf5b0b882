"""Training the agents with IMPALA on Ray RLlib (Table 1), and what a run leaves on disk.

presets.py             Table 1's hyperparameters and the presets (plain data)
run_arguments.py       RunArguments: a run's arguments, declared once (flags, run.json, IMPALA)
impala.py              impala_config(RunArguments): IMPALA on RLlib's old API stack; ResilientIMPALA
impala_torch.py        torch_impala_config(RunArguments): IMPALA on the new API stack (PyTorch)
torch_learner.py       KerasAgentIMPALALearner: the new stack's Learner with Table 1's RMSProp
new_stack.py           a new-stack algorithm's results and counters in the old stack's terms
rllib_envs.py          the env ids for RLlib, and the batched core as an RLlib VectorEnv
batched_env_runner.py  BatchedEnvRunner: an env runner stepping all its boards as one batch
board_episodes.py      BoardEpisodes: each board's episode so far, and what an ended one reports
metrics.py             win rates from every episode, and the metrics row of an iteration
diagnostics.py         gradient norms per model part and attention health
run_directory.py       RunDirectory: run.json, metrics.csv, events, checkpoints, plots
checkpoints.py         loading a checkpoint's policy or agent
progress.py            the progress display
train.py               train(): a run, top to bottom
"""

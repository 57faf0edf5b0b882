"""Supervised learning of the oracle's moves: can an agent model hold the plan at all?

    labelled_play.py     episodes on fresh boards, each state labelled with its optimal actions
    dagger_config.py     DaggerConfig: the settings of a run (dagger.json)
    dagger.py            tie-aware DAgger: the learner trained on the states it reaches itself
    dagger_directory.py  a DAgger run's files, resumable after a crash at any moment
    rounds_table.py      the rounds of a DAgger run as a table (`keras-simplicial summary`)
    plateau.py           PlateauSchedule: how a probe trains to a plateau
    held_keys.py         the held-keys probe: can a fresh model tell which two keys it holds?
    held_keys_budget.py  the probe taken to a budget of updates, resumable
    held_keys_diagnosis.py  why a held-keys model stays at the constant prediction
    held_keys_study.py   the held-keys study's runs, as its plans fix them
    trainability_study.py  the trainability study's runs, as its plans fix them

It imports the model, the rollout, training (run files, checkpoints) and analysis (summaries of
greedy games); nothing below it imports it.
"""

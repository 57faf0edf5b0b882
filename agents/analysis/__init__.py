"""Looking inside trained agents (Section 6, Appendices B and C). Episodes are played through
`keras_simplicial.agents.rollout`, as training's checks play them.

results.py             the shape of every result a command prints or saves: a dataclass with
                       to_dict() (JSON, `--output`) and to_markdown() (what it prints)
episode.py             play_episode: one episode recorded step by step
evaluation.py          evaluate_checkpoint: win rates per puzzle type (an Evaluation)
training_table.py      run_summary: a run's training per window of steps, its evaluations
bridge_rule.py         the source/sink rule (Remark B.1) on what an agent sees
explanations.py        explain_episode: one episode read as a proof (Appendix B)
logic_probe.py         logic_probe: bridge avoidance where the rule applies and where not
policy_map.py          the policy with the player moved to every free tile
attention_figures.py   attention maps and episode GIFs (Section 6.1)
training_curves.py     win rate against steps (Figures 3-5, Appendix C)
win_rate_figures.py    win rate per puzzle type (Figures 10, 11)
"""

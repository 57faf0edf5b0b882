"""Experiments over many runs: sweeps of agents x seeds, the paper's comparison and its report.

- `sweep`: train or resume each run of a sweep folder; evaluations cached per checkpoint.
- `learning`: learning over seeds on a preset (`keras-simplicial sweep`).
- `reproduce`: the paper's comparison at any preset, training then report
  (`keras-simplicial reproduce`).
- `findings`: what a comparison found, from its run directories alone.
- `statistics`: is one agent ahead over a few seeds (permutation test, bootstrap, sustained steps).
- `setting`: how the runs differ from the paper's (puzzles, architecture, recipe, actors).
- `report`: the comparison's report in Markdown.
- `throughput`: frames/s of both agents back to back in the runs' layout (Appendix C).
- `trainability_rl`: the trainability study's RL campaigns and the pilots' go/no-go.
- `trainability_ladder`: the ladder on no-go (DAgger, then RL from its model), rung by rung.
"""

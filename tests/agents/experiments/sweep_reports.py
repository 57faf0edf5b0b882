"""A sweep's `learning_curve.json` as the benchmark scripts that apply a rule read it."""


def sweep_report(steps, within=1.0, final=1.0, agents=("relational", "simplicial")):
    """Runs of `agents` x seeds 1, 2, ... whose training win rate reached 0.99 at `steps` (None:
    never), whose best checkpoint of the first 500,000 steps won `within` and whose final one won
    `final` of their greedy episodes."""
    runs = {}
    for agent in agents:
        for seed, reached in enumerate(steps, start=1):
            runs[f"{agent}-seed{seed}"] = {
                "agent": agent,
                "seed": seed,
                "steps_to": {"0.99": reached},
                "budget_evaluations": {"500000": {"greedy": {"win_rate": within}}},
                "evaluations": {"final": {"greedy": {"win_rate": final}}},
            }
    return {"runs": runs}

"""`AttentionHealth`: the attention statistics of an agent's weights that every metrics row carries,
on any Keras backend (no TensorFlow, no RLlib: the Keras engine reads it on JAX too).

On a fixed probe batch of start positions: the entropy of the 2-simplicial scores over key pairs
(as a fraction of log M^2, the uniform distribution's), the mean largest pair probability and the
fraction of queries with > 0.99 on one pair (saturation), and the same entropy for the
1-simplicial scores; and, from the trainability diagnosis (`keras_simplicial.agents.model.
trainability`), how much the entities, each iteration of the block and the pooled vector depend
on the board (`trainability/<site>/state_sd`) and the dead share of the last MLP layer
(`trainability/mlp_dead`): where a run's signal dies, row by row.
"""

import numpy as np

SATURATION_THRESHOLD = 0.99


def score_statistics(scores, axes):
    """(normalised entropy, mean max probability, saturated fraction) of distributions on `axes`.

    `scores` holds probabilities summing to 1 over `axes`; the entropy is divided by the log of
    the number of outcomes (1.0 = uniform, 0.0 = one outcome).
    """
    scores = np.asarray(scores, np.float64)
    outcomes = int(np.prod([scores.shape[a] for a in axes]))
    entropy = -np.sum(scores * np.log(np.maximum(scores, 1e-30)), axis=axes)
    largest = np.max(scores, axis=axes)
    normalised = entropy / np.log(outcomes) if outcomes > 1 else np.zeros_like(entropy)
    return (
        float(np.mean(normalised)),
        float(np.mean(largest)),
        float(np.mean(largest > SATURATION_THRESHOLD)),
    )


class AttentionHealth:
    """Attention statistics of an agent on a fixed probe batch, refreshed from its weights.

    Args:
        model: the agent's Keras model (`policy.model.base_model`).
        kind: "relational" or "simplicial".
        architecture: the architecture overrides of the run (`RunArguments.architecture`).
        env_id, env_config: the environment the probe positions come from.
        num_boards: probe batch size; seed: the probe puzzles' seed.
    """

    def __init__(self, model, kind, architecture, env_id, env_config, num_boards=64, seed=0):
        from keras_simplicial.agents.model.attention_agent import AttentionAgent
        from keras_simplicial.agents.model.trainability import FeatureHealth
        from keras_simplicial.envs import make_vector_env

        self.agent = AttentionAgent(model, kind, architecture)
        env = make_vector_env(env_id, num_boards, env_config, copy=False)
        env.reset(seed=seed)
        self.observations = env.core.obs.copy()
        self.features = FeatureHealth(self.agent.model)

    def __call__(self):
        """A dict of statistics, averaged over block iterations (`attention/...` keys)."""
        self.agent.model.set_weights(self.agent.base_model.get_weights())
        _, _, attention = self.agent(self.observations)
        stats = {}
        one = [score_statistics(s, axes=(-1,)) for s in attention.one_simplicial]
        stats["attention/one_simplicial_entropy"] = float(np.mean([s[0] for s in one]))
        if attention.two_simplicial:
            two = [score_statistics(s, axes=(-2, -1)) for s in attention.two_simplicial]
            stats["attention/simplicial_entropy"] = float(np.mean([s[0] for s in two]))
            stats["attention/simplicial_max_prob"] = float(np.mean([s[1] for s in two]))
            stats["attention/simplicial_saturated"] = float(np.mean([s[2] for s in two]))
        sites = self.features(self.observations)
        for key, value in sites.items():
            site, _, statistic = key.rpartition("/")
            if statistic == "state_sd" and (site in ("entities", "pooled") or "block_" in site):
                stats[f"trainability/{key}"] = value
        last_mlp = max(
            (k for k in sites if k.startswith("mlp_") and k.endswith("/dead")), default=None
        )
        if last_mlp is not None:
            stats["trainability/mlp_dead"] = sites[last_mlp]
        return stats

"""Where does the signal die? A trainability diagnosis that any agent model can be put through.

    health = FeatureHealth(model)              # an agent model of `build_agent_model`
    row = health(observations)                 # a batch of states, [B, R, C+1, 3]
    row["entities/state_sd"], row["block_2/entity_sd"], row["mlp_4/dead"]
    first_flat_site(row)                       # "block_1": the first site that stopped depending
                                               # on the state, or None

A model that sits on the constant prediction can be stuck at several places, each of which looks
different from inside: the front end gives every board the same features; the Transformer block
washes the entities into one another (every entity the same vector, so pooling sees no board);
the max-pool picks features that do not move with the state; the MLP's ReLU units die. This module
measures, at each *site* of the model (`sites`: the convolutions, the entities, each iteration of
the block, the pooled vector, each MLP layer), on a batch of states:

- `state_sd`: how much the features depend on the state: the standard deviation over the batch of
  each feature (of each entity), averaged, divided by the features' root mean square. 0: every
  state gives the same features; 1: no offset at all, the features are all state (with offset
  and spread of one size, about 0.71).
- `entity_sd` (entity sites only): how distinct the entities of one state are: the standard
  deviation over the standard entities, averaged over features and states, divided by the root mean
  square. 0: the block has made every entity the same vector.
- `dead` (ReLU sites only): the share of units that are zero on every state of the batch.
- `rms`: the features' root mean square, to see one part's scale swamp another's (the entity
  projection's features against the 2-d position code, whose root mean square over the 64 entity
  features is about 0.125, or the block's residual branch against its input).

Gradient norms by part (front end, entity projection, 1- and 2-simplicial attention, pooling has
none, MLP and heads) come from the training step that has the gradients: `gradient_norms`.

It uses only Keras (any backend) and NumPy: the held-keys probe, DAgger and both engines' metrics
read it alike.
"""

import numpy as np

from keras_simplicial.agents.model.model_parts import model_part

# A site whose state_sd is below this (relative to its scale) no longer tells states apart.
FLAT_STATE_SD = 1e-3
# The layers whose outputs are sites, in order; the block is found by its class (its calls are the
# iterations), "pooled" is the max-pool.
FRONT_END_SITES = ("conv_1", "conv_2", "entity_projection", "entity_norm", "entities")
POOLED_LAYER = "max_pool_entities"
DROP_VIRTUAL_LAYER = "drop_virtual"
STATISTICS = ("state_sd", "entity_sd", "dead", "rms")


def _block_layer(model):
    from keras_simplicial import TransformerBlock, TwoSimplicialTransformerBlock

    for layer in model.layers:
        if isinstance(layer, (TransformerBlock, TwoSimplicialTransformerBlock)):
            return layer
    return None


def sites(model):
    """The sites of an agent model, in the order the signal passes them: a list of
    (name, symbolic tensor, kind) with kind "entities" ([B, N(+M), D]: the block's sites hold the
    virtual entities last), "grid" (the entity projection and its norm), "relu" (ReLU outputs:
    the convolutions and the MLP) or "vector"."""
    names = {layer.name for layer in model.layers}
    found = []
    for name in FRONT_END_SITES:
        if name in names:
            layer = model.get_layer(name)
            kind = "grid"
            if name == "entities":
                kind = "entities"
            elif name.startswith("conv"):
                kind = "relu"
            found.append((name, layer.output, kind))
    block = _block_layer(model)
    if block is not None:
        for index, node in enumerate(block._inbound_nodes):
            found.append((f"block_{index + 1}", node.output_tensors[0], "entities"))
    if POOLED_LAYER in names:
        found.append(("pooled", model.get_layer(POOLED_LAYER).output, "vector"))
    for layer in model.layers:
        if layer.name.startswith("mlp_"):
            found.append((layer.name, layer.output, "relu"))
    return found


def site_statistics(activations, kind, num_virtual_entities=0):
    """`STATISTICS` of one site's activations on a batch of states (see the module's docstring);
    the virtual entities of an entity site are left out."""
    values = np.asarray(activations, np.float64)
    if kind == "entities" and num_virtual_entities and values.shape[1] > num_virtual_entities:
        values = values[:, : values.shape[1] - num_virtual_entities]
    rms = float(np.sqrt(np.mean(values**2)))
    scale = rms if rms > 0 else 1.0
    stats = {"rms": rms, "state_sd": float(values.std(axis=0).mean() / scale)}
    if kind == "entities":
        stats["entity_sd"] = float(values.std(axis=1).mean() / scale)
    if kind == "relu":
        units = values.reshape(-1, values.shape[-1])
        stats["dead"] = float((units.max(axis=0) <= 0).mean())
    return stats


class FeatureHealth:
    """The statistics of every site of `model` (`sites`) on a batch of states.

    Args:
        model: an agent model of `build_agent_model` (either kind); a copy of its graph is read,
            so later weight updates of `model` are seen on the next call.
        num_virtual_entities: the model's M (left out of the entity statistics); read from the
            block when None.
    """

    def __init__(self, model, num_virtual_entities=None):
        import keras

        found = sites(model)
        self.names = [name for name, _, _ in found]
        self.kinds = [kind for _, _, kind in found]
        self.reader = keras.Model(model.inputs, [tensor for _, tensor, _ in found])
        if num_virtual_entities is None:
            block = _block_layer(model)
            num_virtual_entities = getattr(block, "num_virtual_entities", 0) if block else 0
        self.num_virtual_entities = int(num_virtual_entities)

    def __call__(self, observations, batch_size=256):
        """A dict `<site>/<statistic>` of the sites on `observations` ([B, R, C+1, 3])."""
        import keras

        observations = np.asarray(observations, np.float32)
        if observations.ndim != 4 or len(observations) < 2:
            raise ValueError(
                "observations must be a batch of at least 2 states [B, R, C+1, channels], got "
                f"shape {observations.shape}."
            )
        chunks = [
            self.reader([observations[i : i + batch_size]], training=False)
            for i in range(0, len(observations), batch_size)
        ]
        row = {}
        for index, (name, kind) in enumerate(zip(self.names, self.kinds)):
            chunk_values = [keras.ops.convert_to_numpy(chunk[index]) for chunk in chunks]
            activations = np.concatenate(chunk_values)
            virtual = self.num_virtual_entities if name.startswith("block_") else 0
            for statistic, value in site_statistics(activations, kind, virtual).items():
                row[f"{name}/{statistic}"] = value
        return row


def first_flat_site(row, threshold=FLAT_STATE_SD):
    """The first site (in the signal's order) whose `state_sd` in `row` is below `threshold`, or
    whose units are all dead; None when every site still depends on the state."""
    seen = []
    for key in row:
        site = key.rpartition("/")[0]
        if site not in seen:
            seen.append(site)
    for site in seen:
        if row.get(f"{site}/state_sd", 1.0) < threshold or row.get(f"{site}/dead", 0.0) >= 1.0:
            return site
    return None


def gradient_norms(variables, gradients):
    """{"grad_norm/<part>": norm} of `gradients` (arrays, or None for a variable that gets none)
    by the `model_part` of each variable's path."""
    squares = {}
    for variable, gradient in zip(variables, gradients):
        if gradient is None:
            continue
        part = model_part(getattr(variable, "path", None) or variable.name)
        squares[part] = squares.get(part, 0.0) + float(np.sum(np.square(np.asarray(gradient))))
    return {f"grad_norm/{part}": float(np.sqrt(value)) for part, value in sorted(squares.items())}

"""A small 2-simplicial Transformer model: build, summary, a few training steps, attention shapes.

Toy task: each sample is a set of 12 entities; the target is whether some pair of entities has a
large product in the first feature (a relation between two entities, which 2-simplicial attention
over virtual entities can pick up).

    python examples/two_simplicial_layer.py            # any backend: KERAS_BACKEND=jax / torch
"""

import keras
import numpy as np

from keras_simplicial import TwoSimplicialTransformerBlock, VirtualEntities

NUM_ENTITIES, WIDTH, NUM_VIRTUAL = 12, 16, 2


def toy_data(count, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(count, NUM_ENTITIES, WIDTH)).astype("float32")
    first = x[:, :, 0]
    pair_products = first[:, :, None] * first[:, None, :]
    pair_products[:, np.arange(NUM_ENTITIES), np.arange(NUM_ENTITIES)] = 0.0
    y = (pair_products.max(axis=(1, 2)) > 3.0).astype("float32")
    return x, y


def build_model():
    entities = keras.Input((NUM_ENTITIES, WIDTH), name="entities")
    x = VirtualEntities(NUM_VIRTUAL, name="virtual_entities")(entities)
    block = TwoSimplicialTransformerBlock(
        num_virtual_entities=NUM_VIRTUAL,
        num_heads=2,
        key_dim=8,
        num_simplicial_heads=1,
        simplicial_key_dim=8,
        feedforward_dim=32,
        name="block",
    )
    # Two iterations with shared weights; scores requested on both calls (see docs/layers.md).
    x, _, _ = block(x, return_attention_scores=True)
    x, scores, simplicial_scores = block(x, return_attention_scores=True)
    pooled = keras.layers.GlobalMaxPooling1D(name="max_pool")(x[:, :NUM_ENTITIES])
    hidden = keras.layers.Dense(32, activation="relu", name="hidden")(pooled)
    logit = keras.layers.Dense(1, name="logit")(hidden)
    training_model = keras.Model(entities, logit)
    analysis_model = keras.Model(entities, [scores, simplicial_scores])
    return training_model, analysis_model


def main():
    x, y = toy_data(512)
    model, analysis = build_model()
    model.summary()
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        metrics=[keras.metrics.BinaryAccuracy(threshold=0.0)],
    )
    model.fit(x, y, batch_size=64, epochs=3, verbose=2)
    scores, simplicial_scores = analysis.predict(x[:4], verbose=0)
    print("1-simplicial scores:", scores.shape, "(batch, heads, N+M, N+M)")
    print("2-simplicial scores:", simplicial_scores.shape, "(batch, heads, N, M, M)")
    print("entity 0 of sample 0 attends to virtual pairs (j, k):")
    print(np.round(simplicial_scores[0, 0, 0], 3))


if __name__ == "__main__":
    main()

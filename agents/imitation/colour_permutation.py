"""Labelled states for free: the same state with its key colours permuted.

Which palette colours a BoxWorld puzzle uses is drawn afresh every episode, a uniformly random
ordering of the whole palette (`keras_simplicial.envs.sampling`), and the puzzle's logic names
colours only to match a key with its lock. So renaming the colours by a permutation of the
palette gives a state of the same environment, just as likely, whose optimal actions are the
original's (the moves are directions; the Gem, the player, the floor and the empty inventory
slots keep their own colours, which no key shares). A labelled state yields
`num_colours!` labelled states this way, without the oracle.

    palette = key_palette("BridgeBoxWorld-v0", {"num_colours": 20})    # [20, 3] uint8
    augmented = permute_key_colours(observations, palette, rng)          # one permutation each

`keras-simplicial dagger --augment colour-permutations` trains on a fresh permutation of every
state of every batch (`DaggerConfig.augment`).
"""

import numpy as np

#: The values of `DaggerConfig.augment`: the states as they were labelled, or each state of each
#: batch with its key colours permuted afresh (`permute_key_colours`).
AUGMENTATIONS = ("none", "colour-permutations")


def key_palette(env_id, env_config):
    """The `[num_colours, 3]` uint8 key colours of the environment (without the Gem's)."""
    from keras_simplicial.envs import make_vector_env

    core = make_vector_env(env_id, 1, env_config, copy=False).core
    return np.array(core.colour_rgb[: core.gem])


def _rgb_codes(pixels):
    """[..., 3] uint8 -> [...] int32, one integer per colour."""
    pixels = np.asarray(pixels).astype(np.int32)
    return (pixels[..., 0] << 16) | (pixels[..., 1] << 8) | pixels[..., 2]


def permute_key_colours(observations, palette, rng):
    """Each state of `observations` ([N, rows, cols + 1, 3] uint8) with its key colours renamed
    by its own uniformly random permutation of `palette` ([K, 3] uint8, `key_palette`), drawn
    from `rng` (a `np.random.Generator`); every other pixel as it was. Returns a new array."""
    observations = np.asarray(observations)
    palette = np.asarray(palette, np.uint8)
    if observations.ndim != 4 or observations.shape[-1] != 3:
        raise ValueError(
            f"observations must be [N, rows, cols + 1, 3] RGB states, got shape "
            f"{observations.shape}."
        )
    if palette.ndim != 2 or palette.shape[1] != 3 or len(palette) < 1:
        raise ValueError(f"palette must be [K, 3] RGB colours, got shape {palette.shape}.")
    palette_codes = _rgb_codes(palette)
    if len(np.unique(palette_codes)) != len(palette_codes):
        raise ValueError("palette must hold K distinct colours: a permutation of it is ambiguous.")
    count, size = len(observations), len(palette)
    order = np.argsort(palette_codes)
    codes = _rgb_codes(observations).reshape(count, -1)  # [N, pixels]
    position = np.minimum(np.searchsorted(palette_codes[order], codes), size - 1)
    colour = order[position]  # the palette index of each pixel, where it is a key colour
    is_key = palette_codes[colour] == codes
    renaming = rng.permuted(np.tile(np.arange(size), (count, 1)), axis=1)  # [N, K], a row each
    renamed = np.take_along_axis(renaming, colour, axis=1)
    permuted = observations.copy().reshape(count, -1, 3)
    permuted[is_key] = palette[renamed[is_key]]
    return permuted.reshape(observations.shape)

"""Environment throughput: steps per second of bridge BoxWorld on one CPU core.

Measures the batched numpy core through ``BoxWorldVectorEnv`` (random actions, observations
returned as a fresh copy every step, NEXT_STEP autoreset) at several batch sizes, the single
``BoxWorldEnv``, and, as the same-run reference, a straightforward per-board Python implementation
of the same game (one Python object per board, stepped in a Python loop over boards, like the
original implementation). Every figure is the median of several timed repeats after a warm-up.

    python benchmarks/env_throughput.py [--batch-sizes 1 64 1024 4096] [--repeats 5] [--cpu 0]
                                        [--markdown docs/benchmarks.md]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from keras_simplicial.envs import PALETTE, BoxWorldEnv, BoxWorldVectorEnv  # noqa: E402

MARKER = "## Environment throughput"
FLOOR, PLAYER, EMPTY, GEM = (199, 199, 199), (127, 127, 127), (10, 10, 10), (255, 255, 255)
MOVES = ((0, -1), (-1, 0), (0, 1), (1, 0))


class PerBoardBridgeBoxWorld:
    """Reference: one bridge BoxWorld board in plain Python (the original per-board style).

    Same rules, layout and puzzle distribution as the default ``BridgeBoxWorld-v0``; the board is
    an RGB numpy image and a dict from cell to object, the inventory a Python list.
    """

    rows, cols = 7, 9
    keys = [(r, c) for r in (1, 3, 5) for c in (1, 4, 7)]
    gems = [(r, c) for r in (1, 3) for c in (1, 4)]

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.reset()

    def reset(self):
        rng = self.rng
        a = int(rng.integers(1, 4))
        colours = [int(x) for x in rng.permutation(20)[: 2 * a]]
        top, bottom = colours[:a], colours[a:]  # index 1 = nearest the Gem
        objects = [(None, top[-1], False), (None, bottom[-1], False)]
        for path in (top, bottom):
            objects += [((path[k],), path[k - 1], False) for k in range(a - 1, 0, -1)]
        if rng.random() < 0.5:
            b, c = int(rng.integers(1, a + 1)), int(rng.integers(1, a + 1))
            objects.append(((top[b - 1],), bottom[c - 1], True))
        gem = self.gems[int(rng.integers(len(self.gems)))]
        free = [p for p in self.keys if p != gem]
        order = rng.permutation(len(free))
        self.image = np.zeros((self.rows, self.cols + 1, 3), np.uint8)
        self.image[:, : self.cols] = FLOOR
        self.image[:, self.cols] = EMPTY
        self.cells = {}
        r, c = gem
        gem_object = ((top[0], bottom[0]), "gem", False)
        for cell, colour in (
            ((r, c), GEM),
            ((r + 1, c), GEM),
            ((r, c + 1), PALETTE[top[0]]),
            ((r + 1, c + 1), PALETTE[bottom[0]]),
        ):
            self.image[cell] = colour
        self.cells.update(
            {
                (r, c): ("wall", None),
                (r + 1, c): ("wall", None),
                (r, c + 1): ("lock", gem_object),
                (r + 1, c + 1): ("lock", gem_object),
            }
        )
        gem_object += ([(r, c), (r + 1, c), (r, c + 1), (r + 1, c + 1)],)
        self.cells[(r, c + 1)] = self.cells[(r + 1, c + 1)] = ("lock", gem_object)
        for k, (locks, key, fatal) in enumerate(objects):
            r, c = free[order[k]]
            self.image[r, c] = PALETTE[key]
            if locks is None:
                self.cells[(r, c)] = ("loose", (None, key, False, [(r, c)]))
            else:
                self.image[r, c + 1] = PALETTE[locks[0]]
                box = (locks, key, fatal, [(r, c), (r, c + 1)])
                self.cells[(r, c)] = ("wall", None)
                self.cells[(r, c + 1)] = ("lock", box)
        self.player = (0, 0)
        self.image[0, 0] = PLAYER
        self.inventory = [None] * self.rows  # display slots, top to bottom
        return self.image

    def _show_inventory(self):
        self.image[:, self.cols] = EMPTY
        for slot, key in enumerate(self.inventory):
            if key is not None:
                self.image[slot, self.cols] = GEM if key == "gem" else PALETTE[key]

    def step(self, action):
        dr, dc = MOVES[action]
        r, c = self.player[0] + dr, self.player[1] + dc
        if not (0 <= r < self.rows and 0 <= c < self.cols):
            return self.image, 0.0, False
        kind, obj = self.cells.get((r, c), ("floor", None))
        reward, done = 0.0, False
        if kind == "wall":
            return self.image, 0.0, False
        if kind == "loose":
            self.inventory[self.inventory.index(None)] = obj[1]
            reward = 1.0
        elif kind == "lock":
            locks, key, fatal, cells = obj
            if not all(k in self.inventory for k in locks):
                return self.image, 0.0, False
            slots = [self.inventory.index(k) for k in locks]
            for slot in slots:
                self.inventory[slot] = None
            self.inventory[min(slots)] = key
            reward, done = (10.0, True) if key == "gem" else (-1.0, True) if fatal else (1.0, False)
        if kind != "floor":
            for cell in obj[3]:
                self.cells.pop(cell, None)
                self.image[cell] = FLOOR
            self._show_inventory()
        self.image[self.player] = FLOOR
        self.player = (r, c)
        self.image[r, c] = PLAYER
        return self.image, reward, done


class ImageBridgeBoxWorld(PerBoardBridgeBoxWorld):
    """Reference in the original implementation's style: the RGB image *is* the state.

    Tile kinds are recognised by comparing colours with their neighbours (``np.array_equal``), the
    inventory is read back from the image column; only the fatal lock cells are remembered aside.
    """

    def reset(self):
        image = super().reset()
        self.fatal = {cell for cell, (kind, obj) in self.cells.items() if kind == "lock" and obj[2]}
        return image

    def _is_floor(self, r, c):
        if not 0 <= c < self.cols:
            return True
        tile = self.image[r, c]
        return np.array_equal(tile, FLOOR) or np.array_equal(tile, PLAYER)

    def _slot_of(self, colour):
        for slot in range(self.rows):
            if np.array_equal(self.image[slot, self.cols], colour):
                return slot
        return None

    def step(self, action):
        dr, dc = MOVES[action]
        r, c = self.player[0] + dr, self.player[1] + dc
        if not (0 <= r < self.rows and 0 <= c < self.cols):
            return self.image, 0.0, False
        reward, done = 0.0, False
        tile = self.image[r, c].copy()
        if not np.array_equal(tile, FLOOR):
            left_floor, right_floor = self._is_floor(r, c - 1), self._is_floor(r, c + 1)
            if left_floor and right_floor:  # a loose key
                self.image[self.inventory_slot(EMPTY), self.cols] = tile
                reward = 1.0
            elif left_floor or not right_floor and np.array_equal(tile, GEM):
                return self.image, 0.0, False  # a box's key tile
            else:  # a lock
                content = self.image[r, c - 1].copy()
                locks = [(r, c)]
                if np.array_equal(content, GEM):
                    for rr in (r - 1, r + 1):
                        if 0 <= rr < self.rows and np.array_equal(self.image[rr, c - 1], GEM):
                            locks.append((rr, c))
                slots = [self._slot_of(self.image[cell]) for cell in locks]
                if any(slot is None for slot in slots) or len(set(slots)) < len(slots):
                    return self.image, 0.0, False
                for slot in slots:
                    self.image[slot, self.cols] = EMPTY
                self.image[min(slots), self.cols] = content
                fatal = (r, c) in self.fatal
                for cell in locks:
                    self.image[cell] = FLOOR
                    self.image[cell[0], c - 1] = FLOOR
                if np.array_equal(content, GEM):
                    reward, done = 10.0, True
                else:
                    reward, done = (-1.0, True) if fatal else (1.0, False)
        self.image[self.player] = FLOOR
        self.player = (r, c)
        self.image[r, c] = PLAYER
        return self.image, reward, done

    def inventory_slot(self, colour):
        return self._slot_of(colour)


def timed(run, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_vector(n, steps, warmup, repeats, seed=0):
    """Fresh uniform random actions for every step of the warm-up and of each repeat."""
    env = BoxWorldVectorEnv(n)
    env.reset(seed=seed)
    actions = np.random.default_rng(seed).integers(0, 4, (warmup + repeats * steps, n), np.int8)
    for a in actions[:warmup]:
        env.step(a)
    blocks = iter(range(warmup, len(actions), steps))
    episodes = [0]

    def run():
        first = next(blocks)
        for a in actions[first : first + steps]:
            _, _, terminated, truncated, _ = env.step(a)
            episodes[0] += int(terminated.sum() + truncated.sum())

    seconds = timed(run, repeats)
    return n * steps / seconds, episodes[0] / repeats


def bench_single(steps, repeats, seed=0):
    env = BoxWorldEnv()
    env.reset(seed=seed)
    blocks = iter(np.random.default_rng(seed).integers(0, 4, (repeats, steps)).tolist())

    def run():
        for a in next(blocks):
            _, _, terminated, truncated, _ = env.step(a)
            if terminated or truncated:
                env.reset()

    return steps / timed(run, repeats)


def bench_reference(n, steps, repeats, seed=0, board_class=None):
    board_class = board_class or ImageBridgeBoxWorld
    boards = [board_class(seed + i) for i in range(n)]
    blocks = iter(np.random.default_rng(seed).integers(0, 4, (repeats, steps, n)).tolist())
    out = np.zeros((n, 7, 10, 3), np.uint8)

    def run():
        for row in next(blocks):
            for i, board in enumerate(boards):  # the per-board Python loop
                image, reward, done = board.step(row[i])
                if done:
                    image = board.reset()
                out[i] = image

    return n * steps / timed(run, repeats)


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        pass
    return (
        f"{cpu}; {os.cpu_count()} logical CPUs on the machine, pinned to 1; Python "
        f"{platform.python_version()}, numpy {np.__version__}"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 64, 1024, 4096])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cpu", type=int, default=0)
    parser.add_argument(
        "--markdown",
        default=None,
        help="write the results as the section '## Environment throughput' here",
    )
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    rows = []
    for n in args.batch_sizes:
        steps = max(200, min(2000, 800_000 // n))
        # A long warm-up reaches the steady state of episode ends and autoresets.
        rate, episodes = bench_vector(n, steps, warmup=max(steps, 1500), repeats=args.repeats)
        rows.append(
            (
                f"BoxWorldVectorEnv, batch {n}",
                rate,
                f"{steps} steps x {n} board(s), "
                f"{episodes:.0f} episodes ended (autoresets) per repeat",
            )
        )
        print(f"vector batch {n:5d}: {rate:14,.0f} steps/s", flush=True)
    single = bench_single(20000, args.repeats)
    rows.append(("BoxWorldEnv (single, one board)", single, "20000 steps"))
    print(f"single env       : {single:14,.0f} steps/s", flush=True)
    reference = bench_reference(64, 300, args.repeats)
    rows.append(
        (
            "reference: per-board Python, image as state (original style), 64 boards",
            reference,
            "300 steps x 64 boards, Python loop over boards",
        )
    )
    print(f"per-board ref    : {reference:14,.0f} steps/s", flush=True)
    lean = bench_reference(64, 300, args.repeats, board_class=PerBoardBridgeBoxWorld)
    rows.append(
        (
            "lean per-board Python (dict of cells), 64 boards",
            lean,
            "300 steps x 64 boards, Python loop over boards",
        )
    )
    print(f"lean per-board   : {lean:14,.0f} steps/s", flush=True)
    biggest = max(args.batch_sizes)
    big_rate = next(r for name, r, _ in rows if name == f"BoxWorldVectorEnv, batch {biggest}")
    ratio = big_rate / reference
    print(
        f"ratio (batch {biggest} / per-board reference): {ratio:.0f}x; "
        f"vs the lean per-board loop: {big_rate / lean:.1f}x"
    )
    command = "python benchmarks/env_throughput.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    if args.markdown:
        write_markdown(
            args.markdown, rows, ratio, big_rate / lean, biggest, command.strip(), args.repeats
        )
    return 0


def write_markdown(path, rows, ratio, lean_ratio, biggest, command, repeats):
    lines = [
        MARKER,
        "",
        f"Command: `{command}` (random actions, observations copied out every step, "
        f"NEXT_STEP autoreset, bridge BoxWorld defaults; median of {repeats} repeats after a "
        "warm-up; one core via `os.sched_setaffinity`, OMP/OPENBLAS/MKL threads = 1).",
        "",
        f"Machine: {machine()}.",
        "",
        "| what | steps/s | run |",
        "| --- | ---: | --- |",
    ]
    lines += [f"| {name} | {rate:,.0f} | {note} |" for name, rate, note in rows]
    lines += [
        "",
        f"Batch {biggest} vs the original-style per-board reference measured in the same "
        f"run: **{ratio:.0f}x** (vs the lean per-board loop: {lean_ratio:.1f}x). Target: "
        ">= 2,000,000 steps/s at batch 4096 on one core. Both references are this script's "
        "own re-implementations of the same game in the per-board style (the original code "
        "is not run here); the CPU is shared with other jobs, so repeated runs vary by "
        "about +-30%.",
        "",
    ]
    section = "\n".join(lines)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if MARKER in text:
        start = text.index(MARKER)
        nxt = text.find("\n## ", start + len(MARKER))
        text = text[:start] + section + ("\n" + text[nxt + 1 :] if nxt >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


if __name__ == "__main__":
    sys.exit(main())

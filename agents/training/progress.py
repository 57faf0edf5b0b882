"""The progress display of a training run: timesteps, steps/s, win rate, elapsed and remaining.

On a terminal it is a live `rich` progress bar; elsewhere (CI, a log file) one plain line per
iteration, at most every `min_interval_s` seconds.
"""

import sys
import time

PROGRESS_MODES = ("auto", "rich", "plain", "none")


def _format_duration(seconds):
    if seconds is None or seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours:d}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:d}:{seconds:02d}"


def describe(timesteps, total, row, elapsed, stop_seconds=None):
    """One line: `412,800/1,500,000 steps | 1,203 steps/s (sampling 2,950) | win 0.41 | 5:43
    elapsed, 15:03 left`.

    The rate is the wall-clock one (`wall_frames_per_s`: checkpoints and their checks included),
    then RLlib's sampling rate of the iteration. Time left is the sooner of reaching `total` steps
    at the wall-clock rate and `stop_seconds`.
    """
    sampling = float(row.get("frames_per_s") or 0.0)
    fps = float(row.get("wall_frames_per_s") or 0.0) or sampling
    remaining = max(0, total - timesteps) / fps if fps else None
    if stop_seconds is not None:
        by_time = max(0.0, float(stop_seconds) - elapsed)
        remaining = by_time if remaining is None else min(remaining, by_time)
    win = row.get("win_rate")
    win_text = f"{float(win):.2f}" if win not in ("", None) else "-"
    return (
        f"{timesteps:,}/{total:,} steps | {fps:,.0f} steps/s (sampling {sampling:,.0f}) | "
        f"win {win_text} | "
        f"{_format_duration(elapsed)} elapsed, {_format_duration(remaining)} left"
    )


class PlainProgress:
    def __init__(self, total, title, stream=None, min_interval_s=5.0, stop_seconds=None):
        self.total, self.title, self.stop_seconds = total, title, stop_seconds
        self.stream = stream or sys.stdout
        self.min_interval_s = min_interval_s
        self._started = time.time()
        self._last_print = 0.0

    def __enter__(self):
        print(
            f"Training {self.title} for {self.total:,} environment steps",
            file=self.stream,
            flush=True,
        )
        return self

    def update(self, timesteps, row):
        now = time.time()
        if row and (now - self._last_print >= self.min_interval_s or timesteps >= self.total):
            self._last_print = now
            print(
                describe(timesteps, self.total, row, now - self._started, self.stop_seconds),
                file=self.stream,
                flush=True,
            )

    def __exit__(self, *exc):
        return False


class NoProgress:
    def __enter__(self):
        return self

    def update(self, timesteps, row):
        pass

    def __exit__(self, *exc):
        return False


class RichProgress:
    def __init__(self, total, title, stop_seconds=None):
        from rich.progress import BarColumn, Progress, TextColumn

        self.total, self.stop_seconds = total, stop_seconds
        self._started = time.time()
        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[status]}")
        )
        self._task = self._progress.add_task(title, total=total, status="starting Ray ...")

    def __enter__(self):
        self._progress.__enter__()
        return self

    def update(self, timesteps, row):
        status = (
            describe(timesteps, self.total, row, time.time() - self._started, self.stop_seconds)
            if row
            else "waiting for the first iteration ..."
        )
        self._progress.update(self._task, completed=min(timesteps, self.total), status=status)

    def __exit__(self, *exc):
        return self._progress.__exit__(*exc)


def make_progress(mode, total, title, stop_seconds=None):
    """`mode`: "auto" (rich on a terminal), "rich", "plain" or "none"."""
    if mode not in PROGRESS_MODES:
        raise ValueError(f"progress must be one of {PROGRESS_MODES}, got {mode!r}.")
    if mode == "auto":
        mode = "rich" if sys.stdout.isatty() else "plain"
    if mode == "rich":
        return RichProgress(total, title, stop_seconds)
    if mode == "plain":
        return PlainProgress(total, title, stop_seconds=stop_seconds)
    return NoProgress()

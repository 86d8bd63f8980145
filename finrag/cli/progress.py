"""One live status line on stderr for any wait: the stage, its elapsed time, the total,
and the model's tokens per second while it writes.

    with Activity("retrieving") as activity:
        ...
        activity.stage("reading the excerpts")   # a new stage: its own clock restarts
        activity.tokens()                        # one token written (tokens/s shown)
        activity.line("note: ...")               # a finished line above the live one
        activity.pause(); print(...); activity.resume()   # around output on stdout

Not a terminal, or --quiet: no animation and no stage lines (``line`` still prints,
unless quiet). Every stage's seconds are kept in ``activity.stages``.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from finrag.cli.render import err


def seconds_words(seconds: float) -> str:
    """'4.2 s', '37 s', '5 min 02 s': short enough for a status line."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s"


class Activity:
    """A live one-line status: stage · stage time · total · tokens/s (a context manager)."""

    def __init__(self, first_stage: str, *, console: Console | None = None) -> None:
        self.console = console or err
        self.started = time.perf_counter()
        self.stages: list[tuple[str, float]] = []  # finished stages and their seconds
        self._stage = first_stage
        self._stage_started = self.started
        self._tokens = 0
        self._first_token: float | None = None
        self._spinner = Spinner("dots", style="cyan")
        self._live: Live | None = None
        self._paused = False
        self.animated = self.console.is_terminal and not self.console.quiet

    # -- the context manager -----------------------------------------------------------

    def __enter__(self) -> Activity:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        if self.animated and self._live is None:
            self._live = Live(
                _Render(self),
                console=self.console,
                refresh_per_second=8,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()

    def stop(self) -> None:
        """End the live line (it disappears) and close the current stage."""
        if self._live is not None:
            self._live.stop()
            self._live = None
        self._close_stage()

    # -- what is going on ----------------------------------------------------------------

    def stage(self, text: str) -> None:
        """A new stage: its clock and token count start at zero."""
        self._close_stage()
        self._stage = text
        self._stage_started = time.perf_counter()
        self._tokens, self._first_token = 0, None

    def tokens(self, n: int = 1) -> None:
        """``n`` more tokens written by the model in this stage."""
        if self._first_token is None:
            self._first_token = time.perf_counter()
        self._tokens += n

    def line(self, text: str | Text) -> None:
        """A finished line on stderr, above the live line (never glued to other output)."""
        self.console.print(text)

    def pause(self) -> None:
        """Hide the live line while something else writes to the terminal."""
        if self._live is not None and not self._paused:
            self._live.stop()
            self._paused = True

    def resume(self) -> None:
        if self._live is not None and self._paused:
            self._paused = False
            self._live.start()

    # -- reading it back ------------------------------------------------------------------

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    @property
    def stage_elapsed(self) -> float:
        return time.perf_counter() - self._stage_started

    @property
    def current(self) -> str:
        return self._stage

    def tokens_per_second(self) -> float | None:
        if self._first_token is None or self._tokens < 2:
            return None
        span = time.perf_counter() - self._first_token
        return (self._tokens - 1) / span if span > 0 else None

    def describe(self) -> str:
        """The status line's words: 'writing the answer · 12 s · total 1 min 03 s · 8.1 tok/s'."""
        parts = [self._stage, seconds_words(self.stage_elapsed)]
        if self.stages:
            parts.append(f"total {seconds_words(self.elapsed)}")
        if self._tokens:
            rate = self.tokens_per_second()
            parts.append(
                f"{self._tokens} tokens" + (f", {rate:.1f} tok/s" if rate is not None else "")
            )
        return " · ".join(parts)

    def _close_stage(self) -> None:
        if self._stage is not None:
            self.stages.append((self._stage, round(self.stage_elapsed, 3)))
            self._stage = None  # type: ignore[assignment]
            self._stage_started = time.perf_counter()


class _Render:
    """What Live redraws eight times a second: the spinner and the activity's words."""

    def __init__(self, activity: Activity) -> None:
        self.activity = activity

    def __rich__(self) -> RenderableType:
        spinner = self.activity._spinner
        spinner.update(text=Text(self.activity.describe() if self.activity._stage else ""))
        return spinner


__all__ = ["Activity", "seconds_words"]

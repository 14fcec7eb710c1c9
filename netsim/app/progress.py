"""Live progress of a run, plain progress lines when not on a terminal, and a clean Ctrl-C.

A `RunMonitor` is handed to `Network.run` (the `Monitor` protocol of netsim.api): every `stride`
events it samples link counters (netsim.app.timeseries), notices Ctrl-C, and at most a few times a
second of wall time refreshes the view. What "progress" means (passes and layers, bytes
delivered, cycles) is the caller's: a `tracker(network) -> (fraction done, text)`.

Views: `LiveView` (rich Live, on a terminal), `LineView` (one plain line every few seconds, for
CI and pipes) and `NullView` (--quiet). None of them affects the simulation's results. rich is
imported by the views that show something, so a quiet run starts without it.
"""

from __future__ import annotations

import signal
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable

from netsim.errors import STOP_SIGNALS, Interrupted
from netsim.app.timeseries import LinkSampler
from netsim.units import format_time

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

LIVE_PERIOD_S = 0.25  # the live view refreshes at most 4 times a second
LINE_PERIOD_S = 5.0  # a plain progress line at most every 5 s
BUSIEST_SHOWN = 3

Tracker = Callable[[object], "tuple[float, str]"]


class Snapshot:
    """What a view shows: filled by RunMonitor.snapshot (or by the sweep runner)."""

    def __init__(self, title: str, fraction: float, text: str, wall_s: float, sim_ns: float | None = None,
                 events: int | None = None, in_flight: int | None = None, busiest: list | None = None,
                 eta_fraction: float | None = None):
        self.title = title
        self.fraction = max(0.0, min(1.0, fraction))
        self.eta_fraction = self.fraction if eta_fraction is None else max(0.0, min(1.0, eta_fraction))
        self.text = text
        self.wall_s = wall_s
        self.sim_ns = sim_ns
        self.events = events
        self.in_flight = in_flight
        self.busiest = busiest or []

    def eta_s(self) -> float | None:
        """Wall seconds left, assuming the rest goes at the average pace so far (`eta_fraction`: the
        share of the work done within the wall time shown, if not `fraction`)."""
        if self.eta_fraction <= 0.0 or self.wall_s <= 0.0:
            return None
        return self.wall_s * (1.0 - self.eta_fraction) / self.eta_fraction

    def fields(self) -> list[tuple[str, str]]:
        eta = self.eta_s()
        rows = [("progress", f"{self.fraction:6.1%}  {self.text}")]
        if self.sim_ns is not None:
            rows.append(("simulated time", format_time(self.sim_ns)))
        rows.append(("wall time", f"{self.wall_s:.1f} s" + (f" (ETA {eta:.0f} s)" if eta is not None else "")))
        if self.events is not None:
            rate = self.events / self.wall_s if self.wall_s > 0 else 0.0
            rows.append(("events", f"{self.events:,} ({rate:,.0f}/s)"))
        if self.in_flight is not None:
            rows.append(("messages in flight", f"{self.in_flight:,}"))
        if self.busiest:
            rows.append(("busiest links now", ", ".join(f"{src}->{dst} {util:.0%}" for src, dst, util in self.busiest)))
        return rows

    def line(self) -> str:
        title = self.title.replace("\n", "; ")  # one line, whatever lines the live view's header has
        return f"{title}: " + "; ".join(f"{key} {value}" for key, value in self.fields())

    def table(self) -> Table:
        from rich.table import Table

        table = Table(title=self.title, show_header=False, box=None, pad_edge=False)
        table.add_column(style="dim")
        table.add_column()
        for key, value in self.fields():
            table.add_row(key, value)
        return table


class NullView:
    period = float("inf")

    def update(self, snapshot: Snapshot) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


class ProgressFile:
    """A view for a run in another process (a sweep's point): its progress fraction, written to a
    file about once a second (whole or not at all), for the sweep's own view to read."""

    period = 1.0

    def __init__(self, path):
        self.path = path

    def update(self, snapshot: Snapshot) -> None:
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        try:
            temporary.write_text(f"{snapshot.fraction:.6f}")
            temporary.replace(self.path)
        except OSError:  # progress is a courtesy: a point never fails for it
            pass

    def note(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


class LineView:
    """One plain progress line on stderr every LINE_PERIOD_S at most (not a terminal)."""

    period = LINE_PERIOD_S

    def __init__(self, console: Console):
        self.console = console

    def update(self, snapshot: Snapshot) -> None:
        self.console.print(snapshot.line(), markup=False, highlight=False, soft_wrap=True)

    def note(self, text: str) -> None:
        self.console.print(f"warning: {text}", markup=False, highlight=False, soft_wrap=True)

    def close(self) -> None:
        pass


class LiveView:
    """A rich Live table, refreshed by hand (no refresh thread) at most every LIVE_PERIOD_S."""

    period = LIVE_PERIOD_S

    def __init__(self, console: Console):
        from rich.live import Live

        self.live = Live(console=console, auto_refresh=False, transient=True)
        self.live.start()

    def update(self, snapshot: Snapshot) -> None:
        self.live.update(snapshot.table(), refresh=True)

    def note(self, text: str) -> None:
        self.live.console.print(f"[yellow]warning:[/yellow] {text}", highlight=False, soft_wrap=True)

    def close(self) -> None:
        self.live.stop()


def make_view(quiet: bool):
    """On stderr: live on a terminal, plain lines otherwise; nothing with --quiet."""
    if quiet:
        return NullView()
    from rich.console import Console

    console = Console(stderr=True)
    return LiveView(console) if console.is_terminal else LineView(console)


class RunMonitor:
    """The Monitor of one simulation: sampling, Ctrl-C, and the view. See the module docstring."""

    stride = 256  # events between checks: one integer compare per event in Network.run

    def __init__(self, title: str = "netsim", view=None, tracker: Tracker | None = None):
        self.view = view or NullView()
        self.interrupted = False
        self.stop_signal = None  # the signal that stopped the run (netsim.app.progress.interruptible)
        self.notes: list[str] = []  # warnings given before or during the run (they go into the summary)
        self.simulating = False  # until the first check: a stop before it has nothing to report
        self.restart(title, tracker)
        self.next_refresh = self.started + min(self.view.period, 1.0)

    def restart(self, title: str, tracker: Tracker | None, messages: bool = True) -> None:
        """A run starts (or the next of several: a synth sweep's loads): same view and Ctrl-C,
        fresh samples, wall time and ETA. `messages`: show the network's messages in flight (not for
        synthetic traffic, whose packets bypass the endpoints that count messages)."""
        self.title = title
        self.tracker = tracker
        self.messages = messages
        self.sampler = LinkSampler()
        self._last = None  # (sim ns, busy ns per link) at the last refresh, for "busiest now"
        self.started = time.perf_counter()

    def check(self, network) -> bool:
        self.simulating = True
        self.sampler.maybe_sample(network)
        if self.interrupted:
            return True
        now = time.perf_counter()
        if now >= self.next_refresh:
            self.next_refresh = now + self.view.period
            self.view.update(self.snapshot(network))
        return False

    def note(self, text: str) -> None:
        """A warning for the user now (the view shows it at once) and in the run's summary; once (a run
        simulated again per message gives its warnings again)."""
        if text in self.notes:
            return
        self.notes.append(text)
        self.view.note(text)

    def finish(self, network) -> None:
        """After the run: the last sample. From here on there is a result, so a stop waits until it
        is written (netsim.app.progress.interruptible); the view is closed by `watching`."""
        self.sampler.sample(network)
        self.simulating = True

    def snapshot(self, network) -> Snapshot:
        fraction, text = self.tracker(network) if self.tracker else (0.0, "")
        _bytes, busy = network.link_counters()
        now = network.env.now
        busiest = []
        if self._last is not None and now > self._last[0]:
            span = now - self._last[0]
            deltas = sorted(((b - a) / span, i) for i, (a, b) in enumerate(zip(self._last[1], busy)))
            links = network.topology.links
            busiest = [(links[i].src, links[i].dst, util) for util, i in reversed(deltas[-BUSIEST_SHOWN:]) if util > 0]
        self._last = (now, busy)
        return Snapshot(self.title, fraction, text, time.perf_counter() - self.started, now, network.events_so_far(),
                        network.in_flight() if self.messages else None, busiest)


@contextmanager
def interruptible(monitor):
    """While inside: the first Ctrl-C (SIGINT) or SIGTERM sets `monitor.interrupted` and
    `monitor.stop_signal` (the run stops at its next check and reports what it simulated; a run
    already simulated is written whole first; the command exits 128 + the signal's number); a
    second one raises Interrupted, and so does the first while the monitor is not `simulating` yet
    (building and issuing a large run can take a while, and nothing is simulated to report)."""

    def handler(signum, frame):
        if monitor.interrupted or not monitor.simulating:
            raise Interrupted(signum)
        monitor.interrupted = True
        monitor.stop_signal = signum

    previous = {}
    try:
        for signum in STOP_SIGNALS:
            previous[signum] = signal.signal(signum, handler)
    except ValueError:  # not the main thread (e.g. a worker): no handler to install
        pass
    try:
        yield monitor
    finally:
        for signum, handler_before in previous.items():
            signal.signal(signum, handler_before)


@contextmanager
def showing(view):
    """The view's lifetime: closed when the block ends, however it ends."""
    try:
        yield view
    finally:
        view.close()


@contextmanager
def watching(monitor: RunMonitor):
    """Ctrl-C handling and the view's lifetime around a run."""
    with interruptible(monitor), showing(monitor.view):
        yield monitor


class StopRequested(Exception):
    """Raised out of a simulation driven by `env.run` when the user pressed Ctrl-C once: the caller
    reports what was simulated (a second Ctrl-C raises KeyboardInterrupt and aborts)."""


def tick(network, period_ns: float, monitor: RunMonitor) -> None:
    """For runs driven by `env.run` rather than Network.run (synthetic traffic): check the monitor
    every `period_ns` of simulated time; on Ctrl-C raise StopRequested out of the simulation.
    The checks only read state, so they do not change the results."""

    def fire(_event) -> None:
        if monitor.check(network):
            raise StopRequested
        network.env.timeout(period_ns).callbacks.append(fire)

    network.env.timeout(period_ns).callbacks.append(fire)

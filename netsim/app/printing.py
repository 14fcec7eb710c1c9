"""What the commands print: a run's, a collective's and a synth run's summary, link and port tables
and a study's results, as rich tables on the console (rich is imported when a table is made)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from netsim.units import format_size, format_time

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

def print_warnings(summary: dict) -> None:
    """The summary's warnings, one line each on stderr, as every netsim warning is printed
    (`print_warning`); stdout keeps the table or the JSON."""
    for warning in summary.get("warnings", []):
        print(f"netsim: warning: {warning}", file=sys.stderr)


def max_utilization_row(table: Table, summary: dict) -> None:
    """The busiest link's utilization, flagged when above 1 (see the warning below the table)."""
    peak = summary.get("max_link_utilization")
    if peak is not None:
        table.add_row("max link utilization", f"{peak:.3f}" + (" (OVER 1: see warning)" if peak > 1 else ""))


def cost_rows(table: Table, summary: dict) -> None:
    """Events and wall time, and the quotient torus a folded packet run was simulated on."""
    table.add_row("events / wall time", f"{summary['events']:,} / {summary['wall_time_s']:.2f} s")
    folded = summary.get("folded_to")
    if folded:
        shape = f"ring of {folded[0]}" if len(folded) == 1 else "torus " + "x".join(map(str, folded))
        table.add_row("simulated on", f"quotient {shape} (docs/scale.md)")


def print_run(console: Console, result) -> None:
    from rich.table import Table

    s = result.summary
    table = Table(title=f"netsim run: {s['workload']['name']} on {s['network']['name']} ({s['backend']})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("end-to-end time", format_time(s["end_to_end_time_ns"]))
    table.add_row("compute time (NPU 0)", format_time(s["compute_time_ns"]))
    table.add_row("exposed communication (NPU 0)", format_time(s["exposed_comm_time_ns"]))
    if "end_to_end" in result.tables:
        e2e = result.tables["end_to_end"]
        total_comm = e2e[[c for c in e2e.columns if c.endswith("_total_comm_ns")]].to_numpy().sum()
        table.add_row("total communication (NPU 0, sum of collectives)", format_time(total_comm))
    table.add_row("communication in flight (NPU 0)", format_time(s["comm_busy_time_ns"]))
    table.add_row("compute/communication overlap (NPU 0)",
                  f"{format_time(s['compute_comm_overlap_ns'])} ({s['overlap_fraction']:.1%} of comm)")
    if "pipeline_bubble_fraction" in s:
        table.add_row("pipeline bubble fraction (NPU 0)", f"{s['pipeline_bubble_fraction']:.4f}")
    finish_times = [t for t in s["npu_finish_time_ns"] if t is not None]
    if finish_times:
        table.add_row("NPU finish time min / max",
                      f"{format_time(min(finish_times))} / {format_time(max(finish_times))}")
    if s["partial"]:
        table.add_row("PARTIAL", f"interrupted at {format_time(s['simulated_time_ns'])}; "
                                 f"{len(s['npu_finish_time_ns']) - len(finish_times)} NPUs unfinished")
    max_utilization_row(table, s)
    table.add_row("slowest NPU", str(s["slowest_npu"]))
    if "passes" in s:
        table.add_row("passes", str(s["passes"]))
    else:
        table.add_row("trace nodes (all NPUs)", f"{s['workload']['nodes']:,}")
    cost_rows(table, s)
    console.print(table)
    print_links(console, result.tables["links"])


def print_collective(console: Console, result) -> None:
    from rich.table import Table

    if "sizes" in result.tables:
        print_collective_sizes(console, result)
        return
    s = result.summary
    table = Table(title=f"netsim collective: {s['collective']} of {format_size(s['size_bytes'])} on "
                        f"{s['network']['name']} ({s['backend']})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    if s["collective_time_ns"] is None:  # interrupted: no time, so no bandwidths
        table.add_row("PARTIAL", f"interrupted at {format_time(s['simulated_time_ns'])}; "
                                 f"{s['npus'] - s['npus_finished']} of {s['npus']} NPUs unfinished")
        table.add_row("collective time", f"unfinished (over {format_time(s['simulated_time_ns'])})")
        table.add_row("algorithm / bus bandwidth", "n/a (unfinished)")
    else:
        table.add_row("collective time", format_time(s["collective_time_ns"]))
        table.add_row("algorithm bandwidth", f"{s['algbw_GBps']:.3f} GB/s")
        table.add_row("bus bandwidth", f"{s['busbw_GBps']:.3f} GB/s")
    table.add_row("bytes sent (all NPUs)", f"{s['bytes_sent_total']:,}")
    if s.get("verified"):
        table.add_row("verified", f"yes: every NPU's result checked against the {s['collective']} of the inputs")
    max_utilization_row(table, s)
    cost_rows(table, s)
    console.print(table)
    print_links(console, result.tables["links"])


def print_collective_sizes(console: Console, result) -> None:
    """A --size range: one row per size, as nccl-tests prints it."""
    from rich.table import Table

    s = result.summary
    table = Table(title=f"netsim collective: {s['collective']} on {s['network']['name']} ({s['backend']}), "
                        f"{s['npus']} NPUs")
    for column in ("size", "time", "algbw (GB/s)", "busbw (GB/s)", "max link util."):
        table.add_column(column, justify="right")
    for row in result.tables["sizes"].itertuples():
        finished = not row.partial
        table.add_row(format_size(row.size_bytes), format_time(row.collective_time_ns) if finished else "unfinished",
                      f"{row.algbw_GBps:.3f}" if finished else "n/a", f"{row.busbw_GBps:.3f}" if finished else "n/a",
                      f"{row.max_link_utilization:.3f}")
    if s["partial"] or s["sizes"] < s["sizes_planned"]:
        table.add_row("PARTIAL", f"{s['sizes']} of {s['sizes_planned']} sizes", "", "", "")
    console.print(table)


def print_links(console: Console, links, top: int = 5) -> None:
    from rich.table import Table

    from netsim.app import report

    dims = report.per_dimension_utilization(links)
    table = Table(title="link utilization per dimension")
    for column in ("dim", "links", "bytes", "mean", "max", "imbalance"):
        table.add_column(column, justify="right")
    for row in dims.itertuples():
        table.add_row(str(row.dim), str(row.links), f"{row.bytes:,}", f"{row.mean_utilization:.3f}",
                      f"{row.max_utilization:.3f}", f"{row.imbalance:.2f}")
    console.print(table)
    busiest = report.busiest_links(links, top)
    table = Table(title=f"top {top} links")
    for column in ("link", "src", "dst", "kind", "dim", "bytes", "utilization"):
        table.add_column(column, justify="right")
    for row in busiest.itertuples():
        table.add_row(str(row.link_id), str(row.src), str(row.dst), row.kind, str(row.dim), f"{row.bytes:,}",
                      f"{row.utilization:.3f}")
    console.print(table)


def print_synth(console: Console, result) -> None:
    from rich.table import Table

    s = result.summary
    table = Table(title=f"netsim synth: {s['pattern']} on {s['network']['name']}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in ("offered_load", "accepted_load", "avg_packet_latency_cycles", "p99_packet_latency_cycles",
                "avg_network_latency_cycles", "avg_hops", "saturation_load", "saturation", "wall_time_s"):
        if key in s and s[key] is not None:
            value = s[key]
            table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    console.print(table)


def print_study(console: Console, frame, varied: list[str], metric: str, limit: int = 40) -> None:
    """A study's results as a table: its varied parameters, status and headline metric (the first
    `limit` points; the CSV has them all)."""
    from rich.table import Table

    table = Table(title=f"{len(frame)} points: {metric}")
    for column in ("point", *varied, "status", metric, "folder"):
        table.add_column(column, justify="right")
    for row in frame.head(limit).to_dict("records"):
        value = row.get(metric)
        if row["status"] != "ok":
            shown = row["error"][:60]
        elif metric.endswith("_ns") and isinstance(value, (int, float)):
            shown = format_time(value)
        else:
            shown = f"{value:,.4g}" if isinstance(value, float) else str(value)
        table.add_row(str(row["point"]), *(str(row.get(key, "")) for key in varied), row["status"], shown,
                      str(row.get("folder", "")))
    if len(frame) > limit:
        table.add_row("...", *([""] * len(varied)), "", f"{len(frame) - limit} more in the CSV", "")
    console.print(table)


def print_ports(console: Console, links, top: int) -> None:
    from rich.table import Table

    from netsim.app import report

    ports = report.congested_ports(links, top)
    if ports.empty:
        console.print("[dim]no buffer statistics (the analytical backend models no buffers)[/dim]")
        return
    table = Table(title=f"top {top} congested input ports (receiving end of a link)")
    for column in ("link", "src", "dst", "dim", "credit stall", "mean flits", "max VC flits"):
        table.add_column(column, justify="right")
    for row in ports.itertuples():
        table.add_row(str(row.link_id), str(row.src), str(row.dst), str(row.dim), format_time(row.credit_stall_time_ns),
                      f"{row.mean_buffer_flits:.2f}", f"{row.max_vc_flits:g}")
    console.print(table)


PRINTERS = {"run": print_run, "collective": print_collective, "synth": print_synth}  # by command

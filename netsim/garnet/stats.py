"""The per-link, per-NIC and per-VC tables of `GarnetNetwork.stats()` (its packet statistics are
packet_stats.py's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def latency_table(histogram: dict[int, int]) -> dict[str, list]:
    """packet_latency.csv's columns from a latency histogram (cycles -> packets), in cycle order."""
    latency = sorted(histogram.items())
    return {"latency_cycles": [cycles for cycles, _ in latency], "packets": [packets for _, packets in latency]}


def link_extra(network) -> dict:
    """Extra per-link columns (topology link order): flits, busy cycles, buffers, credit stalls."""
    cycles = max(1, network.clock.now_cycle())
    ns = network.clock.ns
    outs = network.observed.link_units
    nan = float("nan")  # a NIC's ejection buffer is not modelled as flits held
    return {
        "flits": [o.flits for o in outs],
        "busy_cycles": [o.flits * o.cpf for o in outs],
        "cycles_per_flit": [o.cpf for o in outs],
        "latency_cycles": list(network.params.link_latency),
        "mean_buffer_flits": [nan if o.ejects else o.dst_port.residency / cycles for o in outs],
        "max_vc_flits": [nan if o.ejects else max(vc.peak for vc in o.dst_vcs) for o in outs],
        "buffer_flits_per_vc": [o.depth for o in outs],
        "credit_stall_time_ns": [ns(o.stall) for o in outs],
    }


def vc_frame(network) -> pd.DataFrame:
    """One row per input port and VC: the most flits it held and its mean occupancy over the run."""
    import pandas as pd

    cycles = max(1, network.clock.now_cycle())
    rows = [{"router": node, "port": port.name, "link_id": port.link_id, "vc": index,
             "max_flits": vc.peak, "mean_flits": vc.residency / cycles, "buffer_flits": port.depth}
            for node, port, vcs in network.observed.vc_ports() for index, vc in enumerate(vcs)]
    return pd.DataFrame(rows, columns=["router", "port", "link_id", "vc", "max_flits", "mean_flits", "buffer_flits"])


def nic_frame(network) -> pd.DataFrame:
    """One row per NIC port: injection ('nic-npu') and ejection ('npu-nic') of every NPU, with the
    router link it feeds or drains (-1 for a single port shared by all links)."""
    import pandas as pd

    cycles = max(1, network.clock.now_cycle())
    rows = [{"npu": npu, "kind": kind, "link_id": link_id, "flits": port.flits, "bytes": port.bytes,
             "busy_cycles": port.flits * port.cpf, "utilization": port.flits * port.cpf / cycles,
             "credit_stall_time_ns": network.clock.ns(port.stall)}
            for npu, kind, link_id, port in network.observed.nic_ports]
    return pd.DataFrame(rows)

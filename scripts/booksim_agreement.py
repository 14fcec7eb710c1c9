"""Agreement of netsim's BookSim router model with BookSim2, beyond the shared validation rows.

netsim runs every case as tests/garnet/test_booksim_agreement.py does: `garnet.allocator = "booksim"`,
`garnet.routing = "dor-booksim"`, one NIC port per node, a 4-stage router, 1-cycle links, 16-byte
flits at 1 GHz, BookSim's traffic conventions (a source may pick itself; one cycle of injection
delay). BookSim2 runs with the settings of ../shared/validation/README.md (`BOOKSIM_BASE`), on the
same topology (`TOPOLOGIES`: a single-router switch is BookSim's `fly` with k = 16, n = 1).

Curve cases (topology, pattern, VCs, buffer flits, packet flits, VC-release rule), the metrics of
tests/garnet/test_booksim_agreement.py:
  zero_load_latency    packet latency at 0.005 flits/node/cycle                      within 1%
  half_sat_latency     packet latency at half of BookSim's saturation load (the load
                       where its latency reaches 3x zero-load; 1.0 if it never does)  within 10%
  saturation_accepted  accepted load when offered 1.3x that saturation load (max 1):
                       BookSim's as the shared rows hold it (sim_type latency, the
                       last sample's if it aborted)                                   within 10%
  saturation_accepted_steady   the same load, BookSim's steady state (sim_type
                       throughput); netsim's figure is the same run's                 within 10%
netsim measures zero-load latency over ZERO_LOAD_PACKETS packets (on a pattern with spread path
lengths the mean is a sample mean: 1% is near its noise with the test's shorter runs), and warms
every run up for at least BookSim's 3000 cycles (the test's 500 leave hotspot traffic short of its
steady state: +15-24% accepted).
Fairness cases (every node, the hot one included, sends all its packets to node 0 at 1.0
flits/node/cycle, so that every source is backlogged; measured over the steady state; each figure
the mean over 5 seeds, as both simulators lock into one of a few schedules by seed):
  share_src<i>         source i's share of the flits delivered                        within 0.02
  jain                 Jain's index of the per-source delivered flits                 within 10%
  local_to_through     (5-ring) the 1-hop sources' shares over the 2-hop sources', whose
                       flows merge with theirs at the 1-hop sources' routers          within 10%

BookSim's figures are read from scripts/data/booksim2_agreement.csv; with `--booksim PATH` BookSim
is run for the selected cases instead (its config written to a temp file) and that file is
updated, with the load sweeps behind the saturation loads (booksim2_agreement_sweeps.csv).
Writes the table to results/booksim_agreement/agreement.csv (or --out) and prints it.

    python scripts/booksim_agreement.py [--quick] [--only TEXT] [--booksim PATH] [--out DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pandas as pd

from netsim.app import traffic
from netsim.config import Source
from netsim.network_config import parse_network_table

DATA = Path(__file__).resolve().parent / "data"
REFERENCE = DATA / "booksim2_agreement.csv"
SWEEPS = DATA / "booksim2_agreement_sweeps.csv"

# ../shared/validation/README.md: BookSim2 (HEAD 28f4329) settings common to every run
BOOKSIM_BASE = dict(
    router="iq", routing_delay=1, vc_alloc_delay=1, sw_alloc_delay=1, st_final_delay=1, st_prepare_delay=0,
    speculative=0, credit_delay=0, output_delay=0, vc_allocator="islip", sw_allocator="islip", alloc_iters=1,
    use_noc_latency=0, injection_rate_uses_flits=1, sim_type="latency", warmup_periods=3, sample_period=1000,
    max_samples=10, latency_thres=500.0, seed=0)

# name -> (BookSim topology keys, netsim [topology] table); 1-cycle links of one 16-byte flit per cycle
LINK = {"bandwidth": "16GB/s", "latency": "1ns"}
TOPOLOGIES = {
    "torus-8x8": (dict(topology="torus", k=8, n=2, routing_function="dim_order"), {"kind": "torus", "dims": [8, 8]}),
    "torus-4x4": (dict(topology="torus", k=4, n=2, routing_function="dim_order"), {"kind": "torus", "dims": [4, 4]}),
    "mesh-8x8": (dict(topology="mesh", k=8, n=2, routing_function="dim_order"), {"kind": "mesh", "dims": [8, 8]}),
    "switch-16": (dict(topology="fly", k=16, n=1, routing_function="dest_tag"),
                  {"kind": "switch", "npus": 16, "single_router": True}),
    "ring-8": (dict(topology="torus", k=8, n=1, routing_function="dim_order"), {"kind": "torus", "dims": [8]}),
    "ring-5": (dict(topology="torus", k=5, n=1, routing_function="dim_order"), {"kind": "torus", "dims": [5]}),
}

# netsim pattern -> BookSim's name for the same permutation or distribution (see booksim_traffic)
BOOKSIM_PATTERNS = {"uniform": "uniform", "transpose": "transpose", "tornado": "tornado",
                    "bit-complement": "bitcomp", "bit-reverse": "bitrev", "shuffle": "shuffle",
                    "neighbour": "neighbor", "to-node-0": "hotspot(0)"}
RELEASE = {"tail-credit": 1, "tail-sent": 0}  # netsim vc_release -> BookSim wait_for_tail_credit

ZERO_LOAD_RATE = 0.005
ZERO_LOAD_PACKETS = 8000  # the zero-load mean of a pattern with spread path lengths is a sample mean
BOOKSIM_WARMUP = 3000  # cycles: warmup_periods x sample_period
FAIRNESS_RATE = 1.0
FAIRNESS_SEEDS = 5  # per-source shares lock into one of a few periodic schedules, by seed: a mean over seeds
PAST_SATURATION = 1.3  # saturation_accepted is measured at this multiple of the saturation load
TOLERANCE = {"zero_load_latency": ("rel", 0.01), "half_sat_latency": ("rel", 0.10),
             "saturation_accepted": ("rel", 0.10), "saturation_accepted_steady": ("rel", 0.10),
             "jain": ("rel", 0.10), "local_to_through": ("rel", 0.10), "share": ("abs", 0.02)}


def to_node_0(topology, src, rng, others=True) -> int:
    """BookSim's hotspot(0): every packet to node 0 (node 0's own to itself, through its router)."""
    return 0


# netsim has no pattern sending everything to one node (its hotspot sends a quarter there, the rest
# uniformly), so the fairness cases register one under a name of their own.
traffic.PATTERNS.setdefault("to-node-0", to_node_0)


@dataclass(frozen=True)
class Case:
    topology: str
    pattern: str
    vcs: int = 4
    buffer_flits: int = 4
    packet_flits: int = 4
    vc_release: str = "tail-credit"

    @property
    def name(self) -> str:
        return (f"{self.topology}/{self.pattern}/vc{self.vcs}-buf{self.buffer_flits}-pf{self.packet_flits}"
                f"/{self.vc_release}")

    @property
    def fairness(self) -> bool:
        return self.pattern == "to-node-0"

    @property
    def npus(self) -> int:
        keys = TOPOLOGIES[self.topology][0]
        return keys["k"] ** keys["n"]


def cases() -> list[Case]:
    """The full matrix: patterns on the 8x8 torus; packet sizes and VC counts on the 4x4 torus, the
    8x8 mesh and the 16-port switch; both VC-release rules; the fairness cases."""
    result = [Case("torus-8x8", p) for p in ("uniform", "transpose", "tornado", "bit-complement", "bit-reverse",
                                             "shuffle", "neighbour", "hotspot")]
    result += [Case("torus-8x8", p, vcs=2) for p in ("transpose", "tornado", "bit-complement")]
    result += [Case("torus-8x8", "uniform", vcs=v, packet_flits=f, vc_release="tail-sent")
               for v in (2, 4) for f in (1, 4, 16)]
    result += [Case("torus-8x8", "bit-complement", vc_release="tail-sent")]
    for topology in ("torus-4x4", "mesh-8x8", "switch-16"):
        result += [Case(topology, "uniform", vcs=v, packet_flits=f) for v in (2, 4) for f in (1, 4, 16)]
        result += [Case(topology, "uniform", vcs=v, vc_release="tail-sent") for v in (2, 4)]
    result += [Case("torus-4x4", p) for p in ("transpose", "tornado", "bit-complement")]
    result += [Case("mesh-8x8", p) for p in ("transpose", "bit-complement", "hotspot")]
    result += [Case("switch-16", p) for p in ("bit-complement", "hotspot")]
    result += [Case(t, "to-node-0", vc_release=r) for t in ("ring-8", "ring-5") for r in RELEASE]
    return result


QUICK = ("torus-8x8/transpose/vc4-buf4-pf4/tail-credit", "torus-4x4/uniform/vc2-buf4-pf4/tail-credit",
         "mesh-8x8/uniform/vc4-buf4-pf4/tail-credit", "switch-16/uniform/vc4-buf4-pf4/tail-credit",
         "ring-5/to-node-0/vc4-buf4-pf4/tail-credit")


# ------------------------------------------------------------------------------------------- BookSim
def booksim_traffic(case: Case) -> str:
    """BookSim's traffic string for the case's netsim pattern. netsim's hotspot (with the source
    included) sends a packet to node 0 with probability f + (1-f)/N and to each other node with
    (1-f)/N: BookSim's hotspot over all N nodes with integer weights in that ratio."""
    if case.pattern != "hotspot":
        return BOOKSIM_PATTERNS[case.pattern]
    f = Fraction(traffic.HOTSPOT_FRACTION).limit_denominator(1000)
    rest = f.denominator - f.numerator  # (1-f) in units of 1/denominator
    weights = [rest + f.numerator * case.npus] + [rest] * (case.npus - 1)
    # BookSim splits a pattern's parameters as one braced list: hotspot({{nodes},{weights}})
    return f"hotspot({{{{{','.join(map(str, range(case.npus)))}}},{{{','.join(map(str, weights))}}}}})"


def booksim_config(case: Case, rate: float, **extra) -> dict:
    return {**BOOKSIM_BASE, **TOPOLOGIES[case.topology][0], "num_vcs": case.vcs, "vc_buf_size": case.buffer_flits,
            "packet_size": case.packet_flits, "wait_for_tail_credit": RELEASE[case.vc_release],
            "traffic": booksim_traffic(case), "injection_rate": rate, **extra}


def run_booksim(binary: str, config: dict) -> dict:
    """One BookSim run: packet latency and accepted load (the overall statistics, or the last
    sample's if BookSim aborted past saturation, as the shared rows record them), whether it
    aborted, and with `stats_out` in the config the per-source sent flit rates."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "booksim.cfg"
        if config.get("stats_out"):
            config = {**config, "stats_out": str(Path(folder) / "stats.m")}
        path.write_text("".join(f"{key} = {value};\n" for key, value in config.items()))
        out = subprocess.run([binary, str(path)], capture_output=True, text=True, timeout=3600).stdout
        stats = (Path(folder) / "stats.m").read_text() if config.get("stats_out") else ""
    aborted = "Overall Traffic Statistics" not in out
    text = out.split("====== Overall Traffic Statistics ======")[-1]  # all of it if aborted: last sample
    found = {}
    for key, pattern in (("latency", r"Packet latency average = ([\d.e+-]+)"),
                         ("accepted", r"Accepted flit rate average\s*= ?([\d.e+-]+)")):
        values = re.findall(pattern, text)
        if not values:
            sys.exit(f"booksim: no '{pattern.split(' (')[0]}' in its output for {config}:\n{out[-2000:]}")
        found[key] = float(values[-1] if aborted else values[0])
    found["aborted"] = aborted
    if stats:
        rows = re.findall(r"sent_flits\(1,:\) = \[ ([^\]]*)\]", stats)
        found["sent"] = [float(v) for v in rows[-1].split()]
    return found


def booksim_reference(binary: str, case: Case) -> tuple[list[dict], list[dict]]:
    """BookSim's figures for one case: (reference rows, sweep rows)."""
    if case.fairness:
        runs = [fairness_metrics(run_booksim(binary, booksim_config(case, FAIRNESS_RATE, sim_type="throughput",
                                                                    stats_out="yes", seed=seed))["sent"])
                for seed in range(FAIRNESS_SEEDS)]
        return [{"metric": metric, "load": FAIRNESS_RATE, "booksim": value}
                for metric, value in mean_metrics(runs).items()], []
    sweep = []

    def point(rate: float, **extra) -> dict:
        if rate == ZERO_LOAD_RATE:  # >= 3 samples after warm-up: 1.5 x ZERO_LOAD_PACKETS measured at least
            extra["sample_period"] = zero_load_cycles(case) // 2
        result = {"rate": rate, **extra, **run_booksim(binary, booksim_config(case, rate, **extra))}
        sweep.append(result)
        print(f"  booksim {case.name} at {rate:g}: latency {result['latency']:.2f}, accepted "
              f"{result['accepted']:.4f}{' (aborted)' if result['aborted'] else ''}", file=sys.stderr)
        return result

    zero = point(ZERO_LOAD_RATE)["latency"]
    bracket_rates(lambda rate: too_slow(point(rate), zero))
    saturation = saturation_load(sweep[1:], zero)
    half = round(saturation / 2, 4)
    past = round(min(1.0, PAST_SATURATION * saturation), 4)
    rows = [{"metric": "zero_load_latency", "load": ZERO_LOAD_RATE, "booksim": zero},
            {"metric": "saturation_load_3x", "load": saturation, "booksim": saturation},
            {"metric": "half_sat_latency", "load": half, "booksim": point(half)["latency"]},
            {"metric": "saturation_accepted", "load": past, "booksim": point(past)["accepted"]},
            {"metric": "saturation_accepted_steady", "load": past,
             "booksim": point(past, sim_type="throughput")["accepted"]}]
    return rows, [{"case": case.name, **s} for s in sweep]


def too_slow(result: dict, zero_load: float) -> bool:
    return result["aborted"] or result["latency"] > 3 * zero_load


def bracket_rates(is_past, step: float = 0.05, bisections: int = 3) -> None:
    """Try `is_past(load)` at loads 0.05, 0.1, ... up to the first past saturation (at most 1), then
    at `bisections` halvings of the interval that holds saturation."""
    tried, good, bad, rate = [], ZERO_LOAD_RATE, None, step
    while rate <= 1.0 + 1e-9:
        tried.append(round(rate, 4))
        if is_past(tried[-1]):
            bad = tried[-1]
            break
        good, rate = tried[-1], rate + step
    for _ in range(bisections if bad is not None else 0):
        tried.append(round((good + bad) / 2, 4))
        good, bad = (good, tried[-1]) if is_past(tried[-1]) else (tried[-1], bad)


def saturation_load(points: list[dict], zero_load: float) -> float:
    """The load where latency reaches 3x zero-load, interpolated linearly between the highest load
    below it and the lowest above it (1.0 if no load up to 1 reaches it)."""
    below = [p for p in points if not too_slow(p, zero_load)]
    above = [p for p in points if too_slow(p, zero_load)]
    if not above:
        return 1.0
    hi = min(above, key=lambda p: p["rate"])
    lo = max((p for p in below if p["rate"] < hi["rate"]), key=lambda p: p["rate"],
             default={"rate": ZERO_LOAD_RATE, "latency": zero_load})
    span = hi["latency"] - lo["latency"]
    t = min(1.0, max(0.0, (3 * zero_load - lo["latency"]) / span)) if span > 0 else 1.0
    return round(lo["rate"] + t * (hi["rate"] - lo["rate"]), 4)


def mean_metrics(runs: list[dict]) -> dict:
    return {metric: sum(run[metric] for run in runs) / len(runs) for metric in runs[0]}


def fairness_metrics(delivered: list[float]) -> dict:
    """Per-source shares, Jain's index and (on a 5-ring) the local-to-through ratio."""
    total = sum(delivered)
    shares = [d / total for d in delivered]
    metrics = {f"share_src{i}": s for i, s in enumerate(shares)}
    metrics["jain"] = total ** 2 / (len(delivered) * sum(d * d for d in delivered))
    if len(shares) == 5:  # hot node 0; 1 and 4 one hop away, 2 and 3 two hops, through 1 and 4
        metrics["local_to_through"] = (shares[1] + shares[4]) / (shares[2] + shares[3])
    return metrics


# -------------------------------------------------------------------------------------------- netsim
def netsim_config(case: Case):
    topology = {**TOPOLOGIES[case.topology][1], **LINK}
    garnet = dict(clock_ghz=1.0, flit_bytes=16, packet_bytes=16 * case.packet_flits, vcs=case.vcs,
                  buffer_flits=case.buffer_flits, router_latency=4, allocator="booksim", routing="dor-booksim",
                  nic_ports="single", vc_release=case.vc_release)
    return parse_network_table({"topology": topology, "backend": "garnet", "garnet": garnet},
                               Source("booksim_agreement"), case.topology)


def zero_load_cycles(case: Case) -> int:
    """Cycles in which the network's sources start ZERO_LOAD_PACKETS packets at the zero-load rate."""
    return math.ceil(ZERO_LOAD_PACKETS * case.packet_flits / (case.npus * ZERO_LOAD_RATE))


def synth_run(case: Case, rate: float, cycles: int, seed: int = 1) -> traffic.SynthRun:
    """A netsim run measured over `cycles` after a warm-up of a quarter of them (at least BookSim's)."""
    return traffic.SynthRun(netsim_config(case), case.pattern, rate, case.packet_flits, cycles, seed,
                            max(cycles // 4, BOOKSIM_WARMUP), include_source=True, injection_delay=1)


def netsim_value(case: Case, metric: str, load: float) -> float:
    """tests/garnet/test_booksim_agreement.py's runs (3000 and 2000 cycles on 64 nodes, as many packets on
    fewer), warmed up as long as BookSim; zero-load runs measure ZERO_LOAD_PACKETS packets."""
    scale = max(1, 64 // case.npus)
    if metric == "zero_load_latency":
        return synth_run(case, load, zero_load_cycles(case)).execute()["avg_packet_latency_cycles"]
    if metric == "half_sat_latency":
        return synth_run(case, load, 3000 * scale).execute()["avg_packet_latency_cycles"]
    if metric.startswith("saturation_accepted"):
        return synth_run(case, load, 2000 * scale).execute()["accepted_load"]
    raise KeyError(metric)


def netsim_fairness(case: Case, load: float) -> dict:
    """Fairness metrics, the mean over FAIRNESS_SEEDS seeds."""
    seeds = range(1, FAIRNESS_SEEDS + 1)
    return mean_metrics([fairness_metrics(delivered_flits(case, load, seed)) for seed in seeds])


def delivered_flits(case: Case, load: float, seed: int) -> list[int]:
    """The flits each source got delivered in the measurement window."""
    run = synth_run(case, load, 8000, seed)  # small rings: cheap
    delivered = [0] * case.npus
    observe = run.window.observe

    def count(packet, cycle: int) -> None:
        if run.warmup <= cycle < run.end:
            delivered[packet.msg.src] += packet.nflits
        observe(packet, cycle)

    run.network.packet_observer = count
    run.execute()
    return delivered


# ------------------------------------------------------------------------------------------- compare
def within(metric: str, booksim: float, netsim: float) -> tuple[str, bool]:
    kind, bound = TOLERANCE["share" if metric.startswith("share_") else metric]
    if kind == "abs":
        return f"+-{bound:g}", abs(netsim - booksim) <= bound
    return f"{bound:.0%}", abs(netsim / booksim - 1) <= bound if booksim else netsim == 0


def compare(case: Case, reference: pd.DataFrame) -> list[dict]:
    rows = []
    fair = netsim_fairness(case, float(reference["load"].iloc[0])) if case.fairness else {}
    saturated = {}  # load -> accepted: both saturation figures come from one netsim run
    for ref in reference.itertuples():
        if ref.metric == "saturation_load_3x":
            continue
        if case.fairness:
            netsim = fair[ref.metric]
        elif ref.metric.startswith("saturation_accepted"):
            if ref.load not in saturated:
                saturated[ref.load] = netsim_value(case, ref.metric, ref.load)
            netsim = saturated[ref.load]
        else:
            netsim = netsim_value(case, ref.metric, ref.load)
        tolerance, ok = within(ref.metric, ref.booksim, netsim)
        rows.append({"case": case.name, "metric": ref.metric, "load": ref.load, "booksim": ref.booksim,
                     "netsim": netsim, "ratio": netsim / ref.booksim if ref.booksim else math.nan,
                     "tolerance": tolerance, "within": "yes" if ok else "NO"})
        print(f"  {case.name} {ref.metric}: booksim {ref.booksim:.4g}, netsim {netsim:.4g}", file=sys.stderr)
    return rows


HEADER = """\
# BookSim2 reference figures for scripts/booksim_agreement.py (which wrote this file with --booksim).
# BookSim2 HEAD 28f4329 (booksim/booksim2), src/booksim, one run per (case, load), config: the script's
# BOOKSIM_BASE (iq router, 4-stage RC/VA/SA/ST, iSLIP VC and switch allocators, 1 iteration, 1-cycle
# channels, seed 0, sim_type latency: 3 warm-up + up to 10 samples of 1000 cycles, latency_thres 500)
# + the case's topology, num_vcs, vc_buf_size, packet_size, wait_for_tail_credit, traffic, injection_rate.
# zero_load_latency: rate 0.005, sample_period long enough for 4000 packets. saturation_load_3x: the load
# where packet latency reaches 3x zero-load (loads 0.05, 0.10, ... then 3 bisections; linear interpolation;
# aborted runs count as past it; 1.0 if never). half_sat_latency at half that load; saturation_accepted:
# accepted flit rate at 1.3x it (the last sample's when BookSim aborted, as in ../shared/validation);
# saturation_accepted_steady: the same with sim_type throughput. Fairness cases (traffic hotspot(0) at
# 1.0): sim_type throughput, per-source sent flit rates from stats_out, metrics averaged over seeds 0-4.
"""


def save_reference(frame: pd.DataFrame, path: Path, header: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + frame.to_csv(index=False, float_format="%.6g"))


def load_csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, comment="#") if path.exists() else pd.DataFrame(columns=["case"])


def merged(old: pd.DataFrame, new: pd.DataFrame, name: str) -> pd.DataFrame:
    """`old` with case `name`'s rows replaced by `new`, in the order of `cases()`."""
    frame = pd.concat([old[old["case"] != name], new], ignore_index=True)
    order = {c.name: i for i, c in enumerate(cases())}
    return frame.sort_values("case", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"only {len(QUICK)} cases")
    parser.add_argument("--only", default="", help="only the cases whose name contains this text")
    parser.add_argument("--booksim", help="path of a BookSim2 binary: measure its figures anew")
    parser.add_argument("--out", default="results/booksim_agreement", help="folder for agreement.csv")
    args = parser.parse_args(argv)
    selected = [c for c in cases() if (not args.quick or c.name in QUICK) and args.only in c.name]
    if not selected:
        sys.exit(f"--only {args.only!r}: no case matches (case names look like {cases()[0].name})")
    if args.booksim and not os.access(args.booksim, os.X_OK):
        sys.exit(f"--booksim {args.booksim}: not an executable file")

    reference = load_csv(REFERENCE)
    for case in selected if args.booksim else ():  # saved case by case: a long run may be stopped
        rows, sweep = booksim_reference(args.booksim, case)
        reference = merged(reference, pd.DataFrame([{"case": case.name, **r} for r in rows]), case.name)
        save_reference(reference, REFERENCE, HEADER)
        save_reference(merged(load_csv(SWEEPS), pd.DataFrame(sweep), case.name), SWEEPS,
                       "# BookSim2 load sweeps behind booksim2_agreement.csv's saturation loads (see its header).\n")
    missing = [c.name for c in selected if c.name not in set(reference["case"])]
    if missing:
        sys.exit(f"{REFERENCE}: no BookSim figures for {', '.join(missing)} (run with --booksim PATH)")

    table = []
    for case in selected:
        table += compare(case, reference[reference["case"] == case.name])
    frame = pd.DataFrame(table)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / "agreement.csv", index=False, float_format="%.6g")
    with pd.option_context("display.width", 200, "display.max_rows", None, "display.max_colwidth", 60):
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    off = frame[frame["within"] == "NO"]
    print(f"\n{len(frame) - len(off)} of {len(frame)} figures within tolerance; table in {out / 'agreement.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

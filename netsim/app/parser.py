"""The `netsim` command line: its commands and options (argparse), and the command line a scenario
stands for (`command_line`: a sweep point and the Python API are run as the command line they name).
Which command runs what is decided by name (netsim.app.commands.COMMANDS)."""

from __future__ import annotations

import argparse
import copy
import json
from importlib.metadata import version

from netsim.errors import ConfigError
from netsim.network_config import BACKEND_NAMES
from netsim.units import UnitError

DEFAULT_NETWORK = "torus-4x4"
DEFAULT_SYSTEM = "default"
DEFAULT_WORKLOAD = "Resnet50_DataParallel"
DEFAULT_SYNTH_NETWORK = "torus-8x8"
COLLECTIVES = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast", "reduce", "gather", "scatter",
               "barrier")
TRANSFORMER_OPTIONS = (("--layers", 2, "transformer blocks"), ("--hidden", 1024, "hidden size"),
                       ("--sequence", 2048, "sequence length"), ("--micro-batch", 1, "micro-batch size"),
                       ("--tp", 1, "tensor parallel degree"), ("--pp", 1, "pipeline parallel degree"),
                       ("--dp", 1, "data parallel degree"), ("--micro-batches", 1, "micro-batches (pp > 1)"))
GEMM_MODEL_NPUS = 16  # workload gen --gemm --parallel MODEL: NPUs by default


def option(flag: str, parse, value):
    """`value` of command-line option `flag` read by a parser of netsim.config or netsim.units (e.g.
    positive_int, parse_size); a bad value is a one-line error naming the option."""
    try:
        return parse(value)
    except UnitError as exc:
        raise ConfigError(f"{flag}: {exc}") from None
COMMON_OPTIONS = {  # name: (argparse keywords, value when a command does not take it)
    "set": ({"action": "append", "metavar": "KEY=VALUE",
             "help": "override a config key, e.g. garnet.vcs=4 or endpoint-delay=10ns (repeatable)"}, []),
    "seed": ({"type": int, "help": "random seed (same inputs and seed, same results)"}, 0),
    "quiet": ({"action": "store_true", "help": "print nothing but errors"}, False),
    "json": ({"action": "store_true", "help": "print the result as JSON on stdout"}, False),
    "out": ({"help": "output folder (default ./netsim-out/<name>)"}, None),
}


def common(parser: argparse.ArgumentParser, *options: str) -> None:
    """Add the shared options a command uses (all of COMMON_OPTIONS when none are named): a command
    takes no option it would ignore; the others read as their defaults."""
    chosen = options or tuple(COMMON_OPTIONS)
    for name in chosen:
        keywords, default = COMMON_OPTIONS[name]
        parser.add_argument(f"--{name}", default=copy.copy(default), **keywords)
    parser.set_defaults(**{name: copy.copy(default) for name, (_, default) in COMMON_OPTIONS.items()
                           if name not in chosen})
POSITIONAL = {"collective": ("kind",)}  # options given by position, per command


def command_line(params: dict, parser: argparse.ArgumentParser | None = None) -> list[str]:
    """The netsim command line that `params` stand for: `command`, then each option of that command
    by its name (`size`, `backend`, `packet-flits`, ...), and any other key as --set KEY=VALUE (a
    network, system or `workload.` key). Sweep points and the Python API run their scenarios so."""
    params = dict(params)
    command = params.pop("command")
    parser = parser or build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]  # argparse keeps subparsers here
    options = {action.dest: action for action in sub._actions if action.option_strings}
    argv = [command] + [str(params.pop(name)) for name in POSITIONAL.get(command, ()) if name in params]
    for key, value in params.items():
        action = options.get(key.replace("-", "_"))
        if action is None or action.dest in ("help", "set", "seed", "out", "json", "quiet"):
            argv += set_option(key, value)
        elif isinstance(value, bool):
            argv += [action.option_strings[0]] if value else []
        else:
            argv += [action.option_strings[0], str(value)]
    return argv


def set_option(key: str, value) -> list[str]:
    """--set KEY=VALUE for a config key and a Python value (numbers, booleans, lists as TOML reads them)."""
    return ["--set", f"{key}={value if isinstance(value, str) else json.dumps(value)}"]


class OneLineParser(argparse.ArgumentParser):
    """A parser whose errors raise ConfigError: one line naming the option and what it expects, and
    where the usage is, instead of argparse's usage text."""

    def error(self, message: str):
        raise ConfigError(f"{message} (see '{self.prog} --help')")


class VersionAction(argparse.Action):
    """--version: netsim's version and which packet core runs (compiled, or the pure-Python source)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from netsim.garnet import core

        print(f"netsim {version('netsim')} (packet core: {core.describe()})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The `netsim` command line (its errors are one line: OneLineParser)."""
    parser = OneLineParser(prog="netsim", description="Packet-level network simulation for distributed training.")
    parser.add_argument("--version", action=VersionAction, nargs=0, help="show netsim's version and which packet core runs")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="simulate training iterations of a workload")
    run.add_argument("--network", default=DEFAULT_NETWORK, help=f"bundled network name or file (default {DEFAULT_NETWORK})")
    run.add_argument("--system", default=DEFAULT_SYSTEM, help=f"bundled system config or file (default {DEFAULT_SYSTEM})")
    run.add_argument("--workload", default=DEFAULT_WORKLOAD,
                     help=f"bundled workload, workload file, or Chakra traces: a folder or PREFIX of PREFIX.<rank>.et "
                          f"files (default {DEFAULT_WORKLOAD})")
    run.add_argument("--backend", choices=BACKEND_NAMES, help="override the network config's backend")
    run.add_argument("--passes", type=int, default=1, help="training iterations to simulate (default 1)")
    run.add_argument("--comm-groups", help="Chakra traces: communicator groups named by pg_name (ASTRA-sim's "
                                           "communicator-group JSON)")
    run.add_argument("--memory", help="Chakra traces: remote memory for MEM_LOAD/MEM_STORE nodes (ASTRA-sim's "
                                      "remote-memory JSON)")
    common(run)

    coll = commands.add_parser("collective", help="time one collective on every NPU")
    coll.add_argument("kind", choices=COLLECTIVES)
    coll.add_argument("--size", help="bytes per NPU, e.g. 64MiB (all-gather and gather: each NPU's shard; "
                                     "barrier: none), or a range FROM:TO[:FACTOR] run size by size, x2 by "
                                     "default (e.g. 1KiB:1GiB; writes sizes.csv)")
    coll.add_argument("--network", default=DEFAULT_NETWORK)
    coll.add_argument("--system", default=DEFAULT_SYSTEM)
    coll.add_argument("--algorithm", help="algorithm per dimension, e.g. ring or ring_ring")
    coll.add_argument("--backend", choices=BACKEND_NAMES)
    coll.add_argument("--verify", action="store_true",
                      help="carry real payloads and check every NPU's result (sizes up to a few MiB)")
    common(coll)

    synth = commands.add_parser("synth", help="synthetic traffic on the packet backend (latency vs load)")
    synth.add_argument("--network", default=DEFAULT_SYNTH_NETWORK, help=f"default {DEFAULT_SYNTH_NETWORK}")
    synth.add_argument("--pattern", required=True, help="uniform, transpose, tornado, bit-complement, bit-reverse, "
                                                        "shuffle, neighbour, hotspot, bad-dragon (a dragonfly's next group) or "
                                                        "random-permutation (BookSim's randperm from --seed)")
    synth.add_argument("--rate", type=float, help="offered load in flits/node/cycle")
    synth.add_argument("--packet-flits", type=int, default=4, help="flits per packet (default 4)")
    synth.add_argument("--cycles", type=int, default=10000, help="measured cycles (default 10000)")
    synth.add_argument("--warmup", type=int, help="warm-up cycles before measuring (default: a fifth of --cycles)")
    synth.add_argument("--sweep", action="store_true", help="walk offered load up to saturation")
    synth.add_argument("--include-source", action="store_true",
                       help="BookSim's convention: uniform and hotspot may pick the source itself, permutations keep "
                            "their fixed points (else no NPU sends to itself)")
    synth.add_argument("--injection-delay", type=int, default=0, metavar="CYCLES",
                       help="cycles each packet waits at its source before injection (1: BookSim's extra cycle; "
                            "default 0)")
    common(synth)

    listing = commands.add_parser("list", help="the bundled networks, systems and workloads, with descriptions")
    listing.add_argument("--keys", action="store_true",
                         help="list every config key instead, with its unit, default and meaning")
    common(listing, "json")

    topo = commands.add_parser("topo", help="summarise a topology")
    topo.add_argument("network", help="bundled network name or file")
    topo.add_argument("--backend", choices=BACKEND_NAMES, help="override the network config's backend (garnet: "
                                                               "show the packet settings in force)")
    common(topo, "set", "json")

    rep = commands.add_parser("report", help="summarise a run's output folder, or a sweep's results")
    rep.add_argument("dir", help="a run's output folder, a sweep's STUDY.results.jsonl, or the study's folder")
    rep.add_argument("--top", type=int, default=5, help="how many of the busiest links and ports to list")
    rep.add_argument("--plot", action="store_true", help="write PNG plots into DIR (needs netsim[plot])")
    rep.add_argument("--share", metavar="DEST",
                     help="write a copy of the run's folder to DEST (a new folder) with the input files' paths made "
                          "relative, for sending results to others")
    rep.add_argument("--metric", help="for a sweep's results: the metric to tabulate and plot (default: the "
                                      "collective, iteration or latency time the points measured)")
    common(rep, "quiet", "json")

    sweep = commands.add_parser("sweep", help="run a study: a grid of scenarios, in parallel, resumable")
    sweep.add_argument("study", help="study TOML (base scenario, [grid] and [zip] lists; see README)")
    sweep.add_argument("--jobs", type=int, help="worker processes (default: the CPU count)")
    sweep.add_argument("--scheduler", help="run on a Dask cluster, e.g. tcp://127.0.0.1:8786 (needs netsim[dask])")
    common(sweep, "quiet", "json")

    work = commands.add_parser("workload", help="workload tools")
    work_commands = work.add_subparsers(dest="workload_command", required=True, metavar="TOOL")
    gen = work_commands.add_parser("gen", help="write a workload (legacy txt + TOML) from GEMMs or transformer dims")
    gen.add_argument("--gemm", help="CSV with columns M,N,K[,name]; one linear layer per row")
    gen.add_argument("--parallel", help="for --gemm: DATA or MODEL (default DATA)")
    gen.add_argument("--npus", type=int, help=f"for --gemm MODEL: NPUs the N dimension is split over "
                                              f"(default {GEMM_MODEL_NPUS})")
    for flag, default, text in TRANSFORMER_OPTIONS:  # (defaults filled in by cmd_workload_gen)
        gen.add_argument(flag, type=int, help=f"{text} (default {default})")
    gen.add_argument("--peak-tflops", type=float, default=312.0, help="roofline peak (default 312)")
    gen.add_argument("--memory-bandwidth", default="2039GB/s", help="roofline memory bandwidth (default 2039GB/s)")
    gen.add_argument("--bytes-per-element", type=int, default=2, help="default 2")
    common(gen, "quiet", "out")
    chakra = work_commands.add_parser("to-chakra", help="convert a legacy or TOML workload into Chakra traces "
                                                        "(one NAME.<rank>.et per NPU of --network)")
    chakra.add_argument("workload", help="bundled workload name or workload file")
    chakra.add_argument("--network", default=DEFAULT_NETWORK,
                        help=f"the network the traces are for: its NPUs and dimensions (default {DEFAULT_NETWORK})")
    chakra.add_argument("--passes", type=int, default=1, help="training iterations in the traces (default 1)")
    common(chakra, "set", "quiet", "json", "out")
    return parser

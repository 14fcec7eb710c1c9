"""Where the congestion-aware backend sits between the congestion-unaware and packet backends.

Direct all-reduce and direct all-to-all (the collectives whose messages contend for links) on
every bundled datacenter network, 1 MiB to 256 MiB, on all three backends: `analytical`
(congestion-unaware), `congestion-aware` and `garnet` (packet, flit fidelity). Prints, per
network and collective, each backend's time relative to the congestion-unaware one at the
smallest and largest size, and the share of the packet backend's extra time that the
congestion-aware model predicts; writes backends.csv (every point) into the results folder.
Points run in parallel and resume (netsim sweep files). --quick: 1 and 16 MiB, three networks.
The packet backend runs up to --max-packet-size (64 MiB by default: a 256 MiB all-to-all on the
64-NPU torus takes it hours). The packet numbers change with the packet backend; rerun to
regenerate the README's table.

    python scripts/backend_comparison.py --out results/backends [--max-packet-size 256MiB]
"""

from __future__ import annotations

import pandas as pd

from netsim.app.sweep import results_folder, study_arguments, sweep
from netsim.units import parse_size

NETWORKS = ("ring-8", "ring-16", "switch-16", "torus-4x4", "torus-2x4x4", "torus-4x4x4", "torus-8x8", "fat-tree-32",
            "dgx-8x4")
QUICK_NETWORKS = ("ring-16", "torus-4x4", "dgx-8x4")
BACKENDS = ("analytical", "congestion-aware", "garnet")
KINDS = ("all-reduce", "all-to-all")


def measure(out, quick: bool, jobs: int | None, max_packet_size: int) -> pd.DataFrame:
    sizes = ["1MiB", "16MiB"] if quick else ["1MiB", "4MiB", "16MiB", "64MiB", "256MiB"]
    networks = list(QUICK_NETWORKS if quick else NETWORKS)
    base = {"command": "collective", "algorithm": "direct"}
    frames = [sweep("backends", base, {"network": networks, "kind": list(KINDS), "size": sizes,
                                       "backend": list(BACKENDS[:2])}, out, jobs=jobs),
              sweep("backends-packet", base, {"network": networks, "kind": list(KINDS), "backend": ["garnet"],
                                              "size": [s for s in sizes if parse_size(s) <= max_packet_size]},
                    out, jobs=jobs)]
    frame = pd.concat(frames, ignore_index=True)
    table = frame.pivot_table(index=["network", "kind", "size_bytes"], columns="backend",
                              values="collective_time_ns").reset_index()
    table["aware_over_unaware"] = table["congestion-aware"] / table["analytical"]
    table["packet_over_unaware"] = table["garnet"] / table["analytical"]
    # how much of the packet backend's extra time (over the congestion-unaware one) the congestion-aware model has
    table["share_of_packet_excess"] = ((table["congestion-aware"] - table["analytical"])
                                       / (table["garnet"] - table["analytical"]))
    return table.sort_values(["network", "kind", "size_bytes"])


def main() -> None:
    parser = study_arguments(__doc__.splitlines()[0], "results/backends", "1 and 16 MiB on three networks")
    parser.add_argument("--max-packet-size", default="64MiB", help="largest size the packet backend runs")
    args = parser.parse_args()
    out = results_folder(args)
    table = measure(out, args.quick, args.jobs, parse_size(args.max_packet_size))
    table.to_csv(out / "backends.csv", index=False)
    print("time relative to congestion-unaware (aware / packet), smallest and largest size; "
          "share of the packet backend's excess the congestion-aware model predicts")
    for (network, kind), rows in table.groupby(["network", "kind"], sort=False):
        rows = rows.dropna(subset=["garnet"])
        first, last = rows.iloc[0], rows.iloc[-1]
        print(f"{network:12} direct {kind:11} {first['size_bytes'] / 2**20:4.0f} MiB "
              f"{first['aware_over_unaware']:5.2f} / {first['packet_over_unaware']:5.2f}   "
              f"{last['size_bytes'] / 2**20:4.0f} MiB {last['aware_over_unaware']:5.2f} / "
              f"{last['packet_over_unaware']:5.2f}   share {last['share_of_packet_excess']:6.0%}")
    print(f"wrote {out / 'backends.csv'}")


if __name__ == "__main__":
    main()

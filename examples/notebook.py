"""netsim from Python, as in a notebook: each `# %%` is a cell (VS Code and Jupyter's
"percent" format run them one by one; `python examples/notebook.py` runs them all).

    pip install ".[plot]"   # for the last cell's figure
"""

# %% One collective on both backends: how much does congestion cost?
import netsim

for backend in ("analytical", "garnet"):
    result = netsim.collective("all-to-all", "1MiB", network="torus-4x4", backend=backend)
    s = result.summary
    print(f"{backend:>10}: {s['collective_time_ns'] / 1e3:8.1f} us, busbw {s['busbw_GBps']:6.2f} GB/s, "
          f"busiest link at {s['max_link_utilization']:.2f}")

# %% The per-link table is a pandas DataFrame (links.csv's columns: docs/outputs.md)
links = result.tables["links"]
print(links.groupby("dim")["utilization"].agg(["mean", "max"]))

# %% A size sweep, nccl-tests style: one row per size
sizes = netsim.collective("all-reduce", "4KiB:4MiB:4", network="ring-16").tables["sizes"]
print(sizes[["size_bytes", "collective_time_ns", "busbw_GBps"]].to_string(index=False))

# %% A training iteration, with a config key overridden as --set would
training = netsim.run(network="torus-4x4", workload="Resnet50_DataParallel",
                      set={"topology.bandwidth": "100GB/s", "preferred-dataset-splits": 8})
s = training.summary
print(f"iteration {s['end_to_end_time_ns'] / 1e6:.3f} ms: compute {s['compute_time_ns'] / 1e6:.3f} ms, "
      f"exposed communication {s['exposed_comm_time_ns'] / 1e6:.3f} ms")
end_to_end = training.tables["end_to_end"]
print(end_to_end.nlargest(3, "wg_total_comm_ns")[["layer", "wg_total_comm_ns", "wg_exposed_comm_ns"]])

# %% Bad input is a one-line error, as on the command line
try:
    netsim.collective("all-reduce", "64 parsecs")
except netsim.ConfigError as error:
    print("error:", error)

# %% A figure (needs matplotlib): bus bandwidth against size
try:
    import matplotlib
except ModuleNotFoundError:
    print("matplotlib is not installed: no figure")
else:
    import tempfile
    from pathlib import Path

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3), constrained_layout=True)
    ax.plot(sizes["size_bytes"], sizes["busbw_GBps"], marker="o", label="ring all-reduce, ring-16")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("size per NPU (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.legend()
    path = Path(tempfile.mkdtemp()) / "busbw.png"
    fig.savefig(path)
    print("wrote", path)

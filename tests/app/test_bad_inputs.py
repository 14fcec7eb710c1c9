"""A corpus of bad inputs, one of each kind, across every input kind and command: each gives one
line on stderr naming what is wrong and a non-zero exit; none ends in a traceback, none is
accepted silently, none prints argparse's usage text."""

import pytest

from netsim import budget
from netsim.app.cli import main
from netsim.errors import ConfigError

RING = 'topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ {bw} ]\nlatency: [ 500 ]\n'
LEGACY_JSON = ('{{"topologies-per-dim": ["Ring"], "units-count": [8], "links-count": [16], "link-bandwidth": [{bw}], '
               '"link-latency": [500]}}')
TORUS = '[topology]\nkind = "torus"\ndims = [4]\nbandwidth = "50GB/s"\nlatency = "500ns"\n'
LAYER = "l1 -1 {fwd} NONE 0 5 NONE 0 5 ALLREDUCE {size} 5\n"
SUMMARY = '{{"name": "r", "backend": "analytical", "partial": false, "events": 1, "wall_time_s": 0.1{more}}}'
STUDY = '[base]\ncommand = "collective"\nkind = "all-reduce"\nsize = "1KiB"\n'

# (files to write: name -> text, command line, a fragment of the one line expected)
CASES = {
    "topology kind a list": ({"net.toml": TORUS.replace('"torus"', '["torus"]')}, ["run", "--network", "net.toml"],
                             "key 'topology.kind': expected one of torus"),
    "a 5000-character network name": ({}, ["run", "--network", "x" * 5000], "not a network file (File name too long)"),
    "NaN in ASTRA-sim YAML": ({"n.yml": RING.format(bw=".nan")}, ["run", "--network", "n.yml"], "not a finite number"),
    "1e400 in ASTRA-sim YAML": ({"n.yml": RING.format(bw="1.0e+400")}, ["run", "--network", "n.yml"],
                                "not a finite number"),
    "NaN in ASTRA-sim JSON": ({"n.json": LEGACY_JSON.format(bw="NaN")}, ["run", "--network", "n.json"],
                              "not a finite number"),
    "1e400 in ASTRA-sim JSON": ({"n.json": LEGACY_JSON.format(bw="1e400")}, ["run", "--network", "n.json"],
                                "not a finite number"),
    "NaN count in ASTRA-sim Garnet text": ({"g.txt": "num-npus: nan\nnum-packages: 1\n"}, ["run", "--network", "g.txt"],
                                           "g.txt:1: key 'num-npus': expected a finite number, got nan"),
    "a fractional NPU count in ASTRA-sim YAML": ({"n.yml": RING.format(bw=50).replace("[ 8 ]", "[ 8.5 ]")},
                                                 ["run", "--network", "n.yml"],
                                                 "n.yml:2: key 'npus_count': expected whole numbers of at least 1, got 8.5"),
    "a negative bandwidth in ASTRA-sim YAML, named as written": (
        {"n.yml": RING.format(bw=-5)}, ["run", "--network", "n.yml"],
        "n.yml:3: key 'bandwidth': expected bandwidths from 1e-06 to 1e+12 GB/s, got -5"),
    "a fractional links-count in ASTRA-sim JSON": ({"n.json": LEGACY_JSON.format(bw=50).replace("[16]", "[2.9]")},
                                                   ["run", "--network", "n.json"],
                                                   "key 'links-count': expected whole numbers of at least 1, got 2.9"),
    "a negative latency in ASTRA-sim JSON, named as written": (
        {"n.json": LEGACY_JSON.format(bw=50).replace('"link-latency": [500]', '"link-latency": [-1]')},
        ["run", "--network", "n.json"], "key 'link-latency': expected latencies from 0 to 1e+15 ns, got -1"),
    "dimensions-count as a string in ASTRA-sim JSON": (
        {"n.json": LEGACY_JSON.format(bw=50).replace('{"', '{"dimensions-count": "1", "', 1)},
        ["run", "--network", "n.json"], "key 'dimensions-count': expected a whole number, got '1'"),
    "a fractional router latency in ASTRA-sim Garnet text": (
        {"g.txt": "num-npus: 8\nnum-packages: 1\nflit-width: 2048\nrouter-latency: 1.7\n"}, ["run", "--network", "g.txt"],
        "g.txt:4: key 'router-latency': expected a whole number of at least 1, got 1.7"),
    "a flit width of part of a byte in ASTRA-sim Garnet text": (
        {"g.txt": "num-npus: 8\nnum-packages: 1\nflit-width: 12\n"}, ["run", "--network", "g.txt"],
        "g.txt:3: key 'flit-width': expected whole bytes, in bits (a multiple of 8), got 12"),
    "a YAML integer key": ({"n.yml": RING.format(bw=50) + "1: 2\n"}, ["run", "--network", "n.yml"],
                           "key '1': unknown key"),
    "deeply nested TOML": ({"n.toml": "a = " + "[" * 3000 + "]" * 3000 + "\n"}, ["run", "--network", "n.toml"],
                           "nested too deeply"),
    "deeply nested YAML": ({"n.yml": "topology: " + "[" * 3000 + "]" * 3000 + "\n"}, ["run", "--network", "n.yml"],
                           "nested too deeply"),
    "deeply nested JSON": ({"n.json": '{"topologies-per-dim": ' + "[" * 100000 + "]" * 100000 + "}"},
                           ["run", "--network", "n.json"], "nested too deeply"),
    "deeply nested --set": ({}, ["run", "--set", "topology.dims=" + "[" * 3000 + "]" * 3000], "nested too deeply"),
    "nan compute in a legacy workload": ({"w.txt": "DATA\n1\n" + LAYER.format(fwd="nan", size=1000)},
                                         ["run", "--workload", "w.txt"], "field 'fwd compute': expected an integer"),
    "inf size in a legacy workload": ({"w.txt": "DATA\n1\n" + LAYER.format(fwd=5, size="inf")},
                                      ["run", "--workload", "w.txt"], "field 'wg comm size': expected an integer"),
    "a size past 64 bits": ({"w.txt": "DATA\n1\n" + LAYER.format(fwd=5, size=10**30)}, ["run", "--workload", "w.txt"],
                            "out of range"),
    "a workload with no layers": ({"w.txt": "DATA\n0\n"}, ["run", "--workload", "w.txt"], "expected at least one layer"),
    "TOML workload that is a string": ({"w.toml": 'workload = "x"\n'}, ["run", "--workload", "w.toml"],
                                       "key 'workload': expected the table [workload]"),
    "TOML workload reserved a string": ({"w.toml": '[workload]\nloop = "DATA"\n[[layer]]\nreserved = "x"\n'},
                                        ["run", "--workload", "w.toml"], "key 'reserved': expected -1 or the index"),
    "unknown key inside [workload]": ({"w.toml": '[workload]\nloop = "DATA"\nbogus = 1\n[[layer]]\nname = "a"\n'},
                                      ["run", "--workload", "w.toml"], "key 'workload.bogus': unknown key"),
    "unknown top-level workload key": ({"w.toml": 'mystery = 1\n[workload]\nloop = "DATA"\n'},
                                       ["run", "--workload", "w.toml"], "key 'mystery': unknown key"),
    "--out naming a file": ({"taken": ""}, ["run", "--out", "taken"], "taken: cannot write the output folder"),
    "--out in an unwritable place": ({}, ["run", "--out", "/proc/netsim"], "cannot write the output folder"),
    "workload gen --out in an unwritable place": ({}, ["workload", "gen", "--out", "/proc/netsim"],
                                                  "cannot write the workload"),
    "workload gen of absurd dimensions": ({}, ["workload", "gen", "--hidden", str(10**30)], "beyond 2^63 - 1"),
    "--scheduler not a URL": ({"s.toml": STUDY}, ["sweep", "s.toml", "--scheduler", "not-a-url"],
                              "expected a Dask scheduler address tcp://HOST:PORT"),
    "--scheduler over TLS": ({"s.toml": STUDY}, ["sweep", "s.toml", "--scheduler", "tls://127.0.0.1:8786"],
                             "TLS is not supported; netsim trusts the Dask cluster"),
    "report on links.csv missing columns": (
        {"r/summary.json": SUMMARY.format(more=""), "r/links.csv": "link_id,src\n0,1\n"}, ["report", "r"],
        "links.csv: damaged or not netsim's: missing column(s) dst"),
    "report on a folder whose table was cut": (
        {"r/summary.json": SUMMARY.format(more=', "files": {"links.csv": 999}'), "r/links.csv": "link_id,src\n0,1\n"},
        ["report", "r"], "damaged output folder: links.csv is 16 bytes, summary.json lists 999 bytes"),
    "a bandwidth in GBps": ({}, ["collective", "all-reduce", "--size", "1KiB", "--set", "topology.bandwidth=50GBps"],
                            "ambiguous unit 'GBps': write 'GB/s' for bytes or 'Gbps' for bits"),
    "a collective on 1 NPU": ({}, ["collective", "all-reduce", "--size", "1KiB", "--set", "topology.dims=[1]"],
                              "has 1 NPU: a collective needs at least 2"),
    "--backend and --set backend disagree": ({}, ["run", "--backend", "analytical", "--set", "backend=garnet"],
                                             "--backend analytical and --set backend=garnet disagree"),
    "an empty [grid]": ({"s.toml": STUDY + "[grid]\n"}, ["sweep", "s.toml"], "[grid] is empty"),
    "a study's backend twice": ({"s.toml": STUDY + 'backend = "garnet"\n"network.backend" = "analytical"\n'},
                                ["sweep", "s.toml"], "sets 'backend' again"),
    "a study's results outside its folder": ({"s.toml": 'results = "../r.jsonl"\n' + STUDY}, ["sweep", "s.toml"],
                                             "expected a file name in the study's folder"),
    "--jobs beyond reason": ({"s.toml": STUDY}, ["sweep", "s.toml", "--jobs", "100000"], "at most"),
    "a billion chunks": ({}, ["collective", "all-reduce", "--size", "64MiB", "--set",
                              "preferred-dataset-splits=1000000000"], "67,108,864 chunks each), more than the"),
    "a 100,000-NPU training run": ({}, ["run", "--set", "topology.dims=[100000]"],
                                   "this run of Resnet50_DataParallel would need about"),
    "an unknown collective kind": ({}, ["collective", "bogus", "--size", "1KiB"], "argument kind: invalid choice"),
    "--rate not a number": ({}, ["synth", "--pattern", "uniform", "--rate", "abc"],
                            "argument --rate: invalid float value: 'abc' (see 'netsim synth --help')"),
    "--seed not a number": ({}, ["run", "--seed", "abc"], "argument --seed: invalid int value: 'abc'"),
    "no command": ({}, [], "the following arguments are required: COMMAND"),
    "--out on report, which writes no folder": ({}, ["report", "r", "--out", "x"], "unrecognized arguments: --out x"),
    "--seed on topo, which draws nothing": ({}, ["topo", "torus-4x4", "--seed", "3"], "unrecognized arguments: --seed"),
    "a per-dimension override of a dimension the network lacks": (
        {}, ["collective", "all-reduce", "--size", "4KiB", "--network", "ring-8", "--backend", "garnet",
             "--set", "garnet.dim.1.vcs=2"], "garnet.dim.1: the network has no dimension 1 (its dimensions: 0;"),
    "--rate with --sweep, which chooses its loads": ({}, ["synth", "--pattern", "uniform", "--rate", "0.1", "--sweep"],
                                                     "--rate: a sweep chooses its loads"),
    "an empty --algorithm": ({}, ["collective", "all-reduce", "--size", "1KiB", "--algorithm", ""],
                             "--algorithm: expected algorithm names, one per dimension joined by '_'"),
    "an --algorithm with a name left out": ({}, ["collective", "all-reduce", "--size", "1KiB", "--algorithm", "ring_"],
                                            "got 'ring_'"),
    "--set on sweep (the study sets keys)": ({"s.toml": STUDY}, ["sweep", "s.toml", "--set", "x=1"],
                                             "unrecognized arguments: --set"),
    "a fat-tree of both forms": ({}, ["topo", "fat-tree-64", "--set", "topology.spines=4"],
                                 "fat-tree: give either levels and radix (a k-ary n-tree) or leaves"),
    "a fat-tree's taper of the wrong length": ({}, ["topo", "fat-tree-64", "--set", "topology.oversubscription=[2]"],
                                               "oversubscription lists 1 numbers for 3 levels"),
    "a dragonfly routed by dimension order": ({}, ["topo", "dragonfly-72", "--set", "garnet.routing=dor"],
                                              "key 'garnet.routing': expected dragonfly-min or ugal on a dragonfly"),
    "bad-dragon traffic off a dragonfly": ({}, ["synth", "--network", "torus-4x4", "--pattern", "bad-dragon",
                                                "--rate", "0.1", "--cycles", "10"],
                                           "'bad-dragon' needs a dragonfly, not a torus"),
    # issue 28, item 2: a key given twice was taken silently, the last one winning
    "dimensions-count twice in ASTRA-sim JSON": (
        {"n.json": LEGACY_JSON.format(bw=50).replace('{"', '{"dimensions-count": 1, "dimensions-count": 2, "', 1)},
        ["run", "--network", "n.json"], "n.json:1: key 'dimensions-count' is given twice; keep one"),
    "all-reduce-implementation twice in ASTRA-sim system JSON": (
        {"s.json": '{\n"all-reduce-implementation": ["ring"],\n"all-reduce-implementation": ["direct"]\n}\n'},
        ["collective", "all-reduce", "--size", "1KiB", "--system", "s.json"],
        "s.json:3: key 'all-reduce-implementation' is given twice; keep one"),
    "npus_count twice in ASTRA-sim YAML": ({"n.yml": RING.format(bw=50) + "npus_count: [ 64 ]\n"},
                                           ["run", "--network", "n.yml"],
                                           "n.yml:5: key 'npus_count' is given twice; keep one"),
    "a key twice in a legacy system text file": (
        {"s.txt": "scheduling-policy: LIFO\nall-reduce-implementation: ring\nall-reduce-implementation: direct\n"},
        ["collective", "all-reduce", "--size", "1KiB", "--system", "s.txt"],
        "s.txt:3: key 'all-reduce-implementation' is given twice; keep one"),
    "a key twice in an ASTRA-sim Garnet text file": (
        {"g.txt": "num-npus: 8\nnum-packages: 1\nflit-width: 128\nnum-npus: 16\n"}, ["run", "--network", "g.txt"],
        "g.txt:4: key 'num-npus' is given twice; keep one"),
    "a bandwidth of 1e20 GB/s in ASTRA-sim JSON": ({"n.json": LEGACY_JSON.format(bw="1e20")},
                                                   ["run", "--network", "n.json"],
                                                   "key 'link-bandwidth': expected bandwidths from 1e-06 to 1e+12 GB/s, "
                                                   "got 1e+20"),
    # issue 28, item 5: a summary.json that is not netsim's was reported as an empty or bogus table
    "report on a summary.json with no netsim keys": ({"r/summary.json": '{"hello": 1}'}, ["report", "r"],
                                                     "summary.json: damaged or not netsim's: no key 'name'"),
    "report on a summary.json with a wrong type": (
        {"r/summary.json": SUMMARY.format(more=', "max_link_utilization": "high"')}, ["report", "r"],
        "summary.json: damaged or not netsim's: key 'max_link_utilization' is 'high', expected a number"),
    "report on a summary.json whose partial is no boolean": (
        {"r/summary.json": SUMMARY.format(more="").replace("false", '"no"')}, ["report", "r"],
        "summary.json: damaged or not netsim's: key 'partial' is 'no'"),
    # issue 28, item 7: tracebacks
    "workload to-chakra --out naming a file": ({"taken": ""}, ["workload", "to-chakra", "microAllReduce", "--out",
                                                                "taken"], "taken: cannot write the traces (File exists)"),
    "--size 1e308": ({}, ["collective", "all-reduce", "--size", "1e308"], "--size: expected a size like '64MiB', "
                                                                           "'4KiB', '1GB' or a number of bytes, got "
                                                                           "'1e308' (beyond 2^63 - 1 bytes)"),
    "--size up to 1e300": ({}, ["collective", "all-reduce", "--size", "1KiB:1e300"], "(beyond 2^63 - 1 bytes)"),
    "a superscript digit in a system TOML algorithm": (
        {"s.toml": 'all-reduce-implementation = ["direct\u00b2"]\n'},
        ["collective", "all-reduce", "--size", "1KiB", "--system", "s.toml"], "unknown algorithm 'direct\u00b2'"),
    "a superscript digit as a legacy workload's layer count": (
        {"w.txt": "DATA\n\u00b2\n" + LAYER.format(fwd=5, size=1000)}, ["run", "--workload", "w.txt"],
        "w.txt:2: expected the number of layers"),
    "a superscript digit as a comm group's number": (
        {"t/readme": "", "g.json": '{"\u00b2": [0, 1]}'}, ["run", "--workload", "t", "--comm-groups", "g.json"],
        "g.json: key '\u00b2': expected a communicator group number >= 1"),
    "a 5000-digit integer in a TOML file": ({"n.toml": TORUS.replace("[4]", "[" + "9" * 5000 + "]")},
                                            ["run", "--network", "n.toml"],
                                            "n.toml: holds an integer of thousands of digits, too long to read"),
    "a 5000-digit integer in --set": ({}, ["run", "--set", "topology.dims=[" + "9" * 5000 + "]"],
                                      "--set topology.dims: holds an integer of thousands of digits"),
    "a 5000-digit integer in ASTRA-sim YAML": ({"n.yml": RING.format(bw="9" * 5000)}, ["run", "--network", "n.yml"],
                                               "n.yml: holds an integer of thousands of digits"),
    "a 5000-digit integer in ASTRA-sim JSON": ({"n.json": LEGACY_JSON.format(bw="9" * 5000)},
                                               ["run", "--network", "n.json"],
                                               "n.json: holds an integer of thousands of digits"),
    "a 5000-digit integer in a legacy system file": (
        {"s.txt": "preferred-dataset-splits: " + "9" * 5000 + "\n"}, ["collective", "all-reduce", "--size", "1KiB",
                                                                       "--system", "s.txt"],
        "key 'preferred-dataset-splits'"),
    # issue 28, item 3: keys and columns that were ignored
    "a misspelt legacy workload header option": (
        {"w.txt": "DATA bucket-sise: 1000\n1\n" + LAYER.format(fwd=5, size=1000)}, ["run", "--workload", "w.txt"],
        "w.txt:1: header: unknown option 'bucket-sise:' (did you mean 'bucket_size'?)"),
    "a 13th column on a DATA workload line": (
        {"w.txt": "DATA\n1\n" + LAYER.format(fwd=5, size=1000).replace("\n", " MODEL\n")},
        ["run", "--workload", "w.txt"], "w.txt:3: column 13 ('MODEL'): a layer's own parallelism applies to "
                                        "HYBRID_CUSTOMIZED only"),
    "a GEMM layer too large to compute": (
        {"w.toml": '[workload]\nloop = "DATA"\n[[layer]]\ngemm = [1000000000000, 1000000000000, 1000000000000]\n'},
        ["run", "--workload", "w.toml"], "w.toml:4: layer 0 key 'gemm': the GEMM [1000000000000, 1000000000000, "
                                         "1000000000000] takes"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path, monkeypatch, capsys, name):
    files, argv, expected = CASES[name]
    monkeypatch.setattr(budget, "available_memory", lambda: 24 << 30)  # memory refusals alike on every host
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.chdir(tmp_path)
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("netsim: error: "), err
    assert expected in err, err
    assert "usage:" not in out + err


def test_memory_budget_grows_linearly_with_the_npus_and_refuses_only_what_cannot_fit(monkeypatch):
    """Member lists are shared by a communicator's members, so memory grows as NPUs (it once grew as
    NPUs^2 and refused a 100,000-NPU ring all-reduce that takes 1.5 GB): a run is refused only past what the
    machine has."""
    monkeypatch.setattr(budget, "available_memory", lambda: 24 << 30)
    ring = budget.Budget(npus=100_000, chunks_per_npu=4)
    assert ring.check("this all-reduce") == []
    assert budget.Budget(npus=200_000, chunks_per_npu=4).memory_bytes == 2 * ring.memory_bytes
    with pytest.raises(ConfigError, match=r"would need about .* of memory \(1,000,000 NPUs, 10 chunks each\)"):
        budget.Budget(npus=1_000_000, chunks_per_npu=10).check("this all-reduce")


def test_the_work_estimate_uses_the_fidelitys_rate():
    """Packet fidelity moves flit-hops about ten times faster than flit fidelity: the same work is
    warned about in flit fidelity only."""
    work = 1e8  # flit-hops: about 17 min in flit fidelity, under 2 in packet fidelity
    (warning,) = budget.Budget(npus=16, chunks_per_npu=4, flit_hops=work, fidelity="flit").check("this run")
    assert "in flit fidelity" in warning and "min" in warning
    assert budget.Budget(npus=16, chunks_per_npu=4, flit_hops=work, fidelity="packet").check("this run") == []

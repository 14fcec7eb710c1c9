"""netsim.csv_text writes exactly what pandas' to_csv(index=False) writes, on the fast path and off it."""

from __future__ import annotations

from array import array

import numpy as np
import pandas as pd
import pytest

from netsim import csv_text as module
from netsim.csv_text import csv_text

EDGE_FLOATS = [0.0, 1.0, np.nan, np.inf, -np.inf, 1e16, 9.999999999999999e15, 1e-5, 1e-4, 0.1, 2.5, -3.75,
               123456789.123, 5e-324, 1.7976931348623157e308, 1e22, 37500000.0, 0.9506012626499426]
PLAIN_STRINGS = ["ring", "npu-npu", "a b", "ünï", "reduce-scatter", " lead", "1.5"]


def plain_frame(rng, rows: int) -> pd.DataFrame:
    return pd.DataFrame({
        "edge": rng.choice(EDGE_FLOATS, rows),
        "spread": rng.normal(size=rows) * 10.0 ** rng.integers(-30, 30, rows),
        "repeated": rng.choice([0.0, 0.5, 1e9 / 3], rows),
        "count": rng.integers(-10**15, 10**15, rows),
        "huge": rng.integers(0, 2**63, rows, dtype=np.uint64),
        "flag": rng.integers(0, 2, rows).astype(bool),
        "kind": rng.choice(PLAIN_STRINGS, rows).astype(object),
    })


@pytest.mark.parametrize("rows", [0, 1, 7, 5000])
def test_plain_tables_take_the_fast_path_and_match_pandas(rows):
    frame = plain_frame(np.random.default_rng(rows), rows)
    assert all(module._column_text(frame[name]) is not None for name in frame.columns)
    assert csv_text(frame) == frame.to_csv(index=False)


@pytest.mark.parametrize("column", [
    [1.0, -0.0, 2.0],  # the sign of zero
    ["x,y", "plain", "z"],  # a delimiter, a quote, a line break: quoted by pandas
    ['say "hi"', "a", "b"],
    ["two\nlines", "a", "b"],
    ["", "a", "b"],  # an empty string
    ["a", None, "b"],  # a missing string
    [1.5, "text", 2],  # mixed objects
    np.array([1.5, 2.25, np.nan], dtype=np.float32),
])
def test_other_columns_go_to_pandas_and_match(column):
    frame = pd.DataFrame({"value": column, "other": [1, 2, 3]})
    assert module._column_text(frame["value"]) is None
    assert csv_text(frame) == frame.to_csv(index=False)


def test_a_lone_column_and_odd_headers_match_pandas():
    for frame in (pd.DataFrame({"only": [1.0, np.nan, 3.0]}), pd.DataFrame({"a,b": [1, 2], "c": [3, 4]}),
                  pd.DataFrame({0: [1.5], 1: [2.5]}), pd.DataFrame()):
        assert csv_text(frame) == frame.to_csv(index=False)


def test_a_runs_tables_are_written_as_pandas_writes_them():
    import netsim

    result = netsim.collective("all-reduce", "1MiB", network="torus-4x4")
    assert {"links", "link_timeseries", "detailed"} <= set(result.tables)
    for frame in result.tables.values():
        assert csv_text(frame) == frame.to_csv(index=False)


@pytest.mark.parametrize("column", [
    [1, 2, 3], [10**15, -7, 0], [1, 2.5, 3], [0.5, np.nan, 1e16], [1.0, -0.0, 2.0], [True, False, True],
    ["ring", "a b", "ünï"], ["x,y", "a", "b"], ["", "a", "b"], ["a", None, "b"], [1, True, 2], [1.5, "text", 2],
    [2**63, 1, 2], [np.float64(1.5), 2.0, 3.0],
    array("q", [4, 5, 6]), array("d", [0.25, np.nan, 7.0]), array("f", [1.5, 2.25, 3.0]),
    [0.0, -0.0, 1], [0.0, 1.5, 0.0], array("d", [0.0, -0.0, 2.0]), array("d", [0.0, 1.5, 0.0]),
    # 0.0 then 2**-1067 (low byte 0x80): their bytes hold -0.0's image across the two, not a -0.0
    array("d", [0.0, 2.0 ** -1067, 1.0]),
], ids=repr)
def test_plain_columns_are_written_as_pandas_writes_their_frame(column):
    """A dict of lists or Python arrays: written as `pd.DataFrame(table).to_csv(index=False)`, on
    the fast path when its columns are plain, else through pandas."""
    table = {"value": column, "other": [1, 2, 3]}
    assert csv_text(table) == pd.DataFrame(table).to_csv(index=False)
    frame = module.as_frame(table)
    assert frame.dtypes.tolist() == pd.DataFrame(table).dtypes.tolist()


def test_empty_plain_columns_are_a_header():
    assert csv_text({"a": [], "b": array("d")}) == pd.DataFrame({"a": [], "b": []}).to_csv(index=False)


def test_plain_rows_match_the_frames_rows():
    table = plain_frame(np.random.default_rng(3), 2000)
    columns = {name: table[name].tolist() for name in table.columns}
    assert csv_text(columns) == csv_text(table) == table.to_csv(index=False)

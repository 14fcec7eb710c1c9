"""A table as CSV text, byte for byte what pandas' `frame.to_csv(index=False)` writes, faster.

pandas formats every cell on its own (numpy's float-to-text per value, then a row writer); a
run's time series at thousands of NPUs is a million rows whose columns hold few distinct values
(one sample time per sample, the same link ids and byte counts again and again). Here each
column's distinct values are formatted once (Python's shortest round-trip repr, which numpy's
float text also is) and rows are joined as text. Only plain columns take this path: 64-bit floats
(NaN written empty; not -0.0), integers, booleans, and strings that need no CSV quoting; any other
table is left to pandas, so the output never depends on which path wrote it.

A table is a DataFrame, or plain columns (name -> list or array.array, as `pd.DataFrame(columns)`
would hold them): a command whose tables are all plain (`netsim synth`) writes them without
importing pandas or numpy, a third of a small run's time.
"""

from __future__ import annotations

import os
from array import array
from typing import TYPE_CHECKING, Mapping, Sequence

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    Table = pd.DataFrame | Mapping[str, Sequence]

NEEDS_QUOTING = (",", '"', "\n", "\r")
NEGATIVE_ZERO = array("d", [-0.0]).tobytes()  # its 64-bit image (the sign bit alone)
INT64 = (-2**63, 2**64)  # the integers a list column holds as 64-bit integers (signed or not)


def csv_text(table: Table) -> str:
    """`to_csv(index=False)` of `table` (plain columns: of `pd.DataFrame(table)`), through the fast
    path when every column is plain."""
    names = [str(name) for name in table]
    if len(names) < 2 or not all(_plain(name) for name in names):  # (a lone empty field is quoted: '""')
        return _pandas_text(table)
    if isinstance(table, Mapping):
        columns = [_list_text(values) for values in table.values()]
    else:
        columns = [_column_text(table.iloc[:, i]) for i in range(table.shape[1])]
    if any(column is None for column in columns):
        return _pandas_text(table)
    lines = [",".join(names), *map(",".join, zip(*columns))]
    return os.linesep.join(lines) + os.linesep  # pandas' default line ending


def as_frame(table: Table) -> pd.DataFrame:
    """`table` as a DataFrame: plain columns as `pd.DataFrame` holds them (64-bit Python arrays without
    a copy: pandas would read them value by value, 0.7 s a million)."""
    if not isinstance(table, Mapping):
        return table
    import numpy as np
    import pandas as pd

    return pd.DataFrame({name: np.asarray(values) if isinstance(values, array) and values.typecode in "qd" else values
                         for name, values in table.items()})


def _pandas_text(table: Table) -> str:
    return as_frame(table).to_csv(index=False)


def _plain(text: str) -> bool:
    """A string CSV writes as it is (QUOTE_MINIMAL leaves it unquoted, and it is not empty)."""
    return bool(text) and not any(mark in text for mark in NEEDS_QUOTING)


def _column_text(column: pd.Series) -> np.ndarray | None:
    """Each cell's CSV text (an object array), or None when the column is not plain."""
    import numpy as np  # (here, not at the top: an output folder is prepared before a run, numpy is for its reports)

    values = column.to_numpy()
    kind = values.dtype.kind
    if kind == "f" and values.dtype.itemsize == 8:
        if np.any(np.signbit(values) & (values == 0)):
            return None  # -0.0 is equal to 0.0 as a distinct value, but pandas writes its sign
    elif kind == "O" and all(type(x) is str for x in values):
        values = values.astype(str)
        kind = "U"
    elif kind not in "iub":
        return None
    distinct, where = np.unique(values, return_inverse=True)
    texts = _texts(kind, distinct.tolist())
    return None if texts is None else np.array(texts, dtype=object)[where.reshape(-1)]


def _list_text(values: Sequence) -> list[str] | None:
    """Each cell's CSV text for a plain column given as a list or array.array (pandas' types: ints,
    ints and floats as floats, bools, strings), or None when the column is not plain."""
    kind = _list_kind(values)
    if kind is None:
        return None
    if kind == "f":
        # (an int in a float column is written as a float)
        values = values.tolist() if isinstance(values, array) else [float(value) for value in values]
        if _negative_zero(values):
            return None  # as in _column_text
    distinct = list(dict.fromkeys(values))
    texts = _texts(kind, distinct)
    if texts is None:
        return None
    return list(map(dict(zip(distinct, texts)).__getitem__, values))


def _negative_zero(values: list[float]) -> bool:
    """Is -0.0 among `values`? It equals 0.0, so only its bytes tell: looked for in the values' 64-bit
    images at once (a time series of a million samples holds many zeros)."""
    if 0.0 not in values:
        return False
    images = array("d", values).tobytes()
    at = images.find(NEGATIVE_ZERO)
    while at >= 0:
        if at % 8 == 0:  # (a match across two values' bytes is not one)
            return True
        at = images.find(NEGATIVE_ZERO, at + 1)
    return False


def _list_kind(values: Sequence) -> str | None:
    """The numpy dtype kind pandas gives a list or array.array column (`_texts`' kinds), or None
    when it is not one of them (None, numpy scalars, mixed types, integers past 64 bits)."""
    if isinstance(values, array):
        return "i" if values.typecode in "bBhHiIlLqQ" else "f" if values.typecode == "d" else None
    types = set(map(type, values))
    if not types:
        return "i"  # (no rows: nothing to format)
    if types == {int}:
        return "i" if INT64[0] <= min(values) and max(values) < INT64[1] else None
    if float in types and types <= {int, float}:
        return "f"
    if types == {bool}:
        return "b"
    return "U" if types == {str} else None


def _texts(kind: str, distinct: list) -> list[str] | None:
    """The CSV text of each of a column's distinct values (numpy's dtype kind: f float, i/u int, b
    bool, U string), or None when one is a string CSV would quote."""
    if kind == "f":
        return ["" if x != x else repr(x) for x in distinct]  # NaN (x != x): pandas' empty na_rep
    if kind == "U":
        return distinct if all(_plain(text) for text in distinct) else None
    return [repr(x) for x in distinct]

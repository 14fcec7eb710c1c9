"""A table as CSV text, byte for byte what pandas' `frame.to_csv(index=False)` writes, faster.

pandas formats every cell on its own (numpy's float-to-text per value, then a row writer); a
run's time series at thousands of NPUs is a million rows whose columns hold few distinct values
(one sample time per sample, the same link ids and byte counts again and again). Here each
column's distinct values are formatted once (Python's shortest round-trip repr, which numpy's
float text also is) and rows are joined as text. Only plain columns take this path: 64-bit floats
(NaN written empty; not -0.0), integers, booleans, and strings that need no CSV quoting; any other
table is left to pandas, so the output never depends on which path wrote it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

NEEDS_QUOTING = (",", '"', "\n", "\r")


def csv_text(frame: pd.DataFrame) -> str:
    """`frame.to_csv(index=False)`, through the fast path when every column is plain."""
    names = [str(name) for name in frame.columns]
    if len(names) < 2 or not all(_plain(name) for name in names):  # (a lone empty field is quoted: '""')
        return frame.to_csv(index=False)
    columns = [_column_text(frame.iloc[:, i]) for i in range(frame.shape[1])]
    if any(column is None for column in columns):
        return frame.to_csv(index=False)
    lines = [",".join(names), *map(",".join, zip(*columns))]
    return os.linesep.join(lines) + os.linesep  # pandas' default line ending


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
        distinct, where = np.unique(values, return_inverse=True)
        texts = ["" if x != x else repr(x) for x in distinct.tolist()]  # NaN (x != x): pandas' empty na_rep
    elif kind in "iub":
        distinct, where = np.unique(values, return_inverse=True)
        texts = [repr(x) for x in distinct.tolist()]
    elif kind == "O" and all(type(x) is str for x in values):
        distinct, where = np.unique(values.astype(str), return_inverse=True)
        texts = distinct.tolist()
        if not all(_plain(text) for text in texts):
            return None
    else:
        return None
    return np.array(texts, dtype=object)[where.reshape(-1)]

"""The solver's input and its lexicographic cost (judge/methods/preference/
solver/assignment.py, "How it is computed"): the weights and the bonus
table checked, and turned into one integer cost per cell of the padded
square table, whose least total is the best total, then the lowest spread,
then the most bonus cells; every cost stays below 2**53 (exact in the
float64 of scipy's assignment)."""

from __future__ import annotations

from typing import Any

import numpy as np

_FLOAT_EXACT = 1 << 53


def _as_matrix(weights: Any, checked: bool = True) -> np.ndarray:
    """The weights as a C-ordered int64 table; `checked`: also refuse a
    negative weight (the compiled kernel checks that itself)."""
    if type(weights) is np.ndarray and weights.dtype == np.int64 and weights.ndim == 2 and \
            weights.flags.c_contiguous:
        arr = weights  # the preference method's tables: nothing to convert
    else:
        arr = np.asarray(weights)
        if arr.size == 0:
            return np.zeros(arr.shape if arr.ndim == 2 else (0, 0), dtype=np.int64)
        if arr.ndim != 2:
            raise ValueError("weights must be a rectangular table (players x powers)")
        if arr.dtype.kind == "b":
            arr = arr.astype(np.int64)
        elif arr.dtype.kind == "f":
            if not np.all(np.isfinite(arr)) or not np.all(arr == np.floor(arr)):
                raise ValueError("weights must be integers")
            arr = arr.astype(np.int64)
        elif arr.dtype.kind not in "iu":
            raise ValueError("weights must be integers (below 2**63)")
        arr = np.ascontiguousarray(arr, dtype=np.int64)
    if checked and arr.size:
        _check_sign(arr)
    return arr


def _check_sign(w: np.ndarray) -> None:
    if w.size and w.min() < 0:
        raise ValueError("weights must be >= 0")


def _kernel_status(status: int) -> None:
    """The compiled kernel's refusals (solver_kernel.OK, ...), as _as_matrix,
    _as_bonus and _scale word them."""
    if status == 1:
        raise ValueError("weights must be >= 0")
    if status == 2:
        raise ValueError("bonus must be a table of 0s and 1s the shape of the weights")
    if status == 3:
        raise ValueError(_TOO_LARGE)


def _as_bonus(bonus: Any, w: np.ndarray, checked: bool = True) -> np.ndarray | None:
    """The bonus table as a C-ordered int64 table of w's shape; `checked`:
    also refuse a cell that is neither 0 nor 1 (the compiled kernel checks
    that itself, after the weights' signs, so that the same fault is
    named first either way)."""
    if bonus is None:
        return None
    b = np.asarray(bonus)
    if b.shape != w.shape:
        if not checked:
            _check_sign(w)
        raise ValueError("bonus must be a table of 0s and 1s the shape of the weights")
    # (b == 0) | (b == 1), not np.isin: isin's set-up costs some 20 us a
    # call, a twentieth of a 36-player resolution.
    if checked and not ((b == 0) | (b == 1)).all():
        raise ValueError("bonus must be a table of 0s and 1s the shape of the weights")
    return np.ascontiguousarray(b, dtype=np.int64)


_TOO_LARGE = "weights too large for an exact solve (n * K * maxw must stay below 2**53)"


def _scale(w: np.ndarray, bonus: np.ndarray | None) -> tuple[int, int, int, int]:
    """(n, K, maxw, M) of _costs, checked to keep every cost exact."""
    p, q = w.shape
    n = max(p, q)
    maxw = max(1, int(w.max()))
    K = n * maxw * maxw + 1
    M = 1 if bonus is None else n + 1
    if M * n * K * maxw + n >= _FLOAT_EXACT:
        _check_sign(w)  # the faults in the order _as_matrix and _as_bonus name them
        _as_bonus(bonus, w)
        raise ValueError(_TOO_LARGE)
    return n, K, maxw, M


def _costs(w: np.ndarray, bonus: np.ndarray | None = None) -> tuple[np.ndarray, int, int, int, int]:
    """Padded square cost matrix, n, the scale K, maxw and the bonus scale M
    (1 without a bonus table)."""
    p, q = w.shape
    n, K, maxw, M = _scale(w, bonus)
    c = np.full((n, n), K * maxw, dtype=np.int64)
    c[:p, :q] = K * (maxw - w) + w * w
    if bonus is not None:
        c *= M
        c += 1
        c[:p, :q] -= bonus
    return c, n, K, maxw, M


def _decode(opt: int, n: int, K: int, maxw: int, M: int) -> tuple[int, int, int]:
    """(total weight, sum of squares, bonus cells taken) of an assignment of total cost opt."""
    base, missed = divmod(opt, M)
    return n * maxw - base // K, base % K, (n - missed if M > 1 else 0)

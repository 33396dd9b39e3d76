"""Numbers for people, one formatter for the CLI and the report site.

USD with a `$` and significant digits, probabilities and shares as percentages at the precision their
uncertainty supports, counts with thousands separators; never scientific notation.
"""

from __future__ import annotations

import math


def _finite(value: object) -> float | None:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def usd(value: object, digits: int = 3) -> str:
    """`$0.0000459` -> "$0.0000459"; `$1234.5` -> "$1,234.50" (cents from $1 up, `digits` significant below)."""
    x = _finite(value)
    if x is None:
        return "–"
    sign, x = ("-" if x < 0 else ""), abs(x)
    if x >= 1 or x == 0:
        return f"{sign}${x:,.2f}"
    decimals = digits - 1 - math.floor(math.log10(x))
    return f"{sign}${x:.{decimals}f}"


def decimals_for(se: float | None, default: int = 1) -> int:
    """Decimals of a percentage whose standard error (in percentage points) is `se`: one significant digit of it."""
    if se is None or not math.isfinite(se) or se <= 0:
        return default
    return max(0, min(3, -math.floor(math.log10(se))))


def pct(value: object, se: object = None, default_decimals: int = 1) -> str:
    """A probability or share in [0, 1] as a percentage: 0.7 -> "70.0 %"; with a standard error (same units),
    "70 ± 3 %" at the precision the error supports."""
    x = _finite(value)
    if x is None:
        return "–"
    s = _finite(se)
    d = decimals_for(None if s is None else 100 * s, default_decimals)
    return f"{100 * x:.{d}f} ± {100 * s:.{d}f} %" if s is not None else f"{100 * x:.{d}f} %"


def count(value: object) -> str:
    """12345 -> "12,345"."""
    x = _finite(value)
    return "–" if x is None else f"{int(round(x)):,}"


def number(value: object, digits: int = 3) -> str:
    """A plain quantity with `digits` significant digits, in positional notation (no "e-05")."""
    x = _finite(value)
    if x is None:
        return "–"
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{decimals}f}"


def flagged(text: str, flag: object) -> str:
    """A formatted value with its flag beside it ("95.6 % [below_split_sample]"); no flag on a missing value ("–")."""
    return f"{text} [{flag}]" if isinstance(flag, str) and flag and text != "–" else text

"""Query parameters read the one way every route shares: a bad value is a 400 naming the parameter
and the range it may take, never a number the store cannot hold (`offset=1e20`, `limit=-1`,
`min_cost=nan`, an id past 64 bits).
"""

from __future__ import annotations

import math

from aiohttp import web

from evalkit.api import ApiError

# The largest whole number any parameter may be: ClickHouse's Int64, the widest integer the
# store's parameters take (an offset or id past it would be refused by the store as a 500).
MAX_INT = 2**63 - 1
# Offsets past this page through more rows than any table holds; refusing them keeps the
# store from being asked to skip 10^18 rows.
MAX_OFFSET = 1_000_000_000


class BadParameter(ApiError):
    def __init__(self, message: str) -> None:
        super().__init__(400, message)


def int_param(request: web.Request, name: str, default: int, *, low: int = 0, high: int = MAX_INT) -> int:
    """`?name=` as a whole number in low..high, or `default` when absent or empty."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    return whole_number(name, raw, low=low, high=high)


def whole_number(name: str, raw: str, *, low: int = 0, high: int = MAX_INT) -> int:
    text = raw.strip()
    if not (text.isascii() and text.lstrip("-+").isdigit()) or len(text) > 20:
        raise BadParameter(f"{name}={raw[:40]!r} must be a whole number in {low}..{high}")
    value = int(text)
    if value < low or value > high:
        raise BadParameter(f"{name}={value} is out of range: use {low}..{high}")
    return value


# The spellings of a yes/no parameter (any case), as the OpenAPI document lists them.
TRUE_WORDS = ("true", "1", "yes")
FALSE_WORDS = ("false", "0", "no")


def bool_param(request: web.Request, name: str, default: bool = False) -> bool:
    """`?name=` as yes or no, or `default` when absent or empty: `?failed=maybe` is a 400, not a silent "no"."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise BadParameter(f"{name}={raw[:40]!r} is not a yes or no; use {name}=true or {name}=false "
                       f"(also {', '.join(TRUE_WORDS[1:] + FALSE_WORDS[1:])})")


def choice_param(request: web.Request, name: str, choices: tuple[str, ...], default: str | None = None) -> str | None:
    """`?name=` as one of `choices`, or `default` when absent or empty."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    if raw not in choices:
        raise BadParameter(f"{name}={raw[:40]!r} is not known; use {' or '.join(f'{name}={c}' for c in choices)}"
                           + ("" if default is not None else f", or leave {name} out"))
    return raw


def float_param(request: web.Request, name: str, default: float | None = None, *,
                low: float = -math.inf, high: float = math.inf) -> float | None:
    """`?name=` as a finite number in low..high (NaN and ±Infinity refused), or `default`."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise BadParameter(f"{name}={raw[:40]!r} must be a number{_range(low, high)}") from exc
    if not math.isfinite(value):
        raise BadParameter(f"{name}={raw[:40]!r} must be a finite number{_range(low, high)}")
    if value < low or value > high:
        raise BadParameter(f"{name}={value:g} is out of range{_range(low, high)}")
    return value


def _range(low: float, high: float) -> str:
    if math.isinf(low) and math.isinf(high):
        return ""
    if math.isinf(high):
        return f" of at least {low:g}"
    if math.isinf(low):
        return f" of at most {high:g}"
    return f" in {low:g}..{high:g}"

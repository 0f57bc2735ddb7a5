"""HTML rendering: the Jinja2 environment (autoescape on), Markdown of untrusted agent text, formatting.

Agent content is anyone's input. Markdown goes through markdown-it-py with raw HTML off (a `<script>`
in a message is shown as text) and its link check on (`javascript:`, `vbscript:`, `file:` and
non-image `data:` links are left as text); the result is the only string marked safe. Everything
else is autoescaped by Jinja2.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, Undefined, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from evalkit.ui.images import audio, images, without_images

TEMPLATES = Path(__file__).parent / "templates"

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
_SAFE_SCHEMES = ("http://", "https://", "mailto:", "#", "/")


def _safe_link(url: str) -> bool:
    # markdown-it's own check refuses javascript:/vbscript:/file:/data:; this keeps only plain web links.
    lowered = url.strip().lower()
    return lowered.startswith(_SAFE_SCHEMES) or ":" not in lowered.split("/", 1)[0]


_markdown.validateLink = _safe_link  # type: ignore[method-assign]


def markdown(text: Any) -> Markup:
    if text is None:
        return Markup("")
    if not isinstance(text, str):
        text = content_text(text)
    html = _markdown.render(text)
    # Links open outside the app and tell the target nothing.
    html = html.replace("<a href=", '<a rel="nofollow noopener noreferrer" href=')
    return Markup(html)


def content_text(content: Any) -> str:
    """ATIF message content (a string or content parts) as text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if part.get("type") == "text":
                    parts.append(str(part.get("text") or ""))
                else:
                    # A URL names the image; a data URL or a reference is no text (images.py shows them).
                    source = part.get("source") or {}
                    path = str(source.get("path", ""))
                    named = path if path.lower().startswith(("http://", "https://")) else source.get("media_type")
                    parts.append(f"[{part.get('type')}: {named}]" if named else f"[{part.get('type')}]")
            else:
                parts.append(str(part))
        return "\n\n".join(parts)
    return json.dumps(content, indent=2, default=str)


def pretty_json(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str, sort_keys=False)


def _missing(value: Any) -> bool:
    # An ATIF field left out (Jinja's Undefined) is as unknown as one set to null.
    return value is None or isinstance(value, Undefined) or value == ""


def money(value: Any) -> str:
    """Cost: None is unknown (unpriced), never $0."""
    if _missing(value):
        return "unknown"
    value = float(value)
    if value == 0:
        return "$0"
    if abs(value) < 0.01:
        return f"${value:.6f}".rstrip("0")
    return f"${value:,.4f}"


def priced_share(cost: Any) -> str:
    """" (2 of 8 priced)" after a per-run cost figure taken over the priced runs only (a cost `MetricSummary`, or
    its JSON), when some runs are unpriced and some priced; "" otherwise (all priced, or none: then it is unknown)."""
    n, missing = (cost["n"], cost["missing"]) if isinstance(cost, dict) else (cost.n, cost.missing)
    return f" ({n} of {n + missing} priced)" if n and missing else ""


def number(value: Any, digits: int = 0) -> str:
    if _missing(value):
        return "–"
    if digits == 0 and float(value).is_integer():
        return f"{int(value):,}"
    return f"{float(value):,.{digits or 2}f}"


def seconds(value: Any) -> str:
    if _missing(value):
        return "–"
    value = float(value)
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 120:
        return f"{value:.2f} s"
    return f"{value / 60:.1f} min"


def clip_seconds(value: Any) -> str:
    """How long a clip plays, as a person says it: "0.5 s", "12 s", "2 min 5 s"."""
    if _missing(value):
        return "–"
    value = max(0.0, float(value))
    if value < 60:
        return f"{value:.2f}".rstrip("0").rstrip(".") + " s"
    minutes, rest = divmod(round(value), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def percent(value: Any) -> str:
    return "–" if _missing(value) else f"{float(value) * 100:.1f}%"


def score(value: Any, kind: str) -> str:
    """A score as the scorecard and the CLI show it: a pass rate in percent, any other score as a number."""
    return percent(value) if kind == "pass_fail" else number(value, 3)


def score_delta(value: Any, kind: str) -> str:
    """A difference of scores, signed: percentage points between pass rates (as the CLI's compare says)."""
    if _missing(value):
        return "–"
    return f"{float(value) * 100:+.1f} pp" if kind == "pass_fail" else f"{float(value):+.3f}"


def evaluator_version(version: Any, evaluator: str) -> str:
    """An evaluation's evaluator version, short: a built-in's `contains/1/f759…` is `v1/f759…` beside its name
    (never `vcontains/1/…`); a Python evaluator's `1` is `v1`."""
    return "v" + str(version).removeprefix(f"{evaluator}/")


def when(value: Any) -> str:
    """Unix seconds or ISO text as a short UTC time."""
    if _missing(value):
        return "–"
    if isinstance(value, int | float):
        moment = datetime.fromtimestamp(float(value), UTC)
    else:
        try:
            moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return str(value)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def path_part(value: Any) -> str:
    """One path segment: a session id may hold '/', '?' or '#'."""
    return quote(str(value), safe="@")


def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]),
                      trim_blocks=True, lstrip_blocks=True, auto_reload=False)
    env.filters.update(markdown=markdown, pretty_json=pretty_json, money=money, priced_share=priced_share,
                       number=number, seconds=seconds, percent=percent, score=score, score_delta=score_delta,
                       evaluator_version=evaluator_version, when=when, content_text=content_text,
                       pathpart=path_part, images=images, audio=audio,
                       without_images=without_images, clip_seconds=clip_seconds)
    return env

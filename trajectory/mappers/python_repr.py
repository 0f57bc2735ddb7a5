"""Python reprs that emitters write where JSON would be, read as plain values and never run.

Several instrumentations set an attribute to `str()` of a Python object: LiteLLM's metadata dicts, OpenLIT's
traced functions' arguments, smolagents' listed tool calls, Haystack's `ChatMessage` dataclasses,
openai-agents-v2's Responses items, OpenLIT's LangChain tool arguments and ToolMessages (pydantic's `str()`). `ast`
parses them; nothing is evaluated beyond Python literals.
"""

from __future__ import annotations

import ast
import re
from typing import Any

# A Python literal (kept as it is) or an object's `<...>` repr: an enum member (`<ChatRole.TOOL: 'tool'>`, its
# value) or anything else (`<function get_weather at 0x...>`, None). Literals first, so `<` inside a text stays.
_TOKEN = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|<[\w.]+: ('(?:[^'\\]|\\.)*')>|<[^<>'"]*>""")
_UNREADABLE = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)


def literal(text: object) -> Any:
    """A Python literal's value (`{'a': 1}`, `[...]`, `'text'`), or None if `text` is no string or no literal."""
    if not isinstance(text, str):
        return None
    try:
        return ast.literal_eval(text)
    except _UNREADABLE:
        return None


def object_value(text: str) -> Any:
    """An object's repr as plain values: a constructor call its keyword arguments and `__class__`
    (`ResponseFunctionToolCall(name='f', …)` -> `{"__class__": "ResponseFunctionToolCall", "name": "f", …}`), an enum
    member its value, any other `<...>` None; None if it does not read."""

    def token(found: re.Match[str]) -> str:
        quoted, enum_value = found.group(1), found.group(2)
        return quoted if quoted is not None else enum_value if enum_value is not None else "None"

    try:
        tree = ast.parse(_TOKEN.sub(token, text), mode="eval")
    except _UNREADABLE:
        return None
    return _value(tree.body)


# In a pydantic model's `str()`: a quoted literal or `<...>` repr (kept whole), a bracket, or the blank before the
# next `name=` (the separator between fields, a comma once outside every bracket).
_FIELD_PARTS = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|<[^<>'"]*>)"""
                          r"""|([(\[{])|([)\]}])|\s+(?=[A-Za-z_]\w*=[^=])""")


def model_fields(text: str) -> dict[str, Any] | None:
    """A pydantic model's `str()` as plain values: its fields as space-separated `name=repr` pairs, no class name and
    no commas (LangChain's ToolMessage: `content='light rain' name='get_weather' tool_call_id='call_0'`); None if
    `text` does not read so."""
    depth = 0

    def part(found: re.Match[str]) -> str:
        nonlocal depth
        if found.group(2) is not None:
            depth += 1
        elif found.group(3) is not None:
            depth -= 1
        elif found.group(1) is None and depth == 0:
            return ", "
        return found.group(0)

    fields = object_value(f"_({_FIELD_PARTS.sub(part, text.strip())})")
    if not isinstance(fields, dict) or len(fields) < 2:
        return None
    del fields["__class__"]
    return fields


def _value(node: ast.expr) -> Any:
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return {"__class__": name, **{keyword.arg: _value(keyword.value) for keyword in node.keywords if keyword.arg}}
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_value(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        keys = [_value(key) if key is not None else "" for key in node.keys]
        return {key if isinstance(key, str | int | float | bool) else str(key): _value(value)
                for key, value in zip(keys, node.values, strict=True)}
    try:
        return ast.literal_eval(node)
    except _UNREADABLE:
        return None

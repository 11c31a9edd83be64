"""The type of a value read from JSON: what a session file's free-form fields may hold.

A field the format does not fix (an agent's output, tool arguments, a foreign event's data) is a
:data:`JSONValue`; ``isinstance`` narrows it to the shape a reader looks for.
"""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = "str | int | float | bool | None | list[JSONValue] | dict[str, JSONValue]"
JSONObject: TypeAlias = "dict[str, JSONValue]"

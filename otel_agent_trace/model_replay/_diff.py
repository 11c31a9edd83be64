"""How a request made now differs from the recorded one: method, path, and the body compared as
JSON (model, messages, tools, parameters), each difference named by its JSON path. Headers are
not compared (user agents, retry counts, idempotency keys and credentials change run to run)."""

from __future__ import annotations

import difflib
import json
from typing import Any

_MAX_DIFFERENCES = 20
_MAX_TEXT_LINES = 40


def _json(body: bytes | None) -> Any:
    if body is None:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace")


def differences(
    method: str, path: str, body: bytes | None, rec_method: str, rec_path: str, rec_body: bytes | None
) -> list[str]:
    """One line per difference (at most a few dozen); ``[]`` when the requests are the same."""
    out: list[str] = []
    if method.upper() != rec_method.upper():
        out.append(f"method: recorded {rec_method}, now {method}")
    if path != rec_path:
        out.append(f"path: recorded {rec_path}, now {path}")
    if body == rec_body:
        return out
    _walk(_json(rec_body), _json(body), "body", out)
    return out


def _walk(old: Any, new: Any, where: str, out: list[str]) -> None:
    if len(out) >= _MAX_DIFFERENCES:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            sub = f"{where}.{key}"
            if key not in new:
                out.append(f"{sub}: recorded {_short(old[key])}, now absent")
            elif key not in old:
                out.append(f"{sub}: absent in the recording, now {_short(new[key])}")
            else:
                _walk(old[key], new[key], sub, out)
        return
    if isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            sub = f"{where}[{i}]"
            if i >= len(new):
                out.append(f"{sub}: recorded {_short(old[i])}, now absent")
            elif i >= len(old):
                out.append(f"{sub}: absent in the recording, now {_short(new[i])}")
            else:
                _walk(old[i], new[i], sub, out)
        return
    if old == new and type(old) is type(new):
        return
    if isinstance(old, str) and isinstance(new, str) and ("\n" in old or "\n" in new or len(old) > 80):
        lines = list(
            difflib.unified_diff(old.splitlines(), new.splitlines(), "recorded", "now", lineterm="", n=1)
        )[:_MAX_TEXT_LINES]
        out.append(f"{where}:\n    " + "\n    ".join(lines))
        return
    out.append(f"{where}: recorded {_short(old)}, now {_short(new)}")


def _short(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"…[+{len(text) - limit} chars]"

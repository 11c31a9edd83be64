"""Planted secrets for a recorded run, and the ways a test looks for them in output."""

from __future__ import annotations

import base64
import secrets
import string
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson


def _alnum(n: int) -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(n))


def _upper(n: int) -> str:
    return "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(n))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def make_secrets(home: Path) -> dict[str, str]:
    """Fresh values each run, so a hit can only come from this run's leak."""
    pem_body = _alnum(64)
    header = _b64url(b'{"alg":"HS256","typ":"JWT"}')
    jwt = ".".join([header, _b64url(b'{"sub":"' + _alnum(12).encode() + b'"}'), _alnum(43)])
    return {
        "OPENAI_API_KEY": "sk-proj-" + _alnum(48),
        "DATABASE_PASSWORD": "pw" + _alnum(14),
        "MY_SERVICE_TOKEN": _alnum(32),
        "PLANTED_LATE_VALUE": "late" + _alnum(20),
        "PLANTED_GITHUB": "ghp_" + _alnum(36),
        "PLANTED_AWS": "AKIA" + _upper(16),
        "PLANTED_SLACK": "xoxb-" + _alnum(10) + "-" + _alnum(24),
        "PLANTED_WEB_CLAIM": jwt,
        "PLANTED_ANTHROPIC": "sk-ant-api03-" + _alnum(40),
        "PLANTED_PEM": "-----BEGIN RSA PRIVATE KEY-----\\n" + pem_body + "\\n-----END RSA PRIVATE KEY-----",
        "PLANTED_JSON_VALUE": "jv" + _alnum(18),
        "PLANTED_HEADER_VALUE": "hv" + _alnum(18),
        "PLANTED_CLI_VALUE": "cli" + _alnum(13),
        "PLANTED_QUERY_VALUE": "qv" + _alnum(18),
        "HOME": str(home),
    }


def needles(planted: dict[str, str]) -> dict[str, str]:
    """What must not leak: each value (for the PEM: its key material)."""
    out = {k: v for k, v in planted.items() if k not in ("PLANTED_PEM", "HOME")}
    out["PLANTED_PEM"] = planted["PLANTED_PEM"].split("\\n")[1]
    out["HOME"] = planted["HOME"]
    return out


def strings(value: Any) -> Iterator[str]:
    """Every string in a parsed JSON value (keys included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def jsonl_text(path: Path) -> str:
    """A JSONL file as raw text plus every string of every entry (JSON escapes undone)."""
    raw = path.read_bytes()
    parts = [raw.decode("utf-8", "replace")]
    for line in raw.splitlines():
        if line.strip():
            parts.extend(strings(orjson.loads(line)))
    return "\n".join(parts)


def zip_text(path: Path) -> dict[str, str]:
    """Every member of a ZIP as text (JSON members also with their strings unescaped)."""
    out = {}
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            raw = zf.read(name).decode("utf-8", "replace")
            parts = [raw]
            for line in raw.splitlines() if name.endswith(".jsonl") else [raw]:
                try:
                    parts.extend(strings(orjson.loads(line)))
                except orjson.JSONDecodeError:
                    pass
            out[name] = "\n".join(parts)
    return out


def leaks(text: str, planted: dict[str, str]) -> list[str]:
    return sorted(name for name, value in needles(planted).items() if value in text)

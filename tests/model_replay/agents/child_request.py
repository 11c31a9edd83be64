"""Reads ``CHUNK_URL`` itself, then has a child Python process read it too; prints both outcomes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx

import otel_agent_trace as oat

CHILD = """
import httpx
try:
    print(httpx.post(%r, json={"child": 1}).text[:20])
except BaseException as exc:
    print(type(exc).__name__)
"""

if __name__ == "__main__":
    url = os.environ["CHUNK_URL"]
    with oat.agent("parent"):
        mine = httpx.post(url, json={"parent": 1}).text[:20]
        child = subprocess.run([sys.executable, "-c", CHILD % url], capture_output=True, text=True)
    print(json.dumps({"parent": mine, "child": child.stdout.strip()}))

"""Reads a chunked HTTP body with ``httpx`` (sync) and ``httpx2`` (async), chunk by chunk as the
transport yields them, and prints them as one JSON line."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import httpx
import httpx2

import otel_agent_trace as oat

URL = os.environ["CHUNK_URL"]


def read_sync() -> list[str]:
    with httpx.Client() as client, client.stream("POST", URL, json={"n": 1}) as response:
        return [chunk.decode() for chunk in response.iter_raw()]


async def read_async() -> list[str]:
    async with httpx2.AsyncClient() as client, client.stream("POST", URL, json={"n": 2}) as response:
        return [chunk.decode() async for chunk in response.aiter_raw()]


if __name__ == "__main__":
    with oat.agent("chunks"):  # a span to keep the exchanges under (starts the session)
        out = {"sync": read_sync(), "async": asyncio.run(read_async())}
    print(json.dumps(out))
    sys.stdout.flush()

"""An agent that calls a model (the real OpenAI client against the local recorded-response
server) and runs a tool in a forked child process that calls the model too. Prints "ok"."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, sys.argv[1])  # the repository, for tests.fakes

import openai  # noqa: E402

import otel_agent_trace as oat  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer  # noqa: E402


@oat.tool
def square(x: int) -> int:
    return x * x


def ask(url: str, text: str) -> None:
    client = openai.OpenAI(base_url=url, api_key="sk-test", max_retries=0)
    client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])


def main() -> None:
    server = FakeLLMServer().start()  # served by a thread of the parent only
    parent = os.getpid()
    try:
        with oat.agent("forker"):
            ask(server.openai_url, "first question")
            square(2)
            pid = os.fork()
            if pid == 0:  # the child: one model call and one tool call, then a normal exit
                ask(server.openai_url, "from the child")
                square(3)
                sys.exit(0)
            os.waitpid(pid, 0)
            ask(server.openai_url, "second question")
            oat.snapshot("after the child", messages=[{"role": "user", "content": "second question"}])
    finally:
        if os.getpid() == parent:
            server.stop()
    print("ok")


if __name__ == "__main__":
    main()

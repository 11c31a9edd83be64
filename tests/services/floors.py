"""The model SDKs at the floors their ranges claim (``otel_agent_trace/instrumentation/*/package.py``),
each with its tests, in virtualenvs of their own (the main test environment holds their newest):

* ``mistralai`` 3.0.0, ``litellm`` 1.110.0, ``groq`` 0.30.0 and ``cohere`` 6.0.0 together
  (``tests/constraints-floors-sdks.txt``);
* ``ollama`` 0.4.0 alone (``tests/constraints-floors-ollama.txt``): it needs ``httpx < 0.28``,
  and LiteLLM 1.110 ``httpx >= 0.28``.

``python -m tests.services.floors install | run [pytest options] | pin``: each of the two in turn
(see :mod:`tests.services.leg`), in ``$AGENT_TRACE_FLOORS_VENV`` (default
``~/.cache/otel-agent-trace/floors-venv``) with ``-sdks`` and ``-ollama`` appended. The
tests under another framework (Strands, Pydantic AI: not installed here) are left out.
"""

from __future__ import annotations

import sys

from tests.services.leg import REPO, Leg

NOT_UNDER_FRAMEWORKS = ("-k", "not under_strands and not under_pydantic_ai")
# (pydantic's warnings "Item(s) ... on TypedDict class" about LiteLLM's types: noise in the log)
QUIET = ("-W", "ignore::DeprecationWarning", "-W", "ignore:Item:UserWarning")


def _leg(suffix: str, packages: tuple[str, ...], tests: tuple[str, ...]) -> Leg:
    return Leg(
        name="floors",
        env_var="AGENT_TRACE_FLOORS_VENV",
        default_dir="~/.cache/otel-agent-trace/floors-venv",
        packages=packages,
        constraints=REPO / "tests" / f"constraints-floors{suffix}.txt",
        tests=tests,
        runner=("pytest", "pytest-asyncio", "packaging"),
        suffix=suffix,
        pytest_args=(*QUIET, *NOT_UNDER_FRAMEWORKS),
        show=tuple(p.partition("==")[0] for p in packages),
    )


FLOORS = (
    _leg(
        "-sdks",
        ("mistralai==3.0.0", "litellm==1.110.0", "groq==0.30.0", "cohere==6.0.0"),
        (
            "tests/genai/test_mistral.py",
            "tests/genai/test_litellm.py",
            "tests/genai/test_groq.py",
            "tests/genai/test_cohere.py",
        ),
    ),
    _leg("-ollama", ("ollama==0.4.0",), ("tests/genai/test_ollama.py",)),
)

if __name__ == "__main__":
    from tests.services.leg import main

    sys.exit(main(FLOORS, sys.argv[1:], "python -m tests.services.floors"))

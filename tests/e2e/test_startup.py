"""Start-up: instrumentors of libraries the agent never imports cost it nothing; a library
imported later is still instrumented (the post-import hook)."""

from __future__ import annotations

import json

from .helpers import run_instrumented

LIBRARIES = ("openai", "anthropic", "strands", "agents", "langchain_core", "mcp")

_PROBE = """
import json, sys
loaded_at_start = [m for m in {libs!r} if m in sys.modules]
import openai
from openai.resources.chat.completions import Completions
print(json.dumps({{"loaded_at_start": loaded_at_start,
                  "wrapped_after_import": hasattr(Completions.create, "__wrapped__")}}))
"""


def test_unused_libraries_are_not_imported_at_start_and_used_ones_are_instrumented(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(_PROBE.format(libs=LIBRARIES))
    done = run_instrumented(script, tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["loaded_at_start"] == []
    assert result["wrapped_after_import"] is True

"""A Strands agent (its OpenAI provider) whose system prompt carries what DevDuck's does: the
clock, the working directory, its process id, a session id, a scratch directory and the tail of
its own log file — values that differ on every run. It runs the weather agent of
``examples/model_replay/strands_weather.py`` with that prompt and prints its JSON line.

``--prompt TEXT`` replaces the instructions at the prompt's end; ``--time-label TEXT`` renames the
clock's line (an edit next to a timestamp). ``DUCK_LOG`` names the log file (appended to;
default ``logs/duck.log`` here).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "model_replay"))

from strands_weather import SYSTEM_PROMPT, run  # noqa: E402

LOG_FILE = Path(os.environ.get("DUCK_LOG") or Path.cwd() / "logs" / "duck.log")
SESSION = f"duck-{uuid.uuid4()}"

logger = logging.getLogger("duck")
logger.setLevel(logging.DEBUG)
LOG_FILE.parent.mkdir(parents=True, exist_ok=True)
handler = logging.FileHandler(LOG_FILE, encoding="utf-8")
handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
logger.addHandler(handler)


def recent_logs(lines: int = 5) -> str:
    tail = LOG_FILE.read_text(encoding="utf-8").splitlines(keepends=True)[-lines:]
    return f"## Recent Logs (last {len(tail)} lines):\n```\n{''.join(tail)}```\n"


def system_prompt(instructions: str, time_label: str) -> str:
    now = datetime.now()
    scratch = tempfile.mkdtemp(prefix="duck-")  # a new random name each run
    os.rmdir(scratch)
    return f"""🦆 You are Duck - a minimalist, self-adapting agent.

{time_label}: {now.isoformat()} ({now.strftime("%A, %B %d, %Y")}, epoch {time.time():.3f})
Session ID: {SESSION}
Trace: {uuid.uuid4().hex}
Process: pid {os.getpid()}
Scratch directory: {scratch}
Current working directory: {Path.cwd()}

{recent_logs()}
{instructions}"""


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt", default=SYSTEM_PROMPT)
    parser.add_argument("--time-label", default="Current Time")
    parser.add_argument("question", nargs="?", default="What is the weather in Paris?")
    args = parser.parse_args()
    # (five lines at start-up, as DevDuck logs many: the prompt's "last 5 lines" is the same count
    # in every run; a count that changes is literal text, a real difference)
    logger.info("DevDuck-like agent starting, pid %d, session %s", os.getpid(), SESSION)
    logger.debug("log file %s", LOG_FILE)
    logger.debug("cwd %s", Path.cwd())
    logger.info("model gpt-4o-mini through Strands' OpenAI provider")
    logger.info("tools loaded: get_weather")
    prompt = system_prompt(args.prompt, args.time_label)
    logger.info("Agent call started: %s", args.question)
    print(json.dumps(run(args.question, prompt)))
    logger.info("Agent call completed successfully")

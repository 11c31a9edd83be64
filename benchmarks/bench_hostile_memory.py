"""Peak memory of every reader on the hostile inputs of issue 39 ("Reading hostile files").

The inputs are built by ``tests/offline/hostile.py`` (``build_dense``): a 31 MiB line of
``[{},{},…]`` as a span end's content value, three such lines as span starts never ended, a
session ZIP whose stored ``snapshots.json`` is 60 MB of ``[{},{},…]``, and 1 M span starts never
ended (a 231 MB file). Each reader (``load_session``, ``iter_entries`` and the commands that
read a session) reads each input in a fresh process; its peak RSS is read by a launcher
(``getrusage(RUSAGE_CHILDREN)``), as ``tests/offline/test_dense_inputs.py`` does.

    python benchmarks/bench_hostile_memory.py               # every case, every reader
    python benchmarks/bench_hostile_memory.py --case million_unfinished --reader analyze
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.offline import hostile  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", help="only this case (repeatable)")
    parser.add_argument("--reader", action="append", choices=hostile.READERS, help="only this reader")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cases = hostile.build_dense(Path(tmp) / "cases")
        print("| input | reader | peak RSS | seconds | result |")
        print("|---|---|---|---|---|")
        for name, path in cases.items():
            if args.case and name not in args.case:
                continue
            for reader in args.reader or hostile.READERS:
                began = time.perf_counter()
                out = hostile.peak_rss(reader, path, Path(tmp) / "work")
                took = time.perf_counter() - began
                result = str(out["result"]).replace(str(path.parent) + "/", "").replace("|", "\\|")
                print(
                    f"| {name} | {reader} | {out['max_rss_mb']:.0f} MB | {took:.1f} | {result[:110]} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()

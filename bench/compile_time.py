#!/usr/bin/env python3
"""What including agentcore costs a translation unit, beside nlohmann/json alone.

    bench/compile_time.py                    g++ and clang++, the umbrella and the key headers
    bench/compile_time.py --rounds 5         best of 5 instead of 3
    bench/compile_time.py --cxx g++-12 agentcore/session.hpp agentcore/context.hpp

Each figure is a one-line program (`#include <HEADER>` and `int main() {}`) compiled with
`CXX -std=c++20 -O0 -c`, the compiler's CPU time (user + system) and its peak memory (max RSS),
the best of the rounds. The floor is the same program including `<nlohmann/json.hpp>`, compiled in
the same run, interleaved with the others round by round so that both see the same machine load;
each figure prints its ratio to that floor. The target for `agentcore/session.hpp` is 2x the floor.
No test asserts these figures: compile time depends on the machine and its load.

Options: --cxx (repeatable; default g++ and clang++, those found), --rounds N (default 3),
--flags "..." (added to every compile), --include DIR (default the repository's include/),
--json (one JSON object instead of the table). Python 3 standard library only.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOOR = "nlohmann/json.hpp"
UMBRELLA = "agentcore/session.hpp"
TARGET = 2.0

# The umbrella, then the headers an application includes most for one task, then the heavier
# ones the umbrella pulls in.
DEFAULT_HEADERS = [
    UMBRELLA,
    "agentcore/messages.hpp",
    "agentcore/entries.hpp",
    "agentcore/memory/memory_storage.hpp",
    "agentcore/jsonl/jsonl_storage.hpp",
    "agentcore/session_ops.hpp",
    "agentcore/context.hpp",
    "agentcore/codec.hpp",
    "agentcore/compaction.hpp",
    "agentcore/branch_summary.hpp",
    "agentcore/jsonl/jsonl_repo.hpp",
    "agentcore/any_repo.hpp",
]


def run_one(cmd):
    """Runs one compile; returns (CPU seconds, max RSS in MB) of the compiler and its children."""
    quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
             (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    pid = os.posix_spawnp(cmd[0], cmd, os.environ, file_actions=quiet)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        # Run it again with its output shown, so that the error is readable.
        subprocess.run(cmd, check=False)
        sys.exit(f"failed: {' '.join(cmd)}")
    # ru_maxrss is in KiB on Linux; the driver's largest child (cc1plus or clang -cc1) dominates.
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("headers", nargs="*", help=f"headers to measure (default: {UMBRELLA} and key headers)")
    parser.add_argument("--cxx", action="append", help="compiler (repeatable); default g++ and clang++")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--flags", default="", help="extra compiler flags")
    parser.add_argument("--include", default=str(ROOT / "include"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    compilers = args.cxx or [c for c in ("g++", "clang++") if shutil.which(c)]
    headers = args.headers or DEFAULT_HEADERS
    flags = args.flags.split()
    scratch = Path(tempfile.mkdtemp(prefix="agentcore-compile-time."))
    sources = {}
    for i, header in enumerate([FLOOR, *headers]):
        source = scratch / f"tu{i}.cpp"
        source.write_text(f"#include <{header}>\nint main() {{}}\n")
        sources[header] = source

    results = {}
    try:
        for cxx in compilers:
            best = {h: (float("inf"), float("inf")) for h in sources}
            for _ in range(args.rounds):
                for header, source in sources.items():
                    cmd = [cxx, "-std=c++20", "-O0", *flags, "-I", args.include, "-c", str(source),
                           "-o", os.devnull]
                    cpu, rss = run_one(cmd)
                    best[header] = (min(best[header][0], cpu), min(best[header][1], rss))
            results[cxx] = best
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    if args.json:
        print(json.dumps({
            "machine": {"cpus": os.cpu_count(), "load": os.getloadavg(), "system": platform.platform()},
            "rounds": args.rounds,
            "results": {cxx: {h: {"cpu_s": round(c, 3), "max_rss_mb": round(m, 1),
                                  "ratio_cpu": round(c / r[FLOOR][0], 2),
                                  "ratio_rss": round(m / r[FLOOR][1], 2)}
                              for h, (c, m) in r.items()}
                        for cxx, r in results.items()},
        }, indent=2))
        return

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"-std=c++20 -O0 -c {args.flags}".rstrip() + f"; best of {args.rounds}; load average {load}")
    for cxx, best in results.items():
        version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        floor_cpu, floor_rss = best[FLOOR]
        print(f"\n{version}")
        print(f"| header | CPU s | ÷ floor | max RSS MB | ÷ floor |")
        print(f"|---|---:|---:|---:|---:|")
        for header, (cpu, rss) in best.items():
            print(f"| {header} | {cpu:.2f} | {cpu / floor_cpu:.2f}× | {rss:.0f} | {rss / floor_rss:.2f}× |")
        umbrella = best.get(UMBRELLA)
        if umbrella:
            ratio = umbrella[0] / floor_cpu
            verdict = "met" if ratio <= TARGET else "missed"
            print(f"target: {UMBRELLA} ≤ {TARGET:g}× the floor's CPU time: {ratio:.2f}×, {verdict}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""agentcore beside pi's SessionManager, on the same session files.

    bench/compare.py            sizes 1,000 / 10,000 / 100,000, 1,000 sessions listed, 5 rounds
    bench/compare.py --smoke    1,000 entries, 50 sessions, 1 round: checks that both sides run
                                and report every figure (no timing is checked); well under a minute
    bench/compare.py --scale    1,000 to 1,000,000 entries, each size on its own: every figure per
                                size and its growth per 10x (pi up to --pi-max, 100,000)

Builds bench_jsonl and bench_gen_session (Release), installs the pinned pi (bench/pi/package.json)
with npm into a scratch folder (reused when already there), generates the files once with
bench_gen_session (pi dialect; the small sessions in pi's own folder layout), then runs the two
sides interleaved, agentcore then pi, each round a fresh process of each:

    bench_jsonl --data DIR --json            (agentcore, with the floors)
    node bench/pi/bench_pi.mjs --data DIR --json

and prints a markdown table per operation: the median of each side over the rounds, the median of
the per-round ratios pi / agentcore, the floors of the same runs and agentcore / floor; then every
target with its figure. The raw JSON of every run and the table go to OUT (default
build/bench/compare). Python 3 standard library only.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The keys both sides report, and those only agentcore has (pi has no durable mode, and the
# floors are measured once, on the agentcore side).
def shared_keys(sizes):
    return [f"open_context_{n}" for n in sizes] + [
        "peak_rss_open", "context_deep_tip", "context_deep_tip_cold", "move_rebuild",
        "move_summary_rebuild", "append_mean", "append_p99", "list_sessions",
    ]


def agentcore_only_keys(sizes):
    return [k for n in sizes for k in (f"floor_read_{n}", f"floor_read_split_{n}")] + [
        "move_rebuild_durable", "move_summary_rebuild_durable", "append_durable_mean", "append_durable_p99",
        "floor_write_mean", "floor_write_p99", "floor_write_sync_mean", "floor_write_sync_p99", "floor_list",
        "list_sessions_cold", "list_sessions_headers", f"resume_context_{sizes[-1]}", "append_onto_big_mean",
    ] + [f"open_context_one_thread_{n}" for n in sizes]


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def run(cmd, **kw):
    log("$", " ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def loadavg():
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def machine():
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    def first_line(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0].strip()
        except (OSError, IndexError):
            return "?"
    return {
        "cpu": cpu,
        "nproc": os.cpu_count(),
        "kernel": platform.release(),
        "gxx": first_line(["g++", "--version"]),
        "node": first_line(["node", "--version"]),
        "pi": json.loads((ROOT / "bench/pi/package.json").read_text())["dependencies"]["@mariozechner/pi-coding-agent"],
    }


def generate(gen, data, sizes, sessions, seed):
    """Writes the files once; a folder generated with the same parameters is reused."""
    stamp = data / "generated.json"
    want = {"sizes": sizes, "sessions": sessions, "seed": seed}
    if stamp.exists() and json.loads(stamp.read_text()) == want:
        log(f"reusing the files in {data}")
        return
    if data.exists():
        subprocess.run(["rm", "-rf", str(data)], check=True)
    data.mkdir(parents=True)
    for n in sizes:
        run([gen, "--entries", n, "--seed", seed, "--dialect", "pi", "--out", data / f"pi-{n}.jsonl"], stdout=sys.stderr)
    # pi's listAll reads $PI_CODING_AGENT_DIR/sessions/<--cwd-->/<time>_<id>.jsonl: the same layout.
    run([gen, "--sessions", sessions, "--seed", seed + 2000, "--dialect", "pi", "--root", data / "agent" / "sessions"],
        stdout=sys.stderr)
    stamp.write_text(json.dumps(want))


def by_key(report):
    return {r["key"]: r for r in report["results"] if "key" in r}


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, unit=""):
    if v is None:
        return "—"
    a = abs(v)
    s = f"{v:,.0f}" if a >= 100 else f"{v:,.1f}" if a >= 10 else f"{v:,.2f}" if a >= 1 else f"{v:.3f}"
    return f"{s} {unit}".strip()


def ratio(v):
    return "—" if v is None else (f"{v:,.0f}×" if v >= 100 else f"{v:.1f}×" if v >= 1 else f"{v:.2f}×")


# The figures whose cost depends on the session's size, for --scale (key, label, unit; keys
# with {n} are per size).
SCALE_KEYS = [
    ("open_context_{n}", "open + context of the leaf", "ms"),
    ("peak_rss_open", "peak RSS of open + context", "MB"),
    ("context_deep_tip_cold", "first context of the ~1,000-deep tip after an open", "ms"),
    ("context_deep_tip", "context of the ~1,000-deep tip, again", "µs"),
    ("move_rebuild", "move 1,000 back + rebuild", "µs"),
    ("move_summary_rebuild", "move with a branch summary + rebuild", "µs"),
    ("append_onto_big_mean", "append onto the session, os_buffered (mean)", "µs"),
    ("resume_context_{n}", "resume from the index + context", "ms"),
    ("floor_read_split_{n}", "floor: read() + memchr", "ms"),
]


def run_scale(a, bin_dir, pi_script, pi_dir, data, out):
    """Each size on its own (`--sizes N`: every figure at that size), one fresh process per side
    and size; pi only up to --pi-max. Prints each figure per size and its growth per 10x."""
    sizes = [int(x) for x in a.sizes.split(",")]
    generate(bin_dir / "bench_gen_session", data, sizes, a.sessions, a.seed)
    results = {"agentcore": {}, "pi": {}}
    for n in sizes:
        common = ["--data", data, "--sizes", n, "--appends", a.appends, "--json"]
        sides = {"agentcore": [bin_dir / "bench_jsonl"] + common}
        if n <= a.pi_max:
            sides["pi"] = ["node", pi_script, "--pi", pi_dir] + common
        for side, cmd in sides.items():
            t0 = time.time()
            report = json.loads(run(cmd, capture_output=True, text=True).stdout)
            (out / f"scale-{n}-{side}.json").write_text(json.dumps(report, indent=2) + "\n")
            results[side][n] = by_key(report)
            log(f"{n:,} entries: {side} took {time.time() - t0:.1f} s")
    m = machine()
    lines = [f"Machine: {m['cpu']}, {m['nproc']} CPUs, kernel {m['kernel']}; load {loadavg()} at the end. "
             f"{m['gxx']} -O3 (Release); node {m['node']}; pi-coding-agent {m['pi']}. One run per side and size; "
             f"pi up to {a.pi_max:,} entries.", ""]
    lines.append("| operation | side | " + " | ".join(f"{n:,}" for n in sizes) + " | growth per 10× |")
    lines.append("|---|---|" + "---:|" * len(sizes) + "---|")
    worst = {}
    for key, label, unit in SCALE_KEYS:
        for side in ("agentcore", "pi"):
            vals = [results[side].get(n, {}).get(key.format(n=n), {}).get("value") for n in sizes]
            if all(v is None for v in vals):
                continue
            growth = [b / c for c, b in zip(vals, vals[1:]) if c and b]
            if side == "agentcore" and growth and not key.startswith("floor"):
                worst[label] = max(growth)
            lines.append(f"| {label} | {side} | " + " | ".join(fmt(v, unit) for v in vals) + " | " +
                         (", ".join(ratio(g) for g in growth) or "—") + " |")
    big = sizes[-1]
    rss = results["agentcore"].get(big, {}).get("peak_rss_open", {})
    rss_ratio = rss.get("value", 0) * 1e6 / rss["file_bytes"] if rss.get("file_bytes") else None
    lines += ["", "| target | measured | goal | |", "|---|---:|---|---|"]
    lines.append(f"| peak RSS of open ÷ file, {big:,} entries | {ratio(rss_ratio)} | ≤ 0.2× | "
                 f"{'met' if rss_ratio is not None and rss_ratio <= 0.2 else 'missed'} |")
    for label, g in worst.items():
        lines.append(f"| {label}: largest growth per 10× | {ratio(g)} | linear or better (≤ 10×, 12.5× "
                     f"with noise) | {'met' if g <= 12.5 else 'missed'} |")
    table = "\n".join(lines)
    print(table)
    (out / "scale.md").write_text(table + "\n")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="1,000 entries, 50 sessions, 1 round; checks every key")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--sizes", default="1000,10000,100000")
    p.add_argument("--sessions", type=int, default=1000)
    p.add_argument("--appends", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--build", type=Path, default=ROOT / "build/bench")
    p.add_argument("--pi", type=Path, default=None, help="scratch folder for the npm install (default BUILD/pi)")
    p.add_argument("--data", type=Path, default=None, help="generated files (default BUILD/compare-data[-smoke])")
    p.add_argument("--out", type=Path, default=None, help="raw JSON and the table (default BUILD/compare[-smoke])")
    p.add_argument("--no-build", action="store_true", help="use the programs already built in BUILD")
    p.add_argument("--scale", action="store_true",
                   help="each size on its own, 1,000 to 1,000,000 entries by default: every figure per size and "
                        "its growth per 10x")
    p.add_argument("--pi-max", type=int, default=100000, help="with --scale: the largest size pi runs (default "
                   "100,000: pi holds ~4x the file in memory)")
    a = p.parse_args()
    if a.scale and a.sizes == "1000,10000,100000":
        a.sizes = "1000,10000,100000,1000000"
    if a.smoke:
        a.rounds, a.sizes, a.sessions, a.appends = 1, "1000", 50, 200
    sizes = [int(s) for s in a.sizes.split(",")]
    suffix = "-smoke" if a.smoke else ""
    pi_dir = (a.pi or a.build / "pi").resolve()
    if a.scale:
        suffix += "-scale"
    data = (a.data or a.build / f"compare-data{suffix}").resolve()
    out = (a.out or a.build / f"compare{suffix}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    bin_dir = a.build / "bench"
    pi_script = ROOT / "bench/pi/bench_pi.mjs"

    if not a.no_build:
        run(["cmake", "-S", ROOT, "-B", a.build, "-DCMAKE_BUILD_TYPE=Release", "-DAGENTCORE_BUILD_TESTS=OFF",
             "-DAGENTCORE_BUILD_EXAMPLES=OFF", "-DAGENTCORE_BUILD_TOOLS=OFF"], stdout=subprocess.DEVNULL)
        run(["cmake", "--build", a.build, f"-j{os.cpu_count() or 2}", "--target", "bench_jsonl", "bench_gen_session"],
            stdout=sys.stderr)
    run(["node", pi_script, "--pi", pi_dir, "--install-only"], stdout=sys.stderr)
    if a.scale:
        return run_scale(a, bin_dir, pi_script, pi_dir, data, out)
    generate(bin_dir / "bench_gen_session", data, sizes, a.sessions, a.seed)

    common = ["--data", data, "--sizes", ",".join(map(str, sizes)), "--appends", a.appends, "--json"]
    sides = {
        "agentcore": [bin_dir / "bench_jsonl"] + common,
        "pi": ["node", pi_script, "--pi", pi_dir] + common,
    }
    rounds = []
    started = time.time()
    for r in range(a.rounds):
        this = {}
        for side, cmd in sides.items():
            before = loadavg()
            t0 = time.time()
            proc = run(cmd, capture_output=True, text=True)
            report = json.loads(proc.stdout)
            report["loadavg_before"] = before
            report["seconds"] = round(time.time() - t0, 1)
            (out / f"round{r + 1}-{side}.json").write_text(json.dumps(report, indent=2) + "\n")
            this[side] = report
            log(f"round {r + 1}/{a.rounds}: {side} took {report['seconds']} s (load {before})")
        rounds.append(this)
    elapsed = time.time() - started

    # --- Every key on both sides, and the same entry ids.
    problems = []
    for r, this in enumerate(rounds, 1):
        ac, pi = by_key(this["agentcore"]), by_key(this["pi"])
        for k in shared_keys(sizes):
            for side, keys in (("agentcore", ac), ("pi", pi)):
                if not isinstance(keys.get(k, {}).get("value"), (int, float)):
                    problems.append(f"round {r}: {side} reports no {k}")
        for k in agentcore_only_keys(sizes):
            if not isinstance(ac.get(k, {}).get("value"), (int, float)):
                problems.append(f"round {r}: agentcore reports no {k}")
        for k, field in (("context_deep_tip", "tip"), ("move_rebuild", "target")):
            if ac.get(k, {}).get(field) != pi.get(k, {}).get(field):
                problems.append(f"round {r}: {k}: agentcore's {field} {ac.get(k, {}).get(field)} "
                                f"is not pi's {pi.get(k, {}).get(field)}")
        if ac.get("list_sessions", {}).get("listed") != pi.get("list_sessions", {}).get("listed"):
            problems.append(f"round {r}: the sides listed different numbers of sessions")

    # --- Aggregates.
    def values(side, key, field="value"):
        return [by_key(t[side]).get(key, {}).get(field) for t in rounds]

    def agg(key, field="value"):
        ac, pi = values("agentcore", key, field), values("pi", key, field)
        ratios = [p / c for c, p in zip(ac, pi) if c and p]
        return med(ac), med(pi), med(ratios)

    def floor_ratio(key, floor_key, field="value"):
        return med([c / f for c, f in zip(values("agentcore", key, field), values("agentcore", floor_key))
                    if c and f])

    m = machine()
    big = sizes[-1]
    ac0 = by_key(rounds[0]["agentcore"])
    pi0 = by_key(rounds[0]["pi"])
    file_bytes = ac0.get(f"open_context_{big}", {}).get("file_bytes")
    loads = [t[s]["loadavg_before"] for t in rounds for s in t]
    lines = []
    lines.append(f"Machine: {m['cpu']}, {m['nproc']} CPUs, kernel {m['kernel']}; load average (1/5/15 min) "
                 f"{loads[0]} at the start, {loadavg()} at the end. {m['gxx']} -O3 (Release); node {m['node']}; "
                 f"pi-coding-agent {m['pi']}.")
    lines.append(f"{a.rounds} round(s), agentcore then pi, each a fresh process; seed {a.seed}; "
                 f"{elapsed / 60:.1f} min in all. CPU figures are process CPU time (user + system, of every thread), appends and "
                 f"durable moves wall time.")
    lines.append("")
    lines.append("| operation | agentcore | pi 0.73.1 | pi ÷ agentcore | floor (same run) | agentcore ÷ floor |")
    lines.append("|---|---:|---:|---:|---|---:|")

    def row(label, key, unit, floor_key=None, floor_label="", scale=1.0, field="value"):
        c, p, r = agg(key, field)
        f = med(values("agentcore", floor_key)) if floor_key else None
        fr = floor_ratio(key, floor_key, field) if floor_key else None
        lines.append(f"| {label} | {fmt(c * scale if c is not None else None, unit)} | "
                     f"{fmt(p * scale if p is not None else None, unit)} | {ratio(r)} | "
                     f"{(floor_label + ' ' + fmt(f * scale, unit)) if f is not None else '—'} | {ratio(fr)} |")

    for n in sizes:
        row(f"open + context of the leaf, {n:,} entries", f"open_context_{n}", "ms", f"floor_read_split_{n}",
            "read()+memchr")
    for n in sizes:
        row(f"open + context of the leaf, {n:,} entries, wall time (agentcore scans lines on {m['nproc']} "
            f"threads)", f"open_context_{n}", "ms", f"floor_read_split_{n}", "read()+memchr", field="wall")
    for n in sizes:
        c = med(values("agentcore", f"floor_read_{n}"))
        lines.append(f"| floor: read() of the whole file, {n:,} entries "
                     f"({fmt(by_key(rounds[0]['agentcore']).get(f'open_context_{n}', {}).get('file_bytes', 0) / 1e6, 'MB')}) "
                     f"| {fmt(c, 'ms')} | | | | |")
    c, p, r = agg("peak_rss_open")
    rss_ratio = c * 1e6 / file_bytes if c is not None and file_bytes else None
    pi_rss_ratio = p * 1e6 / file_bytes if p is not None and file_bytes else None
    lines.append(f"| peak RSS of open + context, {big:,} entries (growth, fresh process) | {fmt(c, 'MB')} "
                 f"({ratio(rss_ratio)} the file) | {fmt(p, 'MB')} ({ratio(pi_rss_ratio)} the file) | {ratio(r)} | "
                 f"file {fmt(file_bytes / 1e6 if file_bytes else None, 'MB')} | {ratio(rss_ratio)} |")
    tip = ac0.get("context_deep_tip", {})
    row(f"context of the ~1,000-deep tip ({tip.get('tip')}, depth {tip.get('depth')}; agentcore's path "
        f"{tip.get('path')} entries)", "context_deep_tip", "µs")
    row("first context of that tip right after an open (the open not timed)", "context_deep_tip_cold", "ms")
    row(f"move {ac0.get('move_rebuild', {}).get('back', 1000):,} back + rebuild (os_buffered)", "move_rebuild", "µs")
    row("move with a branch summary + rebuild (os_buffered)", "move_summary_rebuild", "µs")
    row("move + rebuild, durable (wall)", "move_rebuild_durable", "µs", "floor_write_sync_mean", "write()+fdatasync()")
    row("move with a branch summary + rebuild, durable (wall)", "move_summary_rebuild_durable", "µs",
        "floor_write_sync_mean", "write()+fdatasync()")
    count = ac0.get("append_mean", {}).get("count")
    row(f"append to a new session, mean ({count} messages; pi: no sync)", "append_mean", "µs", "floor_write_mean",
        "write()")
    row("append to a new session, p99", "append_p99", "µs", "floor_write_p99", "write()")
    row("append, durable, mean", "append_durable_mean", "µs", "floor_write_sync_mean", "write()+fdatasync()")
    row("append, durable, p99", "append_durable_p99", "µs", "floor_write_sync_p99", "write()+fdatasync()")
    listed = ac0.get('list_sessions', {}).get('listed', a.sessions)
    row(f"list {listed:,} sessions with message count and name (agentcore: from its summary files)",
        "list_sessions", "ms", "floor_list", "readdir+open/pread 4K")

    def only_ac(label, key, unit, floor_key=None, floor_label="", pi_key=None):
        c = med(values("agentcore", key))
        p = med(values("pi", pi_key)) if pi_key else None
        r = med([pv / cv for cv, pv in zip(values("agentcore", key), values("pi", pi_key)) if cv and pv]) \
            if pi_key else None
        f = med(values("agentcore", floor_key)) if floor_key else None
        fr = floor_ratio(key, floor_key) if floor_key else None
        lines.append(f"| {label} | {fmt(c, unit)} | {fmt(p, unit)} | {ratio(r)} | "
                     f"{(floor_label + ' ' + fmt(f, unit)) if f is not None else '—'} | {ratio(fr)} |")

    only_ac(f"list {listed:,} sessions with summaries, cold (no summary files: every session read)",
            "list_sessions_cold", "ms", "floor_list", "readdir+open/pread 4K", pi_key="list_sessions")
    only_ac(f"list {listed:,} sessions, headers only", "list_sessions_headers", "ms", "floor_list",
            "readdir+open/pread 4K")
    for n in sizes:
        only_ac(f"open + context of the leaf, {n:,} entries, the lines scanned by one thread (CPU = wall)",
                f"open_context_one_thread_{n}", "ms", f"floor_read_split_{n}", "read()+memchr",
                pi_key=f"open_context_{n}")
    only_ac(f"resume an unchanged {big:,}-entry session from its index + context", f"resume_context_{big}", "ms",
            f"floor_read_split_{big}", "read()+memchr")

    # --- Targets.
    def target(label, figure, goal, ok):
        mark = "—" if figure is None else ("met" if ok(figure) else "missed")
        lines.append(f"| {label} | {figure} | {goal} | {mark} |")

    lines.append("")
    lines.append("| target | measured | goal | |")
    lines.append("|---|---:|---|---|")
    def speedup(key, goal, field="value"):
        r = agg(key, field)[2]
        clock = " (wall)" if field == "wall" else ""
        target(f"{key}{clock}: pi ÷ agentcore", ratio(r), f"≥ {goal}×", lambda _: r is not None and r >= goal)
    for field in ("value", "wall"):
        clock = " (wall)" if field == "wall" else ""
        speedup(f"open_context_{big}", 30, field)
        fr = floor_ratio(f"open_context_{big}", f"floor_read_split_{big}", field)
        target(f"open_context_{big}{clock}: agentcore ÷ read()+memchr", ratio(fr), "≤ 3×",
               lambda _, v=fr: v is not None and v <= 3)
        if sizes[0] <= 1000:
            speedup(f"open_context_{sizes[0]}", 15, field)
    target("peak RSS of open ÷ file size", ratio(rss_ratio), "≤ 0.2×",
           lambda _: rss_ratio is not None and rss_ratio <= 0.2)
    speedup("context_deep_tip_cold", 20)
    for key, floor_key, goal in (("append_mean", "floor_write_mean", 2),
                                 ("append_durable_mean", "floor_write_sync_mean", 1.1)):
        fr2 = floor_ratio(key, floor_key)
        target(f"{key} ÷ {floor_key}", ratio(fr2), f"≤ {goal}×", lambda _, v=fr2, g=goal: v is not None and v <= g)
    speedup("move_rebuild", 100)
    speedup("move_summary_rebuild", 100)
    speedup("list_sessions", 150)
    resume = med(values("agentcore", f"resume_context_{big}"))
    target(f"resume_context_{big}", fmt(resume, "ms"), "≤ 10 ms", lambda _: resume is not None and resume <= 10)

    table = "\n".join(lines)
    print(table)
    (out / "compare.md").write_text(table + "\n")
    summary = {"machine": m, "params": vars(a) | {"build": str(a.build), "pi": str(pi_dir), "data": str(data),
                                                   "out": str(out)},
               "rounds": rounds, "problems": problems}
    (out / "compare.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    log(f"raw JSON and the table in {out}")
    if problems:
        log("PROBLEMS:\n  " + "\n  ".join(problems))
        return 1
    if a.smoke:
        log(f"smoke: both sides ran and reported every figure ({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

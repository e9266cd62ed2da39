// The peer's side of the comparison: pi's SessionManager (the version pinned in package.json
// beside this file) timed on the files bench_jsonl --data times, with the same operation keys.
//
//   node bench/pi/bench_pi.mjs --pi SCRATCH --data DIR [--sizes 1000,10000,100000] [--appends K] [--json]
//   node bench/pi/bench_pi.mjs --pi SCRATCH --install-only
//
// SCRATCH: where pi is installed (`npm install --no-audit --no-fund` of package.json here, once;
// an install of the pinned version already there is reused). DIR holds what bench/compare.py
// generates with bench_gen_session: pi-<N>.jsonl for each size (pi dialect) and, under
// agent/sessions/, the small sessions for listing in pi's own layout (PI_CODING_AGENT_DIR=DIR/agent).
//
// Clocks, as in bench_jsonl: CPU-bound work is CPU time (process.cpuUsage(): user + system of
// the whole process, so V8's GC and libuv threads count), appends are wall time. Each figure
// also records the wall time. The largest size is the "big" session of the one-off operations
// (the ~1,000-deep tip, moves, peak RSS); both sides derive their entry ids the same way.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, release } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const PINNED = JSON.parse(readFileSync(join(here, "package.json"), "utf8"));
const PI_PACKAGE = "@mariozechner/pi-coding-agent";
const PI_VERSION = PINNED.dependencies[PI_PACKAGE];

// --- Arguments --------------------------------------------------------------------------------

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const text = (name, fallback) => {
    const i = argv.indexOf(name);
    return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
};
function usage(code) {
    (code === 0 ? console.log : console.error)(
        "usage: node bench_pi.mjs --pi SCRATCH --data DIR [--sizes 1000,10000,100000] [--appends K] [--json]\n" +
            "       node bench_pi.mjs --pi SCRATCH --install-only",
    );
    process.exit(code);
}
if (flag("--help") || flag("-h")) usage(0);

// --- Installing pi ----------------------------------------------------------------------------

function installedVersion(folder) {
    try {
        return JSON.parse(readFileSync(join(folder, "node_modules", PI_PACKAGE, "package.json"), "utf8")).version;
    } catch {
        return null;
    }
}

function installPi(folder) {
    if (installedVersion(folder) === PI_VERSION) return;
    mkdirSync(folder, { recursive: true });
    copyFileSync(join(here, "package.json"), join(folder, "package.json"));
    console.error(`installing ${PI_PACKAGE}@${PI_VERSION} into ${folder}`);
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const r = spawnSync(npm, ["install", "--no-audit", "--no-fund"], { cwd: folder, stdio: ["ignore", 2, 2] });
    if (r.status !== 0 || installedVersion(folder) !== PI_VERSION)
        throw new Error(`npm install of ${PI_PACKAGE}@${PI_VERSION} into ${folder} failed`);
}

async function loadSessionManager(folder) {
    const file = join(folder, "node_modules", PI_PACKAGE, "dist", "core", "session-manager.js");
    return (await import(pathToFileURL(file).href)).SessionManager;
}

// --- Measuring --------------------------------------------------------------------------------

const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
};
const wallMs = () => performance.now();

function median(values) {
    if (values.length === 0) return null;
    return percentile(values, 50);
}
// The same rank rule as bench_util.hpp's Samples::percentile.
function percentile(values, p) {
    const sorted = [...values].sort((a, b) => a - b);
    const rank = Math.floor((p / 100) * (sorted.length - 1) + 0.5);
    return sorted[Math.min(rank, sorted.length - 1)];
}
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

// Runs fn `runs` times (after `warmup` untimed runs); the median CPU and wall time of a run, ms.
function timeEach(runs, warmup, fn) {
    for (let i = 0; i < warmup; ++i) fn(i);
    const cpu = [];
    const wall = [];
    for (let i = 0; i < runs; ++i) {
        const c0 = cpuMs();
        const w0 = wallMs();
        fn(i);
        wall.push(wallMs() - w0);
        cpu.push(cpuMs() - c0);
    }
    return { cpu: median(cpu), wall: median(wall), runs };
}

// Short operations: batches of at least ~2 ms of CPU (the CPU clock ticks in microseconds),
// the median over at least `minBatches` batches and `minMs` of CPU; the time per call, ms.
function timeBatched(fn, minBatches = 11, minMs = 300, maxCalls = 200000) {
    let c0 = cpuMs();
    fn(0);
    const once = Math.max(cpuMs() - c0, 0.001);
    const batch = Math.max(1, Math.min(10000, Math.ceil(2 / once)));
    const cpu = [];
    const wall = [];
    let calls = 1;
    let spent = 0;
    while (calls + batch <= maxCalls && (cpu.length < minBatches || spent < minMs)) {
        c0 = cpuMs();
        const w0 = wallMs();
        for (let i = 0; i < batch; ++i) fn(calls + i);
        const c = cpuMs() - c0;
        cpu.push(c / batch);
        wall.push((wallMs() - w0) / batch);
        spent += c;
        calls += batch;
    }
    return { cpu: median(cpu), wall: median(wall), runs: calls - 1, batch };
}

function vmHwmKb() {
    const m = /VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"));
    return m ? Number(m[1]) : 0;
}

// --- The ids both sides derive from the file --------------------------------------------------

// The entries of a pi file, oldest first, without the header (what the bench needs of it).
function entriesOf(manager) {
    return manager.getEntries();
}

// The ~1,000-deep tip: among the entries without children, the one whose depth (entries from
// its root to it, both counted) is nearest to 1,000; the earliest in the file on a tie.
function deepTip(entries, want = 1000) {
    const depth = new Map();
    const parents = new Set();
    for (const e of entries) {
        depth.set(e.id, e.parentId ? (depth.get(e.parentId) ?? 0) + 1 : 1);
        if (e.parentId) parents.add(e.parentId);
    }
    let best = null;
    for (const e of entries) {
        if (parents.has(e.id)) continue;
        const d = depth.get(e.id);
        if (best === null || Math.abs(d - want) < Math.abs(best.depth - want)) best = { id: e.id, depth: d };
    }
    return best;
}

// The two move targets: `back` and `back - 1` entries up from the leaf (the last entry).
function moveTargets(manager, back = 1000) {
    const up = [manager.getLeafId()];
    while (up.length <= back) {
        const e = manager.getEntry(up[up.length - 1]);
        if (!e || !e.parentId) break;
        up.push(e.parentId);
    }
    const far = Math.min(back, up.length - 1);
    return { a: up[far], b: up[far > 0 ? far - 1 : 0], back: far };
}

// The branch summary both sides write: fixed text of 400 characters.
const SUMMARY = "The abandoned branch tried another approach to the failing build; ".repeat(7).slice(0, 400);

// --- The child that measures the peak memory of an open ---------------------------------------

async function childOpen(folder, file) {
    const SessionManager = await loadSessionManager(folder);
    const before = vmHwmKb();
    const manager = SessionManager.open(file);
    const messages = manager.buildSessionContext().messages.length;
    const after = vmHwmKb();
    process.stdout.write(`${before} ${after} ${messages}\n`);
}

function peakRssOfOpen(folder, file) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--pi", folder, "--child-open", file], {
        encoding: "utf8",
        maxBuffer: 1 << 20,
    });
    const m = /^(\d+) (\d+) (\d+)/.exec(r.stdout ?? "");
    if (r.status !== 0 || !m) throw new Error(`the child that opens ${file} failed: ${r.stderr}`);
    return { before: Number(m[1]) * 1024, after: Number(m[2]) * 1024 };
}

// --- The benchmark ----------------------------------------------------------------------------

const opensFor = (n) => (n <= 1000 ? 15 : n <= 10000 ? 7 : 3);

async function run(folder, data, sizes, appendsWanted) {
    const SessionManager = await loadSessionManager(folder);
    const results = [];
    const add = (key, name, value, unit, extra = {}) => results.push({ key, name, value, unit, ...extra });
    const work = join(data, `work-pi-${process.pid}`);
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    const big = sizes[sizes.length - 1];
    const bigFile = join(data, `pi-${big}.jsonl`);

    // Open + buildSessionContext of the leaf, each size.
    for (const n of sizes) {
        const file = join(data, `pi-${n}.jsonl`);
        let messages = 0;
        const t = timeEach(opensFor(n), n >= 100000 ? 0 : 1, () => {
            const manager = SessionManager.open(file);
            messages = manager.buildSessionContext().messages.length;
        });
        add(`open_context_${n}`, `open + context of the leaf, ${n} entries`, t.cpu, "ms", {
            clock: "cpu", wall: t.wall, runs: t.runs, messages,
        });
    }

    // Peak RSS of open + context of the big session, in a fresh process.
    const rss = peakRssOfOpen(folder, bigFile);
    add("peak_rss_open", `peak RSS of open + context, ${big} entries`, (rss.after - rss.before) / 1e6, "MB", {
        clock: "VmHWM growth", absolute_mb: rss.after / 1e6, baseline_mb: rss.before / 1e6,
    });

    // On a writable copy of the big session: the deep tip, moves, moves with a summary.
    const copy = join(work, "big.jsonl");
    copyFileSync(bigFile, copy);
    const manager = SessionManager.open(copy);
    const entries = entriesOf(manager);
    const tip = deepTip(entries);
    {
        const t = timeBatched(() => {
            manager.branch(tip.id);
            return manager.buildSessionContext();
        });
        add("context_deep_tip", "context of the ~1,000-deep tip", t.cpu * 1000, "us", {
            clock: "cpu", wall: t.wall * 1000, runs: t.runs, tip: tip.id, depth: tip.depth,
            messages: (manager.branch(tip.id), manager.buildSessionContext().messages.length),
        });
    }
    // The first context of the tip right after an open of the big session (the open not timed).
    {
        const cpu = [];
        const wall = [];
        for (let i = 0; i < 3; ++i) {
            const fresh = SessionManager.open(bigFile);
            const c0 = cpuMs();
            const w0 = wallMs();
            fresh.branch(tip.id);
            fresh.buildSessionContext();
            wall.push(wallMs() - w0);
            cpu.push(cpuMs() - c0);
        }
        add("context_deep_tip_cold", "first context of the ~1,000-deep tip after an open", median(cpu), "ms", {
            clock: "cpu", wall: median(wall), runs: cpu.length, tip: tip.id,
        });
    }
    const leaf = entries[entries.length - 1].id;
    manager.branch(leaf);
    const targets = moveTargets(manager);
    {
        const t = timeBatched((i) => {
            manager.branch(i % 2 ? targets.b : targets.a);
            return manager.buildSessionContext();
        });
        add("move_rebuild", "move 1,000 back + rebuild", t.cpu * 1000, "us", {
            clock: "cpu", wall: t.wall * 1000, runs: t.runs, target: targets.a, back: targets.back,
        });
    }
    {
        // Each run appends a branch_summary entry to the file; as many runs as bench_jsonl does.
        const t = timeEach(31, 1, (i) => {
            manager.branchWithSummary(i % 2 ? targets.b : targets.a, SUMMARY);
            return manager.buildSessionContext();
        });
        add("move_summary_rebuild", "move 1,000 back with a branch summary + rebuild", t.cpu * 1000, "us", {
            clock: "cpu", wall: t.wall * 1000, runs: t.runs, target: targets.a,
        });
    }

    // Appends: the first K messages of the smallest session, to a new persisted session.
    {
        const source = SessionManager.open(join(data, `pi-${sizes[0]}.jsonl`));
        const messages = source
            .getEntries()
            .filter((e) => e.type === "message")
            .slice(0, appendsWanted)
            .map((e) => e.message);
        const fresh = SessionManager.create("/home/dev/projects/agentcore", join(work, "new"));
        const us = [];
        for (const m of messages) {
            const t0 = process.hrtime.bigint();
            fresh.appendMessage(m);
            us.push(Number(process.hrtime.bigint() - t0) / 1000);
        }
        add("append_mean", "append, os buffered (mean)", mean(us), "us", {
            clock: "wall", count: us.length, median: median(us), max: percentile(us, 100),
        });
        add("append_p99", "append, os buffered (p99)", percentile(us, 99), "us", { clock: "wall", count: us.length });
    }

    // Listing every session of every working directory.
    {
        process.env.PI_CODING_AGENT_DIR = join(data, "agent");
        let listed = 0;
        const cpu = [];
        const wall = [];
        await SessionManager.listAll();
        for (let i = 0; i < 5; ++i) {
            const c0 = cpuMs();
            const w0 = wallMs();
            listed = (await SessionManager.listAll()).length;
            wall.push(wallMs() - w0);
            cpu.push(cpuMs() - c0);
        }
        add("list_sessions", "list every session", median(cpu), "ms", {
            clock: "cpu", wall: median(wall), runs: cpu.length, listed,
        });
    }

    rmSync(work, { recursive: true, force: true });
    return results;
}

function machine() {
    return {
        cpu: cpus()[0]?.model ?? "?",
        nproc: cpus().length,
        loadavg: loadavg().map((x) => x.toFixed(2)).join(" "),
        kernel: release(),
        node: process.version,
        pi: PI_VERSION,
    };
}

async function main() {
    const folder = resolve(text("--pi", ""));
    if (!text("--pi")) usage(2);
    if (text("--child-open")) return childOpen(folder, text("--child-open"));
    installPi(folder);
    if (flag("--install-only")) {
        console.log(`pi ${PI_VERSION} installed in ${folder}`);
        return;
    }
    const data = text("--data");
    if (!data) usage(2);
    const sizes = text("--sizes", "1000,10000,100000").split(",").map(Number);
    if (sizes.some((n) => !(n > 0))) usage(2);
    const appends = Number(text("--appends", "1000"));
    const results = await run(folder, resolve(data), sizes, appends);
    const report = { benchmark: "pi SessionManager", side: "pi", machine: machine(), params: { sizes, appends }, results };
    if (flag("--json")) {
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        return;
    }
    const m = report.machine;
    console.log(`${report.benchmark} ${PI_VERSION}, node ${m.node}\nmachine: ${m.cpu}, ${m.nproc} cpus, load ${m.loadavg}, kernel ${m.kernel}\n`);
    for (const r of results) console.log(`${r.key.padEnd(24)} ${String(r.value?.toFixed?.(3) ?? r.value).padStart(12)} ${r.unit.padEnd(3)} ${r.name}`);
}

main().catch((e) => {
    console.error(`error: ${e.stack ?? e}`);
    process.exit(1);
});

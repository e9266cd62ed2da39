// Writes sessions with pi's SessionManager and prints what pi sees in them: for every entry
// taken as the leaf, pi's buildSessionContext; the entry count, the leaf and the name of the
// file as pi opens it. Committed fixtures (older formats) are opened from copies, since pi
// rewrites a file it migrates.
//
// Usage: node write_sessions.mjs <pi folder> <output folder> <fixtures folder>
// Writes <output folder>/expected.json:
//   [{ scenario, file, version, idsStable, entryCount, leafId, leafIndex, name,
//      contexts: [{ index, id, context: {messages, thinkingLevel, model} }] }]
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadPi, loadPiCompaction } from "./pi_loader.mjs";
import { describeSession } from "./describe.mjs";
import { SCENARIOS } from "./scenarios.mjs";

const [piFolder, outFolder, fixturesFolder] = process.argv.slice(2);
if (!piFolder || !outFolder || !fixturesFolder) {
    console.error("usage: node write_sessions.mjs <pi folder> <output folder> <fixtures folder>");
    process.exit(1);
}
const pi = await loadPi(piFolder);
const compaction = await loadPiCompaction(piFolder);
mkdirSync(outFolder, { recursive: true });

const results = [];
for (const [name, write] of Object.entries(SCENARIOS)) {
    const sessionDir = join(outFolder, name);
    const sm = pi.SessionManager.create("/work/project", sessionDir);
    write(sm, compaction);
    const file = sm.getSessionFile();
    results.push(describeSession(pi, name, file, file, 3, outFolder));
}

for (const fixture of readdirSync(fixturesFolder).filter((f) => f.endsWith(".jsonl")).sort()) {
    const original = join(fixturesFolder, fixture);
    const header = JSON.parse(readFileSync(original, "utf8").split("\n")[0]);
    if ("parent_session" in header) continue; // a native fixture: not pi's
    const copy = join(outFolder, `fixture-${fixture}`);
    copyFileSync(original, copy);
    results.push(describeSession(pi, `fixture ${fixture}`, original, copy, header.version ?? 1, outFolder));
}

writeFileSync(join(outFolder, "expected.json"), `${JSON.stringify(results, null, 1)}\n`);
console.log(`pi wrote and described ${results.length} sessions in ${outFolder}`);

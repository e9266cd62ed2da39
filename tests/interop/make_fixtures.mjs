// Regenerates the committed pi fixtures (tests/fixtures/pi) with pi's own SessionManager.
// pi 0.73 writes format v3 only; the v1 and v2 fixtures are derived from a linear v3 session
// exactly as those formats differ from v3 (see pi's migrateV1ToV2 / migrateV2ToV3, undone):
// v2 has role "hookMessage" where v3 has "custom"; v1 has no version, no id/parentId and a
// compaction's firstKeptEntryIndex (0 = the header line) instead of firstKeptEntryId.
//
// Usage: node make_fixtures.mjs <pi folder> <fixtures folder>
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadPi } from "./pi_loader.mjs";
import { writeBranches, writeFull, writeLinear } from "./scenarios.mjs";

const [piFolder, fixturesFolder] = process.argv.slice(2);
const pi = await loadPi(piFolder);
const scratch = mkdtempSync(join(tmpdir(), "pi-fixtures-"));

function write(scenario, sessionId) {
    const sm = pi.SessionManager.create("/work/project", join(scratch, sessionId));
    sm.newSession({ id: sessionId });
    scenario(sm);
    return readFileSync(sm.getSessionFile(), "utf8");
}

const full = write(writeFull, "fixture-full");
writeFileSync(join(fixturesFolder, "v3-full.jsonl"), full);
writeFileSync(join(fixturesFolder, "v3-branches.jsonl"), write(writeBranches, "fixture-branches"));

const linear = write(writeLinear, "fixture-linear")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
const v2 = structuredClone(linear);
v2[0].version = 2;
for (const e of v2) if (e.type === "message" && e.message.role === "custom") e.message.role = "hookMessage";
writeFileSync(join(fixturesFolder, "v2-linear.jsonl"), v2.map((e) => `${JSON.stringify(e)}\n`).join(""));

const v1 = structuredClone(v2);
delete v1[0].version;
const indexOf = new Map(v1.map((e, i) => [e.id, i]));
for (const e of v1.slice(1)) {
    if (e.type === "compaction") {
        const { firstKeptEntryId, ...rest } = e;
        Object.keys(e).forEach((k) => delete e[k]);
        Object.assign(e, rest, { firstKeptEntryIndex: indexOf.get(firstKeptEntryId) });
    }
    delete e.id;
    delete e.parentId;
}
writeFileSync(join(fixturesFolder, "v1-linear.jsonl"), v1.map((e) => `${JSON.stringify(e)}\n`).join(""));
console.log(`fixtures written to ${fixturesFolder}`);

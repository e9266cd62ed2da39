// Opens session files that agentcore appended to and checks that pi sees what agentcore wrote:
// the entry count, every new entry, the leaf, the name, a label, and the context.
//
// Usage: node verify_appended.mjs <pi folder> <spec.json>
//   spec.json: [{ file, entryCount, leafId, name, newIds, label: {target, label}, context }]
import { existsSync, readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { loadPi } from "./pi_loader.mjs";

const [piFolder, specPath] = process.argv.slice(2);
const pi = await loadPi(piFolder);
const specs = JSON.parse(readFileSync(specPath, "utf8"));
let failures = 0;
const check = (ok, what, ours, theirs) => {
    if (ok) return;
    failures++;
    console.error(`MISMATCH (pi reading agentcore's appends): ${what}\n  agentcore: ${JSON.stringify(ours)}\n  pi:        ${JSON.stringify(theirs)}`);
};
// JSON.parse(JSON.stringify(...)) drops undefined fields, as a file would.
const asJson = (v) => JSON.parse(JSON.stringify(v));

for (const spec of specs) {
    // pi's open starts a new, empty session for a missing file: check first.
    if (!existsSync(spec.file)) {
        check(false, `${spec.file}: no such file`, spec.file, null);
        continue;
    }
    const sm = pi.SessionManager.open(spec.file);
    const entries = sm.getEntries();
    check(entries.length === spec.entryCount, `${spec.file}: entry count`, spec.entryCount, entries.length);
    for (const id of spec.newIds) check(sm.getEntry(id) !== undefined, `${spec.file}: entry ${id} missing`, id, null);
    check(sm.getLeafId() === spec.leafId, `${spec.file}: leaf`, spec.leafId, sm.getLeafId());
    check((sm.getSessionName() ?? "") === spec.name, `${spec.file}: name`, spec.name, sm.getSessionName());
    check(sm.getLabel(spec.label.target) === spec.label.label, `${spec.file}: label`, spec.label.label, sm.getLabel(spec.label.target));
    const context = asJson(sm.buildSessionContext());
    check(isDeepStrictEqual(context, spec.context), `${spec.file}: context`, spec.context, context);
    console.log(`  pi reads ${spec.file}: ${entries.length} entries, leaf ${sm.getLeafId()}`);
}
process.exit(failures === 0 ? 0 : 1);

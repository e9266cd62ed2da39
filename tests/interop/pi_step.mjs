// One pi turn of the alternating test: pi opens a session file that agentcore wrote last, must
// build the context agentcore built, then does one thing of its own and reports the result.
//
// Usage: node pi_step.mjs <pi folder> <step.json>
//   step.json: { file, action, expected: {context, leafId, onBranch: [ids]}, target?, text, out }
//   actions: "append" (a user and an assistant message), "label" (of `target`), "name",
//   "compact" (pi's own prepareCompaction, scripted summary), "branch" (to `target`, then a user
//   message), "branchWithSummary" (to `target`), "settings" (thinking level and model), "none".
//   Writes `out`: { leafId, context, newIds }.
// Exit code 1 when pi's context, leaf or branch differs from agentcore's before pi acts. pi's leaf
// is its file's last entry: after a move by agentcore that is the `leaf` entry, which pi does not
// know; it must hang under its target and name agentcore's leaf as its target (null when
// agentcore moved before the first entry).
import { readFileSync, writeFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { loadPi, loadPiCompaction } from "./pi_loader.mjs";
import { assistant, compactAsPi, user } from "./scenarios.mjs";

const [piFolder, stepPath] = process.argv.slice(2);
const pi = await loadPi(piFolder);
const compaction = await loadPiCompaction(piFolder);
const step = JSON.parse(readFileSync(stepPath, "utf8"));
const asJson = (v) => JSON.parse(JSON.stringify(v));

const sm = pi.SessionManager.open(step.file);
let failures = 0;
const before = asJson(sm.buildSessionContext());
if (!isDeepStrictEqual(before, step.expected.context)) {
    failures++;
    console.error(`MISMATCH (pi opening agentcore's file before "${step.action}"): context\n  agentcore: ${JSON.stringify(step.expected.context)}\n  pi:        ${JSON.stringify(before)}`);
}
const piLeaf = sm.getLeafId();
const piLeafEntry = piLeaf ? sm.getEntry(piLeaf) : undefined;
const resolvedLeaf = piLeafEntry?.type === "leaf" ? (piLeafEntry.targetId ?? null) : piLeaf;
if (resolvedLeaf !== step.expected.leafId) {
    failures++;
    console.error(`MISMATCH (pi opening agentcore's file before "${step.action}"): pi's leaf ${piLeaf} (${piLeafEntry?.type}) resolves to ${resolvedLeaf}, agentcore's leaf is ${step.expected.leafId}`);
}
if (piLeafEntry?.type === "leaf" && (piLeafEntry.parentId ?? null) !== (piLeafEntry.targetId ?? null)) {
    failures++;
    console.error(`MISMATCH (pi opening agentcore's file before "${step.action}"): the leaf entry ${piLeaf} hangs under ${piLeafEntry.parentId}, not under its target ${piLeafEntry.targetId}`);
}
const branch = new Set(sm.getBranch().map((e) => e.id));
for (const id of step.expected.onBranch ?? []) {
    if (branch.has(id)) continue;
    failures++;
    console.error(`MISMATCH (pi opening agentcore's file before "${step.action}"): entry ${id} is not on pi's branch`);
}

const newIds = [];
switch (step.action) {
    case "append":
        newIds.push(sm.appendMessage(user(`${step.text} (question)`)));
        newIds.push(sm.appendMessage(assistant(`${step.text} (answer)`)));
        break;
    case "label":
        newIds.push(sm.appendLabelChange(step.target, step.text));
        break;
    case "name":
        newIds.push(sm.appendSessionInfo(step.text));
        break;
    case "compact":
        newIds.push(compactAsPi(sm, compaction, step.text, 60));
        break;
    case "branch":
        sm.branch(step.target);
        newIds.push(sm.appendMessage(user(step.text)));
        break;
    case "branchWithSummary":
        newIds.push(sm.branchWithSummary(step.target, step.text, { readFiles: [] }, true));
        break;
    case "settings":
        newIds.push(sm.appendThinkingLevelChange("minimal"));
        newIds.push(sm.appendModelChange("google", "gemini-2.5-pro"));
        break;
    case "none":
        break;
    default:
        console.error(`unknown action ${step.action}`);
        process.exit(2);
}
writeFileSync(step.out, `${JSON.stringify({ leafId: sm.getLeafId(), context: asJson(sm.buildSessionContext()), newIds })}\n`);
console.log(`  pi ${step.action}: ${sm.getEntries().length} entries, leaf ${sm.getLeafId()}`);
process.exit(failures === 0 ? 0 : 1);

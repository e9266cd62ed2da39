// Opens session files that agentcore converted (pi → native → pi) and checks that pi sees in
// each exactly what it saw in the original: entries, leaf, name, labels, every context.
//
// Usage: node verify_converted.mjs <pi folder> <expected.json> <pairs.json>
//   pairs.json: [{ original, converted }]  (original: a `file` of expected.json)
import { existsSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { describeSession } from "./describe.mjs";
import { loadPi } from "./pi_loader.mjs";

const [piFolder, expectedPath, pairsPath] = process.argv.slice(2);
const pi = await loadPi(piFolder);
const expected = JSON.parse(readFileSync(expectedPath, "utf8"));
const pairs = JSON.parse(readFileSync(pairsPath, "utf8"));
let failures = 0;
for (const { original, converted } of pairs) {
    const before = expected.find((e) => e.file === original);
    if (!before || !existsSync(converted)) {
        failures++;
        console.error(`MISMATCH: no description of ${original} or no file ${converted}`);
        continue;
    }
    const after = describeSession(pi, before.scenario, original, converted, before.version, dirname(converted));
    const asJson = (v) => JSON.parse(JSON.stringify(v));
    if (!isDeepStrictEqual(asJson(after), asJson(before))) {
        failures++;
        console.error(`MISMATCH: pi sees ${converted} differently from ${original}`);
        for (const key of Object.keys(before))
            if (!isDeepStrictEqual(asJson(after[key]), asJson(before[key])))
                console.error(`  ${key}: ${JSON.stringify(after[key]).slice(0, 400)}\n  was ${JSON.stringify(before[key]).slice(0, 400)}`);
    } else {
        console.log(`  pi reads ${converted} as it read the original (${after.entryCount} entries)`);
    }
}
process.exit(failures === 0 ? 0 : 1);

// Installs the pi coding agent (the version the interop test is written against) into a scratch
// folder, or reuses an install that is already there.
//
// Usage: node install_pi.mjs <folder>
// Exit codes: 0 installed; 77 npm cannot reach its registry and CI is not set (the test is
// skipped); 1 anything else (including an unreachable registry when CI is set).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const PI_PACKAGE = "@mariozechner/pi-coding-agent";
export const PI_VERSION = "0.73.1";

const folder = process.argv[2];
if (!folder) {
    console.error("usage: node install_pi.mjs <folder>");
    process.exit(1);
}

function installedVersion() {
    const manifest = join(folder, "node_modules", PI_PACKAGE, "package.json");
    if (!existsSync(manifest)) return null;
    try {
        return JSON.parse(readFileSync(manifest, "utf8")).version;
    } catch {
        return null;
    }
}

if (installedVersion() === PI_VERSION) {
    console.log(`pi ${PI_VERSION} already installed in ${folder}`);
    process.exit(0);
}

mkdirSync(folder, { recursive: true });
const packageJson = join(folder, "package.json");
if (!existsSync(packageJson)) {
    writeFileSync(packageJson, `${JSON.stringify({ name: "agentcore-interop-pi", private: true }, null, 2)}\n`);
}

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
console.log(`installing ${PI_PACKAGE}@${PI_VERSION} into ${folder}`);
const install = spawnSync(
    npm,
    ["install", "--no-audit", "--no-fund", "--fetch-retries=1", `${PI_PACKAGE}@${PI_VERSION}`],
    { cwd: folder, stdio: "inherit" },
);
if (install.status === 0 && installedVersion() === PI_VERSION) process.exit(0);

// Tell "no registry" apart from a broken install.
const ping = spawnSync(npm, ["ping", "--fetch-retries=0", "--fetch-timeout=15000"], { cwd: folder, stdio: "pipe" });
const reachable = ping.status === 0;
if (!reachable && !process.env.CI) {
    console.log(
        "SKIP: npm cannot reach its registry, so pi cannot be installed; the interop test is skipped " +
            "(set CI to make this a failure).",
    );
    process.exit(77);
}
console.error(
    reachable
        ? `npm install of ${PI_PACKAGE}@${PI_VERSION} failed although the registry answers`
        : "npm cannot reach its registry and CI is set: the interop test must run",
);
process.exit(1);

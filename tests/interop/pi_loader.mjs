// Loads the pi coding agent from a scratch install (see install_pi.mjs).
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export async function loadPi(piFolder) {
    const entry = join(piFolder, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "index.js");
    return import(pathToFileURL(entry).href);
}

// pi's compaction functions (prepareCompaction, computeFileLists, formatFileOperations): the
// package's entry point does not export all of them, so they are loaded from its own module.
export async function loadPiCompaction(piFolder) {
    const entry = join(piFolder, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core", "compaction", "index.js");
    return import(pathToFileURL(entry).href);
}

// Loads the pi coding agent from a scratch install (see install_pi.mjs).
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export async function loadPi(piFolder) {
    const entry = join(piFolder, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "index.js");
    return import(pathToFileURL(entry).href);
}

// Runs pi's own conversion of the differential's cases (ctest label `llm`): for each case,
// pi-coding-agent's convertToLlm, then pi-ai's stream function for the case's API against a
// local server that records the request body and answers with the case's recorded reply.
// No request leaves the machine: the model's baseUrl is this process's server on 127.0.0.1.
//
// Usage: node pi_convert.mjs <pi install folder> <plan.json> <results.json>
// plan.json: {cases: [{name, api, model, context: {systemPrompt, messages, tools}, options, reply}]}
// results.json: {<name>: {converted, request, message}}
import { createServer } from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [piFolder, planPath, resultsPath] = process.argv.slice(2);
if (!resultsPath) {
    console.error("usage: node pi_convert.mjs <pi folder> <plan.json> <results.json>");
    process.exit(1);
}
const modules = join(piFolder, "node_modules", "@mariozechner");
const load = (pkg, file) => import(pathToFileURL(join(modules, pkg, "dist", file)).href);

const piAiVersion = JSON.parse(readFileSync(join(modules, "pi-ai", "package.json"), "utf8")).version;
if (piAiVersion !== "0.73.1") {
    console.error(`pi-ai ${piAiVersion} is installed; the differential is written against 0.73.1`);
    process.exit(1);
}
const { convertToLlm } = await load("pi-coding-agent", "core/messages.js");
const { streamSimpleAnthropic } = await load("pi-ai", "providers/anthropic.js");
const { streamSimpleOpenAICompletions } = await load("pi-ai", "providers/openai-completions.js");
const { streamSimpleOpenAIResponses } = await load("pi-ai", "providers/openai-responses.js");
const streamFor = {
    "anthropic-messages": streamSimpleAnthropic,
    "openai-completions": streamSimpleOpenAICompletions,
    "openai-responses": streamSimpleOpenAIResponses,
};

// The recording server: one reply per request, bounded by a timeout per case.
let pending = null;
const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
        const current = pending;
        if (!current) {
            res.writeHead(500).end("no case is running");
            return;
        }
        current.requests.push(JSON.parse(body));
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.end(current.reply);
    });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;

const results = {};
for (const c of JSON.parse(readFileSync(planPath, "utf8")).cases) {
    const model = {
        id: c.model.id,
        name: c.model.id,
        api: c.api,
        provider: c.model.provider,
        baseUrl: c.api === "anthropic-messages" ? baseUrl : `${baseUrl}/v1`,
        reasoning: c.model.reasoning,
        input: c.model.images ? ["text", "image"] : ["text"],
        cost: c.prices,
        contextWindow: 200000,
        maxTokens: c.model.maxTokens,
    };
    const converted = convertToLlm(c.context.messages);
    const context = { systemPrompt: c.context.systemPrompt || undefined, messages: converted, tools: c.context.tools };
    const options = {
        apiKey: "test-key-not-sent-anywhere",
        maxRetries: 0,
        reasoning: c.options.thinkingLevel && c.options.thinkingLevel !== "off" ? c.options.thinkingLevel : undefined,
        maxTokens: c.options.maxTokens,
        cacheRetention: c.options.cacheRetention,
    };
    pending = { requests: [], reply: c.reply };
    const stream = streamFor[c.api](model, context, options);
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`case ${c.name} timed out`)), 20000));
    const message = await Promise.race([stream.result(), timeout]);
    results[c.name] = { converted, request: pending.requests[0] ?? null, message };
    pending = null;
}
server.close();
writeFileSync(resultsPath, JSON.stringify(results, null, 1));
console.log(`pi-ai ${piAiVersion}: ${Object.keys(results).length} cases converted`);

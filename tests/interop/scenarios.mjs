// Sessions written with pi's own SessionManager: every entry type and message role pi 0.73
// writes, branches, compactions and branch summaries. Used by make_fixtures.mjs (the committed
// fixtures) and by write_sessions.mjs (fresh files for every interop run).

const IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
let clock = Date.UTC(2026, 0, 15, 9, 30, 0, 0);
const tick = () => (clock += 1000);

function usage(input, output, cacheRead, cacheWrite, total) {
    return {
        input,
        output,
        cacheRead,
        cacheWrite,
        totalTokens: input + output + cacheRead + cacheWrite,
        cost: { input: total / 4, output: total / 2, cacheRead: total / 8, cacheWrite: total / 8, total },
    };
}

export const user = (text) => ({ role: "user", content: text, timestamp: tick() });

export const userWithImage = (text) => ({
    role: "user",
    content: [
        { type: "text", text },
        { type: "image", data: IMAGE, mimeType: "image/png" },
    ],
    timestamp: tick(),
});

export const assistant = (text, extra = {}) => ({
    role: "assistant",
    content: [{ type: "text", text }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: usage(100, 20, 5, 3, 0.0125),
    stopReason: "stop",
    timestamp: tick(),
    ...extra,
});

export const assistantToolCall = (callId) => ({
    role: "assistant",
    content: [
        { type: "thinking", thinking: "I should read the file.", thinkingSignature: "sig-abc" },
        { type: "text", text: "Reading it now.", textSignature: "tsig" },
        { type: "toolCall", id: callId, name: "read", arguments: { path: "src/main.cpp", limit: 40 } },
    ],
    api: "openai-responses",
    provider: "openai",
    model: "gpt-5",
    usage: usage(1200, 80, 300, 0, 0.2),
    stopReason: "toolUse",
    timestamp: tick(),
    // pi-ai's providers set responseId last, once the response has started.
    responseId: "resp_123",
});

export const toolResult = (callId) => ({
    role: "toolResult",
    toolCallId: callId,
    toolName: "read",
    content: [
        { type: "text", text: "int main() { return 0; }" },
        { type: "image", data: IMAGE, mimeType: "image/png" },
    ],
    details: { lines: 1, truncated: false },
    isError: false,
    timestamp: tick(),
});

// In the order of pi's AgentSession.executeBash.
export const bash = (command, { exitCode = 0, truncated = false, fullOutputPath, excludeFromContext } = {}) => ({
    role: "bashExecution",
    command,
    output: "total 0\n",
    exitCode,
    cancelled: false,
    truncated,
    fullOutputPath,
    timestamp: tick(),
    excludeFromContext,
});

export const custom = (customType, content, display = true, details = undefined) => ({
    role: "custom",
    customType,
    content,
    display,
    details,
    timestamp: tick(),
});

/** The "full" session: every role, every entry type, a compaction, two branches. */
export function writeFull(sm) {
    const ids = {};
    ids.thinking = sm.appendThinkingLevelChange("high");
    ids.model = sm.appendModelChange("anthropic", "claude-sonnet-4-5");
    ids.u1 = sm.appendMessage(user("Hello, what is in this folder?"));
    ids.a1 = sm.appendMessage(assistantToolCall("call_1"));
    ids.t1 = sm.appendMessage(toolResult("call_1"));
    ids.u2 = sm.appendMessage(userWithImage("And this picture?"));
    ids.a2 = sm.appendMessage(assistant("A single pixel."));
    ids.b1 = sm.appendMessage(bash("ls -la"));
    ids.b2 = sm.appendMessage(
        bash("cat big.log", { exitCode: 1, truncated: true, fullOutputPath: "/tmp/big.log", excludeFromContext: true }),
    );
    ids.c1 = sm.appendMessage(custom("ext-note", "A note from an extension", true, { level: 2 }));
    ids.c2 = sm.appendMessage(custom("ext-blocks", [{ type: "text", text: "block note" }], false));
    ids.ce1 = sm.appendCustomEntry("ext-state", { counter: 3, nested: { ok: true } });
    ids.ce2 = sm.appendCustomEntry("ext-empty");
    ids.cm1 = sm.appendCustomMessageEntry("ext-msg", "Injected text", true, { source: "hook" });
    ids.cm2 = sm.appendCustomMessageEntry("ext-msg", [{ type: "text", text: "Injected block" }], false);
    ids.label = sm.appendLabelChange(ids.u2, "picture");
    ids.name = sm.appendSessionInfo("  Exploring the folder  ");
    ids.model2 = sm.appendModelChange("openai", "gpt-5");
    ids.thinking2 = sm.appendThinkingLevelChange("low");
    ids.u3 = sm.appendMessage(user("Summarise please."));
    ids.a3 = sm.appendMessage(assistant("Done.", { stopReason: "length" }));
    ids.compaction = sm.appendCompaction("The user explored a folder and a picture.", ids.u2, 5400, {
        readFiles: ["src/main.cpp"],
        modifiedFiles: [],
    });
    ids.u4 = sm.appendMessage(user("What next?"));
    ids.a4 = sm.appendMessage(
        assistant("", { stopReason: "error", errorMessage: "overloaded", content: [], usage: usage(0, 0, 0, 0, 0) }),
    );
    // Back to before the compaction: a second branch.
    sm.branch(ids.a2);
    ids.u5 = sm.appendMessage(user("Different question on a new branch."));
    ids.a5 = sm.appendMessage(assistant("Different answer."));
    ids.labelClear = sm.appendLabelChange(ids.u2, undefined);
    // Return to the first branch with a summary of this one.
    ids.summary = sm.branchWithSummary(ids.a4, "Tried a different question.", { readFiles: [] }, true);
    ids.u6 = sm.appendMessage(user("Continue on the first branch."));
    ids.a6 = sm.appendMessage(assistant("Continuing."));
    return ids;
}

/** The "branches" session: branch summaries from the root and with an empty summary, two
 * compactions (the newest governs), a cleared name, labels. */
export function writeBranches(sm) {
    const ids = {};
    ids.u1 = sm.appendMessage(user("First question"));
    ids.a1 = sm.appendMessage(assistant("First answer"));
    ids.u2 = sm.appendMessage(user("Second question"));
    ids.a2 = sm.appendMessage(assistant("Second answer"));
    ids.k1 = sm.appendCompaction("Summary one", ids.u2, 1000);
    ids.u3 = sm.appendMessage(user("Third question"));
    ids.a3 = sm.appendMessage(assistant("Third answer"));
    ids.k2 = sm.appendCompaction("Summary two", ids.u3, 2000, undefined, true);
    ids.u4 = sm.appendMessage(user("Fourth question"));
    ids.name1 = sm.appendSessionInfo("Branchy");
    ids.s1 = sm.branchWithSummary(ids.a1, "", undefined);
    ids.u5 = sm.appendMessage(user("After an empty summary"));
    ids.a5 = sm.appendMessage(assistant("Answer after empty summary"));
    ids.s2 = sm.branchWithSummary(null, "Started over from the root.", { why: "reset" });
    ids.u6 = sm.appendMessage(user("A fresh start"));
    ids.a6 = sm.appendMessage(assistant("Fresh answer"));
    ids.l1 = sm.appendLabelChange(ids.u6, "fresh");
    ids.name2 = sm.appendSessionInfo("");
    sm.branch(ids.u4);
    ids.a4 = sm.appendMessage(assistant("Fourth answer, written last"));
    return ids;
}

/** The "minimal" session: one exchange. */
export function writeMinimal(sm) {
    const ids = {};
    ids.u1 = sm.appendMessage(user("Hi"));
    ids.a1 = sm.appendMessage(assistant("Hello!"));
    return ids;
}

/** Compacts the current branch as pi's AgentSession.compact does — pi's own prepareCompaction
 * over getBranch(), the file lists appended to the summary, appendCompaction — with a scripted
 * summary instead of a model's. */
export function compactAsPi(sm, compaction, summary, keepRecentTokens) {
    const preparation = compaction.prepareCompaction(sm.getBranch(), {
        enabled: true,
        reserveTokens: 16384,
        keepRecentTokens,
    });
    if (!preparation) throw new Error(`pi's prepareCompaction found nothing to compact for "${summary}"`);
    const { readFiles, modifiedFiles } = compaction.computeFileLists(preparation.fileOps);
    const text = summary + compaction.formatFileOperations(readFiles, modifiedFiles);
    return sm.appendCompaction(text, preparation.firstKeptEntryId, preparation.tokensBefore, { readFiles, modifiedFiles }, false);
}

const words = (label) => `${label}: ${"lorem ipsum dolor sit amet ".repeat(6)}`;

/** The "compactions" session: pi's own compaction code, several times in a row (each cut may fall
 * inside the previous compaction's kept range), with branches between and settings chosen
 * before the first kept entries. */
export function writeCompactions(sm, compaction) {
    const ids = {};
    ids.thinking = sm.appendThinkingLevelChange("high");
    ids.model = sm.appendModelChange("openai", "gpt-5");
    ids.u1 = sm.appendMessage(user(words("first question")));
    ids.a1 = sm.appendMessage(assistantToolCall("call_c1"));
    ids.t1 = sm.appendMessage(toolResult("call_c1"));
    ids.a1b = sm.appendMessage(assistant(words("first answer")));
    ids.u2 = sm.appendMessage(user(words("second question")));
    ids.a2 = sm.appendMessage(assistant(words("second answer")));
    ids.u3 = sm.appendMessage(user(words("third question")));
    ids.a3 = sm.appendMessage(assistant(words("third answer")));
    ids.k1 = compactAsPi(sm, compaction, "Summary one", 120);
    ids.u4 = sm.appendMessage(user(words("fourth question")));
    ids.a4 = sm.appendMessage(assistant(words("fourth answer")));
    // Compacting again at once: pi's cut starts at the first kept entry of the previous one.
    ids.k2 = compactAsPi(sm, compaction, "Summary two", 100);
    ids.u5 = sm.appendMessage(user(words("fifth question")));
    ids.k3 = compactAsPi(sm, compaction, "Summary three", 150);
    ids.thinking2 = sm.appendThinkingLevelChange("low");
    ids.u6 = sm.appendMessage(user(words("sixth question")));
    ids.a6 = sm.appendMessage(assistantToolCall("call_c6"));
    ids.t6 = sm.appendMessage(toolResult("call_c6"));
    ids.a6b = sm.appendMessage(assistant(words("sixth answer")));
    // A branch from between two compactions, compacted on its own.
    sm.branch(ids.a4);
    ids.u7 = sm.appendMessage(user(words("branch question")));
    ids.a7 = sm.appendMessage(assistant(words("branch answer")));
    ids.u8 = sm.appendMessage(user(words("branch follow-up")));
    ids.k4 = compactAsPi(sm, compaction, "Branch summary of compaction", 60);
    ids.a8 = sm.appendMessage(assistant(words("branch final answer")));
    // Back to the main line with a summary, then once more a compaction.
    ids.s1 = sm.branchWithSummary(ids.a6b, "Explored a side branch.", { readFiles: [] }, true);
    ids.u9 = sm.appendMessage(user(words("back on the main line")));
    ids.a9 = sm.appendMessage(assistant(words("main line answer")));
    ids.k5 = compactAsPi(sm, compaction, "Summary five", 100);
    ids.u10 = sm.appendMessage(user(words("last question")));
    return ids;
}

export const SCENARIOS = { full: writeFull, branches: writeBranches, minimal: writeMinimal, compactions: writeCompactions };

/** A linear session (no branches): the shape of pi's v1 files, from which the v1 and v2
 * fixtures are derived. */
export function writeLinear(sm) {
    const ids = {};
    ids.u1 = sm.appendMessage(user("Linear question one"));
    ids.a1 = sm.appendMessage(assistant("Linear answer one"));
    ids.h1 = sm.appendMessage(custom("old-hook", "A hook message from an old pi", true, { v: 1 }));
    ids.thinking = sm.appendThinkingLevelChange("medium");
    ids.u2 = sm.appendMessage(user("Linear question two"));
    ids.a2 = sm.appendMessage(assistant("Linear answer two"));
    ids.compaction = sm.appendCompaction("Linear summary", ids.u2, 777);
    ids.u3 = sm.appendMessage(user("Linear question three"));
    ids.a3 = sm.appendMessage(assistant("Linear answer three"));
    return ids;
}

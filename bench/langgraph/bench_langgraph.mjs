// The peer side of bench_postgres's conversation figure: LangGraph's PostgresSaver, used as a
// LangGraph application uses it. A StateGraph over MessagesAnnotation with two nodes that append
// canned messages (no model is called): `agent` answers with an assistant message carrying one
// tool call, `tools` answers with the tool's result. One turn is one invoke() with the user's
// message (the graph checkpoints every step through the saver: put + putWrites), then
// getState() reads the conversation back (the saver's getTuple).
//
// The messages are the same text as bench_postgres writes on the agentcore side (see
// conversation_turn there). Prints one JSON line per mark: the turns done, the milliseconds
// spent in the turns so far (size measurements excluded), the messages read back at the last
// turn, and the size of the saver's tables after VACUUM ANALYZE.
//
// Usage: node bench_langgraph.mjs --host DIR --port N --user U --db NAME --turns 1000
//                                 [--marks 250,500,1000]
// Install its dependencies first: bench/langgraph/install.sh (npm ci, versions pinned in
// package-lock.json).

import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { performance } from "node:perf_hooks";

function args() {
    const out = { host: "", port: 5432, user: "", db: "", turns: 1000, marks: [] };
    const argv = process.argv.slice(2);
    for (let i = 0; i < argv.length; i += 2) {
        const key = argv[i].replace(/^--/, "");
        const value = argv[i + 1];
        if (key === "port" || key === "turns") out[key] = Number(value);
        else if (key === "marks") out.marks = value.split(",").map(Number);
        else out[key] = value;
    }
    if (out.marks.length === 0) out.marks = [out.turns];
    return out;
}

// The same text as conversation_turn in bench_postgres.cpp.
const userText = (i) => `question number ${i} about the code base: what does line ${i} of src/main.cpp do?`;
const assistantText = (i) => `Let me read src/main.cpp around line ${i} before answering.`;
const toolResultText = (i) =>
    `src/main.cpp from line ${i}:\n` + "int twice(int x) { return x * 2; }  // doubles its input\n".repeat(16);

const opts = args();
const pool = new pg.Pool({ host: opts.host, port: opts.port, user: opts.user, database: opts.db });
const checkpointer = new PostgresSaver(pool);
await checkpointer.setup();

let turn = 0;
const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async () => ({
        messages: [
            new AIMessage({
                content: assistantText(turn),
                tool_calls: [
                    {
                        id: `call_${turn}`,
                        name: "read",
                        args: { path: "src/main.cpp", offset: turn, limit: 40 },
                        type: "tool_call",
                    },
                ],
            }),
        ],
    }))
    .addNode("tools", async () => ({
        messages: [new ToolMessage({ content: toolResultText(turn), tool_call_id: `call_${turn}`, name: "read" })],
    }))
    .addEdge(START, "agent")
    .addEdge("agent", "tools")
    .addEdge("tools", END)
    .compile({ checkpointer });

const config = { configurable: { thread_id: "bench-conversation" } };
const tables = ["checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"];
let spent = 0;
let messages = 0;
for (const mark of opts.marks) {
    const start = performance.now();
    for (; turn < mark; ) {
        turn += 1;
        await graph.invoke({ messages: [new HumanMessage(userText(turn))] }, config);
        const state = await graph.getState(config);
        messages = state.values.messages.length;
    }
    spent += performance.now() - start;
    const client = await pool.connect();
    let bytes = 0;
    try {
        for (const t of tables) await client.query(`VACUUM ANALYZE ${t}`);
        const r = await client.query(
            "SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c" +
                " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname = ANY($1)",
            [tables],
        );
        bytes = Number(r.rows[0].bytes);
    } finally {
        client.release();
    }
    console.log(JSON.stringify({ turns: mark, ms: spent, messages, bytes }));
}
await pool.end();

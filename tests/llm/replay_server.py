#!/usr/bin/env python3
"""A replay server for the LLM example: answers OpenAI-compatible requests with recorded replies
and checks each request it receives, then runs a command against it.

Usage: replay_server.py <script.json> -- <command> [args...]

The server listens on 127.0.0.1 (a free port) and only there. The command runs with
AGENTCORE_LLM_BASE_URL=http://127.0.0.1:<port>/v1 and AGENTCORE_LLM_API_KEY=replay-key. The
script is a list of exchanges, in order (or {"exit": <the command's expected exit code>,
"exchanges": [...]}): {"expect": {...}, "reply": {"status", "file"}} (a reply
file is a whole JSON body, or an SSE stream when it ends in .sse). The run fails when the
command fails, a request breaks an expectation, a request comes that the script does not hold,
or an exchange is left unused. Bounded: the server answers at most len(script) + 2 requests
and the command gets 120 s; the server stops with the command.

Expectations (all optional): path, stream (the body's `stream`), model, tools (tool names),
roles (the roles of the body's messages, in order), last_tool_results (for each tool message
after the last assistant message: that its tool_call_id is a tool call id of that assistant
message), tool_result_contains (text each of those tool messages holds).
"""
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def check(expect, path, headers, body):
    problems = []
    if "path" in expect and path != expect["path"]:
        problems.append(f"path {path!r}, expected {expect['path']!r}")
    if headers.get("Authorization") != "Bearer replay-key":
        problems.append("no bearer token")
    if headers.get("Content-Type", "").split(";")[0] != "application/json":
        problems.append("content type is not application/json")
    if "stream" in expect and body.get("stream") != expect["stream"]:
        problems.append(f"stream {body.get('stream')!r}, expected {expect['stream']!r}")
    if "model" in expect and body.get("model") != expect["model"]:
        problems.append(f"model {body.get('model')!r}")
    if "tools" in expect:
        names = [t.get("function", {}).get("name") for t in body.get("tools", [])]
        if names != expect["tools"]:
            problems.append(f"tools {names!r}, expected {expect['tools']!r}")
    messages = body.get("messages", [])
    if "roles" in expect:
        roles = [m.get("role") for m in messages]
        if roles != expect["roles"]:
            problems.append(f"roles {roles!r}, expected {expect['roles']!r}")
    if expect.get("last_tool_results"):
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
        if last is None:
            problems.append("no assistant message")
        else:
            ids = {c.get("id") for c in messages[last].get("tool_calls", [])}
            results = [m for m in messages[last + 1:] if m.get("role") == "tool"]
            if not results or {r.get("tool_call_id") for r in results} != ids:
                problems.append(f"tool results {[r.get('tool_call_id') for r in results]!r} do not answer calls {sorted(ids)!r}")
            for text in expect.get("tool_result_contains", []):
                if not all(text in r.get("content", "") for r in results):
                    problems.append(f"a tool result lacks {text!r}")
    return problems


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    script_path = Path(sys.argv[1])
    loaded = json.loads(script_path.read_text())
    script = loaded["exchanges"] if isinstance(loaded, dict) else loaded
    expected_exit = loaded.get("exit", 0) if isinstance(loaded, dict) else 0
    folder = script_path.parent
    state = {"next": 0, "served": 0, "problems": []}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            with lock:
                state["served"] += 1
                if state["served"] > len(script) + 2 or state["next"] >= len(script):
                    state["problems"].append(f"request {state['served']}: not in the script")
                    self.send_error(500, "not in the script")
                    return
                exchange = script[state["next"]]
                state["next"] += 1
                number = state["next"]
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
                with lock:
                    state["problems"].append(f"request {number}: the body is not JSON")
            problems = check(exchange.get("expect", {}), self.path, self.headers, body)
            with lock:
                state["problems"] += [f"request {number}: {p}" for p in problems]
            reply = exchange["reply"]
            data = (folder / reply["file"]).read_bytes()
            self.send_response(reply.get("status", 200))
            sse = reply["file"].endswith(".sse")
            self.send_header("Content-Type", "text/event-stream" if sse else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            # An SSE reply goes out in small pieces, as a provider streams it.
            step = 37 if sse else len(data)
            for i in range(0, len(data), step):
                self.wfile.write(data[i:i + step])
                self.wfile.flush()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    env = dict(os.environ)
    env["AGENTCORE_LLM_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    env["AGENTCORE_LLM_API_KEY"] = "replay-key"
    try:
        code = subprocess.run(sys.argv[3:], env=env, timeout=120).returncode
    except subprocess.TimeoutExpired:
        code = -1
        state["problems"].append("the command did not finish within 120 s")
    finally:
        server.shutdown()
        server.server_close()
    if state["next"] < len(script):
        state["problems"].append(f"only {state['next']} of {len(script)} exchanges were used")
    for p in state["problems"]:
        print(f"REPLAY: {p}", file=sys.stderr)
    if code != expected_exit:
        print(f"REPLAY: the command exited with {code}, expected {expected_exit}", file=sys.stderr)
    ok = code == expected_exit and not state["problems"]
    print(f"replay {script_path.name}: {state['next']} exchanges, {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

// The README's first example: a tool call and its result, the session's clock, a branch, and the
// context an LLM would get.
#include <agentcore/session.hpp>

#include <iostream>

int main() {
    using namespace agentcore;
    // Ids and timestamps come from the storage's Environment: the system clock unless you inject
    // one, as here (2026-01-01T00:00:00Z, one second a call) to make the output reproducible.
    auto clock = Environment::deterministic(1767225600000, 42, 1000);
    Session session{InMemorySessionStorage<>({.id = "quickstart", .cwd = "/home/dev"}, clock)};

    append_message(session, user_text("What is in main.cpp?"));  // stamped by the session's clock
    AssistantMessage reply =
        assistant_reply({.text = "Let me read it.",
                         .tool_calls = {tool_call("call_1", "read", {{"path", "main.cpp"}})},
                         .provider = "scripted",
                         .model = "reader"});
    append_message(session, reply);
    for (const ToolCallContent& call : tool_calls_of(reply))  // run each tool, answer its call
        append_message(session, tool_result(call, "int main() { return 0; }"));
    auto answer = append_message(session, assistant_text("An empty main function."));

    append_message(session, user_text("Rewrite it in Rust."));
    append_message(session, assistant_text("fn main() {}"));
    // Back to the answer, leaving a summary of the abandoned branch.
    move_to(session, answer,
            BranchSummaryInput{.summary = "Tried a Rust rewrite, then dropped it."});
    append_message(session, user_text("Add a test."));

    // user, assistant, tool_result, assistant, branch_summary, user
    for (const auto& message : build_context(session).messages)
        std::cout << format_timestamp(timestamp_of(*message)) << " " << role_of(*message) << ": "
                  << text_of(*message) << "\n";
}

// convert_to_llm: the roles no provider knows become user messages with pi's wording.
#include "support/builders.hpp"
#include "support/catch.hpp"

#include <agentcore/llm/convert_to_llm.hpp>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

MessageHandle handle(AgentMessage m) { return std::make_shared<const AgentMessage>(std::move(m)); }

std::string only_text(const MessageHandle& m) {
    const auto& u = std::get<UserMessage>(*m);
    const auto& blocks = std::get<std::vector<ContentBlock>>(u.content);
    REQUIRE(blocks.size() == 1);
    return std::get<TextContent>(blocks[0]).text;
}

BashExecutionMessage bash(std::string command, std::string output) {
    BashExecutionMessage b;
    b.command = std::move(command);
    b.output = std::move(output);
    b.exit_code = 0;
    b.timestamp = 77;
    return b;
}

}  // namespace

TEST_CASE("a bash execution becomes a user message in pi's words", "[llm][convert]") {
    auto b = bash("make", "ok");
    auto out = llm::convert_to_llm({handle(b)});
    REQUIRE(out.size() == 1);
    CHECK(only_text(out[0]) == "Ran `make`\n```\nok\n```");
    CHECK(std::get<UserMessage>(*out[0]).timestamp == 77);

    b.output.clear();
    CHECK(llm::bash_execution_to_text(b) == "Ran `make`\n(no output)");
    b.exit_code = 2;
    CHECK(llm::bash_execution_to_text(b) ==
          "Ran `make`\n(no output)\n\nCommand exited with code 2");
    b.cancelled = true;
    CHECK(llm::bash_execution_to_text(b) == "Ran `make`\n(no output)\n\n(command cancelled)");
    b.cancelled = false;
    b.exit_code.reset();
    b.truncated = true;
    CHECK(llm::bash_execution_to_text(b) == "Ran `make`\n(no output)");  // no path: no note
    b.full_output_path = "/tmp/full.log";
    CHECK(llm::bash_execution_to_text(b) ==
          "Ran `make`\n(no output)\n\n[Output truncated. Full output: /tmp/full.log]");
}

TEST_CASE("a bash execution excluded from the context is dropped", "[llm][convert]") {
    auto b = bash("secret", "x");
    b.exclude_from_context = true;
    auto kept = bash("shown", "y");
    kept.exclude_from_context = false;
    auto out = llm::convert_to_llm({handle(b), handle(kept)});
    REQUIRE(out.size() == 1);
    CHECK(only_text(out[0]).rfind("Ran `shown`", 0) == 0);
}

TEST_CASE("custom messages and summaries become user messages with pi's preambles",
          "[llm][convert]") {
    CustomMessage c{"note", Content(std::string("remember")), true, nullptr, 5, {}};
    CustomMessage blocks{"img",
                         Content(std::vector<ContentBlock>{TextContent{"see", {}},
                                                           ImageContent{"AAA", "image/png", {}}}),
                         false,
                         nullptr,
                         6,
                         {}};
    BranchSummaryMessage branch{"tried X", "abc", 7, {}};
    CompactionSummaryMessage compaction{"did Y", 1000, 8, {}};
    auto out = llm::convert_to_llm({handle(c), handle(blocks), handle(branch), handle(compaction)});
    REQUIRE(out.size() == 4);
    CHECK(only_text(out[0]) == "remember");
    const auto& b = std::get<std::vector<ContentBlock>>(std::get<UserMessage>(*out[1]).content);
    REQUIRE(b.size() == 2);
    CHECK(std::holds_alternative<ImageContent>(b[1]));
    CHECK(only_text(out[2]) ==
          "The following is a summary of a branch that this conversation came back "
          "from:\n\n<summary>\ntried X</summary>");
    CHECK(only_text(out[3]) ==
          "The conversation history before this point was compacted into the following summary:\n\n"
          "<summary>\ndid Y\n</summary>");
    CHECK(std::get<UserMessage>(*out[3]).timestamp == 8);
}

TEST_CASE("user, assistant and tool results pass through shared, unknown roles are dropped",
          "[llm][convert]") {
    auto u = handle(user("hi"));
    auto a = handle(assistant_tool_call("c1", "read"));
    auto r = handle(tool_result("c1", "read", "done"));
    auto opaque = handle(OpaqueMessage{"hologram", Json{{"role", "hologram"}}});
    auto out = llm::convert_to_llm({u, opaque, a, r});
    REQUIRE(out.size() == 3);
    CHECK(out[0].get() == u.get());
    CHECK(out[1].get() == a.get());
    CHECK(out[2].get() == r.get());
}

TEST_CASE("the result keeps the pairing invariant: a tool result without its call is dropped",
          "[llm][convert]") {
    auto out = llm::convert_to_llm({handle(user("hi")), handle(tool_result("ghost", "read", "x")),
                                    handle(assistant_tool_call("c1", "read")),
                                    handle(tool_result("c1", "read", "ok"))});
    REQUIRE(out.size() == 3);
    CHECK(std::holds_alternative<UserMessage>(*out[0]));
    CHECK(std::get<ToolResultMessage>(*out[2]).tool_call_id == "c1");
}

TEST_CASE("a built session context converts: every role of a session", "[llm][convert]") {
    auto s = memory_session();
    append_message(s, user("a"));
    append_message(s, assistant_tool_call("c1", "bash"));
    append_message(s, tool_result("c1", "bash", "out"));
    append_message(s, bash("ls", "x"));
    append_custom_message_entry(s, "note", Content(std::string("n")), false);
    auto ctx = build_context(s);
    auto out = llm::convert_to_llm(ctx);
    REQUIRE(out.size() == 5);
    for (const auto& m : out) {
        const auto role = role_of(*m);
        CHECK((role == "user" || role == "assistant" || role == "tool_result"));
    }
}

// The pairing invariant of built contexts (SPEC §8): no tool result without its tool call
// earlier in the context; with provider_ready, no unanswered tool call at the end.
#include "support/builders.hpp"
#include "support/catch.hpp"

using namespace agentcore;
using namespace agentcore::testing;
using Strings = std::vector<std::string>;

namespace {

AgentMessage calls(std::vector<std::string> ids, std::string say = "", bool thinking = false) {
    AssistantMessage m;
    if (thinking) m.content.push_back(ThinkingContent{"hmm", {}});
    if (!say.empty()) m.content.push_back(TextContent{std::move(say), {}});
    for (auto& id : ids) m.content.push_back(ToolCallContent{id, "read", Json{{"path", id}}, {}});
    m.provider = "anthropic";
    m.model = "claude";
    m.stop_reason = "tool_use";
    return m;
}

std::vector<std::string> call_ids(const AgentMessage& m) {
    std::vector<std::string> out;
    for (const auto& b : std::get<AssistantMessage>(m).content)
        if (const auto* c = std::get_if<ToolCallContent>(&b)) out.push_back(c->id);
    return out;
}

}  // namespace

TEST_CASE("a well-formed context keeps every message and shares it with the entries",
          "[context][pairing]") {
    auto s = memory_session();
    append_message(s, user("a"));
    auto call = append_message(s, calls({"c1", "c2"}));
    auto r1 = append_message(s, tool_result("c1", "read", "one"));
    append_message(s, tool_result("c2", "read", "two"));
    append_message(s, assistant("done"));
    auto ctx = build_context(s, ContextBuildOptions{{}, {}, true});
    CHECK(ctx.messages.size() == 5);
    CHECK(ctx.dropped.empty());
    CHECK(ctx.messages[1].get() == message_of(*get_entry(s, call)));
    CHECK(ctx.messages[2].get() == message_of(*get_entry(s, r1)));
}

TEST_CASE("a tool result whose call was compacted away is dropped and reported",
          "[context][pairing]") {
    auto s = memory_session();
    append_message(s, user("a"));
    append_message(s, calls({"c1"}));
    auto u = append_message(s, user("while the tool ran"));
    auto r = append_message(s, tool_result("c1", "read", "late"));
    append_message(s, assistant("done"));
    append_compaction(s, "sum", u,
                      10);  // written by hand: the kept part starts between call and result
    auto ctx = build_context(s);
    CHECK(describe(ctx) ==
          Strings{"compaction_summary:sum", "user:while the tool ran", "assistant:done"});
    REQUIRE(ctx.dropped.size() == 1);
    CHECK(ctx.dropped[0].reason == DropReason::orphan_tool_result);
    CHECK(ctx.dropped[0].tool_call_id == "c1");
    CHECK(ctx.dropped[0].whole_message);
    CHECK(ctx.dropped[0].message.get() == message_of(*get_entry(s, r)));
    CHECK(to_string(DropReason::orphan_tool_result) == "orphan_tool_result");
}

TEST_CASE("a tool result before its call is an orphan too: the call must be earlier",
          "[context][pairing]") {
    auto s = memory_session();
    append_message(s, user("a"));
    append_message(s, tool_result("c1", "read", "too early"));
    append_message(s, calls({"c1"}));
    append_message(s, tool_result("c1", "read", "in time"));
    auto ctx = build_context(s);
    CHECK(describe(ctx) == Strings{"user:a", "assistant:", "tool_result:in time"});
    CHECK(ctx.dropped.size() == 1);
}

TEST_CASE("a result in a retained tail without its call is dropped as well", "[context][pairing]") {
    auto s = memory_session();
    append_message(s, user("a"));
    append_compaction(s, "sum", std::nullopt, 10, {}, false, std::nullopt,
                      std::vector<AgentMessage>{tool_result("gone", "read", "x"), user("b")});
    auto ctx = build_context(s);
    CHECK(describe(ctx) == Strings{"compaction_summary:sum", "user:b"});
    CHECK(ctx.dropped.size() == 1);
}

TEST_CASE("without provider_ready, unanswered tool calls stay (a tool may be running)",
          "[context][pairing]") {
    auto s = memory_session();
    append_message(s, user("a"));
    append_message(s, calls({"c1", "c2"}));
    append_message(s, tool_result("c1", "read", "one"));
    auto ctx = build_context(s);
    CHECK(ctx.messages.size() == 3);
    CHECK(ctx.dropped.empty());
}

TEST_CASE(
    "provider_ready drops the trailing message's unanswered calls and keeps the answered ones",
    "[context][pairing]") {
    auto s = memory_session();
    append_message(s, user("a"));
    auto call = append_message(s, calls({"c1", "c2", "c3"}, "reading"));
    append_message(s, tool_result("c2", "read", "two"));
    auto ctx = build_context(s, ContextBuildOptions{{}, {}, true});
    REQUIRE(ctx.messages.size() == 3);
    CHECK(call_ids(*ctx.messages[1]) == Strings{"c2"});
    CHECK(text_of(*ctx.messages[1]) == "reading");
    REQUIRE(ctx.dropped.size() == 2);
    CHECK(ctx.dropped[0].reason == DropReason::dangling_tool_call);
    CHECK(ctx.dropped[0].tool_call_id == "c1");
    CHECK(ctx.dropped[1].tool_call_id == "c3");
    CHECK_FALSE(ctx.dropped[0].whole_message);
    CHECK(ctx.dropped[0].message.get() == message_of(*get_entry(s, call)));  // the original
    // The entry itself is untouched.
    CHECK(call_ids(*message_of(*get_entry(s, call))).size() == 3);
}

TEST_CASE(
    "provider_ready drops a trailing assistant message of nothing but unanswered calls and "
    "thinking",
    "[context][pairing]") {
    auto s = memory_session();
    append_message(s, user("a"));
    append_message(s, calls({"c1"}, "", true));
    auto ctx = build_context(s, ContextBuildOptions{{}, {}, true});
    CHECK(describe(ctx) == Strings{"user:a"});
    REQUIRE(ctx.dropped.size() == 1);
    CHECK(ctx.dropped[0].whole_message);
    CHECK(ctx.dropped[0].tool_call_id == "c1");
    CHECK(to_string(DropReason::dangling_tool_call) == "dangling_tool_call");
}

TEST_CASE("provider_ready leaves unanswered calls earlier in the list alone",
          "[context][pairing]") {
    auto s = memory_session();
    append_message(s, user("a"));
    append_message(s, calls({"c1"}));
    append_message(s, user("never mind"));
    auto ctx = build_context(s, ContextBuildOptions{{}, {}, true});
    CHECK(ctx.messages.size() == 3);
    CHECK(ctx.dropped.empty());
}

TEST_CASE("provider_ready set on the session applies to every build, options merge it",
          "[context][pairing]") {
    auto s = memory_session();
    append_message(s, user("a"));
    append_message(s, calls({"c1"}));
    CHECK(build_context(s).messages.size() == 2);
    s.context_build_options().provider_ready = true;
    CHECK(build_context(s).messages.size() == 1);
    CHECK(merge_context_build_options(ContextBuildOptions{}, ContextBuildOptions{{}, {}, true})
              .provider_ready);
    CHECK(merge_context_build_options(ContextBuildOptions{{}, {}, true}, ContextBuildOptions{})
              .provider_ready);
}

TEST_CASE("enforce_tool_pairing works on a message list an application assembled",
          "[context][pairing]") {
    std::vector<MessageHandle> messages{
        std::make_shared<const AgentMessage>(tool_result("x", "read", "orphan")),
        std::make_shared<const AgentMessage>(user("a")),
        std::make_shared<const AgentMessage>(calls({"c1"}, "hi"))};
    std::vector<DroppedMessage> dropped;
    enforce_tool_pairing(messages, dropped, true);
    REQUIRE(messages.size() == 2);
    CHECK(text_of(*messages[1]) == "hi");
    CHECK(call_ids(*messages[1]).empty());
    CHECK(dropped.size() == 2);
}

TEST_CASE("provider_ready keeps trimming when dropping a trailing message exposes another",
          "[context][pairing]") {
    auto s = memory_session();
    append_message(s, user("a"));
    append_message(s, calls({"c0", "c1"}, "two reads"));
    append_message(s, tool_result("c1", "read", "one"));
    append_message(s, calls({"c2"}));
    auto ctx = build_context(s, ContextBuildOptions{{}, {}, true});
    REQUIRE(describe(ctx) == Strings{"user:a", "assistant:two reads", "tool_result:one"});
    CHECK(call_ids(*ctx.messages[1]) == Strings{"c1"});
    REQUIRE(ctx.dropped.size() == 2);
    CHECK(ctx.dropped[0].tool_call_id == "c2");
    CHECK(ctx.dropped[0].whole_message);
    CHECK(ctx.dropped[1].tool_call_id == "c0");
    CHECK_FALSE(ctx.dropped[1].whole_message);
}

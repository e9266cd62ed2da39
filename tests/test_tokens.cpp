// Token estimates of messages and contexts (SPEC §8).
#include "support/builders.hpp"
#include "support/catch.hpp"

using namespace agentcore;
using namespace agentcore::testing;

namespace {

AgentMessage assistant_with_usage(std::string text, std::int64_t total,
                                  std::string stop_reason = "stop") {
    Usage u;
    u.total_tokens = total;
    auto m = std::get<AssistantMessage>(assistant(std::move(text)));
    m.usage = u;
    m.stop_reason = std::move(stop_reason);
    return m;
}

}  // namespace

TEST_CASE("a message costs its characters divided by four, rounded up", "[tokens]") {
    CHECK(estimate_tokens(user("")) == 0);
    CHECK(estimate_tokens(user("abcd")) == 1);
    CHECK(estimate_tokens(user("hello world")) == 3);  // 11 characters
    CHECK(estimate_tokens(user(std::string(400, 'x'))) == 100);
    CHECK(estimate_tokens(user(std::string(401, 'x'))) == 101);
}

TEST_CASE("characters are code points, not bytes", "[tokens]") {
    CHECK(estimate_tokens(user("h\xC3\xA9llo")) == 2);  // "héllo": 5 characters, 6 bytes
    CHECK(estimate_tokens(user("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E")) ==
          1);  // three CJK characters, 9 bytes
}

TEST_CASE("every image costs a fixed 1200 tokens, in user, tool result and custom messages",
          "[tokens]") {
    UserMessage u;
    u.content =
        std::vector<ContentBlock>{TextContent{"abcd", {}}, ImageContent{"AAAA", "image/png", {}}};
    CHECK(estimate_tokens(u) == 1 + 1200);

    ToolResultMessage r;
    r.content = {TextContent{"abcde", {}}, ImageContent{"", "image/png", {}},
                 ImageContent{"", "image/png", {}}};
    CHECK(estimate_tokens(r) == 2 + 2400);

    CustomMessage c;
    c.content = std::vector<ContentBlock>{ImageContent{"", "image/jpeg", {}}};
    CHECK(estimate_tokens(c) == 1200);
}

TEST_CASE("an assistant message counts text, thinking and tool calls by name and arguments",
          "[tokens]") {
    AssistantMessage a;
    a.content.push_back(ThinkingContent{"abcdefgh", {}});  // 8
    a.content.push_back(TextContent{"hi", {}});            // 2
    a.content.push_back(
        ToolCallContent{"c1", "read", Json{{"path", "a.txt"}}, {}});  // 4 + 16: {"path":"a.txt"}
    CHECK(estimate_tokens(a) == 8);                                   // 30 characters
}

TEST_CASE("bash executions count command and output unless excluded from the context", "[tokens]") {
    BashExecutionMessage b;
    b.command = "ls";
    b.output = "a\nb\n";
    CHECK(estimate_tokens(b) == 2);  // 6 characters
    b.exclude_from_context = true;
    CHECK(estimate_tokens(b) == 0);
}

TEST_CASE("custom and summary messages count their text, unknown roles their raw JSON",
          "[tokens]") {
    CHECK(estimate_tokens(CustomMessage{"note", std::string("12345"), true, {}, 0, {}}) == 2);
    CHECK(estimate_tokens(BranchSummaryMessage{"123456789", "root", 0, {}}) == 3);
    CHECK(estimate_tokens(CompactionSummaryMessage{"123456789", 100, 0, {}}) == 3);
    CHECK(estimate_tokens(OpaqueMessage{"x", Json{{"role", "x"}}}) ==
          3);  // {"role":"x"}: 12 characters
}

TEST_CASE("a usage's context size is total_tokens, else the sum of its parts", "[tokens]") {
    CHECK(usage_context_tokens(usage(10, 20, 30, 40, 0)) == 100);
    Usage u = usage(10, 20, 30, 40, 0);
    u.total_tokens = 500;
    CHECK(usage_context_tokens(u) == 500);
    u.total_tokens = 0;
    CHECK(usage_context_tokens(u) == 100);
}

TEST_CASE("a context's size is the newest valid usage plus estimates of what follows it",
          "[tokens]") {
    std::vector<AgentMessage> messages{user("hello world"), assistant_with_usage("x", 1000),
                                       user("abcdefgh")};
    auto e = estimate_context_tokens(messages);
    CHECK(e.tokens == 1002);
    CHECK(e.usage_tokens == 1000);
    CHECK(e.trailing_tokens == 2);
    CHECK(e.last_usage_index == 1u);
}

TEST_CASE("aborted and failed replies do not count as a context size", "[tokens]") {
    std::vector<AgentMessage> messages{
        user("hello world"), assistant_with_usage("x", 1000), user("abcdefgh"),
        assistant_with_usage("xyz", 5000, "aborted"), assistant_with_usage("xyz", 7000, "error")};
    auto e = estimate_context_tokens(messages);
    CHECK(e.last_usage_index == 1u);
    CHECK(e.tokens == 1000 + 2 + 1 + 1);
}

TEST_CASE("without any usage a context's size is the sum of the estimates", "[tokens]") {
    std::vector<AgentMessage> messages{user("hello world"), user("abcdefgh")};
    auto e = estimate_context_tokens(messages);
    CHECK(e.tokens == 5);
    CHECK(e.usage_tokens == 0);
    CHECK_FALSE(e.last_usage_index);
    CHECK(estimate_context_tokens(std::vector<AgentMessage>{}).tokens == 0);
    // A reply whose usage was never reported (all zero) is not a context size either.
    std::vector<AgentMessage> unreported{user("hello world"), assistant("abcd")};
    CHECK(estimate_context_tokens(unreported).tokens == 4);
    CHECK_FALSE(estimate_context_tokens(unreported).last_usage_index);
}

TEST_CASE("the context estimate works on a built context's shared messages", "[tokens]") {
    auto s = memory_session();
    append_message(s, user("hello world"));
    append_message(s, assistant_with_usage("x", 1000));
    append_message(s, user("abcdefgh"));
    CHECK(estimate_context_tokens(build_context(s).messages).tokens == 1002);
}

TEST_CASE("usages a compaction kept are stale: only replies newer than the summary count",
          "[tokens]") {
    AgentMessage old_reply = assistant_with_usage("x", 9000);
    std::get<AssistantMessage>(old_reply).timestamp = 4000;
    AgentMessage new_reply = assistant_with_usage("y", 100);
    std::get<AssistantMessage>(new_reply).timestamp = 6000;
    const AgentMessage summary = CompactionSummaryMessage{"12345678", 9000, 5000, {}};  // 2 tokens

    std::vector<AgentMessage> just_compacted{summary, user("abcd"), old_reply, user("abcd")};
    auto e = estimate_context_tokens(just_compacted);
    CHECK_FALSE(e.last_usage_index);
    CHECK(e.tokens == 2 + 1 + 1 + 1);

    std::vector<AgentMessage> later{summary, user("abcd"), old_reply, new_reply, user("abcd")};
    CHECK(estimate_context_tokens(later).tokens == 101);
    CHECK(estimate_context_tokens(later).last_usage_index == 3u);
}

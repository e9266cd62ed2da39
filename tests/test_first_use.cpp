// What a newcomer writes first: option structs, blocks and messages written with designated
// initialisers (the suite builds with -Wextra -Werror, so a member without a default initialiser
// breaks this file's build), and the builders and accessors of messages.hpp and entries.hpp.
#include "support/builders.hpp"
#include "support/catch.hpp"

using namespace agentcore;
using namespace agentcore::testing;

TEST_CASE("option structs take designated initialisers that leave members out", "[first_use]") {
    InMemorySessionRepo repo(Environment::deterministic(1767225600000, 7));
    auto session = create(repo, {.cwd = "/work/project"});
    CHECK(session.storage().metadata().cwd == "/work/project");
    CHECK(session.storage().metadata().metadata == Json::object());
    auto named = create(repo, CreateOptions{.id = "chosen-id", .cwd = "/w"});
    CHECK(named.storage().metadata().id == "chosen-id");
    CHECK(list(repo, {.cwd = "/w"}).size() == 1);

    auto first = append_message(session, UserMessage{.content = "hello"});
    append_message(session, AssistantMessage{.content = {TextContent{.text = "hi"}}, .model = "m"});
    auto summary = move_to(session, first, BranchSummaryInput{.summary = "left a greeting"});
    REQUIRE(summary);
    CHECK(entry_as<BranchSummaryEntry>(*get_entry(session, *summary))->summary == "left a greeting");

    auto forked = fork(repo, session.storage().metadata().id, {.entry_id = first, .cwd = "/other"});
    CHECK(forked.storage().metadata().cwd == "/other");

    ContextBuildOptions context_options{.provider_ready = true};
    CHECK(build_context(session, context_options).messages.size() == 2);
    CompactionSettings settings{.keep_recent_tokens = 10};
    CHECK(settings.enabled);
    SummaryResult result{.summary = "short"};
    CHECK_FALSE(result.usage);
    CHECK(CompactOptions{.retain_tail = true}.max_tool_result_chars == 2000);
    CHECK(ForkOptions{.cwd = "/x"}.position == ForkPosition::before);
    CHECK(ImageContent{.data = "AA==", .mime_type = "image/png"}.extra.is_null());
    CHECK(ThinkingContent{.thinking = "hm"}.thinking == "hm");
    CHECK(ToolCallContent{.id = "c", .name = "ls"}.arguments == Json::object());
    CHECK(ToolResultMessage{.tool_call_id = "c", .is_error = true}.is_error);
    CHECK(Usage{.input = 3, .output = 4}.total_tokens == 0);
    CHECK(SessionHeader{.id = "h", .cwd = "/"}.version == 3);
    CHECK(JsonlStorageOptions{.lenient = true}.durability == Durability::durable);
}

TEST_CASE("a tool-call round trip is written with the builders, one expression a message", "[first_use]") {
    auto s = memory_session();
    const std::int64_t start = 1796197403123;  // memory_session's clock: +1 ms a call
    auto question = append_message(s, user_text("Which files are here?"));
    auto reply = append_message(s, assistant_reply({.thinking = "List them.",
                                                    .text = "Let me look.",
                                                    .tool_calls = {tool_call("call_1", "bash", {{"command", "ls"}})},
                                                    .provider = "anthropic",
                                                    .model = "claude"}));
    const auto* asked = entry_as<AssistantMessage>(get_entry(s, reply));
    REQUIRE(asked);
    CHECK(asked->stop_reason == "tool_use");
    REQUIRE(asked->content.size() == 3);
    CHECK(std::holds_alternative<ThinkingContent>(asked->content[0]));
    CHECK(text_of(*asked) == "Let me look.");
    const auto calls = tool_calls_of(*asked);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].arguments == Json{{"command", "ls"}});
    auto result = append_message(s, tool_result(calls[0], "main.cpp"));
    append_message(s, assistant_text("One file: main.cpp."));

    const auto* answered = entry_as<ToolResultMessage>(get_entry(s, result));
    REQUIRE(answered);
    CHECK(answered->tool_call_id == "call_1");
    CHECK(answered->tool_name == "bash");
    CHECK_FALSE(answered->is_error);
    CHECK(text_of(AgentMessage(*answered)) == "main.cpp");
    CHECK(tool_calls_of(AgentMessage(*answered)).empty());

    // Messages left at timestamp 0 take the entry's time from the session's clock.
    const auto& entry = std::get<MessageEntry>(*get_entry(s, question));
    CHECK(timestamp_of(entry.message) == start);
    CHECK(entry.timestamp == format_timestamp(start));
    CHECK(timestamp_of(entry_as<MessageEntry>(get_entry(s, reply))->message) == start + 1);

    auto context = build_context(s);
    REQUIRE(context.messages.size() == 4);
    CHECK(context.dropped.empty());
    CHECK(role_of(*context.messages[2]) == "tool_result");
    CHECK(text_of(*context.messages[3]) == "One file: main.cpp.");
    CHECK(assistant_text("x").stop_reason == "stop");
}

TEST_CASE("a timestamp given to a builder is kept", "[first_use]") {
    auto s = memory_session();
    auto id = append_message(s, user_text("at a given time", 42));
    CHECK(timestamp_of(*message_of(*get_entry(s, id))) == 42);
    AssistantReply reply{.text = "later", .stop_reason = "length", .timestamp = 43};
    auto later = append_message(s, assistant_reply(reply));
    const auto* m = entry_as<AssistantMessage>(get_entry(s, later));
    REQUIRE(m);
    CHECK(m->timestamp == 43);
    CHECK(m->stop_reason == "length");
}

TEST_CASE("entry_as names entry types and message types, null for the others", "[first_use]") {
    auto s = memory_session();
    auto label_target = append_message(s, user_blocks({TextContent{.text = "a"}, TextContent{.text = "b"}}));
    auto label = append_label(s, label_target, std::string("first"));
    const EntryHandle message = get_entry(s, label_target);
    const EntryHandle label_entry = get_entry(s, label);
    CHECK(entry_as<MessageEntry>(message));
    CHECK(entry_as<UserMessage>(message));
    CHECK(text_of(entry_as<MessageEntry>(message)->message) == "ab");
    CHECK_FALSE(entry_as<AssistantMessage>(message));
    CHECK_FALSE(entry_as<LabelEntry>(message));
    CHECK(entry_as<LabelEntry>(label_entry)->target_id == label_target);
    CHECK_FALSE(entry_as<UserMessage>(label_entry));
    CHECK_FALSE(entry_as<MessageEntry>(EntryHandle{}));
    CHECK(text_of(AgentMessage(BashExecutionMessage{.command = "ls", .output = "x"})).empty());
    CHECK(tool_result(tool_call("c", "view"), {ImageContent{.data = "AA==", .mime_type = "image/png"}}, true).is_error);
}

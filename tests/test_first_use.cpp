// What a newcomer writes first: option structs, blocks and messages written with designated
// initialisers (the suite builds with -Wextra -Werror, so a member without a default initialiser
// breaks this file's build), and the builders and accessors of messages.hpp and entries.hpp.
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/scratch.hpp"

using namespace agentcore;
using namespace agentcore::testing;

TEST_CASE("option structs take designated initialisers that leave members out", "[first_use]") {
    InMemorySessionRepo repo(Environment::deterministic(1767225600000, 7));
    auto session = create(repo, {.cwd = "/work/project"});
    CHECK(session.storage().metadata().cwd == "/work/project");
    CHECK(session.storage().metadata().metadata == Json::object());
    auto named = create(repo, CreateOptions{.id = "chosen-id", .cwd = "/w"});
    CHECK(named.storage().metadata().id == "chosen-id");
    CHECK(list(repo, {.cwd = "/w"}).sessions.size() == 1);

    auto first = append_message(session, UserMessage{.content = "hello"});
    append_message(session, AssistantMessage{.content = {TextContent{.text = "hi"}}, .model = "m"});
    auto summary = move_to(session, first, BranchSummaryInput{.summary = "left a greeting"});
    REQUIRE(summary);
    CHECK(entry_as<BranchSummaryEntry>(*get_entry(session, *summary))->summary ==
          "left a greeting");

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

TEST_CASE("a tool-call round trip is written with the builders, one expression a message",
          "[first_use]") {
    auto s = memory_session();
    const std::int64_t start = 1796197403123;  // memory_session's clock: +1 ms a call
    auto question = append_message(s, user_text("Which files are here?"));
    auto reply = append_message(
        s, assistant_reply({.thinking = "List them.",
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
    auto label_target =
        append_message(s, user_blocks({TextContent{.text = "a"}, TextContent{.text = "b"}}));
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
    CHECK(tool_result(tool_call("c", "view"),
                      {ImageContent{.data = "AA==", .mime_type = "image/png"}}, true)
              .is_error);
}

TEST_CASE("the umbrella header alone serves files, conversion and the codec", "[first_use]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.path());
    std::string path;
    {
        auto session = create(repo, {.cwd = "/w"});
        append_message(session, user_text("hello"));
        path = session.storage().path();
    }
    LoadedSession loaded = load_session_file(path);  // convert.hpp
    CHECK(loaded.storage.entry_count() == 1);
    ConvertReport report = convert(path, Dialect::pi, dir.file("pi.jsonl"));
    CHECK(report.entry_count == 1);
    CHECK(upgrade_file(dir.file("pi.jsonl")).rewritten == false);  // pi_migrate.hpp
    CHECK(encode_entry(*loaded.storage.get_entries({}).front(), Dialect::pi).find("\"parentId\"") !=
          std::string::npos);  // codec.hpp
}

TEST_CASE("a JSONL storage closed explicitly lets go of its lock while its sessions still read",
          "[first_use][jsonl]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.path());
    auto session = create(repo, {.cwd = "/w"});
    auto copy = session;  // shares the storage
    const auto first = append_message(session, user_text("before close"));
    const std::string path = session.storage().path();
    CHECK(error_of([&] { JsonlSessionStorage::open(path); }) == ErrorCode::locked);

    session.storage().close();
    CHECK(copy.storage().closed());
    session.storage().close();  // again: nothing
    {
        auto writer = JsonlSessionStorage::open(path);  // the lock is free
        CHECK(writer.entry_count() == 1);
    }
    CHECK(error_of([&] { append_message(copy, user_text("after close")); }) == ErrorCode::storage);
    CHECK(message_of_error([&] {
              append_message(copy, user_text("after close"));
          }).find("closed") != std::string::npos);
    CHECK(copy.storage().entry_count() == 1);
    CHECK(text_of(*build_context(copy).messages.at(0)) == "before close");
    CHECK(get_entry(copy, first));
    CHECK(JsonlSessionStorage::open(path).entry_count() == 1);  // nothing was written after close
}

TEST_CASE("build_context_at takes what get_leaf_id returns, an id, or none",
          "[first_use][context]") {
    auto s = memory_session();
    const auto a = append_message(s, user_text("a"));
    append_message(s, assistant_text("b"));
    const std::optional<std::string> leaf = get_leaf_id(s);
    CHECK(build_context_at(s, leaf).messages.size() == 2);
    CHECK(build_context_at(s, get_leaf_id(s)).messages.size() == 2);
    CHECK(build_context_at(s, a).messages.size() == 1);
    CHECK(build_context_at(s, a.c_str()).messages.size() == 1);
    CHECK(build_context_at(s, std::optional<std::string>()).messages.empty());
    CHECK(build_context_at(s, std::nullopt).messages.empty());
    CHECK(error_of([&] { build_context_at(s, std::string("nope")); }) == ErrorCode::not_found);
}

TEST_CASE("role_of spells roles in either dialect", "[first_use]") {
    CHECK(role_of(AgentMessage(tool_result(tool_call("c", "t"), "x")), Dialect::pi) ==
          "toolResult");
    CHECK(role_of(AgentMessage(tool_result(tool_call("c", "t"), "x")), Dialect::native) ==
          "tool_result");
    CHECK(role_of(AgentMessage(BashExecutionMessage{}), Dialect::pi) == "bashExecution");
    CHECK(role_of(AgentMessage(BranchSummaryMessage{}), Dialect::pi) == "branchSummary");
    CHECK(role_of(AgentMessage(CompactionSummaryMessage{}), Dialect::pi) == "compactionSummary");
    CHECK(role_of(AgentMessage(user_text("u")), Dialect::pi) == "user");
    CHECK(role_of(AgentMessage(OpaqueMessage{.role = "tool_result_v2"}), Dialect::pi) ==
          "tool_result_v2");
    // The spelling is the codec's.
    for (Dialect d : {Dialect::native, Dialect::pi})
        for (const AgentMessage& m :
             {AgentMessage(tool_result(tool_call("c", "t"), "x")),
              AgentMessage(BashExecutionMessage{}), AgentMessage(assistant_text("a"))})
            CHECK(message_to_json(m, d)["role"] == role_of(m, d));
}

TEST_CASE("stop reasons are SPEC's set, spelled by the codec for each dialect",
          "[first_use][codec]") {
    auto line = [](std::string_view key, std::string_view value) {
        const Dialect d = key == "stopReason" ? Dialect::pi : Dialect::native;
        Json j{{"role", "assistant"}, {"content", Json::array()},
               {"api", "a"},          {"provider", "p"},
               {"model", "m"},        {"usage", usage_to_json(Usage{}, d)}};
        j[std::string(key)] = value;
        j["timestamp"] = 1;
        return j.dump();
    };
    auto reason = [](const AgentMessage& m) { return std::get<AssistantMessage>(m).stop_reason; };
    CHECK(reason(message_from_json(Json::parse(line("stopReason", "toolUse")), Dialect::pi)) ==
          "tool_use");
    CHECK(reason(message_from_json(Json::parse(line("stop_reason", "tool_use")),
                                   Dialect::native)) == "tool_use");
    for (std::string_view known : stop_reasons) {
        CHECK(is_known_stop_reason(known));
        if (known == "tool_use") continue;
        CHECK(reason(message_from_json(Json::parse(line("stopReason", known)), Dialect::pi)) ==
              known);
        CHECK(reason(message_from_json(Json::parse(line("stop_reason", known)), Dialect::native)) ==
              known);
    }
    // Another dialect's spelling, or a value outside the set: invalid_entry naming the field.
    const std::string pi_wrong = message_of_error(
        [&] { message_from_json(Json::parse(line("stopReason", "tool_use")), Dialect::pi); });
    CHECK(pi_wrong.find("field 'stopReason': not one of stop, length, toolUse, error, aborted") !=
          std::string::npos);
    CHECK(error_of([&] {
              message_from_json(Json::parse(line("stop_reason", "toolUse")), Dialect::native);
          }) == ErrorCode::invalid_entry);
    CHECK(error_of([&] {
              message_from_json(Json::parse(line("stop_reason", "finished")), Dialect::native);
          }) == ErrorCode::invalid_entry);
    CHECK_FALSE(is_known_stop_reason("toolUse"));

    auto bad = assistant_reply({.text = "x", .stop_reason = "finished"});
    CHECK(error_of([&] { message_to_json(bad, Dialect::native); }) == ErrorCode::invalid_entry);
    auto use = assistant_reply({.tool_calls = {tool_call("c", "t")}});
    CHECK(message_to_json(use, Dialect::pi)["stopReason"] == "toolUse");
    CHECK(message_to_json(use, Dialect::native)["stop_reason"] == "tool_use");

    // A JSONL append of such a message fails before anything is written.
    ScratchDir dir;
    JsonlSessionRepo repo(dir.path());
    auto session = create(repo, {.cwd = "/w"});
    CHECK(error_of([&] { append_message(session, bad); }) == ErrorCode::invalid_entry);
    CHECK(session.storage().entry_count() == 0);
}

TEST_CASE("an unknown api is not written, and a message without one reads", "[first_use][codec]") {
    const AgentMessage unknown = assistant_text("hi");
    for (Dialect d : {Dialect::native, Dialect::pi}) {
        const Json j = message_to_json(unknown, d);
        CHECK_FALSE(j.contains("api"));
        CHECK(std::get<AssistantMessage>(message_from_json(j, d)).api.empty());
    }
    const AgentMessage known = assistant_reply({.text = "hi", .api = "anthropic-messages"});
    CHECK(message_to_json(known, Dialect::pi)["api"] == "anthropic-messages");
}

// Compaction helpers (SPEC §8): should_compact, file tracking, serialisation, the cut point,
// the preparation and compact(); those that write a session run over every storage
// (support/storages.hpp).
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/storages.hpp"

#include <agentcore/fork.hpp>

#include <stdexcept>

using namespace agentcore;
using namespace agentcore::testing;
using Strings = std::vector<std::string>;

namespace {

ToolCallContent call(std::string id, std::string name, Json arguments) {
    return ToolCallContent{std::move(id), std::move(name), std::move(arguments), {}};
}

AgentMessage assistant_calls(std::vector<ToolCallContent> calls, std::string say = "") {
    AssistantMessage m;
    if (!say.empty()) m.content.push_back(TextContent{std::move(say), {}});
    for (auto& c : calls) m.content.push_back(std::move(c));
    m.provider = "anthropic";
    m.model = "claude";
    m.stop_reason = "tool_use";
    return m;
}

SummaryResult fixed_summary(const SummaryRequest&) {
    return SummaryResult{"SUMMARY", usage(1, 2, 3, 4, 0.5)};
}

}  // namespace

// ---------------------------------------------------------------------------------------------

AGENTCORE_UNIT_TEST_CASE("should_compact: the context no longer leaves reserve_tokens free",
                         "[compaction]") {
    CompactionSettings s;
    CHECK(s.enabled);
    CHECK(s.reserve_tokens == 16384);
    CHECK(s.keep_recent_tokens == 20000);
    CHECK_FALSE(should_compact(183616, 200000, s));
    CHECK(should_compact(183617, 200000, s));
    s.enabled = false;
    CHECK_FALSE(should_compact(1000000, 200000, s));
    static_assert(should_compact(101, 100, CompactionSettings{true, 0, 0}));
}

AGENTCORE_UNIT_TEST_CASE("files: read, write and edit calls with a path, modified wins over read",
                         "[compaction][files]") {
    FileTracker t;
    t.add_message(assistant_calls(
        {call("1", "read", {{"path", "a.txt"}}), call("2", "read", {{"path", "b.txt"}}),
         call("3", "edit", {{"path", "b.txt"}}), call("4", "write", {{"path", "c.txt"}}),
         call("5", "bash", {{"command", "cat d.txt"}}), call("6", "read", {{"path", 7}}),
         call("7", "read", Json::array())}));
    t.add_message(user("read e.txt"));
    t.add_details(Json{{"read_files", {"z.txt", "a.txt"}}, {"modified_files", {"y.txt"}}});
    t.add_details(Json{{"readFiles", {"p.txt"}}, {"modifiedFiles", {"q.txt", 3}}});
    auto lists = t.lists();
    CHECK(lists.read_files == Strings{"a.txt", "p.txt", "z.txt"});
    CHECK(lists.modified_files == Strings{"b.txt", "c.txt", "q.txt", "y.txt"});
    CHECK(
        file_details(lists).dump() ==
        R"({"read_files":["a.txt","p.txt","z.txt"],"modified_files":["b.txt","c.txt","q.txt","y.txt"]})");
    CHECK(format_file_lists(FileLists{{"a"}, {"b", "c"}}) ==
          "\n\nFiles read:\n- a\n\nFiles modified:\n- b\n- c");
    CHECK(format_file_lists(FileLists{}).empty());
}

AGENTCORE_UNIT_TEST_CASE("serialize_conversation labels every role and leaves empty parts out",
                         "[compaction][serialize]") {
    AssistantMessage a;
    a.content = {ThinkingContent{"think", {}}, TextContent{"Sure.", {}},
                 call("c1", "read", Json{{"path", "a.txt"}, {"limit", 10}}),
                 call("c2", "bash", Json{{"command", "ls"}})};
    ToolResultMessage err;
    err.tool_call_id = "c2";
    err.content = {TextContent{"no such dir", {}}};
    err.is_error = true;
    BashExecutionMessage bash;
    bash.command = "make";
    bash.output = "ok";
    bash.exit_code = 2;
    BashExecutionMessage hidden = bash;
    hidden.exclude_from_context = true;
    UserMessage with_image;
    with_image.content =
        std::vector<ContentBlock>{TextContent{"look", {}}, ImageContent{"", "image/png", {}}};
    std::vector<AgentMessage> messages{user("Hi"),
                                       a,
                                       tool_result("c1", "read", "content"),
                                       err,
                                       bash,
                                       hidden,
                                       with_image,
                                       CustomMessage{"note", std::string("n"), true, {}, 0, {}},
                                       BranchSummaryMessage{"b", "root", 0, {}},
                                       CompactionSummaryMessage{"k", 1, 0, {}},
                                       OpaqueMessage{"x", Json{{"role", "x"}}},
                                       user("")};
    CHECK(serialize_conversation(messages) ==
          "[User]: Hi\n\n"
          "[Assistant thinking]: think\n\n"
          "[Assistant]: Sure.\n\n"
          "[Assistant tool calls]: read(path=\"a.txt\", limit=10); bash(command=\"ls\")\n\n"
          "[Tool result]: content\n\n"
          "[Tool result]: (error) no such dir\n\n"
          "[User ran]: $ make\nok\n(exit code 2)\n\n"
          "[User]: look\n[image]\n\n"
          "[Custom: note]: n\n\n"
          "[Branch summary]: b\n\n"
          "[Compaction summary]: k");
}

AGENTCORE_UNIT_TEST_CASE(
    "serialize_conversation truncates long tool results by characters, with a marker",
    "[compaction][serialize]") {
    std::vector<AgentMessage> messages{tool_result("c", "read", "abcdefghij")};
    CHECK(serialize_conversation(messages, 4) ==
          "[Tool result]: abcd\n[... 6 more characters truncated]");
    CHECK(serialize_conversation(messages, 10) == "[Tool result]: abcdefghij");
    std::vector<AgentMessage> utf8{tool_result("c", "read", "\xC3\xA9\xC3\xA9\xC3\xA9")};  // "ééé"
    CHECK(serialize_conversation(utf8, 2) ==
          "[Tool result]: \xC3\xA9\xC3\xA9\n[... 1 more characters truncated]");
    std::vector<AgentMessage> long_result{tool_result("c", "read", repeated(2500, 'x'))};
    CHECK(serialize_conversation(long_result).size() ==
          std::string("[Tool result]: ").size() + 2000 +
              std::string("\n[... 500 more characters truncated]").size());
}

// ---------------------------------------------------------------------------------------------
// find_cut_point

TEMPLATE_TEST_CASE("cut point: keeps about keep_recent_tokens, cutting before a user message",
                   "[compaction][cut]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));       // 0: 100 tokens
    append_message(s, assistant(repeated(400, 'b')));  // 1
    append_message(s, user(repeated(400, 'c')));       // 2
    append_message(s, assistant(repeated(400, 'd')));  // 3
    auto path = get_branch(s);
    CHECK(find_cut_point(path, 0, 4, 150) == CutPoint{2, std::nullopt, false});
    CHECK(find_cut_point(path, 0, 4, 100) ==
          CutPoint{3, 2u, true});  // the assistant reply splits turn 2
    CHECK(find_cut_point(path, 0, 4, 20000) ==
          CutPoint{0, std::nullopt, false});  // everything fits
    CHECK(find_cut_point(path, 2, 4, 20000) == CutPoint{2, std::nullopt, false});
    CHECK(find_cut_point(path, 0, 99, 150) == CutPoint{2, std::nullopt, false});  // end is clamped
    CHECK(find_cut_point(path, 7, 3, 150) ==
          CutPoint{3, std::nullopt, false});  // start is clamped to end
}

TEMPLATE_TEST_CASE(
    "cut point: never at a tool result, cutting at the assistant of a turn splits it",
    "[compaction][cut]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));           // 0: 100
    append_message(s, assistant_tool_call("c1", "read"));  // 1: 5 (read + {"path":"a.txt"})
    append_message(s, tool_result("c1", "read", repeated(400, 'r')));  // 2: 100
    append_message(s, assistant(repeated(400, 'd')));                  // 3: 100
    auto path = get_branch(s);
    CHECK(find_cut_point(path, 0, 4, 100) == CutPoint{3, 0u, true});
    // 200 tokens reached at the tool result: the next valid cut point is the reply after it.
    CHECK(find_cut_point(path, 0, 4, 200) == CutPoint{3, 0u, true});
    // 205 reached at the tool call: cut before it, the result stays with it.
    CHECK(find_cut_point(path, 0, 4, 205) == CutPoint{1, 0u, true});
}

TEMPLATE_TEST_CASE("cut point: never between a tool call and a result that comes later",
                   "[compaction][cut]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));                       // 0
    append_message(s, assistant_tool_call("c1", "read"));              // 1
    append_message(s, user(repeated(400, 'u')));                       // 2: sent while the tool ran
    append_message(s, tool_result("c1", "read", repeated(400, 'r')));  // 3
    append_message(s, assistant(repeated(400, 'd')));                  // 4
    auto path = get_branch(s);
    // 300 tokens are reached at the user message 2, but a cut there would keep the result of
    // call c1 without the call: the cut moves on to the reply 4.
    CHECK(find_cut_point(path, 0, 5, 250) == CutPoint{4, 2u, true});
}

TEMPLATE_TEST_CASE("cut point: when nothing valid follows, the nearest valid point before is taken",
                   "[compaction][cut]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));                        // 0
    append_message(s, assistant_tool_call("c1", "read"));               // 1
    append_message(s, tool_result("c1", "read", repeated(4000, 'r')));  // 2: 1000 tokens
    auto path = get_branch(s);
    CHECK(find_cut_point(path, 0, 3, 500) == CutPoint{1, 0u, true});
}

TEMPLATE_TEST_CASE(
    "cut point: settings, labels and custom entries just before the cut are kept with it",
    "[compaction][cut]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));                // 0
    auto b = append_message(s, assistant(repeated(400, 'b')));  // 1
    append_thinking_level_change(s, "high");                    // 2
    append_model_change(s, "openai", "gpt");                    // 3
    append_active_tools_change(s, {"read"});                    // 4
    append_label(s, b, std::string("here"));                    // 5
    append_custom_entry(s, "state", {});                        // 6
    append_session_name(s, "n");                                // 7
    append_message(s, user(repeated(400, 'c')));                // 8
    append_message(s, assistant(repeated(400, 'd')));           // 9
    auto path = get_branch(s);
    CHECK(find_cut_point(path, 0, path.size(), 150) == CutPoint{2, std::nullopt, false});
    // Pulling stops at the range's start.
    CHECK(find_cut_point(path, 5, path.size(), 150) == CutPoint{5, std::nullopt, false});
}

TEMPLATE_TEST_CASE(
    "cut point: branch summaries and custom messages are valid cut points and begin turns",
    "[compaction][cut]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user(repeated(400, 'a')));                  // 0
    append_message(s, assistant(repeated(400, 'b')));                      // 1
    move_to(s, a, BranchSummaryInput{repeated(400, 's'), {}, {}, false});  // 2 (child of 0)
    append_custom_message_entry(s, "note", repeated(400, 'n'));            // 3
    append_message(s, assistant(repeated(400, 'd')));                      // 4
    auto path = get_branch(s);
    REQUIRE(path.size() == 4);  // a, summary, note, d
    CHECK(find_cut_point(path, 0, 4, 150) == CutPoint{2, std::nullopt, false});
    CHECK(find_cut_point(path, 0, 4, 250) == CutPoint{1, std::nullopt, false});
    CHECK(find_cut_point(path, 0, 4, 100) == CutPoint{3, 2u, true});
}

TEMPLATE_TEST_CASE("cut point: no valid cut point keeps nothing", "[compaction][cut]",
                   AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_thinking_level_change(s, "high");
    append_model_change(s, "openai", "gpt");
    auto path = get_branch(s);
    CHECK(find_cut_point(path, 0, 2, 100) == CutPoint{2, std::nullopt, false});
    CHECK(find_cut_point({}, 0, 0, 100) == CutPoint{0, std::nullopt, false});
}

// ---------------------------------------------------------------------------------------------
// prepare_compaction

TEMPLATE_TEST_CASE(
    "prepare: messages before the cut are summarised, the rest is the first kept entry on",
    "[compaction][prepare]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(s, assistant(repeated(400, 'b')));
    auto c = append_message(s, user(repeated(400, 'c')));
    auto d = append_message(s, assistant(repeated(400, 'd')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 150});
    REQUIRE(prep);
    CHECK(prep->leaf_id == d);
    CHECK(prep->messages_to_summarize.size() == 2);
    CHECK(text_of(*prep->messages_to_summarize[0]) == repeated(400, 'a'));
    CHECK(prep->turn_prefix_messages.empty());
    CHECK_FALSE(prep->split_turn);
    CHECK(prep->first_kept_entry_id == c);
    REQUIRE(prep->retained_tail.size() == 2);
    CHECK(prep->retained_tail[0].get() == message_of(*get_entry(s, c)));  // shared, not copied
    CHECK(prep->tokens_before == 400);
    CHECK_FALSE(prep->previous_summary);
    CHECK(prep->files == FileLists{});
    CHECK(prep->settings.keep_recent_tokens == 150);
}

TEMPLATE_TEST_CASE("prepare: tokens before come from the newest valid usage",
                   "[compaction][prepare]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(
        s, assistant(repeated(400, 'b'), "anthropic", "claude", usage(4000, 1000, 0, 0, 0)));
    append_message(s, user(repeated(400, 'c')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 50});
    REQUIRE(prep);
    CHECK(prep->tokens_before == 5100);
}

TEMPLATE_TEST_CASE(
    "prepare: none for an empty path, a path ending with a compaction, or nothing to summarise",
    "[compaction][prepare]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    CHECK_FALSE(prepare_compaction(s));
    append_message(s, user("a"));
    append_message(s, assistant("b"));
    CHECK_FALSE(prepare_compaction(s));  // everything fits in keep_recent_tokens
    append_compaction(s, "sum", std::nullopt, 10);
    CHECK_FALSE(prepare_compaction(s, CompactionSettings{true, 0, 0}));
    CHECK_FALSE(prepare_compaction(std::vector<EntryHandle>{}));
}

TEMPLATE_TEST_CASE("prepare: a path that does not exist is not_found", "[compaction][prepare]",
                   AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    CHECK(error_of([&] { (void)prepare_compaction_at(s, "nope"); }) == ErrorCode::not_found);
}

TEMPLATE_TEST_CASE("prepare: a split turn gives its start as the turn prefix",
                   "[compaction][prepare]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(s, assistant_calls({call("c1", "read", {{"path", "src/a.cpp"}})}));
    append_message(s, tool_result("c1", "read", repeated(400, 'r')));
    auto d = append_message(s, assistant(repeated(400, 'd')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 100});
    REQUIRE(prep);
    CHECK(prep->split_turn);
    CHECK(prep->messages_to_summarize.empty());
    CHECK(prep->turn_prefix_messages.size() == 3);
    CHECK(prep->first_kept_entry_id == d);
    CHECK(prep->files.read_files == Strings{"src/a.cpp"});
}

TEMPLATE_TEST_CASE("prepare: files come from summarised tool calls, not from kept ones",
                   "[compaction][prepare][files]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(s, assistant_calls({call("1", "read", {{"path", "r.txt"}}),
                                       call("2", "edit", {{"path", "e.txt"}}),
                                       call("3", "read", {{"path", "e.txt"}})}));
    append_message(s, tool_result("1", "read", "x"));
    append_message(s, tool_result("2", "edit", "x"));
    append_message(s, tool_result("3", "read", "x"));
    append_message(s, user(repeated(400, 'c')));
    append_message(s, assistant_calls({call("4", "write", {{"path", "kept.txt"}})}));
    append_message(s, tool_result("4", "write", repeated(400, 'w')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 150});
    REQUIRE(prep);
    CHECK(prep->messages_to_summarize.size() == 5);
    CHECK(prep->files == FileLists{{"r.txt"}, {"e.txt"}});
}

TEMPLATE_TEST_CASE(
    "prepare after a compaction: its kept entries are summarised again, its summary is the "
    "previous one",
    "[compaction][prepare]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(s, assistant(repeated(400, 'b')));
    auto c = append_message(s, user(repeated(400, 'c')));
    append_message(s, assistant(repeated(400, 'd')));
    append_compaction(s, "first", c, 400,
                      Json{{"read_files", {"old.txt"}}, {"modified_files", Json::array()}});
    auto e = append_message(s, user(repeated(400, 'e')));
    append_message(s, assistant(repeated(400, 'f')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 150});
    REQUIRE(prep);
    CHECK(prep->previous_summary == std::optional<std::string>("first"));
    REQUIRE(prep->messages_to_summarize.size() == 2);
    CHECK(text_of(*prep->messages_to_summarize[0]) == repeated(400, 'c'));
    CHECK(text_of(*prep->messages_to_summarize[1]) == repeated(400, 'd'));
    CHECK(prep->first_kept_entry_id == e);
    CHECK(prep->files.read_files == Strings{"old.txt"});
}

TEMPLATE_TEST_CASE(
    "prepare after a compaction: the cut never falls before it, even when everything would fit",
    "[compaction][prepare]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    auto c = append_message(s, user("c"));
    append_compaction(s, "first", c, 4);
    auto e = append_message(s, user("e"));
    auto prep = prepare_compaction(s);
    REQUIRE(prep);
    CHECK(prep->first_kept_entry_id == e);
    REQUIRE(prep->messages_to_summarize.size() == 1);
    CHECK(text_of(*prep->messages_to_summarize[0]) == "c");
}

TEMPLATE_TEST_CASE(
    "prepare after a compaction with a retained tail: the tail is summarised, not dropped",
    "[compaction][prepare]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(s, assistant(repeated(400, 'b')));
    append_compaction(s, "first", std::nullopt, 200, {}, false, std::nullopt,
                      std::vector<AgentMessage>{user("tail-u"), assistant("tail-a")});
    auto e = append_message(s, user(repeated(400, 'e')));
    append_message(s, assistant(repeated(400, 'f')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 150});
    REQUIRE(prep);
    std::vector<std::string> summarised;
    for (const auto& m : prep->messages_to_summarize) summarised.push_back(text_of(*m));
    CHECK(summarised == Strings{"tail-u", "tail-a"});
    CHECK(prep->first_kept_entry_id == e);
    CHECK(prep->previous_summary == std::optional<std::string>("first"));
}

TEMPLATE_TEST_CASE(
    "cut point: a tool call in the previous compaction's retained tail pairs with its later result",
    "[compaction][cut]", AGENTCORE_TEST_STORAGES) {
    // The tail ends with a call whose tool was still running; the user typed while it ran, then
    // the result came. A cut at the typed message would keep the result and summarise its call.
    auto s = fresh_session<TestType>();
    append_compaction(s, "first", std::nullopt, 200, {}, false, std::nullopt,
                      std::vector<AgentMessage>{
                          user("q"), assistant_calls({call("late", "read", Json{{"path", "a"}})})});
    append_message(s, user(repeated(400, 't')));
    append_message(s, tool_result("late", "read", repeated(40, 'r')));
    auto d = append_message(s, assistant(repeated(400, 'd')));
    const auto path = get_branch(s);
    const CutPoint cut = find_cut_point(path, 1, path.size(), 120);
    CHECK(cut.first_kept_index == 3);

    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 120});
    REQUIRE(prep);
    CHECK(prep->first_kept_entry_id == d);
    for (bool retain_tail : {false, true}) {
        auto copy = fresh_session<TestType>();
        for (const auto& e : s.storage().get_entries(EntriesQuery{})) append_entry(copy, *e);
        auto p = prepare_compaction(copy, CompactionSettings{true, 16384, 120});
        REQUIRE(p);
        REQUIRE(compact(copy, *p, fixed_summary, CompactOptions{retain_tail, 2000}));
        const SessionContext ctx = build_context(copy);
        CHECK(ctx.dropped.empty());
        CHECK(describe(ctx) ==
              Strings{"compaction_summary:SUMMARY", "assistant:" + repeated(400, 'd')});
    }
}

TEMPLATE_TEST_CASE("prepare: a compaction written by a hook does not contribute its details",
                   "[compaction][prepare][files]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    append_compaction(s, "hook", a, 1, Json{{"read_files", {"h.txt"}}}, true);
    append_message(s, user("b"));
    auto prep = prepare_compaction(s);
    REQUIRE(prep);
    CHECK(prep->files == FileLists{});
}

// ---------------------------------------------------------------------------------------------
// compact

TEMPLATE_TEST_CASE(
    "compact appends the compaction and the context becomes summary plus kept messages",
    "[compaction][compact]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(s, assistant_calls({call("1", "read", {{"path", "r.txt"}})}));
    append_message(s, tool_result("1", "read", "x"));
    auto c = append_message(s, user(repeated(400, 'c')));
    append_message(s, assistant(repeated(400, 'd')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 150});
    REQUIRE(prep);
    SummaryRequest seen;
    auto id = compact(s, *prep, [&](const SummaryRequest& r) {
        seen = r;
        return SummaryResult{"the summary", usage(10, 20, 0, 0, 0.25)};
    });
    REQUIRE(id);
    CHECK(get_leaf_id(s) == id);
    const auto& entry = std::get<CompactionEntry>(*get_entry(s, *id));
    CHECK(entry.summary == "the summary");
    CHECK(entry.first_kept_entry_id == c);
    CHECK_FALSE(entry.retained_tail.has_value());
    CHECK(entry.tokens_before == prep->tokens_before);
    CHECK(entry.details.dump() == R"({"read_files":["r.txt"],"modified_files":[]})");
    REQUIRE(entry.usage);
    CHECK(entry.usage->input == 10);
    CHECK_FALSE(entry.from_hook);
    CHECK(get_session_stats(s).cost_total == Approx(0.25));

    CHECK(seen.messages.size() == 3);
    CHECK(seen.conversation_text ==
          "[User]: " + repeated(400, 'a') +
              "\n\n[Assistant tool calls]: read(path=\"r.txt\")\n\n[Tool result]: x");
    CHECK(seen.turn_prefix.empty());
    CHECK(seen.turn_prefix_text.empty());
    CHECK_FALSE(seen.previous_summary);
    CHECK(seen.files.read_files == Strings{"r.txt"});
    CHECK(seen.tokens_before == prep->tokens_before);

    CHECK(describe(build_context(s)) == Strings{"compaction_summary:the summary",
                                                "user:" + repeated(400, 'c'),
                                                "assistant:" + repeated(400, 'd')});
}

TEMPLATE_TEST_CASE(
    "compact with retain_tail stores the kept messages and still names the first kept entry",
    "[compaction][compact]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(s, assistant(repeated(400, 'b')));
    auto c = append_message(s, user(repeated(400, 'c')));
    append_message(s, assistant(repeated(400, 'd')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 150});
    REQUIRE(prep);
    auto id = compact(s, *prep, fixed_summary, CompactOptions{true, 2000});
    REQUIRE(id);
    const auto& entry = std::get<CompactionEntry>(*get_entry(s, *id));
    CHECK(entry.first_kept_entry_id == c);  // what a reader without retained tails (pi 0.73) keeps
    REQUIRE(entry.retained_tail.has_value());
    CHECK(entry.retained_tail->size() == 2);
    append_message(s, user("e"));
    CHECK(get_branch(s).size() == 2);  // the tail ends the walk: the kept entries are not visited
    CHECK(describe(build_context(s)) == Strings{"compaction_summary:SUMMARY",
                                                "user:" + repeated(400, 'c'),
                                                "assistant:" + repeated(400, 'd'), "user:e"});

    // Read as pi 0.73 reads it, without the tail: the same messages, from the first kept entry.
    auto without_tail = fresh_session<TestType>();
    for (const auto& e : s.storage().get_entries(EntriesQuery{})) {
        SessionTreeEntry copy = *e;
        if (auto* k = std::get_if<CompactionEntry>(&copy)) k->retained_tail.reset();
        append_entry(without_tail, std::move(copy));
    }
    CHECK(describe(build_context(without_tail)) == describe(build_context(s)));

    // A fork from the compaction copies no kept entry, so it drops the pointer and keeps the tail.
    const auto forked = prepare_fork_entries(get_entries_to_fork(
        s.storage(), ForkOptions{.entry_id = *id, .position = ForkPosition::at}));
    REQUIRE(forked.size() == 1);
    const auto& copied = std::get<CompactionEntry>(forked[0]);
    CHECK_FALSE(copied.first_kept_entry_id);
    CHECK(copied.retained_tail.has_value());
}

TEMPLATE_TEST_CASE("compact: a cancelling summariser appends nothing and returns none",
                   "[compaction][compact]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(s, user(repeated(400, 'b')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 50});
    REQUIRE(prep);
    const auto before = s.storage().entry_count();
    auto id = compact(s, *prep, [](const SummaryRequest&) -> std::optional<SummaryResult> {
        return std::nullopt;
    });
    CHECK_FALSE(id);
    CHECK(s.storage().entry_count() == before);
}

TEMPLATE_TEST_CASE("compact: a throwing summariser appends nothing and the exception propagates",
                   "[compaction][compact]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(s, user(repeated(400, 'b')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 50});
    REQUIRE(prep);
    const auto before = s.storage().entry_count();
    CHECK_THROWS_AS(compact(s, *prep,
                            [](const SummaryRequest&) -> SummaryResult {
                                throw std::runtime_error("llm down");
                            }),
                    std::runtime_error);
    CHECK(s.storage().entry_count() == before);
}

TEMPLATE_TEST_CASE(
    "compact: a preparation whose leaf has moved is invalid_entry, before or after summarising",
    "[compaction][compact]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user(repeated(400, 'a')));
    append_message(s, user(repeated(400, 'b')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 16384, 50});
    REQUIRE(prep);
    append_message(s, user("c"));
    bool called = false;
    CHECK(error_of([&] {
              compact(s, *prep, [&](const SummaryRequest& r) {
                  called = true;
                  return fixed_summary(r);
              });
          }) == ErrorCode::invalid_entry);
    CHECK_FALSE(called);

    auto fresh = prepare_compaction(s, CompactionSettings{true, 16384, 50});
    REQUIRE(fresh);
    const auto before = s.storage().entry_count();
    CHECK(error_of([&] {
              compact(s, *fresh, [&](const SummaryRequest& r) {
                  append_message(s, user("typed while summarising"));
                  return fixed_summary(r);
              });
          }) == ErrorCode::invalid_entry);
    CHECK(s.storage().entry_count() == before + 1);  // only the message the callback appended
}

TEMPLATE_TEST_CASE(
    "compact twice: the second summary folds in the first and the context has one summary",
    "[compaction][compact]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    CompactionSettings settings{true, 16384, 150};
    for (char ch = 'a'; ch < 'k'; ++ch) append_message(s, user(repeated(400, ch)));
    auto first = prepare_compaction(s, settings);
    REQUIRE(first);
    REQUIRE(compact(s, *first, [](const SummaryRequest&) {
        return SummaryResult{"S1", std::nullopt};
    }));
    for (char ch = 'k'; ch < 'o'; ++ch) append_message(s, user(repeated(400, ch)));
    auto second = prepare_compaction(s, settings);
    REQUIRE(second);
    CHECK(second->previous_summary == std::optional<std::string>("S1"));
    std::optional<std::string> previous;
    REQUIRE(compact(s, *second, [&](const SummaryRequest& r) {
        previous = r.previous_summary;
        return SummaryResult{"S2", std::nullopt};
    }));
    CHECK(previous == std::optional<std::string>("S1"));
    auto ctx = build_context(s);
    CHECK(describe(ctx) == Strings{"compaction_summary:S2", "user:" + repeated(400, 'm'),
                                   "user:" + repeated(400, 'n')});
}

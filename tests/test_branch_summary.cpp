// Branch summaries (SPEC §4.3, §8) over every storage: the abandoned entries, the budget, and
// moving with a summary.
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/storages.hpp"

#include <stdexcept>

using namespace agentcore;
using namespace agentcore::testing;
using Strings = std::vector<std::string>;

namespace {

AgentMessage edit_call(std::string id, std::string path) {
    AssistantMessage m;
    m.content.push_back(
        ToolCallContent{std::move(id), "edit", Json{{"path", std::move(path)}}, {}});
    m.stop_reason = "tool_use";
    return m;
}

std::vector<std::string> texts(const std::vector<MessageHandle>& messages) {
    std::vector<std::string> out;
    for (const auto& m : messages) out.push_back(std::string(role_of(*m)) + ":" + text_of(*m));
    return out;
}

}  // namespace

TEMPLATE_TEST_CASE("collect: the abandoned entries down to the common ancestor, oldest first",
                   "[branch]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    auto c = append_message(s, user("c"));
    move_to(s, a);
    auto d = append_message(s, assistant("d"));
    CHECK(ids(collect_entries_for_branch_summary(s, c, d)) == Strings{b, c});
    CHECK(ids(collect_entries_for_branch_summary(s, d, c)) == Strings{d});
    CHECK(ids(collect_entries_for_branch_summary(s, c, a)) ==
          Strings{b, c});                                        // back along the branch
    CHECK(collect_entries_for_branch_summary(s, a, c).empty());  // forward: nothing left behind
    CHECK(collect_entries_for_branch_summary(s, c, c).empty());
    CHECK(ids(collect_entries_for_branch_summary(s, c, std::nullopt)) ==
          Strings{a, b, c});  // before the first entry
    CHECK(collect_entries_for_branch_summary(s, std::nullopt, c).empty());
}

TEMPLATE_TEST_CASE("collect: compactions do not stop the walk, unknown ids are not_found",
                   "[branch]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, user("b"));
    auto k = append_compaction(s, "sum", b, 1);
    auto c = append_message(s, user("c"));
    CHECK(ids(collect_entries_for_branch_summary(s, c, a)) == Strings{b, k, c});
    CHECK(error_of([&] { (void)collect_entries_for_branch_summary(s, "nope", a); }) ==
          ErrorCode::not_found);
    CHECK(error_of([&] { (void)collect_entries_for_branch_summary(s, c, "nope"); }) ==
          ErrorCode::not_found);
}

TEMPLATE_TEST_CASE("prepare: summaries and messages without tool results, files from every entry",
                   "[branch]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto root = append_message(s, user("root"));
    append_message(s, user("u"));
    append_message(s, edit_call("e1", "x.cpp"));
    append_message(s, tool_result("e1", "edit", "ok"));
    append_custom_message_entry(s, "note", std::string("n"));
    append_custom_entry(s, "state", {});
    append_compaction(s, "k", std::nullopt, 1, Json{{"read_files", {"r.txt"}}});
    auto leaf = append_message(s, assistant("done"));
    move_to(s, root, BranchSummaryInput{"", Json{{"modified_files", {"m.txt"}}}, {}, false});
    auto entries = collect_entries_for_branch_summary(s, leaf, root);
    REQUIRE(entries.size() == 7);
    auto prep = prepare_branch_summary(entries);
    CHECK(texts(prep.messages) ==
          Strings{"user:u", "assistant:", "custom:n", "compaction_summary:k", "assistant:done"});
    CHECK(prep.files == FileLists{{"r.txt"}, {"x.cpp"}});
    // 1 + 5 (edit + {"path":"x.cpp"}: 20 characters) + 1 + 1 + 1
    CHECK(prep.total_tokens == 9);
}

TEMPLATE_TEST_CASE("prepare: newest first within the budget, a summary still fits under 90%",
                   "[branch]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto root = append_message(s, user("root"));
    auto first = append_message(s, user(repeated(400, 'a')));                  // 100 tokens
    move_to(s, first, BranchSummaryInput{repeated(200, 's'), {}, {}, false});  // 50 tokens
    append_message(s, user(repeated(400, 'b')));                               // 100
    auto leaf = append_message(s, user(repeated(400, 'c')));                   // 100
    auto entries = collect_entries_for_branch_summary(s, leaf, root);
    REQUIRE(entries.size() == 4);
    CHECK(prepare_branch_summary(entries, 0).messages.size() == 4);
    CHECK(prepare_branch_summary(entries, 350).total_tokens == 350);
    auto two = prepare_branch_summary(entries, 200);
    CHECK(texts(two.messages) ==
          Strings{"user:" + repeated(400, 'b'), "user:" + repeated(400, 'c')});
    // 200 of 230 used (< 90%): the summary is taken beyond the budget, then the walk ends.
    auto squeezed = prepare_branch_summary(entries, 230);
    CHECK(squeezed.messages.size() == 3);
    CHECK(squeezed.total_tokens == 250);
    // 200 of 220 used (> 90%): it is not.
    CHECK(prepare_branch_summary(entries, 220).messages.size() == 2);
    CHECK(prepare_branch_summary(entries, 50).messages.empty());
}

TEMPLATE_TEST_CASE(
    "move_to_with_summary writes the summary with files and usage and moves the leaf", "[branch]",
    AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    append_message(s, edit_call("e1", "main.cpp"));
    append_message(s, tool_result("e1", "edit", "ok"));
    append_message(s, assistant("edited"));
    BranchSummaryRequest seen;
    auto result = move_to_with_summary(s, a, [&](const BranchSummaryRequest& r) {
        seen = r;
        return SummaryResult{"tried an edit", usage(1, 2, 0, 0, 0.5)};
    });
    CHECK(result.moved);
    REQUIRE(result.summary_entry_id);
    CHECK(get_leaf_id(s) == result.summary_entry_id);
    const auto& e = std::get<BranchSummaryEntry>(*get_entry(s, *result.summary_entry_id));
    CHECK(e.summary == "tried an edit");
    CHECK(e.from_id == a);
    CHECK(parent_id_of(*get_entry(s, *result.summary_entry_id)) == a);
    CHECK(e.details.dump() == R"({"read_files":[],"modified_files":["main.cpp"]})");
    REQUIRE(e.usage);
    CHECK(get_session_stats(s).cost_total == Approx(0.5));
    CHECK(seen.entries.size() == 3);
    CHECK(seen.conversation_text ==
          "[Assistant tool calls]: edit(path=\"main.cpp\")\n\n[Assistant]: edited");
    CHECK(seen.from_leaf.has_value());
    CHECK(seen.target == a);
    CHECK(describe(build_context(s)) == Strings{"user:a", "branch_summary:tried an edit"});
}

TEMPLATE_TEST_CASE("move_to_with_summary: a cancelled summary moves nothing", "[branch]",
                   AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, user("b"));
    const auto before = s.storage().entry_count();
    auto result = move_to_with_summary(
        s, a,
        [](const BranchSummaryRequest&) -> std::optional<SummaryResult> { return std::nullopt; });
    CHECK_FALSE(result.moved);
    CHECK_FALSE(result.summary_entry_id);
    CHECK(get_leaf_id(s) == b);
    CHECK(s.storage().entry_count() == before);
}

TEMPLATE_TEST_CASE(
    "move_to_with_summary: a throwing summariser moves nothing and the exception propagates",
    "[branch]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, user("b"));
    CHECK_THROWS_AS(move_to_with_summary(s, a,
                                         [](const BranchSummaryRequest&) -> SummaryResult {
                                             throw std::runtime_error("x");
                                         }),
                    std::runtime_error);
    CHECK(get_leaf_id(s) == b);
}

TEMPLATE_TEST_CASE("move_to_with_summary: nothing to summarise or an empty summary is a plain move",
                   "[branch]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, user("b"));
    bool called = false;
    auto forward = move_to_with_summary(s, b, [&](const BranchSummaryRequest&) {
        called = true;
        return SummaryResult{"x", std::nullopt};
    });
    CHECK(forward.moved);
    CHECK_FALSE(forward.summary_entry_id);
    CHECK_FALSE(called);
    auto empty = move_to_with_summary(s, a, [](const BranchSummaryRequest&) {
        return SummaryResult{"", std::nullopt};
    });
    CHECK(empty.moved);
    CHECK_FALSE(empty.summary_entry_id);
    CHECK(get_leaf_id(s) == a);
    CHECK(s.storage().find_entries("branch_summary").empty());
}

TEMPLATE_TEST_CASE(
    "move_to_with_summary: to before the first entry, from_id is root, unknown target is not_found",
    "[branch]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    bool called = false;
    auto summarise = [&](const BranchSummaryRequest&) {
        called = true;
        return SummaryResult{"all of it", std::nullopt};
    };
    CHECK(error_of([&] { move_to_with_summary(s, std::string("nope"), summarise); }) ==
          ErrorCode::not_found);
    CHECK_FALSE(called);
    auto result = move_to_with_summary(s, std::nullopt, summarise);
    REQUIRE(result.summary_entry_id);
    const auto& e = std::get<BranchSummaryEntry>(*get_entry(s, *result.summary_entry_id));
    CHECK(e.from_id == "root");
    CHECK_FALSE(parent_id_of(*get_entry(s, *result.summary_entry_id)));
}

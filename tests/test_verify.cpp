// verify: the integrity of a whole session and its tool-call pairing.
#include "support/builders.hpp"
#include "support/catch.hpp"

using namespace agentcore;
using namespace agentcore::testing;
using Strings = std::vector<std::string>;

namespace {

template <class E>
EntryHandle make(E e, std::string id, std::optional<std::string> parent) {
    e.id = std::move(id);
    e.parent_id = std::move(parent);
    e.timestamp = "2026-12-02T07:43:23.123Z";
    return std::make_shared<const SessionTreeEntry>(std::move(e));
}

EntryHandle msg(std::string id, std::optional<std::string> parent, AgentMessage m) {
    MessageEntry e;
    e.message = std::move(m);
    return make(std::move(e), std::move(id), std::move(parent));
}

Strings kinds(const VerifyReport& r) {
    Strings out;
    for (const auto& i : r.issues) out.push_back(std::string(to_string(i.kind)) + "@" + i.entry_id);
    return out;
}

}  // namespace

TEST_CASE("a session built through the library verifies clean", "[verify]") {
    auto s = memory_session();
    auto a = append_message(s, user(std::string(400, 'a')));
    append_message(s, assistant_tool_call("c1", "read"));
    append_message(s, tool_result("c1", "read", std::string(400, 'r')));
    append_message(s, user(std::string(400, 'b')));
    append_message(s, assistant(std::string(400, 'c')));
    auto prep = prepare_compaction(s, CompactionSettings{true, 0, 150});
    REQUIRE(prep);
    REQUIRE(compact(s, *prep, [](const SummaryRequest&) { return SummaryResult{"s", std::nullopt}; }));
    append_label(s, a, std::string("start"));
    move_to(s, a, BranchSummaryInput{"elsewhere", {}, {}, false});
    append_message(s, assistant_tool_call("c2", "read"));
    append_message(s, tool_result("c2", "read", "x"));
    auto report = verify(s);
    CHECK(report.ok());
    CHECK(kinds(report).empty());
    CHECK(report.entries_checked == s.storage().entry_count());
}

TEST_CASE("verify reports duplicate ids, dangling and later parents, labels and leaves on missing entries", "[verify]") {
    LabelEntry label;
    label.target_id = "ghost";
    LeafEntry leaf;
    leaf.target_id = "ghost";
    std::vector<EntryHandle> entries{msg("a", std::nullopt, user("a")),
                                     msg("a", std::nullopt, user("again")),
                                     msg("b", std::string("missing"), user("b")),
                                     msg("c", std::string("d"), user("c")),
                                     msg("d", std::nullopt, user("d")),
                                     msg("e", std::string("e"), user("self")),
                                     make(label, "l", std::string("a")),
                                     make(leaf, "f", std::string("a"))};
    auto report = verify_entries(entries);
    CHECK_FALSE(report.ok());
    CHECK(kinds(report) == Strings{"duplicate_id@a", "dangling_parent@b", "parent_after_child@c",
                                   "parent_after_child@e", "label_target_missing@l", "leaf_target_missing@f"});
    CHECK(report.count(IssueKind::parent_after_child) == 2);
    CHECK(report.issues[0].detail == "entries 1 and 2 share the id");
    CHECK(report.issues[1].detail == "parent 'missing' does not exist");
}

TEST_CASE("verify reports a compaction whose first kept entry is missing or not an ancestor", "[verify]") {
    CompactionEntry other_branch;
    other_branch.summary = "s";
    other_branch.first_kept_entry_id = "b";
    CompactionEntry missing = other_branch;
    missing.first_kept_entry_id = "ghost";
    CompactionEntry fine = other_branch;
    fine.first_kept_entry_id = "a";
    std::vector<EntryHandle> entries{msg("a", std::nullopt, user("a")), msg("b", std::string("a"), user("b")),
                                     msg("c", std::string("a"), user("c")), make(other_branch, "k1", std::string("c")),
                                     make(missing, "k2", std::string("c")), make(fine, "k3", std::string("c"))};
    auto report = verify_entries(entries);
    CHECK(kinds(report) == Strings{"first_kept_not_ancestor@k1", "first_kept_not_ancestor@k2"});
    CHECK(report.issues[0].detail == "first kept entry 'b' is not an ancestor");
    CHECK(report.issues[1].detail == "first kept entry 'ghost' does not exist");
}

TEST_CASE("verify reports a tool result whose call is on no ancestor, once", "[verify]") {
    std::vector<EntryHandle> entries{msg("a", std::nullopt, user("a")),
                                     msg("b", std::string("a"), assistant_tool_call("c1", "read")),
                                     msg("c", std::string("a"), tool_result("c1", "read", "sibling's result")),
                                     msg("d", std::string("b"), tool_result("c1", "read", "fine")),
                                     msg("e", std::string("c"), user("tip 1")),
                                     msg("f", std::string("c"), user("tip 2")),
                                     msg("g", std::nullopt, tool_result("c9", "read", "root orphan"))};
    auto report = verify_entries(entries);
    CHECK(kinds(report) == Strings{"orphan_tool_result@c", "orphan_tool_result@g"});
    CHECK(report.issues[0].detail == "no ancestor made tool call 'c1'");
}

TEST_CASE("verify reports a tool result that a branch's context loses to a compaction", "[verify]") {
    auto s = memory_session();
    append_message(s, user("a"));
    append_message(s, assistant_tool_call("c1", "read"));
    auto u = append_message(s, user("typed while the tool ran"));
    auto r = append_message(s, tool_result("c1", "read", "late"));
    auto k = append_compaction(s, "by hand", u, 10);
    auto tip1 = append_message(s, user("one"));
    move_to(s, k);
    append_message(s, user("two"));
    auto report = verify(s);
    REQUIRE(kinds(report) == Strings{"context_orphan_tool_result@" + r});
    CHECK(report.issues[0].detail.find("lacks tool call 'c1'") != std::string::npos);
    (void)tip1;
    CHECK(to_string(IssueKind::context_orphan_tool_result) == "context_orphan_tool_result");
}

TEST_CASE("verify of an empty session is ok", "[verify]") {
    auto s = memory_session();
    CHECK(verify(s).ok());
    CHECK(verify(s).entries_checked == 0);
}

// verify: the integrity of a whole session and its tool-call pairing.
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/sizes.hpp"

#include <algorithm>
#include <random>

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

// Issues as kind@id, sorted: for comparing two reports whatever their order.
Strings sorted_kinds(const VerifyReport& r) {
    Strings out;
    for (const auto& i : r.issues) out.push_back(std::string(to_string(i.kind)) + "@" + i.entry_id);
    std::sort(out.begin(), out.end());
    return out;
}

// A random tree of tool calls and results (from a small pool of call ids, so that calls repeat,
// go missing and get compacted away), compactions with and without first kept entries and
// retained tails, leaf moves and side branches.
std::vector<EntryHandle> random_tree(std::mt19937& rng, std::size_t size) {
    std::vector<EntryHandle> entries;
    std::vector<std::optional<std::size_t>> parent;
    auto pick = [&](std::size_t bound) {
        return std::uniform_int_distribution<std::size_t>(0, bound - 1)(rng);
    };
    auto call_id = [&] { return "c" + std::to_string(pick(6)); };
    for (std::size_t i = 0; i < size; ++i) {
        std::optional<std::size_t> p;
        if (i > 0 && pick(12) != 0)
            p = pick(3) == 0 ? pick(i) : i - 1 - pick(std::min<std::size_t>(i, 3));
        const std::string id = "e" + std::to_string(i);
        const auto parent_id = p ? std::optional<std::string>(id_of(*entries[*p])) : std::nullopt;
        const std::size_t kind = pick(10);
        if (kind < 3) {
            entries.push_back(msg(id, parent_id, assistant_tool_call(call_id(), "read")));
        } else if (kind < 6) {
            entries.push_back(msg(id, parent_id, tool_result(call_id(), "read", "x")));
        } else if (kind == 6 && p) {
            CompactionEntry c;
            c.summary = "s";
            const std::size_t mode = pick(3);
            if (mode == 0) {  // a first kept entry some steps up
                std::size_t k = *p;
                for (std::size_t steps = pick(5); steps > 0 && parent[k]; --steps) k = *parent[k];
                c.first_kept_entry_id = id_of(*entries[k]);
            } else if (mode == 1) {
                c.retained_tail = std::vector<AgentMessage>{assistant_tool_call(call_id(), "read"),
                                                            tool_result(call_id(), "read", "t")};
            }
            entries.push_back(make(std::move(c), id, parent_id));
        } else if (kind == 7 && p) {
            LeafEntry l;
            l.target_id = id_of(*entries[pick(i)]);
            entries.push_back(make(std::move(l), id, parent_id));
        } else {
            entries.push_back(msg(id, parent_id, user("u")));
        }
        parent.push_back(p);
    }
    return entries;
}

// The same options with a transform that changes nothing: verify then builds every tip's context.
ContextBuildOptions per_tip() {
    ContextBuildOptions options;
    options.entry_transforms.push_back([](std::vector<EntryHandle> entries) { return entries; });
    return options;
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
    REQUIRE(compact(s, *prep, [](const SummaryRequest&) {
        return SummaryResult{"s", std::nullopt};
    }));
    append_label(s, a, std::string("start"));
    move_to(s, a, BranchSummaryInput{"elsewhere", {}, {}, false});
    append_message(s, assistant_tool_call("c2", "read"));
    append_message(s, tool_result("c2", "read", "x"));
    auto report = verify(s);
    CHECK(report.ok());
    CHECK(kinds(report).empty());
    CHECK(report.entries_checked == s.storage().entry_count());
}

TEST_CASE(
    "verify reports duplicate ids, dangling and later parents, labels and leaves on missing "
    "entries",
    "[verify]") {
    LabelEntry label;
    label.target_id = "ghost";
    LeafEntry leaf;
    leaf.target_id = "ghost";
    std::vector<EntryHandle> entries{
        msg("a", std::nullopt, user("a")),           msg("a", std::nullopt, user("again")),
        msg("b", std::string("missing"), user("b")), msg("c", std::string("d"), user("c")),
        msg("d", std::nullopt, user("d")),           msg("e", std::string("e"), user("self")),
        make(label, "l", std::string("a")),          make(leaf, "f", std::string("a"))};
    auto report = verify_entries(entries);
    CHECK_FALSE(report.ok());
    CHECK(kinds(report) == Strings{"duplicate_id@a", "dangling_parent@b", "parent_after_child@c",
                                   "parent_after_child@e", "label_target_missing@l",
                                   "leaf_target_missing@f"});
    CHECK(report.count(IssueKind::parent_after_child) == 2);
    CHECK(report.issues[0].detail == "entries 1 and 2 share the id");
    CHECK(report.issues[1].detail == "parent 'missing' does not exist");
}

TEST_CASE("verify reports a compaction whose first kept entry is missing or not an ancestor",
          "[verify]") {
    CompactionEntry other_branch;
    other_branch.summary = "s";
    other_branch.first_kept_entry_id = "b";
    CompactionEntry missing = other_branch;
    missing.first_kept_entry_id = "ghost";
    CompactionEntry fine = other_branch;
    fine.first_kept_entry_id = "a";
    std::vector<EntryHandle> entries{
        msg("a", std::nullopt, user("a")),     msg("b", std::string("a"), user("b")),
        msg("c", std::string("a"), user("c")), make(other_branch, "k1", std::string("c")),
        make(missing, "k2", std::string("c")), make(fine, "k3", std::string("c"))};
    auto report = verify_entries(entries);
    CHECK(kinds(report) == Strings{"first_kept_not_ancestor@k1", "first_kept_not_ancestor@k2"});
    CHECK(report.issues[0].detail == "first kept entry 'b' is not an ancestor");
    CHECK(report.issues[1].detail == "first kept entry 'ghost' does not exist");
}

TEST_CASE("verify reports a tool result whose call is on no ancestor, once", "[verify]") {
    std::vector<EntryHandle> entries{
        msg("a", std::nullopt, user("a")),
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

TEST_CASE("verify reports a tool result that a branch's context loses to a compaction",
          "[verify]") {
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

TEST_CASE("verify's one walk finds what building every tip's context finds", "[verify][property]") {
    std::mt19937 rng(20261202);
    std::size_t context_orphans = 0;
    const int rounds = static_cast<int>(sized(400));
    for (int round = 0; round < rounds; ++round) {
        const auto entries = random_tree(rng, 5 + static_cast<std::size_t>(round % 60));
        const auto fast = verify_entries(entries);
        const auto reference = verify_entries(entries, per_tip());
        INFO("round " << round);
        REQUIRE(sorted_kinds(fast) == sorted_kinds(reference));
        context_orphans += fast.count(IssueKind::context_orphan_tool_result);
    }
    CHECK(context_orphans > sized(50));  // the trees do exercise the context check
}

TEST_CASE("verify names the first branch whose context loses the result", "[verify]") {
    // e0 call c1 -> e1 user -> e2 result c1 -> e3 compaction keeping e1 -> e4, e5 tips.
    AssistantMessage call = std::get<AssistantMessage>(assistant_tool_call("c1", "read"));
    std::vector<EntryHandle> entries{msg("e0", std::nullopt, call), msg("e1", "e0", user("u")),
                                     msg("e2", "e1", tool_result("c1", "read", "x"))};
    CompactionEntry c;
    c.summary = "s";
    c.first_kept_entry_id = "e1";
    entries.push_back(make(std::move(c), "e3", "e2"));
    entries.push_back(msg("e4", "e3", user("one")));
    entries.push_back(msg("e5", "e3", user("two")));
    const auto report = verify_entries(entries);
    REQUIRE(kinds(report) == Strings{"context_orphan_tool_result@e2"});
    CHECK(report.issues[0].detail == "the context of branch 'e4' lacks tool call 'c1'");
}

TEST_CASE("verify checks a tree where every entry has a side branch in linear time", "[verify]") {
    // 10,000 entries on the main line, each with a side branch: 10,000 tips of average depth
    // 5,000. Building every tip's context would visit 50 million entries; the walk visits each
    // once (the benchmark prints the figures; this only has to finish).
    std::vector<EntryHandle> entries;
    std::optional<std::string> main_line;
    for (int i = 0; i < 10000; ++i) {
        const std::string id = "m" + std::to_string(i);
        entries.push_back(msg(id, main_line,
                              i % 2 == 0 ? assistant_tool_call("c" + std::to_string(i), "read")
                                         : tool_result("c" + std::to_string(i - 1), "read", "x")));
        entries.push_back(msg("s" + std::to_string(i), id, user("side")));
        main_line = id;
    }
    CompactionEntry c;
    c.summary = "s";
    c.first_kept_entry_id = "m9000";
    entries.push_back(make(std::move(c), "k", main_line));
    entries.push_back(msg("after", "k", tool_result("c8998", "read", "lost")));
    const auto report = verify_entries(entries);
    CHECK(kinds(report) == Strings{"context_orphan_tool_result@after"});
    CHECK(report.entries_checked == 20002);
}

namespace {

// A storage that counts the entries it hands out (by id, in lists, on paths): what a check reads.
class CountingStorage {
public:
    explicit CountingStorage(InMemorySessionStorage<> inner) : inner_(std::move(inner)) {}
    const SessionHeader& metadata() const { return inner_.metadata(); }
    const Environment& environment() const { return inner_.environment(); }
    std::optional<std::string> get_leaf_id() const { return inner_.get_leaf_id(); }
    void set_leaf_id(std::optional<std::string> id) { inner_.set_leaf_id(std::move(id)); }
    std::string create_entry_id() { return inner_.create_entry_id(); }
    void append_entry(SessionTreeEntry e) { inner_.append_entry(std::move(e)); }
    EntryHandle get_entry(std::string_view id) const {
        ++reads;
        return inner_.get_entry(id);
    }
    std::vector<EntryHandle> find_entries(std::string_view t) const {
        return counted(inner_.find_entries(t));
    }
    std::optional<std::string> get_label(std::string_view id) const { return inner_.get_label(id); }
    std::optional<std::string> get_session_name() const { return inner_.get_session_name(); }
    std::vector<EntryHandle> get_path_to_root_or_compaction(
        std::optional<std::string_view> from) const {
        return counted(inner_.get_path_to_root_or_compaction(from));
    }
    std::vector<EntryHandle> get_entries(EntriesQuery q) const {
        return counted(inner_.get_entries(q));
    }
    SessionStats get_session_stats() const { return inner_.get_session_stats(); }
    std::size_t entry_count() const { return inner_.entry_count(); }

    mutable std::size_t reads = 0;

private:
    std::vector<EntryHandle> counted(std::vector<EntryHandle> entries) const {
        reads += entries.size();
        return entries;
    }
    InMemorySessionStorage<> inner_;
};
static_assert(SessionStorage<CountingStorage>);

// A main line of `steps` custom entries of type "step", each with a side branch (a user message),
// and a compaction at 90 % that keeps the last tenth before it. Returns the entry count.
Session<CountingStorage> counting_session(ContextBuildOptions options = {}) {
    const MemorySession memory = memory_session();
    return Session<CountingStorage>(
        CountingStorage(InMemorySessionStorage<>(memory.storage().metadata(),
                                                 Environment::deterministic(1796197403123, 1))),
        std::move(options));
}

std::size_t fill_branchy(Session<CountingStorage>& s, std::size_t steps) {
    std::optional<std::string> previous;
    std::vector<std::string> main_line;
    for (std::size_t i = 0; i < steps; ++i) {
        if (i == steps * 9 / 10) append_compaction(s, "summary", main_line[steps * 8 / 10], 1000);
        main_line.push_back(append_custom_entry(s, "step", Json(i)));
        if (previous) {
            move_to(s, previous);
            append_message(s, i % 2 == 0 ? assistant_tool_call("c" + std::to_string(i), "read")
                                         : tool_result("c" + std::to_string(i - 1), "read", "x"));
            move_to(s, main_line.back());
        }
        previous = main_line.back();
    }
    return s.storage().entry_count();
}

}  // namespace

TEST_CASE(
    "verify reads each entry of a branchy tree and puts it into a context a bounded number of "
    "times",
    "[verify]") {
    // Every entry of the main line has a side branch, so there are as many tips as main-line
    // entries. Each main-line entry is a custom entry whose projector counts how often it is put
    // into a context; the storage counts the entries it hands out. Both must stay within a few
    // times the entry count at two sizes: building every tip's context instead (what verify once
    // did) puts the main line into a context once per tip below it, N²/2 times.
    std::size_t projected = 0;
    ContextBuildOptions counting;
    counting.entry_projectors["step"] = [&](const CustomEntry&, std::size_t,
                                            const std::vector<EntryHandle>&) {
        ++projected;
        return std::vector<AgentMessage>{};
    };
    for (const std::size_t steps : {std::size_t{500}, std::size_t{5000}}) {
        auto s = counting_session(counting);
        const std::size_t entries = fill_branchy(s, steps);
        INFO(steps << " main-line entries, " << entries << " entries");
        s.storage().reads = 0;
        projected = 0;
        const VerifyReport report = verify(s);
        CHECK(report.entries_checked == entries);
        CHECK(s.storage().reads <= 2 * entries);
        CHECK(projected <= 2 * steps);
        CHECK(projected >= steps);  // the projector does see every step
    }
    // The same count notices the per-tip way at once, even on the small tree.
    auto s = counting_session();
    const std::size_t entries = fill_branchy(s, 500);
    ContextBuildOptions per_tip_counting = counting;
    per_tip_counting.entry_transforms = per_tip().entry_transforms;
    projected = 0;
    (void)verify_entries(s.storage().get_entries(EntriesQuery{}), per_tip_counting);
    CHECK(projected > 20 * entries);
}

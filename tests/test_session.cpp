// Session operations over every storage (support/storages.hpp: memory and JSONL here, SQLite and
// PostgreSQL in their own runners): appending, the leaf, moving, paths (SPEC §4.1–§4.4,
// §4.6–§4.8) and the errors they raise (SPEC §7).
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/storages.hpp"

using namespace agentcore;
using namespace agentcore::testing;
using Strings = std::vector<std::string>;

TEMPLATE_TEST_CASE("every append creates a child of the leaf and moves the leaf to it [SPEC 4.2]",
                   "[session]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    CHECK_FALSE(get_leaf_id(s));
    auto a = append_message(s, user("hi"));
    auto b = append_message(s, assistant("hello"));
    auto c = append_thinking_level_change(s, "high");
    auto d = append_model_change(s, "openai", "gpt-5");
    auto e = append_active_tools_change(s, {"bash", "read"});
    auto f = append_custom_entry(s, "app.state", Json{{"k", 1}});
    auto g = append_custom_message_entry(s, "app.note", std::string("note"), true);
    CHECK(get_leaf_id(s) == g);
    CHECK_FALSE(parent_id_of(*get_entry(s, a)));
    CHECK(parent_id_of(*get_entry(s, b)) == a);
    CHECK(parent_id_of(*get_entry(s, c)) == b);
    CHECK(parent_id_of(*get_entry(s, d)) == c);
    CHECK(parent_id_of(*get_entry(s, e)) == d);
    CHECK(parent_id_of(*get_entry(s, f)) == e);
    CHECK(parent_id_of(*get_entry(s, g)) == f);
    CHECK(type_of(*get_entry(s, g)) == "custom_message");
}

TEMPLATE_TEST_CASE("labels and session names move the leaf like any entry [SPEC 4.2]", "[session]",
                   AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("hi"));
    auto l = append_label(s, a, std::string("start"));
    CHECK(get_leaf_id(s) == l);
    CHECK(parent_id_of(*get_entry(s, l)) == a);
    auto n = append_session_name(s, "demo");
    CHECK(get_leaf_id(s) == n);
    CHECK(parent_id_of(*get_entry(s, n)) == l);
}

TEMPLATE_TEST_CASE(
    "entry ids are 8 hex characters and timestamps come from the injected clock [SPEC 4.1]",
    "[session]", AGENTCORE_TEST_STORAGES) {
    auto s1 = fresh_session<TestType>(9);
    auto s2 = fresh_session<TestType>(9);
    auto a1 = append_message(s1, user("x"));
    auto a2 = append_message(s2, user("x"));
    CHECK(a1 == a2);
    CHECK(a1.size() == 8);
    CHECK(base_of(*get_entry(s1, a1)).timestamp == "2026-12-02T07:43:23.123Z");
    auto b1 = append_message(s1, user("y"));
    CHECK(base_of(*get_entry(s1, b1)).timestamp == "2026-12-02T07:43:23.124Z");
}

TEMPLATE_TEST_CASE("set_leaf_id appends a leaf entry even when the leaf does not change [SPEC 4.2]",
                   "[session]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    set_leaf_id(s, b);
    CHECK(get_leaf_id(s) == b);
    auto leaves = s.storage().find_entries("leaf");
    REQUIRE(leaves.size() == 1);
    const auto& leaf = std::get<LeafEntry>(*leaves[0]);
    CHECK(leaf.parent_id == b);
    CHECK(leaf.target_id == b);
    set_leaf_id(s, a);
    CHECK(get_leaf_id(s) == a);
    auto leaves2 = s.storage().find_entries("leaf");
    REQUIRE(leaves2.size() == 2);
    CHECK(std::get<LeafEntry>(*leaves2[1]).parent_id ==
          b);  // the previous leaf is the target, not the leaf entry
    set_leaf_id(s, std::nullopt);
    CHECK_FALSE(get_leaf_id(s));
    // The next append starts a new root.
    auto r = append_message(s, user("again"));
    CHECK_FALSE(parent_id_of(*get_entry(s, r)));
}

TEMPLATE_TEST_CASE("set_leaf_id of an unknown id is not_found and writes nothing [SPEC 4.2]",
                   "[session][errors]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    CHECK(error_of([&] { set_leaf_id(s, std::string("nope")); }) == ErrorCode::not_found);
    CHECK(s.storage().entry_count() == 1);
}

TEMPLATE_TEST_CASE(
    "appending a taken id is already_exists and a missing parent is invalid_entry [SPEC 4.2]",
    "[session][errors]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    MessageEntry dup;
    dup.id = a;
    dup.timestamp = "2026-12-02T00:00:00.000Z";
    dup.message = user("dup");
    CHECK(error_of([&] { append_entry(s, dup); }) == ErrorCode::already_exists);
    MessageEntry orphan;
    orphan.id = "orphan01";
    orphan.parent_id = "missing1";
    orphan.timestamp = "2026-12-02T00:00:00.000Z";
    orphan.message = user("orphan");
    CHECK(error_of([&] { append_entry(s, orphan); }) == ErrorCode::invalid_entry);
    CHECK(message_of_error([&] { append_entry(s, orphan); }).find("missing1") != std::string::npos);
    CHECK(s.storage().entry_count() == 1);
    CHECK(get_leaf_id(s) == a);
}

TEMPLATE_TEST_CASE("a leaf entry targeting a missing entry is refused [SPEC 4.2]",
                   "[session][errors]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    LeafEntry leaf;
    leaf.id = "leaf0001";
    leaf.parent_id = a;
    leaf.timestamp = "2026-12-02T00:00:00.000Z";
    leaf.target_id = "ghost123";
    CHECK(error_of([&] { append_entry(s, leaf); }) == ErrorCode::invalid_entry);
    CHECK(get_leaf_id(s) == a);
}

TEMPLATE_TEST_CASE("move_to without a summary only moves the leaf [SPEC 4.3]", "[session][move]",
                   AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    append_message(s, assistant("b"));
    auto count = s.storage().entry_count();
    auto r = move_to(s, a);
    CHECK_FALSE(r);
    CHECK(get_leaf_id(s) == a);
    CHECK(s.storage().entry_count() == count + 1);  // the leaf entry
}

TEMPLATE_TEST_CASE("move_to with a summary appends a branch summary under the target [SPEC 4.3]",
                   "[session][move]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    append_message(s, assistant("b"));
    auto r = move_to(
        s, a,
        BranchSummaryInput{"tried b", Json{{"focus", "files"}}, usage(1, 2, 3, 4, 0.5), true});
    REQUIRE(r);
    CHECK(get_leaf_id(s) == *r);
    const auto& bs = std::get<BranchSummaryEntry>(*get_entry(s, *r));
    CHECK(bs.parent_id == a);
    CHECK(bs.from_id == a);
    CHECK(bs.summary == "tried b");
    CHECK(bs.details == Json{{"focus", "files"}});
    CHECK(bs.from_hook);
    REQUIRE(bs.usage);
    CHECK(bs.usage->cache_write == 4);
}

TEMPLATE_TEST_CASE(
    "move_to(none) goes before the first entry, with a summary the summary is a root [SPEC 4.3]",
    "[session][move]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    CHECK_FALSE(move_to(s, std::nullopt));
    CHECK_FALSE(get_leaf_id(s));
    CHECK(build_context(s).messages.empty());
    auto r = move_to(s, std::nullopt, BranchSummaryInput{"from scratch", {}, {}, false});
    REQUIRE(r);
    const auto& bs = std::get<BranchSummaryEntry>(*get_entry(s, *r));
    CHECK_FALSE(bs.parent_id);
    CHECK(bs.from_id == "root");
    CHECK(get_leaf_id(s) == *r);
}

AGENTCORE_UNIT_TEST_CASE(
    "in a pi file a leaf entry hangs under its target, in a native file under the previous leaf "
    "[SPEC 4.2]",
    "[session][move][pi]") {
    ScratchDir dir;
    for (Dialect dialect : {Dialect::native, Dialect::pi}) {
        const auto path = dir.file(dialect == Dialect::pi ? "pi.jsonl" : "native.jsonl");
        auto options = jsonl_options();
        options.dialect = dialect;
        std::string a, b, to_a, to_none;
        {
            auto s = create_file_session(path, options);
            a = append_message(s, user("a"));
            b = append_message(s, assistant("b"));
            move_to(s, a);
            to_a = id_of(*s.storage().find_entries("leaf").back());
            CHECK(get_leaf_id(s) == a);
            move_to(s, std::nullopt);
            to_none = id_of(*s.storage().find_entries("leaf").back());
            CHECK_FALSE(get_leaf_id(s));
        }
        auto r = open_file_read_only(path);
        CHECK_FALSE(get_leaf_id(r));
        const auto& first_move = parent_id_of(*get_entry(r, to_a));
        const auto& second_move = parent_id_of(*get_entry(r, to_none));
        if (dialect == Dialect::pi) {
            CHECK(first_move == a);
            CHECK_FALSE(second_move);
        } else {
            CHECK(first_move == b);
            CHECK(second_move == a);
        }
        auto w = open_file_session(path);
        auto c = append_message(w, user("c"));
        CHECK(parent_id_of(*get_entry(w, c)) == std::nullopt);
        move_to(w, b);
        auto d = append_message(w, user("d"));
        CHECK(ids(get_branch(w)) == Strings{a, b, d});
    }
}

TEMPLATE_TEST_CASE("move_to an unknown entry is not_found and writes nothing [SPEC 4.3]",
                   "[session][move][errors]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    CHECK(error_of([&] {
              move_to(s, std::string("zzzzzzzz"), BranchSummaryInput{"x", {}, {}, false});
          }) == ErrorCode::not_found);
    CHECK(s.storage().entry_count() == 1);
}

TEMPLATE_TEST_CASE("the path runs oldest first from the leaf to the root [SPEC 4.4]",
                   "[session][path]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    auto c = append_message(s, user("c"));
    move_to(s, b);
    auto d = append_message(s, user("d"));
    CHECK(ids(get_branch(s)) == Strings{a, b, d});
    CHECK(ids(get_branch(s, c)) == Strings{a, b, c});
    CHECK(ids(get_path_to_root_or_compaction(s, std::string_view(b))) == Strings{a, b});
}

TEMPLATE_TEST_CASE(
    "an empty session or a leaf of none has an empty path, an unknown start is not_found [SPEC "
    "4.4]",
    "[session][path][errors]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    CHECK(get_branch(s).empty());
    append_message(s, user("a"));
    move_to(s, std::nullopt);
    CHECK(get_branch(s).empty());
    CHECK(error_of([&] { get_branch(s, "unknown0"); }) == ErrorCode::not_found);
}

TEMPLATE_TEST_CASE(
    "the path stops at a compaction with a retained tail, even an empty one [SPEC 4.4]",
    "[session][path]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    append_message(s, assistant("b"));
    auto c =
        append_compaction(s, "sum", a, 100, {}, false, std::nullopt, std::vector<AgentMessage>{});
    auto d = append_message(s, user("d"));
    CHECK(ids(get_branch(s)) == Strings{c, d});
}

TEMPLATE_TEST_CASE(
    "the path stops at the first kept entry of a compaction met on the way [SPEC 4.4]",
    "[session][path]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    auto c = append_message(s, user("c"));
    auto k = append_compaction(s, "sum", c, 100);
    auto d = append_message(s, user("d"));
    CHECK(ids(get_branch(s)) == Strings{c, k, d});
    (void)b;
}

TEMPLATE_TEST_CASE(
    "a compaction without tail or first kept entry does not stop the walk [SPEC 4.4]",
    "[session][path]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto k = append_compaction(s, "sum", std::nullopt, 100);
    auto d = append_message(s, user("d"));
    CHECK(ids(get_branch(s)) == Strings{a, k, d});
}

TEMPLATE_TEST_CASE(
    "the newest compaction decides where the path starts: an older one's first kept entry does not "
    "stop the walk [SPEC 4.4]",
    "[session][path][compaction]", AGENTCORE_TEST_STORAGES) {
    // The shape pi's prepareCompaction writes when the user compacts twice in a row: the second
    // compaction keeps from an entry that lies before the first one's first kept entry.
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    auto c = append_message(s, user("c"));
    auto d = append_message(s, assistant("d"));
    auto k1 = append_compaction(s, "one", c, 100);
    auto e = append_message(s, user("e"));
    auto k2 = append_compaction(s, "two", b, 200);
    auto f = append_message(s, user("f"));
    CHECK(ids(get_branch(s)) == Strings{b, c, d, k1, e, k2, f});
    // From an entry before the newest compaction, the older one governs again.
    CHECK(ids(get_branch(s, e)) == Strings{c, d, k1, e});
}

TEMPLATE_TEST_CASE(
    "an older compaction with a retained tail inside the newest's kept range does not stop the "
    "walk [SPEC 4.4]",
    "[session][path][compaction]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    auto k1 = append_compaction(s, "one", std::nullopt, 100, {}, false, std::nullopt,
                                std::vector<AgentMessage>{});
    auto c = append_message(s, user("c"));
    auto k2 = append_compaction(s, "two", a, 200);
    CHECK(ids(get_branch(s)) == Strings{a, b, k1, c, k2});
    CHECK(ids(get_branch(s, c)) == Strings{k1, c});
}

AGENTCORE_UNIT_TEST_CASE(
    "a parent that does not exist is invalid_session naming both ids [SPEC 4.4]",
    "[session][path][errors]") {
    // A custom storage whose data is broken: the walk must detect the missing parent.
    InMemorySessionStorage<> storage;
    MessageEntry e;
    e.id = "child001";
    e.timestamp = "2026-12-02T00:00:00.000Z";
    e.message = user("x");
    storage.append_entry(e);
    std::vector<EntryHandle> broken;
    MessageEntry child = e;
    child.parent_id = "ghost001";
    auto handle = std::make_shared<const SessionTreeEntry>(child);
    auto msg = message_of_error([&] {
        agentcore::detail::walk_to_root_or_compaction(
            std::string_view("child001"), 1, [&](std::string_view id) -> EntryHandle {
                return id == "child001" ? handle : nullptr;
            });
    });
    CHECK(msg.find("invalid_session") != std::string::npos);
    CHECK(msg.find("child001") != std::string::npos);
    CHECK(msg.find("ghost001") != std::string::npos);
}

AGENTCORE_UNIT_TEST_CASE(
    "a parent cycle cannot hang the walk: it is bounded by the entry count [SPEC 6]",
    "[session][path][errors]") {
    MessageEntry a;
    a.id = "aaaaaaaa";
    a.parent_id = "bbbbbbbb";
    MessageEntry b;
    b.id = "bbbbbbbb";
    b.parent_id = "aaaaaaaa";
    auto ha = std::make_shared<const SessionTreeEntry>(a);
    auto hb = std::make_shared<const SessionTreeEntry>(b);
    auto code = error_of([&] {
        agentcore::detail::walk_to_root_or_compaction(
            std::string_view("aaaaaaaa"), 2,
            [&](std::string_view id) -> EntryHandle { return id == "aaaaaaaa" ? ha : hb; });
    });
    CHECK(code == ErrorCode::invalid_session);
}

TEMPLATE_TEST_CASE(
    "labels are trimmed, the newest wins across branches, and empty clears [SPEC 4.6]",
    "[session][labels]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    CHECK_FALSE(get_label(s, a));
    append_label(s, a, std::string("  first  "));
    CHECK(get_label(s, a) == "first");
    move_to(s, a);
    append_label(s, a, std::string("second"));
    CHECK(get_label(s, a) == "second");
    append_label(s, a, std::string("   "));
    CHECK_FALSE(get_label(s, a));
    append_label(s, a, std::string("third"));
    append_label(s, a, std::nullopt);
    CHECK_FALSE(get_label(s, a));
    auto cleared = s.storage().find_entries("label");
    CHECK_FALSE(std::get<LabelEntry>(*cleared.back()).label);
}

TEMPLATE_TEST_CASE("labelling an unknown entry is not_found [SPEC 4.6]",
                   "[session][labels][errors]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    CHECK(error_of([&] { append_label(s, "missing0", std::string("x")); }) == ErrorCode::not_found);
    CHECK(s.storage().entry_count() == 0);
}

TEMPLATE_TEST_CASE("session names fold CR/LF runs into one space and are trimmed [SPEC 4.6]",
                   "[session][name]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    CHECK_FALSE(get_session_name(s));
    auto id = append_session_name(s, "  fix\r\n\r\nthe\nbuild\r ");
    CHECK(std::get<SessionInfoEntry>(*get_entry(s, id)).name == "fix the build");
    CHECK(get_session_name(s) == "fix the build");
    append_session_name(s, "renamed");
    CHECK(get_session_name(s) == "renamed");
    append_session_name(s, " \n ");
    CHECK_FALSE(get_session_name(s));
}

TEMPLATE_TEST_CASE("stats add usage of assistants, compactions and branch summaries [SPEC 4.7]",
                   "[session][stats]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto u = append_message(s, user("q"));
    append_message(s, assistant("a", "anthropic", "claude", usage(10, 20, 30, 40, 1.0)));
    append_compaction(s, "sum", u, 50, {}, false, usage(1, 2, 3, 4, 0.1));
    move_to(s, u, BranchSummaryInput{"b", {}, usage(5, 6, 7, 8, 0.26), false});
    auto st = get_session_stats(s);
    CHECK(st.message_count == 2);  // the user and the assistant message
    CHECK(st.cached_tokens == 40);
    CHECK(st.uncached_tokens == 68);
    CHECK(st.total_tokens == 136);
    CHECK(st.cost_total == Approx(1.36));
}

TEMPLATE_TEST_CASE(
    "the worked stats example: 1 message, 40 cached, 68 uncached, 136 total, 1.36 [SPEC 4.7]",
    "[session][stats]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto m = append_message(s, assistant("a", "p", "m", usage(10, 20, 30, 40, 1.0)));
    append_compaction(s, "sum", std::nullopt, 50, {}, false, usage(1, 2, 3, 4, 0.1));
    move_to(s, m, BranchSummaryInput{"b", {}, usage(5, 6, 7, 8, 0.26), false});
    auto st = get_session_stats(s);
    CHECK(st.message_count == 1);
    CHECK(st.cached_tokens == 40);
    CHECK(st.uncached_tokens == 68);
    CHECK(st.total_tokens == 136);
    CHECK(st.cost_total == Approx(1.36));
}

TEMPLATE_TEST_CASE("queries: get_entry, find_entries in append order, paged get_entries [SPEC 4.8]",
                   "[session][queries]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto t = append_thinking_level_change(s, "low");
    auto b = append_message(s, assistant("b"));
    move_to(s, a);
    auto c = append_message(s, user("c"));
    CHECK(get_entry(s, "nothere0") == nullptr);
    CHECK(ids(s.storage().find_entries("message")) == Strings{a, b, c});
    CHECK(s.storage().find_entries("compaction").empty());
    auto all = s.storage().get_entries({});
    CHECK(all.size() == 5);
    CHECK(ids(s.storage().get_entries({1, 2})) == Strings{t, b});
    CHECK(s.storage().get_entries({10, 2}).empty());
    CHECK(ids(s.storage().get_entries({4, 100})) == Strings{c});
}

TEMPLATE_TEST_CASE("reads share entries instead of copying them [SPEC 5]", "[session][queries]",
                   AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user(std::string(1000, 'x')));
    auto h1 = get_entry(s, a);
    auto h2 = get_entry(s, a);
    CHECK(h1.get() == h2.get());
    auto ctx = build_context(s);
    REQUIRE(ctx.messages.size() == 1);
    CHECK(ctx.messages[0].get() == &std::get<MessageEntry>(*h1).message);
}

TEMPLATE_TEST_CASE("compaction with an unknown first kept entry is not_found [SPEC 7]",
                   "[session][errors]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    CHECK(error_of([&] { append_compaction(s, "x", std::string("ghost000"), 1); }) ==
          ErrorCode::not_found);
    CHECK(s.storage().entry_count() == 1);
}

TEMPLATE_TEST_CASE(
    "unknown entry types are nodes of the tree that add nothing to the context [SPEC 2.3]",
    "[session]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    UnknownEntry u;
    u.id = "future01";
    u.parent_id = a;
    u.timestamp = "2026-12-02T00:00:00.000Z";
    u.type = "future_thing";
    u.raw = Json{{"type", "future_thing"}, {"id", "future01"}, {"parent_id", a}, {"x", 1}};
    append_entry(s, u);
    CHECK(get_leaf_id(s) == "future01");
    auto b = append_message(s, assistant("b"));
    CHECK(ids(get_branch(s)) == Strings{a, "future01", b});
    CHECK(describe(build_context(s)) == Strings{"user:a", "assistant:b"});
    CHECK(s.storage().find_entries("future_thing").size() == 1);
}

// Negative concept checks: a type missing any required expression does not model the concept.
namespace {
struct NotAStorage {};
struct AlmostStorage {
    const SessionHeader& metadata() const;
    const Environment& environment() const;
    std::optional<std::string> get_leaf_id() const;
    void set_leaf_id(std::optional<std::string>);
    std::string create_entry_id();
    void append_entry(SessionTreeEntry);
    EntryHandle get_entry(std::string_view) const;
    std::vector<EntryHandle> find_entries(std::string_view) const;
    std::optional<std::string> get_label(std::string_view) const;
    std::optional<std::string> get_session_name() const;
    std::vector<EntryHandle> get_path_to_root_or_compaction(std::optional<std::string_view>) const;
    std::vector<EntryHandle> get_entries(EntriesQuery) const;
    // get_session_stats is missing
    std::size_t entry_count() const;
};
struct CopyingStorage : AlmostStorage {
    SessionStats get_session_stats() const;
    // returns entries by value instead of handles: not a storage
    SessionTreeEntry get_entry(std::string_view) const;
};
struct CompleteStorage : AlmostStorage {
    SessionStats get_session_stats() const;
};
}  // namespace

static_assert(!SessionStorage<NotAStorage>);
static_assert(!SessionStorage<AlmostStorage>);
static_assert(!SessionStorage<CopyingStorage>);
static_assert(SessionStorage<CompleteStorage>);
static_assert(SessionStorage<InMemorySessionStorage<>>);

namespace {
struct AppMetadata : SessionHeader {
    std::string tenant;
};
}  // namespace
static_assert(SessionStorage<InMemorySessionStorage<AppMetadata>>);

AGENTCORE_UNIT_TEST_CASE("a storage with application metadata works with every operation [SPEC 5]",
                         "[session]") {
    AppMetadata meta;
    meta.id = "s1";
    meta.tenant = "acme";
    Session<InMemorySessionStorage<AppMetadata>> s{InMemorySessionStorage<AppMetadata>(meta)};
    append_message(s, user("hi"));
    CHECK(s.storage().metadata().tenant == "acme");
    CHECK(describe(build_context(s)) == Strings{"user:hi"});
}

AGENTCORE_UNIT_TEST_CASE("SessionError carries its code in what() [SPEC 7]", "[errors]") {
    SessionError e(ErrorCode::locked, "file 'x.jsonl' is locked");
    CHECK(e.code() == ErrorCode::locked);
    CHECK(std::string(e.what()) == "[agentcore.locked] file 'x.jsonl' is locked");
    CHECK(to_string(ErrorCode::invalid_fork_target) == "invalid_fork_target");
    CHECK(to_string(ErrorCode::storage) == "storage");
    CHECK(to_string(ErrorCode::already_exists) == "already_exists");
}

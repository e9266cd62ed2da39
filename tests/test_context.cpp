// Building the context (SPEC §4.5), over every storage (support/storages.hpp).
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/storages.hpp"

using namespace agentcore;
using namespace agentcore::testing;
using Strings = std::vector<std::string>;

TEMPLATE_TEST_CASE("a path without compaction becomes its messages in order [SPEC 4.5]",
                   "[context]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    append_thinking_level_change(s, "high");
    append_message(s, assistant("b"));
    append_custom_entry(s, "ignored", Json{{"x", 1}});
    append_label(s, *get_leaf_id(s), std::string("l"));
    append_session_name(s, "n");
    append_message(s, user("c"));
    auto ctx = build_context(s);
    CHECK(describe(ctx) == Strings{"user:a", "assistant:b", "user:c"});
}

TEMPLATE_TEST_CASE("state comes from the path: thinking level, model, tools [SPEC 4.5]",
                   "[context]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto ctx0 = build_context(s);
    CHECK(ctx0.thinking_level == "off");
    CHECK_FALSE(ctx0.model);
    CHECK_FALSE(ctx0.active_tool_names);

    auto u = append_message(s, user("a"));
    append_thinking_level_change(s, "medium");
    append_model_change(s, "openai", "gpt-5");
    append_active_tools_change(s, {"read"});
    auto ctx1 = build_context(s);
    CHECK(ctx1.thinking_level == "medium");
    CHECK(ctx1.model == ModelRef{"openai", "gpt-5"});
    CHECK(ctx1.active_tool_names == Strings{"read"});

    append_message(s, assistant("b", "anthropic", "claude-x"));
    CHECK(build_context(s).model == ModelRef{"anthropic", "claude-x"});
    append_active_tools_change(s, {});
    CHECK(build_context(s).active_tool_names == Strings{});

    move_to(s, u);
    auto ctx2 = build_context(s);
    CHECK(ctx2.thinking_level == "off");
    CHECK_FALSE(ctx2.model);
}

TEMPLATE_TEST_CASE(
    "state is taken from the untransformed path, before the compaction too [SPEC 4.5]", "[context]",
    AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_thinking_level_change(s, "high");
    auto a = append_message(s, user("a"));
    append_message(s, assistant("b"));
    append_compaction(s, "sum", std::nullopt, 10);
    append_message(s, user("c"));
    auto ctx = build_context(s);
    CHECK(ctx.thinking_level == "high");
    CHECK(describe(ctx) == Strings{"compaction_summary:sum", "user:c"});
    (void)a;
}

namespace {

// Settings chosen, then a conversation compacted past them (the first kept entry is `c`), then a
// side branch from before the compaction that changes the model.
template <class S>
std::vector<std::string> fill_settings_then_compact(S& s) {
    append_thinking_level_change(s, "high");
    append_model_change(s, "openai", "gpt-5");
    append_active_tools_change(s, {"read", "bash"});
    auto a = append_message(s, user("a"));
    append_message(s, assistant("b", "anthropic", "claude-x"));
    auto c = append_message(s, user("c"));
    append_compaction(s, "sum", c, 100);
    auto e = append_message(s, user("e"));
    move_to(s, a);
    append_model_change(s, "google", "gemini");
    auto side = append_message(s, user("side"));
    move_to(s, e);
    return {a, c, e, side};
}

std::string state_of(const SessionContext& ctx) {
    std::string out = ctx.thinking_level + " ";
    out += ctx.model ? ctx.model->provider + "/" + ctx.model->model_id : std::string("none");
    out += " ";
    if (!ctx.active_tool_names) return out + "none";
    for (const auto& t : *ctx.active_tool_names) out += t + ",";
    return out;
}

// A storage that does not keep the state entries: build_context walks the ancestry itself.
class PlainStorage {
public:
    explicit PlainStorage(InMemorySessionStorage<> inner) : inner_(std::move(inner)) {}
    const SessionHeader& metadata() const { return inner_.metadata(); }
    const Environment& environment() const { return inner_.environment(); }
    std::optional<std::string> get_leaf_id() const { return inner_.get_leaf_id(); }
    void set_leaf_id(std::optional<std::string> id) { inner_.set_leaf_id(std::move(id)); }
    std::string create_entry_id() { return inner_.create_entry_id(); }
    void append_entry(SessionTreeEntry e) { inner_.append_entry(std::move(e)); }
    EntryHandle get_entry(std::string_view id) const { return inner_.get_entry(id); }
    std::vector<EntryHandle> find_entries(std::string_view t) const {
        return inner_.find_entries(t);
    }
    std::optional<std::string> get_label(std::string_view id) const { return inner_.get_label(id); }
    std::optional<std::string> get_session_name() const { return inner_.get_session_name(); }
    std::vector<EntryHandle> get_path_to_root_or_compaction(
        std::optional<std::string_view> start) const {
        return inner_.get_path_to_root_or_compaction(start);
    }
    std::vector<EntryHandle> get_entries(EntriesQuery q) const { return inner_.get_entries(q); }
    SessionStats get_session_stats() const { return inner_.get_session_stats(); }
    std::size_t entry_count() const { return inner_.entry_count(); }

private:
    InMemorySessionStorage<> inner_;
};
static_assert(SessionStorage<PlainStorage> && !has_state_entries<PlainStorage>);

}  // namespace

TEMPLATE_TEST_CASE(
    "state comes from the whole ancestry: settings chosen before a compaction's first kept entry "
    "survive it [SPEC 4.5]",
    "[context][compaction][state]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    const auto ids = fill_settings_then_compact(s);
    const SessionContext ctx = build_context(s);
    CHECK(describe(ctx) == Strings{"compaction_summary:sum", "user:c", "user:e"});
    CHECK(state_of(ctx) == "high anthropic/claude-x read,bash,");
    // The path alone (what build_session_context sees) lacks them.
    CHECK(state_of(build_session_context(get_branch(s))) == "off none none");
    CHECK(state_of(build_context_at(s, ids[3])) == "high google/gemini read,bash,");
    CHECK(state_of(build_context_at(s, ids[0])) == "high openai/gpt-5 read,bash,");
    CHECK(state_of(build_context_at(s, std::nullopt)) == "off none none");
    CHECK(error_of([&] { build_context_at(s, std::string_view("ghost000")); }) ==
          ErrorCode::not_found);
}

TEMPLATE_TEST_CASE(
    "every storage gives the same state: memory, JSONL in both dialects, reopened, and a storage "
    "that keeps none [SPEC 4.5]",
    "[context][state][jsonl]", AGENTCORE_TEST_STORAGES) {
    auto memory = fresh_session<TestType>();
    const auto ids = fill_settings_then_compact(memory);
    std::vector<std::string> expected;
    for (const auto& id : ids)
        expected.push_back(state_of(build_context_at(memory, std::string_view(id))));
    expected.push_back(state_of(build_context(memory)));
    auto states = [&](const auto& session) {
        std::vector<std::string> out;
        for (const auto& id : ids)
            out.push_back(state_of(build_context_at(session, std::string_view(id))));
        out.push_back(state_of(build_context(session)));
        return out;
    };
    Session<PlainStorage> plain(
        PlainStorage(InMemorySessionStorage<>(test_header(), Environment::deterministic(t0, 1))));
    fill_settings_then_compact(plain);
    CHECK(states(plain) == expected);

    ScratchDir dir;
    for (Dialect dialect : {Dialect::native, Dialect::pi}) {
        const auto path = dir.file(dialect == Dialect::pi ? "pi.jsonl" : "native.jsonl");
        auto options = jsonl_options();
        options.dialect = dialect;
        {
            auto file = create_file_session(path, options);
            fill_settings_then_compact(file);
            CHECK(states(file) == expected);
        }
        CHECK(states(open_file_read_only(path)) == expected);
        options.decoded_cache_bytes = 0;  // every state entry decoded again from the file
        CHECK(states(open_file_session(path, options)) == expected);
    }
}

TEMPLATE_TEST_CASE("a compaction with a retained tail: summary, tail, then what follows [SPEC 4.5]",
                   "[context][compaction]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    append_message(s, assistant("b"));
    append_message(s, user("c"));
    append_message(s, assistant("d"));
    append_compaction(s, "ab summarised", a, 5000, Json{{"n", 2}}, false, std::nullopt,
                      std::vector<AgentMessage>{user("c"), assistant("d")});
    append_message(s, user("e"));
    auto ctx = build_context(s);
    CHECK(describe(ctx) ==
          Strings{"compaction_summary:ab summarised", "user:c", "assistant:d", "user:e"});
    const auto& summary = std::get<CompactionSummaryMessage>(*ctx.messages[0]);
    CHECK(summary.tokens_before == 5000);
}

TEMPLATE_TEST_CASE(
    "a compaction with a first kept entry: summary, kept entries, then what follows [SPEC 4.5]",
    "[context][compaction]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    append_message(s, assistant("b"));
    auto c = append_message(s, user("c"));
    append_message(s, assistant("d"));
    append_compaction(s, "ab", c, 100);
    append_message(s, user("e"));
    CHECK(describe(build_context(s)) ==
          Strings{"compaction_summary:ab", "user:c", "assistant:d", "user:e"});
}

TEMPLATE_TEST_CASE(
    "a compaction with neither tail nor first kept entry keeps only what follows [SPEC 4.5]",
    "[context][compaction]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    append_compaction(s, "all", std::nullopt, 100);
    append_message(s, user("b"));
    CHECK(describe(build_context(s)) == Strings{"compaction_summary:all", "user:b"});
}

TEMPLATE_TEST_CASE("two compactions on one path: the newest governs [SPEC 4.5]",
                   "[context][compaction]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    append_message(s, assistant("b"));
    append_compaction(s, "first", std::nullopt, 100);
    auto c = append_message(s, user("c"));
    append_message(s, assistant("d"));
    append_compaction(s, "second", c, 200);
    append_message(s, user("e"));
    // The path stops at c (first kept of the newest); the older compaction is not on it.
    CHECK(describe(build_context(s)) ==
          Strings{"compaction_summary:second", "user:c", "assistant:d", "user:e"});
    (void)a;
}

TEMPLATE_TEST_CASE(
    "two compactions where the older lies inside the kept range: only the newest summary [SPEC "
    "4.5]",
    "[context][compaction]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    append_compaction(s, "old", std::nullopt, 100);
    append_message(s, user("b"));
    append_compaction(s, "new", a, 200);
    append_message(s, user("c"));
    auto ctx = build_context(s);
    CHECK(describe(ctx) == Strings{"compaction_summary:new", "user:a", "user:b", "user:c"});
}

TEMPLATE_TEST_CASE(
    "compacting twice in a row as pi does: the second keeps from before the first's first kept "
    "entry [SPEC 4.5]",
    "[context][compaction]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    auto c = append_message(s, user("c"));
    append_message(s, assistant("d"));
    append_compaction(s, "one", c, 100);
    append_message(s, user("e"));
    append_compaction(s, "two", b, 200);
    append_message(s, user("f"));
    CHECK(describe(build_context(s)) == Strings{"compaction_summary:two", "assistant:b", "user:c",
                                                "assistant:d", "user:e", "user:f"});
}

TEMPLATE_TEST_CASE(
    "an older compaction's retained tail inside the newest's kept range adds nothing [SPEC 4.5]",
    "[context][compaction]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    append_compaction(s, "old", std::nullopt, 100, {}, false, std::nullopt,
                      std::vector<AgentMessage>{user("tail")});
    append_message(s, user("b"));
    append_compaction(s, "new", a, 200);
    CHECK(describe(build_context(s)) == Strings{"compaction_summary:new", "user:a", "user:b"});
}

TEMPLATE_TEST_CASE("an empty branch summary adds no message, a non-empty one does [SPEC 4.5]",
                   "[context]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    append_message(s, assistant("b"));
    move_to(s, a, BranchSummaryInput{"", {}, {}, false});
    append_message(s, user("c"));
    CHECK(describe(build_context(s)) == Strings{"user:a", "user:c"});
    move_to(s, a, BranchSummaryInput{"went elsewhere", {}, {}, false});
    auto ctx = build_context(s);
    CHECK(describe(ctx) == Strings{"user:a", "branch_summary:went elsewhere"});
    CHECK(std::get<BranchSummaryMessage>(*ctx.messages[1]).from_id == a);
}

TEMPLATE_TEST_CASE(
    "custom message entries become custom messages with the entry's time in ms [SPEC 4.5]",
    "[context]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto id = append_custom_message_entry(s, "app.note", std::string("remember"), false,
                                          Json{{"k", "v"}});
    auto ctx = build_context(s);
    REQUIRE(ctx.messages.size() == 1);
    const auto& m = std::get<CustomMessage>(*ctx.messages[0]);
    CHECK(m.custom_type == "app.note");
    CHECK(std::get<std::string>(m.content) == "remember");
    CHECK_FALSE(m.display);
    CHECK(m.details == Json{{"k", "v"}});
    std::int64_t ms = 0;
    REQUIRE(parse_timestamp(base_of(*get_entry(s, id)).timestamp, ms));
    CHECK(m.timestamp == ms);
    CHECK(m.timestamp == 1796197403123);
}

TEMPLATE_TEST_CASE("synthesised summaries take the entry's timestamp in Unix ms [SPEC 4.5]",
                   "[context]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    auto a = append_message(s, user("a"));
    auto k = append_compaction(s, "sum", a, 7);
    auto ctx = build_context(s);
    std::int64_t ms = 0;
    REQUIRE(parse_timestamp(base_of(*get_entry(s, k)).timestamp, ms));
    CHECK(timestamp_of(*ctx.messages[0]) == ms);
}

TEMPLATE_TEST_CASE(
    "custom entries are projected by the registered projector, otherwise dropped [SPEC 4.5]",
    "[context]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    append_custom_entry(s, "todo", Json{{"items", 2}});
    append_custom_entry(s, "other", Json{});
    ContextBuildOptions opts;
    std::size_t seen_index = 99;
    opts.entry_projectors["todo"] = [&](const CustomEntry& e, std::size_t index,
                                        const std::vector<EntryHandle>& all) {
        seen_index = index;
        CHECK(all.size() == 3);
        return std::vector<AgentMessage>{user("todo items: " + e.data["items"].dump())};
    };
    CHECK(describe(build_context(s)) == Strings{"user:a"});
    CHECK(describe(build_context(s, opts)) == Strings{"user:a", "user:todo items: 2"});
    CHECK(seen_index == 1);
}

TEMPLATE_TEST_CASE(
    "the call's projector wins over the session's, transforms run session first [SPEC 4.5]",
    "[context]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    append_custom_entry(s, "todo", {});
    std::vector<std::string> order;
    s.context_build_options().entry_projectors["todo"] = [](const CustomEntry&, std::size_t,
                                                            const std::vector<EntryHandle>&) {
        return std::vector<AgentMessage>{user("session")};
    };
    s.context_build_options().entry_transforms.push_back([&](std::vector<EntryHandle> e) {
        order.push_back("session");
        return e;
    });
    CHECK(describe(build_context(s)) == Strings{"user:a", "user:session"});
    ContextBuildOptions call;
    call.entry_projectors["todo"] = [](const CustomEntry&, std::size_t,
                                       const std::vector<EntryHandle>&) {
        return std::vector<AgentMessage>{user("call")};
    };
    call.entry_transforms.push_back([&](std::vector<EntryHandle> e) {
        order.push_back("call");
        return e;
    });
    order.clear();
    CHECK(describe(build_context(s, call)) == Strings{"user:a", "user:call"});
    CHECK(order == Strings{"session", "call"});
    auto merged = merge_context_build_options(s, call);
    CHECK(merged.entry_transforms.size() == 2);
    CHECK(merged.entry_projectors.size() == 1);
}

TEMPLATE_TEST_CASE("entry transforms run after the default compaction transform [SPEC 4.5]",
                   "[context]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    append_compaction(s, "sum", std::nullopt, 10);
    append_message(s, user("b"));
    append_message(s, user("c"));
    ContextBuildOptions opts;
    opts.entry_transforms.push_back([](std::vector<EntryHandle> e) {
        CHECK(type_of(*e.front()) == "compaction");
        e.pop_back();
        return e;
    });
    CHECK(describe(build_context(s, opts)) == Strings{"compaction_summary:sum", "user:b"});
    CHECK(build_context_entries(s, opts).size() == 2);
}

TEMPLATE_TEST_CASE(
    "build_session_context and session_entry_to_context_messages work on plain entry lists [SPEC "
    "4.5]",
    "[context]", AGENTCORE_TEST_STORAGES) {
    auto s = fresh_session<TestType>();
    append_message(s, user("a"));
    auto k = append_compaction(s, "sum", std::nullopt, 3, {}, false, std::nullopt,
                               std::vector<AgentMessage>{user("t")});
    auto path = get_branch(s);
    auto msgs = session_entry_to_context_messages(get_entry(s, k), 0, path);
    REQUIRE(msgs.size() == 2);
    CHECK(role_of(*msgs[0]) == "compaction_summary");
    CHECK(text_of(*msgs[1]) == "t");
    CHECK(describe(build_session_context(path)) == Strings{"compaction_summary:sum", "user:t"});
    CHECK(default_context_entry_transform(path).size() == 1);
    CHECK(build_context_at(s, std::nullopt).messages.empty());
}

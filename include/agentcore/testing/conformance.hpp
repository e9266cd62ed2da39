#pragma once
// The conformance kit: every promise of SPEC §4 and §5 checked against a repository and the
// storage it opens, for the built-in storages and for an application's own.
//
// It needs no test framework: run_conformance returns a report (and calls a callback for each
// failure), so Catch2, GoogleTest or a plain main can run it:
//
//     agentcore::testing::ConformanceTarget<MyRepo> target;
//     target.fresh = [] { return MyRepo(...); };              // a new, empty repository
//     target.reopen = [](MyRepo& r) { return MyRepo(...); };  // the same store again (persistent)
//     auto report = agentcore::testing::run_conformance(target);
//     REQUIRE(report.failures.empty());                       // or: if (!report.ok()) ...
//
// Each check gets a fresh repository, so checks are independent. A check that throws counts as
// one failure naming the exception.

#include <agentcore/codec.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/repo.hpp>
#include <agentcore/session_ops.hpp>
#include <agentcore/storage.hpp>

#include <cmath>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace agentcore::testing {

/// One broken promise: which check, and what it saw.
struct ConformanceFailure {
    std::string check;
    std::string message;
};

/// What run_conformance found.
struct ConformanceReport {
    std::vector<std::string> checks;  ///< every check that ran, in order
    std::vector<ConformanceFailure> failures;
    [[nodiscard]] bool ok() const noexcept { return failures.empty(); }
    /// One line per failure, "check: message".
    [[nodiscard]] std::string summary() const {
        std::string out;
        for (const auto& f : failures) out += f.check + ": " + f.message + "\n";
        return out;
    }
};

/// The repository under test.
template <SessionRepository R>
struct ConformanceTarget {
    /// A new, empty repository (required).
    std::function<R()> fresh;
    /// A second repository over the same store as the one given, as a later run of the program
    /// would open it; empty for storages that do not persist (the reopening checks are skipped).
    std::function<R(R&)> reopen;
    /// True when a second open for writing of the same session must fail with `locked`.
    bool exclusive_writers = false;
};

namespace conformance_detail {

class Checker {
public:
    Checker(ConformanceReport& report, std::string name,
            const std::function<void(const ConformanceFailure&)>& cb)
        : report_(report), name_(std::move(name)), callback_(cb) {}

    void check(bool ok, const std::string& what) {
        if (!ok) fail(what);
    }
    void fail(const std::string& what) {
        ConformanceFailure f{name_, what};
        if (callback_) callback_(f);
        report_.failures.push_back(std::move(f));
    }
    template <class F>
    void expect_error(ErrorCode code, F&& f, const std::string& what) {
        try {
            f();
            fail(what + ": no error, expected " + std::string(agentcore::to_string(code)));
        } catch (const SessionError& e) {
            if (e.code() != code)
                fail(what + ": " + std::string(agentcore::to_string(e.code())) + " (" + e.what() +
                     "), expected " + std::string(agentcore::to_string(code)));
        }
    }

private:
    ConformanceReport& report_;
    std::string name_;
    const std::function<void(const ConformanceFailure&)>& callback_;
};

inline Usage usage_of(std::int64_t input, std::int64_t output, std::int64_t cache_read,
                      std::int64_t cache_write, double cost) {
    Usage u;
    u.input = input;
    u.output = output;
    u.cache_read = cache_read;
    u.cache_write = cache_write;
    u.total_tokens = input + output + cache_read + cache_write;
    u.cost.total = cost;
    return u;
}

inline AgentMessage user_text(std::string text) { return UserMessage{std::move(text), 1000, {}}; }

inline AgentMessage assistant_text(std::string text, const Usage& u = {}) {
    AssistantMessage m;
    m.content.emplace_back(TextContent{std::move(text), {}});
    m.api = "messages";
    m.provider = "anthropic";
    m.model = "claude";
    m.usage = u;
    m.timestamp = 2000;
    return m;
}

inline std::string json_of(const EntryHandle& e) {
    return e ? encode_entry(*e, Dialect::native) : "null";
}

inline std::vector<std::string> ids_of(const std::vector<EntryHandle>& entries) {
    std::vector<std::string> out;
    out.reserve(entries.size());
    for (const auto& e : entries) out.push_back(e ? id_of(*e) : "<null>");
    return out;
}

inline std::string joined(const std::vector<std::string>& ids) {
    std::string out = "[";
    for (const auto& id : ids) out += (out.size() > 1 ? "," : "") + id;
    return out + "]";
}

inline CreateOptions named(std::string id, std::string cwd = "/work") {
    CreateOptions o;
    o.id = std::move(id);
    o.cwd = std::move(cwd);
    return o;
}

// The settings of a session filled by fill_settings_then_compact: the thinking level given, the
// model and tools chosen before the compactions' first kept entries.
template <class SessionT>
void expect_settings(Checker& c, const SessionT& s, const std::string& level,
                     const std::string& when) {
    const SessionContext ctx = build_context(s);
    c.check(ctx.thinking_level == level,
            when + ": thinking level " + level + ", got " + ctx.thinking_level);
    c.check(ctx.model && ctx.model->provider == "openai" && ctx.model->model_id == "gpt-5",
            when + ": the model chosen before the first kept entry");
    c.check(ctx.active_tool_names ==
                std::optional<std::vector<std::string>>(std::vector<std::string>{"read", "bash"}),
            when + ": the tools chosen before the first kept entry");
}

// Settings, then a compaction that keeps only what follows them, one with a retained tail, a
// later change of the thinking level; ends with the leaf back on the entry z before that change.
template <class SessionT>
void fill_settings_then_compact(Checker& c, SessionT& s) {
    append_thinking_level_change(s, "high");
    append_active_tools_change(s, {"read", "bash"});
    append_message(s, user_text("x"));
    append_message(s, assistant_text("reply"));  // sets the model; the model_change after it wins
    append_model_change(s, "openai", "gpt-5");
    const std::string y = append_message(s, user_text("y"));
    append_compaction(s, "summary", y, 100);
    const std::string z = append_message(s, user_text("z"));
    c.check(build_context(s).messages.size() == 3, "summary, y and z");
    expect_settings(c, s, "high", "after a compaction that keeps y");
    append_compaction(s, "tail", std::nullopt, 100, {}, false, std::nullopt,
                      std::vector<AgentMessage>{user_text("kept")});
    append_message(s, user_text("w"));
    expect_settings(c, s, "high", "after a compaction with a retained tail");
    append_thinking_level_change(s, "low");
    expect_settings(c, s, "low", "after a later change");
    move_to(s, z);
    expect_settings(c, s, "high", "back on z, before that change");
}

// Everything a reader can see of a session, for comparing a session with its reopened self.
template <class S>
std::string snapshot(const S& s) {
    std::string out = "leaf=" + s.get_leaf_id().value_or("<none>") +
                      " name=" + s.get_session_name().value_or("<none>");
    const SessionStats st = s.get_session_stats();
    out += " stats=" + std::to_string(st.message_count) + "/" + std::to_string(st.cached_tokens) +
           "/" + std::to_string(st.uncached_tokens) + "/" + std::to_string(st.total_tokens) + "/" +
           dump_json(Json(st.cost_total));
    out += " count=" + std::to_string(s.entry_count()) + "\n";
    for (const auto& e : s.get_entries(EntriesQuery{})) {
        out += json_of(e) + " label=" + s.get_label(id_of(*e)).value_or("<none>") + "\n";
    }
    return out;
}

}  // namespace conformance_detail

/// Runs every check against repositories made by `target`. `on_failure` (optional) is called for
/// each failure as it happens.
template <SessionRepository R>
ConformanceReport run_conformance(
    const ConformanceTarget<R>& target,
    const std::function<void(const ConformanceFailure&)>& on_failure = {}) {
    using namespace conformance_detail;
    using SessionT = typename R::session_type;
    ConformanceReport report;
    auto run = [&](const char* name, auto&& body) {
        report.checks.emplace_back(name);
        Checker c(report, name, on_failure);
        try {
            R repo = target.fresh();
            body(c, repo);
        } catch (const std::exception& e) {
            c.fail(std::string("threw: ") + e.what());
        }
    };

    run("a new session is empty and holds its header [SPEC 5]", [&](Checker& c, R& repo) {
        CreateOptions o = named("conf-new", "/home/ann/project");
        o.metadata = Json{{"team", "a"}};
        SessionT s = create(repo, o);
        const auto& st = s.storage();
        c.check(st.metadata().id == "conf-new", "metadata().id is the id given");
        c.check(st.metadata().cwd == "/home/ann/project", "metadata().cwd is the cwd given");
        c.check(st.metadata().metadata == Json{{"team", "a"}},
                "metadata().metadata is the metadata given");
        c.check(!st.metadata().timestamp.empty(), "the header has a creation time");
        c.check(st.environment().now_ms() > 0, "environment() has a clock");
        c.check(st.entry_count() == 0, "entry_count() is 0");
        c.check(!st.get_leaf_id(), "no leaf");
        c.check(!st.get_session_name(), "no name");
        c.check(st.get_entries(EntriesQuery{}).empty(), "get_entries() is empty");
        c.check(st.get_path_to_root_or_compaction(std::nullopt).empty(),
                "the path of no start is empty");
        c.check(build_context(s).messages.empty(), "the context is empty");
        const SessionStats stats = st.get_session_stats();
        c.check(stats.message_count == 0 && stats.total_tokens == 0 && stats.cost_total == 0,
                "stats are zero");
        const std::string a = s.storage().create_entry_id();
        c.check(a.size() == 8 && a.find_first_not_of("0123456789abcdef") == std::string::npos,
                "create_entry_id() gives 8 lowercase hex characters");
    });

    run("every append is a child of the leaf and moves it [SPEC 4.2]", [&](Checker& c, R& repo) {
        SessionT s = create(repo, named("conf-leaf"));
        std::vector<std::string> ids;
        ids.push_back(append_message(s, user_text("hi")));
        ids.push_back(append_thinking_level_change(s, "high"));
        ids.push_back(append_model_change(s, "openai", "gpt"));
        ids.push_back(append_active_tools_change(s, {"read", "bash"}));
        ids.push_back(append_custom_entry(s, "app.state", Json{{"k", 1}}));
        ids.push_back(append_custom_message_entry(s, "app.note", std::string("note")));
        ids.push_back(append_label(s, ids[0], std::string("start")));
        ids.push_back(append_session_name(s, "name"));
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const EntryHandle e = get_entry(s, ids[i]);
            if (!e) {
                c.fail("entry " + ids[i] + " not found");
                continue;
            }
            const auto& parent = parent_id_of(*e);
            if (i == 0)
                c.check(!parent, "the first entry is a root");
            else
                c.check(parent && *parent == ids[i - 1],
                        "entry " + std::to_string(i) + " is a child of the one before");
        }
        c.check(s.storage().get_leaf_id() == ids.back(),
                "the leaf is the newest entry, whatever its type");
        c.check(s.storage().entry_count() == ids.size(), "entry_count() counts every entry");
    });

    run("set_leaf_id appends a leaf entry, even when the leaf does not change [SPEC 4.2]",
        [&](Checker& c, R& repo) {
            SessionT s = create(repo, named("conf-setleaf"));
            const std::string a = append_message(s, user_text("a"));
            const std::string b = append_message(s, assistant_text("b"));
            set_leaf_id(s, a);
            c.check(s.storage().get_leaf_id() == a, "the leaf is the target");
            c.check(s.storage().entry_count() == 3, "a leaf entry was appended");
            const auto leaves = s.storage().find_entries(LeafEntry::type);
            c.check(leaves.size() == 1 && parent_id_of(*leaves[0]) == std::optional<std::string>(b),
                    "the leaf entry's parent is the previous leaf");
            set_leaf_id(s, a);
            c.check(s.storage().entry_count() == 4, "setting the same leaf appends again");
            set_leaf_id(s, std::nullopt);
            c.check(!s.storage().get_leaf_id(), "none: before the first entry");
            const std::string root2 = append_message(s, user_text("new root"));
            c.check(!parent_id_of(*get_entry(s, root2)), "an append after leaf none is a root");
            const std::size_t before = s.storage().entry_count();
            c.expect_error(
                ErrorCode::not_found, [&] { set_leaf_id(s, std::string("nope0000")); },
                "unknown leaf target");
            c.check(s.storage().entry_count() == before,
                    "nothing written for an unknown leaf target");
        });

    run("append_entry refuses a taken id, an unknown parent or an empty id, writing nothing [SPEC "
        "4.2]",
        [&](Checker& c, R& repo) {
            SessionT s = create(repo, named("conf-append-errors"));
            const std::string a = append_message(s, user_text("a"));
            MessageEntry dup;
            dup.id = a;
            dup.parent_id = a;
            dup.timestamp = "2026-12-02T07:43:23.123Z";
            dup.message = user_text("dup");
            c.expect_error(
                ErrorCode::already_exists, [&] { s.storage().append_entry(dup); }, "a taken id");
            MessageEntry orphan = dup;
            orphan.id = "0rphan00";
            orphan.parent_id = std::string("missing0");
            c.expect_error(
                ErrorCode::invalid_entry, [&] { s.storage().append_entry(orphan); },
                "an unknown parent");
            MessageEntry empty = dup;
            empty.id.clear();
            c.expect_error(
                ErrorCode::invalid_entry, [&] { s.storage().append_entry(empty); }, "an empty id");
            LeafEntry leaf;
            leaf.id = "leaf0000";
            leaf.parent_id = a;
            leaf.timestamp = dup.timestamp;
            leaf.target_id = std::string("missing0");
            c.expect_error(
                ErrorCode::invalid_entry, [&] { s.storage().append_entry(leaf); },
                "a leaf entry with an unknown target");
            c.check(s.storage().entry_count() == 1, "nothing was written");
            c.check(s.storage().get_leaf_id() == a, "the leaf did not move");
            c.check(!get_entry(s, "0rphan00") && !get_entry(s, "leaf0000"),
                    "the refused entries are not there");
        });

    run("move_to sets the leaf and appends a branch summary when asked [SPEC 4.3]",
        [&](Checker& c, R& repo) {
            SessionT s = create(repo, named("conf-move"));
            const std::string a = append_message(s, user_text("a"));
            append_message(s, assistant_text("b"));
            c.check(!move_to(s, a), "without a summary nothing is returned");
            c.check(s.storage().get_leaf_id() == a, "the leaf is the target");
            BranchSummaryInput in;
            in.summary = "tried b";
            const auto id = move_to(s, a, in);
            const EntryHandle e = id ? get_entry(s, *id) : nullptr;
            const auto* bs = e ? std::get_if<BranchSummaryEntry>(&*e) : nullptr;
            c.check(bs && bs->parent_id == std::optional<std::string>(a) && bs->from_id == a &&
                        bs->summary == "tried b",
                    "the branch summary is a child of the target, from_id the target");
            c.check(s.storage().get_leaf_id() == id, "the leaf is the branch summary");
            const auto r = move_to(s, std::nullopt, in);
            const EntryHandle re = r ? get_entry(s, *r) : nullptr;
            const auto* rb = re ? std::get_if<BranchSummaryEntry>(&*re) : nullptr;
            c.check(rb && !rb->parent_id && rb->from_id == "root",
                    "moving to none: a root summary from 'root'");
            const std::size_t before = s.storage().entry_count();
            c.expect_error(
                ErrorCode::not_found, [&] { move_to(s, std::string("nope0000"), in); },
                "unknown target");
            c.check(s.storage().entry_count() == before, "nothing written for an unknown target");
        });

    run("the path stops at a root, a retained tail or the first kept entry [SPEC 4.4]",
        [&](Checker& c, R& repo) {
            SessionT s = create(repo, named("conf-path"));
            const std::string a = append_message(s, user_text("a"));
            const std::string b = append_message(s, assistant_text("b"));
            const std::string d = append_message(s, user_text("d"));
            c.check(ids_of(get_branch(s)) == std::vector<std::string>{a, b, d},
                    "a chain: root to leaf, oldest first");
            const std::string k = append_compaction(s, "sum", b, 100);
            const std::string e = append_message(s, user_text("e"));
            c.check(ids_of(get_branch(s)) == std::vector<std::string>{b, d, k, e},
                    "a compaction's first kept entry starts the path: got " +
                        joined(ids_of(get_branch(s))));
            const std::string t = append_compaction(s, "tail", std::nullopt, 100, {}, false,
                                                    std::nullopt, std::vector<AgentMessage>{});
            const std::string f = append_message(s, user_text("f"));
            c.check(ids_of(get_branch(s)) == std::vector<std::string>{t, f},
                    "a compaction with a retained tail (even empty) starts the path: got " +
                        joined(ids_of(get_branch(s))));
            c.check(ids_of(s.storage().get_path_to_root_or_compaction(std::string_view(b))) ==
                        std::vector<std::string>{a, b},
                    "the path of another start");
            c.expect_error(
                ErrorCode::not_found,
                [&] {
                    (void)s.storage().get_path_to_root_or_compaction(std::string_view("nope0000"));
                },
                "an unknown start");
        });

    run("the context holds the path's messages and the newest compaction's summary [SPEC 4.5]",
        [&](Checker& c, R& repo) {
            SessionT s = create(repo, named("conf-context"));
            append_thinking_level_change(s, "high");
            append_model_change(s, "openai", "gpt-5");
            const std::string a = append_message(s, user_text("a"));
            append_message(s, assistant_text("b"));
            const std::string q = append_message(s, user_text("q"));
            SessionContext ctx = build_context(s);
            c.check(ctx.messages.size() == 3, "three messages");
            c.check(ctx.thinking_level == "high", "the thinking level set on the path");
            c.check(ctx.model && ctx.model->provider == "anthropic",
                    "an assistant message sets the model");
            append_compaction(s, "summary", q, 50);
            append_message(s, assistant_text("r"));
            ctx = build_context(s);
            c.check(ctx.messages.size() == 3, "summary, the first kept entry and the newest: got " +
                                                  std::to_string(ctx.messages.size()));
            c.check(!ctx.messages.empty() &&
                        std::holds_alternative<CompactionSummaryMessage>(*ctx.messages[0]),
                    "the context starts with the compaction summary");
            BranchSummaryInput empty;
            move_to(s, a, empty);
            c.check(build_context(s).messages.size() == 1,
                    "a branch summary with an empty summary adds no message");
        });

    run("the newest compaction decides where the path starts; older ones in its kept range change "
        "nothing "
        "[SPEC 4.4, 4.5]",
        [&](Checker& c, R& repo) {
            // pi writes this shape when a user compacts twice in a row: the second compaction keeps
            // entries from before the first.
            SessionT s = create(repo, named("conf-compactions"));
            const std::string a = append_message(s, user_text("a"));
            const std::string b = append_message(s, assistant_text("b"));
            const std::string k1 = append_compaction(s, "first", b, 100);
            const std::string d = append_message(s, user_text("d"));
            const std::string kt =
                append_compaction(s, "tail", std::nullopt, 100, {}, false, std::nullopt,
                                  std::vector<AgentMessage>{user_text("old tail")});
            const std::string f = append_message(s, assistant_text("f"));
            const std::string k2 = append_compaction(s, "newest", a, 200);
            const std::string g = append_message(s, user_text("g"));
            const auto path = ids_of(get_branch(s));
            c.check(path == std::vector<std::string>{a, b, k1, d, kt, f, k2, g},
                    "the walk goes through the older compactions to the newest one's first kept "
                    "entry: got " +
                        joined(path));
            const SessionContext ctx = build_context(s);
            std::vector<std::string> shown;
            for (const auto& m : ctx.messages) {
                if (const auto* sum = std::get_if<CompactionSummaryMessage>(&*m))
                    shown.push_back("summary:" + sum->summary);
                else if (const auto* u = std::get_if<UserMessage>(&*m))
                    shown.push_back(std::holds_alternative<std::string>(u->content)
                                        ? std::get<std::string>(u->content)
                                        : "?");
                else if (const auto* as = std::get_if<AssistantMessage>(&*m))
                    shown.push_back(!as->content.empty() &&
                                            std::holds_alternative<TextContent>(as->content[0])
                                        ? std::get<TextContent>(as->content[0]).text
                                        : "?");
                else
                    shown.emplace_back("other");
            }
            c.check(shown == std::vector<std::string>{"summary:newest", "a", "b", "d", "f", "g"},
                    "one summary, the newest, then the kept entries without the older compactions' "
                    "summaries or "
                    "tails: got " +
                        joined(shown));
        });

    run("the context's settings come from the leaf's whole ancestry, through compactions [SPEC "
        "4.5]",
        [&](Checker& c, R& repo) {
            SessionT s = create(repo, named("conf-settings"));
            fill_settings_then_compact(c, s);
        });

    run("labels are trimmed, newest wins across branches, empty clears [SPEC 4.6]",
        [&](Checker& c, R& repo) {
            SessionT s = create(repo, named("conf-labels"));
            const std::string a = append_message(s, user_text("a"));
            const std::string b = append_message(s, assistant_text("b"));
            append_label(s, a, std::string("  first  "));
            c.check(s.storage().get_label(a) == std::optional<std::string>("first"), "trimmed");
            move_to(s, b);
            append_label(s, a, std::string("second"));
            c.check(s.storage().get_label(a) == std::optional<std::string>("second"),
                    "the newest, from another branch");
            append_label(s, a, std::string("   "));
            c.check(!s.storage().get_label(a), "an empty label clears");
            append_label(s, a, std::string("again"));
            append_label(s, a, std::nullopt);
            c.check(!s.storage().get_label(a), "an absent label clears");
            c.check(!s.storage().get_label(b), "an entry never labelled has none");
            c.expect_error(
                ErrorCode::not_found, [&] { append_label(s, "nope0000", std::string("x")); },
                "unknown target");
        });

    run("the name is the newest session_info, flattened and trimmed [SPEC 4.6]",
        [&](Checker& c, R& repo) {
            SessionT s = create(repo, named("conf-name"));
            append_session_name(s, "  first\r\n\nline  ");
            c.check(s.storage().get_session_name() == std::optional<std::string>("first line"),
                    "CR/LF runs become one space, trimmed");
            append_session_name(s, "second");
            c.check(s.storage().get_session_name() == std::optional<std::string>("second"),
                    "the newest wins");
            append_session_name(s, " \n ");
            c.check(!s.storage().get_session_name(), "empty means none");
        });

    run("stats follow the worked example: 1, 40, 68, 136, 1.36 [SPEC 4.7]", [&](Checker& c,
                                                                                R& repo) {
        SessionT s = create(repo, named("conf-stats"));
        const std::string u = append_message(s, user_text("q"));
        append_message(s, assistant_text("a", usage_of(10, 20, 30, 40, 1)));
        append_compaction(s, "c", std::nullopt, 10, {}, false, usage_of(1, 2, 3, 4, 0.1));
        BranchSummaryInput in;
        in.summary = "b";
        in.usage = usage_of(5, 6, 7, 8, 0.26);
        move_to(s, u, in);
        // Only message entries count as messages; a user message adds no usage.
        const SessionStats st = s.storage().get_session_stats();
        c.check(st.message_count == 2,
                "message_count counts message entries: got " + std::to_string(st.message_count));
        c.check(st.cached_tokens == 40,
                "cached_tokens 40: got " + std::to_string(st.cached_tokens));
        c.check(st.uncached_tokens == 68,
                "uncached_tokens 68: got " + std::to_string(st.uncached_tokens));
        c.check(st.total_tokens == 136, "total_tokens 136: got " + std::to_string(st.total_tokens));
        c.check(std::abs(st.cost_total - 1.36) < 1e-9,
                "cost_total 1.36: got " + std::to_string(st.cost_total));
    });

    run("queries: by id, by type in append order, paged [SPEC 4.8]", [&](Checker& c, R& repo) {
        SessionT s = create(repo, named("conf-queries"));
        std::vector<std::string> ids;
        for (int i = 0; i < 5; ++i)
            ids.push_back(append_message(s, user_text("m" + std::to_string(i))));
        const std::string name = append_session_name(s, "n");
        c.check(!get_entry(s, "nope0000"), "an unknown id gives a null handle");
        c.check(ids_of(s.storage().find_entries(MessageEntry::type)) == ids,
                "find_entries in append order");
        c.check(ids_of(s.storage().find_entries(SessionInfoEntry::type)) ==
                    std::vector<std::string>{name},
                "find_entries of another type");
        c.check(s.storage().find_entries("no_such_type").empty(),
                "find_entries of a type with none");
        c.check(ids_of(s.storage().get_entries(EntriesQuery{1, 2})) ==
                    std::vector<std::string>{ids[1], ids[2]},
                "get_entries skips `after` and returns at most `limit`");
        c.check(s.storage().get_entries(EntriesQuery{6, 10}).empty(), "get_entries past the end");
        c.check(s.storage().get_entries(EntriesQuery{}).size() == 6, "get_entries of everything");
        const EntryHandle h = get_entry(s, ids[0]);
        const EntryHandle again = get_entry(s, ids[0]);
        c.check(h && again && json_of(h) == json_of(again),
                "handles of one entry hold the same entry");
    });

    run("unknown entry types and unmodelled fields are kept [SPEC 2.3]", [&](Checker& c, R& repo) {
        SessionT s = create(repo, named("conf-unknown"));
        const std::string a = append_message(s, user_text("a"));
        const Json unknown = {{"type", "future_thing"},
                              {"id", "f0000001"},
                              {"parent_id", a},
                              {"timestamp", "2026-12-02T07:43:23.123Z"},
                              {"payload", {{"deep", {1, 2, 3}}}}};
        s.storage().append_entry(entry_from_json(unknown, Dialect::native));
        const Json extra = {{"type", "message"},
                            {"id", "f0000002"},
                            {"parent_id", "f0000001"},
                            {"timestamp", "2026-12-02T07:43:24.000Z"},
                            {"message",
                             {{"role", "user"},
                              {"content", "hi"},
                              {"timestamp", 5},
                              {"x_vendor", {{"sig", "abc"}}}}},
                            {"x_entry_field", true}};
        s.storage().append_entry(entry_from_json(extra, Dialect::native));
        c.check(s.storage().get_leaf_id() == std::optional<std::string>("f0000002"),
                "an unknown type is a node of the tree");
        const EntryHandle u = get_entry(s, "f0000001");
        c.check(u && entry_to_json(*u, Dialect::native) == unknown,
                "the unknown entry is written back unchanged");
        const EntryHandle m = get_entry(s, "f0000002");
        c.check(m && entry_to_json(*m, Dialect::native) == extra,
                "unmodelled fields are written back unchanged");
        c.check(build_context(s).messages.size() == 2,
                "an unknown entry adds nothing to the context");
    });

    run("fork copies the whole tree or a path, with the same ids [SPEC 4.9]", [&](Checker& c,
                                                                                  R& repo) {
        std::string u2, b2, x;
        {
            CreateOptions o = named("conf-src", "/src");
            o.metadata = Json{{"m", 1}};
            SessionT s = create(repo, o);
            const std::string u1 = append_message(s, user_text("u1"));
            append_message(s, assistant_text("a1"));
            u2 = append_message(s, user_text("u2"));
            b2 = append_message(s, assistant_text("a2"));
            append_label(s, u1, std::string("start"));
            append_session_name(s, "source");
            x = append_custom_entry(s, "app.x");
        }
        ForkOptions whole;
        whole.session_id = "conf-whole";
        {
            SessionT f = fork(repo, "conf-src", whole);
            c.check(f.storage().entry_count() == 7, "the whole tree is copied");
            c.check(f.storage().get_leaf_id() == std::optional<std::string>(x),
                    "the leaf follows the last copied entry");
            c.check(f.storage().metadata().cwd == "/src" &&
                        f.storage().metadata().metadata == Json{{"m", 1}},
                    "cwd and metadata are inherited");
            c.check(f.storage().metadata().parent_session.has_value(),
                    "parent_session names the source");
            c.check(f.storage().get_session_name() == std::optional<std::string>("source"),
                    "the name comes along");
        }
        ForkOptions before;
        before.session_id = "conf-before";
        before.entry_id = u2;
        before.cwd = "/elsewhere";
        {
            SessionT f = fork(repo, "conf-src", before);
            const auto path = ids_of(f.storage().get_entries(EntriesQuery{}));
            c.check(path.size() == 2,
                    "before a user message: the path to its parent: got " + joined(path));
            c.check(f.storage().metadata().cwd == "/elsewhere", "a cwd given wins");
        }
        ForkOptions at;
        at.session_id = "conf-at";
        at.entry_id = b2;
        at.position = ForkPosition::at;
        {
            SessionT f = fork(repo, "conf-src", at);
            c.check(f.storage().entry_count() == 4 &&
                        f.storage().get_leaf_id() == std::optional<std::string>(b2),
                    "at: the path up to the target");
            const auto first = f.storage().get_entries(EntriesQuery{0, 1});
            c.check(!first.empty() && !parent_id_of(*first[0]), "the first copied entry is a root");
        }
        ForkOptions bad = before;
        bad.session_id = "conf-bad";
        bad.entry_id = b2;
        c.expect_error(
            ErrorCode::invalid_fork_target, [&] { fork(repo, "conf-src", bad); },
            "before on an assistant message");
        bad.entry_id = "nope0000";
        c.expect_error(
            ErrorCode::invalid_fork_target, [&] { fork(repo, "conf-src", bad); },
            "an unknown target");
        c.expect_error(
            ErrorCode::not_found, [&] { fork(repo, "conf-missing", ForkOptions{}); },
            "an unknown source");
        c.expect_error(
            ErrorCode::already_exists, [&] { fork(repo, "conf-src", whole); }, "a taken new id");
        ForkOptions invalid;
        invalid.session_id = "../escape";
        c.expect_error(
            ErrorCode::invalid_session, [&] { fork(repo, "conf-src", invalid); },
            "an invalid new id");
        SessionT src = open_read_only(repo, "conf-src");
        c.check(src.storage().entry_count() == 7, "the source is unchanged");
    });

    run("create, open, list, remove: the repository rules [SPEC 4.10]", [&](Checker& c, R& repo) {
        { SessionT s = create(repo, named("conf-a", "/a")); }
        { SessionT s = create(repo, named("conf-b", "/b")); }
        { SessionT s = create(repo, named("conf-c", "/a")); }
        c.expect_error(
            ErrorCode::already_exists, [&] { create(repo, named("conf-a")); }, "a taken id");
        c.expect_error(
            ErrorCode::invalid_session, [&] { create(repo, named("bad/id")); }, "an invalid id");
        c.expect_error(
            ErrorCode::invalid_session, [&] { create(repo, named("")); }, "an empty id");
        c.expect_error(
            ErrorCode::not_found, [&] { open(repo, "conf-none"); }, "open of an unknown id");
        c.expect_error(
            ErrorCode::not_found, [&] { open_read_only(repo, "conf-none"); },
            "read-only open of an unknown id");
        const SessionList all = list(repo, ListOptions{});
        std::vector<std::string> ids;
        for (const auto& l : all.sessions) ids.push_back(l.header.id);
        c.check(ids.size() == 3, "list shows every session: got " + joined(ids));
        bool ordered = true;
        for (std::size_t i = 1; i < all.sessions.size(); ++i)
            ordered = ordered && !detail::listed_before(all.sessions[i].header,
                                                        all.sessions[i - 1].header, true);
        c.check(ordered, "newest first");
        ListOptions by_cwd;
        by_cwd.cwd = "/a";
        c.check(list(repo, by_cwd).sessions.size() == 2, "list of one cwd");
        ListOptions page;
        page.limit = 2;
        const SessionList first = list(repo, page);
        c.check(first.sessions.size() == 2 && first.next.has_value(),
                "a first page of 2, with a cursor");
        if (first.next) {
            page.after = first.next;
            const SessionList second = list(repo, page);
            c.check(second.sessions.size() == 1 && !second.next,
                    "the second page holds the rest, no cursor");
            if (!second.sessions.empty() && !ids.empty())
                c.check(second.sessions[0].header.id == ids.back(),
                        "pages follow the listing's order");
        }
        ListOptions oldest;
        oldest.newest_first = false;
        const SessionList asc = list(repo, oldest);
        c.check(!asc.sessions.empty() && !ids.empty() && asc.sessions[0].header.id == ids.back(),
                "oldest first on request");
        remove(repo, "conf-a");
        remove(repo, "conf-a");
        c.expect_error(
            ErrorCode::not_found, [&] { open(repo, "conf-a"); }, "open after remove");
        c.check(list(repo, ListOptions{}).sessions.size() == 2, "a removed session is not listed");
        c.expect_error(
            ErrorCode::invalid_session, [&] { remove(repo, "bad/id"); }, "remove of an invalid id");
    });

    run("list with summaries: what each session holds, kept up to date", [&](Checker& c, R& repo) {
        auto summary_text = [](const std::optional<SessionSummary>& sum) {
            if (!sum) return std::string("none");
            return std::to_string(sum->entry_count) + " entries, " +
                   std::to_string(sum->stats.message_count) + " messages, " +
                   std::to_string(sum->stats.total_tokens) + " tokens, cost " +
                   std::to_string(sum->stats.cost_total) + ", name '" +
                   sum->name.value_or("(none)") + "', last " + sum->last_activity;
        };
        auto same = [](const SessionSummary& a, const SessionSummary& b) {
            return a.entry_count == b.entry_count &&
                   a.stats.message_count == b.stats.message_count &&
                   a.stats.cached_tokens == b.stats.cached_tokens &&
                   a.stats.uncached_tokens == b.stats.uncached_tokens &&
                   a.stats.total_tokens == b.stats.total_tokens &&
                   std::abs(a.stats.cost_total - b.stats.cost_total) < 1e-9 && a.name == b.name &&
                   a.last_activity == b.last_activity;
        };
        ListOptions with;
        with.summaries = true;
        auto check_all = [&](const std::string& when) {
            const SessionList listed = list(repo, with);
            c.check(listed.sessions.size() == 2,
                    when + ": two sessions listed, got " + std::to_string(listed.sessions.size()));
            for (const auto& l : listed.sessions) {
                const SessionSummary want = summarize(open_read_only(repo, l.header.id).storage());
                c.check(l.summary && same(*l.summary, want),
                        when + ": session '" + l.header.id + "' summary " +
                            summary_text(l.summary) + ", an open gives " + summary_text(want));
            }
        };
        {
            SessionT empty = create(repo, named("conf-sum-empty", "/s"));
            SessionT s = create(repo, named("conf-sum", "/s"));
            append_message(s, user_text("q"));
            append_message(s, assistant_text("a", usage_of(10, 20, 30, 40, 1)));
            append_session_name(s, "First name");
            check_all("after three appends");
            const SessionList listed = list(repo, with);
            for (const auto& l : listed.sessions) {
                if (l.header.id == "conf-sum-empty")
                    c.check(l.summary && l.summary->entry_count == 0 &&
                                l.summary->last_activity == l.header.timestamp,
                            "an empty session: no entries, last activity its creation, got " +
                                summary_text(l.summary));
                else
                    c.check(l.summary && l.summary->entry_count == 3 &&
                                l.summary->stats.message_count == 2 &&
                                l.summary->name == std::optional<std::string>("First name"),
                            "3 entries, 2 messages, named: got " + summary_text(l.summary));
            }
            const SessionList plain = list(repo, ListOptions{});
            c.check(!plain.sessions.empty() && !plain.sessions.front().summary,
                    "no summary unless asked for");
            // Listed again after more appends: the summary follows.
            append_message(s, user_text("q2"));
            append_session_name(s, "Second name");
            check_all("after two more appends");
        }
        ListOptions page = with;
        page.cwd = "/s";
        page.limit = 1;
        const SessionList first = list(repo, page);
        c.check(first.sessions.size() == 1 && first.sessions[0].summary.has_value(),
                "a page of one cwd with its summary");
        if (target.reopen) {
            R again = target.reopen(repo);
            const SessionList listed = list(again, with);
            for (const auto& l : listed.sessions)
                c.check(
                    l.summary &&
                        same(*l.summary, summarize(open_read_only(again, l.header.id).storage())),
                    "reopened: session '" + l.header.id + "' summary " + summary_text(l.summary));
        }
    });

    run("a read-only open refuses appends and changes nothing [SPEC 5]", [&](Checker& c, R& repo) {
        {
            SessionT s = create(repo, named("conf-ro"));
            append_message(s, user_text("a"));
        }
        SessionT r = open_read_only(repo, "conf-ro");
        c.check(r.storage().entry_count() == 1, "it reads the session");
        c.expect_error(
            ErrorCode::storage, [&] { append_message(r, user_text("b")); },
            "an append to a read-only open");
        c.check(r.storage().entry_count() == 1, "nothing was written");
    });

    if (target.exclusive_writers) {
        run("a second writer of a session gets locked [SPEC 6, 9]", [&](Checker& c, R& repo) {
            SessionT s = create(repo, named("conf-lock"));
            c.expect_error(
                ErrorCode::locked, [&] { open(repo, "conf-lock"); }, "a second open for writing");
            SessionT r = open_read_only(repo, "conf-lock");
            c.check(r.storage().entry_count() == 0, "a reader is never locked out");
        });
    }

    if (target.reopen) {
        run("a reopened session is the session that was written [SPEC 4.2, 6, 9]", [&](Checker& c,
                                                                                       R& repo) {
            std::string before;
            {
                SessionT s = create(repo, named("conf-reopen"));
                const std::string a = append_message(s, user_text("a"));
                append_message(s, assistant_text("b", usage_of(1, 2, 3, 4, 0.5)));
                append_label(s, a, std::string("mark"));
                append_session_name(s, "kept");
                const Json unknown = {{"type", "future_thing"},
                                      {"id", "f0000009"},
                                      {"parent_id", a},
                                      {"timestamp", "2026-12-02T07:43:23.123Z"},
                                      {"z", 1}};
                s.storage().append_entry(entry_from_json(unknown, Dialect::native));
                set_leaf_id(s, a);
                before = snapshot(s.storage());
            }
            R again = target.reopen(repo);
            {
                SessionT s = open(again, "conf-reopen");
                const std::string after = snapshot(s.storage());
                c.check(after == before, "everything a reader sees is the same after reopening:\n" +
                                             before + "---\n" + after);
                append_message(s, user_text("more"));
            }
            SessionT r = open_read_only(again, "conf-reopen");
            c.check(r.storage().entry_count() == 7, "an append after reopening is kept");
            c.check(list(again, ListOptions{}).sessions.size() == 1,
                    "the reopened repository lists the session");
        });

        run("a reopened session keeps the settings chosen before a compaction [SPEC 4.5, 6, 9]",
            [&](Checker& c, R& repo) {
                {
                    SessionT s = create(repo, named("conf-settings-reopen"));
                    fill_settings_then_compact(c, s);
                }
                R again = target.reopen(repo);
                SessionT s = open(again, "conf-settings-reopen");
                expect_settings(c, s, "high", "reopened, on the leaf z");
                append_message(s, user_text("v"));
                expect_settings(c, s, "high", "reopened, after an append");
            });
    }

    if constexpr (ImportingRepository<R>) {
        run("import_session keeps the header and entries given, all or nothing [SPEC 4.10]",
            [&](Checker& c, R& repo) {
                std::vector<SessionTreeEntry> entries;
                std::string before;
                {
                    SessionT s = create(repo, named("conf-import-src"));
                    const std::string a = append_message(s, user_text("a"));
                    append_message(s, assistant_text("b", usage_of(1, 2, 3, 4, 0.5)));
                    append_label(s, a, std::string("mark"));
                    append_session_name(s, "imported");
                    const Json unknown = {{"type", "future_thing"},
                                          {"id", "f0000010"},
                                          {"parent_id", a},
                                          {"timestamp", "2026-12-02T07:43:23.123Z"},
                                          {"z", 1}};
                    s.storage().append_entry(entry_from_json(unknown, Dialect::native));
                    set_leaf_id(s, a);
                    before = snapshot(s.storage());
                    for (const auto& e : s.storage().get_entries(EntriesQuery{}))
                        entries.push_back(*e);
                }
                SessionHeader header;
                header.id = "conf-import";
                header.timestamp = "2025-05-05T05:05:05.555Z";
                header.cwd = "/imported";
                header.parent_session = "conf-import-src";
                header.metadata = Json{{"team", "b"}};
                const std::string header_line = encode_header(header, Dialect::native);
                {
                    SessionT s = import_session(repo, header, entries, Dialect::native);
                    c.check(encode_header(s.storage().metadata(), Dialect::native) == header_line,
                            "the header is the one given, creation time included");
                    c.check(snapshot(s.storage()) == before,
                            "the entries, leaf, labels, name and stats are the source's");
                    append_message(s, user_text("more"));
                }
                SessionT r = open_read_only(repo, "conf-import");
                c.check(encode_header(r.storage().metadata(), Dialect::native) == header_line,
                        "a later open reads the header");
                c.check(r.storage().entry_count() == entries.size() + 1,
                        "the imported session takes appends");
                ListOptions by_cwd;
                by_cwd.cwd = "/imported";
                const SessionList listed = list(repo, by_cwd);
                c.check(listed.sessions.size() == 1 &&
                            listed.sessions[0].header.timestamp == header.timestamp,
                        "list shows it under its cwd and creation time");
                const std::string kept = snapshot(r.storage());
                c.expect_error(
                    ErrorCode::already_exists,
                    [&] { import_session(repo, header, entries, Dialect::native); },
                    "an import of a taken id");
                c.check(snapshot(open_read_only(repo, "conf-import").storage()) == kept,
                        "the session with that id is unchanged");
                SessionHeader bad = header;
                bad.id = "conf-import-bad";
                c.expect_error(
                    ErrorCode::invalid_entry,
                    [&] {
                        import_session(repo, bad, std::vector<SessionTreeEntry>{entries[1]},
                                       Dialect::native);
                    },
                    "entries whose parent is missing");
                c.expect_error(
                    ErrorCode::already_exists,
                    [&] {
                        import_session(repo, bad,
                                       std::vector<SessionTreeEntry>{entries[0], entries[0]},
                                       Dialect::native);
                    },
                    "entries with one id twice");
                c.expect_error(
                    ErrorCode::not_found, [&] { open_read_only(repo, "conf-import-bad"); },
                    "a failed import leaves no session");
                c.check(list(repo, ListOptions{}).sessions.size() == 2,
                        "list shows no session of a failed import");
                bad.id = "bad/id";
                c.expect_error(
                    ErrorCode::invalid_session,
                    [&] { import_session(repo, bad, entries, Dialect::native); },
                    "an import with an invalid id");
                if (target.reopen) {
                    R again = target.reopen(repo);
                    c.check(snapshot(open_read_only(again, "conf-import").storage()) == kept,
                            "a reopened repository holds the imported session");
                }
            });
    }
    return report;
}

}  // namespace agentcore::testing

// The PostgreSQL storage and repository (SPEC §9): the conformance kit, the schema and its
// versions, losslessness, bad input, listing, removal and the server-side fork.

#include "fixtures/pi/pi_fixtures.hpp"
#include "postgres/pg_test.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/observe.hpp"
#include "support/scratch.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#include <agentcore/session.hpp>
#include <agentcore/testing/conformance.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace agentcore;
using agentcore::testing::error_of;
using agentcore::testing::message_of_error;
using agentcore::testing::observe;
using agentcore::testing::pg::fast;
using agentcore::testing::pg::named;
using agentcore::testing::pg::Raw;
namespace pgt = agentcore::testing::pg;

static_assert(SessionRepository<PostgresSessionRepo>);

TEST_CASE("the PostgreSQL repository passes the conformance kit, reopened from its database",
          "[postgres][conformance]") {
    const std::string db = pgt::fresh_database();
    agentcore::testing::ConformanceTarget<PostgresSessionRepo> target;
    target.fresh = [&] { return PostgresSessionRepo(pgt::fresh_schema(db), fast()); };
    target.reopen = [](PostgresSessionRepo& r) {
        return PostgresSessionRepo(r.conninfo(), r.options());
    };
    target.exclusive_writers = true;
    const auto report = agentcore::testing::run_conformance(target);
    INFO(report.summary());
    CHECK(report.checks.size() >= 15);
    CHECK(report.ok());
}

TEST_CASE(
    "open_repository opens postgresql:// and postgres:// URLs, and the type-erased repository "
    "passes the kit",
    "[postgres][any]") {
    const std::string db = pgt::fresh_database();
    pgt::Server& server = pgt::shared_server();
    const std::string dbname = db.substr(db.find("dbname=") + 7);
    CHECK(error_of([] { open_repository("postgresql:nothing"); }) == ErrorCode::invalid_session);
    agentcore::testing::ConformanceTarget<AnyRepository> target;
    int n = 0;
    target.fresh = [&] {
        // A schema per repository, named in the URL's options.
        const std::string schema = "any_" + std::to_string(n++);
        Raw(db).exec("CREATE SCHEMA " + schema);
        return open_repository(server.uri(dbname) + "&options=-csearch_path%3D" + schema);
    };
    target.reopen = [](AnyRepository& r) { return open_repository(r.url()); };
    target.exclusive_writers = true;
    const auto report = agentcore::testing::run_conformance(target);
    INFO(report.summary());
    CHECK(report.ok());
    auto repo = open_repository("postgres" + server.uri(dbname).substr(10));
    REQUIRE(repo.target<PostgresSessionRepo>() != nullptr);
    auto s = create(repo);
    CHECK(s.storage().target<PostgresSessionStorage>() != nullptr);
}

namespace {

// A session's JSONL text as a JSONL storage writes it: header line, then each entry's line.
template <class S>
std::string jsonl_of(const S& storage, Dialect dialect) {
    std::string out = encode_header(storage.metadata(), dialect) + "\n";
    for (const auto& e : storage.get_entries(EntriesQuery{}))
        out += encode_entry(*e, dialect) + "\n";
    return out;
}

}  // namespace

TEST_CASE(
    "a session imported into PostgreSQL exports the bytes of a JSONL round trip, in both dialects",
    "[postgres][lossless]") {
    const std::string db = pgt::fresh_database();
    auto pool = std::make_shared<detail::pg::Pool>(db);
    for (const Dialect dialect : {Dialect::native, Dialect::pi}) {
        agentcore::testing::ScratchDir dir;
        JsonlStorageOptions jo;
        jo.dialect = dialect;
        jo.durability = Durability::os_buffered;
        JsonlSessionRepo jsonl(dir.file("jsonl"), jo);
        const std::string id = dialect == Dialect::pi ? "lossless-pi" : "lossless";
        std::string path;
        {
            auto s = create(jsonl, named(id));
            const std::string a = append_message(
                s, UserMessage{"héllo \"quoted\" ; DROP TABLE entries; $1 \\", 1, {}});
            AssistantMessage m;
            m.content.push_back(ThinkingContent{"hmm", Json{{"signature", "sig"}}});
            m.content.push_back(ToolCallContent{"call_1", "read", Json{{"path", "/x"}}, {}});
            m.provider = "anthropic";
            m.model = "claude";
            m.usage.input = 3;
            m.usage.cost.total = 0.125;
            m.stop_reason = "tool_use";
            m.extra = Json{{"responseId", "r1"}};
            append_message(s, std::move(m));
            append_compaction(s, "sum", a, 10, Json{{"files", {"a"}}}, false, std::nullopt,
                              std::vector<AgentMessage>{});
            append_label(s, a, std::string("mark"));
            append_session_name(s, "name");
            s.storage().append_entry(entry_from_json(Json{{"type", "future"},
                                                          {"id", "f1234567"},
                                                          {"parent_id", a},
                                                          {"timestamp", "2026-01-01T00:00:00.000Z"},
                                                          {"x", {1}}},
                                                     Dialect::native));
            set_leaf_id(s, a);
            path = s.storage().path();
        }
        const std::string file_bytes = agentcore::testing::read_file(path);
        const auto source = JsonlSessionStorage::open_read_only(path);
        std::vector<SessionTreeEntry> entries;
        for (const auto& e : source.get_entries(EntriesQuery{})) entries.push_back(*e);
        PostgresStorageOptions o = fast();
        o.dialect = source.dialect();
        {
            auto copy = PostgresSessionStorage::create(pool, source.metadata(), o, entries);
            CHECK(copy.export_jsonl() == file_bytes);
        }
        const auto reopened = PostgresSessionStorage::open_read_only(pool, id, o);
        CHECK(reopened.export_jsonl() == file_bytes);
        CHECK(reopened.dialect() == dialect);
        CHECK(reopened.get_leaf_id() == source.get_leaf_id());
        CHECK(reopened.get_session_name() == source.get_session_name());
        CHECK(reopened.get_session_stats().total_tokens == source.get_session_stats().total_tokens);
    }
    // A file pi wrote itself, imported in one batch: the export is its JSONL round trip.
    const auto pi =
        JsonlSessionStorage::open_read_only(agentcore::testing::pi_fixture("v3-full.jsonl"));
    REQUIRE(pi.dialect() == Dialect::pi);
    std::vector<SessionTreeEntry> entries;
    for (const auto& e : pi.get_entries(EntriesQuery{})) entries.push_back(*e);
    PostgresStorageOptions o = fast();
    o.dialect = Dialect::pi;
    auto copy = PostgresSessionStorage::create(pool, pi.metadata(), o, entries);
    CHECK(copy.export_jsonl() == jsonl_of(pi, Dialect::pi));
    CHECK(copy.entry_count() == pi.entry_count());
}

TEST_CASE(
    "a session copied from a JSONL folder into PostgreSQL and back is the same file, in both "
    "dialects",
    "[postgres][copy][lossless]") {
    const std::string db = pgt::fresh_database();
    PostgresSessionRepo repo(db, fast());
    for (const Dialect dialect : {Dialect::native, Dialect::pi}) {
        agentcore::testing::ScratchDir dir;
        JsonlStorageOptions jo;
        jo.dialect = dialect;
        jo.durability = Durability::os_buffered;
        JsonlSessionRepo folder(dir.file("a"), jo);
        const std::string id = dialect == Dialect::pi ? "copied-pi" : "copied";
        std::string path;
        {
            auto s = create(folder, named(id));
            const std::string a = append_message(s, UserMessage{"first", 1, {}});
            append_message(s, UserMessage{"second", 2, {}});
            append_label(s, a, std::string("mark"));
            append_session_name(s, "named");
            set_leaf_id(s, a);
            path = s.storage().path();
        }
        const std::string bytes = agentcore::testing::read_file(path);
        {
            auto copy = copy_session(folder, repo, id);
            CHECK(copy.storage().dialect() == dialect);
            CHECK(copy.storage().export_jsonl() == bytes);
        }
        CHECK(error_of([&] { copy_session(folder, repo, id); }) == ErrorCode::already_exists);
        JsonlSessionRepo back(dir.file("b"), jo);
        auto again = copy_session(repo, back, id);
        CHECK(agentcore::testing::read_file(again.storage().path()) == bytes);
    }
}

TEST_CASE("an older schema is migrated, and a newer one is refused with invalid_session, untouched",
          "[postgres][schema]") {
    const std::string db = pgt::fresh_database();
    Raw raw(db);
    raw.exec(
        "CREATE TABLE agentcore_schema_migrations (version integer PRIMARY KEY, applied_at "
        "timestamptz NOT NULL)");
    raw.c.exec_script(detail::pg::migrations[0], "testing");
    raw.exec("INSERT INTO agentcore_schema_migrations VALUES (1, now())");
    CHECK(error_of([&] { (void)PostgresSessionStorage::open_read_only(db, "x", fast()); }) ==
          ErrorCode::invalid_session);
    {
        PostgresSessionRepo repo(db, fast());
        auto s = create(repo, named("after-migration"));
        append_message(s, UserMessage{"a", 1, {}});
    }
    CHECK(raw.number("SELECT max(version) FROM agentcore_schema_migrations") ==
          detail::pg::schema_version);
    CHECK(raw.text("SELECT indexname FROM pg_indexes WHERE indexname = 'entries_labels'") ==
          "entries_labels");
    // Version 5: the index by type without messages.
    CHECK(raw.text("SELECT indexdef FROM pg_indexes WHERE indexname = 'entries_by_type'")
              .find("WHERE (type <> 'message'") != std::string::npos);

    raw.exec("INSERT INTO agentcore_schema_migrations VALUES (99, now())");
    const std::string message = message_of_error([&] { PostgresSessionRepo newer(db, fast()); });
    CHECK(message.find("[agentcore.invalid_session]") == 0);
    CHECK(message.find("99") != std::string::npos);
    CHECK(error_of([&] { (void)PostgresSessionStorage::open(db, "after-migration", fast()); }) ==
          ErrorCode::invalid_session);
    CHECK(raw.number("SELECT count(*) FROM entries") == 1);
}

TEST_CASE("two migrators at once both succeed and the schema is made once", "[postgres][schema]") {
    for (int round = 0; round < 3; ++round) {
        const std::string db = pgt::fresh_database();
        std::atomic<int> ok{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                try {
                    PostgresSessionRepo repo(db, fast());
                    ++ok;
                } catch (const std::exception& e) {
                    UNSCOPED_INFO(e.what());
                }
            });
        for (auto& t : threads) t.join();
        CHECK(ok == 4);
        Raw raw(db);
        CHECK(raw.number("SELECT count(*) FROM agentcore_schema_migrations") ==
              detail::pg::schema_version);
        // And from separate processes.
        const std::string db2 = pgt::fresh_database();
        std::vector<pid_t> children;
        std::fflush(nullptr);
        for (int i = 0; i < 3; ++i) {
            const pid_t child = ::fork();
            REQUIRE(child >= 0);
            if (child == 0) {
                try {
                    PostgresSessionRepo repo(db2, fast());
                    ::_exit(0);
                } catch (...) {
                    ::_exit(1);
                }
            }
            children.push_back(child);
        }
        for (const pid_t child : children) {
            int status = 0;
            ::waitpid(child, &status, 0);
            CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
        }
        CHECK(Raw(db2).number("SELECT count(*) FROM agentcore_schema_migrations") ==
              detail::pg::schema_version);
    }
}

TEST_CASE(
    "a payload row damaged by hand is invalid_entry naming session and position, never the text",
    "[postgres][damage]") {
    const std::string db = pgt::fresh_database();
    std::string a;
    {
        PostgresSessionRepo repo(db, fast());
        auto s = create(repo, named("damaged"));
        a = append_message(s, UserMessage{"one", 1, {}});
        append_message(s, UserMessage{"two", 2, {}});
    }
    Raw(db).exec(
        "UPDATE entries SET line = '{\"type\":\"message\",\"id\":\"zz\",\"message\":SECRET' WHERE "
        "seq = 2");
    PostgresSessionRepo repo(db, fast());
    auto s = open(repo, "damaged");
    const std::string message = message_of_error([&] { (void)build_context(s); });
    CHECK(message.find("[agentcore.invalid_entry]") == 0);
    CHECK(message.find("'damaged'") != std::string::npos);
    CHECK(message.find("entry 2") != std::string::npos);
    CHECK(message.find("SECRET") == std::string::npos);
    CHECK(get_entry(s, a) != nullptr);  // the intact entries still read
    // Listed with summaries: still listed (its row is intact), without a summary (its newest
    // entry, the damaged one, gives the last activity).
    ListOptions with_summaries;
    with_summaries.summaries = true;
    const SessionList listed = list(repo, with_summaries);
    REQUIRE(listed.sessions.size() == 1);
    CHECK_FALSE(listed.sessions[0].summary);
    Raw(db).exec("UPDATE entries SET line = '{' WHERE seq = 1");
    auto r = open_read_only(repo, "damaged");
    const std::string second =
        message_of_error([&] { (void)r.storage().get_entries(EntriesQuery{}); });
    CHECK(second.find("[agentcore.invalid_entry]") == 0);
    CHECK(second.find("entry 1") != std::string::npos);
}

TEST_CASE(
    "hostile strings are bound, never executed: stored verbatim, or refused when they hold a NUL",
    "[postgres][security]") {
    const std::string db = pgt::fresh_database();
    PostgresSessionRepo repo(db, fast());
    CHECK(error_of([&] { create(repo, named("x'; DROP TABLE sessions; --")); }) ==
          ErrorCode::invalid_session);
    CHECK(error_of([&] { open(repo, "a\"b"); }) == ErrorCode::invalid_session);
    CHECK(error_of([&] { remove(repo, std::string("a\0b", 3)); }) == ErrorCode::invalid_session);
    CHECK(error_of([&] { create(repo, named("nul", std::string("/a\0b", 4))); }) ==
          ErrorCode::invalid_session);
    const std::string cwd = "/it's \"here\"; DROP TABLE entries; -- $1 \\ \\x00";
    const std::string big(1 << 20, 'q');
    std::string a;
    {
        auto s = create(repo, named("hostile", cwd));
        a = append_message(
            s,
            UserMessage{
                "'); DELETE FROM entries; -- $1 $2 \\' " + big + std::string("\0nul", 4), 1, {}});
        append_label(s, a, std::string("label'\"; -- $1"));
        append_session_name(s, "name'); DROP TABLE sessions; --");
        append_custom_entry(s, "type'); --", Json{{"k", "v'\""}});
        CHECK(error_of([&] { append_label(s, a, std::string("nul\0label", 9)); }) ==
              ErrorCode::invalid_entry);
        CHECK(s.storage().entry_count() == 4);
    }
    ListOptions by_cwd;
    by_cwd.cwd = cwd;
    const SessionList l = list(repo, by_cwd);
    REQUIRE(l.sessions.size() == 1);
    CHECK(l.sessions[0].header.cwd == cwd);
    by_cwd.cwd = std::string("/\0", 2);
    CHECK(list(repo, by_cwd).sessions.empty());
    auto s = open_read_only(repo, "hostile");
    CHECK(s.storage().get_label(a) == std::optional<std::string>("label'\"; -- $1"));
    CHECK(s.storage().get_session_name() ==
          std::optional<std::string>("name'); DROP TABLE sessions; --"));
    const auto* m = std::get_if<MessageEntry>(&*get_entry(s, a));
    REQUIRE(m != nullptr);
    CHECK(std::get<std::string>(std::get<UserMessage>(m->message).content) ==
          "'); DELETE FROM entries; -- $1 $2 \\' " + big + std::string("\0nul", 4));
    CHECK(s.storage().find_entries("custom").size() == 1);
    Raw raw(db);
    CHECK(raw.number("SELECT count(*) FROM sessions") == 1);
}

TEST_CASE("list pages by keyset through every session of one cwd, newest or oldest first",
          "[postgres][list]") {
    const std::string db = pgt::fresh_database();
    PostgresStorageOptions o = fast();
    o.environment =
        Environment::deterministic(1'700'000'000'000, 7, 0);  // equal times: the id decides
    PostgresSessionRepo repo(db, o);
    for (int i = 0; i < 30; ++i)
        create(repo, named("s" + std::to_string(100 + i), i % 3 == 0 ? "/a" : "/b"));
    for (const bool newest : {true, false}) {
        ListOptions page;
        page.cwd = "/b";
        page.limit = 7;
        page.newest_first = newest;
        std::vector<std::string> paged;
        for (;;) {
            const SessionList l = list(repo, page);
            for (const auto& s : l.sessions) paged.push_back(s.header.id);
            if (!l.next) break;
            page.after = l.next;
        }
        ListOptions all;
        all.cwd = "/b";
        all.newest_first = newest;
        std::vector<std::string> whole;
        for (const auto& s : list(repo, all).sessions) whole.push_back(s.header.id);
        CHECK(whole.size() == 20);
        CHECK(paged == whole);
        CHECK(std::is_sorted(whole.begin(), whole.end()) == !newest);
    }
    CHECK(list(repo, ListOptions{}).sessions.size() == 30);
    Raw raw(db);
    raw.exec("SET enable_seqscan = off");
    const auto rows = raw.exec(
        "EXPLAIN SELECT header FROM sessions WHERE cwd = '/b' AND (created, id) < ('x', 'y')"
        " ORDER BY created DESC, id DESC LIMIT 8");
    std::string plan;
    for (int i = 0; i < rows.rows(); ++i) plan += std::string(rows.text(i, 0)) + "\n";
    INFO(plan);
    CHECK(plan.find("sessions_by_cwd") != std::string::npos);
}

TEST_CASE("a removed session refuses the appends of a writer that still has it open",
          "[postgres][repo]") {
    const std::string db = pgt::fresh_database();
    PostgresSessionRepo repo(db, fast());
    auto s = create(repo, named("gone"));
    append_message(s, UserMessage{"a", 1, {}});
    remove(repo, "gone");
    CHECK(error_of([&] { append_message(s, UserMessage{"b", 2, {}}); }) == ErrorCode::storage);
    CHECK(error_of([&] { open_read_only(repo, "gone"); }) == ErrorCode::not_found);
    CHECK(Raw(db).number("SELECT count(*) FROM entries") == 0);
}

namespace {

// The same session written to any repository: branches, labels, names, compactions (a kept
// entry, a retained tail, one whose kept entry is off the branch), leaf moves, a model.
template <class Repo>
typename Repo::session_type branchy(Repo& repo, const std::string& id) {
    auto s = create(repo, named(id));
    const std::string a = append_message(s, UserMessage{"a", 1, {}});
    append_model_change(s, "anthropic", "claude");
    AssistantMessage m;
    m.content.push_back(TextContent{"b", {}});
    m.provider = "openai";
    m.model = "gpt";
    m.usage.input = 10;
    m.usage.output = 5;
    m.usage.cost.total = 0.5;
    const std::string b = append_message(s, m);
    append_label(s, a, std::string("first"));
    const std::string c = append_message(s, UserMessage{"c", 3, {}});
    append_thinking_level_change(s, "high");
    append_compaction(s, "summary one", b, 100);
    const std::string d = append_message(s, UserMessage{"d", 4, {}});
    append_label(s, d, std::string("dee"));
    append_session_name(s, "branchy");
    set_leaf_id(s, c);
    const std::string e = append_message(s, UserMessage{"e", 5, {}});
    append_compaction(s, "tail", std::nullopt, 5, {}, false, std::nullopt,
                      std::vector<AgentMessage>{UserMessage{"kept", 1, {}}});
    const std::string f = append_message(s, UserMessage{"f", 6, {}});
    append_label(s, a, std::string("again"));
    set_leaf_id(s, a);
    append_compaction(s, "off-branch kept", d, 7);
    const std::string g = append_message(s, UserMessage{"g", 7, {}});
    set_leaf_id(s, f);
    (void)e;
    (void)g;
    return s;
}

}  // namespace

TEST_CASE(
    "schema version 3 gives existing entries their depths, drops the foreign key, and paths read "
    "as a range or walked give memory's contexts",
    "[postgres][schema]") {
    const std::string db = pgt::fresh_database();
    PostgresStorageOptions o = fast();
    o.environment = Environment::deterministic(1'700'000'000'000, 42);
    InMemorySessionRepo memory(Environment::deterministic(1'700'000'000'000, 42));
    // branchy's tree, then a long side branch and a short one beside it: the short branch's path
    // spans few of the positions between its root and its tip, so it is walked; the others are
    // read as ranges.
    auto extend = [](auto& s) {
        const auto root = s.storage().get_entries(EntriesQuery{}).front();
        set_leaf_id(s, id_of(*root));
        for (int i = 0; i < 40; ++i)
            append_message(s, UserMessage{"long " + std::to_string(i), 8, {}});
        set_leaf_id(s, id_of(*root));
        append_message(s, UserMessage{"short", 9, {}});
    };
    auto m = branchy(memory, "depths");
    extend(m);
    Raw raw(db);
    const std::string depths_sql =
        "SELECT string_agg(seq || ':' || depth, ',' ORDER BY seq) FROM entries";
    std::string written;
    {
        PostgresSessionRepo repo(db, o);
        auto p = branchy(repo, "depths");
        extend(p);
        REQUIRE(observe(p) == observe(m));
        written = raw.text(depths_sql);
    }
    // Each depth as the parent ids give it.
    std::map<std::string, int> depth_of;
    std::string expected;
    std::int64_t seq = 0;
    for (const auto& e : m.storage().get_entries(EntriesQuery{})) {
        const auto parent = parent_id_of(*e);
        depth_of[id_of(*e)] = parent ? depth_of.at(*parent) + 1 : 0;
        if (seq++ > 0) expected += ",";
        expected += std::to_string(seq) + ":" + std::to_string(depth_of[id_of(*e)]);
    }
    CHECK(written == expected);
    const std::string strategies_sql =
        "SELECT string_agg(DISTINCT (x.seq - x.path_start_seq + 1 <= 4 * (x.depth - p.depth + "
        "1))::text, ',') FROM entries x JOIN entries p ON p.session_id = x.session_id AND p.seq = "
        "x.path_start_seq";
    CHECK(raw.text(strategies_sql) == "false,true");

    // The database as version 2 left it: no depths, the foreign key (and no search index, which
    // versions 4 and 6 add).
    raw.exec("ALTER TABLE entries DROP COLUMN words");
    raw.exec("ALTER TABLE entries DROP COLUMN word_count");
    raw.exec("ALTER TABLE entries DROP COLUMN base_word_count");
    raw.exec("DROP TABLE search_words");
    raw.exec("ALTER TABLE entries DROP COLUMN depth");
    raw.exec(
        "ALTER TABLE entries ADD CONSTRAINT entries_session_id_fkey FOREIGN KEY (session_id) "
        "REFERENCES sessions (id) ON DELETE CASCADE");
    raw.exec("DELETE FROM agentcore_schema_migrations WHERE version >= 3");
    CHECK(error_of([&] { (void)PostgresSessionStorage::open_read_only(db, "depths", o); }) ==
          ErrorCode::invalid_session);
    PostgresSessionRepo repo(db, o);
    CHECK(raw.text(depths_sql) == expected);
    CHECK(raw.number("SELECT count(*) FROM information_schema.table_constraints WHERE table_name "
                     "= 'entries' AND constraint_type = 'FOREIGN KEY'") == 0);
    CHECK(raw.number("SELECT count(*) FROM pg_indexes WHERE indexname = "
                     "'entries_children_migrating'") == 0);
    CHECK(observe(open_read_only(repo, "depths")) == observe(m));
    auto p = open(repo, "depths");
    append_message(p, UserMessage{"after the migration", 10, {}});
    append_message(m, UserMessage{"after the migration", 10, {}});
    CHECK(observe(open_read_only(repo, "depths")) == observe(m));
    remove(repo, "depths");
    CHECK(raw.number("SELECT count(*) FROM entries") == 0);
}

TEST_CASE("the server-side fork equals a fork in memory of the same session, whole or along a path",
          "[postgres][fork]") {
    const std::string db = pgt::fresh_database();
    PostgresStorageOptions o = fast();
    o.environment = Environment::deterministic(1'700'000'000'000, 42);
    PostgresSessionRepo repo(db, o);
    InMemorySessionRepo memory(Environment::deterministic(1'700'000'000'000, 42));
    auto p = branchy(repo, "src");
    auto m = branchy(memory, "src");
    REQUIRE(observe(p) == observe(m));
    std::vector<ForkOptions> forks;
    forks.push_back(ForkOptions{});
    for (const auto& e : m.storage().get_entries(EntriesQuery{})) {
        ForkOptions at;
        at.entry_id = id_of(*e);
        at.position = ForkPosition::at;
        forks.push_back(at);
        const AgentMessage* message = message_of(*e);
        if (message && std::holds_alternative<UserMessage>(*message)) {
            ForkOptions before = at;
            before.position = ForkPosition::before;
            forks.push_back(before);
        }
    }
    int n = 0;
    for (auto options : forks) {
        options.session_id = "fork" + std::to_string(n++);
        INFO(options.session_id.value() << " of " << options.entry_id.value_or("the whole tree"));
        auto pf = fork(repo, "src", options);
        auto mf = fork(memory, "src", options);
        CHECK(observe(pf) == observe(mf));
        // The stored lines are the codec's, and the entries those of the memory fork (the
        // header's timestamp aside: each repository has its own clock).
        const std::string exported = pf.storage().export_jsonl();
        CHECK(exported == jsonl_of(pf.storage(), Dialect::native));
        CHECK(exported.substr(exported.find('\n')) ==
              jsonl_of(mf.storage(), Dialect::native)
                  .substr(jsonl_of(mf.storage(), Dialect::native).find('\n')));
        CHECK(pf.storage().metadata().parent_session == std::optional<std::string>("src"));
        auto reopened = open_read_only(repo, *options.session_id);
        CHECK(observe(reopened) == observe(mf));
        append_message(pf, UserMessage{"after the fork", 9, {}});  // the fork is open for writing
    }
    ForkOptions bad;
    bad.entry_id = "nope";
    CHECK(error_of([&] { fork(repo, "src", bad); }) == ErrorCode::invalid_fork_target);
    CHECK(error_of([&] { fork(repo, "missing", ForkOptions{}); }) == ErrorCode::not_found);
    ForkOptions taken;
    taken.session_id = "fork0";
    CHECK(error_of([&] { fork(repo, "src", taken); }) == ErrorCode::already_exists);
}

// Search over the SQLite repository (search.hpp, sqlite_repo.hpp): the FTS5 index is written
// with each append, fork, import and remove, built for databases of the schema before it, never
// takes a query as syntax, and gives the hits of the memory and JSONL repositories.

#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/scratch.hpp"
#include "support/search_corpus.hpp"

#include <agentcore/session.hpp>
#include <agentcore/sqlite/sqlite_repo.hpp>

#include <sqlite3.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace agentcore;
using agentcore::testing::error_of;
using agentcore::testing::ScratchDir;

namespace sqlite_search_tests {

SqliteStorageOptions fast_options() {
    SqliteStorageOptions o;
    o.durability = Durability::os_buffered;
    return o;
}

// One number read with a raw connection, as another program would.
std::int64_t count_of(const std::string& db, const std::string& sql) {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    REQUIRE(sqlite3_prepare_v2(raw, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
    std::int64_t out = -1;
    if (sqlite3_step(s) == SQLITE_ROW) out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close_v2(raw);
    return out;
}

void exec_raw(const std::string& db, const std::string& sql) {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    const int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr);
    sqlite3_close_v2(raw);
    REQUIRE(rc == SQLITE_OK);
}

// The number of search rows marked as holding `word` at least `level` times.
std::string repeats_of(const std::string& word, std::size_t level) {
    return "SELECT count(*) FROM search_repeats WHERE search_repeats MATCH '\"" + word + "~" +
           std::to_string(level) + "\"'";
}

// Takes a session's words out of the search index, as if its writer had been killed before
// moving them there: its entries are all pending again.
void unindex(SqliteSessionRepo& repo, const std::string& id) {
    auto& db = repo.database();
    detail::sqlite::Transaction tx(db);
    detail::sqlite::remove_search_rows(db, id);
    db.statement("DELETE FROM search_rows WHERE session_id = ?1").bind(1, id).run();
    db.statement("UPDATE sessions SET indexed_to = 0 WHERE id = ?1").bind(1, id).run();
    db.statement("INSERT OR IGNORE INTO search_pending_sessions VALUES (?1)").bind(1, id).run();
    tx.commit();
}

// A database of schema version `version` (2 to 6) holding one session `id` in /w whose entries
// are `entries` (native lines), as that version wrote it. Up to version 4 the session's state is
// in its row; at version 3 each entry's text is in the trigram index; at 4 the words of the
// first half are in the word index and those of the second half are pending; at 5 the state is
// in the entries' rows and every entry's words and word counts are indexed, without repeats; at
// 6 with them (and every entry, messages too, in the index by type).
// Repeat marks as versions 6 and 7 wrote them: no level 3.
std::string without_level_3(const std::string& marks) {
    std::string out;
    std::istringstream words(marks);
    for (std::string mark; words >> mark;) {
        if (mark.size() > 2 && mark.compare(mark.size() - 2, 2, "~3") == 0) continue;
        if (!out.empty()) out += ' ';
        out += mark;
    }
    return out;
}

void write_old_database(const std::string& path, std::int64_t version, const std::string& id,
                        const std::vector<SessionTreeEntry>& entries) {
    SessionHeader header;
    header.id = id;
    header.timestamp = "2026-12-01T10:00:00.000Z";
    header.cwd = "/w";
    header.metadata = Json::object();
    detail::sqlite::Database db(path, true, false, std::chrono::milliseconds(1000));
    db.exec(
        "CREATE TABLE agentcore_schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT "
        "NOT NULL) STRICT",
        "test");
    for (std::int64_t v = 0; v < version; ++v) {
        db.exec(detail::sqlite::migrations[v], "test");
        db.statement("INSERT INTO agentcore_schema_migrations VALUES (?1, '2026-12-01')")
            .bind(1, v + 1)
            .run();
    }
    detail::sqlite::SessionState state;
    TreeIndex index;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const SessionTreeEntry& e = entries[i];
        std::optional<std::int64_t> parent;
        if (parent_id_of(e))
            parent = static_cast<std::int64_t>(*index.position(*parent_id_of(e))) + 1;
        if (version >= 5) {
            // The state columns and every entry's words (from 6 on, with their repeats).
            SessionStats after = state.stats;
            after.add(e);
            detail::sqlite::insert_entry_row(db, id, state.next_seq, e, parent,
                                             encode_entry(e, Dialect::native), after);
            detail::sqlite::SearchRowText row = detail::sqlite::search_row_text(e, version);
            if (version < detail::sqlite::repeat_levels_schema_version)
                row.marks = without_level_3(row.marks);
            detail::sqlite::write_search_row(db, id, state.next_seq, row, version);
            index.record(e);
            detail::sqlite::advance(state, e);
            continue;
        }
        const auto row = detail::sqlite::row_of(e);
        db.statement(
              "INSERT INTO entries (session_id, seq, id, parent_seq, type, target_id, label, line) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
            .bind(1, id)
            .bind(2, state.next_seq)
            .bind(3, id_of(e))
            .bind_optional(4, parent)
            .bind(5, type_of(e))
            .bind_optional(6, row.target)
            .bind_optional(7, std::holds_alternative<LabelEntry>(e) ? row.label : std::nullopt)
            .bind(8, encode_entry(e, Dialect::native))
            .run();
        const std::string text = search_index_text(e);
        if (version == 3 && !text.empty())
            db.statement("INSERT INTO search_rows (session_id, seq, text) VALUES (?1, ?2, ?3)")
                .bind(1, id)
                .bind(2, state.next_seq)
                .bind(3, text)
                .run();
        if (version == 4 && !text.empty() && i < entries.size() / 2)
            detail::sqlite::index_search_row(db, id, state.next_seq, e,
                                             detail::sqlite::search_schema_version);
        if (version == 4 && !text.empty() && i >= entries.size() / 2)
            db.statement("INSERT INTO search_pending (session_id, seq, text) VALUES (?1, ?2, ?3)")
                .bind(1, id)
                .bind(2, state.next_seq)
                .bind(3, text)
                .run();
        index.record(e);
        detail::sqlite::advance(state, e);
    }
    // The session's row goes in last here (no foreign keys on this connection).
    if (version >= 5) {
        db.statement(
              "INSERT INTO sessions (id, created, cwd, dialect, header, indexed_to) VALUES (?1, "
              "?2, ?3, 0, ?4, ?5)")
            .bind(1, id)
            .bind(2, header.timestamp)
            .bind(3, header.cwd)
            .bind(4, encode_header(header, Dialect::native))
            .bind(5, static_cast<std::int64_t>(entries.size()))
            .run();
        return;
    }
    auto& insert = db.statement(
        "INSERT INTO sessions (id, created, cwd, dialect, header, next_seq, leaf_id, name, "
        "message_count, cached_tokens, uncached_tokens, total_tokens, cost_total) VALUES (?1, "
        "?2, ?3, 0, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
    insert.bind(1, id)
        .bind(2, header.timestamp)
        .bind(3, header.cwd)
        .bind(4, encode_header(header, Dialect::native))
        .bind(5, state.next_seq)
        .bind_optional(6, state.leaf)
        .bind_optional(7, state.name);
    detail::sqlite::bind_stats(insert, 8, state.stats).run();
}

// Entries of every kind the old rows keep state for: messages with usage, a name set and
// cleared and set again, labels, a leaf moved back.
std::vector<SessionTreeEntry> old_entries() {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 3));
    auto s = create(memory, CreateOptions{std::string("m"), "/w", {}, std::nullopt});
    const std::string first = append_message(s, UserMessage{"the Ölçer migration", 1, {}});
    AssistantMessage reply;
    reply.content = {TextContent{"checked getUserById in zürich"}};
    reply.usage.input = 100;
    reply.usage.output = 20;
    reply.usage.total_tokens = 120;
    reply.usage.cost.total = 0.5;
    append_message(s, reply);
    append_session_name(s, "first name");
    append_label(s, first, std::string("zürich"));
    append_session_name(s, "  ");
    append_message(s, UserMessage{"lookup of the login page", 1, {}});
    append_message(s, UserMessage{"retry, retry and retry again", 1, {}});
    append_session_name(s, " kept name ");
    set_leaf_id(s, std::optional<std::string>(first));
    append_message(s, UserMessage{"after the move", 1, {}});
    std::vector<SessionTreeEntry> out;
    for (const auto& e : s.storage().get_entries()) out.push_back(*e);
    return out;
}

template <class Repo>
std::vector<std::pair<std::string, std::string>> keys_of(const Repo& repo, std::string_view q,
                                                         SearchOptions o = {}) {
    o.limit = 1000000;
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& h : search(repo, q, o).hits) out.emplace_back(h.session_id, h.entry_id);
    return out;
}

}  // namespace sqlite_search_tests

using sqlite_search_tests::count_of;
using sqlite_search_tests::exec_raw;
using sqlite_search_tests::keys_of;
using sqlite_search_tests::repeats_of;

// The entries whose words are not yet in the FTS5 index.
constexpr const char* pending_rows =
    "SELECT count(*) FROM sessions s JOIN entries e ON e.session_id = s.id AND e.seq > "
    "s.indexed_to";
// The sessions listed as having pending entries.
constexpr const char* pending_sessions = "SELECT count(*) FROM search_pending_sessions";

TEST_CASE("SQLite, JSONL and memory give the same hits, order, snippets and pages on one corpus",
          "[sqlite][search]") {
    ScratchDir dir;
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    agentcore::testing::write_search_corpus(memory, 31, 60);
    SqliteSessionRepo sqlite(dir.file("s.db"), sqlite_search_tests::fast_options());
    JsonlSessionRepo jsonl(dir.path() + "/sessions");
    for (const auto& l : list(memory).sessions) {
        copy_session(memory, sqlite, l.header.id);
        copy_session(memory, jsonl, l.header.id);
    }
    // Both parts of the index are used: words moved into FTS5, and the entries of every third
    // session pending (as a writer killed before moving them leaves them).
    std::size_t n = 0;
    for (const auto& l : list(sqlite).sessions)
        if (n++ % 3 == 0) sqlite_search_tests::unindex(sqlite, l.header.id);
    AnyRepository any = open_repository("sqlite:" + dir.file("s.db"));
    CHECK(count_of(dir.file("s.db"), "SELECT count(*) FROM search_rows") > 0);
    CHECK(count_of(dir.file("s.db"), pending_rows) > 0);
    const std::vector<std::pair<std::string, SearchOptions>> queries{
        {"login", {}},
        {"login bug", {}},
        {"\"fixed the\"", {}},
        {"caf* -timeout", {}},
        {"ΑΘΗΝΑ sofia", {}},
        {"σοφια", {}},
        {"ЁЛКА", {}},
        {"strasse zurich", {}},
        {"rare_zebra_word", {}},
        {"東京", {}},
        {"or", {}},
        {"near AND", {}},
        {"o'brien", {}},
        {"\"quoted\"", {}},
        {"50%", {}},
        {"user.name", {}},
        {"getUserById", {.mode = SearchMode::substring}},
        {"auth/login.c", {.mode = SearchMode::substring}},
        {"\"e br\"", {.mode = SearchMode::substring}},
        {"USERBY -zurich", {.mode = SearchMode::substring}},
        {"o'b", {.mode = SearchMode::substring}},
        {"ed\"", {.mode = SearchMode::substring}},
        {"etUserB", {.mode = SearchMode::substring}},
        {"ogin", {.mode = SearchMode::substring}},
        {"/login.", {.mode = SearchMode::substring}},
        {"\"ке \"", {.mode = SearchMode::substring}},
        {"ca*", {}},
        {"session", {.order = SearchOrder::newest, .limit = 9}},
        {"token", {.cwd = "/work/lib", .exclude_roles = {"tool_result"}}},
        {"retry", {.text = {.thinking = true}, .roles = {"assistant"}}},
        {"cache", {.metadata = Json{{"team", "web"}}}},
        {"deploy", {.types = {"compaction", "branch_summary", "label", "session_info"}}},
        {"database", {.text = {.tool_results = false}}},
        {"migration", {.text = {.tool_result_cap = 20}}},
    };
    std::size_t nonempty = 0;
    for (const auto& [q, o] : queries) {
        INFO(q);
        const SearchResult expected = search(memory, q, o);
        if (!expected.hits.empty()) ++nonempty;
        for (const SearchResult& got :
             {search(sqlite, q, o), search(jsonl, q, o), search(any, q, o)}) {
            REQUIRE(got.hits.size() == expected.hits.size());
            for (std::size_t i = 0; i < got.hits.size(); ++i) {
                CHECK(got.hits[i].cursor() == expected.hits[i].cursor());
                CHECK(got.hits[i].entry_id == expected.hits[i].entry_id);
                CHECK(got.hits[i].entry_type == expected.hits[i].entry_type);
                CHECK(got.hits[i].role == expected.hits[i].role);
                CHECK(got.hits[i].session_name == expected.hits[i].session_name);
                CHECK(got.hits[i].snippet == expected.hits[i].snippet);
                CHECK(got.hits[i].marks == expected.hits[i].marks);
            }
            CHECK(got.next == expected.next);
        }
        // The next page too.
        if (expected.next) {
            SearchOptions after = o;
            after.after = expected.next;
            const SearchResult page = search(memory, q, after);
            const SearchResult got = search(sqlite, q, after);
            REQUIRE(got.hits.size() == page.hits.size());
            for (std::size_t i = 0; i < got.hits.size(); ++i)
                CHECK(got.hits[i].cursor() == page.hits[i].cursor());
        }
    }
    CHECK(nonempty >= queries.size() - 2);
}

TEST_CASE("the index follows appends, forks, imports and removes, in their transactions",
          "[sqlite][search]") {
    ScratchDir dir;
    const std::string db = dir.file("s.db");
    SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
    auto s = create(repo, CreateOptions{std::string("a"), "/w", {}, std::nullopt});
    CHECK(keys_of(repo, "zanzibar").empty());
    const std::string u = append_message(s, UserMessage{"Trip to Zanzibar", 1, {}});
    CHECK(keys_of(repo, "zanzibar") == std::vector<std::pair<std::string, std::string>>{{"a", u}});
    // An append that fails writes no search row either.
    UserMessage again{"zanzibar again", 1, {}};
    MessageEntry duplicate;
    duplicate.id = u;
    duplicate.parent_id = u;
    duplicate.timestamp = "2026-12-02T07:43:23.123Z";
    duplicate.message = again;
    CHECK(error_of([&] { s.storage().append_entry(duplicate); }) == ErrorCode::already_exists);
    CHECK(count_of(db, "SELECT count(*) FROM entries") == 1);
    CHECK(keys_of(repo, "zanzibar").size() == 1);
    // Entries with nothing to search get no row once their words are moved (as the writer
    // closes).
    append_thinking_level_change(s, "high");
    CHECK(count_of(db, pending_rows) == 2);
    CHECK(count_of(db, pending_sessions) == 1);
    s = create(repo, CreateOptions{std::string("other"), "/w", {}, std::nullopt});
    CHECK(count_of(db, pending_rows) == 0);
    CHECK(count_of(db, pending_sessions) == 0);
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == 1);
    CHECK(count_of(db, "SELECT indexed_to FROM sessions WHERE id = 'a'") == 2);
    CHECK(keys_of(repo, "zanzibar").size() == 1);
    auto f = fork(repo, "a",
                  ForkOptions{std::nullopt, ForkPosition::before, std::string("b"), std::nullopt,
                              std::nullopt});
    CHECK(keys_of(repo, "zanzibar").size() == 2);
    InMemorySessionRepo memory;
    auto m = create(memory, CreateOptions{std::string("c"), "/w", {}, std::nullopt});
    append_message(m, UserMessage{"zanzibar from memory", 1, {}});
    copy_session(memory, repo, "c");
    CHECK(keys_of(repo, "zanzibar").size() == 3);
    CHECK(keys_of(repo, "zanzibar", {.cwd = "/elsewhere"}).empty());
    remove(repo, "a");
    remove(repo, "b");
    CHECK(keys_of(repo, "zanzibar") ==
          std::vector<std::pair<std::string, std::string>>{
              {"c", id_of(*open_read_only(repo, "c").storage().get_entries().front())}});
    CHECK(count_of(db, "SELECT count(*) FROM search_rows WHERE session_id IN ('a', 'b')") == 0);
    // The FTS5 index agrees with its rows (its own integrity check).
    exec_raw(db, "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)");
}

TEST_CASE("an import or fork writes its entries' words straight into the FTS5 index",
          "[sqlite][search]") {
    ScratchDir dir;
    const std::string db = dir.file("s.db");
    SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
    InMemorySessionRepo memory;
    auto m = create(memory, CreateOptions{std::string("many"), "/w", {}, std::nullopt});
    const std::size_t n = 70;
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < n; ++i)
        ids.push_back(append_message(m, UserMessage{"bulk word" + std::to_string(i), 1, {}}));
    append_thinking_level_change(m, "high");  // nothing to search: no row
    copy_session(memory, repo, "many");
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == static_cast<std::int64_t>(n));
    CHECK(count_of(db, pending_rows) == 0);
    CHECK(keys_of(repo, "word7") ==
          std::vector<std::pair<std::string, std::string>>{{"many", ids[7]}});
    CHECK(keys_of(repo, "bulk").size() == n);
    ForkOptions f;
    f.session_id = std::string("forked");
    fork(repo, "many", f);
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == static_cast<std::int64_t>(2 * n));
    CHECK(count_of(db, pending_rows) == 0);
    CHECK(keys_of(repo, "word7").size() == 2);
    // A small one too.
    auto small = create(memory, CreateOptions{std::string("small"), "/w", {}, std::nullopt});
    append_message(small, UserMessage{"bulk word small", 1, {}});
    copy_session(memory, repo, "small");
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == static_cast<std::int64_t>(2 * n + 1));
    CHECK(count_of(db, pending_rows) == 0);
    CHECK(keys_of(repo, "bulk").size() == 2 * n + 1);
    remove(repo, "many");
    remove(repo, "forked");
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == 1);
    CHECK(keys_of(repo, "bulk").size() == 1);
    exec_raw(db, "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)");
}

TEST_CASE("an entry's repeated words go into the FTS5 index once, and come out whatever it held",
          "[sqlite][search]") {
    ScratchDir dir;
    const std::string db = dir.file("s.db");
    SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
    InMemorySessionRepo memory;
    for (const std::string id : {"a", "b"}) {
        auto m = create(memory, CreateOptions{id, "/w", {}, std::nullopt});
        append_message(m, UserMessage{"gamma gamma gamma delta " + id + "only", 1, {}});
        copy_session(memory, repo, id);
    }
    const auto vocab = [&](const std::string& term) {
        return count_of(
            db, "SELECT coalesce(sum(doc), 0) FROM search_vocab WHERE term = '" + term + "'");
    };
    // Each row holds 3 words for FTS5 (its size, in tokens, is a one-byte varint), and is found
    // by each of them; the repeats are in the marks.
    CHECK(count_of(db, "SELECT count(*) FROM search_index_docsize WHERE hex(sz) = '03'") == 2);
    CHECK(vocab("gamma") == 2);
    CHECK(keys_of(repo, "gamma delta").size() == 2);
    CHECK(count_of(db, "SELECT count(*) FROM search_repeats('\"gamma~3\"')") == 2);
    // Session b's row written as an earlier version wrote it, with its repeats: removing the
    // session takes it out all the same.
    const std::int64_t row = count_of(db, "SELECT row FROM search_rows WHERE session_id = 'b'");
    const std::string r = std::to_string(row);
    exec_raw(db, "INSERT INTO search_index (search_index, rowid, text) VALUES ('delete', " + r +
                     ", 'bonly delta gamma');"
                     "INSERT INTO search_index (rowid, text) VALUES (" +
                     r + ", 'gamma gamma gamma delta bonly')");
    CHECK(keys_of(repo, "bonly").size() == 1);
    remove(repo, "b");
    CHECK(vocab("bonly") == 0);
    CHECK(vocab("gamma") == 1);
    remove(repo, "a");
    CHECK(count_of(db, "SELECT count(*) FROM search_vocab") == 0);
    exec_raw(db, "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)");
}

TEST_CASE("the index is what narrows a search down: emptied, it finds nothing that needs it",
          "[sqlite][search]") {
    ScratchDir dir;
    const std::string db = dir.file("s.db");
    SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
    auto s = create(repo, CreateOptions{std::string("a"), "/w", {}, std::nullopt});
    append_message(s, UserMessage{"go to the login page", 1, {}});
    CHECK(keys_of(repo, "login").size() == 1);
    exec_raw(db, "DELETE FROM search_rows; UPDATE sessions SET indexed_to = 1000");
    CHECK(keys_of(repo, "login").empty());
    CHECK(keys_of(repo, "go to").empty());
    CHECK(keys_of(repo, "lo*").empty());
    CHECK(keys_of(repo, "ogin", {.mode = SearchMode::substring}).empty());
    // A query that gives the index no condition reads the sessions.
    CHECK(keys_of(repo, "t*").size() == 1);
    CHECK(keys_of(repo, "\"o t\"", {.mode = SearchMode::substring}).size() == 1);
}

namespace sqlite_search_tests {

// What a migrated database must give: the session as the old version held it, found by its
// words, its stats, name and leaf read from its rows, and appends that go on from there.
void check_migrated(const std::string& db, std::int64_t from) {
    INFO("from schema version " << from);
    const std::vector<SessionTreeEntry> entries = old_entries();
    write_old_database(db, from, "old", entries);
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 3));
    auto expected = create(memory, CreateOptions{std::string("m"), "/w", {}, std::nullopt});
    for (const auto& e : entries) expected.storage().append_entry(e);
    // A read-only open does not migrate.
    CHECK(error_of([&] { (void)SqliteSessionStorage::open_read_only(db, "old"); }) ==
          ErrorCode::invalid_session);
    SqliteSessionRepo repo(db, fast_options());
    CHECK(count_of(db, "SELECT max(version) FROM agentcore_schema_migrations") ==
          detail::sqlite::schema_version);
    CHECK(count_of(db,
                   "SELECT count(*) FROM pragma_table_info('sessions') WHERE name IN "
                   "('next_seq', 'leaf_id', 'name', 'message_count', 'cost_total')") == 0);
    CHECK(count_of(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'search_pending'") == 0);
    CHECK(count_of(db, pending_rows) == 0);
    CHECK(count_of(db, pending_sessions) == 0);
    // Every search row has the word counts of its entry's text.
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") > 0);
    CHECK(count_of(db,
                   "SELECT count(*) FROM search_rows WHERE words IS NULL OR base_words IS "
                   "NULL") == 0);
    {
        auto s = open_read_only(repo, "old");
        CHECK(s.storage().entry_count() == entries.size());
        CHECK(s.storage().get_leaf_id() == expected.storage().get_leaf_id());
        CHECK(s.storage().get_session_name() == std::optional<std::string>("kept name"));
        const SessionStats stats = s.storage().get_session_stats();
        const SessionStats want = expected.storage().get_session_stats();
        CHECK(stats.message_count == want.message_count);
        CHECK(stats.total_tokens == want.total_tokens);
        CHECK(stats.cached_tokens == want.cached_tokens);
        CHECK(stats.cost_total == want.cost_total);
        CHECK(s.storage().get_label(id_of(entries[0])) == std::optional<std::string>("zürich"));
        const auto listed = list(repo, ListOptions{.summaries = true});
        REQUIRE(listed.sessions.size() == 1);
        REQUIRE(listed.sessions[0].summary);
        CHECK(listed.sessions[0].summary->name == std::optional<std::string>("kept name"));
        CHECK(listed.sessions[0].summary->entry_count == entries.size());
    }
    CHECK(keys_of(repo, "olcer").size() == 1);
    CHECK(keys_of(repo, "ZURICH").size() == 2);  // the message and the label
    CHECK(keys_of(repo, "login").size() == 1);
    CHECK(keys_of(repo, "move").size() == 1);
    CHECK(keys_of(repo, "UserBy", {.mode = SearchMode::substring}).size() == 1);
    // The index by type leaves messages out, and the reads by type use it.
    CHECK(count_of(db,
                   "SELECT count(*) FROM sqlite_schema WHERE name = 'entries_by_type' AND sql LIKE "
                   "'%WHERE type <> ''message''%'") == 1);
    CHECK(count_of(db,
                   "SELECT count(*) FROM entries INDEXED BY entries_by_type WHERE type <> "
                   "'message'") == 5);
    {
        const auto s = open_read_only(repo, "old");
        CHECK(s.storage().find_entries("session_info").size() == 3);
        CHECK(s.storage().find_entries("label").size() == 1);
        CHECK(s.storage().find_entries("message").size() == 5);
    }
    // The repeated words of the stored entries are marked.
    CHECK(count_of(db, repeats_of("retry", 2)) == 1);
    CHECK(count_of(db, repeats_of("retry", 3)) == 1);
    CHECK(count_of(db, repeats_of("retry", 4)) == 0);
    CHECK(count_of(db, repeats_of("login", 2)) == 0);
    {
        auto s = open(repo, "old");
        append_message(s, UserMessage{"appended after the migration", 1, {}});
        CHECK(s.storage().entry_count() == entries.size() + 1);
        CHECK(s.storage().get_session_stats().message_count == 6);
    }
    CHECK(keys_of(repo, "appended").size() == 1);
    CHECK(open_read_only(repo, "old").storage().get_session_name() ==
          std::optional<std::string>("kept name"));
    exec_raw(db, "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)");
    CHECK(
        count_of(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check <> 'ok'") ==
        0);
    remove(repo, "old");
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == 0);
    CHECK(count_of(db, "SELECT count(*) FROM search_vocab") == 0);
    CHECK(count_of(db, repeats_of("retry", 2)) == 0);
}

}  // namespace sqlite_search_tests

TEST_CASE("databases of every older schema are migrated: state, words and appends carry over",
          "[sqlite][search][schema]") {
    ScratchDir dir;
    // 2: before search; 3: the trigram index; 4: the word index with pending rows and the
    // session's state in its row; 5: the state in the entries' rows, no repeats marked; 6:
    // messages in the index by type; 7: repeats marked at 2, 4 and 8 only.
    for (std::int64_t from = 2; from <= 7; ++from)
        sqlite_search_tests::check_migrated(dir.file("v" + std::to_string(from) + ".db"), from);
    // Version 3's trigram tables and triggers are gone.
    CHECK(count_of(dir.file("v3.db"),
                   "SELECT count(*) FROM sqlite_schema WHERE name LIKE "
                   "'search_rows_%'") == 0);
}

TEST_CASE("pending words move into the FTS5 index every search_pending_rows appends and at close",
          "[sqlite][search]") {
    ScratchDir dir;
    const std::string db = dir.file("s.db");
    SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
    const auto n = static_cast<std::size_t>(detail::sqlite::search_pending_rows);
    std::vector<std::string> ids;
    {
        auto s = create(repo, CreateOptions{std::string("p"), "/w", {}, std::nullopt});
        for (std::size_t i = 0; i < n + 10; ++i)
            ids.push_back(append_message(
                s,
                UserMessage{
                    "entry w" + std::to_string(i) + " of getUserById" + std::to_string(i), 1, {}}));
        CHECK(count_of(db, "SELECT count(*) FROM search_rows") == static_cast<std::int64_t>(n));
        CHECK(count_of(db, pending_rows) == 10);
        CHECK(count_of(db, pending_sessions) == 1);
        // Moved and pending entries are found alike, by words, prefixes and parts of words.
        const auto one = [&](std::size_t i) {
            return std::vector<std::pair<std::string, std::string>>{{"p", ids[i]}};
        };
        CHECK(keys_of(repo, "w3") == one(3));
        CHECK(keys_of(repo, "w" + std::to_string(n + 3)) == one(n + 3));
        CHECK(keys_of(repo, "getuserbyid7*").size() == 11);  // 7, 70..79
        CHECK(keys_of(repo, "serById" + std::to_string(n + 5), {.mode = SearchMode::substring}) ==
              one(n + 5));
        CHECK(keys_of(repo, "serById12", {.mode = SearchMode::substring}).size() == 11);
        CHECK(keys_of(repo, "entry").size() == n + 10);
        CHECK(keys_of(repo, "entry", {.cwd = "/elsewhere"}).empty());
    }
    // The writer closed: nothing pending.
    CHECK(count_of(db, pending_rows) == 0);
    CHECK(count_of(db, pending_sessions) == 0);
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == static_cast<std::int64_t>(n + 10));
    CHECK(keys_of(repo, "entry").size() == n + 10);
    // A pending line damaged by hand is reported by any search, naming session and position.
    {
        auto s = open(repo, "p");
        append_message(s, UserMessage{"one more", 1, {}});
        const std::string at = "session_id = 'p' AND seq = " + std::to_string(n + 11);
        exec_raw(db, "CREATE TABLE saved AS SELECT line FROM entries WHERE " + at +
                         "; UPDATE entries SET line = '{\"type\":' WHERE " + at);
        try {
            search(repo, "entry");
            FAIL("no error");
        } catch (const SessionError& e) {
            CHECK(e.code() == ErrorCode::invalid_entry);
            CHECK(std::string(e.what()).find("entry " + std::to_string(n + 11)) !=
                  std::string::npos);
        }
        exec_raw(db, "UPDATE entries SET line = (SELECT line FROM saved) WHERE " + at +
                         "; DROP TABLE saved");
        CHECK(keys_of(repo, "more").size() == 1);
    }
    CHECK(keys_of(repo, "more").size() == 1);  // moved into the index at the close
    // The words FTS5 was given are taken out again with the session, and its pending mark.
    {
        auto s = open(repo, "p");
        append_message(s, UserMessage{"pending at the remove", 1, {}});
        CHECK(count_of(db, pending_sessions) == 1);
        remove(repo, "p");
    }
    CHECK(count_of(db, pending_sessions) == 0);
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == 0);
    CHECK(count_of(db, "SELECT count(*) FROM search_vocab") == 0);
    exec_raw(db, "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)");
}

TEST_CASE("pages by relevance read candidates best bound first and give every page exactly",
          "[sqlite][search]") {
    ScratchDir dir;
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 11, 997));
    agentcore::testing::write_search_corpus(memory, 23, 50);
    SqliteSessionRepo sqlite(dir.file("s.db"), sqlite_search_tests::fast_options());
    for (const auto& l : list(memory).sessions) copy_session(memory, sqlite, l.header.id);
    // Some entries pending (no bound: read first), and rows without counts (as rows written
    // before them: no bound either).
    std::size_t n = 0;
    for (const auto& l : list(sqlite).sessions)
        if (n++ % 4 == 0) sqlite_search_tests::unindex(sqlite, l.header.id);
    exec_raw(dir.file("s.db"), "UPDATE search_rows SET words = NULL WHERE row % 7 = 0");
    AnyRepository any = open_repository("sqlite:" + dir.file("s.db"));
    std::size_t paged = 0;
    agentcore::testing::for_each_relevance_case([&](const std::string& q, SearchOptions o) {
        INFO(q << " limit " << o.limit << " tool_results " << o.text.tool_results << " cap "
               << o.text.tool_result_cap);
        // The first pages, as memory gives them (and the last, where the hits end).
        for (int page = 0; page < agentcore::testing::relevance_pages(6); ++page) {
            const SearchResult expected = search(memory, q, o);
            const SearchResult got = search(sqlite, q, o);
            const SearchResult erased = search(any, q, o);
            REQUIRE(got.hits.size() == expected.hits.size());
            REQUIRE(erased.hits.size() == expected.hits.size());
            for (std::size_t i = 0; i < got.hits.size(); ++i) {
                CHECK(got.hits[i].cursor() == expected.hits[i].cursor());
                CHECK(erased.hits[i].cursor() == expected.hits[i].cursor());
                CHECK(got.hits[i].snippet == expected.hits[i].snippet);
            }
            REQUIRE(got.next == expected.next);
            if (!expected.next) break;
            ++paged;
            o.after = expected.next;
        }
    });
    CHECK(paged > 100);
}

TEST_CASE("hostile queries reach FTS5 as string literals only", "[sqlite][search]") {
    ScratchDir dir;
    // The same clock and ids on both sides: the same entry ids.
    SqliteStorageOptions options = sqlite_search_tests::fast_options();
    options.environment = Environment::deterministic(1796197403123, 5);
    SqliteSessionRepo repo(dir.file("s.db"), options);
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 5));
    const auto fill = [](auto& r) {
        auto s = create(r, CreateOptions{std::string("h"), "/w", {}, std::nullopt});
        append_message(s, UserMessage{"NEAR(login bug, 2) AND x OR y NOT z", 1, {}});
        append_message(s, UserMessage{"text: \"quoted\" col:value {a b} ^start", 1, {}});
        append_message(s, UserMessage{"x'); DROP TABLE entries; --", 1, {}});
    };
    fill(repo);
    fill(memory);
    for (const std::string q :
         {"NEAR(login bug, 2)", "login AND bug", "x OR y", "NOT z", "\"quoted\"", "col:value",
          "{a b}", "^start", "text:", "x'); DROP TABLE entries; --", "DROP TABLE entries",
          "login* bug*", "'quoted'", "\"NEAR(login\"*"}) {
        INFO(q);
        CHECK(keys_of(repo, q) == keys_of(memory, q));
        // Substring mode refuses terms under three characters on every repository alike.
        const auto substring = [&q](const auto& r) {
            try {
                return std::pair(keys_of(r, q, {.mode = SearchMode::substring}), true);
            } catch (const SessionError& e) {
                CHECK(e.code() == ErrorCode::invalid_query);
                return std::pair(std::vector<std::pair<std::string, std::string>>{}, false);
            }
        };
        CHECK(substring(repo) == substring(memory));
    }
    CHECK(keys_of(repo, "NEAR(login bug, 2)").size() == 1);
    CHECK(keys_of(repo, "\"DROP TABLE entries\"", {.mode = SearchMode::substring}).size() == 1);
    CHECK(count_of(dir.file("s.db"), "SELECT count(*) FROM entries") == 3);
    CHECK(error_of([&] { search(repo, "\"NEAR"); }) == ErrorCode::invalid_query);
    CHECK(error_of([&] { search(repo, "*"); }) == ErrorCode::invalid_query);
}

TEST_CASE("repeated words are marked, bound the score, and go with their session",
          "[sqlite][search]") {
    ScratchDir dir;
    const std::string db = dir.file("s.db");
    SqliteSessionRepo sqlite(db, sqlite_search_tests::fast_options());
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 5, 997));
    // The best hit of `zeta` holds it 7 times (marked at 4, so at most 7); entries holding it 4
    // times in fewer words come close, and many hold it once. A bound that let 7 occurrences
    // count as fewer would leave the best hit unread at limit 1.
    auto best = create(memory, CreateOptions{std::string("best"), "/w", {}, std::nullopt});
    append_message(best, UserMessage{"zeta zeta zeta zeta zeta zeta zeta", 1, {}});
    for (int i = 0; i < 3; ++i) {
        auto near =
            create(memory, CreateOptions{"near" + std::to_string(i), "/w", {}, std::nullopt});
        append_message(near, UserMessage{"zeta zeta zeta zeta", 1, {}});
    }
    for (int i = 0; i < 40; ++i) {
        auto once =
            create(memory, CreateOptions{"once" + std::to_string(i), "/w", {}, std::nullopt});
        append_message(once, UserMessage{"zeta once " + std::to_string(i), 1, {}});
        append_message(once, UserMessage{"zeta zeta, then", 1, {}});
    }
    for (const auto& l : list(memory, ListOptions{.limit = 1000}).sessions)
        copy_session(memory, sqlite, l.header.id);
    CHECK(count_of(db, repeats_of("zeta", 2)) == 44);
    CHECK(count_of(db, repeats_of("zeta", 4)) == 4);
    CHECK(count_of(db, repeats_of("zeta", 8)) == 0);
    CHECK(count_of(db, repeats_of("once", 2)) == 0);
    for (const std::string q : {"zeta", "\"zeta zeta\"", "zeta then", "zeta -once"}) {
        for (const std::size_t limit : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
            INFO(q << " limit " << limit);
            SearchOptions o;
            o.limit = limit;
            const SearchResult expected = search(memory, q, o);
            const SearchResult got = search(sqlite, q, o);
            REQUIRE(got.hits.size() == expected.hits.size());
            for (std::size_t i = 0; i < got.hits.size(); ++i)
                CHECK(got.hits[i].cursor() == expected.hits[i].cursor());
            CHECK(got.next == expected.next);
        }
    }
    CHECK(search(sqlite, "zeta", SearchOptions{.limit = 1}).hits.at(0).session_id == "best");
    // Removing a session takes its marks out of the index with its words.
    remove(sqlite, "best");
    remove(sqlite, "near0");
    CHECK(count_of(db, repeats_of("zeta", 2)) == 42);
    CHECK(count_of(db, repeats_of("zeta", 4)) == 2);
    CHECK(search(sqlite, "zeta", SearchOptions{.limit = 1}).hits.at(0).session_id == "near1");
    exec_raw(db, "INSERT INTO search_repeats (search_repeats, rank) VALUES ('integrity-check', 1)");
}

TEST_CASE("a tool result cut by its cap inside a word gives the same hits on every storage",
          "[sqlite][search]") {
    ScratchDir dir;
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 6, 997));
    // The default cap (4096 bytes) falls inside `loginword`, and inside a three-byte letter
    // of `ḁbc` (U+1E01) in a second result: each word is left out whole.
    std::string ascii;
    while (ascii.size() < 4092) ascii += "x ";
    ascii.resize(4092);
    ascii += " loginword tail";
    REQUIRE(ascii.substr(4093, 9) == "loginword");
    std::string wide;
    while (wide.size() < 4095) wide += "y ";
    wide.resize(4094);
    wide +=
        " \xE1\xB8\x81"
        "bc end";
    REQUIRE(wide.substr(4095, 3) == "\xE1\xB8\x81");
    auto s = create(memory, CreateOptions{std::string("cut"), "/w", {}, std::nullopt});
    append_message(s, UserMessage{"run the tool", 1, {}});
    for (const std::string& text : {ascii, wide}) {
        ToolResultMessage r;
        r.tool_call_id = "c";
        r.tool_name = "bash";
        r.content = {TextContent{text}};
        append_message(s, r);
    }
    SqliteSessionRepo sqlite(dir.file("s.db"), sqlite_search_tests::fast_options());
    JsonlSessionRepo jsonl(dir.path() + "/sessions");
    copy_session(memory, sqlite, "cut");
    copy_session(memory, jsonl, "cut");
    for (const std::string q : {"log", "logi", "loginword", "tail",
                                "\xE1\xB8\x81"
                                "bc",
                                "y"}) {
        for (const std::size_t cap : {std::size_t{4096}, max_tool_result_cap}) {
            INFO(q << " cap " << cap);
            SearchOptions o;
            o.text.tool_result_cap = cap;
            const auto expected = keys_of(memory, q, o);
            CHECK(keys_of(sqlite, q, o) == expected);
            CHECK(keys_of(jsonl, q, o) == expected);
            const bool whole = cap == max_tool_result_cap;
            if (q == "log" || q == "logi") CHECK(expected.empty());
            if (q == "loginword" || q == "tail" ||
                q == "\xE1\xB8\x81"
                     "bc")
                CHECK(expected.size() == (whole ? 1U : 0U));
            if (q == "y") CHECK(expected.size() == 1);
        }
    }
}

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

// The entries the search index holds: moved into FTS5 or pending.
constexpr const char* indexed_rows =
    "SELECT (SELECT count(*) FROM search_rows) + (SELECT count(*) FROM search_pending)";

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
    AnyRepository any = open_repository("sqlite:" + dir.file("s.db"));
    // Both parts of the index are used: rows moved into FTS5 and rows still pending.
    CHECK(count_of(dir.file("s.db"), "SELECT count(*) FROM search_rows") > 0);
    CHECK(count_of(dir.file("s.db"), "SELECT count(*) FROM search_pending") > 0);
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
    const auto rows = count_of(db, indexed_rows);
    CHECK(error_of([&] { s.storage().append_entry(duplicate); }) == ErrorCode::already_exists);
    CHECK(count_of(db, indexed_rows) == rows);
    CHECK(keys_of(repo, "zanzibar").size() == 1);
    // Entries with nothing to search have no row.
    append_thinking_level_change(s, "high");
    CHECK(count_of(db, indexed_rows) == rows);
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
    CHECK(count_of(db, "SELECT count(*) FROM search_pending WHERE session_id IN ('a', 'b')") == 0);
    // The FTS5 index agrees with its rows (its own integrity check).
    exec_raw(db, "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)");
}

TEST_CASE("an import or fork of many entries writes their words straight into the FTS5 index",
          "[sqlite][search]") {
    ScratchDir dir;
    const std::string db = dir.file("s.db");
    SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
    InMemorySessionRepo memory;
    auto m = create(memory, CreateOptions{std::string("many"), "/w", {}, std::nullopt});
    const std::size_t n = detail::sqlite::bulk_search_entries + 6;
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < n; ++i)
        ids.push_back(append_message(m, UserMessage{"bulk word" + std::to_string(i), 1, {}}));
    append_thinking_level_change(m, "high");  // nothing to search: no row
    copy_session(memory, repo, "many");
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == static_cast<std::int64_t>(n));
    CHECK(count_of(db, "SELECT count(*) FROM search_pending") == 0);
    CHECK(keys_of(repo, "word7") ==
          std::vector<std::pair<std::string, std::string>>{{"many", ids[7]}});
    CHECK(keys_of(repo, "bulk").size() == n);
    ForkOptions f;
    f.session_id = std::string("forked");
    fork(repo, "many", f);
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == static_cast<std::int64_t>(2 * n));
    CHECK(count_of(db, "SELECT count(*) FROM search_pending") == 0);
    CHECK(keys_of(repo, "word7").size() == 2);
    // A small one goes through search_pending, as appends do.
    auto small = create(memory, CreateOptions{std::string("small"), "/w", {}, std::nullopt});
    append_message(small, UserMessage{"bulk word small", 1, {}});
    copy_session(memory, repo, "small");
    CHECK(count_of(db, "SELECT count(*) FROM search_pending") == 1);
    CHECK(keys_of(repo, "bulk").size() == 2 * n + 1);
    remove(repo, "many");
    remove(repo, "forked");
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") == 0);
    CHECK(keys_of(repo, "bulk").size() == 1);
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
    exec_raw(db, "DELETE FROM search_rows; DELETE FROM search_pending");
    CHECK(keys_of(repo, "login").empty());
    CHECK(keys_of(repo, "go to").empty());
    CHECK(keys_of(repo, "lo*").empty());
    CHECK(keys_of(repo, "ogin", {.mode = SearchMode::substring}).empty());
    // A query that gives the index no condition reads the sessions.
    CHECK(keys_of(repo, "t*").size() == 1);
    CHECK(keys_of(repo, "\"o t\"", {.mode = SearchMode::substring}).size() == 1);
}

TEST_CASE("a database of the schema before search is migrated and its entries indexed",
          "[sqlite][search][schema]") {
    ScratchDir dir;
    const std::string db = dir.file("old.db");
    std::string kept;
    {
        SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
        auto s = create(repo, CreateOptions{std::string("old"), "/w", {}, std::nullopt});
        kept = append_message(s, UserMessage{"the Ölçer migration", 1, {}});
        append_label(s, kept, std::string("zürich"));
    }
    // Back to version 2: what a database written before search holds.
    exec_raw(db,
             "DROP TABLE search_vocab; DROP TABLE search_index; DROP TABLE search_rows; DROP TABLE "
             "search_pending; DELETE "
             "FROM agentcore_schema_migrations WHERE version >= 3");
    CHECK(error_of([&] { (void)SqliteSessionStorage::open_read_only(db, "old"); }) ==
          ErrorCode::invalid_session);
    SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
    CHECK(count_of(db, "SELECT max(version) FROM agentcore_schema_migrations") ==
          detail::sqlite::schema_version);
    CHECK(count_of(db, indexed_rows) == 2);
    CHECK(keys_of(repo, "olcer").size() == 1);
    CHECK(keys_of(repo, "ZURICH").size() == 1);
    exec_raw(db, "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)");
}

TEST_CASE("pending rows move into the FTS5 index every search_pending_rows appends",
          "[sqlite][search]") {
    ScratchDir dir;
    const std::string db = dir.file("s.db");
    SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
    auto s = create(repo, CreateOptions{std::string("p"), "/w", {}, std::nullopt});
    const auto n = static_cast<std::size_t>(detail::sqlite::search_pending_rows);
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < n + 10; ++i)
        ids.push_back(append_message(
            s, UserMessage{
                   "entry w" + std::to_string(i) + " of getUserById" + std::to_string(i), 1, {}}));
    CHECK(count_of(db, "SELECT count(*) FROM search_rows") ==
          static_cast<std::int64_t>(detail::sqlite::search_pending_rows));
    CHECK(count_of(db, "SELECT count(*) FROM search_pending") == 10);
    // Moved and pending rows are found alike, by words, prefixes and parts of words.
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
    // The words FTS5 was given are taken out again with the session.
    remove(repo, "p");
    CHECK(count_of(db, indexed_rows) == 0);
    CHECK(count_of(db, "SELECT count(*) FROM search_vocab") == 0);
    exec_raw(db, "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)");
}

TEST_CASE("a database with the trigram index of schema version 3 is migrated to the word index",
          "[sqlite][search][schema]") {
    ScratchDir dir;
    const std::string db = dir.file("v3.db");
    {
        SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
        auto s = create(repo, CreateOptions{std::string("v3"), "/w", {}, std::nullopt});
        append_message(s, UserMessage{"the getUserById lookup", 1, {}});
    }
    exec_raw(db,
             "DROP TABLE search_vocab; DROP TABLE search_index; DROP TABLE search_rows; DROP TABLE "
             "search_pending; DELETE "
             "FROM agentcore_schema_migrations WHERE version >= 3");
    exec_raw(db, detail::sqlite::migrations[2]);
    exec_raw(
        db,
        "INSERT INTO search_rows (session_id, seq, text) VALUES ('v3', 1, 'the getuserbyid "
        "lookup'); INSERT INTO agentcore_schema_migrations VALUES (3, '2026-12-03T00:00:00Z')");
    SqliteSessionRepo repo(db, sqlite_search_tests::fast_options());
    CHECK(count_of(db, "SELECT max(version) FROM agentcore_schema_migrations") == 4);
    CHECK(count_of(db, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'search_rows_%'") == 0);
    CHECK(keys_of(repo, "getuserbyid").size() == 1);
    CHECK(keys_of(repo, "UserBy", {.mode = SearchMode::substring}).size() == 1);
    remove(repo, "v3");
    CHECK(count_of(db, indexed_rows) == 0);
    exec_raw(db, "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)");
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

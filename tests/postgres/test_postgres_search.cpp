// Search over the PostgreSQL repository through its index of words (schema version 4): the hits,
// order, snippets and pages of memory on the generated corpus; the index written by appends,
// imports and forks, removed with its session, built by the migration from version 3, and used
// without pg_trgm; hostile queries that stay data. Pages by relevance read their candidates best
// bound first (schema version 6: word counts and the marks of repeated words) and give every
// page as memory does; the migration from version 5 writes the counts and marks.

#include "postgres/pg_test.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/search_corpus.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#include <agentcore/session.hpp>

#include <atomic>
#include <string>
#include <utility>
#include <vector>

using namespace agentcore;
namespace pgt = agentcore::testing::pg;

namespace {

using Queries = std::vector<std::pair<std::string, SearchOptions>>;

// Queries over the corpus: words, phrases, prefixes, exclusions, both modes, every filter.
Queries corpus_queries() {
    return {
        {"login", {}},
        {"\"login bug\" -timeout", {}},
        {"ΑΘΗΝΑ ёлка", {}},
        {"caf*", {.order = SearchOrder::newest, .limit = 4}},
        {"getUserById", {.mode = SearchMode::substring}},
        {"serByI", {.mode = SearchMode::substring}},
        {"auth/login.cp", {.mode = SearchMode::substring}},
        {"東京", {}},
        {"strasse zur*", {.text = {.thinking = true}}},
        {"token", {.cwd = "/work/lib", .exclude_roles = {"tool_result"}}},
        {"cache", {.metadata = Json{{"team", "web"}}}},
        {"rare_zebra_word", {.text = {.tool_results = false}}},
        {"x' OR '1'='1 --", {}},
    };
}

// The same hits, in the same order, with the same snippets and marks, and the same cursor.
void check_same(const SearchResult& got, const SearchResult& expected) {
    REQUIRE(got.hits.size() == expected.hits.size());
    for (std::size_t i = 0; i < got.hits.size(); ++i) {
        CHECK(got.hits[i].cursor() == expected.hits[i].cursor());
        CHECK(got.hits[i].entry_id == expected.hits[i].entry_id);
        CHECK(got.hits[i].session_id == expected.hits[i].session_id);
        CHECK(got.hits[i].snippet == expected.hits[i].snippet);
        CHECK(got.hits[i].marks == expected.hits[i].marks);
    }
    CHECK(got.next == expected.next);
}

// Each query gives the answer of memory, or the same error (a query that cannot be run).
template <class Repo>
void check_queries(const InMemorySessionRepo& memory, const Repo& repo, const Queries& queries) {
    for (const auto& query : queries) {
        const std::string& q = query.first;
        const SearchOptions& o = query.second;
        INFO(q << (o.mode == SearchMode::substring ? " (substring)" : ""));
        SearchResult expected;
        try {
            expected = search(memory, q, o);
        } catch (const SessionError& e) {
            CHECK(agentcore::testing::error_of([&] { search(repo, q, o); }) == e.code());
            continue;
        }
        check_same(search(repo, q, o), expected);
    }
}

// Makes the line of one entry (its position in session `id`) unreadable by the codec: a search
// that reads it fails with invalid_entry, one that never reads it does not notice.
void damage_line(pgt::Raw& raw, const std::string& id, int seq) {
    raw.exec("UPDATE entries SET line = '{\"type\": ' WHERE session_id = '" + id +
             "' AND seq = " + std::to_string(seq));
}

// The number of entries with words and counts (`and` narrows them down, in SQL) whose tsvector
// does not hold exactly one length mark, that of their word count's length class.
std::int64_t wrong_length_marks(pgt::Raw& raw, const std::string& and_sql = "") {
    const auto r = raw.c.exec(
        "SELECT word_count, ARRAY(SELECT m FROM unnest(tsvector_to_array(words)) AS m WHERE m "
        "LIKE '~n%')::text FROM entries WHERE words IS NOT NULL AND words <> '*'::tsvector AND "
        "word_count IS NOT NULL " +
            and_sql,
        detail::pg::Params{}, "testing");
    std::int64_t wrong = 0;
    for (int i = 0; i < r.rows(); ++i) {
        const std::string expected =
            "{" + detail::length_mark(detail::length_class(r.int64(i, 0))) + "}";
        if (r.text(i, 1) != expected) ++wrong;
    }
    return wrong;
}

}  // namespace

TEST_CASE("PostgreSQL gives the hits, order, snippets and pages of memory on one corpus",
          "[postgres][search]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    agentcore::testing::write_search_corpus(memory, 41, 25);
    const std::string conninfo = pgt::fresh_schema(pgt::fresh_database());
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    for (const auto& l : list(memory).sessions) copy_session(memory, postgres, l.header.id);
    AnyRepository any(postgres);
    const Queries queries = corpus_queries();
    for (const auto& [q, o] : queries) {
        INFO(q);
        const SearchResult expected = search(memory, q, o);
        check_same(search(postgres, q, o), expected);
        check_same(search(any, q, o), expected);
    }
    // Pages: each page starts after the cursor of the one before, as in memory.
    SearchOptions paged{.limit = 7};
    for (int page = 0; page < 4; ++page) {
        INFO("page " << page);
        const SearchResult expected = search(memory, "login", paged);
        check_same(search(postgres, "login", paged), expected);
        if (!expected.next) break;
        paged.after = expected.next;
    }
    CHECK(!search(postgres, "login").hits.empty());
    CHECK(agentcore::testing::error_of([&] { search(postgres, "-login"); }) ==
          ErrorCode::invalid_query);

    // The searches above read only the index's candidates: a session whose one entry cannot be
    // decoded, and holds none of the queries' words, changes none of their answers; a query the
    // index cannot narrow down (`a*`) reads every session and meets the damaged line.
    {
        auto s = create(postgres, pgt::named("damaged", "/work/app"));
        append_message(s, UserMessage{"nothing anyone looks for", 1, {}});
    }
    pgt::Raw raw(conninfo);
    damage_line(raw, "damaged", 1);
    check_queries(memory, postgres, queries);
    CHECK(agentcore::testing::error_of([&] { search(postgres, "a*"); }) ==
          ErrorCode::invalid_entry);
    CHECK(agentcore::testing::error_of([&] { search(postgres, "anyone"); }) ==
          ErrorCode::invalid_entry);
}

TEST_CASE("every append, import and fork writes its entries' words in its own transaction",
          "[postgres][search]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    const std::string conninfo = pgt::fresh_database();
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    pgt::Raw raw(conninfo);
    CHECK(raw.text("SELECT indexdef FROM pg_indexes WHERE indexname = 'entries_words'")
              .find("USING gin (words)") != std::string::npos);
    CHECK(raw.text("SELECT indexname FROM pg_indexes WHERE indexname = 'search_words_trgm'") ==
          "search_words_trgm");

    // Appends: found as soon as each returns.
    auto s = create(postgres, pgt::named("appended"));
    for (const std::string text : {"the quetzalcoatl woke up", "Crème brûlée in Zürich",
                                   "getUserById(42) failed", "ΑΘΉΝΑ and ёлка"}) {
        const std::string id = append_message(s, UserMessage{text, 1, {}});
        const std::string word = text.substr(0, text.find(' '));
        INFO(word);
        bool found = false;
        for (const auto& h : search(postgres, word).hits) found = found || h.entry_id == id;
        CHECK(found);
    }
    CHECK(raw.text("SELECT words::text FROM entries WHERE session_id = 'appended' AND seq = 1") ==
          "'quetzalcoatl' 'the' 'up' 'woke' '~n2'");
    CHECK(raw.number("SELECT count(*) FROM search_words WHERE word IN ('quetzalcoatl', 'creme', "
                     "'zurich', 'getuserbyid', 'αθηνα', 'елка')") == 6);
    // A word longer than a tsvector's lexemes (2047 bytes) leaves its entry always a candidate.
    const std::string long_word(3000, 'q');
    append_message(s, UserMessage{"marker " + long_word + "zz end", 1, {}});
    CHECK(raw.text("SELECT words::text FROM entries WHERE session_id = 'appended' AND seq = 5") ==
          "'*'");
    // At the limits: a word of 2047 bytes is a lexeme, one of 2048 is not; more than 512 KiB of
    // distinct words are not held either.
    append_message(s, UserMessage{std::string(2047, 'r'), 1, {}});
    CHECK(raw.number("SELECT count(*) FROM entries WHERE session_id = 'appended' AND seq = 6 AND "
                     "words @@ ('''' || repeat('r', 2047) || '''')::tsquery") == 1);
    append_message(s, UserMessage{std::string(2048, 'r'), 1, {}});
    CHECK(raw.text("SELECT words::text FROM entries WHERE session_id = 'appended' AND seq = 7") ==
          "'*'");
    std::string many;
    for (int i = 0; i < 55'000; ++i) {
        const std::string n = std::to_string(10'000'000 + i);
        many += "x" + n + " ";
    }
    append_message(s, UserMessage{many, 1, {}});
    CHECK(raw.text("SELECT words::text FROM entries WHERE session_id = 'appended' AND seq = 8") ==
          "'*'");
    CHECK(search(postgres, "x10054999").hits.size() == 1);
    (void)copy_session(postgres, memory, "appended");
    check_queries(memory, postgres,
                  {{"marker", {}},
                   {"qqqqzz", {.mode = SearchMode::substring}},
                   {"qqq*", {}},
                   {"quetzalcoatl", {}}});
    CHECK(search(postgres, "qqqqzz", {.mode = SearchMode::substring}).hits.size() == 1);

    // Imports (batches) and forks (server-side copies, and lines the fork rewrites).
    agentcore::testing::write_search_corpus(memory, 7, 6);
    for (const auto& l : list(memory).sessions)
        if (l.header.id != "appended") copy_session(memory, postgres, l.header.id);
    const std::string source = "corpus-7-3";
    const auto entries = open_read_only(memory, source).storage().get_entries(EntriesQuery{});
    const std::string middle = id_of(*entries[entries.size() / 2]);
    for (const ForkOptions& fo :
         {ForkOptions{.session_id = "fork-whole"},
          ForkOptions{.entry_id = middle, .position = ForkPosition::at, .session_id = "fork-at"}}) {
        (void)fork(postgres, source, fo);
        (void)fork(memory, source, fo);
    }
    CHECK(raw.number("SELECT count(*) FROM entries WHERE session_id LIKE 'fork-%' AND words IS "
                     "NULL AND line LIKE '%\"text\"%'") == 0);
    check_queries(memory, postgres, corpus_queries());
    check_queries(memory, postgres,
                  {{"login", {.cwd = "/work/app"}}, {"bug fix*", {.order = SearchOrder::newest}}});
    for (const auto& l : list(memory).sessions) {
        INFO(l.header.id);
        const std::int64_t with_words =
            raw.number("SELECT count(*) FROM entries WHERE session_id = '" + l.header.id +
                       "' AND words IS "
                       "NOT NULL");
        std::int64_t expected = 0;
        for (const auto& e :
             open_read_only(memory, l.header.id).storage().get_entries(EntriesQuery{}))
            if (!search_index_text(*e).empty()) ++expected;
        CHECK(with_words == expected);
        // Every entry with words has its counts, but one a tsvector could not hold.
        CHECK(raw.number("SELECT count(*) FROM entries WHERE session_id = '" + l.header.id +
                         "' AND words IS NOT NULL AND words <> '*'::tsvector AND (word_count IS "
                         "NULL OR base_word_count IS NULL)") == 0);
        CHECK(wrong_length_marks(raw, "AND session_id = '" + l.header.id + "'") == 0);
    }
}

TEST_CASE("removing a session removes its words from the index", "[postgres][search]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    agentcore::testing::write_search_corpus(memory, 5, 8);
    const std::string conninfo = pgt::fresh_database();
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    for (const auto& l : list(memory).sessions) copy_session(memory, postgres, l.header.id);
    pgt::Raw raw(conninfo);
    const std::string gone = "corpus-5-2";
    REQUIRE(raw.number("SELECT count(*) FROM entries WHERE session_id = '" + gone +
                       "' AND words IS NOT NULL") > 0);
    bool found_before = false;
    for (const auto& h : search(postgres, "login", {.limit = 1000}).hits)
        found_before = found_before || h.session_id == gone;
    CHECK(found_before);
    remove(postgres, gone);
    remove(memory, gone);
    CHECK(raw.number("SELECT count(*) FROM entries WHERE session_id = '" + gone + "'") == 0);
    check_queries(memory, postgres, corpus_queries());
    for (const auto& h : search(postgres, "login", {.limit = 1000}).hits)
        CHECK(h.session_id != gone);
}

TEST_CASE("a database of schema version 3 is migrated and its stored entries indexed",
          "[postgres][search][schema]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    agentcore::testing::write_search_corpus(memory, 11, 12);
    const std::string conninfo = pgt::fresh_database();
    {
        PostgresSessionRepo postgres(conninfo, pgt::fast());
        for (const auto& l : list(memory).sessions) copy_session(memory, postgres, l.header.id);
    }
    // Back to version 3 exactly: what versions 4 to 6 changed, undone.
    pgt::Raw raw(conninfo);
    raw.c.exec_script(
        "DROP INDEX entries_words; ALTER TABLE entries DROP COLUMN words; DROP TABLE "
        "search_words; DROP INDEX entries_by_type; ALTER TABLE entries DROP COLUMN word_count;"
        " ALTER TABLE entries DROP COLUMN base_word_count;"
        " CREATE INDEX entries_by_type ON entries (session_id, type, seq);"
        " DELETE FROM agentcore_schema_migrations WHERE version >= 4",
        "testing");
    // A line the codec cannot read gets no words, and the migration goes on.
    damage_line(raw, "corpus-11-4", 2);
    CHECK(agentcore::testing::error_of([&] {
              (void)PostgresSessionStorage::open_read_only(conninfo, "corpus-11-0", pgt::fast());
          }) == ErrorCode::invalid_session);

    // Two repositories opening at once: one migrates, the other waits and finds it done.
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&] {
            try {
                PostgresSessionRepo repo(conninfo, pgt::fast());
                ++ok;
            } catch (const std::exception& e) {
                UNSCOPED_INFO(e.what());
            }
        });
    for (auto& t : threads) t.join();
    CHECK(ok == 2);
    CHECK(raw.number("SELECT max(version) FROM agentcore_schema_migrations") ==
          detail::pg::schema_version);
    CHECK(raw.number("SELECT count(*) FROM agentcore_schema_migrations WHERE version = 4") == 1);
    CHECK(raw.number("SELECT count(*) FROM entries WHERE words IS NOT NULL") > 0);
    CHECK(raw.number("SELECT count(*) FROM entries WHERE session_id = 'corpus-11-4' AND seq = 2 "
                     "AND words IS NULL") == 1);
    CHECK(raw.text("SELECT indexname FROM pg_indexes WHERE indexname = 'search_words_trgm'") ==
          "search_words_trgm");

    // The damaged entry is not in the index: remove its session from both, then compare.
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    remove(postgres, "corpus-11-4");
    remove(memory, "corpus-11-4");
    check_queries(memory, postgres, corpus_queries());
}

TEST_CASE("without pg_trgm the substring mode reads the list of words and gives the same hits",
          "[postgres][search]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    agentcore::testing::write_search_corpus(memory, 13, 10);
    // A role that may create tables in its own schema but not extensions in the database
    // (CREATE EXTENSION of a trusted extension needs CREATE on the database).
    const std::string conninfo = pgt::fresh_database();
    pgt::Raw admin(conninfo);
    const std::string role = "plain_" + std::to_string(::getpid());
    admin.exec("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '" + role +
               "') THEN CREATE ROLE " + role + " LOGIN; END IF; END $$");
    admin.exec("CREATE SCHEMA plain AUTHORIZATION " + role);
    const std::string as_role = conninfo + " user=" + role + " options='-c search_path=plain'";
    PostgresSessionRepo postgres(as_role, pgt::fast());
    CHECK(admin.number("SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'") == 0);
    CHECK(admin.number("SELECT count(*) FROM pg_indexes WHERE schemaname = 'plain' AND "
                       "indexname = 'search_words_trgm'") == 0);
    CHECK(admin.number("SELECT count(*) FROM pg_indexes WHERE schemaname = 'plain' AND "
                       "indexname = 'entries_words'") == 1);
    for (const auto& l : list(memory).sessions) copy_session(memory, postgres, l.header.id);
    check_queries(memory, postgres,
                  {{"getUserById", {.mode = SearchMode::substring}},
                   {"serByI", {.mode = SearchMode::substring}},
                   {"rüss", {.mode = SearchMode::substring}},
                   {"auth/login.cp", {.mode = SearchMode::substring}},
                   {"ogin", {.mode = SearchMode::substring, .order = SearchOrder::newest}},
                   {"login", {}}});
    CHECK(!search(postgres, "serByI", {.mode = SearchMode::substring}).hits.empty());
}

TEST_CASE("hostile queries are data: no SQL and no tsquery syntax reaches the server",
          "[postgres][search][security]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    agentcore::testing::write_search_corpus(memory, 17, 8);
    {
        auto s = create(memory, pgt::named("hostile"));
        append_message(s, UserMessage{"O'Brien wrote 'a' | 'b' & !c <-> d:* \\x and login", 1, {}});
    }
    const std::string conninfo = pgt::fresh_database();
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    for (const auto& l : list(memory).sessions) copy_session(memory, postgres, l.header.id);
    pgt::Raw raw(conninfo);
    const std::int64_t entries = raw.number("SELECT count(*) FROM entries");
    Queries queries;
    for (const std::string q :
         {"'a' | 'b'", "login:*", "!login", "login <-> bug", "login & !bug", "\\' login",
          "'); DROP TABLE entries; --", "o'brien", "\"'a' | 'b'\"", "login:A", "(login | bug)",
          "bug:* & !login", "%ogin", "log_n"}) {
        queries.emplace_back(q, SearchOptions{});
        if (q.size() >= 3) queries.emplace_back(q, SearchOptions{.mode = SearchMode::substring});
    }
    check_queries(memory, postgres, queries);
    CHECK(raw.number("SELECT count(*) FROM entries") == entries);
    CHECK(search(postgres, "\"'a' | 'b'\"", {.mode = SearchMode::substring}).hits.size() == 1);

    // Whatever a lexeme holds, its literal is one lexeme that equals it.
    for (const std::string& lexeme :
         {std::string("a' | 'b"), std::string("x\\"), std::string("'"), std::string("a:*"),
          std::string("!x & y"), std::string("\\' | '"), std::string("b <-> c")}) {
        INFO(lexeme);
        const auto r = raw.c.exec(
            "SELECT numnode($1::tsquery), array_to_tsvector(ARRAY[$2]) @@ $1::tsquery, "
            "array_to_tsvector(ARRAY['a', 'b', 'c', 'x', 'y']) @@ $1::tsquery",
            detail::pg::Params().text(detail::pg::tsquery_literal(lexeme)).text(lexeme), "testing");
        CHECK(r.int64(0, 0) == 1);
        CHECK(r.boolean(0, 1));
        CHECK_FALSE(r.boolean(0, 2));
    }
}

namespace {

// The number of entries whose tsvector holds the mark of `word` repeated `level` times.
std::int64_t marked(pgt::Raw& raw, const std::string& word, int level) {
    return raw.number("SELECT count(*) FROM entries WHERE words @@ '''" + word + "~" +
                      std::to_string(level) + "'''::tsquery");
}

// The pages of `q` under `o` as memory gives them, up to `pages` of them; the number compared.
template <class Repo>
std::size_t check_pages(const InMemorySessionRepo& memory, const Repo& repo, const std::string& q,
                        SearchOptions o, int pages) {
    std::size_t compared = 0;
    for (int page = 0; page < pages; ++page) {
        INFO("page " << page);
        const SearchResult expected = search(memory, q, o);
        check_same(search(repo, q, o), expected);
        ++compared;
        if (!expected.next) break;
        o.after = expected.next;
    }
    return compared;
}

}  // namespace

TEST_CASE("PostgreSQL pages by relevance read candidates best bound first and give every page",
          "[postgres][search]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 11, 997));
    agentcore::testing::write_search_corpus(memory, 17, 40);
    const std::string conninfo = pgt::fresh_database();
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    for (const auto& l : list(memory).sessions) copy_session(memory, postgres, l.header.id);
    // Rows without counts (as rows written before them): no bound, read first.
    pgt::Raw raw(conninfo);
    raw.exec("UPDATE entries SET word_count = NULL, base_word_count = NULL WHERE seq % 7 = 0");
    AnyRepository any(postgres);
    std::size_t pages = 0;
    agentcore::testing::for_each_relevance_case([&](const std::string& q, const SearchOptions& o) {
        INFO(q << " limit " << o.limit << " tool_results " << o.text.tool_results << " cap "
               << o.text.tool_result_cap);
        pages += check_pages(memory, postgres, q, o, agentcore::testing::relevance_pages(5));
        (void)check_pages(memory, any, q, o, 2);
    });
    CHECK(pages > 100);
    // A cwd filter, and a page larger than a batch of lines.
    (void)check_pages(memory, postgres, "login", {.cwd = "/work/app", .limit = 2}, 3);
    (void)check_pages(memory, postgres, "session", {.limit = 500}, 2);
}

TEST_CASE("the classes of a page by relevance hold every candidate once, within their bounds",
          "[postgres][search]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 11, 997));
    agentcore::testing::write_search_corpus(memory, 9, 12);
    for (const char* text : {"login login login login then login bug bug",
                             "login bug login bug login bug login bug "
                             "login bug login bug login bug login bug",
                             "session token login session token login session"}) {
        auto s = create(memory, CreateOptions{std::nullopt, "/w", {}, std::nullopt});
        append_message(s, UserMessage{text, 1, {}});
    }
    const std::string conninfo = pgt::fresh_database();
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    for (const auto& l : list(memory).sessions) copy_session(memory, postgres, l.header.id);
    {
        // An entry whose words a tsvector cannot hold: its own class, unbounded.
        auto s = create(postgres, pgt::named("unindexed", "/w"));
        append_message(s, UserMessage{"login bug " + std::string(3000, 'q'), 1, {}});
    }
    pgt::Raw raw(conninfo);
    const auto count = [&](const std::string& tsquery) {
        return raw.c
            .exec("SELECT count(*) FROM entries WHERE words @@ $1::tsquery",
                  detail::pg::Params().text(tsquery), "testing")
            .int64(0, 0);
    };
    for (const std::string q : {"login", "session", "login bug", "\"fixed the\"", "caf*",
                                "login bug fix*", "session token login", "deploy -timeout"}) {
        INFO(q);
        const SearchQuery query = parse_search_query(q);
        const auto words = detail::index_words(query);
        const auto classes = detail::pg::candidate_classes(query, words);
        std::int64_t in_classes = 0;
        for (std::size_t i = 0; i < classes.size(); ++i) {
            in_classes += count(classes[i].tsquery);
            if (i) CHECK(classes[i].bound <= classes[i - 1].bound);
        }
        // The candidates, as the first statement asks for them: each in exactly one class.
        const std::int64_t candidates = count(detail::pg::tsquery_of(raw.c, words));
        CHECK(candidates > 0);
        CHECK(in_classes == candidates);
        // Each hit scores no more than the bound of the class that holds it.
        for (const SearchHit& hit : search(memory, query, {.limit = 40}).hits) {
            double bound = -1;
            for (const auto& k : classes) {
                const auto r = raw.c.exec(
                    "SELECT count(*) FROM entries WHERE session_id = $1 AND id = $2 AND words @@ "
                    "$3::tsquery",
                    detail::pg::Params().text(hit.session_id).text(hit.entry_id).text(k.tsquery),
                    "testing");
                if (r.int64(0, 0) == 1) bound = k.bound;
            }
            CHECK(hit.score <= bound);
        }
    }
}

TEST_CASE("PostgreSQL marks repeated words in the tsvector, and they bound the score",
          "[postgres][search]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 5, 997));
    // The best hit of `zeta` holds it 7 times (marked at 4, so at most 7); entries holding it 4
    // times in fewer words come close, and many hold it once. A bound that let 7 occurrences
    // count as fewer would leave the best hit unread at limit 1.
    auto best = create(memory, CreateOptions{std::string("best"), "/w", {}, std::nullopt});
    append_message(best, UserMessage{"zeta zeta zeta zeta zeta zeta zeta", 1, {}});
    for (int i = 0; i < 40; ++i) {
        auto once =
            create(memory, CreateOptions{"once" + std::to_string(i), "/w", {}, std::nullopt});
        append_message(once, UserMessage{"zeta once " + std::to_string(i), 1, {}});
        append_message(once, UserMessage{"zeta zeta, then", 1, {}});
    }
    const std::string conninfo = pgt::fresh_database();
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    // An import, appends and a fork write the same marks.
    for (const auto& l : list(memory, ListOptions{.limit = 1000}).sessions)
        copy_session(memory, postgres, l.header.id);
    for (int i = 0; i < 3; ++i) {
        const std::string id = "near" + std::to_string(i);
        auto near = create(postgres, pgt::named(id, "/w"));
        append_message(near, UserMessage{"zeta zeta zeta zeta", 1, {}});
        (void)copy_session(postgres, memory, id);
    }
    (void)fork(postgres, "near0", ForkOptions{.session_id = "near-fork"});
    (void)fork(memory, "near0", ForkOptions{.session_id = "near-fork"});
    pgt::Raw raw(conninfo);
    CHECK(marked(raw, "zeta", 2) == 45);
    CHECK(marked(raw, "zeta", 3) == 5);
    CHECK(marked(raw, "zeta", 4) == 5);
    CHECK(marked(raw, "zeta", 8) == 0);
    CHECK(marked(raw, "once", 2) == 0);
    CHECK(raw.text("SELECT words::text FROM entries WHERE session_id = 'best'") ==
          "'zeta' 'zeta~2' 'zeta~3' 'zeta~4' '~n3'");
    CHECK(wrong_length_marks(raw) == 0);
    CHECK(raw.number("SELECT word_count FROM entries WHERE session_id = 'near1'") == 4);
    // The marks are not words: the list of words for substrings never holds them.
    CHECK(raw.number("SELECT count(*) FROM search_words WHERE word LIKE '%~%'") == 0);
    for (const std::string q : {"zeta", "\"zeta zeta\"", "zeta then", "zeta -once"}) {
        for (const std::size_t limit : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
            INFO(q << " limit " << limit);
            (void)check_pages(memory, postgres, q, {.limit = limit}, 3);
        }
    }
    CHECK(search(postgres, "zeta", SearchOptions{.limit = 1}).hits.at(0).session_id == "best");
    remove(postgres, "best");
    CHECK(marked(raw, "zeta", 4) == 4);
    CHECK(search(postgres, "zeta", SearchOptions{.limit = 1}).hits.at(0).session_id == "near-fork");
}

namespace {

// A fresh database holding the search corpus and an entry that repeats `login`, written at
// this library's schema version and then taken back to an older one by `downgrade` (SQL);
// `memory` gets the same sessions.
std::string migration_database(InMemorySessionRepo& memory, const std::string& downgrade) {
    agentcore::testing::write_search_corpus(memory, 9, 12);
    auto s = create(memory, CreateOptions{std::string("repeats"), "/w", {}, std::nullopt});
    append_message(s, UserMessage{"login login login login then login", 1, {}});
    const std::string conninfo = pgt::fresh_database();
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    for (const auto& l : list(memory).sessions) copy_session(memory, postgres, l.header.id);
    pgt::Raw raw(conninfo);
    raw.c.exec_script(downgrade.c_str(), "testing");
    return conninfo;
}

// SQL that takes the tsvectors back to what an older version wrote: only the lexemes w that meet
// `keep`, no comment on the column; `more` runs next, then the versions from `from` on are
// forgotten.
std::string older_words(const std::string& keep, int from, const std::string& more = "") {
    return "UPDATE entries SET words = array_to_tsvector(ARRAY(SELECT w FROM "
           "unnest(tsvector_to_array(words)) AS w WHERE " +
           keep + ")) WHERE words IS NOT NULL; COMMENT ON COLUMN entries.words IS NULL; " + more +
           "DELETE FROM agentcore_schema_migrations WHERE version >= " + std::to_string(from);
}

// After a migration: the schema version is this library's, every entry with counts has its
// length mark, the GIN index is there; without the session whose line was damaged, the
// searches and the pages by relevance give what memory gives.
void check_migrated(InMemorySessionRepo& memory, PostgresSessionRepo& postgres, pgt::Raw& raw) {
    CHECK(raw.number("SELECT max(version) FROM agentcore_schema_migrations") ==
          detail::pg::schema_version);
    CHECK(raw.text("SELECT words::text FROM entries WHERE session_id = 'repeats'") ==
          "'login' 'login~2' 'login~3' 'login~4' 'then' '~n3'");
    CHECK(raw.text("SELECT col_description(attrelid, attnum) FROM pg_attribute WHERE attrelid = "
                   "'entries'::regclass AND attname = 'words'")
              .find("word~3") != std::string::npos);
    CHECK(wrong_length_marks(raw) == 0);
    CHECK(raw.text("SELECT indexdef FROM pg_indexes WHERE indexname = 'entries_words'")
              .find("USING gin (words)") != std::string::npos);
    remove(postgres, "corpus-9-4");
    remove(memory, "corpus-9-4");
    check_queries(memory, postgres, corpus_queries());
    for (const std::string q : {"login", "session", "token", "login then"})
        (void)check_pages(memory, postgres, q, {.limit = 2}, 4);
}

}  // namespace

TEST_CASE("a database of schema version 5 is migrated: every entry gets its counts and marks",
          "[postgres][search][schema]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    // Back to version 5: no counts, no marks.
    const std::string conninfo = migration_database(
        memory, older_words("position('~' in w) = 0", 6,
                            "ALTER TABLE entries DROP COLUMN word_count; ALTER TABLE entries DROP "
                            "COLUMN base_word_count; "));
    pgt::Raw raw(conninfo);
    REQUIRE(marked(raw, "login", 2) == 0);
    damage_line(raw, "corpus-9-4", 2);  // gets no search columns; the migration goes on
    CHECK(agentcore::testing::error_of([&] {
              (void)PostgresSessionStorage::open_read_only(conninfo, "corpus-9-0", pgt::fast());
          }) == ErrorCode::invalid_session);
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    CHECK(raw.number("SELECT word_count FROM entries WHERE session_id = 'repeats'") == 6);
    CHECK(raw.number("SELECT count(*) FROM entries WHERE words IS NOT NULL AND word_count IS "
                     "NULL AND NOT (session_id = 'corpus-9-4' AND seq = 2)") == 0);
    check_migrated(memory, postgres, raw);
}

TEST_CASE("a database of schema version 6 is migrated: every entry gets its length class",
          "[postgres][search][schema]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    // Back to version 6: the repeat marks (no level 3) and counts, no length marks.
    const std::string conninfo =
        migration_database(memory, older_words("w NOT LIKE '~n%' AND w NOT LIKE '%~3'", 7));
    pgt::Raw raw(conninfo);
    const std::int64_t with_counts =
        raw.number("SELECT count(*) FROM entries WHERE word_count IS NOT NULL");
    REQUIRE(with_counts > 100);
    REQUIRE(wrong_length_marks(raw) == with_counts);
    damage_line(raw, "corpus-9-4", 2);  // its search columns, stale now, are cleared
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    CHECK(raw.number("SELECT count(*) FROM entries WHERE session_id = 'corpus-9-4' AND seq = 2 "
                     "AND words IS NULL AND word_count IS NULL") == 1);
    check_migrated(memory, postgres, raw);
}

TEST_CASE("a database of schema version 7 is migrated: the words repeated 3 times are marked",
          "[postgres][search][schema]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    // Back to version 7: repeat marks at 2, 4 and 8 only.
    const std::string conninfo = migration_database(memory, older_words("w NOT LIKE '%~3'", 8));
    pgt::Raw raw(conninfo);
    REQUIRE(marked(raw, "login", 2) > 0);
    REQUIRE(marked(raw, "login", 3) == 0);
    PostgresSessionRepo postgres(conninfo, pgt::fast());
    CHECK(marked(raw, "login", 3) > 0);
    check_migrated(memory, postgres, raw);
}

// bench_search: search over a generated corpus (tests/support/search_corpus.hpp) of --sessions
// sessions (1000) written to a JSONL folder and an SQLite database. By default the sessions have
// the size agents write (40 to 64 turns, tool results with up to --output-words words of
// code-like output: about 260 MB of JSONL in all); --quick writes the tests' small sessions
// (about 6 MiB) and runs 3 rounds, a smoke run. Prints, as wall-clock medians of --runs runs (5),
// each figure beside its goal, measured against `rg -i -c` over the same files in the same run:
// - the JSONL scan (every hit) for a word one entry holds, a common word and a common pair:
//   its time divided by rg's (goal: at most 1.5); and beside `rg -i` as one runs it to read
//   the hits, its matching lines written to a pipe (`| wc -c`), which costs rg the output of
//   every line it finds;
// - the SQLite search for the same queries, the top 20 by relevance (goal for the common word:
//   at most 50 ms; for the rare word, rg's time divided by it: at least 100), and every hit;
// - substring queries on both;
// - the SQLite index's size (its tables, from dbstat) against the JSONL corpus (goal: at most
//   0.5);
// - the cost of --appends appends (2000) to SQLite with the index against the same appends into
//   a database whose search rows are discarded (goal: at most 1.3), medians of --runs rounds
//   that alternate. The index text is still extracted there: the figure is the database's share
//   of the cost.
// Where agentcore::postgres is built, the same corpus goes to a throwaway PostgreSQL server
// (initdb in a temporary folder, as the tests do; fsync on, appends os_buffered as above), and:
// - the rare word against rg (goal: rg at least 100 times slower);
// - a common word's first 20 hits by relevance (goal: at most 50 ms);
// - the index's size (the words column, its GIN index, the list of words and its indexes)
//   against the JSONL corpus (goal: at most 0.5);
// - --appends appends with the index against the statement of schema version 3 (the same
//   append without the words), sent by hand with the same parameters into a database without
//   the GIN index (goal: at most 1.3), rounds alternating. The words are still extracted there.
// With --dir PATH --keep, a later run with the same --dir and corpus options reuses the corpus.
// Usage: bench_search [--quick] [--sessions N] [--output-words N] [--runs N] [--appends N]
//                     [--dir PATH] [--keep] [--no-postgres] [--json]

#include "bench_util.hpp"
#include "support/search_corpus.hpp"

#include <agentcore/session.hpp>
#include <agentcore/sqlite/sqlite_repo.hpp>

#include <sqlite3.h>
#include <unistd.h>

#if AGENTCORE_BENCH_POSTGRES
#include "postgres/pg_server.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#endif

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

using namespace agentcore;
using namespace agentcore_bench;

namespace {

double median_seconds(std::size_t runs, const std::function<void()>& work) {
    Samples s;
    for (std::size_t i = 0; i < runs; ++i) {
        const auto start = Clock::now();
        work();
        s.add(seconds_since(start));
    }
    return s.median();
}

std::uint64_t folder_bytes(const std::string& folder) {
    std::uint64_t total = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(folder))
        if (e.is_regular_file()) total += e.file_size();
    return total;
}

std::int64_t sql_number(const std::string& db, const char* sql) {
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
    sqlite3_stmt* s = nullptr;
    std::int64_t out = -1;
    if (sqlite3_prepare_v2(raw, sql, -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close_v2(raw);
    return out;
}

void sql_exec(const std::string& db, const char* sql) {
    sqlite3* raw = nullptr;
    sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
    if (sqlite3_exec(raw, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
        std::cerr << "error: " << sqlite3_errmsg(raw) << "\n";
        std::exit(1);
    }
    sqlite3_close_v2(raw);
}

// Appends `n` user/assistant pairs of corpus text to a new session; returns the seconds taken.
double append_seconds(const std::string& db, std::size_t n) {
    SqliteStorageOptions o;
    o.durability = Durability::os_buffered;
    SqliteSessionRepo repo(db, o);
    std::mt19937_64 rng(42);
    // The writer's close is timed too: it moves the words of its last appends into the index.
    const auto start = Clock::now();
    {
        auto s = create(repo, CreateOptions{std::nullopt, "/bench", Json::object(), std::nullopt});
        for (std::size_t i = 0; i < n; ++i)
            append_message(s, UserMessage{agentcore::testing::corpus_sentence(rng, 20), 1, {}});
    }
    return seconds_since(start);
}

#if AGENTCORE_BENCH_POSTGRES
namespace pg = agentcore::detail::pg;

std::int64_t pg_number(const std::string& conninfo, const std::string& sql) {
    pg::Connection c(conninfo);
    return c.exec(sql, pg::Params{}, "measuring").int64(0, 0);
}

// Appends `n` user messages of corpus text to a new session of `conninfo`, through the library;
// returns the seconds taken.
double pg_append_seconds(const std::string& conninfo, std::size_t n) {
    PostgresStorageOptions o;
    o.durability = Durability::os_buffered;
    PostgresSessionRepo repo(conninfo, o);
    auto s = create(repo, CreateOptions{std::nullopt, "/bench", Json::object(), std::nullopt});
    std::mt19937_64 rng(42);
    const auto start = Clock::now();
    for (std::size_t i = 0; i < n; ++i)
        append_message(s, UserMessage{agentcore::testing::corpus_sentence(rng, 20), 1, {}});
    return seconds_since(start);
}

// The same appends as pg_append_seconds, each sent as the append statement of schema version 3
// (no words column, no list of words) with the parameters the library binds, on one connection
// with synchronous_commit off. The client's work is the library's: the entry's columns (its
// words too), place and line.
double pg_bare_append_seconds(const std::string& conninfo, std::size_t n) {
    PostgresStorageOptions o;
    o.durability = Durability::os_buffered;
    PostgresSessionRepo repo(conninfo, o);
    auto session =
        create(repo, CreateOptions{std::nullopt, "/bench", Json::object(), std::nullopt});
    const std::string id = session.storage().metadata().id;
    const std::int64_t fence = session.storage().fence();
    pg::Connection c(conninfo);
    c.set("synchronous_commit", "off");
    const std::string owner(c.exec("SELECT writer_owner FROM sessions WHERE id = $1",
                                   pg::Params().text(id), "measuring")
                                .text(0, 0));
    std::string sql =
        "WITH s AS (UPDATE sessions SET next_seq = $4 + 1, leaf_id = $6, name = $7, message_count "
        "= $8, cached_tokens = $9, uncached_tokens = $10, total_tokens = $11, cost_total = $12, "
        "updated_at = now(), writer_expires = now() + $5::double precision * interval '1 "
        "millisecond' WHERE id = $1 AND writer_owner = $2 AND writer_fence = $3 AND next_seq = $4 "
        "RETURNING id) INSERT INTO entries (session_id, seq, id, parent_seq, type, target_id, "
        "label, name, first_kept_id, retained_tail, root_seq, path_start_seq, state_thinking, "
        "state_model, state_tools, sets, u_input, u_output, u_cache_read, u_cache_write, u_cost, "
        "line, depth) SELECT ";
    const std::string placeholders = pg::row_placeholders(13);
    sql += placeholders.substr(0, placeholders.rfind(", array_to_tsvector"));
    // The search parameters (words, marks, counts) are bound as the library binds them, but not
    // written.
    sql +=
        " FROM s WHERE ($36::text IS NULL OR true) AND ($37::text IS NULL OR true) AND "
        "($38::bigint IS NULL OR true) AND ($39::bigint IS NULL OR true)";
    std::mt19937_64 rng(42);
    Environment env = Environment::system();
    pg::SessionState state;
    std::optional<pg::Node> parent;
    std::optional<std::string> parent_id;
    const auto start = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
        MessageEntry e;
        e.id = make_entry_id(env, [](const std::string&) { return false; });
        e.parent_id = parent_id;
        e.timestamp = format_timestamp(env.now_ms());
        e.message = UserMessage{agentcore::testing::corpus_sentence(rng, 20), 1, {}};
        const SessionTreeEntry entry = e;
        const pg::EntryColumns columns = pg::columns_of(entry);
        const pg::Node node = pg::place(state.next_seq, parent ? &*parent : nullptr, columns.sets,
                                        columns, e.id, std::nullopt);
        const std::string line = encode_entry(entry, Dialect::native);
        pg::SessionState next = state;
        pg::advance(next, entry);
        pg::Params p;
        p.text(id).text(owner).int64(fence).int64(state.next_seq).int64(30000);
        p.text(next.leaf)
            .text(next.name)
            .int64(static_cast<std::int64_t>(next.stats.message_count))
            .int64(next.stats.cached_tokens)
            .int64(next.stats.uncached_tokens)
            .int64(next.stats.total_tokens)
            .real(next.stats.cost_total);
        pg::bind_row(p, id, node, e.id, columns, line);
        if (c.exec(sql, p, "appending to").affected() != 1) {
            std::cerr << "error: the bare append was refused\n";
            std::exit(1);
        }
        state = std::move(next);
        parent = node;
        parent_id = e.id;
    }
    return seconds_since(start);
}

// The PostgreSQL figures: the corpus's JSONL folder copied to a throwaway server.
void postgres_figures(const JsonlSessionRepo& source, double corpus, std::size_t runs,
                      std::size_t appends, bool have_rg,
                      const std::function<double(const std::string&)>& rg, Report& report) {
    const auto server = agentcore::testing::pg::start_server(true);
    struct Stop {
        const agentcore::testing::pg::Server& s;
        ~Stop() { agentcore::testing::pg::stop_server(s); }
    } stop{server};
    {
        pg::Connection admin(server.conninfo("postgres"));
        for (const char* db : {"search", "with_index", "without_index"})
            admin.exec(std::string("CREATE DATABASE ") + db, pg::Params{}, "creating");
    }
    const std::string conninfo = server.conninfo("search");
    PostgresStorageOptions po;
    po.durability = Durability::os_buffered;
    PostgresSessionRepo postgres(conninfo, po);
    for (const auto& l : list(source).sessions) copy_session(source, postgres, l.header.id);
    {
        pg::Connection c(conninfo);
        c.exec("VACUUM ANALYZE", "measuring");  // merges GIN's pending list, as autovacuum would
    }
    for (const std::string word : {"quetzalcoatl", "rare_zebra_word", "login bug"}) {
        std::size_t hits = 0;
        const double t = median_seconds(runs, [&] {
            hits = search(postgres, word, SearchOptions{.limit = 1000000}).hits.size();
        });
        report.add("'" + word + "' PostgreSQL", t * 1000, "ms");
        report.add("'" + word + "' PostgreSQL hits", static_cast<double>(hits), "");
        if (have_rg && word == "quetzalcoatl")
            report.add("'" + word + "' rg / PostgreSQL", rg(word) / t, "x", "goal >= 100");
    }
    for (const std::string word : {"login", "rare_zebra_word", "login bug"}) {
        const double t =
            median_seconds(runs, [&] { (void)search(postgres, word, SearchOptions{.limit = 20}); });
        report.add("'" + word + "' PostgreSQL, top 20 by relevance", t * 1000, "ms",
                   word.find(' ') == std::string::npos ? "goal <= 50" : "");
    }
    for (const std::string part : {"etzalcoa", "auth/login.cp"}) {
        const SearchOptions o{.mode = SearchMode::substring, .limit = 1000000};
        const double t = median_seconds(runs, [&] { (void)search(postgres, part, o); });
        report.add("substring '" + part + "' PostgreSQL", t * 1000, "ms");
    }
    const std::int64_t column =
        pg_number(conninfo, "SELECT coalesce(sum(pg_column_size(words)), 0) FROM entries");
    const std::int64_t gin = pg_number(conninfo, "SELECT pg_relation_size('entries_words')");
    const std::int64_t list_bytes =
        pg_number(conninfo, "SELECT pg_total_relation_size('search_words')");
    report.add("PostgreSQL words column", static_cast<double>(column) / 1024, "KiB");
    report.add("PostgreSQL GIN index", static_cast<double>(gin) / 1024, "KiB");
    report.add("PostgreSQL list of words (and its indexes)", static_cast<double>(list_bytes) / 1024,
               "KiB");
    report.add("PostgreSQL index size / corpus",
               static_cast<double>(column + gin + list_bytes) / corpus, "x", "goal <= 0.5");
    {
        // The GIN index as CREATE INDEX builds it (the migration does): packed, where appends
        // grow it page by page.
        pg::Connection c(conninfo);
        c.exec("REINDEX INDEX entries_words", "measuring");
    }
    const std::int64_t packed = pg_number(conninfo, "SELECT pg_relation_size('entries_words')");
    report.add("PostgreSQL GIN index, rebuilt", static_cast<double>(packed) / 1024, "KiB");
    report.add("PostgreSQL index size / corpus, GIN rebuilt",
               static_cast<double>(column + packed + list_bytes) / corpus, "x", "goal <= 0.5");

    const std::string with = server.conninfo("with_index");
    const std::string without = server.conninfo("without_index");
    { PostgresSessionRepo make(without, po); }
    {
        pg::Connection c(without);
        c.exec("DROP INDEX entries_words", "measuring");
    }
    Samples with_samples;
    Samples without_samples;
    for (std::size_t round = 0; round < runs; ++round) {
        with_samples.add(pg_append_seconds(with, appends));
        without_samples.add(pg_bare_append_seconds(without, appends));
    }
    const double t_with = with_samples.median();
    const double t_without = without_samples.median();
    report.add("PostgreSQL append with index", t_with / static_cast<double>(appends) * 1e6, "us");
    report.add("PostgreSQL append, version 3 statement",
               t_without / static_cast<double>(appends) * 1e6, "us");
    report.add("PostgreSQL append cost with / without", t_with / t_without, "x", "goal <= 1.3");
}
#endif

}  // namespace

int main(int argc, char** argv) {
    const Args args(argc, argv);
    const bool quick = args.flag("--quick");
    const std::size_t sessions = args.number("--sessions", 1000);
    const std::size_t runs = args.number("--runs", quick ? 3 : 5);
    const std::size_t appends = args.number("--appends", quick ? 500 : 2000);
    agentcore::testing::SearchCorpusShape shape;
    if (!quick) {
        shape.min_turns = 40;
        shape.extra_turns = 25;
        shape.output_words = args.number("--output-words", 2100);
    }
    const std::string dir =
        args.text("--dir", "/tmp/agentcore-bench-search-" + std::to_string(::getpid()));
    const std::string corpus_key =
        std::to_string(sessions) + " " + std::to_string(shape.min_turns) + " " +
        std::to_string(shape.extra_turns) + " " + std::to_string(shape.output_words) + "\n";
    const std::string marker = dir + "/corpus-written";
    bool reuse = false;
    if (std::filesystem::exists(marker)) {
        std::ifstream in(marker);
        const std::string have((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
        reuse = have == corpus_key;
    }
    JsonlStorageOptions jo;
    jo.durability = Durability::os_buffered;
    SqliteStorageOptions so;
    so.durability = Durability::os_buffered;
    const std::string db = dir + "/search.db";
    const auto setup_start = Clock::now();
    if (!reuse) {
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        InMemorySessionRepo memory(Environment::deterministic(1796197403123, 1, 997));
        agentcore::testing::write_search_corpus(memory, 2026, sessions, shape);
        {
            // One session holds a word no other does: the rare word of the figures.
            auto s = create(memory, CreateOptions{std::string("rare-one"), "/bench", Json::object(),
                                                  std::nullopt});
            append_message(s, UserMessage{"we met a quetzalcoatl in the logs", 1, {}});
        }
        JsonlSessionRepo jsonl(dir + "/jsonl", jo);
        SqliteSessionRepo sqlite(db, so);
        for (const auto& l : list(memory).sessions) {
            copy_session(memory, jsonl, l.header.id);
            copy_session(memory, sqlite, l.header.id);
        }
        sql_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
        std::ofstream(marker) << corpus_key;
    }
    const double setup = seconds_since(setup_start);
    JsonlSessionRepo jsonl(dir + "/jsonl", jo);
    SqliteSessionRepo sqlite(db, so);
    const auto corpus = static_cast<double>(folder_bytes(dir + "/jsonl"));

    const bool have_rg = std::system("rg --version >/dev/null 2>&1") == 0;
    // `rg -i` over the folder: with `-c` its counts discarded; without, its lines to a pipe.
    const auto rg_run = [&](const std::string& word, bool count) {
        const std::string cmd = std::string("rg -i ") + (count ? "-c " : "") + "--no-messages '" +
                                word + "' '" + dir + "/jsonl'" +
                                (count ? " >/dev/null" : " | wc -c >/dev/null");
        return median_seconds(runs, [&] { (void)std::system(cmd.c_str()); });
    };
    const auto rg = [&](const std::string& word) { return rg_run(word, true); };
    // Every file read once before the figures: all of them are measured on a warm page cache.
    if (have_rg) (void)rg("warm the page cache");
    Report report("search");
    report.param("sessions", sessions);
    report.param("output_words", shape.output_words);
    report.param("turns", std::to_string(shape.min_turns) + "-" +
                              std::to_string(shape.min_turns + shape.extra_turns - 1));
    report.add("corpus (JSONL files)", corpus / (1024 * 1024), "MiB",
               reuse ? "reused" : "written in " + fixed1(setup) + " s");
    const SearchOptions every{.limit = 1000000};
    const SearchOptions top20{.limit = 20};
    const std::vector<std::pair<std::string, std::string>> queries{
        {"quetzalcoatl", "rare word"}, {"rare_zebra_word", "common word"}, {"login bug", "pair"}};
    for (const auto& query : queries) {
        // Named copies: lambdas below capture them (clang 14 cannot capture a structured binding).
        const std::string& word = query.first;
        const std::string& kind = query.second;
        const bool rare = kind == "rare word";
        std::size_t hits = 0;
        const double scan =
            median_seconds(runs, [&] { hits = search(jsonl, word, every).hits.size(); });
        std::size_t sqlite_hits = 0;
        const double indexed_all =
            median_seconds(runs, [&] { sqlite_hits = search(sqlite, word, every).hits.size(); });
        const double indexed_top = median_seconds(runs, [&] { (void)search(sqlite, word, top20); });
        const std::string name = kind + " '" + word + "'";
        report.add(name + ": entries holding it", static_cast<double>(hits), "",
                   sqlite_hits == hits ? "" : "SQLite found " + std::to_string(sqlite_hits));
        report.add(name + ": JSONL scan, every hit", scan * 1000, "ms");
        report.add(name + ": SQLite, top 20", indexed_top * 1000, "ms",
                   rare ? "" : "goal: at most 50 ms");
        report.add(name + ": SQLite, every hit", indexed_all * 1000, "ms");
        if (have_rg) {
            const double r = rg(word);
            report.add(name + ": rg -i -c", r * 1000, "ms");
            report.add(name + ": JSONL scan / rg", scan / r, "x", "goal: at most 1.5");
            const double lines = rg_run(word, false);
            report.add(name + ": rg -i, its lines to a pipe", lines * 1000, "ms");
            report.add(name + ": JSONL scan / rg -i with its lines", scan / lines, "x",
                       "goal: at most 1.5");
            report.add(name + ": rg / SQLite top 20", r / indexed_top, "x",
                       rare ? "goal: at least 100" : "");
        }
    }
    // Substring mode: a part of a word (found through the index's list of words) and a path.
    for (const std::string part : {"etzalcoa", "auth/login.cp"}) {
        const SearchOptions o{.mode = SearchMode::substring, .limit = 1000000};
        std::size_t hits = 0;
        const double scan =
            median_seconds(runs, [&] { hits = search(jsonl, part, o).hits.size(); });
        const double indexed =
            median_seconds(runs, [&] { hits = search(sqlite, part, o).hits.size(); });
        report.add("substring '" + part + "': hits", static_cast<double>(hits), "");
        report.add("substring '" + part + "': JSONL scan", scan * 1000, "ms");
        report.add("substring '" + part + "': SQLite", indexed * 1000, "ms");
        if (have_rg) {
            const double r = rg(part);
            report.add("substring '" + part + "': JSONL scan / rg", scan / r, "x");
        }
    }
    const auto index_bytes = sql_number(db,
                                        "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'search%' "
                                        "OR name LIKE 'sqlite_autoindex_search%'");
    report.add("index size", static_cast<double>(index_bytes) / 1024, "KiB");
    report.add("index size / corpus", static_cast<double>(index_bytes) / corpus, "x",
               "goal: at most 0.5");

    // Rounds of both kinds alternate, each into new databases, so that a change of the
    // machine's load weighs on both alike; the figures are the medians of --runs rounds.
    Samples with_samples;
    Samples without_samples;
    for (std::size_t round = 0; round < runs; ++round) {
        const std::string with = dir + "/with-" + std::to_string(round) + ".db";
        const std::string without = dir + "/without-" + std::to_string(round) + ".db";
        for (const std::string& old : {with, without})
            for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(old + suffix);
        { SqliteSessionRepo make(without, so); }
        // The index's tables become views that discard what is written to them.
        sql_exec(without,
                 "DROP TABLE search_vocab; DROP TABLE search_index; DROP TABLE search_rows;"
                 "CREATE VIEW search_rows (row, session_id, seq, words, base_words) AS SELECT 0, "
                 "'', 0, 0, 0 WHERE 0;"
                 "CREATE TRIGGER search_rows_discard INSTEAD OF INSERT ON search_rows BEGIN "
                 "SELECT 1; END;"
                 "CREATE VIEW search_index (rowid, text) AS SELECT 0, '' WHERE 0;"
                 "CREATE TRIGGER search_index_discard INSTEAD OF INSERT ON search_index BEGIN "
                 "SELECT 1; END;"
                 "DROP TABLE search_repeats;"
                 "CREATE VIEW search_repeats (rowid, marks) AS SELECT 0, '' WHERE 0;"
                 "CREATE TRIGGER search_repeats_discard INSTEAD OF INSERT ON search_repeats "
                 "BEGIN SELECT 1; END;");
        with_samples.add(append_seconds(with, appends));
        without_samples.add(append_seconds(without, appends));
    }
    const double t_with = with_samples.median();
    const double t_without = without_samples.median();
    report.add("append with index", t_with / static_cast<double>(appends) * 1e6, "us");
    report.add("append, rows discarded", t_without / static_cast<double>(appends) * 1e6, "us");
    report.add("append cost with / without", t_with / t_without, "x", "goal: at most 1.3");
#if AGENTCORE_BENCH_POSTGRES
    if (!args.flag("--no-postgres"))
        postgres_figures(jsonl, corpus, runs, appends, have_rg, rg, report);
#endif
    report.print(args.flag("--json"));
    if (!args.flag("--keep")) std::filesystem::remove_all(dir);
    return 0;
}

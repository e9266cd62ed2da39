// bench_search: search over a generated corpus (tests/support/search_corpus.hpp) of --sessions
// sessions (1000) written to a JSONL folder and an SQLite database. Prints, as wall-clock
// medians of --runs runs (5):
// - the JSONL scan against `rg -i -c` over the same files (when rg is installed), for a word
//   one entry holds, a word about one sentence in 40 holds and a common pair of words: the
//   scan's time divided by rg's (the goal: at most 1.5);
// - the SQLite search for the same queries, and rg's time divided by it for the rare word
//   (the goal: at least 100);
// - the SQLite index's size (its tables, from dbstat) against the JSONL corpus (goal: at most
//   0.5);
// - the cost of --appends appends (2000) to SQLite with the index against the same appends into
//   a database whose search rows are discarded (goal: at most 1.3), medians of --runs rounds
//   that alternate. The index text is still extracted there: the figure is the database's share
//   of the cost.
// Usage: bench_search [--sessions N] [--runs N] [--appends N] [--dir PATH] [--json]

#include "bench_util.hpp"
#include "support/search_corpus.hpp"

#include <agentcore/session.hpp>
#include <agentcore/sqlite/sqlite_repo.hpp>

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>

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
    auto s = create(repo, CreateOptions{std::nullopt, "/bench", Json::object(), std::nullopt});
    std::mt19937_64 rng(42);
    const auto start = Clock::now();
    for (std::size_t i = 0; i < n; ++i)
        append_message(s, UserMessage{agentcore::testing::corpus_sentence(rng, 20), 1, {}});
    return seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
    const Args args(argc, argv);
    const std::size_t sessions = args.number("--sessions", 1000);
    const std::size_t runs = args.number("--runs", 5);
    const std::size_t appends = args.number("--appends", 2000);
    const std::string dir =
        args.text("--dir", "/tmp/agentcore-bench-search-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);

    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 1, 997));
    agentcore::testing::write_search_corpus(memory, 2026, sessions);
    {
        // One session holds a word no other does: the rare word of the figures.
        auto s = create(
            memory, CreateOptions{std::string("rare-one"), "/bench", Json::object(), std::nullopt});
        append_message(s, UserMessage{"we met a quetzalcoatl in the logs", 1, {}});
    }
    JsonlStorageOptions jo;
    jo.durability = Durability::os_buffered;
    JsonlSessionRepo jsonl(dir + "/jsonl", jo);
    SqliteStorageOptions so;
    so.durability = Durability::os_buffered;
    const std::string db = dir + "/search.db";
    SqliteSessionRepo sqlite(db, so);
    for (const auto& l : list(memory).sessions) {
        copy_session(memory, jsonl, l.header.id);
        copy_session(memory, sqlite, l.header.id);
    }
    sql_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    const auto corpus = static_cast<double>(folder_bytes(dir + "/jsonl"));

    const bool have_rg = std::system("rg --version >/dev/null 2>&1") == 0;
    const auto rg = [&](const std::string& word) {
        const std::string cmd =
            "rg -i -c --no-messages '" + word + "' '" + dir + "/jsonl' >/dev/null";
        return median_seconds(runs, [&] { (void)std::system(cmd.c_str()); });
    };
    Report report("search");
    report.param("sessions", sessions);
    report.add("corpus (JSONL files)", corpus / 1024, "KiB");
    for (const std::string word : {"quetzalcoatl", "rare_zebra_word", "login bug"}) {
        std::size_t hits = 0;
        const double scan = median_seconds(
            runs, [&] { hits = search(jsonl, word, SearchOptions{.limit = 1000000}).hits.size(); });
        const double indexed = median_seconds(runs, [&] {
            hits = search(sqlite, word, SearchOptions{.limit = 1000000}).hits.size();
        });
        report.add("'" + word + "' hits", static_cast<double>(hits), "");
        report.add("'" + word + "' JSONL scan", scan * 1000, "ms");
        report.add("'" + word + "' SQLite", indexed * 1000, "ms");
        if (have_rg) {
            const double r = rg(word);
            report.add("'" + word + "' rg -i", r * 1000, "ms");
            report.add("'" + word + "' JSONL scan / rg", scan / r, "x");
            report.add("'" + word + "' rg / SQLite", r / indexed, "x");
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
        report.add("substring '" + part + "' hits", static_cast<double>(hits), "");
        report.add("substring '" + part + "' JSONL scan", scan * 1000, "ms");
        report.add("substring '" + part + "' SQLite", indexed * 1000, "ms");
    }
    const auto index_bytes = sql_number(db,
                                        "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'search%' "
                                        "OR name LIKE 'sqlite_autoindex_search%'");
    report.add("index size", static_cast<double>(index_bytes) / 1024, "KiB");
    report.add("index size / corpus", static_cast<double>(index_bytes) / corpus, "x");

    // Rounds of both kinds alternate, each into new databases, so that a change of the
    // machine's load weighs on both alike; the figures are the medians of --runs rounds.
    Samples with_samples;
    Samples without_samples;
    for (std::size_t round = 0; round < runs; ++round) {
        const std::string with = dir + "/with-" + std::to_string(round) + ".db";
        const std::string without = dir + "/without-" + std::to_string(round) + ".db";
        { SqliteSessionRepo make(without, so); }
        sql_exec(without,
                 "DROP TABLE search_pending; CREATE VIEW search_pending (row, session_id, seq, "
                 "text) AS SELECT 0, '', 0, '' WHERE 0; CREATE TRIGGER search_pending_discard "
                 "INSTEAD OF INSERT ON search_pending BEGIN SELECT 1; END;");
        with_samples.add(append_seconds(with, appends));
        without_samples.add(append_seconds(without, appends));
    }
    const double t_with = with_samples.median();
    const double t_without = without_samples.median();
    report.add("append with index", t_with / static_cast<double>(appends) * 1e6, "us");
    report.add("append, rows discarded", t_without / static_cast<double>(appends) * 1e6, "us");
    report.add("append cost with / without", t_with / t_without, "x");
    report.print(args.flag("--json"));
    if (!args.flag("--keep")) std::filesystem::remove_all(dir);
    return 0;
}

// bench_search: search over a generated corpus (tests/support/search_corpus.hpp) of --sessions
// sessions (1000) written to a JSONL folder and an SQLite database. By default the sessions have
// the size agents write (40 to 64 turns, tool results with up to --output-words words of
// code-like output: about 260 MB of JSONL in all); --quick writes the tests' small sessions
// (about 6 MiB) and runs 3 rounds, a smoke run. Prints, as wall-clock medians of --runs runs (5),
// each figure beside its goal, measured against `rg -i -c` over the same files in the same run:
// - the JSONL scan (every hit) for a word one entry holds, a common word and a common pair:
//   its time divided by rg's (goal: at most 1.5);
// - the SQLite search for the same queries, the top 20 by relevance (goal for the common word:
//   at most 50 ms; for the rare word, rg's time divided by it: at least 100), and every hit;
// - substring queries on both;
// - the SQLite index's size (its tables, from dbstat) against the JSONL corpus (goal: at most
//   0.5);
// - the cost of --appends appends (2000) to SQLite with the index against the same appends into
//   a database whose search rows are discarded (goal: at most 1.3), medians of --runs rounds
//   that alternate. The index text is still extracted there: the figure is the database's share
//   of the cost.
// With --dir PATH --keep, a later run with the same --dir and corpus options reuses the corpus.
// Usage: bench_search [--quick] [--sessions N] [--output-words N] [--runs N] [--appends N]
//                     [--dir PATH] [--keep] [--json]

#include "bench_util.hpp"
#include "support/search_corpus.hpp"

#include <agentcore/session.hpp>
#include <agentcore/sqlite/sqlite_repo.hpp>

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <iostream>
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
    const std::string corpus_key = std::to_string(sessions) + " " +
                                   std::to_string(shape.min_turns) + " " +
                                   std::to_string(shape.extra_turns) + " " +
                                   std::to_string(shape.output_words) + "\n";
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
            auto s = create(memory, CreateOptions{std::string("rare-one"), "/bench",
                                                  Json::object(), std::nullopt});
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
    const auto rg = [&](const std::string& word) {
        const std::string cmd =
            "rg -i -c --no-messages '" + word + "' '" + dir + "/jsonl' >/dev/null";
        return median_seconds(runs, [&] { (void)std::system(cmd.c_str()); });
    };
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
    for (const auto& [word, kind] : queries) {
        const bool rare = kind == "rare word";
        std::size_t hits = 0;
        const double scan =
            median_seconds(runs, [&] { hits = search(jsonl, word, every).hits.size(); });
        std::size_t sqlite_hits = 0;
        const double indexed_all =
            median_seconds(runs, [&] { sqlite_hits = search(sqlite, word, every).hits.size(); });
        const double indexed_top =
            median_seconds(runs, [&] { (void)search(sqlite, word, top20); });
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
            for (const char* suffix : {"", "-wal", "-shm"})
                std::filesystem::remove(old + suffix);
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
    report.add("append cost with / without", t_with / t_without, "x", "goal: at most 1.3");
    report.print(args.flag("--json"));
    if (!args.flag("--keep")) std::filesystem::remove_all(dir);
    return 0;
}

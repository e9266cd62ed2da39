// The SQLite storage's figures, each beside its target: appends against a bare INSERT + COMMIT
// of the same row with the same pragmas (alternating rounds on the same database); open +
// build_context of a leaf ~1,000 deep at 10,000 and 100,000 entries (beside the JSONL open of the
// same session); list; fork; import; copies between a folder and a database as `agentcore copy`
// makes them (copy_session between repositories opened by URL); and the type-erased repository
// against the concrete type.
//
// Usage: bench_sqlite [--quick] [folder]   (build with the release preset; --quick: small sizes)

#include <agentcore/any_repo.hpp>
#include <agentcore/session.hpp>
#include <agentcore/sqlite/sqlite_repo.hpp>

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace agentcore;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median_ms(int runs, const std::function<void()>& f) {
    std::vector<double> v;
    for (int i = 0; i < runs; ++i) {
        const auto t = Clock::now();
        f();
        v.push_back(ms_since(t));
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void figure(const char* what, double value, const char* unit, const std::string& target, bool met) {
    std::printf("%-62s %12.3f %-6s target %-22s %s\n", what, value, unit, target.c_str(),
                met ? "met" : "NOT MET");
}

AgentMessage user(int i) {
    return UserMessage{"question number " + std::to_string(i) + " about the code base", i, {}};
}

AgentMessage assistant(int i) {
    AssistantMessage m;
    m.content.push_back(TextContent{"an answer of moderate length, number " + std::to_string(i) +
                                        ", explaining what the function does and why",
                                    {}});
    m.provider = "anthropic";
    m.model = "claude";
    m.usage.input = 100;
    m.usage.output = 20;
    m.usage.cost.total = 0.001;
    return m;
}

// `chains` independent chains of `depth` messages: the last chain's leaf is `depth` deep.
std::vector<SessionTreeEntry> chains(int count, int depth) {
    std::vector<SessionTreeEntry> out;
    out.reserve(static_cast<std::size_t>(count * depth));
    char id[16];
    for (int c = 0; c < count; ++c) {
        for (int d = 0; d < depth; ++d) {
            MessageEntry e;
            std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(c * depth + d + 1));
            e.id = id;
            if (d > 0) {
                std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(c * depth + d));
                e.parent_id = std::string(id);
            }
            e.timestamp = "2026-12-02T07:43:23.123Z";
            e.message = d % 2 == 0 ? user(d) : assistant(d);
            out.emplace_back(std::move(e));
        }
    }
    return out;
}

SessionHeader header(std::string id, std::string cwd = "/bench") {
    SessionHeader h;
    h.id = std::move(id);
    h.timestamp = "2026-12-02T07:43:23.123Z";
    h.cwd = std::move(cwd);
    return h;
}

// The bare transaction the append is compared with: the same row into the same table, on a
// connection of its own to the same database, with the same pragmas. The same row: an id of
// eight random hex digits, as create_entry_id makes them (sequential ids would always land at
// the end of the id index, where random ones split pages anywhere in it), and the stats columns
// as an append of user messages fills them.
class BareInsert {
public:
    BareInsert(const std::string& db_path, bool durable) {
        sqlite3_open_v2(db_path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr);
        sqlite3_exec(db_, durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                     nullptr, nullptr, nullptr);
        sqlite3_exec(db_, "PRAGMA foreign_keys=ON", nullptr, nullptr, nullptr);
        sqlite3_exec(db_,
                     "INSERT INTO sessions (id, created, cwd, dialect, header) VALUES ('bare', "
                     "'x', '/', 0, '{}')",
                     nullptr, nullptr, nullptr);
        sqlite3_prepare_v3(
            db_,
            "INSERT INTO entries (session_id, seq, id, parent_seq, type, target_id, label, line,"
            " message_count, cached_tokens, uncached_tokens, total_tokens, cost_total)"
            " VALUES ('bare', ?1, ?2, ?3, 'message', NULL, NULL, ?4, ?1, 0, 0, 0, 0.0)",
            -1, SQLITE_PREPARE_PERSISTENT, &insert_, nullptr);
        MessageEntry sample;
        sample.id = "abcdef01";
        sample.parent_id = std::string("abcdef00");
        sample.timestamp = "2026-12-02T07:43:23.123Z";
        sample.message = UserMessage{"hello", 1, {}};
        line_ = encode_entry(sample, Dialect::native);
    }
    BareInsert(const BareInsert&) = delete;
    BareInsert& operator=(const BareInsert&) = delete;
    ~BareInsert() {
        sqlite3_finalize(insert_);
        sqlite3_close_v2(db_);
    }

    void append() {
        const int i = ++count_;
        sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
        char id[16];
        std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(random_() & 0xFFFFFFFFULL));
        sqlite3_bind_int64(insert_, 1, i);
        sqlite3_bind_text(insert_, 2, id, -1, SQLITE_TRANSIENT);
        if (i > 1)
            sqlite3_bind_int64(insert_, 3, i - 1);
        else
            sqlite3_bind_null(insert_, 3);
        sqlite3_bind_text(insert_, 4, line_.data(), static_cast<int>(line_.size()), SQLITE_STATIC);
        sqlite3_step(insert_);
        sqlite3_reset(insert_);
        sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    }

private:
    sqlite3* db_ = nullptr;
    sqlite3_stmt* insert_ = nullptr;
    std::string line_;
    int count_ = 0;
    std::mt19937_64 random_{7};
};

// Appends against the bare transaction, in alternating rounds on the same database, so that both
// see the same disk, load and WAL (a WAL that is still growing costs each sync more than one
// that is rewritten): the median of each side's per-round time per append, and the median of the
// rounds' ratios.
struct AppendFigures {
    double ours = 0, bare = 0, ratio = 0;
};

// With `words` false the search index's tables are views that discard what is written to them:
// the append without the cost of its words, which bench_search measures against its own goal.
AppendFigures append_and_bare_ms(const std::string& db_path, bool durable, bool words, int rounds,
                                 int per_round) {
    SqliteStorageOptions o;
    o.durability = durable ? Durability::durable : Durability::os_buffered;
    SqliteSessionRepo repo(db_path, o);
    if (!words) {
        repo.database().exec(
            "DROP TABLE search_vocab; DROP TABLE search_index; DROP TABLE search_rows;"
            "CREATE VIEW search_rows (row, session_id, seq, words, base_words) AS SELECT 0, '', 0, "
            "0, 0 WHERE 0;"
            "CREATE TRIGGER search_rows_discard INSTEAD OF INSERT ON search_rows BEGIN SELECT 1; "
            "END;"
            "CREATE VIEW search_index (rowid, text) AS SELECT 0, '' WHERE 0;"
            "CREATE TRIGGER search_index_discard INSTEAD OF INSERT ON search_index BEGIN SELECT "
            "1; END;"
            "DROP TABLE search_repeats;"
            "CREATE VIEW search_repeats (rowid, marks) AS SELECT 0, '' WHERE 0;"
            "CREATE TRIGGER search_repeats_discard INSTEAD OF INSERT ON search_repeats BEGIN "
            "SELECT 1; END;",
            "discarding the words of");
        repo.database().forget_statements();
    }
    auto s = create(repo, CreateOptions{std::string("app"), "/", Json::object(), std::nullopt});
    BareInsert bare(db_path, durable);
    std::vector<double> ours, theirs, ratios;
    for (int r = 0; r < rounds; ++r) {
        auto t = Clock::now();
        for (int i = 0; i < per_round; ++i) append_message(s, UserMessage{"hello", 1, {}});
        ours.push_back(ms_since(t) / per_round);
        t = Clock::now();
        for (int i = 0; i < per_round; ++i) bare.append();
        theirs.push_back(ms_since(t) / per_round);
        ratios.push_back(ours.back() / theirs.back());
    }
    auto median = [](std::vector<double>& v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    return {median(ours), median(theirs), median(ratios)};
}

// The floor of an import: SQLite's own work for the rows SqliteSessionStorage::create writes for
// `entries` (each entry's row with its stats, its search row, its words and their repeats), in
// one transaction on a connection of its own with the same pragmas, everything the library
// computes of the entries (lines, texts, counts, marks, the tree) computed before the clock
// starts. In milliseconds. With `checkpoint` false the commit leaves the WAL as it is (no
// automatic checkpoint copies its pages into the database file): the share of SQLite's second
// write of every page.
double bare_import_ms(const std::string& db_path, const std::vector<SessionTreeEntry>& entries,
                      bool durable, bool checkpoint = true) {
    struct Row {
        std::string id, line;
        std::optional<std::int64_t> parent;
        detail::sqlite::SearchRowText search;
        SessionStats stats;
    };
    std::vector<Row> rows;
    rows.reserve(entries.size());
    TreeIndex tree;
    SessionStats stats;
    for (const auto& e : entries) {
        Row r;
        r.id = id_of(e);
        r.line = encode_entry(e, Dialect::native);
        if (const auto& parent = parent_id_of(e))
            r.parent = static_cast<std::int64_t>(*tree.position(*parent)) + 1;
        r.search = detail::sqlite::search_row_text(e);
        stats.add(e);
        r.stats = stats;
        tree.record(e);
        rows.push_back(std::move(r));
    }
    { SqliteSessionRepo schema(db_path); }  // creates the database and its schema
    sqlite3* db = nullptr;
    sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
    sqlite3_exec(db,
                 durable ? "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA "
                           "cache_size=-65536"
                         : "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA "
                           "cache_size=-65536",
                 nullptr, nullptr, nullptr);
    const auto prepare = [&](const char* sql) {
        sqlite3_stmt* q = nullptr;
        sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &q, nullptr);
        return q;
    };
    sqlite3_stmt* entry = prepare(
        "INSERT INTO entries (session_id, seq, id, parent_seq, type, target_id, label, line, "
        "message_count, cached_tokens, uncached_tokens, total_tokens, cost_total) VALUES "
        "('bare', ?1, ?2, ?3, 'message', NULL, NULL, ?4, ?5, ?6, ?7, ?8, ?9)");
    sqlite3_stmt* row = prepare(
        "INSERT INTO search_rows (session_id, seq, words, base_words) VALUES ('bare', ?1, ?2, ?3)");
    sqlite3_stmt* words = prepare("INSERT INTO search_index (rowid, text) VALUES (?1, ?2)");
    sqlite3_stmt* marks = prepare("INSERT INTO search_repeats (rowid, marks) VALUES (?1, ?2)");
    const auto text = [](sqlite3_stmt* q, int i, const std::string& t) {
        sqlite3_bind_text(q, i, t.data(), static_cast<int>(t.size()), SQLITE_STATIC);
    };
    const auto step = [](sqlite3_stmt* q) {
        sqlite3_step(q);
        sqlite3_reset(q);
    };
    if (!checkpoint) sqlite3_wal_autocheckpoint(db, 0);
    const auto t = Clock::now();
    sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    sqlite3_exec(db,
                 "INSERT INTO sessions (id, created, cwd, dialect, header, indexed_to) VALUES "
                 "('bare', 'x', '/', 0, '{}', 0)",
                 nullptr, nullptr, nullptr);
    std::int64_t seq = 0;
    for (const Row& r : rows) {
        ++seq;
        sqlite3_bind_int64(entry, 1, seq);
        text(entry, 2, r.id);
        if (r.parent)
            sqlite3_bind_int64(entry, 3, *r.parent);
        else
            sqlite3_bind_null(entry, 3);
        text(entry, 4, r.line);
        sqlite3_bind_int64(entry, 5, static_cast<std::int64_t>(r.stats.message_count));
        sqlite3_bind_int64(entry, 6, r.stats.cached_tokens);
        sqlite3_bind_int64(entry, 7, r.stats.uncached_tokens);
        sqlite3_bind_int64(entry, 8, r.stats.total_tokens);
        sqlite3_bind_double(entry, 9, r.stats.cost_total);
        step(entry);
        if (r.search.text.empty()) continue;
        sqlite3_bind_int64(row, 1, seq);
        sqlite3_bind_int64(row, 2, r.search.counts.words);
        sqlite3_bind_int64(row, 3, r.search.counts.base);
        step(row);
        const sqlite3_int64 rowid = sqlite3_last_insert_rowid(db);
        sqlite3_bind_int64(words, 1, rowid);
        text(words, 2, r.search.text);
        step(words);
        if (r.search.marks.empty()) continue;
        sqlite3_bind_int64(marks, 1, rowid);
        text(marks, 2, r.search.marks);
        step(marks);
    }
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    const double elapsed = ms_since(t);
    for (sqlite3_stmt* q : {entry, row, words, marks}) sqlite3_finalize(q);
    sqlite3_close_v2(db);
    return elapsed;
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::string folder = "bench-sqlite-" + std::to_string(::getpid());
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else
            folder = a;
    }
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    std::printf("SQLite %s; %s sizes; folder %s\n\n", sqlite3_libversion(),
                quick ? "quick" : "full", folder.c_str());

    // Appends, each against the bare transaction of the same row, same pragmas, same run. A
    // round is a multiple of the appends after which a writer moves its entries' words into the
    // search index, so that each round carries its share of that.
    for (const bool durable : {true, false}) {
        for (const bool words : {true, false}) {
            const int rounds = quick ? 3 : 11;
            const int per_round = static_cast<int>(detail::sqlite::search_pending_rows) *
                                  (quick ? 1 : (durable ? 1 : 4));
            const std::string db = folder + (durable ? "/append-full" : "/append-normal") +
                                   (words ? ".db" : "-no-words.db");
            const AppendFigures f = append_and_bare_ms(db, durable, words, rounds, per_round);
            const char* level = durable ? "FULL" : "NORMAL";
            const char* how = words ? "" : ", its words discarded";
            char what[96];
            std::snprintf(what, sizeof what, "append%s, synchronous=%s (ms per append)", how,
                          level);
            figure(what, f.ours, "ms", "", true);
            std::snprintf(what, sizeof what, "  bare INSERT + COMMIT, synchronous=%s (ms)", level);
            figure(what, f.bare, "ms", "", true);
            std::snprintf(what, sizeof what, "  append%s / bare, synchronous=%s (median)", how,
                          level);
            figure(what, f.ratio, "x", "<= 1.2x", f.ratio <= 1.2);
        }
    }

    // Open + build_context of a leaf ~1,000 deep, at two session sizes, beside JSONL.
    const int depth = 1000;
    std::vector<std::pair<int, std::string>> sizes = {{10'000, "10k"}, {100'000, "100k"}};
    if (quick) sizes = {{2'000, "2k"}, {5'000, "5k"}};
    double copy_mb_s = 0;
    for (const auto& [entries, label] : sizes) {
        const std::string db = folder + "/deep-" + label + ".db";
        const std::string file = folder + "/deep-" + label + ".jsonl";
        auto rows = chains(entries / depth, depth);
        {
            JsonlStorageOptions jo;
            jo.durability = Durability::os_buffered;
            (void)JsonlSessionStorage::create(file, header("deep"), jo, rows);
        }
        SqliteStorageOptions so;
        so.durability = Durability::os_buffered;
        const auto t = Clock::now();
        (void)SqliteSessionStorage::create(db, header("deep"), so, rows);
        const double import_ms = ms_since(t);
        const double bare_ms = bare_import_ms(folder + "/bare-" + label + ".db", rows, false);
        const double unchecked_ms =
            bare_import_ms(folder + "/bare-wal-" + label + ".db", rows, false, false);
        copy_mb_s =
            static_cast<double>(std::filesystem::file_size(file)) / 1e6 / (import_ms / 1000);
        std::size_t messages = 0;
        const double sqlite_ms = median_ms(9, [&] {
            Session<SqliteSessionStorage> s(SqliteSessionStorage::open_read_only(db, "deep", so));
            messages = build_context(s).messages.size();
        });
        const double jsonl_ms = median_ms(5, [&] {
            Session<JsonlSessionStorage> s(JsonlSessionStorage::open_read_only(file));
            messages = std::max(messages, build_context(s).messages.size());
        });
        std::string what = "open + build_context, leaf " + std::to_string(depth) + " deep, " +
                           label + " entries (ms)";
        figure(what.c_str(), sqlite_ms, "ms", "<= 20 ms", sqlite_ms <= 20);
        what = "  the same session as JSONL: open + build_context (ms)";
        figure(what.c_str(), jsonl_ms, "ms", "(for comparison)", true);
        what = "  import into SQLite (SqliteSessionStorage::create), " + label + " (MB/s)";
        figure(what.c_str(), copy_mb_s, "MB/s", ">= 50 MB/s (copy)", copy_mb_s >= 50);
        const double bare_mb_s = copy_mb_s * import_ms / bare_ms;
        what = "    the same rows, bare INSERTs + COMMIT (SQLite's floor) (MB/s)";
        figure(what.c_str(), bare_mb_s, "MB/s", "(for comparison)", true);
        what = "    import / bare INSERTs of its rows";
        figure(what.c_str(), import_ms / bare_ms, "x", "(for comparison)", true);
        what = "    the bare INSERTs, the WAL not checkpointed at commit (MB/s)";
        figure(what.c_str(), copy_mb_s * import_ms / unchecked_ms, "MB/s", "(for comparison)",
               true);

        // `agentcore copy`: copy_session between repositories opened by URL, durable as the tool
        // writes, with a progress callback; MB/s of the session's JSONL file.
        {
            AnyRepository database = open_repository("sqlite:" + db);
            AnyRepository files = open_repository(folder + "/copy-" + label);
            AnyRepository database2 =
                open_repository("sqlite:" + folder + "/copy-" + label + ".db");
            std::size_t read = 0;
            const CopyProgress progress = [&](std::size_t done, std::size_t) { read = done; };
            auto t1 = Clock::now();
            std::string path;
            {
                const auto copy = copy_session(database, files, "deep", progress);
                path = copy.storage().target<JsonlSessionStorage>()->path();
            }
            const double to_files_ms = ms_since(t1);
            const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
            t1 = Clock::now();
            (void)copy_session(files, database2, "deep", progress);
            const double to_database_ms = ms_since(t1);
            what = "  agentcore copy, folder -> SQLite, " + label + " (MB/s)";
            figure(what.c_str(), mb / (to_database_ms / 1000), "MB/s", ">= 50 MB/s",
                   mb / (to_database_ms / 1000) >= 50);
            what = "  agentcore copy, SQLite -> folder, " + label + " (MB/s)";
            figure(what.c_str(), mb / (to_files_ms / 1000), "MB/s", ">= 50 MB/s",
                   mb / (to_files_ms / 1000) >= 50);
            if (read != static_cast<std::size_t>(entries))
                std::printf("  the copy reported %zu entries read\n", read);
        }
    }

    // list: 1,000 sessions; one cwd among 10,000.
    {
        SqliteStorageOptions so;
        so.durability = Durability::os_buffered;
        const std::string db = folder + "/list.db";
        const int total = quick ? 2000 : 10'000;
        {
            SqliteSessionRepo repo(db, so);
            sqlite3_exec(repo.database().handle(), "BEGIN", nullptr, nullptr, nullptr);
            for (int i = 0; i < total; ++i) {
                SessionHeader h =
                    header("l" + std::to_string(i), "/project/" + std::to_string(i % 100));
                h.timestamp = format_timestamp(1'700'000'000'000 + i);
                repo.database()
                    .statement(
                        "INSERT INTO sessions (id, created, cwd, dialect, header) VALUES (?1, ?2, "
                        "?3, 0, ?4)")
                    .bind(1, h.id)
                    .bind(2, h.timestamp)
                    .bind(3, h.cwd)
                    .bind(4, encode_header(h, Dialect::native))
                    .run();
            }
            sqlite3_exec(repo.database().handle(), "COMMIT", nullptr, nullptr, nullptr);
        }
        SqliteSessionRepo repo(db, so);
        ListOptions thousand;
        thousand.limit = 1000;
        std::size_t n = 0;
        const double list_ms = median_ms(15, [&] { n = list(repo, thousand).sessions.size(); });
        figure("list of 1,000 sessions, newest first (ms)", list_ms, "ms", "<= 10 ms",
               list_ms <= 10 && n == 1000);
        ListOptions one;
        one.cwd = "/project/42";
        const double cwd_ms = median_ms(15, [&] { n = list(repo, one).sessions.size(); });
        std::string what = "list of one cwd among " + std::to_string(total) + " sessions (ms)";
        figure(what.c_str(), cwd_ms, "ms", "<= 5 ms", cwd_ms <= 5);
    }

    // fork of a 1,000-entry path.
    {
        SqliteStorageOptions so;
        const std::string db = folder + "/deep-" + sizes.back().second + ".db";
        SqliteSessionRepo repo(db, so);
        int k = 0;
        char leaf[16];
        std::snprintf(leaf, sizeof leaf, "%08x", static_cast<unsigned>(sizes.back().first));
        const double fork_ms = median_ms(5, [&] {
            ForkOptions f;
            f.entry_id = std::string(leaf);
            f.position = ForkPosition::at;
            f.session_id = "fork" + std::to_string(k++);
            (void)fork(repo, "deep", f);
        });
        figure("fork of a 1,000-entry path, durable (ms)", fork_ms, "ms", "<= 20 ms",
               fork_ms <= 20);
    }

    // The type-erased repository against the concrete type, on build_context (warm).
    {
        SqliteStorageOptions so;
        const std::string db = folder + "/deep-" + sizes.front().second + ".db";
        auto concrete =
            Session<SqliteSessionStorage>(SqliteSessionStorage::open_read_only(db, "deep", so));
        auto erased = erase_session(concrete);
        InMemorySessionRepo memory;
        auto mem =
            create(memory, CreateOptions{std::string("m"), "/", Json::object(), std::nullopt});
        for (auto& e : chains(1, depth)) mem.storage().append_entry(std::move(e));
        auto mem_erased = erase_session(mem);
        const int reps = quick ? 50 : 400;
        auto many = [&](auto& s) {
            return [&s, reps] {
                for (int i = 0; i < reps; ++i) (void)build_context(s);
            };
        };
        (void)build_context(concrete);  // warm the decoded-entry cache
        double a = 0, b = 0, c = 0, d = 0;
        for (int round = 0; round < 3; ++round) {  // interleaved, best of three each
            const double ca = median_ms(3, many(concrete)), cb = median_ms(3, many(erased));
            const double cc = median_ms(3, many(mem)), cd = median_ms(3, many(mem_erased));
            a = round == 0 ? ca : std::min(a, ca);
            b = round == 0 ? cb : std::min(b, cb);
            c = round == 0 ? cc : std::min(c, cc);
            d = round == 0 ? cd : std::min(d, cd);
        }
        figure("build_context, SQLite, concrete (ms per build)", a / reps, "ms", "", true);
        figure("build_context, SQLite, type-erased (ms per build)", b / reps, "ms", "", true);
        figure("  type-erased / concrete, SQLite", b / a, "x", "<= 1.05x", b / a <= 1.05);
        figure("build_context, memory, concrete (ms per build)", c / reps, "ms", "", true);
        figure("build_context, memory, type-erased (ms per build)", d / reps, "ms", "", true);
        figure("  type-erased / concrete, memory", d / c, "x", "<= 1.05x", d / c <= 1.05);
    }
    std::filesystem::remove_all(folder);
    return 0;
}

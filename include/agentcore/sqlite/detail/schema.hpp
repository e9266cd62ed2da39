#pragma once
// The SQLite schema of agentcore's sessions, its versions and its migrations (SPEC §9).
//
// One database file holds every session of a repository. `sessions` keeps one row per session:
// the header as the codec wrote it (unknown fields kept), and `indexed_to`, the last position
// whose words are in the search index. `entries` keeps each entry's line as the codec wrote it,
// so that an export gives the bytes of a JSONL file, plus the columns the queries need (seq, id,
// parent, type, label target, the label or session name it sets) and the session's stats as
// they are after the entry (cumulative). So an append writes one row and nothing else: the
// session's next position, leaf, name and stats are read from its last rows, and a position
// already taken (a writer that bypassed the lock) is a PRIMARY KEY conflict.
// `search_rows` gives each entry with text to search a row number, and `search_index` is an FTS5
// index of the words of its search_index_text (search.hpp) under that number. The index keeps no
// copy of the text (contentless). The entries after `indexed_to` are pending: their words are
// moved into the index every search_pending_rows appends and when the writer closes, and a
// search reads them from their lines; `search_pending_sessions` lists the sessions that have
// pending entries, so that a search looks at those sessions only. `search_repeats`, under the
// same row numbers, marks the words an entry repeats (2, 3, 4, 8 times or more): with the word
// counts of search_rows, a bound of each entry's score that needs no read of the entry.

#include <agentcore/codec.hpp>
#include <agentcore/detail/search_bound.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/search.hpp>
#include <agentcore/sqlite/detail/db.hpp>
#include <agentcore/storage.hpp>

#include <chrono>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace agentcore::detail::sqlite {

/// Each migration takes the schema from the version before it to its own (index + 1).
inline constexpr const char* migrations[] = {
    // 1: sessions and entries.
    "CREATE TABLE sessions ("
    " id TEXT PRIMARY KEY, created TEXT NOT NULL, cwd TEXT NOT NULL, dialect INTEGER NOT NULL,"
    " header TEXT NOT NULL, next_seq INTEGER NOT NULL DEFAULT 1, leaf_id TEXT, name TEXT,"
    " message_count INTEGER NOT NULL DEFAULT 0, cached_tokens INTEGER NOT NULL DEFAULT 0,"
    " uncached_tokens INTEGER NOT NULL DEFAULT 0, total_tokens INTEGER NOT NULL DEFAULT 0,"
    " cost_total REAL NOT NULL DEFAULT 0) STRICT;"
    "CREATE INDEX sessions_by_time ON sessions (created, id);"
    "CREATE TABLE entries ("
    " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, seq INTEGER NOT NULL,"
    " id TEXT NOT NULL, parent_seq INTEGER, type TEXT NOT NULL, target_id TEXT, label TEXT,"
    " line TEXT NOT NULL, PRIMARY KEY (session_id, seq), UNIQUE (session_id, id),"
    " CHECK (parent_seq < seq)) STRICT, WITHOUT ROWID;"
    "CREATE INDEX entries_by_type ON entries (session_id, type, seq);",
    // 2: listing by working directory and labels by target without a scan.
    "CREATE INDEX sessions_by_cwd ON sessions (cwd, created, id);"
    "CREATE INDEX entries_labels ON entries (session_id, target_id, seq) WHERE type = 'label';",
    // 3: search by trigrams, over a folded copy of each entry's text (external content kept in
    // step by triggers). Replaced by 4, which drops it: a database migrated from 2 gets its
    // search rows at 4 only.
    "CREATE TABLE search_rows ("
    " row INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE "
    "CASCADE, seq INTEGER NOT NULL, text TEXT NOT NULL, UNIQUE (session_id, seq)) STRICT;"
    "CREATE VIRTUAL TABLE search_index USING fts5(text, content='search_rows', "
    "content_rowid='row', tokenize='trigram case_sensitive 1');"
    "CREATE TRIGGER search_rows_insert AFTER INSERT ON search_rows BEGIN"
    " INSERT INTO search_index (rowid, text) VALUES (new.row, new.text); END;"
    "CREATE TRIGGER search_rows_delete AFTER DELETE ON search_rows BEGIN"
    " INSERT INTO search_index (search_index, rowid, text) VALUES ('delete', old.row, old.text);"
    " END;",
    // 4: search by words. The text is kept once, in the entries' lines: search_index is a
    // contentless FTS5 index (no positions: the matcher checks phrases) of the words of each
    // entry's search_index_text, which the library has already split and normalised (the ascii
    // tokenizer only cuts at the spaces between them). Its rows are removed with their session
    // by remove_search_rows, which gives FTS5 the words to take out. search_vocab lists the
    // index's words, for substring terms that are parts of words. An append writes its words to
    // search_pending (one small row: an FTS5 write costs several pages in every transaction);
    // every search_pending_rows rows, that append's transaction moves them into search_index.
    "DROP TRIGGER search_rows_insert; DROP TRIGGER search_rows_delete; DROP TABLE search_index;"
    "DROP TABLE search_rows;"
    "CREATE TABLE search_rows ("
    " row INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE "
    "CASCADE, seq INTEGER NOT NULL, UNIQUE (session_id, seq)) STRICT;"
    "CREATE VIRTUAL TABLE search_index USING fts5(text, content='', detail=none, "
    "tokenize='ascii');"
    "CREATE VIRTUAL TABLE search_vocab USING fts5vocab(search_index, row);"
    "CREATE TABLE search_pending ("
    " row INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE "
    "CASCADE, seq INTEGER NOT NULL, text TEXT NOT NULL) STRICT;",
    // 5: an append writes one row. The session's state moves from its row into its entries'
    // rows: the stats after each entry, and the name a session_info entry sets in its label
    // column (fill_entry_state writes both for the stored entries). search_pending's rows are
    // moved into the index and the table dropped: the entries after sessions.indexed_to are
    // the pending ones, and search_pending_sessions lists the sessions that have some (written
    // by the append that makes the first, emptied by the move). Each search row keeps the number of
    // words of its entry's text as the
    // default text options and as every text option search it (search_word_counts): a bound of
    // its score, so that the best hits of a common word are found without reading every entry
    // that holds it.
    "INSERT INTO search_rows (session_id, seq) SELECT session_id, seq FROM search_pending ORDER "
    "BY row;"
    "INSERT INTO search_index (rowid, text) SELECT r.row, p.text FROM search_pending p JOIN "
    "search_rows r ON r.session_id = p.session_id AND r.seq = p.seq;"
    "DROP TABLE search_pending;"
    "ALTER TABLE entries ADD COLUMN message_count INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE entries ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE entries ADD COLUMN uncached_tokens INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE entries ADD COLUMN total_tokens INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE entries ADD COLUMN cost_total REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE search_rows ADD COLUMN words INTEGER;"
    "ALTER TABLE search_rows ADD COLUMN base_words INTEGER;"
    "ALTER TABLE sessions ADD COLUMN indexed_to INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE search_pending_sessions (session_id TEXT PRIMARY KEY REFERENCES sessions(id) "
    "ON DELETE CASCADE) STRICT, WITHOUT ROWID;"
    "UPDATE sessions SET indexed_to = next_seq - 1;"
    "ALTER TABLE sessions DROP COLUMN next_seq; ALTER TABLE sessions DROP COLUMN leaf_id;"
    "ALTER TABLE sessions DROP COLUMN name; ALTER TABLE sessions DROP COLUMN message_count;"
    "ALTER TABLE sessions DROP COLUMN cached_tokens;"
    "ALTER TABLE sessions DROP COLUMN uncached_tokens;"
    "ALTER TABLE sessions DROP COLUMN total_tokens; ALTER TABLE sessions DROP COLUMN cost_total;",
    // 6: the repeats of words. search_repeats is a second contentless index, under the same
    // row numbers as search_index: for each word an entry holds at least 2, 4 or 8 times, the
    // marks of those levels (word_repeat_marks: `word~2`, `word~4`, `word~8`; `~` is a token
    // character of its tokenizer and never part of a word). With the word counts of
    // search_rows it bounds each entry's score for a query without reading the entry
    // (fill_search_repeats writes the stored entries' marks).
    "CREATE VIRTUAL TABLE search_repeats USING fts5(marks, content='', detail=none, columnsize=0, "
    "tokenize=\"ascii tokenchars '~'\");",
    // 7: the index by type leaves messages out. Nearly every entry is a message, and a read of
    // the messages by type walks the session's positions anyway; every other type is rare, and
    // the index stays small. Each row an append, a fork or an import writes costs one index
    // entry less: a quarter of an import's time went into this index. A query that reads it
    // states its condition (type <> 'message'), so that it applies.
    "DROP INDEX entries_by_type;"
    "CREATE INDEX entries_by_type ON entries (session_id, type, seq) WHERE type <> 'message';",
    // 8: a repeat level at 3 (`word~3`). Most entries that repeat a word hold it twice; with
    // the next level at 4 a page by relevance bounded each of them as holding it 3 times, and
    // read far more of them than reach the page. A contentless index takes a row out only with
    // the tokens it was written with, so the marks are written again whole: the table is made
    // anew, and every search row's marks computed from its entry's line (fill_search_repeats).
    "DROP TABLE search_repeats;"
    "CREATE VIRTUAL TABLE search_repeats USING fts5(marks, content='', detail=none, columnsize=0, "
    "tokenize=\"ascii tokenchars '~'\");",
};

/// The schema version this library writes.
inline constexpr std::int64_t schema_version = static_cast<std::int64_t>(std::size(migrations));

/// The schema version of the current search index; migrating to it indexes the entries already
/// stored.
inline constexpr std::int64_t search_schema_version = 4;

/// The schema version whose entries keep the session's state; migrating to it fills their
/// columns.
inline constexpr std::int64_t entry_state_schema_version = 5;

/// The schema version whose entries' repeated words are marked (search_repeats).
inline constexpr std::int64_t repeats_schema_version = 6;

/// The schema version whose marks are at this library's repeat_levels; migrating to it marks
/// the stored entries' repeated words (search_repeats is empty between 6 and it).
inline constexpr std::int64_t repeat_levels_schema_version = 8;

/// How many entries a session's writer leaves pending at most: the append that makes them more
/// moves their words into search_index, in its transaction.
inline constexpr std::int64_t search_pending_rows = 512;

/// Writes (or with `remove`, takes out) a search row's `marks` (word_repeat_marks of its text)
/// in search_repeats; nothing when no word is repeated. A contentless index takes a row out only
/// when given the tokens it was written with, so both go through this one function.
inline void write_repeat_marks(Database& db, std::int64_t row, const std::string& marks,
                               bool remove = false) {
    if (marks.empty()) return;
    if (remove)
        db.statement(
              "INSERT INTO search_repeats (search_repeats, rowid, marks) VALUES ('delete', ?1, "
              "?2)")
            .bind(1, row)
            .bind(2, marks)
            .run();
    else
        db.statement("INSERT INTO search_repeats (rowid, marks) VALUES (?1, ?2)")
            .bind(1, row)
            .bind(2, marks)
            .run();
}

/// What an entry's search row holds, as schema `version` keeps it: its text, its word counts
/// (from version 5 on) and the marks of its repeated words (from 6 on). Computed from the entry
/// alone, so that a bulk write can compute it ahead on another thread.
struct SearchRowText {
    std::string text;  ///< empty: the entry has no text to search, and no search row
    SearchWordCounts counts;
    std::string marks;
};

inline SearchRowText search_row_text(const SessionTreeEntry& entry,
                                     std::int64_t version = schema_version) {
    SearchRowText out;
    out.text = search_index_text(entry);
    if (out.text.empty()) return out;
    if (version >= entry_state_schema_version) out.counts = search_word_counts(entry);
    if (version >= repeats_schema_version) {
        // search_index keeps which rows hold a word (detail=none), not how often: each word is
        // given once, which spares FTS5 the look-up of every repeat.
        std::string distinct;
        out.marks = word_repeat_marks(out.text, &distinct);
        out.text = std::move(distinct);
    }
    return out;
}

/// Writes the search row `row` of the entry at `seq` (none when it has no text to search) into
/// search_rows, search_index and search_repeats, as schema `version` keeps them (a migration
/// to an older version writes rows without counts or marks, which the next migrations fill in).
inline void write_search_row(Database& db, std::string_view session, std::int64_t seq,
                             const SearchRowText& row, std::int64_t version = schema_version) {
    if (row.text.empty()) return;
    if (version >= entry_state_schema_version) {
        db.statement(
              "INSERT INTO search_rows (session_id, seq, words, base_words) VALUES (?1, ?2, ?3, "
              "?4)")
            .bind(1, session)
            .bind(2, seq)
            .bind(3, row.counts.words)
            .bind(4, row.counts.base)
            .run();
    } else {
        db.statement("INSERT INTO search_rows (session_id, seq) VALUES (?1, ?2)")
            .bind(1, session)
            .bind(2, seq)
            .run();
    }
    const auto rowid = static_cast<std::int64_t>(sqlite3_last_insert_rowid(db.handle()));
    db.statement("INSERT INTO search_index (rowid, text) VALUES (?1, ?2)")
        .bind(1, rowid)
        .bind(2, row.text)
        .run();
    if (version >= repeats_schema_version) write_repeat_marks(db, rowid, row.marks);
}

/// write_search_row of what search_row_text computes of `entry`.
inline void index_search_row(Database& db, std::string_view session, std::int64_t seq,
                             const SessionTreeEntry& entry, std::int64_t version = schema_version) {
    write_search_row(db, session, seq, search_row_text(entry, version), version);
}

/// Binds a session's stats to five parameters from `first` on, in the order of the entries'
/// columns: message_count, cached_tokens, uncached_tokens, total_tokens, cost_total.
inline Statement& bind_stats(Statement& q, int first, const SessionStats& stats) {
    return q.bind(first, static_cast<std::int64_t>(stats.message_count))
        .bind(first + 1, stats.cached_tokens)
        .bind(first + 2, stats.uncached_tokens)
        .bind(first + 3, stats.total_tokens)
        .bind(first + 4, stats.cost_total);
}

inline Dialect dialect_of_column(std::int64_t value) noexcept {
    return value == static_cast<std::int64_t>(Dialect::pi) ? Dialect::pi : Dialect::native;
}

/// Steps the bound statement `q` and calls `each(entry)` with the entry of each row whose line
/// (column `line`, in the dialect of column `line + 1`) the codec reads; the other rows are
/// passed over (a line the codec cannot read is given no search row). Resets `q`.
template <class Each>
void each_decoded_row(Statement& q, int line, const Each& each) {
    Reset reset(q);
    while (q.step()) {
        std::optional<SessionTreeEntry> entry;
        try {
            entry.emplace(decode_entry(q.text(line), dialect_of_column(q.int64(line + 1))));
        } catch (const SessionError&) {
            continue;
        }
        each(*entry);
    }
}

/// Takes a session's entries out of the search index (a contentless FTS5 index needs the words
/// a row was written with: they are computed again from the entries' lines). Its search_rows go
/// with the session (ON DELETE CASCADE). Run in the transaction that removes the session.
inline void remove_search_rows(Database& db, std::string_view session) {
    auto& q = db.statement(
        "SELECT r.row, e.line, s.dialect FROM search_rows r JOIN entries e ON e.session_id = "
        "r.session_id AND e.seq = r.seq JOIN sessions s ON s.id = r.session_id WHERE "
        "r.session_id = ?1");
    q.bind(1, session);
    // The words each once, as search_row_text writes them. A row written with its repeats (by
    // an earlier version) holds the same words, which is all a detail=none index keeps.
    std::string words;
    each_decoded_row(q, 1, [&](const SessionTreeEntry& entry) {
        const std::string marks = word_repeat_marks(search_index_text(entry), &words);
        db.statement(
              "INSERT INTO search_index (search_index, rowid, text) VALUES ('delete', ?1, ?2)")
            .bind(1, q.int64(0))
            .bind(2, words)
            .run();
        write_repeat_marks(db, q.int64(0), marks, true);
    });
}

/// Writes the search rows of every stored entry into search_index (the migration to
/// search_schema_version). A line the codec cannot read gets no row: it cannot be shown by a
/// search either.
inline void fill_search_rows(Database& db) {
    // Streamed: the rows go into another table than the one being read, which SQLite allows
    // while the read is under way.
    auto& q = db.statement(
        "SELECT e.session_id, e.seq, e.line, s.dialect FROM entries e JOIN sessions s ON s.id = "
        "e.session_id");
    each_decoded_row(q, 2, [&](const SessionTreeEntry& entry) {
        index_search_row(db, q.text(0), q.int64(1), entry, search_schema_version);
    });
}

/// Writes the marks of the repeated words of every search row (the migration to
/// repeat_levels_schema_version), from the entries' lines (streamed, as fill_search_rows).
inline void fill_search_repeats(Database& db) {
    auto& q = db.statement(
        "SELECT r.row, e.line, s.dialect FROM search_rows r JOIN entries e ON e.session_id = "
        "r.session_id AND e.seq = r.seq JOIN sessions s ON s.id = r.session_id");
    each_decoded_row(q, 1, [&](const SessionTreeEntry& entry) {
        write_repeat_marks(db, q.int64(0), word_repeat_marks(search_index_text(entry)));
    });
}

/// The name a session_info entry gives its session (trimmed; none when it clears the name).
inline std::optional<std::string> name_set_by(const SessionInfoEntry& info) {
    const std::string_view text = info.name ? trim(*info.name) : std::string_view{};
    if (text.empty()) return std::nullopt;
    return std::string(text);
}

/// Writes the state columns of every stored entry (the migration to
/// entry_state_schema_version): the session's stats after it, the name a session_info entry
/// sets, and its search row's word counts. A session at a time, its rows read before any is
/// written. A line the codec cannot read adds nothing to the stats.
inline void fill_entry_state(Database& db) {
    std::vector<std::pair<std::string, Dialect>> sessions;
    {
        auto& q = db.statement("SELECT id, dialect FROM sessions");
        Reset reset(q);
        while (q.step())
            sessions.emplace_back(std::string(q.text(0)), dialect_of_column(q.int64(1)));
    }
    struct Row {
        std::int64_t seq;
        SessionStats stats;
        std::optional<std::string> name;
        bool info;
        std::optional<SearchWordCounts> counts;
    };
    for (const auto& [id, dialect] : sessions) {
        std::vector<Row> rows;
        {
            auto& q =
                db.statement("SELECT seq, line FROM entries WHERE session_id = ?1 ORDER BY seq");
            Reset reset(q);
            q.bind(1, id);
            SessionStats stats;
            while (q.step()) {
                Row row{q.int64(0), {}, std::nullopt, false, std::nullopt};
                try {
                    const SessionTreeEntry entry = decode_entry(q.text(1), dialect);
                    stats.add(entry);
                    row.counts = search_word_counts(entry);
                    if (const auto* info = std::get_if<SessionInfoEntry>(&entry)) {
                        row.info = true;
                        row.name = name_set_by(*info);
                    }
                } catch (const SessionError&) {
                }
                row.stats = stats;
                rows.push_back(std::move(row));
            }
        }
        for (const Row& row : rows) {
            auto& update = db.statement(
                "UPDATE entries SET message_count = ?3, cached_tokens = ?4, uncached_tokens = ?5,"
                " total_tokens = ?6, cost_total = ?7, label = CASE WHEN ?8 THEN ?9 ELSE label END"
                " WHERE session_id = ?1 AND seq = ?2");
            bind_stats(update.bind(1, id).bind(2, row.seq), 3, row.stats)
                .bind(8, static_cast<std::int64_t>(row.info))
                .bind_optional(9, row.name)
                .run();
            if (row.counts)
                db.statement(
                      "UPDATE search_rows SET words = ?3, base_words = ?4 WHERE session_id = ?1 "
                      "AND seq = ?2")
                    .bind(1, id)
                    .bind(2, row.seq)
                    .bind(3, row.counts->words)
                    .bind(4, row.counts->base)
                    .run();
        }
    }
}

inline std::int64_t stored_schema_version(Database& db) {
    auto& has = db.statement(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = "
        "'agentcore_schema_migrations'");
    Reset h(has);
    has.step();
    if (has.int64(0) == 0) {
        auto& any = db.statement("SELECT count(*) FROM sqlite_master");
        Reset a(any);
        any.step();
        if (any.int64(0) != 0)
            throw SessionError(ErrorCode::invalid_session,
                               "database '" + db.path() + "' holds tables but no agentcore schema");
        return 0;
    }
    auto& v = db.statement("SELECT coalesce(max(version), 0) FROM agentcore_schema_migrations");
    Reset r(v);
    v.step();
    return v.int64(0);
}

/// Readies a connection: checks the schema version (a newer one: invalid_session, nothing
/// changed), sets WAL mode and the durability level, and for a writable connection creates or
/// migrates the schema in one IMMEDIATE transaction (concurrent openers serialise on it).
/// A file that is not a database: invalid_session, untouched.
inline void prepare(Database& db, bool writable, bool durable) {
    db.exec("PRAGMA foreign_keys = ON", "configuring");
    std::int64_t version = stored_schema_version(db);  // the first read: fails on a non-database
    auto newer = [&](std::int64_t v) {
        return SessionError(ErrorCode::invalid_session,
                            "database '" + db.path() + "' has schema version " + std::to_string(v) +
                                ", newer than this library's " + std::to_string(schema_version));
    };
    if (version > schema_version) throw newer(version);
    if (!writable) {
        if (version < schema_version)
            throw SessionError(ErrorCode::invalid_session,
                               "database '" + db.path() + "' has schema version " +
                                   std::to_string(version) +
                                   "; open it for writing once to migrate it to " +
                                   std::to_string(schema_version));
        return;
    }
    db.exec("PRAGMA journal_mode = WAL", "switching to WAL mode");
    db.exec(durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL", "configuring");
    if (version == schema_version) return;
    Transaction tx(db);
    version = stored_schema_version(db);  // another process may have migrated meanwhile
    if (version > schema_version) throw newer(version);
    if (version == 0)
        db.exec(
            "CREATE TABLE agentcore_schema_migrations (version INTEGER PRIMARY KEY, applied_at "
            "TEXT NOT NULL) STRICT",
            "creating the schema of");
    for (std::int64_t v = version; v < schema_version; ++v) {
        db.exec(migrations[v], "migrating the schema of");
        if (v + 1 == search_schema_version) fill_search_rows(db);
        if (v + 1 == entry_state_schema_version) fill_entry_state(db);
        if (v + 1 == repeat_levels_schema_version) fill_search_repeats(db);
        db.statement(
              "INSERT INTO agentcore_schema_migrations (version, applied_at) VALUES (?1, "
              "strftime('%Y-%m-%dT%H:%M:%fZ'))")
            .bind(1, v + 1)
            .run();
    }
    tx.commit();
    db.forget_statements();
}

}  // namespace agentcore::detail::sqlite

#pragma once
// The PostgreSQL schema of agentcore's sessions, its versions and its migrations (SPEC §9).
//
// `sessions` keeps one row per session: the header as the codec wrote it (unknown fields kept),
// what must be O(1) to read — the next append position, the leaf, the name and the stats —
// written by each append's statement, and the writer's lease (owner, fencing token, expiry on
// the database's clock). `entries` keeps each entry's line exactly as the codec wrote it, so that
// an export gives the bytes of a JSONL file, beside the columns the queries and a server-side
// fork need: position, parent position, type, label and leaf target, the usage the stats count,
// and per entry its depth, where its path starts (SPEC §4.4) and which entries of its ancestry
// set the context's state (SPEC §4.5), so that a context costs O(its path) in one query.
//
// Portable SQL, for the engines that speak PostgreSQL's protocol: no sequences or SERIAL (the
// position comes from sessions.next_seq), no advisory locks, no LISTEN/NOTIFY, no CONCURRENTLY.
// Two processes migrating at once serialise on the version rows: each version is claimed with
// INSERT ... ON CONFLICT DO NOTHING inside the migrating transaction, so a second migrator waits
// for the first to commit and then finds the version taken.

#include <agentcore/detail/search_bound.hpp>
#include <agentcore/error.hpp>
#include <agentcore/postgres/detail/pg.hpp>
#include <agentcore/postgres/detail/search_index.hpp>

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace agentcore::detail::pg {

/// Each migration takes the schema from the version before it to its own (index + 1).
inline constexpr const char* migrations[] = {
    // 1: sessions and entries. Text that is ordered or compared (ids, times, cwd) uses the "C"
    // collation: byte order, as every other storage sorts.
    "CREATE TABLE sessions ("
    " id text COLLATE \"C\" PRIMARY KEY, created text COLLATE \"C\" NOT NULL, cwd text COLLATE "
    "\"C\" NOT NULL,"
    " dialect smallint NOT NULL, header text NOT NULL, next_seq bigint NOT NULL DEFAULT 1,"
    " leaf_id text, name text, message_count bigint NOT NULL DEFAULT 0,"
    " cached_tokens bigint NOT NULL DEFAULT 0, uncached_tokens bigint NOT NULL DEFAULT 0,"
    " total_tokens bigint NOT NULL DEFAULT 0, cost_total double precision NOT NULL DEFAULT 0,"
    " updated_at timestamptz NOT NULL DEFAULT now(), writer_owner text,"
    " writer_fence bigint NOT NULL DEFAULT 0, writer_expires timestamptz) WITH (fillfactor = 80);"
    "CREATE INDEX sessions_by_time ON sessions (created, id);"
    "CREATE TABLE entries ("
    " session_id text COLLATE \"C\" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
    " seq bigint NOT NULL, id text COLLATE \"C\" NOT NULL, parent_seq bigint, type text COLLATE "
    "\"C\" NOT NULL,"
    " target_id text COLLATE \"C\", label text, name text, first_kept_id text COLLATE \"C\", "
    "retained_tail boolean,"
    " root_seq bigint NOT NULL, path_start_seq bigint NOT NULL, state_thinking bigint, state_model "
    "bigint,"
    " state_tools bigint, sets smallint NOT NULL DEFAULT 0, u_input bigint, u_output bigint,"
    " u_cache_read bigint, u_cache_write bigint, u_cost double precision, line text NOT NULL,"
    " PRIMARY KEY (session_id, seq), UNIQUE (session_id, id), CHECK (parent_seq < seq),"
    " CHECK (path_start_seq <= seq), CHECK (root_seq <= path_start_seq));"
    "CREATE INDEX entries_by_type ON entries (session_id, type, seq);",
    // 2: listing by working directory and labels by target without a scan.
    "CREATE INDEX sessions_by_cwd ON sessions (cwd, created, id);"
    "CREATE INDEX entries_labels ON entries (session_id, target_id, seq) WHERE type = 'label';",
    // 3: each entry's depth (a root is 0), so that a path is read as the range of positions from
    // where it starts when few other entries lie in that range; the existing entries get theirs
    // from their ancestry, walked once with a temporary index of children. And no foreign key
    // from entries to sessions: it checked every row a fork or import copies, one look-up each,
    // and removing a session now deletes its entries itself, in the transaction that deletes
    // its row (which no append can follow, as an append's row goes in only through its update
    // of the session's row).
    "ALTER TABLE entries DROP CONSTRAINT IF EXISTS entries_session_id_fkey;"
    "ALTER TABLE entries ADD COLUMN depth bigint;"
    "CREATE INDEX entries_children_migrating ON entries (session_id, parent_seq);"
    "WITH RECURSIVE d(session_id, seq, depth) AS ("
    " SELECT session_id, seq, 0::bigint FROM entries WHERE parent_seq IS NULL"
    " UNION ALL SELECT e.session_id, e.seq, d.depth + 1 FROM d JOIN entries e"
    " ON e.session_id = d.session_id AND e.parent_seq = d.seq)"
    " UPDATE entries x SET depth = d.depth FROM d WHERE x.session_id = d.session_id AND x.seq = "
    "d.seq;"
    "DROP INDEX entries_children_migrating;"
    "ALTER TABLE entries ALTER COLUMN depth SET NOT NULL;",
    // 4: search by words (detail/search_index.hpp). Each entry's words as a tsvector, the words
    // already cut and normalised by the library; search_words lists every word written, for
    // parts of words. After this script the stored entries are indexed, then the GIN index is
    // built (search_index_ddl) and, where pg_trgm can be had, the trigram index of the words.
    "ALTER TABLE entries ADD COLUMN words tsvector;"
    "CREATE TABLE search_words (word text COLLATE \"C\" PRIMARY KEY);",
    // 5: the index by type leaves messages out. Nearly every entry is a message, and a read of
    // messages by type walks the session's positions anyway; every other type is rare, and the
    // index stays small. Each row an append, a fork or an import writes costs one index entry
    // less (a third of a fork's time went into this index).
    "DROP INDEX entries_by_type;"
    "CREATE INDEX entries_by_type ON entries (session_id, type, seq) WHERE type <> 'message';",
    // 6: bounds of the score (detail/search_index.hpp): each entry's word counts, and the marks
    // of the words it repeats in its tsvector. After this script every stored entry's search
    // columns are written again (index_stored_entries), the GIN index dropped first and built
    // after.
    "ALTER TABLE entries ADD COLUMN word_count bigint;"
    "ALTER TABLE entries ADD COLUMN base_word_count bigint;",
    // 7: each entry's length class among its marks (detail/search_index.hpp). After this script
    // every stored entry's search columns are written again (index_stored_entries), the GIN
    // index dropped first and built after.
    "COMMENT ON COLUMN entries.words IS 'agentcore search index: the words of the entry, the "
    "marks of the words it repeats (word~2, word~4, word~8) and of its length class (~n and "
    "the class)';",
    // 8: a repeat level at 3 (`word~3`): most entries that repeat a word hold it twice, and with
    // the next level at 4 a page by relevance bounded each of them as holding it 3 times. Which
    // entries marked at 2 hold a word 3 times only their lines tell: after this script every
    // stored entry's search columns are written again (index_stored_entries), the GIN index
    // dropped first and built after.
    "COMMENT ON COLUMN entries.words IS 'agentcore search index: the words of the entry, the "
    "marks of the words it repeats (word~2, word~3, word~4, word~8) and of its length class "
    "(~n and the class)';",
};

/// The schema version of the search index; migrating to it indexes the entries already stored,
/// builds the GIN index and, where pg_trgm can be had, the trigram index of the words.
inline constexpr std::int64_t search_schema_version = 4;

/// The schema version whose entries keep their word counts and the marks of their repeated
/// words; migrating to it writes every stored entry's search columns again.
inline constexpr std::int64_t bounds_schema_version = 6;

/// The schema version whose entries' tsvectors hold their length class; migrating to it writes
/// every stored entry's search columns again.
inline constexpr std::int64_t length_schema_version = 7;

/// The schema version whose repeat marks are at this library's repeat_levels; migrating to it
/// writes every stored entry's search columns again.
inline constexpr std::int64_t repeat_levels_schema_version = 8;

/// The index over the words, built after the stored entries were indexed (faster than
/// growing it row by row, and packed). Appends add to its pending list (GIN's fastupdate): the
/// append that fills it past 256 KiB merges it into the index (so does autovacuum). The
/// default limit, 4 MiB, left as much space of emptied pending pages in the index, ten times
/// the packed index of the benchmark's corpus.
inline constexpr const char* search_index_ddl =
    "CREATE INDEX entries_words ON entries USING gin (words) WITH (gin_pending_list_limit = 256)";

/// The schema version this library writes.
inline constexpr std::int64_t schema_version = static_cast<std::int64_t>(std::size(migrations));

/// The schema version a database holds: 0 when it has no agentcore schema.
inline std::int64_t stored_schema_version(Connection& c) {
    const Result has = c.exec(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        " AND table_name = 'agentcore_schema_migrations'",
        "reading the schema version of");
    if (has.int64(0, 0) == 0) return 0;
    const Result v = c.exec("SELECT coalesce(max(version), 0) FROM agentcore_schema_migrations",
                            "reading the schema version of");
    return v.int64(0, 0);
}

inline SessionError newer_schema(const Connection& c, std::int64_t v) {
    return SessionError(ErrorCode::invalid_session,
                        "database '" + c.name() + "' has schema version " + std::to_string(v) +
                            ", newer than this library's " + std::to_string(schema_version));
}

/// Readies a database: checks the schema version (a newer one: invalid_session, nothing
/// changed) and, when `writable`, creates or migrates the schema in one transaction. A
/// read-only connection (a replica) needs the current version.
inline void prepare(Connection& c, bool writable) {
    std::int64_t version = stored_schema_version(c);
    if (version > schema_version) throw newer_schema(c, version);
    if (version == schema_version) return;
    if (!writable)
        throw SessionError(
            ErrorCode::invalid_session,
            "database '" + c.name() + "' has schema version " + std::to_string(version) +
                "; open it for writing once to migrate it to " + std::to_string(schema_version));
    // Two first migrators may race on creating the version table itself: the loser's catalog
    // insert fails (23505, 42P07 or 42710) after the winner's commit, and the next try finds
    // the table made.
    for (int attempt = 0;; ++attempt) {
        try {
            c.exec(
                "CREATE TABLE IF NOT EXISTS agentcore_schema_migrations"
                " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)",
                "creating the schema of");
            break;
        } catch (const Error& e) {
            const bool raced =
                e.sqlstate() == "23505" || e.sqlstate() == "42P07" || e.sqlstate() == "42710";
            if (attempt >= 3 || !raced) throw;
        }
    }
    retrying(5, [&] {
        Transaction tx(c);
        bool index = false;  // a version claimed here asks for the stored entries' search columns
        bool trigrams = false;
        for (std::int64_t v = 1; v <= schema_version; ++v) {
            const Result claimed = c.exec(
                "INSERT INTO agentcore_schema_migrations (version, applied_at) VALUES ($1, now())"
                " ON CONFLICT (version) DO NOTHING RETURNING version",
                Params().int64(v), "migrating the schema of");
            if (claimed.rows() == 0)
                continue;  // applied already (perhaps just now, by another process)
            try {
                c.exec_script(migrations[v - 1], "migrating the schema of");
            } catch (const Error& e) {
                if (e.sqlstate() == "42P07")
                    throw SessionError(ErrorCode::invalid_session,
                                       "database '" + c.name() +
                                           "' holds a table named like agentcore's (sessions, "
                                           "entries) that is not "
                                           "agentcore's; use another database or schema");
                throw;
            }
            index = index || v == search_schema_version || v == bounds_schema_version ||
                    v == length_schema_version || v == repeat_levels_schema_version;
            trigrams = trigrams || v == search_schema_version;
        }
        // Once, after the scripts: the columns are all there, and the GIN index is built over
        // the written rows (faster than growing it row by row, and packed).
        if (index) {
            c.exec("DROP INDEX IF EXISTS entries_words", "migrating the schema of");
            index_stored_entries(c);
            c.exec(search_index_ddl, "migrating the schema of");
        }
        if (trigrams) (void)create_trigram_index(c);
        const std::int64_t now = stored_schema_version(c);
        if (now > schema_version) throw newer_schema(c, now);
        tx.commit();
    });
}

}  // namespace agentcore::detail::pg

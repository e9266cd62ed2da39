#pragma once
// SqliteSessionRepo: every session of a repository in one SQLite database file (SPEC §4.10,
// §9). Needs the target agentcore::sqlite; the umbrella header does not include it.

#include <agentcore/any_repo.hpp>
#include <agentcore/detail/search_bound.hpp>
#include <agentcore/detail/search_line.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/repo.hpp>
#include <agentcore/search.hpp>
#include <agentcore/session_ops.hpp>
#include <agentcore/sqlite/sqlite_storage.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace agentcore {

/// A repository of sessions in one SQLite database (created, mode 0600 in a 0700 folder, when
/// missing; its schema created or migrated on open).
class SqliteSessionRepo {
public:
    using storage_type = SqliteSessionStorage;
    using session_type = Session<SqliteSessionStorage>;

    /// Opens (or creates) the database at `path`. Not a database, or a newer schema:
    /// invalid_session, the file untouched; a symbolic link: storage.
    explicit SqliteSessionRepo(std::string path, SqliteStorageOptions options = {})
        : path_(std::move(path)), options_(std::move(options)) {
        db_ = detail::sqlite::open_database(path_, true, false, options_);
    }

    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] const SqliteStorageOptions& options() const noexcept { return options_; }
    [[nodiscard]] SqliteStorageOptions& options() noexcept { return options_; }
    /// The repository's own connection (listing, removing; forks and imports write on it).
    [[nodiscard]] detail::sqlite::Database& database() const noexcept { return *db_; }

private:
    std::string path_;
    SqliteStorageOptions options_;
    std::unique_ptr<detail::sqlite::Database> db_;
};

namespace detail::sqlite {

inline SqliteSessionRepo::session_type make_session(SqliteSessionStorage storage) {
    return SqliteSessionRepo::session_type(
        std::make_shared<SqliteSessionStorage>(std::move(storage)));
}

// The listing statements: [cwd given][oldest first][after a cursor]; keyset paging over the
// indexes (cwd, created, id) and (created, id).
inline const char* list_sql(bool cwd, bool oldest_first, bool after) {
    // Built once; the statement cache is keyed by these strings' addresses.
    static const std::string columns = "SELECT header, dialect FROM sessions";
    static const std::string sql[8] = {
        columns + " ORDER BY created DESC, id DESC LIMIT ?4",
        columns + " WHERE (created, id) < (?2, ?3) ORDER BY created DESC, id DESC LIMIT ?4",
        columns + " ORDER BY created, id LIMIT ?4",
        columns + " WHERE (created, id) > (?2, ?3) ORDER BY created, id LIMIT ?4",
        columns + " WHERE cwd = ?1 ORDER BY created DESC, id DESC LIMIT ?4",
        columns +
            " WHERE cwd = ?1 AND (created, id) < (?2, ?3) ORDER BY created DESC, id DESC "
            "LIMIT ?4",
        columns + " WHERE cwd = ?1 ORDER BY created, id LIMIT ?4",
        columns + " WHERE cwd = ?1 AND (created, id) > (?2, ?3) ORDER BY created, id LIMIT ?4",
    };
    return sql[(cwd ? 4 : 0) + (oldest_first ? 2 : 0) + (after ? 1 : 0)].c_str();
}

/// The summary of a listed session from its entries' rows (its state, and its newest entry's
/// line); empty when that line cannot be decoded.
inline std::optional<SessionSummary> listed_summary(Database& db, const SessionHeader& header,
                                                    Dialect dialect) {
    std::string last_line;
    const SessionState state = read_state(db, header.id, &last_line);
    SessionSummary out;
    out.entry_count = static_cast<std::size_t>(state.next_seq - 1);
    out.name = state.name;
    out.stats = state.stats;
    out.last_activity = header.timestamp;
    if (out.entry_count == 0) return out;
    try {
        out.last_activity = base_of(decode_entry(last_line, dialect)).timestamp;
    } catch (const SessionError&) {
        return std::nullopt;
    }
    return out;
}

}  // namespace detail::sqlite

/// Creates an empty session and returns it open for writing. A taken id: already_exists; an
/// invalid id: invalid_session.
inline SqliteSessionRepo::session_type create(SqliteSessionRepo& repo, CreateOptions options = {}) {
    SessionHeader header = detail::new_header(std::move(options), repo.options().environment);
    return detail::sqlite::make_session(
        SqliteSessionStorage::create(repo.path(), std::move(header), repo.options()));
}

/// Opens a session for writing (takes its writer lock). Unknown id: not_found; invalid id:
/// invalid_session; another writer: locked.
inline SqliteSessionRepo::session_type open(SqliteSessionRepo& repo, std::string_view id) {
    return detail::sqlite::make_session(
        SqliteSessionStorage::open(repo.path(), id, repo.options()));
}

/// Opens a session for reading only: no lock, nothing written.
inline SqliteSessionRepo::session_type open_read_only(const SqliteSessionRepo& repo,
                                                      std::string_view id) {
    return detail::sqlite::make_session(
        SqliteSessionStorage::open_read_only(repo.path(), id, repo.options()));
}

/// The sessions, newest first (by creation time, then id) unless the options say otherwise,
/// optionally of one working directory. Complexity: O(the page): keyset paging over an index.
inline SessionList list(const SqliteSessionRepo& repo, const ListOptions& options = {}) {
    auto& db = repo.database();
    auto& q = db.statement(detail::sqlite::list_sql(options.cwd.has_value(), !options.newest_first,
                                                    options.after.has_value()));
    detail::sqlite::Reset reset(q);
    if (options.cwd) q.bind(1, *options.cwd);
    if (options.after) q.bind(2, options.after->created).bind(3, options.after->id);
    const auto max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max() - 1);
    const bool bounded = options.limit < max;
    q.bind(4, bounded ? static_cast<std::int64_t>(options.limit) + 1 : std::int64_t{-1});
    SessionList out;
    while (q.step()) {
        if (bounded && out.sessions.size() == options.limit) {
            const auto& last = out.sessions.back().header;
            out.next = ListCursor{last.timestamp, last.id};
            break;
        }
        SessionListing listing;
        try {
            listing.header = decode_header(q.text(0));
        } catch (const SessionError& e) {
            out.problems.push_back(ListProblem{repo.path(), std::string(e.detail())});
            continue;
        }
        listing.dialect =
            q.int64(1) == static_cast<std::int64_t>(Dialect::pi) ? Dialect::pi : Dialect::native;
        listing.path = repo.path();
        if (options.summaries)
            listing.summary = detail::sqlite::listed_summary(db, listing.header, listing.dialect);
        out.sessions.push_back(std::move(listing));
    }
    return out;
}

/// Removes a session and its entries in one statement; an unknown id does nothing. An invalid
/// id: invalid_session. A writer that still has it open gets `storage` on its next append.
inline void remove(SqliteSessionRepo& repo, std::string_view id) {
    check_session_id(id);
    auto& db = repo.database();
    detail::sqlite::Transaction tx(db);
    detail::sqlite::remove_search_rows(db, id);
    db.statement("DELETE FROM sessions WHERE id = ?1").bind(1, id).run();
    tx.commit();
}

namespace detail::sqlite {

/// True when prepare_fork_entries left `copy` as the entry it copied: same parent, same leaf
/// target, same first kept entry (the only links it changes).
inline bool same_links(const SessionTreeEntry& copy, const SessionTreeEntry& source) {
    if (parent_id_of(copy) != parent_id_of(source)) return false;
    if (const auto* leaf = std::get_if<LeafEntry>(&copy))
        return leaf->target_id == std::get<LeafEntry>(source).target_id;
    if (const auto* compaction = std::get_if<CompactionEntry>(&copy))
        return compaction->first_kept_entry_id ==
               std::get<CompactionEntry>(source).first_kept_entry_id;
    return true;
}

}  // namespace detail::sqlite

/// Forks a session (SPEC §4.9) in one transaction: the entries of get_entries_to_fork with the
/// same ids, parent_session = the source's id, cwd and metadata inherited unless given, the
/// source's dialect. Unknown source: not_found; taken new id: already_exists. The source is
/// read without its lock and not changed.
///
/// The rows of the entries the fork keeps as they are (all but those whose links
/// prepare_fork_entries changes) are copied inside the database, their lines as stored.
inline SqliteSessionRepo::session_type fork(SqliteSessionRepo& repo, std::string_view source_id,
                                            const ForkOptions& options = {}) {
    if (options.session_id) check_session_id(*options.session_id);
    const SqliteSessionStorage source =
        SqliteSessionStorage::open_read_only(repo.path(), source_id, repo.options());
    const std::vector<EntryHandle> path = get_entries_to_fork(source, options);
    auto entries = prepare_fork_entries(path);
    // prepare_fork_entries keeps the order and leaves some entries out: match them by id.
    std::vector<bool> copied(entries.size());
    for (std::size_t i = 0, j = 0; i < entries.size(); ++i) {
        while (id_of(*path[j]) != id_of(entries[i])) ++j;
        copied[i] = detail::sqlite::same_links(entries[i], *path[j]);
    }
    SessionHeader header = detail::fork_header(source.metadata(), options,
                                               repo.options().environment, std::string(source_id));
    SqliteStorageOptions so = repo.options();
    so.dialect = source.dialect();
    return detail::sqlite::make_session(detail::sqlite::Access::create_on(
        repo.database(), std::move(header), std::move(so), entries, source_id, copied));
}

/// Creates a session holding `header` as it is and `entries` in order, its lines written in
/// `dialect` (ImportingRepository): for copies of sessions stored elsewhere. One transaction,
/// as SqliteSessionStorage::create with entries: a taken id: already_exists; an invalid id:
/// invalid_session; entries that do not form a tree: already_exists / invalid_entry; in each case
/// nothing is written.
inline SqliteSessionRepo::session_type import_session(SqliteSessionRepo& repo, SessionHeader header,
                                                      const std::vector<SessionTreeEntry>& entries,
                                                      Dialect dialect = Dialect::native) {
    SqliteStorageOptions so = repo.options();
    so.dialect = dialect;
    return detail::sqlite::make_session(detail::sqlite::Access::create_on(
        repo.database(), std::move(header), std::move(so), entries));
}

namespace detail::sqlite {

/// The most words of the index a part of a word may stand for; a part found in more (`ing`)
/// narrows down too little and is left to the matcher.
inline constexpr std::size_t max_part_words = 128;

/// The FTS5 query for `words` (index_words): whole words and prefixes as string literals, a part
/// of a word as the words of the index that contain it (search_vocab), all joined by AND.
/// Empty when the index cannot narrow the search down; nullopt when no entry can match (a
/// part that no word of the index contains). Terms appear only as string literals.
inline std::optional<std::string> fts5_candidates(Database& db,
                                                  const std::vector<IndexWord>& words) {
    std::string out;
    for (const IndexWord& w : words) {
        std::string condition;
        if (w.kind == IndexWord::Kind::part) {
            auto& v = db.statement("SELECT term FROM search_vocab WHERE instr(term, ?1) > 0");
            Reset reset(v);
            v.bind(1, w.text);
            std::size_t found = 0;
            while (found <= max_part_words && v.step()) {
                condition += found == 0 ? "(" : " OR ";
                condition += fts5_literal(v.text(0));
                ++found;
            }
            if (found == 0) return std::nullopt;
            if (found > max_part_words) continue;
            condition += ")";
        } else {
            condition = fts5_literal(w.text);
            if (w.kind == IndexWord::Kind::prefix) condition += "*";
        }
        if (!out.empty()) out += " AND ";
        out += condition;
    }
    return out;
}

}  // namespace detail::sqlite

namespace detail::sqlite {

/// An entry the index says may hold a query's words, with an upper bound of the score it can
/// get (infinity when unknown: pending entries, rows written before the counts).
struct SearchCandidate {
    std::string session_id;
    std::int64_t seq = 0;
    double bound = std::numeric_limits<double>::infinity();
};

/// The entries whose words are not yet in search_index (after their session's indexed_to, in
/// the sessions of search_pending_sessions) that meet every condition of `words`, checked as
/// the index would check them; their score is unbounded. CROSS JOIN keeps that order: one range
/// of the primary key per session with pending entries, not a scan of the entries. A line that
/// cannot be decoded is a candidate: reading it reports it.
inline std::vector<SearchCandidate> pending_candidates(Database& db,
                                                       const std::vector<IndexWord>& words,
                                                       const SearchOptions& options) {
    std::vector<SearchCandidate> out;
    auto& q = db.statement(
        "SELECT e.session_id, e.seq, e.line, s.dialect FROM search_pending_sessions p CROSS JOIN "
        "sessions s ON s.id = p.session_id CROSS JOIN entries e ON e.session_id = s.id AND e.seq "
        "> s.indexed_to WHERE ?1 IS NULL OR s.cwd = ?1");
    Reset reset(q);
    q.bind_optional(1, options.cwd);
    while (q.step()) {
        bool holds = true;
        try {
            holds = index_text_holds(
                words, search_index_text(decode_entry(q.text(2), dialect_of_column(q.int64(3)))));
        } catch (const SessionError&) {
        }
        if (holds)
            out.push_back(SearchCandidate{std::string(q.text(0)), q.int64(1),
                                          std::numeric_limits<double>::infinity()});
    }
    return out;
}

/// The candidates of a query: the entries of search_index that meet every condition of `words`
/// (matched against `match`, fts5_candidates' query; none: no entry of the index can match),
/// and the pending ones (pending_candidates).
inline std::vector<SearchCandidate> search_candidates(Database& db,
                                                      const std::vector<IndexWord>& words,
                                                      const std::optional<std::string>& match,
                                                      const SearchOptions& options) {
    std::vector<SearchCandidate> out = pending_candidates(db, words, options);
    if (match) {
        auto& q = db.statement(
            "SELECT r.session_id, r.seq FROM search_index JOIN search_rows r ON r.row = "
            "search_index.rowid WHERE search_index MATCH ?1 AND (?2 IS NULL OR r.session_id IN "
            "(SELECT id FROM sessions WHERE cwd = ?2))");
        Reset reset(q);
        q.bind(1, *match).bind_optional(2, options.cwd);
        while (q.step())
            out.push_back(SearchCandidate{std::string(q.text(0)), q.int64(1),
                                          std::numeric_limits<double>::infinity()});
    }
    return out;
}

/// The rows of search_index (or with `repeats`, of search_repeats) that meet `match`, an FTS5
/// query of string literals, in ascending order.
inline std::vector<std::int64_t> matching_rows(Database& db, const std::string& match,
                                               bool repeats = false) {
    auto& q = db.statement(repeats ? "SELECT rowid FROM search_repeats WHERE search_repeats "
                                     "MATCH ?1 ORDER BY rowid"
                                   : "SELECT rowid FROM search_index WHERE search_index MATCH ?1 "
                                     "ORDER BY rowid");
    Reset reset(q);
    q.bind(1, match);
    std::vector<std::int64_t> out;
    while (q.step()) out.push_back(q.int64(0));
    return out;
}

/// What a search needs of a session: its header, name and dialect, read once.
struct SearchedSession {
    bool found = false;   ///< false: removed since the index was asked (skipped)
    bool passes = false;  ///< the session filters of the options let it through
    SessionHeader header;
    std::string name;
    Dialect dialect = Dialect::native;
};

inline SearchedSession searched_session(const SqliteSessionRepo& repo, const std::string& id,
                                        const SearchOptions& options) {
    auto& db = repo.database();
    SearchedSession out;
    {
        auto& s = db.statement("SELECT header, dialect FROM sessions WHERE id = ?1");
        Reset reset(s);
        s.bind(1, id);
        if (!s.step()) return out;
        out.found = true;
        try {
            out.header = decode_header(s.text(0));
        } catch (const SessionError& e) {
            throw SessionError(ErrorCode::invalid_session,
                               "session '" + id + "' in database '" + repo.path() +
                                   "': header: " + std::string(e.detail()),
                               ErrorLocation{.session = id});
        }
        out.dialect = dialect_of_column(s.int64(1));
    }
    out.name = session_name(db, id).value_or("");
    out.passes = session_passes(options, out.header, out.name);
    return out;
}

/// Reads one candidate entry and gives its hit, if it is one, to `sink` (returns false when the
/// sink stopped). Only the entry's text fields are read (SearchLineReader), as in a JSONL scan.
/// A line the codec refuses: invalid_entry naming session and position, never the text.
inline bool search_candidate(const SqliteSessionRepo& repo, const SearchQuery& query,
                             const SearchOptions& options, const SearchedSession& session,
                             SearchLineReader& reader, SearchLineFields& fields,
                             const std::string& session_id, std::int64_t seq,
                             const SearchHitSink& sink) {
    auto& e =
        repo.database().statement("SELECT line FROM entries WHERE session_id = ?1 AND seq = ?2");
    Reset reset(e);
    e.bind(1, session_id).bind(2, seq);
    if (!e.step()) return true;
    const std::string_view line = e.text(0);
    const auto fail = [&](const std::string& why) {
        std::string what = "session '";
        what.append(session_id).append("' in database '").append(repo.path());
        what.append("' entry ").append(std::to_string(seq)).append(": ").append(why);
        throw SessionError(
            ErrorCode::invalid_entry, what,
            ErrorLocation{.session = session_id, .seq = static_cast<std::uint64_t>(seq)});
    };
    ScannedEntry scanned;
    std::string reason;
    SkipMemo memo;
    if (!JsonScanner::scan_entry(line, session.dialect, scanned, reason, &memo)) fail(reason);
    return search_entry_line(query, options, reader, fields, line, &memo, session.dialect,
                             session.header, session.name, static_cast<std::uint64_t>(seq - 1),
                             sink, fail);
}

}  // namespace detail::sqlite

/// Streams the hits of `query` over the repository's sessions to `sink` (SearchOptions and
/// search_each in search.hpp). The FTS5 index of words (`search_index`, and the words of each
/// session's entries not yet moved into it, read from their lines) gives the entries that meet
/// every condition of detail::index_words: they hold the query's words and prefixes, and words
/// containing the parts of words of substring terms (looked up in the index's list of words).
/// Each of them is read, decoded and judged by the matcher of search.hpp, so the hits are those
/// of every other repository. A query that gives no condition (`a*`, a substring term inside
/// words that too many words of the index contain) reads every session that passes the cwd
/// filter. Terms reach FTS5 only as string literals in a bound parameter.
///
/// Complexity: one index query (and one pass over the index's words per part of a word), then
/// one read per candidate entry.
inline void search_each(const SqliteSessionRepo& repo, const SearchQuery& query,
                        const SearchOptions& options, const SearchHitSink& sink);

namespace detail::sqlite {

/// search_each with the query's index words and their FTS5 query (fts5_candidates) at hand.
inline void search_each_matching(const SqliteSessionRepo& repo, const SearchQuery& query,
                                 const SearchOptions& options, const SearchHitSink& sink,
                                 const std::vector<IndexWord>& words,
                                 const std::optional<std::string>& match) {
    auto& db = repo.database();
    if (match && match->empty()) {
        agentcore::search_each<SqliteSessionRepo>(repo, query, options, sink);
        return;
    }
    std::vector<detail::sqlite::SearchCandidate> candidates =
        detail::sqlite::search_candidates(db, words, match, options);
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
        return std::tie(a.session_id, a.seq) < std::tie(b.session_id, b.seq);
    });
    detail::SearchLineFields fields;
    std::size_t i = 0;
    while (i < candidates.size()) {
        const std::string session_id = candidates[i].session_id;
        std::size_t end = i;
        while (end < candidates.size() && candidates[end].session_id == session_id) ++end;
        const detail::sqlite::SearchedSession session =
            detail::sqlite::searched_session(repo, session_id, options);
        if (session.found && session.passes) {
            detail::SearchLineReader reader(session.dialect, options.text);
            for (; i < end; ++i) {
                // The same entry may be pending and indexed (a writer's move under way).
                if (i > 0 && candidates[i - 1].session_id == session_id &&
                    candidates[i - 1].seq == candidates[i].seq)
                    continue;
                if (!detail::sqlite::search_candidate(repo, query, options, session, reader, fields,
                                                      session_id, candidates[i].seq, sink))
                    return;
            }
        }
        i = end;
    }
}

}  // namespace detail::sqlite

inline void search_each(const SqliteSessionRepo& repo, const SearchQuery& query,
                        const SearchOptions& options, const SearchHitSink& sink) {
    detail::check_search_options(options);
    const std::vector<detail::IndexWord> words = detail::index_words(query);
    const std::optional<std::string> match =
        words.empty() ? std::string() : detail::sqlite::fts5_candidates(repo.database(), words);
    detail::sqlite::search_each_matching(repo, query, options, sink, words, match);
}

/// The page of hits of `query` that the options ask for (search in search.hpp: the same hits,
/// order and cursor as every repository). In relevance order of a words query, the candidates
/// are read best bound first, and the reading stops once the page and one hit more are found
/// and no candidate left can score as much as the last of them. An indexed entry's bound comes
/// from how often it can hold each term (search_repeats marks the words it holds 2, 3, 4, 8 times
/// or more) and its word count (search_rows): the best hits of a word that thousands of entries
/// hold cost the reading of the few that repeat it or are short enough to compete. Other orders
/// and modes read every candidate (search_each).
///
/// Complexity: the index query and one query of search_repeats per level and word of the
/// query, one look-up per candidate whose bound without its length reaches the page, one read
/// per candidate whose bound reaches it.
inline SearchResult search(const SqliteSessionRepo& repo, const SearchQuery& query,
                           const SearchOptions& options = {}) {
    detail::check_search_options(options);
    auto& db = repo.database();
    // One snapshot for the index, the repeats, the rows and the lines.
    const detail::sqlite::ReadTransaction snapshot(db);
    const std::vector<detail::IndexWord> words = detail::index_words(query);
    const std::optional<std::string> match =
        words.empty() ? std::string() : detail::sqlite::fts5_candidates(db, words);
    std::vector<SearchHit> hits;
    const auto keep = [&hits](SearchHit&& h) {
        hits.push_back(std::move(h));
        return true;
    };
    if (options.order != SearchOrder::relevance || query.mode != SearchMode::words ||
        (match && match->empty())) {
        detail::sqlite::search_each_matching(repo, query, options, keep, words, match);
        return detail::page_hits(std::move(hits), options);
    }
    // The candidates by the bound of their score, best first: the pending entries (unbounded),
    // then the indexed ones. An indexed entry's bound is first taken from its terms' repeats
    // alone (as if it had no words besides) and made tighter, by its length, only once no
    // candidate left could beat it, so that entries that cannot reach the page are never
    // looked up.
    std::vector<detail::sqlite::SearchCandidate> heap =
        detail::sqlite::pending_candidates(db, words, options);
    struct Loose {
        double bound;
        std::int64_t row;
    };
    std::vector<Loose> loose;
    if (match) {
        const detail::TermRepeats<std::int64_t> repeats(query, [&db](const std::string& mark) {
            return detail::sqlite::matching_rows(db, detail::fts5_literal(mark), true);
        });
        std::vector<double> most;
        for (const std::int64_t row : detail::sqlite::matching_rows(db, *match)) {
            repeats.most(row, most);
            loose.push_back(Loose{detail::score_sum_bound(query, most), row});
        }
        std::sort(loose.begin(), loose.end(), [](const Loose& a, const Loose& b) {
            return a.bound != b.bound ? a.bound > b.bound : a.row < b.row;
        });
    }
    const auto lower = [](const detail::sqlite::SearchCandidate& a,
                          const detail::sqlite::SearchCandidate& b) {
        if (a.bound != b.bound) return a.bound < b.bound;
        return std::tie(a.session_id, a.seq) > std::tie(b.session_id, b.seq);
    };
    std::make_heap(heap.begin(), heap.end(), lower);
    const bool defaults = detail::reads_default_words(options.text);
    auto& row_of = db.statement(
        "SELECT r.session_id, r.seq, r.words, r.base_words FROM search_rows r WHERE r.row = ?1 "
        "AND (?2 IS NULL OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = r.session_id AND "
        "s.cwd = ?2))");
    std::size_t next = 0;
    detail::PageScores page(options);
    std::map<std::string, detail::sqlite::SearchedSession, std::less<>> sessions;
    std::set<std::pair<std::string, std::int64_t>> read;
    detail::SearchLineFields fields;
    for (;;) {
        while (next < loose.size() && (heap.empty() || heap.front().bound < loose[next].bound)) {
            const Loose& l = loose[next++];
            detail::sqlite::Reset reset(row_of);
            row_of.bind(1, l.row).bind_optional(2, options.cwd);
            if (!row_of.step()) continue;  // another session's, or removed since
            const int count_column = defaults ? 2 : 3;
            heap.push_back(detail::sqlite::SearchCandidate{
                std::string(row_of.text(0)), row_of.int64(1),
                row_of.is_null(count_column)
                    ? l.bound
                    : l.bound / detail::length_share(row_of.int64(count_column))});
            std::push_heap(heap.begin(), heap.end(), lower);
        }
        if (heap.empty()) break;
        std::pop_heap(heap.begin(), heap.end(), lower);
        const detail::sqlite::SearchCandidate c = std::move(heap.back());
        heap.pop_back();
        // No candidate left, looked up or not, can score more than c.
        if (!page.can_reach(c.bound)) break;
        if (!read.emplace(c.session_id, c.seq).second) continue;
        auto it = sessions.find(c.session_id);
        if (it == sessions.end())
            it = sessions
                     .emplace(c.session_id,
                              detail::sqlite::searched_session(repo, c.session_id, options))
                     .first;
        const detail::sqlite::SearchedSession& session = it->second;
        if (!session.found || !session.passes) continue;
        detail::SearchLineReader reader(session.dialect, options.text);
        detail::sqlite::search_candidate(repo, query, options, session, reader, fields,
                                         c.session_id, c.seq, [&](SearchHit&& h) {
                                             page.add(hits, std::move(h));
                                             return true;
                                         });
    }
    return detail::page_hits(std::move(hits), options);
}

static_assert(SessionRepository<SqliteSessionRepo>);
static_assert(ImportingRepository<SqliteSessionRepo>);

namespace detail::sqlite {

/// Registers "sqlite:PATH" with open_repository wherever this header is included.
inline const bool scheme_registered =
    register_repository_scheme("sqlite", [](std::string_view rest) {
        if (rest.empty())
            throw SessionError(ErrorCode::invalid_session,
                               "repository URL 'sqlite:': no database path after the colon");
        return AnyRepository(SqliteSessionRepo(std::string(rest)), "sqlite:" + std::string(rest));
    });

}  // namespace detail::sqlite

}  // namespace agentcore

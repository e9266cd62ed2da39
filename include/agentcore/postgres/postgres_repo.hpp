#pragma once
// PostgresSessionRepo: every session of a repository in one PostgreSQL database (or schema),
// shared by agent servers on many machines (SPEC §4.10, §9). Needs the target
// agentcore::postgres; the umbrella header does not include it. Including this header
// registers the URL schemes postgresql:// and postgres:// with open_repository:
//
//     auto repo = agentcore::open_repository("postgresql://agent@db.internal/agents");
//
// The URL (or any libpq connection string given to the constructor) is passed to libpq as it
// is: host, port, user, database, TLS and the other libpq parameters all work; the password is
// best kept out of it (PGPASSWORD, ~/.pgpass).

#include <agentcore/any_repo.hpp>
#include <agentcore/detail/search_bound.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/postgres/detail/fork.hpp>
#include <agentcore/postgres/detail/pg.hpp>
#include <agentcore/postgres/postgres_storage.hpp>
#include <agentcore/repo.hpp>
#include <agentcore/search.hpp>
#include <agentcore/session_ops.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore {

/// A repository of sessions in one PostgreSQL database; its schema is created or migrated when
/// it is opened. Copies share the connections; thread-safe (each session it opens is used by
/// one thread at a time).
class PostgresSessionRepo {
public:
    using storage_type = PostgresSessionStorage;
    using session_type = Session<PostgresSessionStorage>;

    /// Connects with a libpq connection string or URI and readies the schema. An unreachable
    /// server: storage; a newer schema: invalid_session.
    explicit PostgresSessionRepo(std::string conninfo, PostgresStorageOptions options = {})
        : conninfo_(std::move(conninfo)), options_(std::move(options)) {
        pool_ = std::make_shared<detail::pg::Pool>(conninfo_);
        (void)detail::pg::connect(pool_, std::string(), true, options_);
        read_pool_ =
            options_.replica ? std::make_shared<detail::pg::Pool>(*options_.replica) : pool_;
    }

    [[nodiscard]] const std::string& conninfo() const noexcept { return conninfo_; }
    [[nodiscard]] const PostgresStorageOptions& options() const noexcept { return options_; }
    [[nodiscard]] PostgresStorageOptions& options() noexcept { return options_; }
    /// The connections to the primary (writers, forks, removal) and to the replica named in the
    /// options, or the primary (read-only opens, listing).
    [[nodiscard]] const std::shared_ptr<detail::pg::Pool>& pool() const noexcept { return pool_; }
    [[nodiscard]] const std::shared_ptr<detail::pg::Pool>& read_pool() const noexcept {
        return read_pool_;
    }

private:
    std::string conninfo_;
    PostgresStorageOptions options_;
    std::shared_ptr<detail::pg::Pool> pool_;
    std::shared_ptr<detail::pg::Pool> read_pool_;
};

namespace detail::pg {

inline PostgresSessionRepo::session_type make_session(PostgresSessionStorage storage) {
    return PostgresSessionRepo::session_type(
        std::make_shared<PostgresSessionStorage>(std::move(storage)));
}

}  // namespace detail::pg

/// Creates an empty session and returns it open for writing (its lease taken). A taken id:
/// already_exists; an invalid id: invalid_session.
inline PostgresSessionRepo::session_type create(PostgresSessionRepo& repo,
                                                CreateOptions options = {}) {
    SessionHeader header = detail::new_header(std::move(options), repo.options().environment);
    return detail::pg::make_session(
        PostgresSessionStorage::create(repo.pool(), std::move(header), repo.options()));
}

/// Opens a session for writing (takes its lease). Unknown id: not_found; invalid id:
/// invalid_session; another writer's unexpired lease: locked.
inline PostgresSessionRepo::session_type open(PostgresSessionRepo& repo, std::string_view id) {
    return detail::pg::make_session(PostgresSessionStorage::open(repo.pool(), id, repo.options()));
}

/// Opens a session for reading only (on the replica, when the options name one): no lease.
inline PostgresSessionRepo::session_type open_read_only(const PostgresSessionRepo& repo,
                                                        std::string_view id) {
    return detail::pg::make_session(
        PostgresSessionStorage::open_read_only(repo.read_pool(), id, repo.options()));
}

namespace detail::pg {

/// The summary of a listed session from list's row (from column 2: the session's state columns,
/// then its newest entry's line); empty when that line cannot be decoded.
inline std::optional<SessionSummary> listed_summary(const Result& r, int i,
                                                    const SessionListing& listing) {
    const SessionState state = state_of(r, i, 2);
    SessionSummary out;
    out.entry_count = static_cast<std::size_t>(std::max<std::int64_t>(state.next_seq - 1, 0));
    out.name = state.name;
    out.stats = state.stats;
    out.last_activity = listing.header.timestamp;
    if (out.entry_count == 0) return out;
    if (r.is_null(i, 10)) return std::nullopt;
    try {
        out.last_activity = base_of(decode_entry(r.text(i, 10), listing.dialect)).timestamp;
    } catch (const SessionError&) {
        return std::nullopt;
    }
    return out;
}

}  // namespace detail::pg

/// The sessions, newest first (by creation time, then id) unless the options say otherwise,
/// optionally of one working directory. Complexity: O(the page), keyset paging over the
/// indexes (cwd, created, id) and (created, id).
inline SessionList list(const PostgresSessionRepo& repo, const ListOptions& options = {}) {
    SessionList out;
    const bool nul = (options.cwd && detail::pg::has_nul(*options.cwd)) ||
                     (options.after && (detail::pg::has_nul(options.after->created) ||
                                        detail::pg::has_nul(options.after->id)));
    if (nul) return out;  // no stored text holds a NUL byte
    const auto link = detail::pg::connect(repo.read_pool(), std::string(), false, repo.options());
    std::string sql = "SELECT header, dialect";
    if (options.summaries)
        sql += std::string(", ") + detail::pg::state_columns +
               ", (SELECT e.line FROM entries e WHERE e.session_id = sessions.id AND e.seq = "
               "sessions.next_seq - 1)";
    sql += " FROM sessions";
    detail::pg::Params p;
    int n = 0;
    const char* joiner = " WHERE ";
    if (options.cwd) {
        p.text(*options.cwd);
        sql += joiner + std::string("cwd = $") + std::to_string(++n);
        joiner = " AND ";
    }
    if (options.after) {
        p.text(options.after->created).text(options.after->id);
        sql += joiner + std::string("(created, id) ") + (options.newest_first ? "<" : ">") + " ($" +
               std::to_string(n + 1) + ", $" + std::to_string(n + 2) + ")";
        n += 2;
    }
    sql += options.newest_first ? " ORDER BY created DESC, id DESC" : " ORDER BY created, id";
    const auto max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max() - 1);
    const bool bounded = options.limit < max;
    if (bounded) {
        p.int64(static_cast<std::int64_t>(options.limit) + 1);
        sql += " LIMIT $" + std::to_string(++n);
    }
    const auto r = link->conn->exec(sql, p, "listing the sessions of");
    const std::string where = "postgresql database '" + link->conn->name() + "'";
    for (int i = 0; i < r.rows(); ++i) {
        if (bounded && out.sessions.size() == options.limit) {
            const auto& last = out.sessions.back().header;
            out.next = ListCursor{last.timestamp, last.id};
            break;
        }
        SessionListing listing;
        try {
            listing.header = decode_header(r.text(i, 0));
        } catch (const SessionError& e) {
            out.problems.push_back(ListProblem{where, std::string(e.detail())});
            continue;
        }
        listing.dialect =
            r.int64(i, 1) == static_cast<std::int64_t>(Dialect::pi) ? Dialect::pi : Dialect::native;
        if (options.summaries) listing.summary = detail::pg::listed_summary(r, i, listing);
        out.sessions.push_back(std::move(listing));
    }
    return out;
}

/// Removes a session and its entries in one transaction; an unknown id does nothing. An invalid
/// id: invalid_session. A writer that still has it open gets `storage` on its next append.
///
/// The session's row goes first: an append in flight holds that row until it commits, and the
/// entries are deleted by a later statement, which sees that append's entry; an append after it
/// finds no row to update and so writes no entry.
inline void remove(PostgresSessionRepo& repo, std::string_view id) {
    check_session_id(id);
    const auto link = detail::pg::connect(repo.pool(), std::string(), true, repo.options());
    detail::pg::retrying(repo.options().attempts, [&] {
        detail::pg::Transaction tx(*link->conn);
        link->conn->exec("DELETE FROM sessions WHERE id = $1", detail::pg::Params().text(id),
                         "removing a session from");
        link->conn->exec("DELETE FROM entries WHERE session_id = $1", detail::pg::Params().text(id),
                         "removing a session from");
        tx.commit();
    });
}

/// Forks a session (SPEC §4.9) on the server, in one transaction (see
/// detail::pg::ForkAccess): the entries of get_entries_to_fork with the same ids,
/// parent_session = the source's id, cwd and metadata inherited unless given, the source's
/// dialect. Unknown source: not_found; bad target: invalid_fork_target; taken new id:
/// already_exists. The source is read without its lease and not changed.
inline PostgresSessionRepo::session_type fork(PostgresSessionRepo& repo, std::string_view source_id,
                                              const ForkOptions& options = {}) {
    return detail::pg::make_session(
        detail::pg::ForkAccess::fork(repo.pool(), source_id, options, repo.options()));
}

/// Creates a session holding `header` as it is and `entries` in order, its lines written in
/// `dialect` (ImportingRepository): for copies of sessions stored elsewhere. One transaction,
/// as PostgresSessionStorage::create with entries: a taken id: already_exists; an invalid id:
/// invalid_session; entries that do not form a tree: already_exists / invalid_entry; in each case
/// nothing is written. Returns the session open for writing (its lease taken).
inline PostgresSessionRepo::session_type import_session(
    PostgresSessionRepo& repo, SessionHeader header, const std::vector<SessionTreeEntry>& entries,
    Dialect dialect = Dialect::native) {
    PostgresStorageOptions options = repo.options();
    options.dialect = dialect;
    return detail::pg::make_session(PostgresSessionStorage::create(repo.pool(), std::move(header),
                                                                   std::move(options), entries));
}

namespace detail::pg {

/// Judges the rows of a search statement by the matcher of search.hpp: rows of kind 0 are
/// sessions (id, header, dialect, name), each before its entries, rows of kind 1 are entries
/// (session id, position, line), the whole in the order of session ids; rows of kind 2 are
/// search's candidates, passed over. Each hit goes to `sink`;
/// false when the sink asked to stop. `where` names the database in errors.
inline bool judge_rows(const Result& r, const std::string& where, const SearchQuery& query,
                       const SearchOptions& options, const SearchHitSink& sink) {
    SessionHeader header;
    Dialect dialect = Dialect::native;
    std::string name;
    std::string session_id;  // the session of the last kind 0 row
    bool passes = false;
    for (int i = 0; i < r.rows(); ++i) {
        const std::int64_t kind = r.int64(i, 0);
        if (kind == 2 && r.is_null(i, 3)) continue;  // a candidate without its line
        if (kind == 0) {
            session_id = r.text(i, 1);
            try {
                header = decode_header(r.text(i, 3));
            } catch (const SessionError& e) {
                std::string what = "session '";
                what.append(session_id).append("' in ").append(where).append(": header: ");
                what.append(e.detail());
                throw SessionError(ErrorCode::invalid_session, what);
            }
            dialect = r.int64(i, 4) == static_cast<std::int64_t>(Dialect::pi) ? Dialect::pi
                                                                              : Dialect::native;
            name = r.optional_text(i, 5).value_or("");
            passes = session_passes(options, header, name);
            continue;
        }
        // An entry follows its session's row (the statement reads one snapshot).
        if (!passes || r.text(i, 1) != session_id) continue;
        const std::int64_t seq = r.int64(i, 2);
        SessionTreeEntry entry;
        try {
            entry = decode_entry(r.text(i, 3), dialect);
        } catch (const SessionError& e) {
            std::string what = "session '";
            what.append(session_id).append("' in ").append(where).append(" entry ");
            what.append(std::to_string(seq)).append(": ").append(e.detail());
            throw SessionError(ErrorCode::invalid_entry, what);
        }
        if (!search_entry(query, options, header, name, entry, static_cast<std::uint64_t>(seq - 1),
                          sink))
            return false;
    }
    return true;
}

/// The fewest and the most candidate lines a page by relevance reads in one statement: as many
/// as the page still lacks or as were read before, within these.
inline constexpr std::size_t read_batch_min = 32;
inline constexpr std::size_t read_batch_max = 1024;

/// The end of a search statement over candidate entries `c` (session_id, seq, line): their
/// sessions' rows looked up by id (the array of their ids is computed first, so that the
/// planner never joins the candidates with every session's row), then the entries, in the
/// shape judge_rows reads.
inline constexpr const char* judged_rows_sql =
    "SELECT 0 AS kind, id, 0::bigint AS seq, header, dialect, name FROM sessions WHERE id = "
    "ANY(ARRAY(SELECT DISTINCT session_id FROM c)) "
    "UNION ALL SELECT 1, session_id, seq, line, 0, NULL FROM c ORDER BY 2, 1, 3";

}  // namespace detail::pg

/// Streams the hits of `query` over the repository's sessions to `sink` (SearchOptions and
/// search_each in search.hpp). The search index (detail/search_index.hpp: each entry's words as a
/// tsvector under a GIN index) gives the entries that meet every condition of
/// detail::index_words: they hold the query's words and prefixes, and words containing the parts
/// of words of substring terms (looked up in search_words). Each of them is read, decoded and
/// judged by the matcher of search.hpp, so the hits are those of every other repository. A
/// query that gives no condition (`a*`, a substring term inside words that too many words of
/// the index contain) reads every session that passes the session filters. Terms reach the
/// server only as bound parameters: the tsquery is made of quoted lexemes.
///
/// Throws invalid_query for options that cannot be met; storage when the database fails;
/// invalid_session / invalid_entry for a stored header or line the codec cannot read.
///
/// Complexity: one statement (and one lookup in the list of words per part of a word), prepared
/// once per connection, whose rows are the candidate entries' lines, each decoded and matched,
/// and their sessions' rows.
inline void search_each(const PostgresSessionRepo& repo, const SearchQuery& query,
                        const SearchOptions& options, const SearchHitSink& sink) {
    detail::check_search_options(options);
    const std::vector<detail::IndexWord> words = detail::index_words(query);
    if (words.empty()) {
        search_each<PostgresSessionRepo>(repo, query, options, sink);
        return;
    }
    if (options.cwd && detail::pg::has_nul(*options.cwd)) return;  // no stored cwd holds one
    const auto link = detail::pg::connect(repo.read_pool(), std::string(), false, repo.options());
    auto& c = *link->conn;
    const std::string tsquery = detail::pg::tsquery_of(c, words);
    if (tsquery.empty()) {
        search_each<PostgresSessionRepo>(repo, query, options, sink);
        return;
    }
    // One statement, prepared once per connection: the candidates, and their sessions' rows.
    const auto r = c.exec_prepared(
        "WITH c AS MATERIALIZED (SELECT session_id, seq, line FROM entries WHERE words @@ "
        "$1::tsquery AND ($2::text IS NULL OR session_id IN (SELECT id FROM sessions WHERE cwd = "
        "$2))) " +
            std::string(detail::pg::judged_rows_sql),
        detail::pg::Params().text(tsquery).text(options.cwd), "searching");
    (void)detail::pg::judge_rows(r, "database '" + c.name() + "'", query, options, sink);
}

namespace detail::pg {

/// A set of candidates of a page by relevance that one index query gives (`tsquery`), and the
/// most any of them can score (`bound`): the entries of one length class whose repeat marks
/// say each term occurs at most `most` times (per term; infinity: unknown).
struct CandidateClass {
    std::string tsquery;
    double bound = std::numeric_limits<double>::infinity();
    std::vector<double> most;
};

/// The most terms of a query whose repeat levels candidate_classes tells apart one by one;
/// beyond them a class is made of the highest level any term reaches (none and the levels of
/// repeat_levels but 3, so 4 × 4 classes of each length for two terms, and 4 for more; a
/// single term's classes tell all 5 apart).
inline constexpr std::size_t classes_by_term = 2;

/// The classes that together hold every candidate of a words query (`words`: its
/// index_words), best bound first: for each length class (length_mark) and each repeat level of
/// the terms, the entries of that class and level; and the entries the index could not hold
/// (unindexed_lexeme), which have no bound. A term reaches a level of repeat_levels when the
/// entry repeats each of its whole words that often; a class gives each term of the query (up
/// to classes_by_term of them) the level it reaches exactly, or none, or with more terms the
/// highest level any of them reaches. The classes do not overlap. A whole word of a term that
/// the class says reaches a level is asked for by its mark alone (it implies the word): fewer
/// and shorter lists of the index to intersect.
inline std::vector<CandidateClass> candidate_classes(const SearchQuery& query,
                                                     const std::vector<IndexWord>& words) {
    std::vector<std::size_t> bounded;             // the terms that count and have whole words
    std::vector<std::vector<std::string>> whole;  // their whole words
    for (std::size_t t = 0; t < query.terms.size(); ++t) {
        std::vector<std::string> term_words = term_whole_words(query.terms[t]);
        if (term_words.empty()) continue;
        bounded.push_back(t);
        whole.push_back(std::move(term_words));
    }
    // The levels the classes tell apart (indexes into repeat_levels). With one bounded term,
    // every level. With more, not 3: a class per combination of the terms' levels costs a GIN
    // lookup, and level 3 took a pair's classes from 16 to 25 per length; an entry marked at 2
    // and not at 4 is then bounded as holding the term 3 times, as before version 8.
    std::vector<int> used;
    for (std::size_t l = 0; l < std::size(repeat_levels); ++l)
        if (bounded.size() <= 1 || repeat_levels[l] != 3) used.push_back(static_cast<int>(l));
    const int marked_levels = static_cast<int>(used.size());
    // Bounded term b reaches repeat_levels[used[level]]: each of its whole words is marked at it.
    const auto reaches = [&whole, &used](std::size_t b, int level) {
        std::string out = "(";
        for (std::size_t i = 0; i < whole[b].size(); ++i) {
            if (i) out += " & ";
            out += tsquery_literal(repeat_mark(
                whole[b][i],
                repeat_levels[static_cast<std::size_t>(used[static_cast<std::size_t>(level)])]));
        }
        return out + ")";
    };
    // The entries at exactly `level` (-1: none) of what `reach(level)` asks for.
    const auto exactly = [marked_levels](const auto& reach, int level) {
        std::string out;
        if (level >= 0) out = reach(level);
        const int above = level + 1;
        if (above < marked_levels) out += (out.empty() ? "!" : " & !") + reach(above);
        return out;
    };
    struct Level {
        std::string condition;
        std::vector<double> most;
    };
    std::vector<Level> levels;
    const auto most_with = [&](const std::vector<int>& marked) {
        std::vector<double> most(query.terms.size(), std::numeric_limits<double>::infinity());
        for (std::size_t b = 0; b < bounded.size(); ++b) {
            // The most below the next level told apart (most_repeats of the level before it).
            const int next = marked[b] + 1;
            most[bounded[b]] = next < marked_levels
                                   ? most_repeats(used[static_cast<std::size_t>(next)] - 1)
                                   : std::numeric_limits<double>::infinity();
        }
        return most;
    };
    if (bounded.size() <= classes_by_term) {
        // Every combination of the terms' levels.
        std::vector<int> marked(bounded.size(), -1);
        for (;;) {
            std::vector<IndexWord> asked;  // the words no mark of the class implies
            for (const IndexWord& w : words) {
                bool implied = false;
                for (std::size_t b = 0; b < bounded.size() && w.kind == IndexWord::Kind::whole; ++b)
                    implied =
                        implied || (marked[b] >= 0 && std::find(whole[b].begin(), whole[b].end(),
                                                                w.text) != whole[b].end());
                if (!implied) asked.push_back(w);
            }
            Level level{words_conditions(asked), most_with(marked)};
            for (std::size_t b = 0; b < bounded.size(); ++b) {
                const std::string part = exactly([&](int l) { return reaches(b, l); }, marked[b]);
                level.condition += (level.condition.empty() ? "" : " & ") + part;
            }
            levels.push_back(std::move(level));
            std::size_t b = 0;
            while (b < marked.size() && ++marked[b] == marked_levels) marked[b++] = -1;
            if (b == marked.size()) break;
        }
    } else {
        // The highest level any term reaches.
        const auto any_reaches = [&](int level) {
            std::string out = "(";
            for (std::size_t b = 0; b < bounded.size(); ++b)
                out += (b ? " | " : "") + reaches(b, level);
            return out + ")";
        };
        for (int marked = -1; marked < marked_levels; ++marked)
            levels.push_back(
                Level{"(" + words_conditions(words) + ") & " + exactly(any_reaches, marked),
                      most_with(std::vector<int>(bounded.size(), marked))});
    }
    std::vector<CandidateClass> out;
    out.push_back(CandidateClass{
        tsquery_literal(unindexed_lexeme), std::numeric_limits<double>::infinity(), {}});
    for (std::size_t k = 0; k < std::size(length_class_floors); ++k)
        for (const Level& level : levels)
            out.push_back(CandidateClass{
                tsquery_literal(length_mark(k)) + " & (" + level.condition + ")",
                score_sum_bound(query, level.most) / length_share(length_class_floors[k]),
                level.most});
    std::stable_sort(out.begin(), out.end(), [](const CandidateClass& a, const CandidateClass& b) {
        return a.bound > b.bound;
    });
    return out;
}

/// The most classes of candidates one statement asks for.
inline constexpr std::size_t class_batch = 8;

}  // namespace detail::pg

/// The page of hits of `query` that the options ask for (search in search.hpp: the same hits,
/// order and cursor as every repository). In relevance order of a words query, the first
/// statement gives the candidates, with their lines, when there are no more of them than the
/// page needs (a rare word: one statement in all). Otherwise the candidates are read best bound
/// first, a batch of lines at a time, and the reading stops once the page and one hit more are
/// found and no candidate left can score as much as the last of them. A candidate's bound comes
/// from its word count and how often it can hold each term (the marks of the words it repeats
/// 2, 3, 4, 8 times or more, in its tsvector). When the text options read at least what the
/// defaults read, the candidates are asked for by class (candidate_classes: a length class and
/// the terms' repeat levels, all marked in the tsvector), best class first; a class that cannot
/// reach the page is never asked for: the best hits of a word that thousands of entries hold cost
/// the rows of the few that repeat it or are short enough to compete. Options that leave tool
/// output out or cut it shorter read shorter texts than the classes assume: every candidate's key
/// and base count is read then, and each bounded alone. An entry never changes once written, so its
/// bound holds across statements; each batch of lines is read with its sessions' rows in one
/// statement. Other orders and modes read every candidate (search_each).
///
/// Complexity: one statement when the candidates are no more than the page needs; else one
/// statement per class_batch classes asked for and one per batch of lines (with options that
/// read less: one for the candidates' counts, one index query per level and whole word of the
/// query, and one per batch). A page without a limit is search_each's one statement.
inline SearchResult search(const PostgresSessionRepo& repo, const SearchQuery& query,
                           const SearchOptions& options = {}) {
    detail::check_search_options(options);
    std::vector<SearchHit> hits;
    const auto keep = [&hits](SearchHit&& h) {
        hits.push_back(std::move(h));
        return true;
    };
    const std::vector<detail::IndexWord> words = detail::index_words(query);
    if (options.order != SearchOrder::relevance || query.mode != SearchMode::words ||
        words.empty() || options.limit == std::numeric_limits<std::size_t>::max() ||
        (options.cwd && detail::pg::has_nul(*options.cwd))) {
        search_each(repo, query, options, keep);
        return detail::page_hits(std::move(hits), options);
    }
    const auto link = detail::pg::connect(repo.read_pool(), std::string(), false, repo.options());
    auto& c = *link->conn;
    // Words mode asks for whole words and prefixes only (no parts of words): never empty.
    const std::string tsquery = detail::pg::tsquery_of(c, words);
    detail::PageScores page(options);
    const std::string where = "database '" + c.name() + "'";
    const bool by_class = detail::reads_default_words(options.text);
    const auto wanted = static_cast<std::int64_t>(
        std::min<std::size_t>(page.wanted(), std::numeric_limits<std::int64_t>::max() - 1));
    // The candidates (kind 2: key, when they are no more than $3 their lines, and the base word
    // count) and then their sessions' rows, as judge_rows reads them, in one snapshot. By
    // class, the statement stops at one candidate more than the page needs ($4; NULL: all of
    // them, whose counts bound them alone).
    const auto first = c.exec_prepared(
        "WITH k AS MATERIALIZED (SELECT session_id, seq, base_word_count FROM entries WHERE words "
        "@@ $1::tsquery AND ($2::text IS NULL OR session_id IN (SELECT id FROM sessions WHERE cwd "
        "= $2)) LIMIT $4::bigint), "
        "n AS (SELECT count(*) <= $3::bigint AS few FROM k) "
        "SELECT 2 AS kind, session_id, seq, CASE WHEN n.few THEN (SELECT e.line FROM entries e "
        "WHERE e.session_id = k.session_id AND e.seq = k.seq) END, base_word_count, NULL::text "
        "FROM k, n UNION ALL "
        "SELECT 0, id, 0, header, dialect, name FROM sessions, n WHERE n.few AND id = "
        "ANY(ARRAY(SELECT DISTINCT session_id FROM k)) ORDER BY 2, 1, 3",
        detail::pg::Params()
            .text(tsquery)
            .text(options.cwd)
            .int64(wanted)
            .int64(by_class ? std::optional<std::int64_t>(wanted + 1) : std::nullopt),
        "searching");
    using Key = std::pair<std::string, std::int64_t>;
    struct Candidate {
        Key key;
        double bound = std::numeric_limits<double>::infinity();
        bool operator<(const Candidate& o) const {  // the best bound on top of a heap
            return bound != o.bound ? bound < o.bound : key > o.key;
        }
    };
    std::size_t candidates = 0;
    for (int i = 0; i < first.rows(); ++i)
        if (first.int64(i, 0) == 2) ++candidates;
    // No more than the page needs: the statement gave their lines.
    if (candidates <= page.wanted()) {
        (void)detail::pg::judge_rows(first, where, query, options, keep);
        return detail::page_hits(std::move(hits), options);
    }
    std::vector<Candidate> unread;  // a heap
    std::vector<detail::pg::CandidateClass> classes;
    if (by_class) {
        classes = detail::pg::candidate_classes(query, words);
    } else {
        const detail::TermRepeats<Key> repeats(query, [&c](const std::string& mark) {
            const auto r = c.exec_prepared(
                "SELECT session_id, seq FROM entries WHERE words @@ $1::tsquery",
                detail::pg::Params().text(detail::pg::tsquery_literal(mark)), "searching");
            std::vector<Key> keys;
            keys.reserve(static_cast<std::size_t>(r.rows()));
            for (int i = 0; i < r.rows(); ++i) keys.emplace_back(r.text(i, 0), r.int64(i, 1));
            std::sort(keys.begin(), keys.end());
            return keys;
        });
        std::vector<double> most;
        for (int i = 0; i < first.rows(); ++i) {
            if (first.int64(i, 0) != 2) continue;
            Candidate& k = unread.emplace_back(Candidate{Key(first.text(i, 1), first.int64(i, 2))});
            // No base count: an entry a tsvector could not hold, or written before the counts.
            const auto count = first.optional_int64(i, 4);
            if (!count) continue;
            repeats.most(k.key, most);
            k.bound = detail::score_sum_bound(query, most) / detail::length_share(*count);
        }
        std::make_heap(unread.begin(), unread.end());
    }
    const std::string read_sql =
        "WITH c AS MATERIALIZED (SELECT e.session_id, e.seq, e.line FROM unnest($1::text[], "
        "$2::bigint[]) AS k(session_id, seq) JOIN entries e ON e.session_id = k.session_id AND "
        "e.seq = k.seq) " +
        std::string(detail::pg::judged_rows_sql);
    const auto judged = [&](SearchHit&& h) {
        page.add(hits, std::move(h));
        return true;
    };
    constexpr double none = -std::numeric_limits<double>::infinity();
    std::size_t next_class = 0;
    std::size_t read = 0;
    std::set<Key> asked;  // the candidates of the classes asked for: each read once at most
    for (;;) {
        const double class_bound = next_class < classes.size() ? classes[next_class].bound : none;
        const double best_unread = unread.empty() ? none : unread.front().bound;
        if ((next_class == classes.size() && unread.empty()) ||
            !page.can_reach(std::max(class_bound, best_unread)))
            break;
        if (next_class < classes.size() && class_bound >= best_unread) {
            // The next classes that can reach the page (the first may hold a candidate better
            // than any read so far), in one statement: their candidates' keys and counts, each
            // bounded by its class's repeat level and its own length.
            std::vector<std::optional<std::string>> asked_classes;
            const std::size_t from = next_class;
            while (next_class < classes.size() && asked_classes.size() < detail::pg::class_batch &&
                   page.can_reach(classes[next_class].bound))
                asked_classes.emplace_back(classes[next_class++].tsquery);
            const auto r = c.exec_prepared(
                "SELECT q.i, e.session_id, e.seq, e.word_count FROM unnest($1::text[]) WITH "
                "ORDINALITY AS q(t, i) CROSS JOIN LATERAL (SELECT session_id, seq, word_count FROM "
                "entries WHERE words @@ q.t::tsquery AND ($2::text IS NULL OR session_id IN "
                "(SELECT id FROM sessions WHERE cwd = $2))) AS e",
                detail::pg::Params().text(detail::pg::text_array(asked_classes)).text(options.cwd),
                "searching");
            for (int i = 0; i < r.rows(); ++i) {
                Key key(r.text(i, 1), r.int64(i, 2));
                if (!asked.insert(key).second) continue;
                const auto& most = classes[from + static_cast<std::size_t>(r.int64(i, 0) - 1)].most;
                const auto count = r.optional_int64(i, 3);
                unread.push_back(Candidate{
                    std::move(key),
                    count && !most.empty()
                        ? detail::score_sum_bound(query, most) / detail::length_share(*count)
                        : std::numeric_limits<double>::infinity()});
                std::push_heap(unread.begin(), unread.end());
            }
            continue;
        }
        // A batch of the best candidates, none of which a class not asked for yet can beat: as
        // many as the page still lacks, and at least as many as were read before, so that a
        // page that needs many candidates costs few statements.
        const std::size_t batch = std::clamp<std::size_t>(
            std::max(page.missing(), read), detail::pg::read_batch_min, detail::pg::read_batch_max);
        std::vector<std::optional<std::string>> ids;
        std::vector<std::optional<std::int64_t>> seqs;
        while (!unread.empty() && ids.size() < batch && unread.front().bound >= class_bound &&
               page.can_reach(unread.front().bound)) {
            std::pop_heap(unread.begin(), unread.end());
            ids.emplace_back(std::move(unread.back().key.first));
            seqs.emplace_back(unread.back().key.second);
            unread.pop_back();
        }
        read += ids.size();
        const auto r = c.exec_prepared(read_sql,
                                       detail::pg::Params()
                                           .text(detail::pg::text_array(ids))
                                           .text(detail::pg::int_array(seqs)),
                                       "searching");
        (void)detail::pg::judge_rows(r, where, query, options, judged);
    }
    return detail::page_hits(std::move(hits), options);
}

static_assert(SessionRepository<PostgresSessionRepo>);
static_assert(ImportingRepository<PostgresSessionRepo>);

namespace detail::pg {

/// Registers "postgresql://..." and "postgres://..." with open_repository wherever this
/// header is included; the whole URL goes to libpq.
inline const bool scheme_registered = [] {
    for (const char* scheme : {"postgresql", "postgres"}) {
        register_repository_scheme(scheme, [scheme](std::string_view rest) {
            const std::string url = std::string(scheme) + ":" + std::string(rest);
            if (rest.substr(0, 2) != "//")
                throw SessionError(
                    ErrorCode::invalid_session,
                    "repository URL '" + std::string(scheme) + ":...': expected " + scheme + "://");
            return AnyRepository(PostgresSessionRepo(url), url);
        });
    }
    return true;
}();

}  // namespace detail::pg

}  // namespace agentcore

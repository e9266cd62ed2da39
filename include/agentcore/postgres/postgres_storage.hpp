#pragma once
// PostgresSessionStorage: one session kept in a PostgreSQL database that holds a repository's
// sessions, for agent servers on many machines that share sessions (SPEC §9). Needs the target
// agentcore::postgres (libpq); the umbrella header does not include it.
//
// One writer per session, across machines: opening for writing takes the session's lease — an
// owner, a fencing token that grows with every acquisition, and an expiry on the database's
// clock. Every append checks the token (and the position it expects) inside its own statement,
// so a writer that lost its lease can never write again. The lease is renewed by every append
// and by heartbeat(), and given up when the storage is destroyed. Unlike the JSONL file lock,
// it does not die with its process: a crashed writer's session can be taken over once its
// time-to-live has run out, or at once with `steal`. Read-only opens take no lease; refresh()
// follows what a writer appends.
//
// An append is one statement (one round trip): it moves the session's row (next position,
// leaf, name, stats, lease expiry) and inserts the entry's row. A lost connection leaves its
// outcome unknown: the storage reconnects, renews its lease with a new token (which waits for a
// statement still running on the lost connection, and makes it fail if it has not run yet), and
// reads back whether the entry is there; it never sends the entry twice. Serialization failures
// and deadlocks are retried a few times, then reported as `locked`.
//
// Reads are bounded by what they return: leaf, name and stats come from the session's row, an
// entry by id or a label is one indexed lookup, the path of SPEC §4.4 is one recursive query
// bounded by where the path starts (kept per entry), and the context's state (SPEC §4.5) one
// query, so building the context of a leaf costs O(its path) in two round trips. Decoded
// entries are cached by position (they are immutable); a repeated build fetches only what it
// has not seen.
//
// Not thread-safe: one storage is used by one thread at a time.

#include <agentcore/codec.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/postgres/detail/link.hpp>
#include <agentcore/postgres/detail/pg.hpp>
#include <agentcore/postgres/detail/rows.hpp>
#include <agentcore/postgres/detail/schema.hpp>
#include <agentcore/repo.hpp>
#include <agentcore/storage.hpp>
#include <agentcore/tree_index.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentcore {

/// How a PostgreSQL storage (and repository) connects and writes.
struct PostgresStorageOptions {
    /// durable: synchronous_commit = on (an acknowledged append survives a server crash, and
    /// with a synchronous standby the loss of the primary); os_buffered: synchronous_commit =
    /// off (the database stays consistent; the newest acknowledged appends may be lost when the
    /// server crashes).
    Durability durability = Durability::durable;
    /// How long a writer's lease lasts without an append or a heartbeat (database clock).
    std::chrono::milliseconds lease_ttl{30000};
    /// How long a writing open waits for another writer's lease (zero: `locked` at once).
    std::chrono::milliseconds lock_wait{0};
    /// Take the lease even while another writer holds it; that writer's next append is refused.
    bool steal = false;
    /// The dialect of the lines of new sessions; a session keeps its own.
    Dialect dialect = Dialect::native;
    /// Clock and randomness (entry ids, timestamps). Leases use the database's clock.
    Environment environment = Environment::system();
    /// How many decoded entries stay cached.
    std::size_t decoded_cache_entries = 100000;
    /// A connection string of a replica for read-only opens and listing (none: the primary).
    std::optional<std::string> replica{};
    /// How many times a transaction the server aborted (serialization failure, deadlock) is run.
    int attempts = 5;
};

class PostgresSessionStorage;

namespace detail::pg {

struct ForkAccess;  // the server-side fork (detail/fork.hpp) builds a storage from its parts

/// A connection from `pool` for `session`, the schema checked (and, when writable, created or
/// migrated) once per pool, the durability level set.
inline std::unique_ptr<Link> connect(const std::shared_ptr<Pool>& pool, std::string session,
                                     bool writable, const PostgresStorageOptions& options) {
    auto link = std::make_unique<Link>(pool, pool->take(), std::move(session));
    pool->once([&] { prepare(*link->conn, writable); });
    link->conn->set("synchronous_commit", options.durability == Durability::durable ? "on" : "off");
    return link;
}

/// The typed placeholders of one row of entries ("$1::text, $2::bigint, ..."), from parameter
/// `first`; the words column is made from its words and marks parameters (words_expression).
inline std::string row_placeholders(int first) {
    constexpr int before_words = insert_column_count - 3;
    static const char* const types[before_words] = {
        "text",   "bigint",   "text",    "bigint", "text",   "text",   "text",
        "text",   "text",     "boolean", "bigint", "bigint", "bigint", "bigint",
        "bigint", "smallint", "bigint",  "bigint", "bigint", "bigint", "double precision",
        "text",   "bigint"};
    std::string out;
    const auto typed = [&out](int n, const char* type) {
        out += '$';
        out += std::to_string(n);
        out += "::";
        out += type;
    };
    for (int i = 0; i < before_words; ++i) {
        typed(first + i, types[i]);
        out += ", ";
    }
    out += words_expression(first + before_words);
    out += ", ";
    typed(first + before_words + 2, "bigint");
    out += ", ";
    typed(first + before_words + 3, "bigint");
    return out;
}

/// One row for insert_rows.
struct PendingRow {
    Node node;
    std::string id;
    EntryColumns columns;
    std::string line;
};

/// Inserts rows into entries with multi-row INSERTs of bounded size (imports, forks), and their
/// words into search_words.
inline void insert_rows(Connection& c, std::string_view session,
                        const std::vector<PendingRow>& rows) {
    std::vector<const std::string*> words;
    words.reserve(rows.size());
    for (const auto& row : rows)
        if (row.columns.search.words) words.push_back(&*row.columns.search.words);
    insert_words(c, words);
    std::size_t i = 0;
    while (i < rows.size()) {
        std::string sql = std::string("INSERT INTO entries (") + insert_columns + ") VALUES ";
        Params p;
        std::size_t bytes = 0;
        int n = 0;
        for (; i < rows.size() && n < 500 && bytes < (8u << 20); ++i, ++n) {
            if (n) sql += ", ";
            sql += '(';
            sql += row_placeholders(n * insert_parameter_count + 1);
            sql += ')';
            bind_row(p, session, rows[i].node, rows[i].id, rows[i].columns, rows[i].line);
            bytes += rows[i].line.size();
        }
        c.exec(sql.c_str(), p, "writing entries to");
    }
}

}  // namespace detail::pg

/// A session storage over a PostgreSQL database. Models SessionStorage.
///
/// Complexity: open one statement; append one statement (two when its parent is not the last
/// entry seen, or it is a compaction naming a kept entry); get_entry, get_label O(log n); the
/// path O(path) in one query; find_entries and get_entries O(result); leaf, name, stats and
/// entry_count O(1) without a query.
class PostgresSessionStorage {
public:
    /// Creates a session holding `header` and `entries` (in order) in one transaction, and
    /// returns it open for writing (its lease taken). A taken id: already_exists; entries that
    /// do not form a tree: already_exists / invalid_entry; nothing is created then. The batch
    /// of entries is sent in multi-row statements (an import).
    static PostgresSessionStorage create(std::shared_ptr<detail::pg::Pool> pool,
                                         SessionHeader header, PostgresStorageOptions options = {},
                                         const std::vector<SessionTreeEntry>& entries = {}) {
        check_session_id(header.id);
        if (header.metadata.is_null()) header.metadata = Json::object();
        if (detail::pg::has_nul(header.cwd) || detail::pg::has_nul(header.timestamp))
            throw SessionError(ErrorCode::invalid_session,
                               "session '" + header.id +
                                   "': its cwd or timestamp holds a NUL byte, which PostgreSQL "
                                   "text cannot store");
        PostgresSessionStorage s(std::move(options));
        s.dialect_ = s.options_.dialect;
        s.link_ = detail::pg::connect(pool, header.id, true, s.options_);
        auto& c = *s.link_->conn;
        // Every entry's place, checked as a tree and derived before anything is sent.
        TreeIndex check;
        std::vector<detail::pg::PendingRow> rows;
        rows.reserve(entries.size());
        detail::pg::SessionState state;
        std::unordered_set<std::string> ids;
        for (const auto& e : entries) {
            check.check_append(e);
            detail::pg::PendingRow row;
            row.id = id_of(e);
            row.columns = detail::pg::columns_of(e);
            detail::pg::check_storable(row.columns, row.id);
            const auto& parent = parent_id_of(e);
            const detail::pg::Node* parent_node =
                parent ? &rows[*check.position(*parent)].node : nullptr;
            std::optional<std::int64_t> kept;
            if (row.columns.first_kept_id && parent_node) {
                if (const auto k = check.position(*row.columns.first_kept_id))
                    kept = ancestor_in(rows, *parent_node, static_cast<std::int64_t>(*k) + 1);
            }
            row.node = detail::pg::place(state.next_seq, parent_node, row.columns.sets, row.columns,
                                         row.id, kept);
            row.line = encode_entry(e, s.dialect_);
            check.record(e);
            detail::pg::advance(state, e);
            ids.insert(row.id);
            rows.push_back(std::move(row));
        }
        s.link_->writer = true;
        s.link_->owner = detail::pg::new_owner();
        detail::pg::retrying(s.options_.attempts, [&] {
            detail::pg::Transaction tx(c);
            detail::pg::Params p;
            p.text(header.id)
                .text(header.timestamp)
                .text(header.cwd)
                .int64(static_cast<std::int64_t>(s.dialect_))
                .text(encode_header(header, s.dialect_));
            detail::pg::bind_state(p, state);
            p.text(s.link_->owner).int64(detail::pg::millis(s.options_.lease_ttl));
            const auto made = c.exec(
                "INSERT INTO sessions (id, created, cwd, dialect, header, next_seq, leaf_id, name, "
                "message_count,"
                " cached_tokens, uncached_tokens, total_tokens, cost_total, writer_owner, "
                "writer_fence, writer_expires)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 1,"
                " now() + $15::double precision * interval '1 millisecond') ON CONFLICT (id) DO "
                "NOTHING",
                p, "creating a session in");
            if (made.affected() == 0)
                throw SessionError(ErrorCode::already_exists,
                                   "session '" + header.id + "' already exists");
            detail::pg::insert_rows(c, header.id, rows);
            tx.commit();
        });
        s.link_->fence = 1;
        s.header_ = std::move(header);
        s.state_ = std::move(state);
        s.ids_ = std::move(ids);
        for (auto& row : rows) s.remember_node(row.node, row.id);
        return s;
    }

    /// Creates a session in the database of a connection string or URI.
    static PostgresSessionStorage create(const std::string& conninfo, SessionHeader header,
                                         PostgresStorageOptions options = {},
                                         const std::vector<SessionTreeEntry>& entries = {}) {
        return create(std::make_shared<detail::pg::Pool>(conninfo), std::move(header),
                      std::move(options), entries);
    }

    /// Opens a session for writing: takes its lease (`locked` while another writer holds an
    /// unexpired one, after lock_wait; at once with `steal`). Unknown session: not_found; a
    /// newer schema: invalid_session.
    static PostgresSessionStorage open(std::shared_ptr<detail::pg::Pool> pool, std::string_view id,
                                       PostgresStorageOptions options = {}) {
        check_session_id(id);
        PostgresSessionStorage s(std::move(options));
        s.link_ = detail::pg::connect(pool, std::string(id), true, s.options_);
        s.link_->writer = true;
        s.link_->owner = detail::pg::new_owner();
        auto& c = *s.link_->conn;
        const auto deadline = std::chrono::steady_clock::now() + s.options_.lock_wait;
        for (;;) {
            detail::pg::Params p;
            p.text(id)
                .text(s.link_->owner)
                .int64(detail::pg::millis(s.options_.lease_ttl))
                .boolean(s.options_.steal);
            const auto r = detail::pg::retrying(s.options_.attempts, [&] {
                return c.exec(
                    "UPDATE sessions SET writer_owner = $2, writer_fence = writer_fence + 1,"
                    " writer_expires = now() + $3::double precision * interval '1 millisecond'"
                    " WHERE id = $1 AND (writer_owner IS NULL OR writer_expires <= now() OR "
                    "$4::boolean)"
                    " RETURNING writer_fence, header, dialect, next_seq, leaf_id, name, "
                    "message_count, cached_tokens,"
                    " uncached_tokens, total_tokens, cost_total",
                    p, "taking the lease of a session in");
            });
            if (r.rows() == 1) {
                s.link_->fence = r.int64(0, 0);
                s.load(r, 1);
                return s;
            }
            const auto exists = c.exec("SELECT 1 FROM sessions WHERE id = $1",
                                       detail::pg::Params().text(id), "opening a session in");
            if (exists.rows() == 0) s.not_found(id);
            if (std::chrono::steady_clock::now() >= deadline)
                throw SessionError(
                    ErrorCode::locked,
                    "session '" + std::string(id) + "' in database '" + c.name() +
                        "' is open for writing elsewhere (its lease has not run out)");
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
    }

    static PostgresSessionStorage open(const std::string& conninfo, std::string_view id,
                                       PostgresStorageOptions options = {}) {
        return open(std::make_shared<detail::pg::Pool>(conninfo), id, std::move(options));
    }

    /// Opens a session for reading: no lease, nothing written. It reads the session as it was
    /// when opened (or last refreshed); appends throw `storage`.
    static PostgresSessionStorage open_read_only(std::shared_ptr<detail::pg::Pool> pool,
                                                 std::string_view id,
                                                 PostgresStorageOptions options = {}) {
        check_session_id(id);
        PostgresSessionStorage s(std::move(options));
        s.read_only_ = true;
        s.link_ = detail::pg::connect(pool, std::string(id), false, s.options_);
        const auto r = s.link_->conn->exec(
            "SELECT 0, header, dialect, next_seq, leaf_id, name, message_count, cached_tokens, "
            "uncached_tokens,"
            " total_tokens, cost_total FROM sessions WHERE id = $1",
            detail::pg::Params().text(id), "opening a session in");
        if (r.rows() == 0) s.not_found(id);
        s.load(r, 1);
        return s;
    }

    static PostgresSessionStorage open_read_only(const std::string& conninfo, std::string_view id,
                                                 PostgresStorageOptions options = {}) {
        return open_read_only(std::make_shared<detail::pg::Pool>(conninfo), id, std::move(options));
    }

    PostgresSessionStorage(PostgresSessionStorage&&) noexcept = default;
    PostgresSessionStorage& operator=(PostgresSessionStorage&&) noexcept = default;
    ~PostgresSessionStorage() = default;

    // -- SessionStorage ------------------------------------------------------------------------

    [[nodiscard]] const SessionHeader& metadata() const noexcept { return header_; }
    [[nodiscard]] const Environment& environment() const noexcept { return options_.environment; }
    [[nodiscard]] std::optional<std::string> get_leaf_id() const { return state_.leaf; }

    /// Appends a `leaf` entry that moves the leaf to `target` (none: before the first entry).
    /// Throws not_found for an unknown target.
    void set_leaf_id(std::optional<std::string> target) {
        if (target && !find_seq(*target))
            throw SessionError(ErrorCode::not_found, "entry '" + *target + "' not found");
        LeafEntry leaf;
        leaf.id = create_entry_id();
        leaf.parent_id = state_.leaf;
        leaf.timestamp = format_timestamp(options_.environment.now_ms());
        leaf.target_id = std::move(target);
        append_entry(std::move(leaf));
    }

    /// A fresh entry id, unique within this session. A writer reads the session's ids once, at
    /// its first call, and then knows every id (it writes every new one).
    [[nodiscard]] std::string create_entry_id() {
        if (!read_only_ && !ids_) {
            std::unordered_set<std::string> ids;
            const auto r = read("SELECT id FROM entries WHERE session_id = $1",
                                detail::pg::Params().text(header_.id), "reading the entry ids of");
            ids.reserve(static_cast<std::size_t>(r.rows()));
            for (int i = 0; i < r.rows(); ++i) ids.emplace(r.text(i, 0));
            ids_ = std::move(ids);
        }
        if (ids_)
            return make_entry_id(options_.environment,
                                 [this](const std::string& id) { return ids_->count(id) > 0; });
        return make_entry_id(options_.environment,
                             [this](const std::string& id) { return find_seq(id).has_value(); });
    }

    /// Appends an entry in one statement that checks this writer's lease and the position it
    /// expects; memory changes only after the commit. already_exists / invalid_entry as for every
    /// storage; `locked` when the lease was lost (taken over after its time-to-live, or stolen)
    /// or the session was written by another writer; `storage` when the storage is read-only,
    /// the session was removed, or the connection was lost and the entry is not in the database.
    /// Nothing is written in any of these cases.
    void append_entry(SessionTreeEntry entry) {
        if (read_only_)
            throw SessionError(ErrorCode::storage,
                               "session '" + header_.id + "' is open read-only");
        const EntryBase& base = base_of(entry);
        if (base.id.empty())
            throw SessionError(
                ErrorCode::invalid_entry,
                "entry of type '" + std::string(type_of(entry)) + "' has an empty id");
        detail::pg::EntryColumns columns = detail::pg::columns_of(entry);
        detail::pg::check_storable(columns, base.id);
        if (ids_ && ids_->count(base.id))
            throw SessionError(ErrorCode::already_exists,
                               "entry id '" + base.id + "' already exists in the session");
        auto& c = writer_db();
        std::optional<detail::pg::Node> parent;
        if (base.parent_id) {
            parent = node_by_id(*base.parent_id);
            if (!parent)
                throw SessionError(ErrorCode::invalid_entry,
                                   "entry '" + base.id + "' names parent '" + *base.parent_id +
                                       "', which does not exist");
        }
        if (const auto* leaf = std::get_if<LeafEntry>(&entry)) {
            if (leaf->target_id && !find_seq(*leaf->target_id))
                throw SessionError(ErrorCode::invalid_entry, "leaf entry '" + base.id +
                                                                 "' targets '" + *leaf->target_id +
                                                                 "', which does not exist");
        }
        std::optional<std::int64_t> kept;
        if (columns.first_kept_id && parent && !*columns.retained_tail)
            kept = kept_ancestor(*columns.first_kept_id, *parent);
        const std::int64_t seq = state_.next_seq;
        const detail::pg::Node node = detail::pg::place(seq, parent ? &*parent : nullptr,
                                                        columns.sets, columns, base.id, kept);
        const std::string line = encode_entry(entry, dialect_);
        detail::pg::SessionState next = state_;
        detail::pg::advance(next, entry);

        detail::pg::Params p;
        p.text(header_.id)
            .text(link_->owner)
            .int64(link_->fence)
            .int64(seq)
            .int64(detail::pg::millis(options_.lease_ttl));
        p.text(next.leaf)
            .text(next.name)
            .int64(static_cast<std::int64_t>(next.stats.message_count))
            .int64(next.stats.cached_tokens)
            .int64(next.stats.uncached_tokens)
            .int64(next.stats.total_tokens)
            .real(next.stats.cost_total);
        detail::pg::bind_row(p, header_.id, node, base.id, columns, line);
        // The entry's words ($36) come sorted and distinct (search_columns_of): two appends adding
        // the same new words to search_words lock them in the same order, and never deadlock.
        static const std::string sql =
            "WITH s AS (UPDATE sessions SET next_seq = $4 + 1, leaf_id = $6, name = $7, "
            "message_count = $8,"
            " cached_tokens = $9, uncached_tokens = $10, total_tokens = $11, cost_total = $12, "
            "updated_at = now(),"
            " writer_expires = now() + $5::double precision * interval '1 millisecond'"
            " WHERE id = $1 AND writer_owner = $2 AND writer_fence = $3 AND next_seq = $4 "
            "RETURNING id),"
            " w AS (INSERT INTO search_words (word) SELECT x FROM s, "
            "unnest(string_to_array($36::text, ' ')) AS x ON CONFLICT (word) DO NOTHING)"
            " INSERT INTO entries (" +
            std::string(detail::pg::insert_columns) + ") SELECT " +
            detail::pg::row_placeholders(13) + " FROM s";
        std::int64_t written = 0;
        try {
            written = detail::pg::retrying(options_.attempts, [&] {
                return c.exec_prepared(sql, p, "appending to").affected();
            });
        } catch (const detail::pg::Error& e) {
            if (e.connection_lost()) {
                resolve_lost_append(base.id, seq);  // throws unless the entry is in the database
                written = 1;
            } else if (e.code() == ErrorCode::already_exists) {
                throw SessionError(ErrorCode::already_exists,
                                   "entry id '" + base.id + "' already exists in the session");
            } else {
                throw;
            }
        }
        if (written == 0) diagnose_refused_append();
        state_ = std::move(next);
        if (ids_) ids_->insert(base.id);
        remember_node(node, base.id);
        remember(seq, std::make_shared<const SessionTreeEntry>(std::move(entry)));
    }

    [[nodiscard]] EntryHandle get_entry(std::string_view id) const {
        if (auto it = seq_of_.find(id); it != seq_of_.end()) {
            if (auto h = handles_.find(it->second); h != handles_.end()) return h->second;
        }
        static const std::string sql =
            std::string("SELECT e.seq, ") + detail::pg::node_columns +
            ", e.line FROM entries e WHERE e.session_id = $1 AND e.id = $2 AND e.seq < $3";
        const auto r = read_prepared(
            sql, detail::pg::Params().text(header_.id).text(id).int64(state_.next_seq),
            "reading an entry from");
        if (r.rows() == 0) return nullptr;
        remember_node(detail::pg::node_of(r, 0, 0), id);
        return decode(r.int64(0, 0), r.text(0, detail::pg::node_column_count));
    }

    [[nodiscard]] std::vector<EntryHandle> find_entries(std::string_view type) const {
        // Messages are read along the session's positions; any other type through the index
        // by type, whose condition (not a message) the query states so that it applies.
        const bool messages = type == MessageEntry::type;
        const auto r = read(messages ? "SELECT seq, line FROM entries WHERE session_id = $1 AND "
                                       "type = $2 AND seq < $3 ORDER BY seq"
                                     : "SELECT seq, line FROM entries WHERE session_id = $1 AND "
                                       "type = $2 AND type <> 'message' AND seq < $3 ORDER BY seq",
                            detail::pg::Params().text(header_.id).text(type).int64(state_.next_seq),
                            "reading entries from");
        std::vector<EntryHandle> out;
        out.reserve(static_cast<std::size_t>(r.rows()));
        for (int i = 0; i < r.rows(); ++i) out.push_back(decode(r.int64(i, 0), r.text(i, 1)));
        return out;
    }

    [[nodiscard]] std::optional<std::string> get_label(std::string_view id) const {
        const auto r = read(
            "SELECT label FROM entries WHERE session_id = $1 AND type = 'label' AND target_id = $2 "
            "AND seq < $3"
            " ORDER BY seq DESC LIMIT 1",
            detail::pg::Params().text(header_.id).text(id).int64(state_.next_seq),
            "reading a label from");
        if (r.rows() == 0) return std::nullopt;
        return r.optional_text(0, 0);
    }

    [[nodiscard]] std::optional<std::string> get_session_name() const { return state_.name; }

    /// The path of SPEC §4.4: one recursive query from `start` up to where its path starts (kept
    /// per entry), which the library's own walk then follows; lines of the entries of the last
    /// path built are not fetched again.
    [[nodiscard]] std::vector<EntryHandle> get_path_to_root_or_compaction(
        std::optional<std::string_view> start) const {
        if (!start) return {};
        std::vector<EntryHandle> first = fetch_path(*start);
        auto path = walk_fetched_ancestors(start, entry_count(), std::move(first),
                                           [this](std::string_view id) { return fetch_path(id); });
        pinned_.clear();
        for (const auto& e : path) {
            if (auto it = seq_of_.find(id_of(*e)); it != seq_of_.end())
                pinned_.emplace(it->second, e);
        }
        return path;
    }

    [[nodiscard]] std::vector<EntryHandle> get_entries(EntriesQuery query = {}) const {
        const std::size_t count = entry_count();
        if (query.after >= count) return {};
        const std::size_t n = std::min(query.limit, count - query.after);
        const auto r = read(
            "SELECT seq, line FROM entries WHERE session_id = $1 AND seq > $2 AND seq < $4 ORDER "
            "BY seq LIMIT $3",
            detail::pg::Params()
                .text(header_.id)
                .int64(static_cast<std::int64_t>(query.after))
                .int64(static_cast<std::int64_t>(n))
                .int64(state_.next_seq),
            "reading entries from");
        std::vector<EntryHandle> out;
        out.reserve(static_cast<std::size_t>(r.rows()));
        for (int i = 0; i < r.rows(); ++i) out.push_back(decode(r.int64(i, 0), r.text(i, 1)));
        return out;
    }

    [[nodiscard]] SessionStats get_session_stats() const noexcept { return state_.stats; }
    [[nodiscard]] std::size_t entry_count() const noexcept {
        return static_cast<std::size_t>(state_.next_seq - 1);
    }

    /// The entries a context's state comes from (SPEC §4.5), kept per entry: none or one query.
    [[nodiscard]] StateEntries get_state_entries(std::optional<std::string_view> leaf) const {
        StateEntries out;
        if (!leaf) return out;
        auto cached = [this](std::optional<std::int64_t> seq, EntryHandle& into) {
            if (!seq) return true;
            auto it = handles_.find(*seq);
            if (it == handles_.end()) return false;
            into = it->second;
            return true;
        };
        if (auto it = seq_of_.find(*leaf); it != seq_of_.end()) {
            if (auto n = nodes_.find(it->second); n != nodes_.end()) {
                const detail::pg::Node& node = n->second;
                const bool thinking = cached(node.state_thinking, out.thinking_level);
                const bool model = cached(node.state_model, out.model);
                const bool tools = cached(node.state_tools, out.active_tools);
                if (thinking && model && tools) return out;
                out = {};
            }
        }
        const auto r = read(
            "SELECT l.state_thinking, l.state_model, l.state_tools, e.seq,"
            " CASE WHEN e.seq = ANY($4::bigint[]) THEN NULL ELSE e.line END"
            " FROM entries l LEFT JOIN entries e ON e.session_id = l.session_id"
            " AND e.seq IN (l.state_thinking, l.state_model, l.state_tools)"
            " WHERE l.session_id = $1 AND l.id = $2 AND l.seq < $3",
            detail::pg::Params()
                .text(header_.id)
                .text(*leaf)
                .int64(state_.next_seq)
                .text(known_seqs()),
            "reading the state entries from");
        for (int i = 0; i < r.rows(); ++i) {
            if (r.is_null(i, 3)) continue;
            const std::int64_t seq = r.int64(i, 3);
            const EntryHandle h = r.is_null(i, 4) ? known(seq) : decode(seq, r.text(i, 4));
            if (r.optional_int64(i, 0) == seq) out.thinking_level = h;
            if (r.optional_int64(i, 1) == seq) out.model = h;
            if (r.optional_int64(i, 2) == seq) out.active_tools = h;
        }
        return out;
    }

    // -- The database --------------------------------------------------------------------------

    /// The database's name.
    [[nodiscard]] const std::string& database_name() const noexcept { return link_->conn->name(); }
    /// The dialect of the session's lines (what an export writes).
    [[nodiscard]] Dialect dialect() const noexcept { return dialect_; }
    [[nodiscard]] bool read_only() const noexcept { return read_only_; }
    /// This writer's fencing token (0 for a read-only open).
    [[nodiscard]] std::int64_t fence() const noexcept { return link_->writer ? link_->fence : 0; }
    /// The connection (for tests and tools). Its backend changes when the storage reconnects.
    [[nodiscard]] detail::pg::Connection& connection() const noexcept { return *link_->conn; }

    /// Renews this writer's lease for another lease_ttl (database clock), for a writer that has
    /// nothing to append for a while. A lost lease: locked; a removed session: storage.
    void heartbeat() {
        if (read_only_)
            throw SessionError(ErrorCode::storage,
                               "session '" + header_.id + "' is open read-only");
        auto& c = writer_db();
        const auto r = c.exec(
            "UPDATE sessions SET writer_expires = now() + $4::double precision * interval '1 "
            "millisecond'"
            " WHERE id = $1 AND writer_owner = $2 AND writer_fence = $3",
            detail::pg::Params()
                .text(header_.id)
                .text(link_->owner)
                .int64(link_->fence)
                .int64(detail::pg::millis(options_.lease_ttl)),
            "renewing the lease of a session in");
        if (r.affected() == 0) diagnose_refused_append();
    }

    /// A read-only open follows what writers appended since it was opened (or last refreshed).
    /// A removed session: not_found.
    void refresh() {
        const auto r = read(
            (std::string("SELECT ") + detail::pg::state_columns + " FROM sessions WHERE id = $1")
                .c_str(),
            detail::pg::Params().text(header_.id), "refreshing a session from");
        if (r.rows() == 0) not_found(header_.id);
        state_ = detail::pg::state_of(r, 0, 0);
    }

    /// The session as a JSONL file's text in its own dialect: the header line, then each entry's
    /// line as stored: the bytes a JSONL storage holding the same session writes.
    [[nodiscard]] std::string export_jsonl() const {
        std::string out = encode_header(header_, dialect_);
        out.push_back('\n');
        const auto r =
            read("SELECT line FROM entries WHERE session_id = $1 AND seq < $2 ORDER BY seq",
                 detail::pg::Params().text(header_.id).int64(state_.next_seq), "exporting from");
        for (int i = 0; i < r.rows(); ++i) {
            out.append(r.text(i, 0));
            out.push_back('\n');
        }
        return out;
    }

private:
    explicit PostgresSessionStorage(PostgresStorageOptions options)
        : options_(std::move(options)) {}

    [[noreturn]] void not_found(std::string_view id) const {
        throw SessionError(ErrorCode::not_found, "session '" + std::string(id) +
                                                     "' not found in database '" +
                                                     link_->conn->name() + "'");
    }

    // Reads the header, dialect and state from a row: header, dialect, then state_columns.
    void load(const detail::pg::Result& r, int first) {
        const std::string& id = link_->session;
        try {
            header_ = decode_header(r.text(0, first));
        } catch (const SessionError& e) {
            throw SessionError(ErrorCode::invalid_session,
                               "session '" + id + "' in database '" + link_->conn->name() +
                                   "': header: " + std::string(e.detail()));
        }
        const std::int64_t dialect = r.int64(0, first + 1);
        if (dialect != static_cast<std::int64_t>(Dialect::native) &&
            dialect != static_cast<std::int64_t>(Dialect::pi))
            throw SessionError(ErrorCode::invalid_session, "session '" + id + "' in database '" +
                                                               link_->conn->name() +
                                                               "' has an unknown dialect");
        dialect_ = static_cast<Dialect>(dialect);
        state_ = detail::pg::state_of(r, 0, first + 2);
    }

    // The connection, reconnected when it was lost. A writer re-reads its state before it
    // writes again (writer_db).
    detail::pg::Connection& db() const {
        auto& c = *link_->conn;
        if (c.broken()) {
            c.reconnect();
            if (link_->writer) link_->needs_recover = true;
        }
        return c;
    }

    // Runs a read. A connection found lost is replaced and the read run once more (a read
    // changes nothing, so running it again is safe).
    detail::pg::Result read(const char* sql, const detail::pg::Params& params,
                            std::string_view what) const {
        return once_more_if_lost(
            [&](detail::pg::Connection& c) { return c.exec(sql, params, what); });
    }
    detail::pg::Result read(const std::string& sql, const detail::pg::Params& params,
                            std::string_view what) const {
        return read(sql.c_str(), params, what);
    }
    // As read, for a look-up by key that every append may make (an entry or its place by id):
    // a prepared statement, whose plan does not depend on the values.
    detail::pg::Result read_prepared(const std::string& sql, const detail::pg::Params& params,
                                     std::string_view what) const {
        return once_more_if_lost(
            [&](detail::pg::Connection& c) { return c.exec_prepared(sql, params, what); });
    }
    template <class Run>
    detail::pg::Result once_more_if_lost(const Run& run) const {
        try {
            return run(db());
        } catch (const detail::pg::Error& e) {
            if (!e.connection_lost()) throw;
        }
        return run(db());
    }

    // The connection of a writer that may write: reconnected and recovered, its lease not lost.
    detail::pg::Connection& writer_db() {
        auto& c = db();
        if (link_->needs_recover) recover();
        if (link_->lease_lost)
            throw SessionError(ErrorCode::locked,
                               "session '" + header_.id + "' in database '" + c.name() +
                                   "': this writer lost its lease to another writer; reopen it");
        return c;
    }

    // After a lost connection: renews the lease with a new token — which waits for a statement
    // still running on the lost connection, and makes it fail if it has not run yet — and takes
    // the session's state from its row, so that an append whose outcome was unknown is counted
    // exactly when it committed.
    void recover() {
        auto& c = *link_->conn;
        const auto r = c.exec(
            (std::string("UPDATE sessions SET writer_fence = writer_fence + 1,"
                         " writer_expires = now() + $4::double precision * interval '1 millisecond'"
                         " WHERE id = $1 AND writer_owner = $2 AND writer_fence = $3 RETURNING "
                         "writer_fence, ") +
             detail::pg::state_columns)
                .c_str(),
            detail::pg::Params()
                .text(header_.id)
                .text(link_->owner)
                .int64(link_->fence)
                .int64(detail::pg::millis(options_.lease_ttl)),
            "renewing the lease of a session in");
        link_->needs_recover = false;
        if (r.rows() == 0) {
            link_->lease_lost = true;
            return;
        }
        link_->fence = r.int64(0, 0);
        state_ = detail::pg::state_of(r, 0, 1);
    }

    // The connection was lost while an append ran: reconnect, recover, and find out whether the
    // entry is there. Returns when it is (the append succeeded); throws storage when it is not.
    void resolve_lost_append(const std::string& id, std::int64_t seq) {
        auto& c = *link_->conn;
        const std::string where = "session '" + header_.id + "' in database '" + c.name() + "'";
        try {
            c.reconnect();
            recover();
            const auto r =
                c.exec("SELECT seq FROM entries WHERE session_id = $1 AND id = $2",
                       detail::pg::Params().text(header_.id).text(id), "reading back an append to");
            if (r.rows() == 1 && r.int64(0, 0) == seq) return;
        } catch (const SessionError&) {
            link_->needs_recover = link_->writer;
            throw SessionError(ErrorCode::storage,
                               "the connection was lost while appending entry " +
                                   std::to_string(seq) + " to " + where +
                                   "; it is read back at the next call");
        }
        throw SessionError(ErrorCode::storage, "the connection was lost while appending entry " +
                                                   std::to_string(seq) + " to " + where +
                                                   "; the entry was not written");
    }

    // An append or heartbeat changed no row: why.
    [[noreturn]] void diagnose_refused_append() {
        auto& c = *link_->conn;
        const std::string where = "session '" + header_.id + "' in database '" + c.name() + "'";
        const auto r =
            c.exec("SELECT writer_owner, writer_fence, next_seq FROM sessions WHERE id = $1",
                   detail::pg::Params().text(header_.id), "reading the lease of a session in");
        if (r.rows() == 0) throw SessionError(ErrorCode::storage, where + " was removed");
        if (r.optional_text(0, 0) != link_->owner || r.int64(0, 1) != link_->fence) {
            link_->lease_lost = true;
            throw SessionError(ErrorCode::locked,
                               where + ": this writer lost its lease to another writer (fence " +
                                   std::to_string(link_->fence) + ", now " +
                                   std::to_string(r.int64(0, 1)) + "); nothing was written");
        }
        throw SessionError(ErrorCode::locked,
                           where + " was written by another writer (expected entry " +
                               std::to_string(state_.next_seq) + ", found " +
                               std::to_string(r.int64(0, 2)) + "); reopen it");
    }

    // Whether the entry `kept` is `parent` or one of its ancestors; its position when it is.
    std::optional<std::int64_t> kept_ancestor(const std::string& kept,
                                              const detail::pg::Node& parent) {
        const auto r = read(
            "WITH RECURSIVE k AS (SELECT seq FROM entries WHERE session_id = $1 AND id = $2 AND "
            "seq < $4),"
            " up(seq, parent_seq) AS (SELECT seq, parent_seq FROM entries WHERE session_id = $1 "
            "AND seq = $3"
            " UNION ALL SELECT e.seq, e.parent_seq FROM up JOIN entries e ON e.session_id = $1"
            " AND e.seq = up.parent_seq WHERE e.seq >= (SELECT seq FROM k))"
            " SELECT up.seq FROM up JOIN k ON up.seq = k.seq",
            detail::pg::Params()
                .text(header_.id)
                .text(kept)
                .int64(parent.seq)
                .int64(state_.next_seq),
            "reading the ancestry of an entry in");
        if (r.rows() == 0) return std::nullopt;
        return r.int64(0, 0);
    }

    // The place of the entry with that id: cached, or one query.
    std::optional<detail::pg::Node> node_by_id(std::string_view id) const {
        if (auto it = seq_of_.find(id); it != seq_of_.end()) {
            if (auto n = nodes_.find(it->second); n != nodes_.end()) return n->second;
        }
        static const std::string sql =
            std::string("SELECT e.seq, ") + detail::pg::node_columns +
            " FROM entries e WHERE e.session_id = $1 AND e.id = $2 AND e.seq < $3";
        const auto r = read_prepared(
            sql, detail::pg::Params().text(header_.id).text(id).int64(state_.next_seq),
            "reading an entry from");
        if (r.rows() == 0) return std::nullopt;
        const detail::pg::Node n = detail::pg::node_of(r, 0, 0);
        remember_node(n, id);
        return n;
    }

    [[nodiscard]] std::optional<std::int64_t> find_seq(std::string_view id) const {
        if (auto it = seq_of_.find(id); it != seq_of_.end()) return it->second;
        const auto n = node_by_id(id);
        if (!n) return std::nullopt;
        return n->seq;
    }

    // The entry at `start` and its ancestors down to where its path starts, in one query.
    std::vector<EntryHandle> fetch_path(std::string_view start) const {
        constexpr int id_column = detail::pg::node_column_count;
        constexpr int line_column = id_column + 1;
        static const std::string sql = detail::pg::path_query(
            std::string("e.seq, ") + detail::pg::node_columns +
            ", e.id, CASE WHEN e.seq = ANY($4::bigint[]) THEN NULL ELSE e.line END");
        const auto r = read(sql.c_str(),
                            detail::pg::Params()
                                .text(header_.id)
                                .text(start)
                                .int64(state_.next_seq)
                                .text(known_seqs()),
                            "reading a path from");
        const std::vector<int> rows = detail::pg::path_rows(r);
        std::vector<EntryHandle> out;
        out.reserve(rows.size());
        for (const int i : rows) {
            const detail::pg::Node n = detail::pg::node_of(r, i, 0);
            remember_node(n, r.text(i, id_column));
            out.push_back(r.is_null(i, line_column) ? known(n.seq)
                                                    : decode(n.seq, r.text(i, line_column)));
        }
        return out;
    }

    // The positions whose entries this storage holds without asking (the last path built).
    std::string known_seqs() const {
        std::vector<std::optional<std::int64_t>> seqs;
        seqs.reserve(pinned_.size());
        for (const auto& [seq, handle] : pinned_) seqs.emplace_back(seq);
        return detail::pg::int_array(seqs);
    }

    // An entry the query did not send because this storage holds it (or, should it be gone from
    // the caches, fetched alone).
    EntryHandle known(std::int64_t seq) const {
        if (auto it = pinned_.find(seq); it != pinned_.end()) return it->second;
        if (auto it = handles_.find(seq); it != handles_.end()) return it->second;
        const auto r =
            read("SELECT line FROM entries WHERE session_id = $1 AND seq = $2",
                 detail::pg::Params().text(header_.id).int64(seq), "reading an entry from");
        if (r.rows() == 0)
            throw SessionError(ErrorCode::invalid_session,
                               "session '" + header_.id + "' in database '" + link_->conn->name() +
                                   "': entry " + std::to_string(seq) + " disappeared");
        return decode(seq, r.text(0, 0));
    }

    // The decoded entry at `seq`, from the cache or from its stored line. A line the codec
    // cannot read: invalid_entry naming the session and the position, never the text.
    EntryHandle decode(std::int64_t seq, std::string_view line) const {
        if (auto it = handles_.find(seq); it != handles_.end()) return it->second;
        EntryHandle handle;
        try {
            handle = std::make_shared<const SessionTreeEntry>(decode_entry(line, dialect_));
        } catch (const SessionError& e) {
            throw SessionError(ErrorCode::invalid_entry,
                               "session '" + header_.id + "' in database '" + link_->conn->name() +
                                   "' entry " + std::to_string(seq) + ": " +
                                   std::string(e.detail()));
        }
        remember(seq, handle);
        return handle;
    }

    void remember(std::int64_t seq, EntryHandle handle) const {
        if (options_.decoded_cache_entries == 0) return;
        if (handles_.size() >= options_.decoded_cache_entries) forget();
        handles_.emplace(seq, std::move(handle));
    }

    void remember_node(const detail::pg::Node& n, std::string_view id) const {
        if (options_.decoded_cache_entries == 0) return;
        if (nodes_.size() >= options_.decoded_cache_entries) forget();
        nodes_.insert_or_assign(n.seq, n);
        seq_of_.insert_or_assign(std::string(id), n.seq);
    }

    void forget() const {
        handles_.clear();
        nodes_.clear();
        seq_of_.clear();
    }

    // Among `rows` (positions 1..n), whether the row at position `kept` is `from` or an ancestor.
    static std::optional<std::int64_t> ancestor_in(const std::vector<detail::pg::PendingRow>& rows,
                                                   const detail::pg::Node& from,
                                                   std::int64_t kept) {
        const detail::pg::Node* n = &from;
        for (;;) {
            if (n->seq == kept) return kept;
            if (!n->parent_seq || *n->parent_seq < kept) return std::nullopt;
            n = &rows[static_cast<std::size_t>(*n->parent_seq - 1)].node;
        }
    }

    friend struct detail::pg::ForkAccess;

    PostgresStorageOptions options_;
    std::unique_ptr<detail::pg::Link> link_;
    SessionHeader header_;
    Dialect dialect_ = Dialect::native;
    bool read_only_ = false;
    detail::pg::SessionState state_;
    std::optional<std::unordered_set<std::string>>
        ids_;  // a writer's ids, read at its first create_entry_id
    mutable std::unordered_map<std::int64_t, EntryHandle> handles_;
    mutable std::unordered_map<std::int64_t, detail::pg::Node> nodes_;
    mutable StringMap<std::int64_t> seq_of_;
    mutable std::unordered_map<std::int64_t, EntryHandle> pinned_;  // the last path built
};

static_assert(SessionStorage<PostgresSessionStorage>);
static_assert(has_state_entries<PostgresSessionStorage>);

}  // namespace agentcore

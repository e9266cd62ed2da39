#pragma once
// SqliteSessionStorage: one session kept in an SQLite database that holds a repository's
// sessions (SPEC §9). Needs the target agentcore::sqlite (SQLite 3.37 or newer); the umbrella
// header does not include it.
//
// Every read is bounded by what it returns: the leaf, name and stats come from the session's
// last rows (each entry's row keeps the stats after it), an entry by id or a label is one indexed
// lookup, and the path of SPEC §4.4 is walked over ancestors fetched in batches by a recursive
// query, so building the context of a leaf costs O(its path), never a load of the session. Decoded
// entries are cached by position (they are immutable).
//
// An append is one IMMEDIATE transaction that writes the entry's row at the position this
// storage expects, so a writer that bypassed the session lock is caught (the position is taken);
// it commits (with synchronous=FULL by default) before anything in memory changes. One writer per
// session: a flock on `<database>.locks/<session id>.lock`, released when the storage is destroyed
// or its process dies.
//
// Not thread-safe: one storage is used by one thread at a time.

#include <agentcore/codec.hpp>
#include <agentcore/detail/codec_batch.hpp>
#include <agentcore/detail/file_lock.hpp>
#include <agentcore/detail/file_ops.hpp>
#include <agentcore/detail/threads.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/sqlite/detail/db.hpp>
#include <agentcore/sqlite/detail/schema.hpp>
#include <agentcore/storage.hpp>
#include <agentcore/tree_index.hpp>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentcore {

class SqliteSessionStorage;

namespace detail::sqlite {
/// A writer's entry ids.
using IdSet = std::unordered_set<std::string, detail::StringHash, std::equal_to<>>;
}  // namespace detail::sqlite

/// How an SQLite storage (and repository) opens its database and writes.
struct SqliteStorageOptions {
    /// durable: synchronous=FULL (an acknowledged append survives power loss); os_buffered:
    /// synchronous=NORMAL (it survives a crash of the process).
    Durability durability = Durability::durable;
    /// How long a writing open waits for another writer of the same session (zero: `locked` at
    /// once).
    std::chrono::milliseconds lock_wait{0};
    /// How long a statement waits for another connection's lock on the database (appends of
    /// other sessions, a migration); beyond it: `locked`.
    std::chrono::milliseconds busy_wait{5000};
    /// The dialect of the lines of new sessions; a session keeps its own.
    Dialect dialect = Dialect::native;
    /// Clock and randomness (entry ids, timestamps).
    Environment environment = Environment::system();
    /// How many decoded entries stay cached after the last handle to them is gone.
    std::size_t decoded_cache_entries = 100000;
    /// How much of the database file each connection keeps in memory, in KiB (SQLite's page
    /// cache, `PRAGMA cache_size`; SQLite's own default is 2,000 KiB). Filled only by the pages a
    /// connection reads or writes: a repository's searches keep the index pages of the words
    /// they look up there, instead of reading them again from the file each time.
    std::size_t page_cache_kib = 65536;
};

namespace detail::sqlite {

struct Access;

/// Opens a repository's database file: creates it (mode 0600, its folder 0700) when asked,
/// refuses symbolic links, and readies the schema.
inline std::unique_ptr<Database> open_database(const std::string& path, bool create, bool read_only,
                                               const SqliteStorageOptions& options) {
    const FileOps& ops = FileOps::real();
    if (create && !read_only) {
        make_folders(ops, parent_folder(path));
        // Created here with its mode, not by SQLite under the process umask; the -wal and -shm
        // files take the database's mode.
        FileHandle fd = open_file(ops, path, O_RDWR | O_CREAT);
        if (!fd) throw io_error("creating database", path, errno);
    } else {
        FileHandle fd = open_file(ops, path, O_RDONLY);
        if (!fd) {
            if (errno == ENOENT)
                throw SessionError(ErrorCode::not_found, "database '" + path + "' not found");
            throw io_error("opening database", path, errno);
        }
    }
    auto db = std::make_unique<Database>(path, false, read_only, options.busy_wait);
    const std::string cache = "PRAGMA cache_size = -" + std::to_string(options.page_cache_kib);
    db->exec(cache.c_str(), "configuring");
    prepare(*db, !read_only, options.durability == Durability::durable);
    return db;
}

/// The folder of the session lock files of a database.
inline std::string lock_folder(const std::string& database) { return database + ".locks"; }

/// Takes the writer lock of one session (SPEC §9: dies with its process).
inline FileHandle lock_session(const std::string& database, const std::string& id,
                               std::chrono::milliseconds wait) {
    const FileOps& ops = FileOps::real();
    const std::string folder = lock_folder(database);
    make_folders(ops, folder);
    const std::string path = folder + "/" + id + ".lock";
    FileHandle fd = open_file(ops, path, O_RDWR | O_CREAT);
    if (!fd) throw io_error("opening the lock file", path, errno);
    try {
        lock_exclusive(ops, fd.get(), wait, path);
    } catch (const SessionError& e) {
        if (e.code() != ErrorCode::locked) throw;
        throw SessionError(ErrorCode::locked, "session '" + id + "' in database '" + database +
                                                  "' is open for writing elsewhere");
    }
    return fd;
}

/// The stored columns of one entry, derived from the entry.
struct EntryRow {
    std::optional<std::string> target;  ///< label and leaf entries
    /// label entries: the trimmed label, none when it clears; session_info entries: the name
    /// they set, none when they clear it
    std::optional<std::string> label;
};

inline EntryRow row_of(const SessionTreeEntry& entry) {
    EntryRow row;
    if (const auto* l = std::get_if<LabelEntry>(&entry)) {
        row.target = l->target_id;
        const std::string_view text = l->label ? trim(*l->label) : std::string_view{};
        if (!text.empty()) row.label = std::string(text);
    } else if (const auto* leaf = std::get_if<LeafEntry>(&entry)) {
        row.target = leaf->target_id;
    } else if (const auto* info = std::get_if<SessionInfoEntry>(&entry)) {
        row.label = name_set_by(*info);
    }
    return row;
}

inline constexpr const char* insert_entry_sql =
    "INSERT INTO entries (session_id, seq, id, parent_seq, type, target_id, label, line,"
    " message_count, cached_tokens, uncached_tokens, total_tokens, cost_total)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
inline constexpr const char* find_seq_sql =
    "SELECT seq FROM entries WHERE session_id = ?1 AND id = ?2";

/// What a session's entries say of it: its next position, leaf, name and stats.
struct SessionState {
    std::int64_t next_seq = 1;
    std::optional<std::string> leaf;
    std::optional<std::string> name;
    SessionStats stats;
};

/// The state of a session, from its last entry's row and its last session_info row, read by one
/// statement (one snapshot); with `last_line`, also the last entry's line (empty: no entries).
inline SessionState read_state(Database& db, std::string_view id,
                               std::string* last_line = nullptr) {
    // One statement reads one snapshot: the name is the one of the same state as the last row.
    // The index by type is named: without ANALYZE's statistics SQLite may walk the primary key
    // back from the newest entry instead, over every entry after the last session_info.
    static constexpr const char* columns =
        "SELECT e.seq, e.id, e.type, e.target_id, e.message_count, e.cached_tokens, "
        "e.uncached_tokens, e.total_tokens, e.cost_total, (SELECT n.label FROM entries n INDEXED "
        "BY entries_by_type WHERE n.session_id = ?1 AND n.type = 'session_info' AND n.type <> "
        "'message' ORDER BY n.seq DESC LIMIT 1)";
    static const std::string without_line =
        std::string(columns) +
        " FROM entries e WHERE e.session_id = ?1 ORDER BY e.seq DESC LIMIT 1";
    static const std::string with_line = std::string(columns) +
                                         ", e.line FROM entries e WHERE e.session_id = ?1 ORDER BY "
                                         "e.seq DESC LIMIT 1";
    auto& q = db.statement(last_line ? with_line.c_str() : without_line.c_str());
    Reset reset(q);
    q.bind(1, id);
    SessionState s;
    if (last_line) last_line->clear();
    if (!q.step()) return s;
    s.next_seq = q.int64(0) + 1;
    s.leaf = q.text(2) == "leaf" ? q.optional_text(3) : std::optional<std::string>(q.text(1));
    s.stats.message_count = static_cast<std::size_t>(q.int64(4));
    s.stats.cached_tokens = q.int64(5);
    s.stats.uncached_tokens = q.int64(6);
    s.stats.total_tokens = q.int64(7);
    s.stats.cost_total = q.real(8);
    s.name = q.optional_text(9);
    if (last_line) *last_line = q.text(10);
    return s;
}

/// The name of a session: what its last session_info entry set.
inline std::optional<std::string> session_name(Database& db, std::string_view id) {
    auto& q = db.statement(
        "SELECT label FROM entries INDEXED BY entries_by_type WHERE session_id = ?1 AND type = "
        "'session_info' AND type <> 'message' ORDER BY seq DESC LIMIT 1");
    Reset reset(q);
    q.bind(1, id);
    if (!q.step()) return std::nullopt;
    return q.optional_text(0);
}

/// Moves `s` past one appended entry, as TreeIndex::record does (SPEC §4.2, §4.6, §4.7).
inline void advance(SessionState& s, const SessionTreeEntry& entry) {
    ++s.next_seq;
    s.stats.add(entry);
    if (const auto* leaf = std::get_if<LeafEntry>(&entry)) {
        s.leaf = leaf->target_id;
        return;
    }
    s.leaf = id_of(entry);
    if (const auto* info = std::get_if<SessionInfoEntry>(&entry)) s.name = name_set_by(*info);
}

/// Throws already_exists when the database holds a session with that id.
inline void check_not_taken(Database& db, const std::string& id) {
    auto& exists = db.statement("SELECT 1 FROM sessions WHERE id = ?1");
    Reset reset(exists);
    exists.bind(1, id);
    if (exists.step())
        throw SessionError(ErrorCode::already_exists, "session '" + id + "' already exists");
}

/// Inserts the row of an entry whose line is `line` (the entry encoded in its session's dialect)
/// at position `seq`; `after` is the session's stats with the entry.
inline void insert_entry_row(Database& db, std::string_view session, std::int64_t seq,
                             const SessionTreeEntry& entry, std::optional<std::int64_t> parent_seq,
                             std::string_view line, const SessionStats& after) {
    const EntryRow row = row_of(entry);
    auto& insert = db.statement(insert_entry_sql);
    insert.bind(1, session)
        .bind(2, seq)
        .bind(3, id_of(entry))
        .bind_optional(4, parent_seq)
        .bind(5, type_of(entry))
        .bind_optional(6, row.target)
        .bind_optional(7, row.label)
        .bind(8, line);
    bind_stats(insert, 9, after).run();
}

/// What write_session writes of one entry besides its tree links and stats, computed from the
/// entry alone: its line (unless copied from another session's row) and its search row.
struct PreparedRow {
    std::string line;
    SearchRowText search;
    bool ready = false;  ///< false: not computed (the writer computes it, and reports a failure)
};

/// Entries write_session prepares a batch at a time; a session with more than one batch has the
/// next batch prepared on another thread while this one is written.
inline constexpr std::size_t prepare_batch_entries = 1024;

inline PreparedRow prepare_row(const SessionTreeEntry& e, Dialect dialect, bool copied) {
    PreparedRow out;
    if (!copied) out.line = encode_entry(e, dialect);
    out.search = search_row_text(e);
    out.ready = true;
    return out;
}

/// Prepares the rows of entries [first, first + rows.size()) into `rows`, on the thread that
/// runs it. Never throws: a row it cannot prepare is left not ready.
struct PrepareRows {
    const std::vector<SessionTreeEntry>* entries;
    const std::vector<bool>* copied;
    Dialect dialect;
    std::size_t first = 0;
    std::vector<PreparedRow>* rows;

    void operator()() const noexcept {
        for (std::size_t k = 0; k < rows->size(); ++k) {
            const std::size_t i = first + k;
            try {
                (*rows)[k] =
                    prepare_row((*entries)[i], dialect, i < copied->size() && (*copied)[i]);
            } catch (...) {
                (*rows)[k].ready = false;
            }
        }
    }
};

/// Writes a new session's row and its entries (in order, each checked as an append would be) in
/// one IMMEDIATE transaction on `db`, their words straight into search_index (one FTS5 segment
/// for all of them), and returns the session's state. A taken id:
/// already_exists; entries that do not form a tree: already_exists / invalid_entry; nothing is
/// written then. The lines and search rows of a batch of entries are computed on another thread
/// while the batch before is written.
///
/// A fork passes `copy_from`, the session the entries come from, and `copied`: the entries i
/// with copied[i] are the same entries as there (same id, same links), so their stored line is
/// read from that session's row, not encoded again.
inline SessionState write_session(Database& db, const SessionHeader& header, Dialect dialect,
                                  const std::vector<SessionTreeEntry>& entries,
                                  std::string_view copy_from = {},
                                  const std::vector<bool>& copied = {}) {
    TreeIndex check;
    Transaction tx(db);
    check_not_taken(db, header.id);
    db.statement(
          "INSERT INTO sessions (id, created, cwd, dialect, header, indexed_to) VALUES (?1, ?2, "
          "?3, ?4, ?5, ?6)")
        .bind(1, header.id)
        .bind(2, header.timestamp)
        .bind(3, header.cwd)
        .bind(4, static_cast<std::int64_t>(dialect))
        .bind(5, encode_header(header, dialect))
        .bind(6, static_cast<std::int64_t>(entries.size()))
        .run();
    SessionState state;
    std::vector<PreparedRow> current;
    std::vector<PreparedRow> ahead;
    const auto batch_of = [&](std::size_t first, std::vector<PreparedRow>& rows) {
        rows.assign(std::min(prepare_batch_entries, entries.size() - first), PreparedRow{});
        return PrepareRows{&entries, &copied, dialect, first, &rows};
    };
    batch_of(0, current)();
    for (std::size_t start = 0; start < entries.size(); start += prepare_batch_entries) {
        // The next batch (none after the last) is prepared meanwhile; the helper is joined
        // before `ahead` is read, and when a check below throws.
        const bool more = start + prepare_batch_entries < entries.size();
        PrepareRows work = batch_of(more ? start + prepare_batch_entries : entries.size(), ahead);
        detail::BackgroundThreads<PrepareRows> helper(more ? 1 : 0, work);
        for (std::size_t k = 0; k < current.size(); ++k) {
            const std::size_t i = start + k;
            const SessionTreeEntry& e = entries[i];
            const bool from_copy = i < copied.size() && copied[i];
            check.check_append(e);
            const auto& parent = parent_id_of(e);
            std::optional<std::int64_t> parent_seq;
            if (parent) parent_seq = static_cast<std::int64_t>(*check.position(*parent)) + 1;
            const std::int64_t seq = state.next_seq;
            advance(state, e);
            PreparedRow& row = current[k];
            if (!row.ready) row = prepare_row(e, dialect, from_copy);
            if (from_copy) {
                // Read and inserted as a value: an INSERT ... SELECT would keep a statement
                // journal of the pages it changes, for each entry.
                auto& line =
                    db.statement("SELECT line FROM entries WHERE session_id = ?1 AND id = ?2");
                Reset reset_line(line);
                line.bind(1, copy_from).bind(2, id_of(e));
                if (!line.step())
                    throw SessionError(ErrorCode::not_found,
                                       "entry '" + id_of(e) + "' is no longer in session '" +
                                           std::string(copy_from) + "' in database '" + db.path() +
                                           "'");
                insert_entry_row(db, header.id, seq, e, parent_seq, line.text(0), state.stats);
            } else {
                insert_entry_row(db, header.id, seq, e, parent_seq, row.line, state.stats);
            }
            write_search_row(db, header.id, seq, row.search);
            check.record(e);
        }
        helper.join();
        current.swap(ahead);
    }
    tx.commit();
    return state;
}

}  // namespace detail::sqlite

/// A session storage over an SQLite database. Models SessionStorage.
///
/// Complexity: open O(1) (one row); append one transaction of O(log n) statements; get_entry,
/// get_label O(log n); the path O(path) rows in O(log path) queries; the state entries
/// O(ancestry) positions in one query; find_entries and get_entries O(result); leaf, name, stats
/// and entry_count O(1).
class SqliteSessionStorage {
public:
    /// Creates a session holding `header` and `entries` (in order) in the database at `path`
    /// (created when missing) in one transaction, and returns it open for writing. A taken id:
    /// already_exists; entries that do not form a tree: already_exists / invalid_entry;
    /// nothing is created then.
    static SqliteSessionStorage create(const std::string& path, SessionHeader header,
                                       SqliteStorageOptions options = {},
                                       const std::vector<SessionTreeEntry>& entries = {}) {
        check_session_id(header.id);
        if (header.metadata.is_null()) header.metadata = Json::object();
        SqliteSessionStorage s(std::move(options));
        s.dialect_ = s.options_.dialect;
        s.db_ = detail::sqlite::open_database(path, true, false, s.options_);
        // Before the lock: a taken id is already_exists even while its writer is busy.
        detail::sqlite::check_not_taken(*s.db_, header.id);
        s.lock_ = detail::sqlite::lock_session(path, header.id, s.options_.lock_wait);
        s.state_ = detail::sqlite::write_session(*s.db_, header, s.dialect_, entries);
        s.indexed_to_ = s.state_.next_seq - 1;
        s.know_ids(entries);
        s.header_ = std::move(header);
        return s;
    }

    /// Opens a session for writing: takes its writer lock (`locked` when another writer keeps
    /// it after lock_wait). Missing database or session: not_found; a file that is not an
    /// agentcore database, or a newer schema: invalid_session (the file untouched).
    static SqliteSessionStorage open(const std::string& path, std::string_view id,
                                     SqliteStorageOptions options = {}) {
        check_session_id(id);
        SqliteSessionStorage s(std::move(options));
        s.db_ = detail::sqlite::open_database(path, false, false, s.options_);
        s.lock_ = detail::sqlite::lock_session(path, std::string(id), s.options_.lock_wait);
        s.load(id);
        return s;
    }

    /// Opens a session for reading: no lock, nothing written. It reads the session as it was
    /// when opened (entries appended later by a writer are not seen). Appends throw `storage`.
    static SqliteSessionStorage open_read_only(const std::string& path, std::string_view id,
                                               SqliteStorageOptions options = {}) {
        check_session_id(id);
        SqliteSessionStorage s(std::move(options));
        s.read_only_ = true;
        s.db_ = detail::sqlite::open_database(path, false, true, s.options_);
        s.load(id);
        return s;
    }

    SqliteSessionStorage(SqliteSessionStorage&&) noexcept = default;
    SqliteSessionStorage& operator=(SqliteSessionStorage&& o) noexcept {
        if (this != &o) {
            close_writer();
            options_ = std::move(o.options_);
            db_ = std::move(o.db_);
            lock_ = std::move(o.lock_);
            header_ = std::move(o.header_);
            dialect_ = o.dialect_;
            read_only_ = o.read_only_;
            state_ = std::move(o.state_);
            indexed_to_ = o.indexed_to_;
            last_appended_ = std::move(o.last_appended_);
            cache_ = std::move(o.cache_);
            ids_ = std::move(o.ids_);
        }
        return *this;
    }
    /// A writer moves the words of its latest appends into the search index as it closes.
    ~SqliteSessionStorage() { close_writer(); }

    // -- SessionStorage ------------------------------------------------------------------------

    [[nodiscard]] const SessionHeader& metadata() const noexcept { return header_; }
    [[nodiscard]] const Environment& environment() const noexcept { return options_.environment; }
    [[nodiscard]] std::optional<std::string> get_leaf_id() const { return state_.leaf; }

    /// Appends a `leaf` entry that moves the leaf to `target` (none: before the first entry).
    /// Throws not_found for an unknown target.
    ///
    /// As in a JSONL file (JsonlSessionStorage::set_leaf_id): in a native session the entry's
    /// parent is the previous leaf; in a pi session it is the target, so that the session's
    /// export leads pi down the target's branch, and a copy into a pi JSONL file holds the same
    /// lines.
    void set_leaf_id(std::optional<std::string> target) {
        if (target && !find_seq(*target))
            throw SessionError(ErrorCode::not_found, "entry '" + *target + "' not found");
        LeafEntry leaf;
        leaf.id = create_entry_id();
        leaf.parent_id = dialect_ == Dialect::pi ? target : state_.leaf;
        leaf.timestamp = format_timestamp(options_.environment.now_ms());
        leaf.target_id = std::move(target);
        append_entry(std::move(leaf));
    }

    /// A fresh entry id, unique within this session. A writer reads the session's ids once, at
    /// its first call (or knows them from creating it), and then knows every id: it writes every
    /// new one. (Asking the database each time costs a read transaction per id, dearer than the
    /// append's own lookups.)
    [[nodiscard]] std::string create_entry_id() const {
        if (read_only_)
            return make_entry_id(options_.environment, [this](const std::string& id) {
                return find_seq(id).has_value();
            });
        if (!ids_) {
            detail::sqlite::IdSet ids;
            auto& q = db_->statement("SELECT id FROM entries WHERE session_id = ?1");
            detail::sqlite::Reset reset_q(q);
            q.bind(1, header_.id);
            while (q.step()) ids.emplace(q.text(0));
            ids_ = std::move(ids);
        }
        return make_entry_id(options_.environment,
                             [this](const std::string& id) { return ids_->count(id) > 0; });
    }

    /// Appends an entry in one transaction, committed before memory changes. already_exists /
    /// invalid_entry as for every storage; `locked` when the session's next position is not the
    /// one this storage expects (another writer bypassed the lock) or the database stays busy;
    /// `storage` when the database cannot be written (a full disk), when the storage is
    /// read-only, or the session was removed. Nothing is written in any of these cases.
    void append_entry(SessionTreeEntry entry) {
        if (read_only_)
            throw SessionError(ErrorCode::storage,
                               "session '" + header_.id + "' is open read-only");
        const EntryBase& base = base_of(entry);
        if (base.id.empty())
            throw SessionError(
                ErrorCode::invalid_entry,
                "entry of type '" + std::string(type_of(entry)) + "' has an empty id");
        if (ids_ && ids_->count(base.id))
            throw SessionError(ErrorCode::already_exists,
                               "entry id '" + base.id + "' already exists in the session");
        std::string line = encode_entry(entry, dialect_);
        auto& db = *db_;
        detail::sqlite::SessionState next = state_;
        detail::sqlite::advance(next, entry);
        const std::int64_t position = state_.next_seq;
        detail::sqlite::Transaction tx(db);
        std::optional<std::int64_t> parent_seq;
        if (base.parent_id) {
            // Mostly the entry appended last: its position is known.
            parent_seq = !last_appended_.first.empty() && *base.parent_id == last_appended_.first
                             ? last_appended_.second
                             : find_seq(*base.parent_id);
            if (!parent_seq)
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
        // The row is the whole write. Its position is the one this storage expects: when a
        // writer that bypassed the lock took it, the primary key refuses the row; when the
        // session was removed, its foreign key does; a taken id, its unique key.
        try {
            detail::sqlite::insert_entry_row(db, header_.id, position, entry, parent_seq, line,
                                             next.stats);
        } catch (const SessionError&) {
            refused_append(base.id);
            throw;
        }
        const bool move_words = position - indexed_to_ >= detail::sqlite::search_pending_rows;
        if (move_words) {
            index_pending(position);
        } else if (position == indexed_to_ + 1) {
            // The session's first pending entry: searches are to look at it.
            db.statement("INSERT OR IGNORE INTO search_pending_sessions (session_id) VALUES (?1)")
                .bind(1, header_.id)
                .run();
        }
        tx.commit();
        if (move_words) indexed_to_ = position;
        if (ids_) ids_->insert(base.id);
        state_ = std::move(next);
        last_appended_ = {base.id, position};
        remember(position, std::make_shared<const SessionTreeEntry>(std::move(entry)));
    }

    [[nodiscard]] EntryHandle get_entry(std::string_view id) const {
        auto& q = db_->statement(
            "SELECT seq, line FROM entries WHERE session_id = ?1 AND id = ?2 AND seq < ?3");
        detail::sqlite::Reset reset_q(q);
        q.bind(1, header_.id).bind(2, id).bind(3, state_.next_seq);
        if (!q.step()) return nullptr;
        return decode(q.int64(0), q.text(1));
    }

    [[nodiscard]] std::vector<EntryHandle> find_entries(std::string_view type) const {
        // Messages are read along the session's positions; any other type through the index
        // by type, whose condition (not a message) the query states so that it applies.
        auto& q = db_->statement(
            type == MessageEntry::type
                ? "SELECT seq, line FROM entries WHERE session_id = ?1 AND type = ?2 AND seq < ?3 "
                  "ORDER BY seq"
                : "SELECT seq, line FROM entries WHERE session_id = ?1 AND type = ?2 AND type <> "
                  "'message' AND seq < ?3 ORDER BY seq");
        detail::sqlite::Reset reset_q(q);
        q.bind(1, header_.id).bind(2, type).bind(3, state_.next_seq);
        std::vector<EntryHandle> out;
        while (q.step()) out.push_back(decode(q.int64(0), q.text(1)));
        return out;
    }

    [[nodiscard]] std::optional<std::string> get_label(std::string_view id) const {
        auto& q = db_->statement(
            "SELECT label FROM entries WHERE session_id = ?1 AND type = 'label' AND target_id = ?2 "
            "AND seq < ?3"
            " ORDER BY seq DESC LIMIT 1");
        detail::sqlite::Reset reset_q(q);
        q.bind(1, header_.id).bind(2, id).bind(3, state_.next_seq);
        if (!q.step()) return std::nullopt;
        return q.optional_text(0);
    }

    [[nodiscard]] std::optional<std::string> get_session_name() const { return state_.name; }

    [[nodiscard]] std::vector<EntryHandle> get_path_to_root_or_compaction(
        std::optional<std::string_view> start) const {
        // The path is fetched in batches that double. An agent's path is mostly a run of
        // consecutive positions (each entry's parent was appended just before it), so a batch is
        // first read as the range of positions that ends at the entry wanted: one scan of the
        // primary key. Once fewer than half the rows those ranges gave were on the path (a
        // session of many interleaved branches), the batches follow the parent links instead
        // (a recursive query), so that what is read stays O(path).
        struct Row {
            std::int64_t seq;
            EntryHandle cached;  // the entry, when the cache has it (its line is not copied)
            std::string line;
        };
        StringMap<Row> fetched;
        std::int64_t batch = 64;
        std::size_t ranged = 0;  // rows read by ranges
        std::size_t used = 0;    // entries of the path returned
        auto fetch = [&](std::string_view from) {
            const bool follow_links = ranged > 0 && used * 2 < ranged;
            auto& q = db_->statement(
                follow_links
                    ? "WITH RECURSIVE up(seq, parent_seq, id, line, n) AS ("
                      " SELECT seq, parent_seq, id, line, 1 FROM entries WHERE session_id = ?1 AND "
                      "id = ?2 AND seq < ?4"
                      " UNION ALL"
                      " SELECT e.seq, e.parent_seq, e.id, e.line, up.n + 1 FROM up JOIN entries e"
                      " ON e.session_id = ?1 AND e.seq = up.parent_seq WHERE up.n < ?3)"
                      " SELECT seq, id, line FROM up"
                    : "WITH last(seq) AS (SELECT seq FROM entries WHERE session_id = ?1 AND id = "
                      "?2 "
                      "AND seq < ?4)"
                      " SELECT e.seq, e.id, e.line FROM last, entries e WHERE e.session_id = ?1 "
                      "AND "
                      "e.seq <= last.seq AND e.seq > last.seq - ?3");
            detail::sqlite::Reset reset_q(q);
            q.bind(1, header_.id).bind(2, from).bind(3, batch).bind(4, state_.next_seq);
            while (q.step()) {
                const std::int64_t s = q.int64(0);
                Row row{s, nullptr, {}};
                if (auto it = cache_.find(s); it != cache_.end())
                    row.cached = it->second;
                else
                    row.line = std::string(q.text(2));
                fetched.emplace(std::string(q.text(1)), std::move(row));
                if (!follow_links) ++ranged;
            }
            if (batch < 8192) batch *= 2;
        };
        auto lookup = [&](std::string_view id) -> EntryHandle {
            auto it = fetched.find(id);
            if (it == fetched.end()) {
                fetch(id);
                it = fetched.find(id);
                if (it == fetched.end()) return nullptr;
            }
            ++used;
            if (it->second.cached) return it->second.cached;
            return decode(it->second.seq, it->second.line);
        };
        return detail::walk_to_root_or_compaction(start, entry_count(), lookup);
    }

    /// The entries a context's state comes from (SPEC §4.5): one recursive query walks the
    /// leaf's ancestry by the parent links and lists, newest first, the positions and types of
    /// the entries that can set the state; only those still wanted are read (a message while no
    /// model setter has been found: usually the newest one or two), from the cache or by
    /// position. A walk by get_entry would cost a statement a step.
    [[nodiscard]] StateEntries get_state_entries(std::optional<std::string_view> leaf) const {
        StateEntries out;
        if (!leaf) return out;
        auto& q = db_->statement(
            "WITH RECURSIVE up(seq, parent_seq, type, n) AS ("
            " SELECT seq, parent_seq, type, 1 FROM entries WHERE session_id = ?1 AND id = ?2 AND "
            "seq < ?3"
            " UNION ALL"
            " SELECT e.seq, e.parent_seq, e.type, up.n + 1 FROM up JOIN entries e"
            " ON e.session_id = ?1 AND e.seq = up.parent_seq WHERE up.n < ?4)"
            " SELECT seq, type FROM up WHERE type IN (?5, ?6, ?7, ?8) ORDER BY n");
        detail::sqlite::Reset reset_q(q);
        q.bind(1, header_.id)
            .bind(2, *leaf)
            .bind(3, state_.next_seq)
            .bind(4, static_cast<std::int64_t>(entry_count()))
            .bind(5, MessageEntry::type)
            .bind(6, ThinkingLevelChangeEntry::type)
            .bind(7, ModelChangeEntry::type)
            .bind(8, ActiveToolsChangeEntry::type);
        while (q.step()) {
            // What the entry may set (a message: if it is an assistant's); an older entry of a
            // kind already found is passed over unread.
            const auto may_set = detail::state_sets_of(q.text(1), true);
            if (!(may_set.thinking_level && !out.thinking_level) &&
                !(may_set.model && !out.model) && !(may_set.active_tools && !out.active_tools))
                continue;
            const EntryHandle entry = entry_at(q.int64(0));
            if (!entry) continue;
            const auto sets = detail::state_sets_of(*entry);
            if (sets.thinking_level && !out.thinking_level) out.thinking_level = entry;
            if (sets.model && !out.model) out.model = entry;
            if (sets.active_tools && !out.active_tools) out.active_tools = entry;
            if (out.thinking_level && out.model && out.active_tools) break;
        }
        return out;
    }

    [[nodiscard]] std::vector<EntryHandle> get_entries(EntriesQuery query = {}) const {
        const std::size_t count = entry_count();
        if (query.after >= count) return {};
        const std::size_t n = std::min(query.limit, count - query.after);
        auto& q = db_->statement(
            "SELECT seq, line FROM entries WHERE session_id = ?1 AND seq > ?2 AND seq < ?4 ORDER "
            "BY seq LIMIT ?3");
        detail::sqlite::Reset reset_q(q);
        q.bind(1, header_.id)
            .bind(2, static_cast<std::int64_t>(query.after))
            .bind(3, static_cast<std::int64_t>(n))
            .bind(4, state_.next_seq);
        // The rows' lines are decoded together (on several threads for a large page); the
        // entries already decoded are taken from the cache.
        std::vector<EntryHandle> out;
        out.reserve(n);
        std::vector<std::int64_t> seqs;
        std::vector<std::string> lines;
        std::vector<std::size_t> slots;  // where each line's entry goes in `out`
        while (q.step()) {
            const std::int64_t seq = q.int64(0);
            if (auto it = cache_.find(seq); it != cache_.end()) {
                out.push_back(it->second);
                continue;
            }
            slots.push_back(out.size());
            out.emplace_back();
            seqs.push_back(seq);
            lines.emplace_back(q.text(1));
        }
        const std::vector<std::string_view> views(lines.begin(), lines.end());
        auto decoded = detail::decode_lines(views, dialect_, detail::decode_threads());
        for (std::size_t i = 0; i < decoded.size(); ++i) {
            // A line the batch could not decode is decoded again here, which reports why.
            if (!decoded[i]) {
                out[slots[i]] = decode(seqs[i], lines[i]);
                continue;
            }
            remember(seqs[i], decoded[i]);
            out[slots[i]] = std::move(decoded[i]);
        }
        return out;
    }

    [[nodiscard]] SessionStats get_session_stats() const noexcept { return state_.stats; }
    [[nodiscard]] std::size_t entry_count() const noexcept {
        return static_cast<std::size_t>(state_.next_seq - 1);
    }

    // -- The database --------------------------------------------------------------------------

    [[nodiscard]] const std::string& database_path() const noexcept { return db_->path(); }
    /// The dialect of the session's lines (what an export writes).
    [[nodiscard]] Dialect dialect() const noexcept { return dialect_; }
    [[nodiscard]] bool read_only() const noexcept { return read_only_; }
    /// The connection (for tests and tools: pragmas, integrity checks).
    [[nodiscard]] sqlite3* native_handle() const noexcept { return db_->handle(); }

    /// The session as a JSONL file's text in its own dialect: the header line, then each entry's
    /// line as stored: the bytes a JSONL storage holding the same session writes.
    [[nodiscard]] std::string export_jsonl() const {
        std::string out = encode_header(header_, dialect_);
        out.push_back('\n');
        auto& q = db_->statement(
            "SELECT line FROM entries WHERE session_id = ?1 AND seq < ?2 ORDER BY seq");
        detail::sqlite::Reset reset_q(q);
        q.bind(1, header_.id).bind(2, state_.next_seq);
        while (q.step()) {
            out.append(q.text(0));
            out.push_back('\n');
        }
        return out;
    }

private:
    friend struct detail::sqlite::Access;

    explicit SqliteSessionStorage(SqliteStorageOptions options) : options_(std::move(options)) {}

    void load(std::string_view id) {
        auto& q = db_->statement("SELECT header, dialect, indexed_to FROM sessions WHERE id = ?1");
        detail::sqlite::Reset reset_q(q);
        q.bind(1, id);
        if (!q.step())
            throw SessionError(
                ErrorCode::not_found,
                "session '" + std::string(id) + "' not found in database '" + db_->path() + "'");
        try {
            header_ = decode_header(q.text(0));
        } catch (const SessionError& e) {
            throw SessionError(ErrorCode::invalid_session,
                               "session '" + std::string(id) + "' in database '" + db_->path() +
                                   "': header: " + std::string(e.detail()));
        }
        const std::int64_t dialect = q.int64(1);
        if (dialect != static_cast<std::int64_t>(Dialect::native) &&
            dialect != static_cast<std::int64_t>(Dialect::pi))
            throw SessionError(ErrorCode::invalid_session, "session '" + std::string(id) +
                                                               "' in database '" + db_->path() +
                                                               "' has an unknown dialect");
        dialect_ = static_cast<Dialect>(dialect);
        indexed_to_ = q.int64(2);
        state_ = detail::sqlite::read_state(*db_, id);
    }

    // A writer that has just created its session knows its ids.
    void know_ids(const std::vector<SessionTreeEntry>& entries) {
        detail::sqlite::IdSet ids;
        ids.reserve(entries.size());
        for (const auto& e : entries) ids.emplace(id_of(e));
        ids_ = std::move(ids);
    }

    // Why the row of the entry `id` at the next position was refused, as the error to throw
    // (called in the append's transaction); returns when none of the expected reasons holds.
    void refused_append(const std::string& id) const {
        auto& db = *db_;
        auto& q = db.statement(
            "SELECT (SELECT max(seq) FROM entries WHERE session_id = ?1), "
            "EXISTS (SELECT 1 FROM sessions WHERE id = ?1)");
        std::optional<std::int64_t> last;
        bool exists = false;
        {
            detail::sqlite::Reset reset_q(q);
            q.bind(1, header_.id);
            if (q.step()) {
                if (!q.is_null(0)) last = q.int64(0);
                exists = q.int64(1) != 0;
            }
        }
        if (!exists)
            throw SessionError(
                ErrorCode::storage,
                "session '" + header_.id + "' was removed from database '" + db.path() + "'");
        if (last && *last >= state_.next_seq)
            throw SessionError(ErrorCode::locked,
                               "session '" + header_.id + "' in database '" + db.path() +
                                   "' was written by another writer (expected entry " +
                                   std::to_string(state_.next_seq) + ", found " +
                                   std::to_string(*last + 1) + "); reopen it");
        if (find_seq(id))
            throw SessionError(ErrorCode::already_exists,
                               "entry id '" + id + "' already exists in the session");
    }

    // Moves the words of the entries after indexed_to_ up to `last` (the last entry) into
    // search_index and records it in the session's row (and that nothing is pending), in the
    // caller's transaction. A line the codec cannot
    // read gets no row (a search reports it when it reads it).
    void index_pending(std::int64_t last) {
        auto& db = *db_;
        std::vector<std::pair<std::int64_t, EntryHandle>> pending;
        {
            auto& q = db.statement(
                "SELECT seq, line FROM entries WHERE session_id = ?1 AND seq > ?2 AND seq <= ?3 "
                "ORDER BY seq");
            detail::sqlite::Reset reset_q(q);
            q.bind(1, header_.id).bind(2, indexed_to_).bind(3, last);
            while (q.step()) {
                const std::int64_t seq = q.int64(0);
                const auto cached = cache_.find(seq);
                if (cached != cache_.end()) {
                    pending.emplace_back(seq, cached->second);
                    continue;
                }
                try {
                    pending.emplace_back(seq, std::make_shared<const SessionTreeEntry>(
                                                  decode_entry(q.text(1), dialect_)));
                } catch (const SessionError&) {
                }
            }
        }
        for (const auto& [seq, entry] : pending)
            detail::sqlite::index_search_row(db, header_.id, seq, *entry);
        db.statement("UPDATE sessions SET indexed_to = ?2 WHERE id = ?1")
            .bind(1, header_.id)
            .bind(2, last)
            .run();
        db.statement("DELETE FROM search_pending_sessions WHERE session_id = ?1")
            .bind(1, header_.id)
            .run();
    }

    // A writer that closes moves its pending words into the index, so that searches find them
    // there rather than reading their lines. A failure leaves them pending (searches still find
    // them), never an exception.
    void close_writer() noexcept {
        if (!db_ || read_only_ || state_.next_seq - 1 <= indexed_to_) return;
        try {
            detail::sqlite::Transaction tx(*db_);
            index_pending(state_.next_seq - 1);
            tx.commit();
            indexed_to_ = state_.next_seq - 1;
        } catch (...) {
        }
    }

    [[nodiscard]] std::optional<std::int64_t> find_seq(std::string_view id) const {
        auto& q = db_->statement(detail::sqlite::find_seq_sql);
        detail::sqlite::Reset reset_q(q);
        q.bind(1, header_.id).bind(2, id);
        if (!q.step()) return std::nullopt;
        return q.int64(0);
    }

    // The entry at a position of this session (from the cache, else read), or null.
    EntryHandle entry_at(std::int64_t seq) const {
        if (auto it = cache_.find(seq); it != cache_.end()) return it->second;
        auto& q = db_->statement("SELECT line FROM entries WHERE session_id = ?1 AND seq = ?2");
        detail::sqlite::Reset reset_q(q);
        q.bind(1, header_.id).bind(2, seq);
        if (!q.step()) return nullptr;
        return decode(seq, q.text(0));
    }

    // The decoded entry at `seq`, from the cache or from its stored line. A line the codec
    // cannot read: invalid_entry naming the session and the position, never the text.
    EntryHandle decode(std::int64_t seq, std::string_view line) const {
        auto it = cache_.find(seq);
        if (it != cache_.end()) return it->second;
        EntryHandle handle;
        try {
            handle = std::make_shared<const SessionTreeEntry>(decode_entry(line, dialect_));
        } catch (const SessionError& e) {
            throw SessionError(ErrorCode::invalid_entry, "session '" + header_.id +
                                                             "' in database '" + db_->path() +
                                                             "' entry " + std::to_string(seq) +
                                                             ": " + std::string(e.detail()));
        }
        remember(seq, handle);
        return handle;
    }

    void remember(std::int64_t seq, EntryHandle handle) const {
        if (options_.decoded_cache_entries == 0) return;
        if (cache_.size() >= options_.decoded_cache_entries) cache_.clear();
        cache_.emplace(seq, std::move(handle));
    }

    SqliteStorageOptions options_;
    std::unique_ptr<detail::sqlite::Database> db_;
    detail::FileHandle lock_;  // after db_: released first
    SessionHeader header_;
    Dialect dialect_ = Dialect::native;
    bool read_only_ = false;
    detail::sqlite::SessionState state_;
    // The last position whose words are in search_index (the session row's indexed_to).
    std::int64_t indexed_to_ = 0;
    // The id and position of the entry this storage appended last (an empty id: none yet).
    std::pair<std::string, std::int64_t> last_appended_;
    mutable std::unordered_map<std::int64_t, EntryHandle> cache_;
    // A writer's entry ids, read at its first create_entry_id (none yet: not read).
    mutable std::optional<detail::sqlite::IdSet> ids_;
};

namespace detail::sqlite {

/// What the repository's functions use of a storage's insides.
struct Access {
    /// SqliteSessionStorage::create for a repository: the session is written on the
    /// repository's connection `db` (whose first durable commit has already synced the folder,
    /// which a new connection's first commit does again), then opened for writing on a
    /// connection of its own, with the writer lock taken before anything was written.
    /// `copy_from` and `copied` as for write_session.
    static SqliteSessionStorage create_on(Database& db, SessionHeader header,
                                          SqliteStorageOptions options,
                                          const std::vector<SessionTreeEntry>& entries,
                                          std::string_view copy_from = {},
                                          const std::vector<bool>& copied = {}) {
        check_session_id(header.id);
        if (header.metadata.is_null()) header.metadata = Json::object();
        check_not_taken(db, header.id);
        SqliteSessionStorage s(std::move(options));
        s.dialect_ = s.options_.dialect;
        s.lock_ = lock_session(db.path(), header.id, s.options_.lock_wait);
        s.state_ = write_session(db, header, s.dialect_, entries, copy_from, copied);
        s.indexed_to_ = s.state_.next_seq - 1;
        s.know_ids(entries);
        s.db_ = open_database(db.path(), false, false, s.options_);
        s.header_ = std::move(header);
        return s;
    }
};

}  // namespace detail::sqlite

static_assert(SessionStorage<SqliteSessionStorage>);
static_assert(has_state_entries<SqliteSessionStorage>);

}  // namespace agentcore

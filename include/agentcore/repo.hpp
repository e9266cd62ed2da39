#pragma once
// What every session repository shares (SPEC §4.10): the options of create and list, the one
// result type of list, and the recipes of a new session's header and of a fork's header.

#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/json.hpp>
#include <agentcore/storage.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore {

/// How to create a session.
struct CreateOptions {
    std::optional<std::string> id{};  ///< default: a UUIDv7; must be a valid session id
    std::string cwd{};
    Json metadata = Json(Json::value_t::object);
    std::optional<std::string> parent_session{};
};

/// Where a page of list starts: after the session with this creation time and id (in the order
/// of the listing). Take it from SessionList::next.
struct ListCursor {
    std::string created{};  ///< the header timestamp
    std::string id{};
};

/// Which sessions list returns.
struct ListOptions {
    std::optional<std::string> cwd{};  ///< only sessions of this working directory
    std::size_t limit = std::numeric_limits<std::size_t>::max();  ///< at most this many
    std::optional<ListCursor> after = std::nullopt;  ///< keyset paging: start after this session
    bool newest_first = true;                        ///< false: oldest first
    /// Also give each listed session its SessionSummary (SessionListing::summary). Databases
    /// read it from the session's row; a JSONL repository from a summary file kept in each cwd
    /// folder, reading again only the sessions that changed since (see jsonl_repo.hpp).
    bool summaries = false;
};

/// What a listing can tell about a session without opening it: what users look for when they
/// pick a conversation to resume.
struct SessionSummary {
    std::size_t entry_count = 0;        ///< entries, the header not counted
    SessionStats stats{};               ///< message count, tokens and cost (get_session_stats)
    std::optional<std::string> name{};  ///< the session's name (get_session_name)
    /// The timestamp of the newest entry in append order (the header's when there is none).
    std::string last_activity{};
};

/// A session found by list.
struct SessionListing {
    SessionHeader header;
    std::string path;  ///< where it is stored: a file path, or empty when the repository has none
    Dialect dialect = Dialect::native;  ///< the JSONL dialect it is written in
    std::uint64_t file_size = 0;        ///< bytes of its file (databases: 0)
    /// With ListOptions::summaries: what the session holds. Empty without that option, and for
    /// a session whose entries cannot be read (a damaged line: opening the session says why).
    std::optional<SessionSummary> summary = std::nullopt;
};

/// A stored session list skipped (it stays where it is).
struct ListProblem {
    std::string path;
    std::string reason;
};

/// What list returns: a page of sessions in creation order (by timestamp, then id), the stored
/// sessions it could not read, and the cursor of the next page when more may follow.
struct SessionList {
    std::vector<SessionListing> sessions;
    std::vector<ListProblem> problems;
    std::optional<ListCursor> next;
};

/// What a session repository provides (SPEC §4.10), as free functions found by argument-
/// dependent lookup. Every built-in repository models it; so may an application's own.
///
/// Required (r: R&, cr: const R&, id: std::string_view):
/// - R::storage_type (a SessionStorage) and R::session_type (Session<R::storage_type>)
/// - create(r, CreateOptions) -> session_type           a taken id: already_exists
/// - open(r, id) -> session_type                         for writing; unknown: not_found
/// - open_read_only(cr, id) -> session_type              appends throw `storage`
/// - list(cr, ListOptions) -> SessionList                newest first, by cwd, paged
/// - remove(r, id)                                       idempotent
/// - fork(r, id, ForkOptions) -> session_type            SPEC §4.9
template <class R>
concept SessionRepository = SessionStorage<typename R::storage_type> &&
    requires(R& r, const R& cr, std::string_view id, CreateOptions c, ListOptions l,
             ForkOptions f) {
    typename R::session_type;
    { create(r, c) } -> std::same_as<typename R::session_type>;
    { open(r, id) } -> std::same_as<typename R::session_type>;
    { open_read_only(cr, id) } -> std::same_as<typename R::session_type>;
    { list(cr, l) } -> std::same_as<SessionList>;
    remove(r, id);
    { fork(r, id, f) } -> std::same_as<typename R::session_type>;
};

/// A repository that can take in a session made elsewhere, as it is. Every built-in repository
/// models it; it is optional for an application's own (AnyRepository then refuses the import).
///
/// Required, besides SessionRepository (r: R&):
/// - import_session(r, SessionHeader, std::vector<SessionTreeEntry>, Dialect) -> session_type
///   creates a session with that header exactly (id, creation time, cwd, metadata, parent,
///   unknown fields) holding those entries in that order, written in that dialect where the
///   repository keeps lines, all or nothing: a taken id is already_exists, an invalid id
///   invalid_session, entries that do not form a tree already_exists / invalid_entry, and in each
///   case the repository is left as it was. Returns the session open for writing.
template <class R>
concept ImportingRepository = SessionRepository<R> &&
    requires(R& r, SessionHeader h, std::vector<SessionTreeEntry> e, Dialect d) {
    { import_session(r, std::move(h), std::move(e), d) } -> std::same_as<typename R::session_type>;
};

/// Called while a session is read: (entries read so far, entries in the session).
using CopyProgress = std::function<void(std::size_t done, std::size_t total)>;

/// Copies the session `id` of `from` into `to`: what open_read_only reads (the header as
/// stored, every entry in append order) becomes import_session's session, in the dialect the
/// source keeps it in (dialect_of). Lossless: unknown entry types and fields survive, and a
/// session copied between JSONL and database repositories exports the same lines. All or nothing
/// in `to`; `from` is only read. Unknown id: not_found; an id that `to` already holds:
/// already_exists, nothing changed. Returns the copy, open for writing.
///
/// Complexity: one pass over the entries (read in pages of 4096; `progress` is called after
/// each page), holding them in memory until the import has written them.
template <SessionRepository From, ImportingRepository To>
typename To::session_type copy_session(const From& from, To& to, std::string_view id,
                                       const CopyProgress& progress = {}) {
    const auto source = open_read_only(from, id);
    const auto& storage = source.storage();
    const std::size_t count = storage.entry_count();
    std::vector<detail::dependent<SessionTreeEntry, From>> entries;
    entries.reserve(count);
    constexpr std::size_t page = 4096;
    while (entries.size() < count) {
        const auto handles = storage.get_entries(EntriesQuery{entries.size(), page});
        if (handles.empty()) break;
        for (const auto& h : handles) entries.push_back(*h);
        if (progress) progress(entries.size(), count);
    }
    return import_session(to, storage.metadata(), std::move(entries), dialect_of(storage));
}

/// The summary of a stored session (SessionListing::summary), from the storage's O(1)
/// bookkeeping and its newest entry.
template <SessionStorage S>
SessionSummary summarize(const S& storage) {
    SessionSummary out;
    out.entry_count = storage.entry_count();
    out.stats = storage.get_session_stats();
    out.name = storage.get_session_name();
    out.last_activity = storage.metadata().timestamp;
    if (out.entry_count > 0) {
        const auto newest = storage.get_entries(EntriesQuery{out.entry_count - 1, 1});
        if (!newest.empty()) out.last_activity = base_of(*newest.front()).timestamp;
    }
    return out;
}

namespace detail {

/// The header of a new session (SPEC §4.10): the id given or a fresh UUIDv7 (checked: an
/// invalid one is invalid_session), the clock's time, cwd, metadata ({} when null) and parent.
template <class = void>
SessionHeader new_header(CreateOptions options, const Environment& environment) {
    SessionHeader header;
    header.id = options.id ? std::move(*options.id) : make_uuid_v7(environment);
    check_session_id(header.id);
    header.timestamp = format_timestamp(environment.now_ms());
    header.cwd = std::move(options.cwd);
    header.parent_session = std::move(options.parent_session);
    header.metadata = options.metadata.is_null() ? Json::object() : std::move(options.metadata);
    return header;
}

/// The header of a fork (SPEC §4.9): a new id (given or fresh), cwd and metadata inherited from
/// the source unless the options give them, parent_session = `parent_ref` (the source's id, or
/// its file's path).
template <class = void>
SessionHeader fork_header(const SessionHeader& source, const ForkOptions& options,
                          const Environment& environment, std::string parent_ref) {
    CreateOptions create;
    create.id = options.session_id;
    create.cwd = options.cwd ? *options.cwd : source.cwd;
    create.metadata = options.metadata ? *options.metadata : source.metadata;
    create.parent_session = std::move(parent_ref);
    return new_header(std::move(create), environment);
}

/// True when `a` comes before `b` in the listing's order.
template <class = void>
bool listed_before(const SessionHeader& a, const SessionHeader& b, bool newest_first) {
    if (a.timestamp != b.timestamp)
        return newest_first ? a.timestamp > b.timestamp : a.timestamp < b.timestamp;
    return newest_first ? a.id > b.id : a.id < b.id;
}

/// Sorts every listed session and keeps the page the options ask for (for repositories that
/// read every header anyway).
template <class = void>
void page_listing(SessionList& list, const ListOptions& options) {
    auto& s = list.sessions;
    std::stable_sort(s.begin(), s.end(), [&](const SessionListing& a, const SessionListing& b) {
        return listed_before(a.header, b.header, options.newest_first);
    });
    if (options.after) {
        SessionHeader cursor;
        cursor.timestamp = options.after->created;
        cursor.id = options.after->id;
        auto first = std::find_if(s.begin(), s.end(), [&](const SessionListing& l) {
            return listed_before(cursor, l.header, options.newest_first);
        });
        s.erase(s.begin(), first);
    }
    if (s.size() > options.limit) {
        s.resize(options.limit);
        if (!s.empty()) list.next = ListCursor{s.back().header.timestamp, s.back().header.id};
    }
}

}  // namespace detail

}  // namespace agentcore

#pragma once
// InMemorySessionRepo: sessions by id, in memory (SPEC §4.10).

#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/memory/memory_storage.hpp>
#include <agentcore/repo.hpp>
#include <agentcore/session_ops.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentcore {

class InMemorySessionRepo;

// The repository's operations, declared here so that the class can befriend them (templates for
// compile time: see session.hpp).
template <class = void>
Session<InMemorySessionStorage<>> create(InMemorySessionRepo& repo, CreateOptions options = {});
template <class = void>
Session<InMemorySessionStorage<>> open(InMemorySessionRepo& repo, std::string_view id);
template <class = void>
Session<InMemorySessionStorage<>> open_read_only(const InMemorySessionRepo& repo,
                                                 std::string_view id);
template <class = void>
SessionList list(const InMemorySessionRepo& repo, const ListOptions& options = {});
template <class = void>
void remove(InMemorySessionRepo& repo, std::string_view id);
template <class = void>
Session<InMemorySessionStorage<>> fork(InMemorySessionRepo& repo, std::string_view source_id,
                                       const ForkOptions& options = {});
template <class = void>
Session<InMemorySessionStorage<>> import_session(InMemorySessionRepo& repo, SessionHeader header,
                                                 std::vector<SessionTreeEntry> entries,
                                                 Dialect dialect = Dialect::native);

/// A repository of in-memory sessions; sessions opened from it share their storage.
class InMemorySessionRepo {
public:
    using storage_type = InMemorySessionStorage<>;
    using session_type = Session<storage_type>;

    explicit InMemorySessionRepo(Environment environment = Environment::system())
        : environment_(std::move(environment)) {}

    [[nodiscard]] const Environment& environment() const noexcept { return environment_; }

private:
    template <class>
    friend session_type create(InMemorySessionRepo&, CreateOptions);
    template <class>
    friend session_type open(InMemorySessionRepo&, std::string_view);
    template <class>
    friend session_type open_read_only(const InMemorySessionRepo&, std::string_view);
    template <class>
    friend SessionList list(const InMemorySessionRepo&, const ListOptions&);
    template <class>
    friend void remove(InMemorySessionRepo&, std::string_view);
    template <class>
    friend session_type fork(InMemorySessionRepo&, std::string_view, const ForkOptions&);
    template <class>
    friend session_type import_session(InMemorySessionRepo&, SessionHeader,
                                       std::vector<SessionTreeEntry>, Dialect);

    Environment environment_;
    std::map<std::string, std::shared_ptr<storage_type>, std::less<>> sessions_;
};

/// Creates an empty session. A taken id: already_exists; an invalid id: invalid_session.
template <class T>
InMemorySessionRepo::session_type create(InMemorySessionRepo& repo, CreateOptions options) {
    SessionHeader header = detail::new_header(std::move(options), repo.environment_);
    if (repo.sessions_.count(header.id) != 0)
        throw SessionError(ErrorCode::already_exists, "session '" + header.id + "' already exists",
                           ErrorLocation{.session = header.id});
    std::string id = header.id;
    auto storage = std::make_shared<detail::dependent<InMemorySessionRepo::storage_type, T>>(
        std::move(header), repo.environment_);
    repo.sessions_.emplace(std::move(id), storage);
    return InMemorySessionRepo::session_type(std::move(storage));
}

/// Opens a session by id (sharing its storage). Unknown id: not_found.
template <class>
InMemorySessionRepo::session_type open(InMemorySessionRepo& repo, std::string_view id) {
    auto it = repo.sessions_.find(id);
    if (it == repo.sessions_.end())
        throw SessionError(ErrorCode::not_found, "session '" + std::string(id) + "' not found",
                           ErrorLocation{.session = std::string(id)});
    return InMemorySessionRepo::session_type(it->second);
}

/// Opens a snapshot of a session for reading: it shares the entries stored so far and refuses
/// appends (`storage`). Unknown id: not_found.
template <class>
InMemorySessionRepo::session_type open_read_only(const InMemorySessionRepo& repo,
                                                 std::string_view id) {
    auto it = repo.sessions_.find(id);
    if (it == repo.sessions_.end())
        throw SessionError(ErrorCode::not_found, "session '" + std::string(id) + "' not found");
    return InMemorySessionRepo::session_type(it->second->read_only_copy());
}

/// The sessions, newest first (by creation time, then id) unless the options say otherwise,
/// optionally of one working directory, paged by the options' limit and cursor; with
/// options.summaries, each with its summary (O(1) per session).
template <class>
SessionList list(const InMemorySessionRepo& repo, const ListOptions& options) {
    SessionList out;
    for (const auto& [id, storage] : repo.sessions_) {
        if (options.cwd && storage->metadata().cwd != *options.cwd) continue;
        SessionListing listing;
        listing.header = storage->metadata();
        if (options.summaries) listing.summary = summarize(*storage);
        out.sessions.push_back(std::move(listing));
    }
    detail::page_listing(out, options);
    return out;
}

/// Removes a session; removing an unknown id does nothing. An invalid id: invalid_session.
template <class>
void remove(InMemorySessionRepo& repo, std::string_view id) {
    check_session_id(id);
    auto it = repo.sessions_.find(id);
    if (it != repo.sessions_.end()) repo.sessions_.erase(it);
}

/// Forks a session into a new one (SPEC §4.9): the copy holds get_entries_to_fork's entries
/// with the same ids; its header's parent_session is the source's id; cwd and metadata are
/// inherited unless given. The source is not changed. Unknown source: not_found.
template <class T>
InMemorySessionRepo::session_type fork(InMemorySessionRepo& repo, std::string_view source_id,
                                       const ForkOptions& options) {
    if (options.metadata) detail::check_metadata_nesting(*options.metadata);
    auto source = open(repo, source_id);
    auto entries = prepare_fork_entries<detail::dependent<SessionTreeEntry, T>>(
        get_entries_to_fork(source.storage(), options));
    SessionHeader header = detail::fork_header(source.storage().metadata(), options,
                                               repo.environment_, std::string(source_id));
    if (repo.sessions_.count(header.id) != 0)
        throw SessionError(ErrorCode::already_exists, "session '" + header.id + "' already exists",
                           ErrorLocation{.session = header.id});
    std::string id = header.id;
    // Built completely before it is published: a failure leaves the repository unchanged.
    auto storage = std::make_shared<detail::dependent<InMemorySessionRepo::storage_type, T>>(
        std::move(header), repo.environment_);
    for (auto& e : entries) storage->append_entry(std::move(e));
    repo.sessions_.emplace(std::move(id), storage);
    return InMemorySessionRepo::session_type(std::move(storage));
}

/// Creates a session with `header` as it is and `entries` in order (ImportingRepository): for
/// copies of sessions stored elsewhere. Memory keeps entries, not lines: the dialect is not
/// kept. A taken id: already_exists; an invalid id: invalid_session; entries that do not form a
/// tree: already_exists / invalid_entry; in each case the repository is unchanged.
template <class T>
InMemorySessionRepo::session_type import_session(InMemorySessionRepo& repo, SessionHeader header,
                                                 std::vector<SessionTreeEntry> entries,
                                                 Dialect dialect) {
    (void)dialect;
    check_session_id(header.id);
    if (header.metadata.is_null()) header.metadata = Json::object();
    if (repo.sessions_.count(header.id) != 0)
        throw SessionError(ErrorCode::already_exists, "session '" + header.id + "' already exists",
                           ErrorLocation{.session = header.id});
    std::string id = header.id;
    // Built completely before it is published: a failure leaves the repository unchanged.
    auto storage = std::make_shared<detail::dependent<InMemorySessionRepo::storage_type, T>>(
        std::move(header), repo.environment_);
    for (auto& e : entries) storage->append_entry(std::move(e));
    repo.sessions_.emplace(std::move(id), storage);
    return InMemorySessionRepo::session_type(std::move(storage));
}

static_assert(SessionRepository<InMemorySessionRepo>);
static_assert(ImportingRepository<InMemorySessionRepo>);

}  // namespace agentcore

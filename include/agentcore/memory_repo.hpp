#pragma once
// InMemorySessionRepo: sessions by id, in memory (SPEC §4.10).

#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/memory_storage.hpp>
#include <agentcore/session_ops.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentcore {

/// How to create a session.
struct CreateOptions {
    std::optional<std::string> id{};  ///< default: a UUIDv7; must be a valid session id
    std::string cwd{};
    Json metadata = Json::object();
    std::optional<std::string> parent_session{};
};

/// Which sessions list returns.
struct ListOptions {
    std::optional<std::string> cwd{};  ///< only sessions of this working directory
};

/// A repository of in-memory sessions; sessions opened from it share their storage.
class InMemorySessionRepo {
public:
    using storage_type = InMemorySessionStorage<>;
    using session_type = Session<storage_type>;

    explicit InMemorySessionRepo(Environment environment = Environment::system())
        : environment_(std::move(environment)) {}

    [[nodiscard]] const Environment& environment() const noexcept { return environment_; }

private:
    friend session_type create(InMemorySessionRepo&, CreateOptions);
    friend session_type open(InMemorySessionRepo&, std::string_view);
    friend std::vector<SessionHeader> list(const InMemorySessionRepo&, const ListOptions&);
    friend void remove(InMemorySessionRepo&, std::string_view);
    friend session_type fork(InMemorySessionRepo&, std::string_view, const ForkOptions&);

    Environment environment_;
    std::map<std::string, std::shared_ptr<storage_type>, std::less<>> sessions_;
};

/// Creates an empty session. A taken id: already_exists; an invalid id: invalid_session.
inline InMemorySessionRepo::session_type create(InMemorySessionRepo& repo, CreateOptions options = {}) {
    std::string id = options.id ? *options.id : make_uuid_v7(repo.environment_);
    check_session_id(id);
    if (repo.sessions_.count(id) != 0)
        throw SessionError(ErrorCode::already_exists, "session '" + id + "' already exists",
                           ErrorLocation{.session = id});
    SessionHeader header;
    header.id = id;
    header.timestamp = format_timestamp(repo.environment_.now_ms());
    header.cwd = std::move(options.cwd);
    header.parent_session = std::move(options.parent_session);
    header.metadata = options.metadata.is_null() ? Json::object() : std::move(options.metadata);
    auto storage = std::make_shared<InMemorySessionRepo::storage_type>(std::move(header), repo.environment_);
    repo.sessions_.emplace(id, storage);
    return InMemorySessionRepo::session_type(std::move(storage));
}

/// Opens a session by id (sharing its storage). Unknown id: not_found.
inline InMemorySessionRepo::session_type open(InMemorySessionRepo& repo, std::string_view id) {
    auto it = repo.sessions_.find(id);
    if (it == repo.sessions_.end())
        throw SessionError(ErrorCode::not_found, "session '" + std::string(id) + "' not found",
                           ErrorLocation{.session = std::string(id)});
    return InMemorySessionRepo::session_type(it->second);
}

/// The sessions' headers, newest first, optionally for one working directory.
inline std::vector<SessionHeader> list(const InMemorySessionRepo& repo, const ListOptions& options = {}) {
    std::vector<SessionHeader> out;
    for (const auto& [id, storage] : repo.sessions_)
        if (!options.cwd || storage->metadata().cwd == *options.cwd) out.push_back(storage->metadata());
    std::stable_sort(out.begin(), out.end(), [](const SessionHeader& a, const SessionHeader& b) {
        return a.timestamp != b.timestamp ? a.timestamp > b.timestamp : a.id > b.id;
    });
    return out;
}

/// Removes a session; removing an unknown id does nothing.
inline void remove(InMemorySessionRepo& repo, std::string_view id) {
    auto it = repo.sessions_.find(id);
    if (it != repo.sessions_.end()) repo.sessions_.erase(it);
}

/// Forks a session into a new one (SPEC §4.9): the copy holds get_entries_to_fork's entries
/// with the same ids; its header's parent_session is the source's id; cwd and metadata are
/// inherited unless given. The source is not changed. Unknown source: not_found.
inline InMemorySessionRepo::session_type fork(InMemorySessionRepo& repo, std::string_view source_id,
                                              const ForkOptions& options = {}) {
    if (options.metadata) detail::check_metadata_nesting(*options.metadata);
    auto source = open(repo, source_id);
    const SessionHeader& from = source.storage().metadata();
    auto entries = prepare_fork_entries(get_entries_to_fork(source.storage(), options));
    std::string id = options.session_id ? *options.session_id : make_uuid_v7(repo.environment_);
    check_session_id(id);
    if (repo.sessions_.count(id) != 0)
        throw SessionError(ErrorCode::already_exists, "session '" + id + "' already exists",
                           ErrorLocation{.session = id});
    SessionHeader header;
    header.id = id;
    header.timestamp = format_timestamp(repo.environment_.now_ms());
    header.cwd = options.cwd ? *options.cwd : from.cwd;
    header.parent_session = from.id;
    header.metadata = options.metadata ? *options.metadata : from.metadata;
    // Built completely before it is published: a failure leaves the repository unchanged.
    auto storage = std::make_shared<InMemorySessionRepo::storage_type>(std::move(header), repo.environment_);
    for (auto& e : entries) storage->append_entry(std::move(e));
    repo.sessions_.emplace(id, storage);
    return InMemorySessionRepo::session_type(std::move(storage));
}

}  // namespace agentcore

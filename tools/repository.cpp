#include "repository.hpp"

#include "session_file.hpp"

#include <agentcore/jsonl/jsonl_repo.hpp>

// Linking agentcore::sqlite (where SQLite was found) registers `sqlite:` with open_repository.
#ifdef AGENTCORE_TOOL_SQLITE
#include <agentcore/sqlite/sqlite_repo.hpp>
#endif
// Linking agentcore::postgres (where libpq was found) registers `postgresql://` and `postgres://`.
#ifdef AGENTCORE_TOOL_POSTGRES
#include <agentcore/postgres/postgres_repo.hpp>
#endif

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

namespace agentcore::tool {

namespace {

// The scheme of a URL and what follows its colon; none for a path.
struct Url {
    std::string scheme;
    std::string rest;
};

std::optional<Url> url_of(const std::string& location) {
    const auto scheme = detail::url_scheme(location);
    if (!scheme) return std::nullopt;
    return Url{std::string(*scheme), location.substr(scheme->size() + 1)};
}

bool is_folder(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

bool scheme_known(const std::string& scheme) {
    const auto known = known_repository_schemes();
    return std::find(known.begin(), known.end(), scheme) != known.end();
}

std::string repository_hint() {
    return "a folder of session files, or a URL such as sqlite:sessions.db or "
           "postgresql://host/database";
}

}  // namespace

LocationKind location_kind(const std::string& location) {
    if (url_of(location)) return LocationKind::repository;
    return is_folder(location) ? LocationKind::folder : LocationKind::file;
}

std::optional<std::string> jsonl_folder(const std::string& location) {
    const auto url = url_of(location);
    if (!url) return is_folder(location) ? std::optional<std::string>(location) : std::nullopt;
    if (url->scheme == "jsonl" && !url->rest.empty()) return url->rest;
    return std::nullopt;
}

std::optional<std::string> local_path(const std::string& location) {
    const auto url = url_of(location);
    if (!url) return location;
    if (url->rest.empty() || url->rest.rfind("//", 0) == 0) return std::nullopt;
    return url->rest;
}

AnyRepository open_source_repository(const std::string& location) {
    if (location_kind(location) == LocationKind::file) {
        if (!exists(location))
            throw ToolError(
                "'" + location + "': no such folder (a repository is " + repository_hint() + ")",
                exit_failure, ErrorCode::not_found);
        throw ToolError("'" + location + "': is a session file, not a repository (" +
                        repository_hint() + ")");
    }
    // Known schemes only: open_repository names an unknown one, and the schemes it knows.
    const auto url = url_of(location);
    if (url && scheme_known(url->scheme))
        if (const auto path = local_path(location); path && !exists(*path))
            throw ToolError("'" + location + "': '" + *path + "' not found", exit_failure,
                            ErrorCode::not_found);
    return library_call([&] { return open_repository(location); });
}

AnyRepository open_target_repository(const std::string& location) {
    if (!url_of(location) && exists(location) && !is_folder(location))
        throw ToolError("'" + location + "': is a file, not a repository (" + repository_hint() +
                        ")");
    return library_call([&] { return open_repository(location); });
}

bool same_repository(const std::string& a, const std::string& b) {
    const auto kind_of = [](const std::string& location) {
        if (jsonl_folder(location)) return std::string("jsonl");
        const auto url = url_of(location);
        return url ? url->scheme
                   : std::string("jsonl");  // a path that is no folder yet: one to come
    };
    const std::string kind = kind_of(a);
    if (kind != kind_of(b) || kind == "memory") return false;
    const auto path_a = local_path(a);
    const auto path_b = local_path(b);
    if (!path_a || !path_b) return a == b;
    struct stat sa {};
    struct stat sb {};
    if (::stat(path_a->c_str(), &sa) == 0 && ::stat(path_b->c_str(), &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    // One or both do not exist yet: the same path, spelled differently ("db", "./db")?
    std::error_code ec_a;
    std::error_code ec_b;
    const auto canonical_a = std::filesystem::weakly_canonical(*path_a, ec_a);
    const auto canonical_b = std::filesystem::weakly_canonical(*path_b, ec_b);
    if (ec_a || ec_b) return *path_a == *path_b;
    return canonical_a == canonical_b;
}

}  // namespace agentcore::tool

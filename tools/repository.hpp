#pragma once
// Repositories named on the command line. A location is a URL when it starts with a scheme, as
// open_repository reads it (`sqlite:sessions.db`, `jsonl:DIR`, `memory:`, and whatever else is
// registered); anything else is a path: a folder is a JSONL repository, any other path a session
// file. Every repository but a JSONL folder is reached through open_repository and AnyRepository
// only, so a backend that registers its scheme works here unchanged.

#include "cli_common.hpp"

#include <agentcore/any_repo.hpp>

#include <optional>
#include <string>

namespace agentcore::tool {

/// What a location argument names.
enum class LocationKind {
    file,        ///< a path that is not a folder (a session file), or a path that does not exist
    folder,      ///< a folder: a JSONL repository
    repository,  ///< a URL
};

LocationKind location_kind(const std::string& location);

/// The folder of a JSONL repository named by `location` (a folder path, or `jsonl:PATH`); none
/// for a file or another URL.
std::optional<std::string> jsonl_folder(const std::string& location);

/// The local file or folder a URL's repository lives in, when what follows its scheme is a path
/// (`sqlite:PATH`, `jsonl:PATH`), not a network address (`scheme://host/…`) or nothing
/// (`memory:`); a path stands for itself.
std::optional<std::string> local_path(const std::string& location);

/// Opens the repository a command reads. It must exist: a missing folder or database file is an
/// error, never created. A session file, an unknown scheme or a bad URL: ToolError naming the
/// location (and, for a scheme, the schemes known).
AnyRepository open_source_repository(const std::string& location);

/// Opens the repository a copy writes to, created when missing. A session file: ToolError.
AnyRepository open_target_repository(const std::string& location);

/// True when two locations name the same repository: the same scheme (a folder and `jsonl:`
/// alike) and the same file or folder (same device and inode, whatever the spelling), or the same
/// text for a URL that names no local path. Two `memory:` repositories are never the same.
bool same_repository(const std::string& a, const std::string& b);

/// Runs a library call and turns its SessionError into a ToolError (exit 2) with its code.
template <class F>
decltype(auto) library_call(F&& f) {
    try {
        return f();
    } catch (const SessionError& e) {
        throw ToolError(e.what(), exit_failure, e.code());
    }
}

}  // namespace agentcore::tool

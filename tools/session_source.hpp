#pragma once
// Which session a reading command (info, tree, context, verify, export) works on: a session file,
// or a session of a repository named with its id — `agentcore info sqlite:sessions.db ID`,
// `agentcore tree ~/.agent/sessions ID`. A session of a JSONL folder is read as its file (so that
// verify reports its lines and a pi file of an older format opens); any other repository's
// session through open_repository, read-only.

#include "repository.hpp"
#include "session_file.hpp"

#include <agentcore/any_repo.hpp>

#include <optional>
#include <string>
#include <utility>

namespace agentcore::tool {

/// A command's SOURCE and SESSION arguments.
struct SessionSource {
    std::string location;                ///< a session file, a repository folder or a URL
    std::optional<std::string> session;  ///< the session's id, for a repository
};

/// A SessionSource resolved to what is opened.
struct ResolvedSource {
    std::string file;  ///< the session file (a file, or a JSONL folder's session)
    std::optional<AnyRepository> repository;  ///< else the repository, opened
    std::string url;                          ///< its URL
    std::string session;                      ///< and the session's id
    std::string shown;        ///< how messages name the session: its file, or "URL (session ID)"
    std::string stored_path;  ///< the local file the session lives in (empty when none)
};

/// Checks the arguments and finds the session: a file given with an id, a repository without
/// one, an unknown session in a folder, a missing repository or an unknown scheme: ToolError
/// (with the library's code where it has one).
ResolvedSource resolve_source(const SessionSource& source);

/// Opens the resolved session read-only and returns `command(session, info)` as with_session
/// does for a file; a repository's session is a Session<AnyStorage>, its FileInfo names it and
/// its repository. Strict or lenient as with_session for files (a repository has no lines to
/// skip: a stored entry it cannot read fails the command).
template <class Command>
int with_session(const ResolvedSource& source, bool lenient, Command&& command) {
    if (!source.repository)
        return with_session(source.file, lenient, std::forward<Command>(command));
    try {
        const Session<AnyStorage> session = open_read_only(*source.repository, source.session);
        FileInfo info;
        info.path = source.shown;
        info.repository = source.url;
        info.dialect = session.storage().dialect();
        return command(session, std::as_const(info));
    } catch (const SessionError& e) {
        throw ToolError(e.what(), exit_failure, e.code());
    }
}

}  // namespace agentcore::tool

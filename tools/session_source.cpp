#include "session_source.hpp"

#include <agentcore/jsonl/jsonl_repo.hpp>

namespace agentcore::tool {

ResolvedSource resolve_source(const SessionSource& source) {
    const std::string& location = source.location;
    ResolvedSource out;
    if (location_kind(location) == LocationKind::file) {
        if (source.session)
            throw ToolError(
                "'" + location +
                "': a session id goes with a repository (a folder of session files, or " +
                "a URL such as sqlite:sessions.db), and this is no folder: give the session file "
                "alone");
        out.file = location;
        out.shown = location;
        out.stored_path = location;
        return out;
    }
    if (!source.session) {
        // A folder keeps the message of a file that is not a session, which it was before
        // folders were repositories.
        const std::string what =
            location_kind(location) == LocationKind::folder
                ? "not a session file: it is a folder (only regular files are sessions); "
                : "";
        throw ToolError("'" + location + "': " + what +
                        "a repository holds many sessions: name one after it, `" + location +
                        " SESSION` (`agentcore ls " + location + "` lists them)");
    }
    const std::string& id = *source.session;
    if (const auto folder = jsonl_folder(location)) {
        open_source_repository(location);  // refuses a missing folder
        const auto path = library_call([&] { return JsonlSessionRepo(*folder).find_path(id); });
        if (!path)
            throw ToolError("session '" + id + "' not found in '" + location + "'", exit_failure,
                            ErrorCode::not_found);
        out.file = *path;
        out.shown = *path;
        out.stored_path = *path;
        return out;
    }
    out.repository = open_source_repository(location);
    out.url = location;
    out.session = id;
    out.shown = location + " (session " + id + ")";
    out.stored_path = local_path(location).value_or("");
    return out;
}

}  // namespace agentcore::tool

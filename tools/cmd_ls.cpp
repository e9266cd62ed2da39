// `agentcore ls [ROOT]`: the sessions of a repository, newest first. A folder's session files are
// each opened (read-only) for their name and message count, and the ones that cannot be read are
// reported; any other repository (a URL) is listed by its own `list` and each session opened
// read-only through open_repository.

#include "cli_common.hpp"
#include "commands.hpp"
#include "preview.hpp"
#include "progress.hpp"
#include "repository.hpp"
#include "session_file.hpp"

#include <agentcore/jsonl/jsonl_repo.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace agentcore::tool {

namespace {

struct Listed {
    SessionListing listing;
    std::optional<std::string> name;
    std::optional<std::size_t>
        message_count;  ///< none when the file could not be read past its header
    bool sized = true;  ///< false: kept in a database, not a file of its own
};

std::string pad(std::string text, std::size_t width) {
    text.resize(std::max(text.size(), width), ' ');
    return text;
}

std::string pad_left(const std::string& text, std::size_t width) {
    return std::string(width - std::min(width, text.size()), ' ') + text;
}

// Fills `listing` from the file's header alone (for a file the storage could not open); false
// when the header cannot be read either.
bool listed_from_header(SessionListing& listing) {
    try {
        const auto line = header_line(listing.path);
        if (!line) return false;
        listing.header = decode_header(*line, &listing.dialect);
        std::error_code ec;
        listing.file_size = std::filesystem::file_size(listing.path, ec);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

// The sessions of a folder of session files, each read from its file.
int list_folder(const std::string& root, const LsOptions& options, std::vector<Listed>& sessions) {
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec))
        throw ToolError(root + ": not a sessions folder (" +
                        (ec ? ec.message() : "not a directory") + ")");

    // Every session file is opened (read-only, without decoding its messages) for its header,
    // name and message count. Only regular files are sessions: a FIFO or a device with a
    // session's name is skipped and reported, never read.
    JsonlSessionRepo repo(root);
    std::vector<std::string> paths;
    const std::string folder =
        options.cwd ? JsonlSessionRepo::folder_name(*options.cwd) : std::string();
    repo.for_each_session_file(
        [&](const std::string& path, std::string_view) { paths.push_back(path); },
        options.cwd ? &folder : nullptr);
    int exit_code = exit_ok;
    sessions.reserve(paths.size());
    Progress progress("reading " + root, paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) {
        progress.update(i);
        Listed listed{{}, std::nullopt, std::nullopt, true};
        listed.listing.path = paths[i];
        try {
            with_session(paths[i], /*lenient=*/true,
                         [&](const auto& session, const FileInfo& file) {
                             const auto& storage = session.storage();
                             listed.listing.header = storage.metadata();
                             listed.listing.dialect = file.dialect;
                             listed.listing.file_size = file.file_size;
                             listed.name = storage.get_session_name();
                             listed.message_count = storage.get_session_stats().message_count;
                             return exit_ok;
                         });
        } catch (const ToolError& e) {
            // Removed since its folder was read (another process's remove): gone, not a problem.
            if (e.library_code() == ErrorCode::not_found) continue;
            progress.finish();
            exit_code = exit_problems;
            // A valid header with an unreadable body is listed without its count.
            if (!listed_from_header(listed.listing)) {
                std::cerr << "agentcore: skipped " << escaped(e.what()) << "\n";
                continue;
            }
            std::cerr << "agentcore: " << escaped(e.what()) << "\n";
        }
        if (options.cwd && listed.listing.header.cwd != *options.cwd) continue;
        sessions.push_back(std::move(listed));
    }
    return exit_code;
}

// The sessions of any other repository: its listing, and each session opened read-only for its
// name and message count.
int list_repository(const std::string& url, const LsOptions& options,
                    std::vector<Listed>& sessions) {
    const AnyRepository repo = open_source_repository(url);
    ListOptions list_options;
    list_options.cwd = options.cwd;
    const SessionList listed = library_call([&] { return list(repo, list_options); });
    int exit_code = exit_ok;
    for (const auto& problem : listed.problems) {
        std::cerr << "agentcore: skipped " << escaped(problem.path) << ": "
                  << escaped(problem.reason) << "\n";
        exit_code = exit_problems;
    }
    Progress progress("reading " + url, listed.sessions.size());
    for (std::size_t i = 0; i < listed.sessions.size(); ++i) {
        progress.update(i);
        Listed one{listed.sessions[i], std::nullopt, std::nullopt,
                   listed.sessions[i].file_size != 0};
        try {
            const auto session = open_read_only(repo, one.listing.header.id);
            one.name = session.storage().get_session_name();
            one.message_count = session.storage().get_session_stats().message_count;
        } catch (const SessionError& e) {
            if (e.code() == ErrorCode::not_found) continue;  // removed since it was listed
            progress.finish();
            exit_code = exit_problems;
            std::cerr << "agentcore: " << escaped(e.what()) << "\n";
        }
        sessions.push_back(std::move(one));
    }
    return exit_code;
}

}  // namespace

int run_ls(const LsOptions& options) {
    std::vector<Listed> sessions;
    const auto folder = jsonl_folder(options.root);
    const int exit_code = folder || location_kind(options.root) != LocationKind::repository
                              ? list_folder(folder.value_or(options.root), options, sessions)
                              : list_repository(options.root, options, sessions);
    // Newest first, as the library's list orders them.
    std::stable_sort(sessions.begin(), sessions.end(), [](const Listed& a, const Listed& b) {
        const SessionHeader& x = a.listing.header;
        const SessionHeader& y = b.listing.header;
        return x.timestamp != y.timestamp ? x.timestamp > y.timestamp : x.id > y.id;
    });

    if (options.json) {
        Json out = Json::array();
        for (const auto& s : sessions)
            out.push_back({{"id", s.listing.header.id},
                           {"created", s.listing.header.timestamp},
                           {"cwd", s.listing.header.cwd},
                           {"name", s.name ? Json(*s.name) : Json()},
                           {"message_count", s.message_count ? Json(*s.message_count) : Json()},
                           {"size", s.sized ? Json(s.listing.file_size) : Json()},
                           {"dialect", dialect_name(s.listing.dialect)},
                           {"path", s.listing.path}});
        std::cout << pretty_json(out);
        return exit_code;
    }
    std::size_t id_width = 2;
    for (const auto& s : sessions)
        id_width = std::max(id_width, escaped(s.listing.header.id, 128).size());
    std::cout << pad("ID", id_width) << "  " << pad("CREATED", 24) << "  " << pad_left("MSGS", 5)
              << "  " << pad_left("SIZE", 10) << "  NAME\n";
    for (const auto& s : sessions) {
        const std::string count = s.message_count ? std::to_string(*s.message_count) : "?";
        std::string line = pad(escaped(s.listing.header.id, 128), id_width) + "  " +
                           pad(escaped(s.listing.header.timestamp, 24), 24) + "  " +
                           pad_left(count, 5) + "  " +
                           pad_left(s.sized ? format_size(s.listing.file_size) : "-", 10) + "  " +
                           escaped(s.name.value_or(""), 60);
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::cout << line << "\n";
    }
    return exit_code;
}

}  // namespace agentcore::tool

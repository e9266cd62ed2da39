// `agentcore ls [ROOT]`: the sessions of a repository, newest first, with their summaries (name,
// message count, entries, last activity) from the library's list. A folder's session files that
// it cannot summarise are opened leniently here and the ones that cannot be read are reported.

#include "cli_common.hpp"
#include "commands.hpp"
#include "preview.hpp"
#include "repository.hpp"
#include "session_file.hpp"

#include <agentcore/jsonl/jsonl_repo.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace agentcore::tool {

namespace {

struct Listed {
    SessionListing listing;  ///< its summary: none when the file could not be read past its header
    bool sized = true;       ///< false: kept in a database, not a file of its own
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

// What the storage could not summarise, from a lenient open of its file (which drops the lines
// it cannot read and counts the rest), or from its header alone; false when even the header
// cannot be read.
bool listed_leniently(Listed& listed, int& exit_code) {
    try {
        with_session(listed.listing.path, /*lenient=*/true,
                     [&](const auto& session, const FileInfo& file) {
                         const auto& storage = session.storage();
                         listed.listing.header = storage.metadata();
                         listed.listing.dialect = file.dialect;
                         listed.listing.file_size = file.file_size;
                         listed.listing.summary = summarize(storage);
                         return exit_ok;
                     });
        return true;
    } catch (const ToolError& e) {
        // Removed since its folder was read (another process's remove): gone, not a problem.
        if (e.library_code() == ErrorCode::not_found) return false;
        exit_code = exit_problems;
        // A valid header with an unreadable body is listed without its count.
        if (!listed_from_header(listed.listing)) {
            std::cerr << "agentcore: skipped " << escaped(e.what()) << "\n";
            return false;
        }
        std::cerr << "agentcore: " << escaped(e.what()) << "\n";
        return true;
    }
}

// The sessions of a folder of session files, with the summaries the library keeps beside them
// (see list); a file it cannot summarise is opened leniently here.
int list_folder(const std::string& root, const LsOptions& options, std::vector<Listed>& sessions) {
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec))
        throw ToolError(root + ": not a sessions folder (" +
                        (ec ? ec.message() : "not a directory") + ")");
    JsonlSessionRepo repo(root);
    ListOptions list_options;
    list_options.cwd = options.cwd;
    list_options.summaries = true;
    const SessionList listed = library_call([&] { return list(repo, list_options); });
    int exit_code = exit_ok;
    // A file whose header cannot be read: what a lenient open says of it.
    for (const auto& problem : listed.problems) {
        Listed one{};
        one.listing.path = problem.path;
        if (listed_leniently(one, exit_code) &&
            (!options.cwd || one.listing.header.cwd == *options.cwd))
            sessions.push_back(std::move(one));
    }
    for (const auto& listing : listed.sessions) {
        Listed one{listing, true};
        if (!one.listing.summary && !listed_leniently(one, exit_code)) continue;
        sessions.push_back(std::move(one));
    }
    return exit_code;
}

// The sessions of any other repository, with their summaries.
int list_repository(const std::string& url, const LsOptions& options,
                    std::vector<Listed>& sessions) {
    const AnyRepository repo = open_source_repository(url);
    ListOptions list_options;
    list_options.cwd = options.cwd;
    list_options.summaries = true;
    const SessionList listed = library_call([&] { return list(repo, list_options); });
    int exit_code = exit_ok;
    for (const auto& problem : listed.problems) {
        std::cerr << "agentcore: skipped " << escaped(problem.path) << ": "
                  << escaped(problem.reason) << "\n";
        exit_code = exit_problems;
    }
    for (const auto& listing : listed.sessions) {
        Listed one{listing, listing.file_size != 0};
        if (!one.listing.summary) {
            exit_code = exit_problems;
            std::cerr << "agentcore: session '" << escaped(listing.header.id)
                      << "': its newest entry cannot be read\n";
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
        for (const auto& s : sessions) {
            const auto& sum = s.listing.summary;
            out.push_back({{"id", s.listing.header.id},
                           {"created", s.listing.header.timestamp},
                           {"cwd", s.listing.header.cwd},
                           {"name", sum && sum->name ? Json(*sum->name) : Json()},
                           {"message_count", sum ? Json(sum->stats.message_count) : Json()},
                           {"entry_count", sum ? Json(sum->entry_count) : Json()},
                           {"last_activity", sum ? Json(sum->last_activity) : Json()},
                           {"size", s.sized ? Json(s.listing.file_size) : Json()},
                           {"dialect", dialect_name(s.listing.dialect)},
                           {"path", s.listing.path}});
        }
        std::cout << pretty_json(out);
        return exit_code;
    }
    std::size_t id_width = 2;
    for (const auto& s : sessions)
        id_width = std::max(id_width, escaped(s.listing.header.id, 128).size());
    std::cout << pad("ID", id_width) << "  " << pad("CREATED", 24) << "  " << pad_left("MSGS", 5)
              << "  " << pad_left("SIZE", 10) << "  NAME\n";
    for (const auto& s : sessions) {
        const auto& sum = s.listing.summary;
        const std::string count = sum ? std::to_string(sum->stats.message_count) : "?";
        std::string line = pad(escaped(s.listing.header.id, 128), id_width) + "  " +
                           pad(escaped(s.listing.header.timestamp, 24), 24) + "  " +
                           pad_left(count, 5) + "  " +
                           pad_left(s.sized ? format_size(s.listing.file_size) : "-", 10) + "  " +
                           escaped(sum && sum->name ? *sum->name : "", 60);
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::cout << line << "\n";
    }
    return exit_code;
}

}  // namespace agentcore::tool

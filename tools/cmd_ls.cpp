// `agentcore ls [ROOT]`: the sessions of a repository root, newest first.

#include "cli_common.hpp"
#include "commands.hpp"
#include "preview.hpp"
#include "progress.hpp"
#include "session_file.hpp"

#include <agentcore/jsonl_repo.hpp>

#include <filesystem>
#include <iostream>

namespace agentcore::tool {

namespace {

struct Listed {
    SessionListing listing;
    std::optional<std::string> name;
    std::optional<std::size_t> message_count;  ///< none when the file could not be read past its header
};

std::string pad(std::string text, std::size_t width) {
    text.resize(std::max(text.size(), width), ' ');
    return text;
}

std::string pad_left(const std::string& text, std::size_t width) {
    return std::string(width - std::min(width, text.size()), ' ') + text;
}

}  // namespace

int run_ls(const LsOptions& options) {
    std::error_code ec;
    if (!std::filesystem::is_directory(options.root, ec))
        throw ToolError(options.root + ": not a sessions folder (" + (ec ? ec.message() : "not a directory") + ")");

    JsonlSessionRepo repo(options.root);
    SessionList found = list(repo, ListOptions{options.cwd});
    int exit_code = exit_ok;
    for (const auto& problem : found.problems) {
        std::cerr << "agentcore: skipped " << problem.reason << "\n";
        exit_code = exit_problems;
    }

    // The header tells neither the name nor the message count: each file is indexed (without
    // decoding its messages) for them.
    std::vector<Listed> sessions;
    sessions.reserve(found.sessions.size());
    {
        Progress progress("reading " + options.root, found.sessions.size());
        for (auto& listing : found.sessions) {
            progress.update(sessions.size());
            Listed listed{std::move(listing), std::nullopt, std::nullopt};
            try {
                with_session(listed.listing.path, /*lenient=*/true, [&](const auto& session, const FileInfo&) {
                    listed.name = session.storage().get_session_name();
                    listed.message_count = session.storage().get_session_stats().message_count;
                    return exit_ok;
                });
            } catch (const ToolError& e) {
                progress.finish();
                std::cerr << "agentcore: " << e.what() << "\n";
                exit_code = exit_problems;
            }
            sessions.push_back(std::move(listed));
        }
    }

    if (options.json) {
        Json out = Json::array();
        for (const auto& s : sessions)
            out.push_back({{"id", s.listing.header.id},
                           {"created", s.listing.header.timestamp},
                           {"cwd", s.listing.header.cwd},
                           {"name", s.name ? Json(*s.name) : Json()},
                           {"message_count", s.message_count ? Json(*s.message_count) : Json()},
                           {"size", s.listing.file_size},
                           {"dialect", dialect_name(s.listing.dialect)},
                           {"path", s.listing.path}});
        std::cout << pretty_json(out);
        return exit_code;
    }
    std::size_t id_width = 2;
    for (const auto& s : sessions) id_width = std::max(id_width, s.listing.header.id.size());
    std::cout << pad("ID", id_width) << "  " << pad("CREATED", 24) << "  " << pad_left("MSGS", 5) << "  "
              << pad_left("SIZE", 10) << "  NAME\n";
    for (const auto& s : sessions) {
        const std::string count = s.message_count ? std::to_string(*s.message_count) : "?";
        std::string line = pad(one_line(s.listing.header.id, 128), id_width) + "  " +
                           pad(one_line(s.listing.header.timestamp, 24), 24) + "  " + pad_left(count, 5) + "  " +
                           pad_left(format_size(s.listing.file_size), 10) + "  " + one_line(s.name.value_or(""), 60);
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::cout << line << "\n";
    }
    return exit_code;
}

}  // namespace agentcore::tool

// `agentcore info FILE` or `agentcore info REPOSITORY SESSION`: what a session holds, without its
// conversation text.

#include "cli_common.hpp"
#include "commands.hpp"
#include "preview.hpp"
#include "session_file.hpp"

#include <iostream>
#include <map>

namespace agentcore::tool {

int run_info(const InfoOptions& options) {
    return with_session(
        resolve_source(options.source), false, [&](const auto& session, const FileInfo& file) {
            const auto& storage = session.storage();
            const SessionHeader& header = storage.metadata();
            const SessionStats stats = storage.get_session_stats();
            const auto leaf = storage.get_leaf_id();
            const auto name = storage.get_session_name();

            std::map<std::string, std::size_t> by_type;
            for (const auto& entry : storage.get_entries({}))
                ++by_type[std::string(type_of(*entry))];

            if (options.json) {
                Json by_type_json = Json::object();
                for (const auto& [type, count] : by_type) by_type_json[type] = count;
                const bool stored_in_file = file.repository.empty();
                Json out = {{"file", stored_in_file ? Json(file.path) : Json()},
                            {"id", header.id},
                            {"created", header.timestamp},
                            {"cwd", header.cwd},
                            {"parent_session",
                             header.parent_session ? Json(*header.parent_session) : Json()},
                            {"dialect", dialect_name(file.dialect)},
                            {"version", header.version},
                            {"name", name ? Json(*name) : Json()},
                            {"leaf", leaf ? Json(*leaf) : Json()},
                            {"size", stored_in_file ? Json(file.file_size) : Json()},
                            {"entry_count", storage.entry_count()},
                            {"entries_by_type", std::move(by_type_json)},
                            {"stats",
                             {{"message_count", stats.message_count},
                              {"cached_tokens", stats.cached_tokens},
                              {"uncached_tokens", stats.uncached_tokens},
                              {"total_tokens", stats.total_tokens},
                              {"cost_total", stats.cost_total}}}};
                if (!stored_in_file) {
                    // The repository beside the file it stands for.
                    Json named = {{"file", nullptr}, {"repository", file.repository}};
                    for (auto& [key, value] : out.items())
                        if (key != "file") named[key] = std::move(value);
                    out = std::move(named);
                }
                if (!header.metadata.empty()) out["metadata"] = header.metadata;
                if (file.upgrade && file.upgrade->from_version != file.upgrade->to_version)
                    out["upgraded_from_version"] = file.upgrade->from_version;
                std::cout << pretty_json(out);
                return exit_ok;
            }

            // Header fields come from the file: shown on one line each, control characters escaped.
            auto field = [](const std::string& text) { return escaped(text, 4096); };
            if (file.repository.empty())
                std::cout << "file:      " << field(file.path) << " ("
                          << format_size(file.file_size) << ")\n";
            else
                std::cout << "repo:      " << field(file.repository) << "\n";
            std::cout << "session:   " << field(header.id) << "\n"
                      << "created:   " << field(header.timestamp) << "\n"
                      << "cwd:       " << field(header.cwd) << "\n";
            if (header.parent_session)
                std::cout << "forked:    " << field(*header.parent_session) << "\n";
            std::cout << "dialect:   " << dialect_name(file.dialect) << ", format version ";
            if (file.upgrade && file.upgrade->from_version != file.upgrade->to_version)
                std::cout << file.upgrade->from_version << " (read as " << header.version << ")\n";
            else
                std::cout << header.version << "\n";
            std::cout << "name:      " << (name ? field(*name) : std::string("(none)")) << "\n"
                      << "leaf:      " << (leaf ? field(*leaf) : std::string("(none)")) << "\n"
                      << "entries:   " << storage.entry_count() << "\n";
            for (const auto& [type, count] : by_type) {
                std::string padded = field(type);
                padded.resize(std::max<std::size_t>(padded.size(), 22), ' ');
                std::cout << "  " << padded << count << "\n";
            }
            std::cout << "messages:  " << stats.message_count << "\n"
                      << "tokens:    " << stats.total_tokens << " total (" << stats.cached_tokens
                      << " cached, " << stats.uncached_tokens << " uncached)\n"
                      << "cost:      " << format_cost(stats.cost_total) << "\n";
            return exit_ok;
        });
}

}  // namespace agentcore::tool

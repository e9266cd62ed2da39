// `agentcore export FILE -o OUT.html` (or REPOSITORY SESSION): a self-contained HTML viewer of the
// session; `--search QUERY` and `--entry ID` open it with a query's hits marked and at an entry.

#include "cli_common.hpp"
#include "commands.hpp"
#include "html_template.hpp"
#include "preview.hpp"
#include "progress.hpp"
#include "repository.hpp"
#include "session_file.hpp"

#include <agentcore/codec.hpp>
#include <agentcore/search.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace agentcore::tool {

namespace {

// JSON that may stand inside <script>: '<', '>' and '&' cannot close the element or start
// markup, and U+2028/U+2029 cannot end a line in older JavaScript parsers. These characters
// occur only inside strings, where the \u escapes mean the same.
std::string script_safe_json(const Json& value) {
    const std::string json = value.dump(-1, ' ', false, Json::error_handler_t::replace);
    std::string out;
    out.reserve(json.size() + json.size() / 16);
    for (std::size_t i = 0; i < json.size(); ++i) {
        const char c = json[i];
        if (c == '<')
            out += "\\u003c";
        else if (c == '>')
            out += "\\u003e";
        else if (c == '&')
            out += "\\u0026";
        else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
                 (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
            out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
            i += 2;
        } else
            out += c;
    }
    return out;
}

// What the page opens with: the query in its search box and the entry it shows. The folding
// tables are the library's own, so that the page's search folds letters exactly as search.hpp
// does (its script holds the rest of the folding: Greek and Cyrillic).
Json view_data(const ExportOptions& options) {
    return {{"query", options.search ? Json(*options.search) : Json()},
            {"substring", options.substring},
            {"thinking", options.thinking},
            {"entry", options.entry ? Json(*options.entry) : Json()},
            {"folding",
             {{"latin1_bases", std::string(detail::latin1_bases)},
              {"latin_a_bases", std::string(detail::latin_a_bases)}}}};
}

template <SessionStorage S>
Json session_data(const S& storage, const FileInfo& file) {
    const SessionHeader& header = storage.metadata();
    const SessionStats stats = storage.get_session_stats();
    const auto leaf = storage.get_leaf_id();
    const auto name = storage.get_session_name();
    const auto all = storage.get_entries({});
    Json entries = Json::array();
    Json labels = Json::object();
    Progress progress("exporting " + file.path, all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
        progress.update(i);
        // The page reads one spelling: native, whatever the file's dialect.
        entries.push_back(entry_to_json(*all[i], Dialect::native));
        if (auto label = storage.get_label(id_of(*all[i]))) labels[id_of(*all[i])] = *label;
    }
    return {{"session",
             {{"id", header.id},
              {"created", header.timestamp},
              {"cwd", header.cwd},
              {"parent_session", header.parent_session ? Json(*header.parent_session) : Json()},
              {"name", name ? Json(*name) : Json()},
              {"dialect", dialect_name(file.dialect)},
              {"version", header.version}}},
            {"stats",
             {{"message_count", stats.message_count},
              {"cached_tokens", stats.cached_tokens},
              {"uncached_tokens", stats.uncached_tokens},
              {"total_tokens", stats.total_tokens},
              {"cost_total", stats.cost_total}}},
            {"leaf", leaf ? Json(*leaf) : Json()},
            {"labels", std::move(labels)},
            {"entries", std::move(entries)}};
}

// Writes `content` to a temporary file beside `path` (mode 0600: conversations are private) and
// renames it into place, so that a reader never sees half a page.
void write_atomically(const std::string& path, std::string_view content) {
    const std::string temp = path + ".tmp-" + std::to_string(::getpid());
    const int fd =
        ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) throw ToolError(path + ": cannot write: " + std::strerror(errno));
    while (!content.empty()) {
        const ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = n < 0 ? errno : ENOSPC;
            ::close(fd);
            ::unlink(temp.c_str());
            throw ToolError(path + ": cannot write: " + std::strerror(err));
        }
        content.remove_prefix(static_cast<std::size_t>(n));
    }
    if (::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        throw ToolError(path + ": cannot write: " + std::strerror(err));
    }
}

}  // namespace

int run_export(const ExportOptions& options) {
    const ResolvedSource source = resolve_source(options.source);
    // A session in a database: the output must not be the database file either.
    const OutputGuard guard = guard_output(source.stored_path, options.out);
    // An invalid query stops the export as it stops `agentcore search` (invalid_query).
    if (options.search)
        library_call([&] {
            return parse_search_query(
                *options.search, options.substring ? SearchMode::substring : SearchMode::words);
        });
    return with_session(source, false, [&](const auto& session, const FileInfo& file) {
        if (options.entry && session.storage().get_entry(*options.entry) == nullptr)
            throw ToolError(source.shown + ": entry '" + *options.entry + "' not found");
        Json data = session_data(session.storage(), file);
        data["view"] = view_data(options);
        std::string page(html::page_head);
        page += script_safe_json(data);
        page += html::page_tail;

        write_atomically(options.out, page);
        std::cout << escaped(options.out) << ": " << session.storage().entry_count() << " entries, "
                  << format_size(page.size()) << "\n";
        return exit_ok;
    });
}

}  // namespace agentcore::tool

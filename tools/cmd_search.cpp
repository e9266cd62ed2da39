// `agentcore search QUERY [REPO]`: the entries of every session that match a query (the language
// of <agentcore/search.hpp>), grouped by session, best session first, each with the command that
// shows it in its branch (`agentcore context REPO SESSION --leaf ENTRY`) and the command that
// writes the session's HTML viewer opened at the hit, its terms marked (`agentcore export ...
// --search QUERY --entry ENTRY`).

#include "cli_common.hpp"
#include "commands.hpp"
#include "preview.hpp"
#include "repository.hpp"

#include <agentcore/search.hpp>

#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace agentcore::tool {

namespace {

// A word for a POSIX shell: as it is when it holds only safe characters, else single-quoted.
std::string shell_word(const std::string& word) {
    const bool plain = !word.empty() && word.find_first_not_of(
                                            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                            "0123456789_-./:+=@%,") == std::string::npos;
    if (plain) return word;
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out.push_back(c);
    }
    return out + "'";
}

// The command that shows a hit in its branch: the context up to the entry.
std::string open_command(const std::string& repo, const SearchHit& hit) {
    return "agentcore context " + shell_word(repo) + " " + shell_word(hit.session_id) + " --leaf " +
           shell_word(hit.entry_id);
}

// The command that writes the hit's session as a page opened at the hit, with the same query
// (and the options that change what it finds) in the page's search box.
std::string view_command(const SearchCommandOptions& options, const SearchHit& hit) {
    return "agentcore export " + shell_word(options.repository) + " " + shell_word(hit.session_id) +
           " --search " + shell_word(options.query) + (options.substring ? " --substring" : "") +
           (options.thinking ? " --thinking" : "") + " --entry " + shell_word(hit.entry_id) +
           " -o hit.html";
}

// The snippet with its marks shown: bold yellow on a terminal, «…» otherwise; every piece
// escaped, as everything the tool prints from a session.
std::string shown_snippet(const SearchHit& hit, const Style& style) {
    std::string out;
    std::size_t at = 0;
    const std::string_view s = hit.snippet;
    for (const auto& m : hit.marks) {
        if (m.begin < at || m.end > s.size()) continue;
        out += escaped(s.substr(at, m.begin - at));
        const std::string word = escaped(s.substr(m.begin, m.end - m.begin));
        out += style.enabled() ? style.paint("1;33", word) : "«" + word + "»";
        at = m.end;
    }
    return out + escaped(s.substr(at));
}

std::string kind_of(const SearchHit& hit) { return hit.role.empty() ? hit.entry_type : hit.role; }

std::string score_text(double score) {
    std::ostringstream out;
    out.precision(2);
    out << std::fixed << score;
    return out.str();
}

}  // namespace

int run_search(const SearchCommandOptions& options) {
    SearchOptions o;
    o.mode = options.substring ? SearchMode::substring : SearchMode::words;
    o.cwd = options.cwd;
    o.since = options.since;
    o.until = options.until;
    o.roles = options.roles;
    o.exclude_roles = options.exclude_roles;
    o.text.thinking = options.thinking;
    o.text.tool_results = !options.no_tool_results;
    o.order = options.newest ? SearchOrder::newest : SearchOrder::relevance;
    o.limit = options.limit;
    const SearchQuery query =
        library_call([&] { return parse_search_query(options.query, o.mode); });
    AnyRepository repo = open_source_repository(options.repository);
    const SearchResult result = library_call([&] { return search(repo, query, o); });

    if (options.json) {
        Json hits = Json::array();
        for (const auto& h : result.hits) {
            Json marks = Json::array();
            for (const auto& m : h.marks) marks.push_back(Json::array({m.begin, m.end}));
            hits.push_back({{"session_id", h.session_id},
                            {"session_name", h.session_name},
                            {"cwd", h.cwd},
                            {"entry_id", h.entry_id},
                            {"entry_type", h.entry_type},
                            {"role", h.role},
                            {"timestamp", h.timestamp},
                            {"seq", h.seq},
                            {"score", h.score},
                            {"snippet", h.snippet},
                            {"marks", std::move(marks)},
                            {"open", open_command(options.repository, h)},
                            {"view", view_command(options, h)}});
        }
        Json out = {{"hits", std::move(hits)}, {"more", result.next.has_value()}};
        std::cout << pretty_json(out);
        return result.hits.empty() ? exit_problems : exit_ok;
    }

    if (result.hits.empty()) {
        std::cout << "no matches\n";
        return exit_problems;
    }
    // Sessions in the order of their best hit; hits of a session in the result's order.
    std::vector<std::string> order;
    std::map<std::string, std::vector<const SearchHit*>> by_session;
    for (const auto& h : result.hits) {
        auto& group = by_session[h.session_id];
        if (group.empty()) order.push_back(h.session_id);
        group.push_back(&h);
    }
    const Style style(colours_wanted());
    for (std::size_t g = 0; g < order.size(); ++g) {
        const auto& group = by_session[order[g]];
        const SearchHit& first = *group.front();
        if (g != 0) std::cout << "\n";
        std::cout << style.paint("1", escaped(first.session_id));
        if (!first.session_name.empty()) std::cout << "  " << escaped(first.session_name, 60);
        std::cout << "  " << style.paint("2", escaped(first.cwd)) << "\n";
        for (const SearchHit* h : group) {
            std::cout << "  " << style.paint("2", escaped(h->entry_id)) << "  "
                      << style.paint("36", escaped(kind_of(*h))) << "  "
                      << style.paint("2", escaped(h->timestamp)) << "  " << score_text(h->score)
                      << "\n";
            std::cout << "    " << shown_snippet(*h, style) << "\n";
            std::cout << "    " << style.paint("2", escaped(open_command(options.repository, *h)))
                      << "\n";
            std::cout << "    " << style.paint("2", escaped(view_command(options, *h))) << "\n";
        }
    }
    if (result.next) std::cout << "\n(more matches: raise --limit, now " << options.limit << ")\n";
    return exit_ok;
}

}  // namespace agentcore::tool

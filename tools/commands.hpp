#pragma once
// The commands of the `agentcore` tool. Each returns its exit code (cli_common.hpp) and throws
// ToolError for an error that ends it.

#include "session_source.hpp"

#include <optional>
#include <string>
#include <vector>

namespace agentcore::tool {

struct LsOptions {
    std::string root;                ///< the repository: a folder of session files, or a URL
    std::optional<std::string> cwd;  ///< only sessions of this working directory
    bool json = false;
};
int run_ls(const LsOptions& options);

struct InfoOptions {
    SessionSource source;
    bool json = false;
};
int run_info(const InfoOptions& options);

/// Which entries `tree` draws.
enum class TreeFilter {
    standard,   ///< everything but the bookkeeping `label` and `leaf` entries
    all,        ///< every entry
    user_only,  ///< user messages only
    labeled,    ///< labeled entries only
};

struct TreeOptions {
    SessionSource source;
    TreeFilter filter = TreeFilter::standard;
    bool timestamps = false;
    bool fold = true;  ///< fold long linear runs into "… N more entries"
    bool json = false;
};
int run_tree(const TreeOptions& options);

struct ContextOptions {
    SessionSource source;
    std::optional<std::string> leaf;  ///< build at this entry instead of the session's leaf
    bool json = false;
};
int run_context(const ContextOptions& options);

struct VerifyOptions {
    SessionSource source;
    bool json = false;
};
int run_verify(const VerifyOptions& options);

struct RepairOptions {
    std::string file;
};
int run_repair(const RepairOptions& options);

struct ConvertOptions {
    std::string file;
    std::string to;   ///< "native" or "pi"
    std::string out;  ///< replaced atomically if it exists
};
int run_convert(const ConvertOptions& options);

struct ExportOptions {
    SessionSource source;
    std::string out;
    std::optional<std::string> search;  ///< a query the page opens with, its hits marked
    bool substring = false;             ///< the query is in substring mode
    bool thinking = false;              ///< the page's search looks at thinking too
    std::optional<std::string> entry;   ///< the entry the page opens at (with a query: its hit)
};
int run_export(const ExportOptions& options);

struct CopyOptions {
    std::string source;                 ///< the repository copied from
    std::string destination;            ///< the repository copied into (created when missing)
    std::vector<std::string> sessions;  ///< the ids to copy; empty: every session
};
int run_copy(const CopyOptions& options);

struct SearchCommandOptions {
    std::string query;
    std::string repository;  ///< a folder of session files or a URL
    std::optional<std::string> cwd;
    std::optional<std::string> since;  ///< ISO 8601 UTC, inclusive
    std::optional<std::string> until;  ///< ISO 8601 UTC, exclusive
    std::vector<std::string> roles;    ///< only messages of these roles
    std::vector<std::string> exclude_roles;
    bool thinking = false;         ///< search the assistant's thinking too
    bool no_tool_results = false;  ///< leave the output of tools out of the text searched
    bool substring = false;        ///< substring mode instead of words
    bool newest = false;           ///< newest first instead of best first
    std::size_t limit = 20;
    bool json = false;
};
/// Exit 0 with matches, 1 without, 2 for an invalid query or an unreadable repository.
int run_search(const SearchCommandOptions& options);

}  // namespace agentcore::tool

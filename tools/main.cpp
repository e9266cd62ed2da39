// agentcore: inspect, draw, check, repair, convert and export agent sessions (files of the native
// and pi dialects, and sessions of any repository open_repository opens), copy sessions between
// repositories, and search them. Arguments and help come from CLI11.

#include "cli_common.hpp"
#include "commands.hpp"
#include "preview.hpp"

#include <agentcore/error.hpp>
#include <agentcore/version.hpp>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>

using namespace agentcore::tool;

namespace {

std::string default_root() {
    const char* env = std::getenv("AGENTCORE_SESSIONS");
    return env != nullptr && *env != '\0' ? std::string(env) : std::string("./sessions");
}

constexpr const char* source_help =
    "Session file; or a repository: a folder of session files, or a URL (sqlite:PATH, jsonl:PATH, "
    "...)";
constexpr const char* session_help = "The session's id, when SOURCE is a repository";

// SOURCE [SESSION]: a session file, or a repository and the id of one of its sessions (the id may
// also be given as --session ID, as `copy` takes it).
void add_source(CLI::App* command, SessionSource& source) {
    command->add_option("SOURCE", source.location, source_help)->required();
    command->add_option("SESSION,--session", source.session, session_help);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "Inspect, check, convert, export and copy agent sessions (native and pi JSONL files, "
        "databases)",
        "agentcore"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string(agentcore::version_string));
    app.footer(
        "Exit codes: 0 ok, 1 problems found (or a copy that would replace a different session), "
        "2 usage or I/O error.");
    std::function<int()> command;

    LsOptions ls;
    ls.root = default_root();
    auto* ls_cmd =
        app.add_subcommand("ls", "List sessions, newest first: id, created, name, messages, size");
    ls_cmd->add_option("ROOT", ls.root,
                       "Repository: a folder of session files or a URL such as sqlite:sessions.db "
                       "(default: $AGENTCORE_SESSIONS or ./sessions)");
    ls_cmd->add_option("--cwd", ls.cwd, "Only sessions of this working directory");
    ls_cmd->add_flag("--json", ls.json, "JSON output");
    ls_cmd->callback([&] { command = [&] { return run_ls(ls); }; });

    InfoOptions info;
    auto* info_cmd =
        app.add_subcommand("info", "Header, dialect, entries by type, leaf, name, tokens and cost");
    add_source(info_cmd, info.source);
    info_cmd->add_flag("--json", info.json, "JSON output");
    info_cmd->callback([&] { command = [&] { return run_info(info); }; });

    TreeOptions tree;
    auto* tree_cmd = app.add_subcommand(
        "tree", "Draw the session tree; the leaf and the path to it are marked (●)");
    add_source(tree_cmd, tree.source);
    auto* all = tree_cmd->add_flag_callback(
        "--all", [&] { tree.filter = TreeFilter::all; }, "Every entry, labels and leaf moves too");
    auto* user_only = tree_cmd->add_flag_callback(
        "--user-only", [&] { tree.filter = TreeFilter::user_only; }, "User messages only");
    auto* labeled = tree_cmd->add_flag_callback(
        "--labeled", [&] { tree.filter = TreeFilter::labeled; }, "Labeled entries only");
    all->excludes(user_only)->excludes(labeled);
    user_only->excludes(labeled);
    tree_cmd->add_flag("--timestamps", tree.timestamps, "Show each entry's timestamp");
    tree_cmd->add_flag_callback(
        "--no-fold", [&] { tree.fold = false; }, "Do not fold long linear runs");
    tree_cmd->add_flag("--json", tree.json, "JSON output (a flat list of the drawn entries)");
    tree_cmd->callback([&] { command = [&] { return run_tree(tree); }; });

    ContextOptions context;
    auto* context_cmd =
        app.add_subcommand("context", "The context build_context returns for the leaf (or --leaf)");
    add_source(context_cmd, context.source);
    context_cmd->add_option("--leaf", context.leaf,
                            "Build the context of the branch that ends at this entry id");
    context_cmd->add_flag("--json", context.json, "JSON output, messages in the file's dialect");
    context_cmd->callback([&] { command = [&] { return run_context(context); }; });

    VerifyOptions verify;
    auto* verify_cmd =
        app.add_subcommand("verify", "Check a session; exit 1 when problems are found");
    add_source(verify_cmd, verify.source);
    verify_cmd->add_flag("--json", verify.json, "JSON output");
    verify_cmd->callback([&] { command = [&] { return run_verify(verify); }; });

    RepairOptions repair;
    auto* repair_cmd = app.add_subcommand(
        "repair",
        "Rewrite a damaged session file without its bad lines, atomically; the original is kept");
    repair_cmd->add_option("FILE", repair.file, "Session file")->required();
    repair_cmd->callback([&] { command = [&] { return run_repair(repair); }; });

    ConvertOptions convert;
    auto* convert_cmd = app.add_subcommand("convert", "Write a session in the other dialect");
    convert_cmd->add_option("FILE", convert.file, "Session file")->required();
    convert_cmd->add_option("--to", convert.to, "Target dialect")
        ->required()
        ->check(CLI::IsMember({"native", "pi"}));
    convert_cmd
        ->add_option("-o,--output", convert.out, "Output file (replaced atomically if it exists)")
        ->required();
    convert_cmd->callback([&] { command = [&] { return run_convert(convert); }; });

    ExportOptions exp;
    auto* export_cmd =
        app.add_subcommand("export", "Write a self-contained HTML viewer of the session");
    add_source(export_cmd, exp.source);
    export_cmd->add_option("-o,--output", exp.out, "Output .html file")->required();
    auto* export_search = export_cmd->add_option(
        "--search", exp.search,
        "Open the page with this query in its search box, the hits marked (the language of "
        "`agentcore search`)");
    export_cmd->add_flag("--substring", exp.substring, "The query is in substring mode")
        ->needs(export_search);
    export_cmd->add_flag("--thinking", exp.thinking, "The page's search looks at thinking too");
    export_cmd->add_option("--entry", exp.entry,
                           "Open the page at this entry's branch (with --search: at its hit)");
    export_cmd->callback([&] { command = [&] { return run_export(exp); }; });

    CopyOptions copy;
    auto* copy_cmd = app.add_subcommand("copy",
                                        "Copy sessions between repositories, as they are; "
                                        "identical ones already there are skipped");
    copy_cmd
        ->add_option("SRC", copy.source,
                     "Repository to copy from: a folder of session files or a URL")
        ->required();
    copy_cmd->add_option("DST", copy.destination, "Repository to copy into (created when missing)")
        ->required();
    copy_cmd->add_option("-s,--session", copy.sessions,
                         "Copy only this session (repeatable; default: every session)");
    copy_cmd->callback([&] { command = [&] { return run_copy(copy); }; });

    SearchCommandOptions find;
    find.repository = default_root();
    auto* search_cmd = app.add_subcommand(
        "search",
        "Find entries in every session: words, \"phrases\", prefix*, -excluded (--substring for "
        "identifiers and paths); hits grouped by session, each with the command that shows it");
    search_cmd->add_option("QUERY", find.query, "The query")->required();
    search_cmd->add_option("REPO", find.repository,
                           "Repository: a folder of session files or a URL such as "
                           "sqlite:sessions.db (default: $AGENTCORE_SESSIONS or ./sessions)");
    search_cmd->add_option("--cwd", find.cwd, "Only sessions of this working directory");
    search_cmd->add_option("--since", find.since,
                           "Only entries at or after this UTC time (2026-12-02, "
                           "2026-12-02T07:43, ...)");
    search_cmd->add_option("--until", find.until, "Only entries before this UTC time");
    search_cmd->add_option("--role", find.roles,
                           "Only messages of this role: user, assistant, tool_result, ... "
                           "(repeatable)");
    search_cmd->add_option("--exclude-role", find.exclude_roles,
                           "Never messages of this role (repeatable)");
    search_cmd->add_flag("--thinking", find.thinking, "Search the assistant's thinking too");
    search_cmd->add_flag("--no-tool-results", find.no_tool_results,
                         "Leave the output of tools and shell commands out");
    search_cmd->add_flag("--substring", find.substring,
                         "Each term is a substring (getUserById, src/auth/login.cpp)");
    search_cmd->add_flag("--newest", find.newest, "Newest first instead of best first");
    search_cmd->add_option("--limit", find.limit, "At most this many hits (default 20)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
    search_cmd->add_flag("--json", find.json, "JSON output");
    search_cmd->callback([&] { command = [&] { return run_search(find); }; });

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? exit_ok : exit_failure;
    }
    try {
        return command ? command() : exit_failure;
    } catch (const ToolError& e) {
        // Messages name ids and paths from the files: escaped like everything else printed.
        std::cerr << "agentcore: " << escaped(e.what()) << "\n";
        return e.exit_code();
    } catch (const agentcore::SessionError& e) {
        std::cerr << "agentcore: " << escaped(e.what()) << "\n";
        return exit_failure;
    } catch (const std::exception& e) {
        std::cerr << "agentcore: " << escaped(e.what()) << "\n";
        return exit_failure;
    }
}

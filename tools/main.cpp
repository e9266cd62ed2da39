// agentcore: inspect, draw, check, repair, convert and export agent session files (native and
// pi dialects). Arguments and help come from CLI11.

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

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Inspect, check, convert and export agent session files (native and pi JSONL)", "agentcore"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string(agentcore::version_string));
    app.footer("Exit codes: 0 ok, 1 problems found, 2 usage or I/O error.");
    std::function<int()> command;

    LsOptions ls;
    ls.root = default_root();
    auto* ls_cmd = app.add_subcommand("ls", "List sessions, newest first: id, created, name, messages, size");
    ls_cmd->add_option("ROOT", ls.root, "Sessions folder (default: $AGENTCORE_SESSIONS or ./sessions)");
    ls_cmd->add_option("--cwd", ls.cwd, "Only sessions of this working directory");
    ls_cmd->add_flag("--json", ls.json, "JSON output");
    ls_cmd->callback([&] { command = [&] { return run_ls(ls); }; });

    InfoOptions info;
    auto* info_cmd = app.add_subcommand("info", "Header, dialect, entries by type, leaf, name, tokens and cost");
    info_cmd->add_option("FILE", info.file, "Session file")->required();
    info_cmd->add_flag("--json", info.json, "JSON output");
    info_cmd->callback([&] { command = [&] { return run_info(info); }; });

    TreeOptions tree;
    auto* tree_cmd = app.add_subcommand("tree", "Draw the session tree; the leaf and the path to it are marked (●)");
    tree_cmd->add_option("FILE", tree.file, "Session file")->required();
    auto* all = tree_cmd->add_flag_callback("--all", [&] { tree.filter = TreeFilter::all; },
                                            "Every entry, labels and leaf moves too");
    auto* user_only = tree_cmd->add_flag_callback("--user-only", [&] { tree.filter = TreeFilter::user_only; },
                                                  "User messages only");
    auto* labeled = tree_cmd->add_flag_callback("--labeled", [&] { tree.filter = TreeFilter::labeled; },
                                                "Labeled entries only");
    all->excludes(user_only)->excludes(labeled);
    user_only->excludes(labeled);
    tree_cmd->add_flag("--timestamps", tree.timestamps, "Show each entry's timestamp");
    tree_cmd->add_flag_callback("--no-fold", [&] { tree.fold = false; }, "Do not fold long linear runs");
    tree_cmd->add_flag("--json", tree.json, "JSON output (a flat list of the drawn entries)");
    tree_cmd->callback([&] { command = [&] { return run_tree(tree); }; });

    ContextOptions context;
    auto* context_cmd = app.add_subcommand("context", "The context build_context returns for the leaf (or --leaf)");
    context_cmd->add_option("FILE", context.file, "Session file")->required();
    context_cmd->add_option("--leaf", context.leaf, "Build the context of the branch that ends at this entry id");
    context_cmd->add_flag("--json", context.json, "JSON output, messages in the file's dialect");
    context_cmd->callback([&] { command = [&] { return run_context(context); }; });

    VerifyOptions verify;
    auto* verify_cmd = app.add_subcommand("verify", "Check a session file; exit 1 when problems are found");
    verify_cmd->add_option("FILE", verify.file, "Session file")->required();
    verify_cmd->add_flag("--json", verify.json, "JSON output");
    verify_cmd->callback([&] { command = [&] { return run_verify(verify); }; });

    RepairOptions repair;
    auto* repair_cmd = app.add_subcommand(
        "repair", "Rewrite a damaged session file without its bad lines, atomically; the original is kept");
    repair_cmd->add_option("FILE", repair.file, "Session file")->required();
    repair_cmd->callback([&] { command = [&] { return run_repair(repair); }; });

    ConvertOptions convert;
    auto* convert_cmd = app.add_subcommand("convert", "Write a session in the other dialect");
    convert_cmd->add_option("FILE", convert.file, "Session file")->required();
    convert_cmd->add_option("--to", convert.to, "Target dialect")->required()->check(CLI::IsMember({"native", "pi"}));
    convert_cmd->add_option("-o,--output", convert.out, "Output file (replaced atomically if it exists)")->required();
    convert_cmd->callback([&] { command = [&] { return run_convert(convert); }; });

    ExportOptions exp;
    auto* export_cmd = app.add_subcommand("export", "Write a self-contained HTML viewer of the session");
    export_cmd->add_option("FILE", exp.file, "Session file")->required();
    export_cmd->add_option("-o,--output", exp.out, "Output .html file")->required();
    export_cmd->callback([&] { command = [&] { return run_export(exp); }; });

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

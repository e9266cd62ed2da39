// `agentcore verify`, `repair` and `convert`: checking a session (a file, or a session of a
// repository), rewriting a damaged file, and writing a session file in the other dialect.

#include "cli_common.hpp"
#include "commands.hpp"
#include "preview.hpp"
#include "session_file.hpp"

#include <agentcore/verify.hpp>

#include <iostream>

namespace agentcore::tool {

namespace {

// ":LINE" after a file name, or nothing for findings not tied to a line.
std::string where(std::size_t line) {
    std::string out;
    if (line != 0) {
        out += ':';
        out += std::to_string(line);
    }
    return out;
}

struct Problem {
    std::size_t line = 0;  ///< 0: not tied to one line
    std::string reason;
};

}  // namespace

int run_verify(const VerifyOptions& options) {
    const ResolvedSource source = resolve_source(options.source);
    const std::string& shown = source.shown;
    std::vector<Problem> problems;
    std::size_t entry_count = 0;
    try {
        with_session(source, /*lenient=*/true, [&](const auto& session, const FileInfo& file) {
            entry_count = session.storage().entry_count();
            for (const auto& p : file.problems) problems.push_back({p.line, p.reason});
            if (file.torn_tail)
                problems.push_back({0, "torn last line (an append that was never completed)"});
            for (const auto& issue : verify(session).issues)
                problems.push_back(
                    {0, "entry '" + issue.entry_id + "': " + std::string(to_string(issue.kind)) +
                            (issue.detail.empty() ? std::string() : ": " + issue.detail)});
            return exit_ok;
        });
    } catch (const ToolError& e) {
        // A file that is not a session at all is a finding; one that cannot be read is an error.
        const auto code = e.library_code();
        if (code != ErrorCode::invalid_session && code != ErrorCode::invalid_entry &&
            code != ErrorCode::already_exists)
            throw;
        problems.push_back({0, e.what()});
    }

    if (options.json) {
        Json list = Json::array();
        for (const auto& p : problems)
            list.push_back({{"line", p.line == 0 ? Json() : Json(p.line)}, {"reason", p.reason}});
        std::cout << pretty_json({{"file", shown},
                                  {"ok", problems.empty()},
                                  {"entries", entry_count},
                                  {"problems", std::move(list)}});
    } else if (problems.empty()) {
        std::cout << escaped(shown) << ": ok (" << entry_count << " entries)\n";
    } else {
        for (const auto& p : problems)
            std::cout << escaped(shown) << where(p.line) << ": " << escaped(p.reason) << "\n";
        std::cout << escaped(shown) << ": " << problems.size()
                  << (problems.size() == 1 ? " problem" : " problems") << "\n";
    }
    return problems.empty() ? exit_ok : exit_problems;
}

int run_repair(const RepairOptions& options) {
    require_regular_file(options.file);
    RepairReport report;
    try {
        report = JsonlSessionStorage::repair(options.file);
    } catch (const SessionError& e) {
        throw ToolError(e.what());
    }
    if (!report.changed) {
        std::cout << escaped(options.file) << ": clean, nothing to repair (" << report.entries_kept
                  << " entries)\n";
        return exit_ok;
    }
    for (const auto& p : report.problems)
        std::cout << escaped(options.file) << ":" << p.line << ": dropped: " << escaped(p.reason)
                  << "\n";
    std::cout << escaped(options.file) << ": repaired, " << report.entries_kept
              << " entries kept\n";
    if (report.backup_path)
        std::cout << "  original kept as " << escaped(*report.backup_path) << "\n";
    if (report.quarantine_path)
        std::cout << "  dropped bytes in " << escaped(*report.quarantine_path) << "\n";
    return exit_ok;
}

int run_convert(const ConvertOptions& options) {
    require_regular_file(options.file);
    const OutputGuard guard = guard_output(options.file, options.out);
    ConvertReport report;
    try {
        report =
            convert(options.file, options.to == "pi" ? Dialect::pi : Dialect::native, options.out);
    } catch (const SessionError& e) {
        throw ToolError(e.what());
    }
    std::cout << escaped(options.out) << ": " << report.entry_count << " entries written in the "
              << dialect_name(report.to) << " dialect (from " << dialect_name(report.from) << ")\n";
    if (report.migration.from_version != report.migration.to_version)
        std::cout << "  upgraded from format version " << report.migration.from_version << " to "
                  << report.migration.to_version << "\n";
    for (const auto& note : report.migration.notes)
        std::cout << "  " << escaped(options.file) << where(note.line) << ": "
                  << to_string(note.kind) << (note.detail.empty() ? "" : ": ")
                  << escaped(note.detail) << "\n";
    return exit_ok;
}

}  // namespace agentcore::tool

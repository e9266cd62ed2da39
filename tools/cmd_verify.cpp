// `agentcore verify`, `repair` and `convert`: checking a session file, rewriting a damaged one,
// and writing a session in the other dialect.

#include "cli_common.hpp"
#include "commands.hpp"
#include "progress.hpp"
#include "session_file.hpp"

#include <iostream>
#include <unordered_set>

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

// References between entries that the file format allows but a sound session never holds.
template <SessionStorage S>
void check_references(const S& storage, const std::string& path, std::vector<Problem>& problems) {
    const auto entries = storage.get_entries({});
    Progress progress("verifying " + path, entries.size());
    auto missing = [&](const std::string& id, const char* what, const std::string& target) {
        problems.push_back({0, "entry '" + id + "': " + what + " '" + target + "' does not exist"});
    };
    for (std::size_t i = 0; i < entries.size(); ++i) {
        progress.update(i);
        const SessionTreeEntry& entry = *entries[i];
        const std::string& id = id_of(entry);
        if (const auto* label = std::get_if<LabelEntry>(&entry)) {
            if (!storage.get_entry(label->target_id)) missing(id, "label target", label->target_id);
        } else if (const auto* leaf = std::get_if<LeafEntry>(&entry)) {
            if (leaf->target_id && !storage.get_entry(*leaf->target_id)) missing(id, "leaf target", *leaf->target_id);
        } else if (const auto* summary = std::get_if<BranchSummaryEntry>(&entry)) {
            if (summary->from_id != "root" && !storage.get_entry(summary->from_id))
                missing(id, "branch summary from_id", summary->from_id);
        } else if (const auto* compaction = std::get_if<CompactionEntry>(&entry)) {
            if (compaction->first_kept_entry_id) {
                const auto line_of_descent = ancestry(storage, id);
                const std::unordered_set<std::string> ancestors(line_of_descent.begin(), line_of_descent.end());
                if (ancestors.count(*compaction->first_kept_entry_id) == 0)
                    problems.push_back({0, "entry '" + id + "': compaction's first kept entry '" +
                                               *compaction->first_kept_entry_id + "' is not on its path"});
            }
        }
    }
}

}  // namespace

int run_verify(const VerifyOptions& options) {
    std::vector<Problem> problems;
    std::size_t entry_count = 0;
    try {
        with_session(options.file, /*lenient=*/true, [&](const auto& session, const FileInfo& file) {
            entry_count = session.storage().entry_count();
            for (const auto& p : file.problems) problems.push_back({p.line, p.reason});
            if (file.torn_tail) problems.push_back({0, "torn last line (an append that was never completed)"});
            check_references(session.storage(), file.path, problems);
            return exit_ok;
        });
    } catch (const ToolError& e) {
        // A file that is not a session at all is a finding; one that cannot be read is an error.
        const auto code = e.library_code();
        if (code != ErrorCode::invalid_session && code != ErrorCode::invalid_entry && code != ErrorCode::already_exists)
            throw;
        problems.push_back({0, e.what()});
    }

    if (options.json) {
        Json list = Json::array();
        for (const auto& p : problems)
            list.push_back({{"line", p.line == 0 ? Json() : Json(p.line)}, {"reason", p.reason}});
        std::cout << pretty_json({{"file", options.file},
                                  {"ok", problems.empty()},
                                  {"entries", entry_count},
                                  {"problems", std::move(list)}});
    } else if (problems.empty()) {
        std::cout << options.file << ": ok (" << entry_count << " entries)\n";
    } else {
        for (const auto& p : problems)
            std::cout << options.file << where(p.line) << ": " << p.reason
                      << "\n";
        std::cout << options.file << ": " << problems.size() << (problems.size() == 1 ? " problem" : " problems")
                  << "\n";
    }
    return problems.empty() ? exit_ok : exit_problems;
}

int run_repair(const RepairOptions& options) {
    RepairReport report;
    try {
        report = JsonlSessionStorage::repair(options.file);
    } catch (const SessionError& e) {
        throw ToolError(e.what());
    }
    if (!report.changed) {
        std::cout << options.file << ": clean, nothing to repair (" << report.entries_kept << " entries)\n";
        return exit_ok;
    }
    for (const auto& p : report.problems)
        std::cout << options.file << ":" << p.line << ": dropped: " << p.reason << "\n";
    std::cout << options.file << ": repaired, " << report.entries_kept << " entries kept\n";
    if (report.backup_path) std::cout << "  original kept as " << *report.backup_path << "\n";
    if (report.quarantine_path) std::cout << "  dropped bytes in " << *report.quarantine_path << "\n";
    return exit_ok;
}

int run_convert(const ConvertOptions& options) {
    ConvertReport report;
    try {
        report = convert(options.file, options.to == "pi" ? Dialect::pi : Dialect::native, options.out);
    } catch (const SessionError& e) {
        throw ToolError(e.what());
    }
    std::cout << options.out << ": " << report.entry_count << " entries written in the " << dialect_name(report.to)
              << " dialect (from " << dialect_name(report.from) << ")\n";
    if (report.migration.from_version != report.migration.to_version)
        std::cout << "  upgraded from format version " << report.migration.from_version << " to "
                  << report.migration.to_version << "\n";
    for (const auto& note : report.migration.notes)
        std::cout << "  " << options.file << where(note.line) << ": "
                  << to_string(note.kind) << (note.detail.empty() ? "" : ": ") << note.detail << "\n";
    return exit_ok;
}

}  // namespace agentcore::tool

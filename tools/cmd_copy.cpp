// `agentcore copy SRC DST [--session ID]...`: sessions from one repository into another, as they
// are (header, every entry, the dialect of their lines), with the library's copy_session.
//
// Idempotent: a session that DST already holds identically is skipped; one that DST holds with
// other content is a clash, found before anything is written, and then nothing is copied (exit
// 1). Each session is imported in one step (a database transaction, a file moved into place), so
// a copy that fails leaves no partial session in DST.

#include "cli_common.hpp"
#include "commands.hpp"
#include "preview.hpp"
#include "progress.hpp"
#include "repository.hpp"
#include "session_file.hpp"

#include <agentcore/codec.hpp>

#include <algorithm>
#include <iostream>
#include <set>

namespace agentcore::tool {

namespace {

constexpr std::size_t entries_per_read = 4096;

// Why the session in `there` is not the session in `here`; none when both hold the same header
// and entries, kept in the same dialect.
std::optional<std::string> difference(const AnyStorage& here, const AnyStorage& there) {
    const Dialect dialect = here.dialect();
    if (there.dialect() != dialect)
        return std::string("it is kept in the ") + dialect_name(there.dialect()) +
               " dialect there, " + dialect_name(dialect) + " here";
    if (encode_header(there.metadata(), dialect) != encode_header(here.metadata(), dialect))
        return std::string("its header differs");
    const std::size_t count = here.entry_count();
    if (there.entry_count() != count)
        return "it holds " + std::to_string(there.entry_count()) + " entries there, " +
               std::to_string(count) + " here";
    for (std::size_t done = 0; done < count; done += entries_per_read) {
        const auto a = here.get_entries(EntriesQuery{done, entries_per_read});
        const auto b = there.get_entries(EntriesQuery{done, entries_per_read});
        if (a.size() != b.size()) return std::string("its entries differ");
        for (std::size_t i = 0; i < a.size(); ++i)
            if (encode_entry(*a[i], dialect) != encode_entry(*b[i], dialect))
                return "entry " + std::to_string(done + i + 1) + " ('" + id_of(*a[i]) +
                       "') differs";
    }
    return std::nullopt;
}

std::optional<std::string> difference(const AnyRepository& source, const AnyRepository& target,
                                      const std::string& id) {
    return library_call([&] {
        const auto here = open_read_only(source, id);
        const auto there = open_read_only(target, id);
        return difference(here.storage(), there.storage());
    });
}

// True when `repo` holds a session with that id.
bool holds(const AnyRepository& repo, const std::string& id) {
    try {
        (void)open_read_only(repo, id);
        return true;
    } catch (const SessionError& e) {
        if (e.code() == ErrorCode::not_found) return false;
        throw ToolError(e.what(), exit_failure, e.code());
    }
}

std::string clash_message(const std::string& id, const std::string& reason,
                          const CopyOptions& options) {
    return "session '" + id + "' is already in '" + options.destination +
           "' and differs from the one in '" + options.source + "' (" + reason + ")";
}

struct Outcome {
    std::string id;
    std::size_t entries = 0;
    bool copied = false;
};

void print_outcomes(const std::vector<Outcome>& outcomes) {
    std::size_t copied = 0;
    for (const auto& o : outcomes) {
        if (o.copied) {
            ++copied;
            std::cout << escaped(o.id) << ": copied (" << o.entries
                      << (o.entries == 1 ? " entry)\n" : " entries)\n");
        } else {
            std::cout << escaped(o.id) << ": skipped (already there, identical)\n";
        }
    }
    const std::size_t skipped = outcomes.size() - copied;
    std::cout << copied << (copied == 1 ? " session" : " sessions") << " copied, " << skipped
              << " skipped\n";
}

}  // namespace

int run_copy(const CopyOptions& options) {
    const AnyRepository source = open_source_repository(options.source);
    if (same_repository(options.source, options.destination))
        throw ToolError("'" + options.source + "' and '" + options.destination +
                        "' are the same repository: a copy onto itself is refused");

    // Every session of SRC, or the ones asked for, oldest first; an unknown id stops the copy
    // before anything is written.
    int exit_code = exit_ok;
    ListOptions oldest_first;
    oldest_first.newest_first = false;
    const SessionList listed = library_call([&] { return list(source, oldest_first); });
    for (const auto& problem : listed.problems) {
        std::cerr << "agentcore: skipped " << escaped(problem.path) << ": "
                  << escaped(problem.reason) << "\n";
        exit_code = exit_problems;
    }
    std::vector<std::string> selected;
    if (options.sessions.empty()) {
        for (const auto& l : listed.sessions) selected.push_back(l.header.id);
    } else {
        std::set<std::string> known;
        for (const auto& l : listed.sessions) known.insert(l.header.id);
        for (const auto& id : options.sessions) {
            if (known.count(id) == 0)
                throw ToolError("session '" + id + "' not found in '" + options.source + "'",
                                exit_failure, ErrorCode::not_found);
            if (std::find(selected.begin(), selected.end(), id) == selected.end())
                selected.push_back(id);
        }
    }

    AnyRepository target = open_target_repository(options.destination);

    // Sessions DST already holds: the same ones are skipped; a different one with the same id stops
    // the copy before anything is written.
    std::set<std::string> present;
    for (const auto& l : library_call([&] { return list(target, ListOptions{}); }).sessions)
        present.insert(l.header.id);
    std::vector<Outcome> outcomes;
    std::vector<std::string> to_copy;
    std::vector<std::string> clashes;
    for (const auto& id : selected) {
        if (present.count(id) == 0) {
            to_copy.push_back(id);
        } else if (const auto reason = difference(source, target, id)) {
            clashes.push_back(clash_message(id, *reason, options));
        } else {
            outcomes.push_back(Outcome{id, 0, false});
        }
    }
    if (!clashes.empty()) {
        for (std::size_t i = 0; i + 1 < clashes.size(); ++i)
            std::cerr << "agentcore: " << escaped(clashes[i]) << "\n";
        throw ToolError(clashes.back() + "; nothing copied", exit_problems);
    }

    // One unit per thousandth of a session: the bar moves within a large session too.
    constexpr std::uint64_t per_session = 1000;
    Progress progress("copying", to_copy.size() * per_session);
    for (std::size_t i = 0; i < to_copy.size(); ++i) {
        const std::string& id = to_copy[i];
        progress.update(i * per_session);
        try {
            const auto copy =
                copy_session(source, target, id, [&](std::size_t done, std::size_t total) {
                    // The bar follows the reading; the import's write is the session's last step.
                    progress.update(i * per_session +
                                    (total == 0 ? 0 : done * (per_session - 1) / total));
                });
            outcomes.push_back(Outcome{id, copy.storage().entry_count(), true});
        } catch (const SessionError& e) {
            // Written by someone else since DST was listed: the same session is fine.
            std::optional<std::string> reason;
            if (e.code() == ErrorCode::already_exists && holds(target, id)) {
                reason = difference(source, target, id);
                if (!reason) {
                    outcomes.push_back(Outcome{id, 0, false});
                    continue;
                }
            }
            progress.finish();
            print_outcomes(outcomes);
            if (reason)
                throw ToolError(
                    clash_message(id, *reason, options) + "; not copied, nor the sessions after it",
                    exit_problems);
            throw ToolError(e.what(), exit_failure, e.code());
        }
    }
    progress.finish();
    print_outcomes(outcomes);
    return exit_code;
}

}  // namespace agentcore::tool

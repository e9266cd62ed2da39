#pragma once
// Loading a whole session file into memory (any dialect, pi formats v1–v3) and converting a
// session file from one dialect to the other (SPEC §3).
//
// Round trips:
// - native → pi → native gives the same bytes.
// - pi → native → pi gives the same session, and the same bytes except for these deliberate
//   differences (all of them are spellings of the same session; pi reads both alike):
//   1. pi files of format v1/v2 come out as v3 (fresh ids for v1, `hookMessage` → `custom`
//      for v2; see pi_migrate.hpp). The header says `"version":3`.
//   2. An optional field written as `null` is written absent (readers accept both), e.g.
//      `"details":null`, `"parentSession":null`, `"label":null`, `"name":null`.
//   3. An empty header `metadata` object is not written in the pi dialect.
//   4. (none: `fromHook`, `display` and `isError` are written back exactly as read — absent
//      when pi left them out, as its appendCompaction/branchWithSummary do without fromHook.)
//   5. Blank lines and a torn last line (an unacknowledged append) are not copied.
//   6. Modelled fields are written in pi's own order (the order of pi's SessionManager);
//      fields agentcore does not model keep their order and come after them.
//   7. Numbers are written as JSON.stringify writes them (`1e+21`, `0.1`; a float with an
//      integral value without a fraction).
//   Fields agentcore does not model (provider extras) keep their spelling in both dialects: a
//   camelCase extra stays camelCase in a native file.
//
// Appending to a pi file with agentcore keeps the pi dialect. One agentcore entry type has no
// pi counterpart: `leaf` (written by set_leaf_id and move_to). pi 0.73 reads a `leaf` entry as
// an ordinary node and takes the last line as its leaf, so in a pi file a `leaf` entry hangs
// under its target (pi then continues on the target's branch), in a native file under the
// previous leaf (SPEC §4.2). Converting writes each `leaf` entry that nothing hangs under where
// its output dialect puts it, as JsonlSessionStorage would have written it; one that pi appended
// under stays where it is (moving it would move pi's entries).

#include <agentcore/codec.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/memory/memory_storage.hpp>
#include <agentcore/pi_migrate.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace agentcore {

/// A session file read into memory.
struct LoadedSession {
    InMemorySessionStorage<> storage;   ///< the header and every entry, leaf = the last entry's
    Dialect dialect = Dialect::native;  ///< the file's dialect
    PiMigrationReport report;           ///< what reading and upgrading found (see pi_migrate.hpp)
};

/// Reads a whole session file of either dialect into an in-memory storage; pi files of format
/// v1/v2 are upgraded in memory (the file is not changed). The storage uses `environment` for
/// the ids of later appends and for v1 ids.
///
/// Accepts the same v3 files as JsonlSessionStorage::open_read_only: a last line without its
/// newline that does not decode, or breaks the tree, is an unfinished append, ignored and
/// reported (torn_last_line). pi's own recoveries (pi_migrate.hpp) come on top: older formats,
/// and an entry that names itself as parent, read as a root.
///
/// Throws: not_found (no file); storage (I/O); invalid_session (header, version); invalid_entry
/// naming the file and line (a bad line in the middle, an entry the codec rejects, a parent
/// that is not on an earlier line); already_exists (a duplicate id, naming file and line).
/// Complexity: linear in the file's size.
template <class = void>
LoadedSession load_session_file(const std::string& path,
                                const Environment& environment = Environment::system()) {
    SessionLines lines = read_session_lines(path, environment);
    const Dialect dialect = detect_dialect(lines.header);
    SessionHeader header = header_from_json(std::move(lines.header));
    LoadedSession loaded{InMemorySessionStorage<>(std::move(header), environment), dialect,
                         std::move(lines.report)};
    for (std::size_t i = 0; i < lines.entries.size(); ++i) {
        const std::string where = path + ":" + std::to_string(lines.line_numbers[i]) + ": ";
        try {
            loaded.storage.append_entry(entry_from_json(std::move(lines.entries[i]), dialect));
        } catch (const SessionError& e) {
            if (i + 1 == lines.entries.size() && lines.last_entry_unterminated) {
                detail::drop_torn_last_entry(lines, e);
                loaded.report.notes.push_back(lines.report.notes.back());
                break;
            }
            throw e.wrapped(where, ErrorLocation{.file = path, .line = lines.line_numbers[i]});
        }
    }
    return loaded;
}

/// The text of a whole session file in a dialect: the header line, then one line per entry in
/// append order, each ending with `\n`. A `leaf` entry that no entry hangs under is written
/// under its target in the pi dialect and under the previous leaf in the native one (see the
/// top of this header).
template <class Metadata>
std::string encode_session(const InMemorySessionStorage<Metadata>& storage, Dialect dialect) {
    std::string text = encode_header(storage.metadata(), dialect);
    text.push_back('\n');
    std::unordered_set<std::string_view> parents;
    for (const auto& entry : storage.entries())
        if (const auto& parent = parent_id_of(*entry)) parents.insert(*parent);
    std::optional<std::string> leaf;  // the leaf before the entry being written
    for (const auto& entry : storage.entries()) {
        const auto* move = std::get_if<LeafEntry>(entry.get());
        if (move != nullptr && parents.count(move->id) == 0) {
            LeafEntry placed = *move;
            placed.parent_id = dialect == Dialect::pi ? move->target_id : leaf;
            text += encode_entry(SessionTreeEntry(std::move(placed)), dialect);
        } else {
            text += encode_entry(*entry, dialect);
        }
        text.push_back('\n');
        leaf = move != nullptr ? move->target_id : std::optional<std::string>(id_of(*entry));
    }
    return text;
}

/// What convert did.
struct ConvertReport {
    Dialect from = Dialect::native;  ///< the input's dialect
    Dialect to = Dialect::native;
    std::size_t entry_count = 0;
    PiMigrationReport migration;  ///< the input's upgrade and recoveries (pi v1/v2 input)
};

/// Converts a whole session file to a dialect (the same dialect rewrites it in canonical form).
/// The output is written atomically (temporary file in the output's folder, fsync, rename,
/// folder fsync) and replaces `out_path` if it exists; the input is never changed. pi input of
/// format v1/v2 is upgraded on the way. See the top of this header for the round trips.
///
/// Throws: as load_session_file for the input; storage when the output cannot be written (no
/// output file then).
/// Example: `convert("pi-session.jsonl", Dialect::native, "session.jsonl");`
template <class = void>
ConvertReport convert(const std::string& in_path, Dialect to, const std::string& out_path,
                      const Environment& environment = Environment::system()) {
    LoadedSession loaded = load_session_file(in_path, environment);
    detail::write_file_atomically(out_path, encode_session(loaded.storage, to),
                                  environment.random());
    ConvertReport report;
    report.from = loaded.dialect;
    report.to = to;
    report.entry_count = loaded.storage.entry_count();
    report.migration = std::move(loaded.report);
    return report;
}

}  // namespace agentcore

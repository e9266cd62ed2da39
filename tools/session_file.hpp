#pragma once
// Opening a session file of either dialect for the tool's commands, read-only.
//
// Format v3 files (native, and pi's current files) are opened with JsonlSessionStorage, which
// indexes the file without decoding messages; pi files of format v1/v2 are read whole and
// upgraded in memory by load_session_file. Commands are written once, as generic lambdas over
// Session<S>, and with_session calls them with whichever storage the file needs.

#include "cli_common.hpp"

#include <agentcore/convert.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/memory/memory_storage.hpp>
#include <agentcore/session_ops.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace agentcore::tool {

/// What the tool knows about an opened file beyond its session.
struct FileInfo {
    std::string
        path;  ///< the file; for a session of a repository that is not a folder, how it is named
    std::string repository;  ///< that repository's URL (empty for a file)
    Dialect dialect = Dialect::native;
    std::uint64_t file_size = 0;
    std::vector<LineProblem> problems;         ///< lines a lenient open skipped
    bool torn_tail = false;                    ///< a last line that was never completed
    std::optional<PiMigrationReport> upgrade;  ///< pi v1/v2: how it was upgraded in memory
};

/// The longest first line the tool reads to find a header (the library's listing reads as much).
inline constexpr std::size_t header_line_limit = std::size_t{1} << 20;

/// Throws ToolError when `path` exists but is not a regular file (a FIFO, a device such as
/// /dev/zero, a folder, a socket): only regular files are sessions, and reading a FIFO or a
/// device may never end. A missing path passes: the open that follows reports it.
void require_regular_file(const std::string& path);

/// What kind of file a stat mode describes: "a FIFO", "a character device", ...
const char* file_type_name(unsigned mode) noexcept;

/// The first line of `path` without its newline, reading at most header_line_limit bytes; none
/// when the file cannot be read or its first line is longer. Throws ToolError when `path` is not
/// a regular file (checked on the open descriptor, which never waits for a FIFO's writer).
std::optional<std::string> header_line(const std::string& path);

/// The format version in the file's header, or none when the header cannot be read (the
/// storage's open then reports why, naming the file and line). Throws ToolError like header_line.
std::optional<int> header_version(const std::string& path);

/// The writer lock of an output file that is about to be replaced, held until the guard goes
/// out of scope (see guard_output).
class OutputGuard {
public:
    OutputGuard() = default;
    explicit OutputGuard(int fd) noexcept : fd_(fd) {}
    OutputGuard(OutputGuard&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    OutputGuard& operator=(OutputGuard&&) = delete;
    OutputGuard(const OutputGuard&) = delete;
    OutputGuard& operator=(const OutputGuard&) = delete;
    ~OutputGuard();

private:
    int fd_ = -1;
};

/// Checks that a command reading `input` may replace `output`, and throws ToolError when not:
/// - `output` is the input file under any name (same device and inode: a hard link, a symbolic
///   link, "./" or ".." in the path) — writing it would replace what is being read;
/// - `output` is a session file held by a writer (the library's writer lock, an flock on the
///   file): replacing it would swap the file under the writer, whose later appends would go to
///   a file no one sees.
/// Otherwise returns holding that lock on the existing `output`, so that no writer opens it
/// until the command has replaced it. A missing `output` needs no lock.
OutputGuard guard_output(const std::string& input, const std::string& output);

/// Opens `path` read-only (no lock, the file never changes) and returns `command(session, info)`.
/// Only a regular file is opened (see header_line). Strict: a bad line fails the open.
/// Lenient: bad entry lines of a v3 file are skipped and listed in info.problems. Library errors
/// become ToolErrors (their messages name file and line).
template <class Command>
int with_session(const std::string& path, bool lenient, Command&& command) {
    try {
        const auto version = header_version(path);  // refuses anything but a regular file
        if (version && *version < current_session_version) {
            LoadedSession loaded = load_session_file(path);
            FileInfo info{path, {}, loaded.dialect, 0, {}, false, std::move(loaded.report)};
            info.file_size = std::filesystem::file_size(path);
            info.torn_tail = info.upgrade->count(PiMigrationKind::torn_last_line) != 0;
            const Session<InMemorySessionStorage<>> session(std::move(loaded.storage));
            return command(session, std::as_const(info));
        }
        JsonlStorageOptions options;
        options.lenient = lenient;
        const Session<JsonlSessionStorage> session(
            JsonlSessionStorage::open_read_only(path, options));
        const JsonlSessionStorage& storage = session.storage();
        const FileInfo info{path,
                            {},
                            storage.dialect(),
                            storage.file_size(),
                            storage.problems(),
                            storage.had_torn_tail(),
                            std::nullopt};
        return command(session, info);
    } catch (const SessionError& e) {
        throw ToolError(e.what(), exit_failure, e.code());
    }
}

/// The dialect's name as the tool prints it ("native", "pi").
const char* dialect_name(Dialect dialect) noexcept;

/// Every id from the root to `id` (inclusive), oldest first, following parents without the
/// compaction cut of get_path_to_root_or_compaction; empty for none.
template <SessionStorage S>
std::vector<std::string> ancestry(const S& storage, const std::optional<std::string>& id) {
    std::vector<std::string> ids;
    std::optional<std::string> current = id;
    while (current && ids.size() <= storage.entry_count()) {
        EntryHandle entry = storage.get_entry(*current);
        if (!entry) break;
        ids.push_back(*current);
        current = parent_id_of(*entry);
    }
    return {ids.rbegin(), ids.rend()};
}

}  // namespace agentcore::tool

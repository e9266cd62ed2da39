#pragma once
// Reading session files line by line and upgrading pi's older formats (v1, v2) to format v3 in
// memory (SPEC §3); rewriting a file in the new format only when the caller asks (upgrade_file).
//
// What the migration does, and the recoveries it documents (each one is reported as a
// PiMigrationNote; nothing is dropped silently):
// - v1 (a header without `version`; entries without id/parentId): every entry gets a fresh
//   8-hex id from the Environment (deterministic when the Environment is) and the previous
//   entry as parent, so the linear list becomes a chain. Ids the entries may already carry are
//   replaced, as pi does.
// - v1 `firstKeptEntryIndex` (an index into the file's lines, 0 being the header) becomes
//   `firstKeptEntryId` when it names an entry before the compaction. Pointing at the header,
//   at the compaction itself, at a later entry, past the end, or not being a non-negative
//   integer: the pointer is dropped and the compaction kept (its context is then the summary
//   and what follows it — what pi builds for such a file too), reported as
//   first_kept_index_dropped with the original value.
// - v2 → v3: role `hookMessage` becomes `custom` (message entries), as pi does.
// - a `hookMessage` in a v3 file is not renamed (pi does not rename it either): it stays an
//   opaque message, written back unchanged, and is reported (hook_message_kept).
// - an entry of a v2/v3 file without a parentId key is a root, as pi reads it (reported);
//   an entry that names itself as parent becomes a root, as pi's tree view treats it (reported).
// - a header of a version newer than this library, older than 1 or not an integer:
//   SessionError(invalid_session); nothing is changed.

#include <agentcore/codec.hpp>
#include <agentcore/detail/atomic_file.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/detail/file_ops.hpp>
#include <agentcore/detail/json_scan.hpp>
#include <agentcore/detail/line_index.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/json.hpp>
#include <agentcore/memory/memory_storage.hpp>
#include <agentcore/storage.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentcore {

/// What a read or a migration found and did about it.
enum class PiMigrationKind {
    torn_last_line,            ///< the last line was incomplete (not JSON): ignored
    blank_line,                ///< an empty line: skipped
    ids_assigned,              ///< v1: the entries got fresh ids and became a chain
    first_kept_index_mapped,   ///< v1: firstKeptEntryIndex became firstKeptEntryId
    first_kept_index_dropped,  ///< v1: firstKeptEntryIndex named no earlier entry: dropped
    hook_message_renamed,      ///< v2: role hookMessage became custom
    hook_message_kept,         ///< a hookMessage in a v3 file: kept as an opaque message
    missing_parent_key,        ///< v2/v3: an entry without a parentId key, read as a root
    self_parent,               ///< an entry named itself as parent: made a root
};

/// The stable spelling of a kind ("torn_last_line", ...).
constexpr std::string_view to_string(PiMigrationKind kind) noexcept {
    switch (kind) {
        case PiMigrationKind::torn_last_line: return "torn_last_line";
        case PiMigrationKind::blank_line: return "blank_line";
        case PiMigrationKind::ids_assigned: return "ids_assigned";
        case PiMigrationKind::first_kept_index_mapped: return "first_kept_index_mapped";
        case PiMigrationKind::first_kept_index_dropped: return "first_kept_index_dropped";
        case PiMigrationKind::hook_message_renamed: return "hook_message_renamed";
        case PiMigrationKind::hook_message_kept: return "hook_message_kept";
        case PiMigrationKind::missing_parent_key: return "missing_parent_key";
        case PiMigrationKind::self_parent: return "self_parent";
    }
    return "unknown";
}

/// One finding: what, where (1-based line of the file; 0 when the lines did not come from a
/// file), which entry (its id after the migration), and a detail without conversation text.
struct PiMigrationNote {
    PiMigrationKind kind{};
    std::size_t line = 0;
    std::string entry_id;
    std::string detail;
};

/// What a migration did.
struct PiMigrationReport {
    int from_version = current_session_version;  ///< the version the header declared (1 when none)
    int to_version = current_session_version;
    std::vector<PiMigrationNote> notes;

    /// True when the lines differ from what was read (a version upgrade or a recovery that
    /// changed an entry). Notes about skipped lines alone do not count.
    [[nodiscard]] bool changed() const noexcept {
        if (from_version != to_version) return true;
        for (const auto& n : notes)
            if (n.kind == PiMigrationKind::self_parent) return true;
        return false;
    }

    /// How many notes of a kind.
    [[nodiscard]] std::size_t count(PiMigrationKind kind) const noexcept {
        std::size_t n = 0;
        for (const auto& note : notes) n += note.kind == kind ? 1U : 0U;
        return n;
    }
};

/// A session file as JSON lines: the header, the entries, where each entry was in the file.
struct SessionLines {
    Json header;
    std::vector<Json> entries;
    std::vector<std::size_t>
        line_numbers;          ///< 1-based line of each entry; empty when not from a file
    PiMigrationReport report;  ///< what reading and migrating found
    /// The last entry is the text's last line and has no newline: an append that may not have
    /// finished. A reader that refuses it treats it as a torn tail, as the JSONL storage does.
    bool last_entry_unterminated = false;
};

namespace detail {

struct MigrationKeys {
    std::string_view parent;
    std::string_view first_kept_id;
    std::string_view first_kept_index;
    std::string_view hook_role;
};

template <class = void>
MigrationKeys migration_keys(Dialect d) noexcept {
    if (d == Dialect::native)
        return {"parent_id", "first_kept_entry_id", "first_kept_entry_index", "hook_message"};
    return {"parentId", "firstKeptEntryId", "firstKeptEntryIndex", "hookMessage"};
}

/// The header's format version (1 when absent). Throws invalid_session for anything this
/// library cannot read.
template <class = void>
int session_version_of(const Json& header) {
    if (!header.is_object())
        throw SessionError(ErrorCode::invalid_session, "session header: expected a JSON object");
    auto type = header.find("type");
    if (type == header.end() || !type->is_string() ||
        type->get_ref<const std::string&>() != "session")
        throw SessionError(ErrorCode::invalid_session, "session header: expected type \"session\"");
    auto v = header.find("version");
    if (v == header.end() || v->is_null()) return 1;
    if (!v->is_number_integer())
        throw SessionError(ErrorCode::invalid_session, "session header: version is not an integer");
    const auto n = v->get<std::int64_t>();
    if (n < 1 || n > current_session_version)
        throw SessionError(ErrorCode::invalid_session,
                           "unsupported session format version " + std::to_string(n));
    return static_cast<int>(n);
}

template <class = void>
std::string entry_id_or_empty(const Json& entry) {
    auto it = entry.find("id");
    return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// `entry` with `id` and `parent` set right after `type` (the order of a v3 line), the other
/// fields in their order.
template <class = void>
Json with_chain_fields(Json&& entry, const std::string& id, const Json& parent,
                       std::string_view parent_key) {
    Json out = Json::object();
    auto type = entry.find("type");
    if (type != entry.end()) out["type"] = std::move(*type);
    out["id"] = id;
    out[std::string(parent_key)] = parent;
    for (auto it = entry.begin(); it != entry.end(); ++it) {
        if (it.key() == "type" || it.key() == "id" || it.key() == parent_key) continue;
        out[it.key()] = std::move(it.value());
    }
    return out;
}

template <class = void>
bool is_message_with_role(const Json& entry, std::string_view role) {
    auto type = entry.find("type");
    if (type == entry.end() || !type->is_string() ||
        type->get_ref<const std::string&>() != "message")
        return false;
    auto message = entry.find("message");
    if (message == entry.end() || !message->is_object()) return false;
    auto r = message->find("role");
    return r != message->end() && r->is_string() && r->get_ref<const std::string&>() == role;
}

}  // namespace detail

/// Upgrades a session's lines to format v3 in memory (see the top of this header for every
/// rule and recovery). The dialect follows from the header; the keys of that dialect are used.
///
/// Params: the header and the entry objects in file order; `line_numbers` (optional, one per
/// entry) only label the notes; `environment` gives the fresh ids of v1 entries.
/// Returns: the upgraded lines and the report (from_version, the notes).
/// Throws: SessionError(invalid_session) for a header that is not a session header or has an
/// unsupported version; SessionError(invalid_entry) for an entry that is not a JSON object.
/// Complexity: linear in the number of entries.
/// Example: `auto up = migrate_session_lines(header, entries, Environment::deterministic(0, 1));`
template <class T = void>
SessionLines migrate_session_lines(detail::dependent<Json, T> header,
                                   detail::dependent<std::vector<Json>, T> entries,
                                   const Environment& environment = Environment::system(),
                                   std::vector<std::size_t> line_numbers = {}) {
    detail::dependent<SessionLines, T> out;
    const int version = detail::session_version_of(header);
    const Dialect dialect = detect_dialect(header);
    const detail::MigrationKeys keys = detail::migration_keys(dialect);
    auto line_of = [&](std::size_t i) {
        return i < line_numbers.size() ? line_numbers[i] : std::size_t{0};
    };
    auto note = [&](PiMigrationKind kind, std::size_t i, std::string id, std::string detail) {
        out.report.notes.push_back(
            PiMigrationNote{kind, line_of(i), std::move(id), std::move(detail)});
    };
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!entries[i].is_object())
            throw SessionError(
                ErrorCode::invalid_entry,
                "entry at line " + std::to_string(line_of(i)) + ": expected a JSON object");
    }
    out.report.from_version = version;
    out.report.to_version = current_session_version;

    if (version < 2) {
        // v1 → v2: a chain with fresh ids; firstKeptEntryIndex (0 = the header) → an id.
        detail::dependent<std::unordered_set<std::string>, T> taken;
        detail::dependent<std::vector<std::string>, T> new_ids;
        new_ids.reserve(entries.size());
        for (std::size_t i = 0; i < entries.size(); ++i) {
            new_ids.push_back(make_entry_id(
                environment, [&](const std::string& id) { return taken.count(id) != 0; }));
            taken.insert(new_ids.back());
        }
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const detail::dependent<Json, T> parent = i == 0 ? Json() : Json(new_ids[i - 1]);
            entries[i] =
                detail::with_chain_fields(std::move(entries[i]), new_ids[i], parent, keys.parent);
            Json& e = entries[i];
            auto index_it = e.find(keys.first_kept_index);
            if (index_it == e.end()) continue;
            const detail::dependent<Json, T> original = *index_it;
            e.erase(index_it);
            // Line k of the file (0 = header) is entry k - 1; only an entry before this one can
            // be kept before the compaction.
            std::optional<std::size_t> target;
            if (original.is_number_integer()) {
                const auto k = original.template get<std::int64_t>();
                if (k >= 1 && static_cast<std::uint64_t>(k) <= i)
                    target = static_cast<std::size_t>(k) - 1;
            }
            if (target) {
                e[std::string(keys.first_kept_id)] = new_ids[*target];
                note(PiMigrationKind::first_kept_index_mapped, i, new_ids[i],
                     "index " + original.dump() + " -> entry '" + new_ids[*target] + "'");
            } else {
                if (e.contains(keys.first_kept_id)) e.erase(std::string(keys.first_kept_id));
                note(PiMigrationKind::first_kept_index_dropped, i, new_ids[i],
                     "index " + original.dump() +
                         " names no entry before the compaction; pointer dropped, "
                         "compaction kept");
            }
        }
        if (!entries.empty())
            note(PiMigrationKind::ids_assigned, 0, new_ids.front(),
                 std::to_string(entries.size()) + " entries chained with fresh ids");
    } else {
        for (std::size_t i = 0; i < entries.size(); ++i) {
            Json& e = entries[i];
            auto parent = e.find(keys.parent);
            if (parent == e.end()) {
                note(PiMigrationKind::missing_parent_key, i, detail::entry_id_or_empty(e),
                     "no parent key; read as a root");
            } else if (parent->is_string() && e.contains("id") &&
                       detail::json_equal(*parent, e["id"])) {
                *parent = nullptr;
                note(PiMigrationKind::self_parent, i, detail::entry_id_or_empty(e),
                     "entry named itself as parent; made a root");
            }
        }
    }

    for (std::size_t i = 0; i < entries.size(); ++i) {
        Json& e = entries[i];
        if (!detail::is_message_with_role(e, keys.hook_role)) continue;
        if (version < 3) {
            e["message"]["role"] = "custom";
            note(PiMigrationKind::hook_message_renamed, i, detail::entry_id_or_empty(e),
                 std::string("role ") + std::string(keys.hook_role) + " -> custom");
        } else {
            note(PiMigrationKind::hook_message_kept, i, detail::entry_id_or_empty(e),
                 std::string("role ") + std::string(keys.hook_role) +
                     " in a v3 file; kept as an opaque message");
        }
    }

    if (version < current_session_version) header["version"] = current_session_version;
    out.header = std::move(header);
    out.entries = std::move(entries);
    out.line_numbers = std::move(line_numbers);
    return out;
}

/// Splits the text of a session file into JSON lines (SPEC §6): line 1 is the header; blank
/// lines (spaces, tabs, carriage returns) are skipped (reported); a last line that does not parse
/// (with or without its newline) is the remains of an unacknowledged append and is ignored
/// (reported), as the JSONL storage does; a last line that parses but lacks its newline is kept.
/// Nothing is migrated (see migrate_session_lines).
///
/// Throws: SessionError(invalid_session) when there is no header line or it does not parse;
/// SessionError(invalid_entry) naming `name` and the line for a bad line in the middle.
template <class T = void>
SessionLines parse_session_text(std::string_view text, std::string_view name = "<memory>") {
    detail::dependent<SessionLines, T> out;
    detail::LineReader reader(text);
    detail::LineSpan line;
    bool have_header = false;
    while (reader.next(line)) {
        const std::string_view body = reader.text(line);
        const bool last = line.end >= text.size();
        if (detail::blank_line(body)) {
            if (!last || line.terminated)
                out.report.notes.push_back(
                    {PiMigrationKind::blank_line, line.number, {}, "empty line skipped"});
            continue;
        }
        detail::dependent<Json, T> json;
        std::string error;
        bool parsed = false;
        try {
            parsed = detail::parse_json(body, json, error);
        } catch (const std::bad_alloc&) {
            throw SessionError(ErrorCode::storage, std::string(name) + ":" +
                                                       std::to_string(line.number) +
                                                       ": not enough memory to read the line (" +
                                                       std::to_string(line.length) + " bytes)");
        }
        if (!parsed) {
            if (last) {
                out.report.notes.push_back(
                    {PiMigrationKind::torn_last_line,
                     line.number,
                     {},
                     "incomplete last line of " + std::to_string(line.length) + " bytes ignored"});
                continue;
            }
            throw SessionError(
                have_header ? ErrorCode::invalid_entry : ErrorCode::invalid_session,
                std::string(name) + ":" + std::to_string(line.number) + ": invalid JSON: " + error);
        }
        if (!have_header) {
            out.header = std::move(json);
            have_header = true;
        } else {
            out.entries.push_back(std::move(json));
            out.line_numbers.push_back(line.number);
            out.last_entry_unterminated = last && !line.terminated;
        }
    }
    if (!have_header)
        throw SessionError(ErrorCode::invalid_session, std::string(name) + ": no session header");
    return out;
}

namespace detail {

/// Drops the last entry when it is the remains of an unfinished append (unterminated, and
/// refused by the codec or the tree), as the JSONL storage's open does; reports it.
template <class = void>
void drop_torn_last_entry(SessionLines& lines, const SessionError& why) {
    lines.report.notes.push_back({PiMigrationKind::torn_last_line,
                                  lines.line_numbers.back(),
                                  {},
                                  std::string("incomplete last line ignored: ") + why.what()});
    lines.entries.pop_back();
    lines.line_numbers.pop_back();
    lines.last_entry_unterminated = false;
}

/// The whole content of a file. Throws not_found when it does not exist, storage otherwise.
template <class = void>
std::string read_whole_file(const std::string& path) {
    const FileOps& ops = FileOps::real();
    FileHandle f = open_regular_file(ops, path, O_RDONLY);
    if (!f) {
        if (errno == ENOENT)
            throw SessionError(ErrorCode::not_found, "file '" + path + "' not found");
        throw io_error("opening", path, errno);
    }
    const std::uint64_t size = file_size(ops, f.get(), path);
    std::string content;
    try {
        content.resize(static_cast<std::size_t>(size));
    } catch (const std::bad_alloc&) {
        throw SessionError(ErrorCode::storage, "file '" + path +
                                                   "': not enough memory to read its " +
                                                   std::to_string(size) + " bytes");
    }
    if (size > 0) {
        if (const int err = pread_all(ops, f.get(), content.data(), content.size(), 0))
            throw io_error("reading", path, err);
    }
    return content;
}

/// Writes `content` to `path` atomically: a temporary file in the same folder (mode 0600,
/// locked while it is written, see atomic_file.hpp), synced, renamed into place, the folder
/// synced. When `keep_original_as` is given, the file that was at `path` is first linked to that
/// name (it must not exist). On failure the temporary file is removed and `path` is as before (a
/// kept original may remain beside it). Temporary files of `path` that killed writers left are
/// removed first (sweep_temp_files).
template <class = void>
void write_file_atomically(const std::string& path, std::string_view content, std::uint64_t random,
                           const std::string& keep_original_as = {}) {
    const FileOps& ops = FileOps::real();
    const std::string folder = parent_folder(path);
    sweep_temp_files(ops, folder, file_name(path));
    std::string temp;
    FileHandle f;
    for (int attempt = 0; attempt < 100 && !f; ++attempt) {
        temp = folder + "/." + std::string(file_name(path)) + ".tmp-" + std::to_string(::getpid()) +
               "-";
        append_hex(temp, (random + static_cast<std::uint64_t>(attempt)) & 0xFFFFFFFFULL, 8);
        f = open_file(ops, temp, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (!f && errno != EEXIST) throw io_error("creating", temp, errno);
    }
    if (!f) throw io_error("creating", temp, EEXIST);
    auto fail = [&](std::string_view what, const std::string& subject, int err) {
        SessionError error = io_error(what, subject, err);
        f.reset();
        ops.unlink(temp.c_str());
        throw error;
    };
    if (const int err = lock_new_temp_file(ops, f.get())) fail("locking", temp, err);
    if (const int err = pwrite_all(ops, f.get(), content, 0)) fail("writing", temp, err);
    if (const int err = sync_file(ops, f.get(), false)) fail("syncing", temp, err);
    f.reset();
    if (!keep_original_as.empty() && ops.link(path.c_str(), keep_original_as.c_str()) != 0)
        fail("keeping the original as", keep_original_as, errno);
    if (ops.rename(temp.c_str(), path.c_str()) != 0) fail("renaming into", path, errno);
    sync_folder(ops, folder);
}

/// A name beside `path` that does not exist yet: `path + suffix`, then with ".2", ".3", ...
template <class = void>
std::string free_name_beside(const std::string& path, const std::string& suffix) {
    const FileOps& ops = FileOps::real();
    struct stat st {};
    std::string candidate = path + suffix;
    for (int n = 2; ops.lstat(candidate.c_str(), &st) == 0; ++n)
        candidate = path + suffix + "." + std::to_string(n);
    return candidate;
}

}  // namespace detail

/// Reads a session file into JSON lines and upgrades them to v3 in memory; the file is not
/// changed. See parse_session_text and migrate_session_lines for the rules.
///
/// Throws: not_found (no file), storage (I/O), invalid_session (header), invalid_entry (a bad
/// line in the middle, naming the file and line).
template <class T = void>
SessionLines read_session_lines(const std::string& path,
                                const Environment& environment = Environment::system()) {
    detail::dependent<SessionLines, T> parsed =
        parse_session_text(detail::read_whole_file(path), path);
    detail::dependent<SessionLines, T> migrated =
        migrate_session_lines(std::move(parsed.header), std::move(parsed.entries), environment,
                              std::move(parsed.line_numbers));
    parsed.report.notes.insert(parsed.report.notes.end(), migrated.report.notes.begin(),
                               migrated.report.notes.end());
    migrated.report.notes = std::move(parsed.report.notes);
    migrated.last_entry_unterminated = parsed.last_entry_unterminated;
    return migrated;
}

/// The text of a session file for a set of lines: each object as one compact line, `\n` after
/// each.
template <class = void>
std::string session_lines_text(const SessionLines& lines) {
    std::string text = dump_json(lines.header);
    text.push_back('\n');
    for (const auto& e : lines.entries) {
        text += dump_json(e);
        text.push_back('\n');
    }
    return text;
}

/// What upgrade_file did.
struct UpgradeResult {
    PiMigrationReport report;
    bool rewritten = false;     ///< false when the file already was v3 and needed no recovery
    std::string original_path;  ///< where the original was kept (empty when not rewritten)
};

/// Upgrades a session file of an older format to v3 on disk. The file is read and migrated as
/// read_session_lines does; the upgraded session is checked (every entry decodes, ids are
/// unique, each parent is on an earlier line); then it is written atomically (temporary file
/// in the same folder, fsync, rename, folder fsync) and the original is kept beside it as
/// `<path>.v<version>.orig` (".2", ".3", ... appended when that name is taken). A file that
/// needs no change is left alone. Upgraded lines are written as pi writes them (JSON.stringify
/// of the migrated objects in their order, id and parent right after type).
///
/// Throws: as read_session_lines; invalid_entry / already_exists naming the file and line for
/// an entry that breaks the format or the tree (nothing written); storage when writing fails
/// (the file is as before).
/// Not safe against a concurrent writer of the same file: upgrade a session nobody has open.
template <class T = void>
UpgradeResult upgrade_file(const std::string& path,
                           const Environment& environment = Environment::system()) {
    detail::dependent<SessionLines, T> lines = read_session_lines(path, environment);
    const Dialect dialect = detect_dialect(lines.header);
    // The upgraded session must open: every entry decodes, ids are unique, parents come first.
    detail::dependent<InMemorySessionStorage<>, T> check(header_from_json(lines.header),
                                                         environment);
    for (std::size_t i = 0; i < lines.entries.size(); ++i) {
        try {
            check.append_entry(entry_from_json(lines.entries[i], dialect));
        } catch (const SessionError& e) {
            if (i + 1 == lines.entries.size() && lines.last_entry_unterminated) {
                detail::drop_torn_last_entry(lines, e);
                break;
            }
            throw e.wrapped(path + ":" + std::to_string(lines.line_numbers[i]) + ": ",
                            ErrorLocation{.file = path, .line = lines.line_numbers[i]});
        }
    }
    UpgradeResult result;
    result.report = lines.report;
    if (!lines.report.changed()) return result;
    result.original_path =
        detail::free_name_beside(path, ".v" + std::to_string(lines.report.from_version) + ".orig");
    detail::write_file_atomically(path, session_lines_text(lines), environment.random(),
                                  result.original_path);
    result.rewritten = true;
    return result;
}

}  // namespace agentcore

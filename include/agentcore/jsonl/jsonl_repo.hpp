#pragma once
// JsonlSessionRepo: sessions as JSONL files under a root folder (SPEC §4.10).
//
// Layout: one folder per working directory, `--<cwd without its leading slash, with / \ :
// replaced by ->--`, mode 0700; in it one file per session, `<creation time with ':' and '.'
// replaced by '-'>_<session id>.jsonl`, mode 0600. Temporary files start with '.' and never end
// in ".jsonl"; backups and quarantines end in a time stamp: list never shows them. The
// temporary files of writers killed while they created, forked, repaired or upgraded a session
// are removed by the next create or fork (sweep_temporary_files).

#include <agentcore/codec.hpp>
#include <agentcore/detail/atomic_file.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/detail/file_lock.hpp>
#include <agentcore/detail/file_ops.hpp>
#include <agentcore/detail/search_line.hpp>
#include <agentcore/detail/threads.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/jsonl/detail/summary_cache.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/repo.hpp>
#include <agentcore/search.hpp>
#include <agentcore/session_ops.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <agentcore/detail/chrono.hpp>
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore {

/// A repository of JSONL session files under one root folder.
class JsonlSessionRepo {
public:
    using storage_type = JsonlSessionStorage;
    using session_type = Session<JsonlSessionStorage>;

    /// A repository over `root` (created, mode 0700, when the first session is). `options` apply
    /// to every storage it opens or creates.
    explicit JsonlSessionRepo(std::string root, JsonlStorageOptions options = {})
        : root_(std::move(root)), options_(std::move(options)) {
        while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
        if (root_.empty()) root_ = ".";
    }

    [[nodiscard]] const std::string& root() const noexcept { return root_; }
    [[nodiscard]] const JsonlStorageOptions& options() const noexcept { return options_; }
    [[nodiscard]] JsonlStorageOptions& options() noexcept { return options_; }

    /// The folder name of a working directory: `--<cwd without its leading slash, / \ : → ->--`.
    template <class = void>
    [[nodiscard]] static std::string folder_name(std::string_view cwd) {
        if (!cwd.empty() && cwd.front() == '/') cwd.remove_prefix(1);
        std::string name = "--";
        for (char c : cwd) name.push_back(c == '/' || c == '\\' || c == ':' ? '-' : c);
        name += "--";
        return name;
    }

    /// The file name of a session: `<timestamp with ':' and '.' → '-'>_<id>.jsonl`. A creation
    /// time written elsewhere (an imported session's) has '/', '\\', '_' and control characters
    /// turned into '-' too and is cut at 64 bytes, so that the name stays one name in the cwd's
    /// folder and the id is what follows its first '_'.
    template <class = void>
    [[nodiscard]] static std::string file_name(std::string_view timestamp, std::string_view id) {
        std::string name(timestamp.substr(0, 64));
        for (char& c : name)
            if (c == ':' || c == '.' || c == '/' || c == '\\' || c == '_' ||
                static_cast<unsigned char>(c) < 0x20 || c == '\x7f')
                c = '-';
        return name + "_" + std::string(id) + ".jsonl";
    }

    /// The path of the session file with that id, or none. Throws invalid_session for an id
    /// that cannot name a session.
    template <class = void>
    [[nodiscard]] std::optional<std::string> find_path(std::string_view id) const {
        check_session_id(id);
        std::optional<std::string> found;
        for_each_session_file([&](const std::string& path, std::string_view file_id) {
            if (file_id == id && !found) found = path;
        });
        return found;
    }

    /// Calls `visit(path)` for each cwd folder (`--…--`, a real folder, not a link).
    template <class Visit>
    void for_each_folder(Visit&& visit) const {
        DIR* dir = ::opendir(root_.c_str());
        if (dir == nullptr) return;
        std::vector<std::string> folders;
        while (const dirent* e = ::readdir(dir)) {
            const std::string_view name = e->d_name;
            if (name.size() >= 4 && name.substr(0, 2) == "--" &&
                name.substr(name.size() - 2) == "--")
                folders.emplace_back(name);
        }
        ::closedir(dir);
        for (const auto& folder : folders) {
            struct stat st {};
            const std::string path = root_ + "/" + folder;
            if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) visit(path);
        }
    }

    /// Calls `visit(path, id from the file name)` for each session file of each cwd folder (or
    /// of the one folder given).
    template <class Visit>
    void for_each_session_file(Visit&& visit, const std::string* only_folder = nullptr) const {
        auto each_file = [&](const std::string& folder) {
            DIR* dir = ::opendir(folder.c_str());
            if (dir == nullptr) return;
            while (const dirent* e = ::readdir(dir)) {
                const std::string_view name = e->d_name;
                if (name.empty() || name.front() == '.' || name.size() <= 6 ||
                    name.substr(name.size() - 6) != ".jsonl")
                    continue;
                const auto underscore = name.find('_');
                if (underscore == std::string_view::npos) continue;
                std::string path = folder + "/" + std::string(name);
                visit(path, name.substr(underscore + 1, name.size() - 6 - underscore - 1));
            }
            ::closedir(dir);
        };
        if (only_folder != nullptr) {
            each_file(root_ + "/" + *only_folder);
            return;
        }
        for_each_folder(each_file);
    }

private:
    std::string root_;
    JsonlStorageOptions options_;
};

namespace detail {

template <class = void>
JsonlSessionRepo::session_type make_session(JsonlSessionStorage storage) {
    return JsonlSessionRepo::session_type(
        std::make_shared<JsonlSessionStorage>(std::move(storage)));
}

/// Reads only the first line of a file, at most `limit` bytes; with `identity`, also what ties
/// a summary to the file (see jsonl/detail/summary_cache.hpp).
template <class = void>
std::string read_first_line(const FileOps& ops, const std::string& path, std::size_t limit,
                            std::uint64_t& file_size_out, ListedFile* identity = nullptr) {
    FileHandle fd = open_regular_file(ops, path, O_RDONLY, "session file");
    if (!fd) {
        if (errno == ENOENT)
            throw SessionError(ErrorCode::not_found, "session file '" + path + "' not found");
        if (errno == ELOOP)
            throw SessionError(ErrorCode::storage,
                               "session file '" + path + "' is a symbolic link; refused");
        throw io_error("opening", path, errno);
    }
    if (identity != nullptr) {
        *identity = listed_file(ops, fd.get(), path);
        file_size_out = identity->size;
    } else {
        file_size_out = file_size(ops, fd.get(), path);
    }
    std::string out;
    char buf[4096];
    while (out.size() < limit) {
        const std::size_t want = std::min(sizeof buf, limit - out.size());
        const ssize_t n = ops.read(fd.get(), buf, want);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw io_error("reading", path, errno);
        }
        if (n == 0) return out;
        const std::string_view chunk(buf, static_cast<std::size_t>(n));
        const auto nl = chunk.find('\n');
        if (nl != std::string_view::npos) {
            out.append(chunk.substr(0, nl));
            return out;
        }
        out.append(chunk);
    }
    throw SessionError(ErrorCode::invalid_session,
                       "'" + path + "' line 1: longer than " + std::to_string(limit) + " bytes");
}

/// Creates the session file of a new id under the repository's lock: the id is checked again
/// with the lock held, right before the file gets its name, so that of two processes creating
/// (or forking to) one id exactly one succeeds and the other gets already_exists.
template <class = void>
JsonlSessionStorage create_session_file(const JsonlSessionRepo& repo, const std::string& id,
                                        std::string path, SessionHeader header,
                                        JsonlStorageOptions options,
                                        std::vector<SessionTreeEntry> entries = {}) {
    const auto& ops = ops_or_real(options.file_ops);
    std::optional<FolderLock> lock;
    JsonlSessionStorage storage = JsonlSessionStorage::create(
        std::move(path), std::move(header), std::move(options), std::move(entries), [&] {
            lock.emplace(ops, repo.root());
            if (repo.find_path(id))
                throw SessionError(ErrorCode::already_exists,
                                   "session '" + id + "' already exists");
        });
    return storage;
}

template <class = void>
void prepare_session_folder(const JsonlSessionRepo& repo, const FileOps& ops,
                            const std::string& cwd) {
    if (cwd.find('\0') != std::string::npos)
        throw SessionError(ErrorCode::invalid_session, "cwd contains a NUL character");
    make_folders(ops, repo.root());
    make_folders(ops, repo.root() + "/" + JsonlSessionRepo::folder_name(cwd));
}

}  // namespace detail

/// Removes the hidden temporary files (`.<name>.tmp-<pid>-…`) that processes killed while they
/// created, forked, repaired or upgraded a session left in the repository's cwd folders. Only a
/// file whose writer is gone — the flock its writer holds on it from its creation on is free,
/// whatever process now has the id in its name — and that was last changed at least
/// `older_than` ago is removed: a temporary file a live process is writing is never touched.
/// create and fork call it with the default age (detail::temp_file_grace, 15 minutes). Returns
/// how many files it removed; never throws.
///
/// Complexity: one pass over each cwd folder's names; a few calls per temporary file.
template <class = void>
std::size_t sweep_temporary_files(
    const JsonlSessionRepo& repo,
    std::chrono::seconds older_than = detail::temp_file_grace) noexcept {
    std::size_t removed = 0;
    try {
        const auto& ops = detail::ops_or_real(repo.options().file_ops);
        repo.for_each_folder([&](const std::string& folder) {
            removed += detail::sweep_temp_files(ops, folder, {}, older_than);
        });
    } catch (const std::exception&) {
        // Housekeeping: what could not be looked at now is swept by a later call.
    }
    return removed;
}

/// Creates an empty session file (written atomically) and returns it open for writing. The id
/// is checked before any path is built (invalid_session); a taken id: already_exists. The id is
/// claimed under an flock on the root folder: of processes creating or forking to one new id at
/// the same moment, exactly one succeeds and the others get already_exists. Temporary files that
/// killed writers left are swept first (sweep_temporary_files).
template <class = void>
JsonlSessionRepo::session_type create(JsonlSessionRepo& repo, CreateOptions options = {}) {
    const JsonlStorageOptions& so = repo.options();
    SessionHeader header = detail::new_header(std::move(options), so.environment);
    const std::string id = header.id;
    if (repo.find_path(id))
        throw SessionError(ErrorCode::already_exists, "session '" + id + "' already exists",
                           ErrorLocation{.session = id});
    sweep_temporary_files(repo);
    const auto& ops = detail::ops_or_real(so.file_ops);
    detail::prepare_session_folder(repo, ops, header.cwd);
    std::string path = repo.root() + "/" + JsonlSessionRepo::folder_name(header.cwd) + "/" +
                       JsonlSessionRepo::file_name(header.timestamp, id);
    return detail::make_session(
        detail::create_session_file(repo, id, std::move(path), std::move(header), so));
}

/// Opens a session for writing (takes its writer lock). Unknown id: not_found; invalid id:
/// invalid_session; another writer: locked.
template <class = void>
JsonlSessionRepo::session_type open(JsonlSessionRepo& repo, std::string_view id) {
    auto path = repo.find_path(id);
    if (!path)
        throw SessionError(ErrorCode::not_found, "session '" + std::string(id) + "' not found",
                           ErrorLocation{.session = std::string(id)});
    return detail::make_session(JsonlSessionStorage::open(std::move(*path), repo.options()));
}

/// Opens a session for reading only: no lock, the file is never changed.
template <class = void>
JsonlSessionRepo::session_type open_read_only(const JsonlSessionRepo& repo, std::string_view id) {
    auto path = repo.find_path(id);
    if (!path)
        throw SessionError(ErrorCode::not_found, "session '" + std::string(id) + "' not found",
                           ErrorLocation{.session = std::string(id)});
    return detail::make_session(
        JsonlSessionStorage::open_read_only(std::move(*path), repo.options()));
}

namespace detail {

/// Gives each listed session of `list` its summary: from its folder's summary file while the
/// file is unchanged (`identities`: path → what was seen when listing), otherwise from a
/// read-only open (recorded for the next listing). Each folder's summary file then keeps the
/// records of `names` (its session files now) and is written when it changed.
template <class = void>
void fill_summaries(const JsonlSessionRepo& repo, const FileOps& ops, SessionList& list,
                    const std::map<std::string, ListedFile>& identities,
                    std::map<std::string, std::vector<std::string>>& names) {
    std::map<std::string, SummaryCache> caches;
    for (auto& listing : list.sessions) {
        const std::string folder = parent_folder(listing.path);
        const std::string name(file_name(listing.path));
        auto cache = caches.find(folder);
        if (cache == caches.end())
            cache = caches.emplace(folder, SummaryCache::load(ops, folder)).first;
        const ListedFile& file = identities.at(listing.path);
        if (const SessionSummary* known = cache->second.find(name, file)) {
            listing.summary = *known;
            continue;
        }
        try {
            const auto storage = JsonlSessionStorage::open_read_only(listing.path, repo.options());
            listing.summary = summarize(storage);
            cache->second.put(name, file, *listing.summary);
        } catch (const SessionError&) {
            // Lines that cannot be read (or a file removed meanwhile): no summary; opening the
            // session says why.
        }
    }
    for (auto& [folder, cache] : caches) {
        cache.keep_only(names[folder]);
        cache.save(ops, folder);
    }
}

}  // namespace detail

/// The sessions, newest first (by creation time) unless the options say otherwise, optionally
/// of one working directory, paged by the options' limit and cursor. Reads only each file's
/// first line (at most 1 MiB); a file whose header is invalid is skipped and reported in
/// `problems`, never changed.
///
/// With options.summaries, each listed session also gets its SessionSummary. A cwd folder keeps
/// them in its summary file (`.agentcore-summaries`, 0600, see jsonl/detail/summary_cache.hpp),
/// trusted for a session file while it has the device, inode, size, modification time and last
/// 4 KiB it had when its summary was made. A file that changed (pi or another writer appended,
/// a repair rewrote it) is opened read-only again (with the resume index, when the repository
/// keeps one, only its new lines are read) and its record replaced; the summary file is then
/// written anew. A session whose lines cannot be read gets no summary.
///
/// Complexity: per session file, an open and two reads of at most 4 KiB (its header, its end);
/// with summaries, one read of each listed folder's summary file, and an open of each listed
/// session that changed since the last listing.
template <class T = void>
SessionList list(const JsonlSessionRepo& repo, const ListOptions& options = {}) {
    const auto& ops = detail::ops_or_real(repo.options().file_ops);
    detail::dependent<SessionList, T> out;
    std::map<std::string, detail::ListedFile> identities;
    std::map<std::string, std::vector<std::string>> names;
    auto visit = [&](const std::string& path, std::string_view) {
        try {
            std::uint64_t size = 0;
            detail::ListedFile identity;
            const std::string line = detail::read_first_line(
                ops, path, std::size_t{1} << 20, size, options.summaries ? &identity : nullptr);
            detail::dependent<SessionListing, T> listing;
            try {
                listing.header = decode_header(line, &listing.dialect);
            } catch (const SessionError& e) {
                throw SessionError(ErrorCode::invalid_session,
                                   "'" + path + "' line 1: " + std::string(e.detail()),
                                   e.location().merged(ErrorLocation{.file = path, .line = 1}));
            }
            if (options.summaries) {
                names[detail::parent_folder(path)].emplace_back(detail::file_name(path));
                identities.emplace(path, identity);
            }
            if (options.cwd && listing.header.cwd != *options.cwd) return;
            listing.path = path;
            listing.file_size = size;
            out.sessions.push_back(std::move(listing));
        } catch (const SessionError& e) {
            // Removed since its folder was read (another process's remove): gone, not a problem.
            if (e.code() == ErrorCode::not_found) return;
            out.problems.push_back(ListProblem{path, e.what()});
        }
    };
    if (options.cwd) {
        const std::string folder = JsonlSessionRepo::folder_name(*options.cwd);
        repo.for_each_session_file(visit, &folder);
    } else {
        repo.for_each_session_file(visit);
    }
    detail::page_listing(out, options);
    if (options.summaries) detail::fill_summaries(repo, ops, out, identities, names);
    return out;
}

namespace detail {

// Unlinks a session file while holding its writer lock (waiting up to `wait`), so that no
// writer can acknowledge an append to it afterwards. Anything else in its place (a link, a
// FIFO) is unlinked without being opened.
template <class = void>
void remove_session_file(const FileOps& ops, const std::string& path,
                         std::chrono::milliseconds wait) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        struct stat st {};
        if (ops.lstat(path.c_str(), &st) != 0) {
            if (errno == ENOENT) return;
            throw io_error("stat of", path, errno);
        }
        FileHandle fd;
        if (S_ISREG(st.st_mode)) {
            fd = open_file(ops, path, O_RDWR | O_NONBLOCK);
            if (!fd) {
                if (errno == ENOENT) return;
                if (errno == ELOOP) continue;  // replaced by a link meanwhile
                throw io_error("opening", path, errno);
            }
            try {
                lock_exclusive(ops, fd.get(), wait, path);
            } catch (const SessionError& e) {
                if (e.code() != ErrorCode::locked) throw;
                throw SessionError(
                    ErrorCode::locked,
                    "session file '" + path + "' is open for writing elsewhere; not removed");
            }
            const FileAtPath at = file_at_path(ops, fd.get(), path);
            if (at == FileAtPath::gone) return;
            if (at == FileAtPath::replaced) continue;
        }
        if (ops.unlink(path.c_str()) != 0 && errno != ENOENT)
            throw io_error("removing", path, errno);
        // Its resume index (JsonlStorageOptions::resume_index), if it has one, goes with it.
        const std::string index = JsonlSessionStorage::resume_index_path(path);
        if (ops.unlink(index.c_str()) != 0 && errno != ENOENT)
            throw io_error("removing", index, errno);
        sync_folder(ops, parent_folder(path));
        return;
    }
    throw SessionError(ErrorCode::storage,
                       "session file '" + path + "' keeps being replaced; not removed");
}

}  // namespace detail

/// Removes a session file; an unknown id does nothing. An invalid id: invalid_session.
///
/// A session open for writing is not removed: remove takes the file's writer lock first,
/// waiting up to the repository's `lock_wait`, and throws `locked` when a writer keeps it. A
/// writer that was waiting for the lock while the file was removed gets not_found. (A file
/// unlinked by other means while a writer has it open makes that writer's next append throw
/// `storage`: nothing is acknowledged into a file without a name.)
template <class = void>
void remove(JsonlSessionRepo& repo, std::string_view id) {
    const auto& ops = detail::ops_or_real(repo.options().file_ops);
    check_session_id(id);
    std::vector<std::string> paths;
    repo.for_each_session_file([&](const std::string& path, std::string_view file_id) {
        if (file_id == id) paths.push_back(path);
    });
    for (const auto& path : paths) detail::remove_session_file(ops, path, repo.options().lock_wait);
}

/// Forks a session into a new file (SPEC §4.9): the entries of get_entries_to_fork with the
/// same ids, header parent_session = the source file's path, cwd and metadata inherited unless
/// given, the source's dialect. Written to a temporary file, synced, moved into place, the
/// folder synced: list never sees a half-written fork. The source is read without its lock and
/// not changed. Unknown source: not_found; taken new id: already_exists. Temporary files that
/// killed writers left are swept first (sweep_temporary_files).
template <class T = void>
JsonlSessionRepo::session_type fork(JsonlSessionRepo& repo, std::string_view source_id,
                                    const ForkOptions& options = {}) {
    // Both ids are checked before any file is touched.
    if (options.session_id) check_session_id(*options.session_id);
    if (options.metadata) detail::check_metadata_nesting(*options.metadata);
    auto source_path = repo.find_path(source_id);
    if (!source_path)
        throw SessionError(ErrorCode::not_found,
                           "session '" + std::string(source_id) + "' not found",
                           ErrorLocation{.session = std::string(source_id)});
    JsonlStorageOptions so = repo.options();
    const JsonlSessionStorage source = JsonlSessionStorage::open_read_only(*source_path, so);
    auto entries = prepare_fork_entries<detail::dependent<SessionTreeEntry, T>>(
        get_entries_to_fork(source, options));
    SessionHeader header =
        detail::fork_header(source.metadata(), options, so.environment, *source_path);
    const std::string id = header.id;
    if (repo.find_path(id))
        throw SessionError(ErrorCode::already_exists, "session '" + id + "' already exists",
                           ErrorLocation{.session = id});
    sweep_temporary_files(repo);
    const auto& ops = detail::ops_or_real(so.file_ops);
    detail::prepare_session_folder(repo, ops, header.cwd);
    std::string path = repo.root() + "/" + JsonlSessionRepo::folder_name(header.cwd) + "/" +
                       JsonlSessionRepo::file_name(header.timestamp, id);
    so.dialect = source.dialect();
    return detail::make_session(detail::create_session_file(
        repo, id, std::move(path), std::move(header), std::move(so), std::move(entries)));
}

/// Creates a session file holding `header` as it is and `entries` in order, written in
/// `dialect` (ImportingRepository): for copies of sessions stored elsewhere. Laid out as create
/// lays out a session (the header's cwd and creation time name its folder and file), written
/// to a temporary file, synced and moved into place under the repository's lock as fork is: list
/// never sees half a session. In the pi dialect a `leaf` entry nothing hangs under is placed under
/// its target, as set_leaf_id writes it there. A taken id: already_exists; an invalid id:
/// invalid_session; entries that do not form a tree: already_exists / invalid_entry; in each
/// case no session file is written.
template <class = void>
JsonlSessionRepo::session_type import_session(JsonlSessionRepo& repo, SessionHeader header,
                                              std::vector<SessionTreeEntry> entries,
                                              Dialect dialect = Dialect::native) {
    check_session_id(header.id);
    const std::string id = header.id;
    if (repo.find_path(id))
        throw SessionError(ErrorCode::already_exists, "session '" + id + "' already exists",
                           ErrorLocation{.session = id});
    JsonlStorageOptions so = repo.options();
    so.dialect = dialect;
    const auto& ops = detail::ops_or_real(so.file_ops);
    detail::prepare_session_folder(repo, ops, header.cwd);
    std::string path = repo.root() + "/" + JsonlSessionRepo::folder_name(header.cwd) + "/" +
                       JsonlSessionRepo::file_name(header.timestamp, id);
    return detail::make_session(detail::create_session_file(
        repo, id, std::move(path), std::move(header), std::move(so), std::move(entries)));
}

namespace detail {

/// search_storage for a JSONL file opened by the storage (a lenient repository's files, whose
/// positions skip the bad lines only an open finds): a line whose bytes cannot hold a hit
/// (raw_may_hold) is not decoded.
template <class = void>
bool search_jsonl_storage(const SearchQuery& query, const SearchOptions& options,
                          const std::vector<IndexWord>& words, const JsonlSessionStorage& storage,
                          const SearchHitSink& sink) {
    const SessionHeader& header = storage.metadata();
    const std::string name = storage.get_session_name().value_or("");
    if (!session_passes(options, header, name)) return true;
    for (std::size_t seq = 0; seq < storage.entry_count(); ++seq) {
        if (!words.empty()) {
            const std::optional<std::string> line = storage.entry_line(seq);
            if (line && !raw_may_hold(words, *line)) continue;
        }
        const auto handles = storage.get_entries(EntriesQuery{seq, 1});
        if (handles.empty()) return true;
        if (!search_entry(query, options, header, name, *handles.front(), seq, sink)) return false;
    }
    return true;
}

/// What one thread of the JSONL search keeps from file to file.
struct JsonlScanBuffers {
    std::string bytes;   // the file
    std::string folded;  // folded stretches (folded_may_hold)
    SearchLineFields fields;
    SkipMemo memo;  // where the values of the line being read end
};

/// The search of one session file without opening it as a storage: the file is read once, and
/// its lines are walked when its folded bytes may hold the words the query needs
/// (folded_may_hold); a line whose folded bytes lack one of them (and that has no `\u` escape)
/// is passed over, the others are checked by the JSON scanner and only their text fields are
/// read (SearchLineReader; a line of an unusual shape is decoded), then matched. Positions count
/// the non-blank lines after the header, as the storage's do for a file that opens. A candidate
/// line that is not valid JSON ends the search with invalid_entry naming the file and line, unless
/// it is the file's last line (a torn append, which readers ignore); a hit's line also meets the
/// codec's field rules (check_entry_fields). Returns false when the sink stopped; nullopt when the
/// file cannot be read here (the storage's open then reports why, or finds it removed).
template <class T = void>
std::optional<bool> scan_session_file(const JsonlStorageOptions& storage_options,
                                      const std::string& path, const SearchQuery& query,
                                      const SearchOptions& options,
                                      const dependent<std::vector<IndexWord>, T>& words,
                                      dependent<JsonlScanBuffers, T>& buffers,
                                      const SearchHitSink& sink) {
    const FileOps& ops = ops_or_real(storage_options.file_ops);
    {
        const FileHandle fd = open_regular_file(ops, path, O_RDONLY);
        if (!fd) return std::nullopt;
        const std::uint64_t size = file_size(ops, fd.get(), path);
        if (size == 0) return std::nullopt;
        buffers.bytes.resize(static_cast<std::size_t>(size));
        if (pread_all(ops, fd.get(), buffers.bytes.data(), buffers.bytes.size(), 0) != 0)
            return std::nullopt;
    }
    const std::string_view data = buffers.bytes;
    const auto fail = [&](ErrorCode code, std::size_t line, const std::string& reason) {
        throw SessionError(code, "'" + path + "' line " + std::to_string(line) + ": " + reason,
                           ErrorLocation{.file = path, .line = line});
    };
    LineReader reader(data);
    LineSpan line;
    reader.next(line);
    const std::string_view header_text = reader.text(line);
    // The header, the dialect and the name are read when the first candidate line is found.
    dependent<std::optional<SessionHeader>, T> header;
    Dialect dialect = Dialect::native;
    std::string name;
    const auto open_session = [&]() -> bool {
        if (!header) {
            try {
                header = decode_header(header_text, &dialect);
            } catch (const SessionError& e) {
                fail(ErrorCode::invalid_session, 1, std::string(e.detail()));
            }
            if (header->version != current_session_version)
                fail(ErrorCode::invalid_session, 1,
                     "session format version " + std::to_string(header->version) +
                         " must be upgraded to version 3 before it is opened");
            name = session_file_name(data, dialect).value_or("");
        }
        return session_passes(options, *header, name);
    };
    if (options.session_name && !open_session()) return true;
    // Most files of a search for a rare word are ruled out here, mostly without folding them.
    if (!words.empty() && !folded_may_hold(words, data, buffers.folded)) return true;
    dependent<std::optional<SearchLineReader>, T> line_reader;
    std::size_t seq = 0;
    while (reader.next(line)) {
        const std::string_view text = reader.text(line);
        if (blank_line(text)) continue;
        const std::uint64_t at = seq++;
        if (!words.empty() && !folded_may_hold(words, text, buffers.folded)) continue;
        if (!open_session()) return true;
        dependent<ScannedEntry, T> scanned;
        std::string reason;
        if (!JsonScanner::scan_entry(text, dialect, scanned, reason, &buffers.memo)) {
            if (line.end == data.size()) break;  // a torn last line
            fail(ErrorCode::invalid_entry, line.number, reason);
        }
        if (!line_reader) line_reader.emplace(dialect, options.text);
        const auto line_fails = [&](const std::string& why) {
            fail(ErrorCode::invalid_entry, line.number, why);
        };
        if (!search_entry_line(query, options, *line_reader, buffers.fields, text, &buffers.memo,
                               dialect, *header, name, at, sink, line_fails))
            return false;
    }
    return true;
}

}  // namespace detail

/// Streams the hits of `query` over the session files of `repo` (SearchOptions and
/// search_each in search.hpp): the files of the options' cwd folder only when a cwd is given,
/// read without locks (never changed) by as many threads as the machine has processors
/// (at most 8), each file by one thread; `sink` is called by one thread at a time, as hits are
/// found. Each file is read once (detail::scan_session_file): a line whose folded bytes lack a
/// word the query needs is passed over, the others are validated and only their
/// text fields read (a lenient repository's files are opened as storages). A file removed
/// while the search runs is skipped; any other error of a file that may hold a hit (a damaged
/// line that may hold one, a damaged header, an unreadable file) ends the search and is thrown
/// once the threads have stopped.
///
/// Complexity: reads every file of the folders searched once.
template <class T = void>
void search_each(const JsonlSessionRepo& repo, const SearchQuery& query,
                 const SearchOptions& options, const SearchHitSink& sink) {
    detail::check_search_options(options);
    detail::dependent<std::vector<std::string>, T> paths;
    const auto collect = [&](const std::string& path, std::string_view) { paths.push_back(path); };
    if (options.cwd) {
        const std::string folder = JsonlSessionRepo::folder_name(*options.cwd);
        repo.for_each_session_file(collect, &folder);
    } else {
        repo.for_each_session_file(collect);
    }
    std::sort(paths.begin(), paths.end());
    const detail::dependent<std::vector<detail::IndexWord>, T> words = detail::index_words(query);
    detail::SharedCounter<std::size_t> next{0};
    detail::SharedCounter<bool> stop{false};
    detail::Mutex sink_mutex;
    std::exception_ptr failure;
    const SearchHitSink locked = [&](SearchHit&& hit) {
        const detail::Mutex::Lock guard(sink_mutex);
        if (stop.load()) return false;
        if (!sink(std::move(hit))) stop.store(true);
        return !stop.load();
    };
    const auto work = [&] {
        detail::dependent<detail::JsonlScanBuffers, T> buffers;
        while (!stop.load()) {
            const std::size_t i = next.fetch_add(1);
            if (i >= paths.size()) return;
            try {
                if (!repo.options().lenient) {
                    const std::optional<bool> scanned = detail::scan_session_file(
                        repo.options(), paths[i], query, options, words, buffers, locked);
                    if (scanned) {
                        if (!*scanned) return;
                        continue;
                    }
                }
                // A lenient repository's file, or one that could not be read here: the
                // storage's open reads it (and says what is wrong, or finds it removed).
                const detail::dependent<JsonlSessionStorage, T> storage =
                    JsonlSessionStorage::open_read_only(paths[i], repo.options());
                if (!detail::search_jsonl_storage(query, options, words, storage, locked)) return;
            } catch (const SessionError& e) {
                if (e.code() == ErrorCode::not_found) continue;  // removed since it was listed
                const detail::Mutex::Lock guard(sink_mutex);
                if (!failure) failure = std::current_exception();
                stop.store(true);
            } catch (...) {
                const detail::Mutex::Lock guard(sink_mutex);
                if (!failure) failure = std::current_exception();
                stop.store(true);
            }
        }
    };
    const std::size_t threads =
        std::min<std::size_t>({std::size_t{detail::online_cpus()}, std::size_t{8}, paths.size()});
    detail::run_on_threads(threads, work);
    if (failure) std::rethrow_exception(failure);
}

static_assert(SessionRepository<JsonlSessionRepo>);
static_assert(ImportingRepository<JsonlSessionRepo>);

}  // namespace agentcore

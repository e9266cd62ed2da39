#pragma once
// Publishing files atomically: written to a temporary file in the same folder, synced, moved
// into place, the folder synced. A crash leaves either nothing or the whole file under its name;
// temporary names start with '.' and never end in ".jsonl", so listings never show them.
//
// A process killed while it writes leaves its temporary file behind. Each temporary file is
// locked (flock) by its writer from the moment it exists; the lock dies with the process, so a
// sweep (sweep_temp_files) removes exactly the temporary files whose writer is gone, whatever
// process now has the id written in the name.

#include <agentcore/detail/file_ops.hpp>
#include <agentcore/detail/threads.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <agentcore/detail/chrono.hpp>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore::detail {

/// A file name with ':' and '.' of a timestamp replaced by '-' (safe on every file system).
inline std::string file_stamp(std::int64_t unix_ms) {
    std::string stamp = format_timestamp(unix_ms);
    for (char& c : stamp)
        if (c == ':' || c == '.') c = '-';
    return stamp;
}

/// How old a temporary file whose writer is gone must be before a sweep removes it. The lock
/// alone tells a live writer from a dead one; the age covers the moment between a file's
/// creation and its lock, and writers that do not lock their temporary files.
inline constexpr std::chrono::seconds temp_file_grace{15 * 60};

/// Takes the lock of a temporary file just created (see the top of this header). A sweep may
/// hold it for a moment while it looks at the file (and leaves it: the file is new): wait for
/// that. Returns 0 or the errno of the failure.
inline int lock_new_temp_file(const FileOps& ops, int fd) noexcept {
    for (int waited_ms = 0;;) {
        if (ops.flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
        const int err = errno;
        if (err == EINTR) continue;
        if ((err != EWOULDBLOCK && err != EAGAIN) || waited_ms >= 2000) return err;
        pause_for(std::chrono::milliseconds(1));
        ++waited_ms;
    }
}

/// True for the names temporary files are given, `.<target>.tmp-<pid>-<digits, hex and '-'>`,
/// of `target` only when one is given.
inline bool is_temp_file_name(std::string_view name, std::string_view target = {}) noexcept {
    const auto at = name.rfind(".tmp-");
    if (name.empty() || name.front() != '.' || at == std::string_view::npos || at < 2) return false;
    if (!target.empty() && name.substr(1, at - 1) != target) return false;
    const std::string_view rest = name.substr(at + 5);
    const auto dash = rest.find('-');
    if (dash == 0 || dash == std::string_view::npos || dash + 1 == rest.size()) return false;
    for (std::size_t i = 0; i < rest.size(); ++i) {
        const char c = rest[i];
        const bool digit = c >= '0' && c <= '9';
        if (i < dash ? !digit : !(digit || (c >= 'a' && c <= 'f') || c == '-')) return false;
    }
    return true;
}

/// Removes the temporary files in `folder` (only those of the file named `target`, when given)
/// that killed writers left: a regular file with a temporary name whose lock is free (its
/// writer is gone) and that was last changed at least `older_than` ago. A temporary file a
/// live process writes is never removed: its writer holds the lock until it publishes or
/// removes the file. Anything else with such a name (a link, a FIFO) is left alone. Returns how
/// many files it removed; never throws (what it cannot look at, it leaves).
///
/// Complexity: one pass over the folder's names; a few calls per temporary file.
inline std::size_t sweep_temp_files(const FileOps& ops, const std::string& folder,
                                    std::string_view target = {},
                                    std::chrono::seconds older_than = temp_file_grace) noexcept {
    std::size_t removed = 0;
    try {
        std::vector<std::string> names;
        {
            const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(folder.c_str()), &::closedir);
            if (!dir) return 0;
            while (const dirent* e = ::readdir(dir.get()))
                if (is_temp_file_name(e->d_name, target)) names.emplace_back(e->d_name);
        }
        const auto cutoff = std::chrono::system_clock::now() - older_than;
        for (const auto& name : names) {
            std::string path = folder;
            path += '/';
            path += name;
            struct stat st {};
            if (ops.lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
            FileHandle fd = open_file(ops, path, O_RDONLY | O_NONBLOCK);
            if (!fd) continue;
            if (ops.flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;  // its writer is alive
            // Looked at again with the lock held: a writer cannot take it from here on.
            if (ops.fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
            const auto changed = std::chrono::system_clock::time_point(
                std::chrono::duration_cast<std::chrono::system_clock::duration>(
                    std::chrono::seconds(st.st_mtim.tv_sec) +
                    std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
            if (changed > cutoff) continue;
            if (file_at_path(ops, fd.get(), path) != FileAtPath::same) continue;
            if (ops.unlink(path.c_str()) == 0) ++removed;
        }
    } catch (const std::exception&) {
        // Sweeping is housekeeping: whatever failed is tried again by the next sweep.
    }
    return removed;
}

/// A new temporary file beside `target`, locked from its creation on (see the top of this
/// header); removed on destruction unless published. Once published, the lock stays with the
/// descriptor publish returns.
class TempFile {
public:
    // The name takes no randomness from the session's Environment: a deterministic
    // environment must give the same entry ids whatever the storage.
    TempFile(const FileOps& ops, std::string target) : ops_(&ops), target_(std::move(target)) {
        static SharedCounter<std::uint64_t> counter{0};
        for (int attempt = 0; attempt < 100; ++attempt) {
            const auto tick = static_cast<std::uint64_t>(
                std::chrono::steady_clock::now().time_since_epoch().count());
            std::string name = parent_folder(target_) + "/." + std::string(file_name(target_)) +
                               ".tmp-" + std::to_string(::getpid()) + "-" +
                               std::to_string(counter.fetch_add(1)) + "-";
            append_hex(name, tick & 0xFFFFFFFFULL, 8);
            fd_ = open_file(ops, name, O_RDWR | O_CREAT | O_EXCL, 0600);
            if (fd_) {
                if (const int err = lock_new_temp_file(ops, fd_.get())) {
                    fd_.reset();
                    ops.unlink(name.c_str());
                    throw io_error("locking", name, err);
                }
                path_ = std::move(name);
                return;
            }
            if (errno != EEXIST) throw io_error("creating", name, errno);
        }
        throw SessionError(ErrorCode::storage,
                           "could not create a temporary file beside '" + target_ + "'");
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (!published_ && !path_.empty()) ops_->unlink(path_.c_str());
    }

    [[nodiscard]] int fd() const noexcept { return fd_.get(); }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

    /// Appends bytes.
    void write(std::string_view data) {
        if (const int err = pwrite_all(*ops_, fd_.get(), data, size_))
            throw io_error("writing", path_, err);
        size_ += data.size();
    }

    /// Flushes the content to stable storage.
    void sync() {
        if (const int err = sync_file(*ops_, fd_.get(), false))
            throw io_error("syncing", path_, err);
    }

    /// Gives the file its final name. `replace`: an existing file is replaced (rename);
    /// otherwise an existing file makes this throw already_exists (link, then unlink the
    /// temporary name). Syncs the folder. Returns the descriptor, still open.
    FileHandle publish(bool replace) {
        if (replace) {
            if (ops_->rename(path_.c_str(), target_.c_str()) != 0)
                throw io_error("renaming into", target_, errno);
        } else {
            if (ops_->link(path_.c_str(), target_.c_str()) != 0) {
                const int err = errno;
                if (err == EEXIST)
                    throw SessionError(ErrorCode::already_exists,
                                       "file '" + target_ + "' already exists");
                throw io_error("publishing", target_, err);
            }
            ops_->unlink(path_.c_str());
        }
        published_ = true;
        sync_folder(*ops_, parent_folder(target_));
        return std::move(fd_);
    }

private:
    const FileOps* ops_;
    std::string target_;
    std::string path_;
    FileHandle fd_;
    std::uint64_t size_ = 0;
    bool published_ = false;
};

/// Writes `bytes` to a new file `<path>.<kind>-<stamp>` (a counter added when taken), synced,
/// mode 0600. Returns its path.
inline std::string write_side_file(const FileOps& ops, const std::string& path,
                                   std::string_view kind, std::int64_t now_ms,
                                   std::string_view bytes) {
    const std::string base = path + "." + std::string(kind) + "-" + file_stamp(now_ms);
    for (int n = 0; n < 1000; ++n) {
        std::string name = n == 0 ? base : base + "-" + std::to_string(n);
        FileHandle fd = open_file(ops, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (!fd) {
            if (errno == EEXIST) continue;
            throw io_error("creating", name, errno);
        }
        if (const int err = pwrite_all(ops, fd.get(), bytes, 0)) {
            ops.unlink(name.c_str());
            throw io_error("writing", name, err);
        }
        if (const int err = sync_file(ops, fd.get(), false)) {
            ops.unlink(name.c_str());
            throw io_error("syncing", name, err);
        }
        sync_folder(ops, parent_folder(name));
        return name;
    }
    throw SessionError(ErrorCode::storage,
                       "could not create a " + std::string(kind) + " file beside '" + path + "'");
}

}  // namespace agentcore::detail

#pragma once
// The file operations the JSONL storage and repository perform, behind a table of function
// pointers so that tests can inject faults (a failing write, a short write, ENOSPC, EIO on sync)
// without touching the code under test. Production uses `FileOps::real()`: one indirect call per
// system call, nothing else.
//
// POSIX only. Every helper here retries EINTR and reports failures as SessionError(storage) naming
// the file and the operation; error messages never carry file contents.

#include <agentcore/error.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace agentcore::detail {

/// The system calls used by the file layer. Each member has the signature and errno contract of
/// the POSIX call it is named after.
struct FileOps {
    int (*open)(const char* path, int flags, mode_t mode);
    int (*openat)(int dir_fd, const char* path, int flags, mode_t mode);
    int (*close)(int fd);
    ssize_t (*read)(int fd, void* buf, std::size_t count);
    ssize_t (*pread)(int fd, void* buf, std::size_t count, off_t offset);
    ssize_t (*write)(int fd, const void* buf, std::size_t count);
    ssize_t (*pwrite)(int fd, const void* buf, std::size_t count, off_t offset);
    int (*fdatasync)(int fd);
    int (*fsync)(int fd);
    int (*ftruncate)(int fd, off_t length);
    int (*fstat)(int fd, struct stat* st);
    int (*lstat)(const char* path, struct stat* st);
    int (*rename)(const char* from, const char* to);
    int (*link)(const char* from, const char* to);
    int (*unlink)(const char* path);
    int (*mkdir)(const char* path, mode_t mode);
    int (*flock)(int fd, int operation);
    void* (*mmap)(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset);
    int (*munmap)(void* addr, std::size_t length);
    int (*madvise)(void* addr, std::size_t length, int advice);

    /// The real system calls.
    static const FileOps& real() noexcept {
        static const FileOps ops{
            [](const char* p, int f, mode_t m) { return ::open(p, f, m); },
            [](int d, const char* p, int f, mode_t m) { return ::openat(d, p, f, m); },
            [](int fd) { return ::close(fd); },
            [](int fd, void* b, std::size_t n) { return ::read(fd, b, n); },
            [](int fd, void* b, std::size_t n, off_t o) { return ::pread(fd, b, n, o); },
            [](int fd, const void* b, std::size_t n) { return ::write(fd, b, n); },
            [](int fd, const void* b, std::size_t n, off_t o) { return ::pwrite(fd, b, n, o); },
            [](int fd) { return ::fdatasync(fd); },
            [](int fd) { return ::fsync(fd); },
            [](int fd, off_t n) { return ::ftruncate(fd, n); },
            [](int fd, struct stat* st) { return ::fstat(fd, st); },
            [](const char* p, struct stat* st) { return ::lstat(p, st); },
            [](const char* a, const char* b) { return ::rename(a, b); },
            [](const char* a, const char* b) { return ::link(a, b); },
            [](const char* p) { return ::unlink(p); },
            [](const char* p, mode_t m) { return ::mkdir(p, m); },
            [](int fd, int op) { return ::flock(fd, op); },
            [](void* a, std::size_t n, int prot, int flags, int fd, off_t o) {
                return ::mmap(a, n, prot, flags, fd, o);
            },
            [](void* a, std::size_t n) { return ::munmap(a, n); },
            [](void* a, std::size_t n, int advice) { return ::madvise(a, n, advice); },
        };
        return ops;
    }
};

/// The table to use: `ops`, or the real system calls when null.
inline const FileOps& ops_or_real(const FileOps* ops) noexcept {
    return ops ? *ops : FileOps::real();
}

/// A storage error for a failed operation on `path`, with errno's text.
inline SessionError io_error(std::string_view what, std::string_view path, int err) {
    return SessionError(ErrorCode::storage, std::string(what) + " '" + std::string(path) +
                                                "' failed: " + std::strerror(err));
}

/// The folder part of a path ("." when there is none).
inline std::string parent_folder(std::string_view path) {
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos) return ".";
    if (slash == 0) return "/";
    return std::string(path.substr(0, slash));
}

/// The last component of a path.
inline std::string_view file_name(std::string_view path) noexcept {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// An owned file descriptor, closed through its ops table.
class FileHandle {
public:
    FileHandle() = default;
    FileHandle(const FileOps& ops, int fd) noexcept : ops_(&ops), fd_(fd) {}
    FileHandle(FileHandle&& other) noexcept : ops_(other.ops_), fd_(std::exchange(other.fd_, -1)) {}
    FileHandle& operator=(FileHandle&& other) noexcept {
        if (this != &other) {
            reset();
            ops_ = other.ops_;
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    FileHandle(const FileHandle&) = delete;
    FileHandle& operator=(const FileHandle&) = delete;
    ~FileHandle() { reset(); }

    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
    explicit operator bool() const noexcept { return valid(); }

    /// Closes the descriptor (errors ignored: nothing useful can be done about them here).
    void reset() noexcept {
        if (fd_ >= 0 && ops_ != nullptr) ops_->close(fd_);
        fd_ = -1;
    }

private:
    const FileOps* ops_ = nullptr;
    int fd_ = -1;
};

/// open(2) with O_CLOEXEC and O_NOFOLLOW always added; retries EINTR. Returns an invalid
/// handle and sets errno on failure.
inline FileHandle open_file(const FileOps& ops, const std::string& path, int flags,
                            mode_t mode = 0600) {
    for (;;) {
        const int fd = ops.open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd >= 0) return FileHandle(ops, fd);
        if (errno != EINTR) return {};
    }
}

/// What a file that is not a regular file is, for error messages.
inline const char* special_file_kind(mode_t mode) noexcept {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISDIR(mode)) return "a folder";
    return "a special file";
}

/// open_file for a file that must be a regular file (only regular files are sessions): opened
/// with O_NONBLOCK, so that a FIFO or a device in its place never blocks the open, checked with
/// fstat, then made blocking again. Returns an invalid handle with errno set when the open
/// fails; throws `storage` naming `what`, the path and the kind of file when it is not regular.
inline FileHandle open_regular_file(const FileOps& ops, const std::string& path, int flags,
                                    std::string_view what = "file") {
    FileHandle fd = open_file(ops, path, flags | O_NONBLOCK);
    if (!fd) return fd;
    struct stat st {};
    if (ops.fstat(fd.get(), &st) != 0) throw io_error("stat of", path, errno);
    if (!S_ISREG(st.st_mode))
        throw SessionError(ErrorCode::storage, std::string(what) + " '" + path +
                                                   "' is not a regular file (" +
                                                   special_file_kind(st.st_mode) + "); refused");
    const int fl = ::fcntl(fd.get(), F_GETFL);
    if (fl < 0 || ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0)
        throw io_error("opening", path, errno);
    return fd;
}

/// Writes all of `data` at `offset` in one loop of pwrite calls. Returns 0, or the errno of the
/// failure (a write that makes no progress counts as ENOSPC).
inline int pwrite_all(const FileOps& ops, int fd, std::string_view data,
                      std::uint64_t offset) noexcept {
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ops.pwrite(fd, data.data() + done, data.size() - done,
                                     static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) return ENOSPC;
        done += static_cast<std::size_t>(n);
    }
    return 0;
}

/// Reads exactly `count` bytes at `offset`. Returns 0, or the errno of the failure (EIO when the
/// file ends early).
inline int pread_all(const FileOps& ops, int fd, char* out, std::size_t count,
                     std::uint64_t offset) noexcept {
    std::size_t done = 0;
    while (done < count) {
        const ssize_t n =
            ops.pread(fd, out + done, count - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) return EIO;
        done += static_cast<std::size_t>(n);
    }
    return 0;
}

/// fdatasync/fsync retried on EINTR. Returns 0 or errno.
inline int sync_file(const FileOps& ops, int fd, bool data_only) noexcept {
    for (;;) {
        const int rc = data_only ? ops.fdatasync(fd) : ops.fsync(fd);
        if (rc == 0) return 0;
        if (errno != EINTR) return errno;
    }
}

/// ftruncate retried on EINTR. Returns 0 or errno.
inline int truncate_file(const FileOps& ops, int fd, std::uint64_t size) noexcept {
    for (;;) {
        if (ops.ftruncate(fd, static_cast<off_t>(size)) == 0) return 0;
        if (errno != EINTR) return errno;
    }
}

/// Syncs a folder so that a rename or a new name in it survives power loss.
inline void sync_folder(const FileOps& ops, const std::string& folder) {
    // The folder itself may be reached through a symbolic link (a user's root folder): only
    // file names are opened with O_NOFOLLOW.
    int fd = -1;
    do {
        fd = ops.open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) throw io_error("opening folder", folder, errno);
    FileHandle dir(ops, fd);
    if (const int err = sync_file(ops, dir.get(), false))
        throw io_error("syncing folder", folder, err);
}

/// The size of an open file.
inline std::uint64_t file_size(const FileOps& ops, int fd, std::string_view path) {
    struct stat st {};
    if (ops.fstat(fd, &st) != 0) throw io_error("stat of", path, errno);
    return static_cast<std::uint64_t>(st.st_size);
}

/// Whether a file open as `fd` is still the one at `path`.
enum class FileAtPath { same, gone, replaced };

/// Compares the open file with what `path` names now (device and inode; the path's last
/// component is not followed).
inline FileAtPath file_at_path(const FileOps& ops, int fd, const std::string& path) {
    struct stat mine {};
    struct stat there {};
    if (ops.fstat(fd, &mine) != 0) throw io_error("stat of", path, errno);
    if (ops.lstat(path.c_str(), &there) != 0) {
        if (errno == ENOENT) return FileAtPath::gone;
        throw io_error("stat of", path, errno);
    }
    return mine.st_dev == there.st_dev && mine.st_ino == there.st_ino ? FileAtPath::same
                                                                      : FileAtPath::replaced;
}

/// Creates a folder with mode 0700; an existing folder is fine (a symlink or file in its place
/// is not). Creates missing parents too, and syncs the parent of each folder it creates.
inline void make_folders(const FileOps& ops, const std::string& path) {
    if (path.empty()) return;
    struct stat st {};
    auto refuse = [&] {
        if (S_ISLNK(st.st_mode))
            throw SessionError(ErrorCode::storage,
                               "'" + path +
                                   "' is a symbolic link; refused: session folders are used "
                                   "without following links");
        throw SessionError(ErrorCode::storage, "'" + path + "' exists and is not a folder");
    };
    if (ops.lstat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return;
        refuse();
    }
    const std::string parent = parent_folder(path);
    if (parent != path && parent != "." && parent != "/") make_folders(ops, parent);
    if (ops.mkdir(path.c_str(), 0700) == 0) {
        // The new folder survives power loss only once its parent's entry for it does.
        sync_folder(ops, parent);
    } else if (errno != EEXIST) {
        throw io_error("creating folder", path, errno);
    }
    if (ops.lstat(path.c_str(), &st) != 0) throw io_error("stat of", path, errno);
    if (!S_ISDIR(st.st_mode)) refuse();
}

/// A read-only view of the first `size` bytes of a file; released on destruction.
///
/// The first `mapped` bytes (rounded down to a page) are a private mapping of the file; the rest
/// is read with pread into private memory beside it, so that the view is one contiguous buffer.
/// A page of a file mapping that a writer cuts off (ftruncate) kills the process that touches it
/// with SIGBUS: only the part no writer can cut may be mapped. A file found shorter than `size`
/// while its rest is read gives a shorter view.
class FileMapping {
public:
    FileMapping() = default;
    FileMapping(const FileOps& ops, int fd, std::size_t size, std::string_view path)
        : FileMapping(ops, fd, size, size, path) {}
    FileMapping(const FileOps& ops, int fd, std::size_t size, std::size_t mapped,
                std::string_view path)
        : ops_(&ops) {
        if (size == 0) return;
        const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        mapped = std::min(mapped, size);
        if (mapped < size) mapped = mapped / page * page;
        if (mapped == size) {
            void* p = ops.mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) throw io_error("mapping", path, errno);
            data_ = static_cast<char*>(p);
            size_ = length_ = mapped_ = size;
            ops.madvise(p, size, MADV_SEQUENTIAL);
            return;
        }
        const std::size_t length = (size + page - 1) / page * page;
        void* p =
            ops.mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw io_error("mapping", path, errno);
        data_ = static_cast<char*>(p);
        length_ = length;
        if (mapped > 0) {
            if (ops.mmap(p, mapped, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
                const int err = errno;
                reset();
                throw io_error("mapping", path, err);
            }
            ops.madvise(p, mapped, MADV_SEQUENTIAL);
        }
        mapped_ = mapped;
        std::size_t done = mapped;
        while (done < size) {
            const ssize_t n = ops.pread(fd, data_ + done, size - done, static_cast<off_t>(done));
            if (n < 0) {
                if (errno == EINTR) continue;
                const int err = errno;
                reset();
                throw io_error("reading", path, err);
            }
            if (n == 0) break;  // cut meanwhile
            done += static_cast<std::size_t>(n);
        }
        size_ = done;
    }
    FileMapping(FileMapping&& o) noexcept
        : ops_(o.ops_),
          data_(std::exchange(o.data_, nullptr)),
          size_(std::exchange(o.size_, 0)),
          length_(std::exchange(o.length_, 0)),
          mapped_(std::exchange(o.mapped_, 0)),
          released_(std::exchange(o.released_, 0)) {}
    FileMapping& operator=(FileMapping&& o) noexcept {
        if (this != &o) {
            reset();
            ops_ = o.ops_;
            data_ = std::exchange(o.data_, nullptr);
            size_ = std::exchange(o.size_, 0);
            length_ = std::exchange(o.length_, 0);
            mapped_ = std::exchange(o.mapped_, 0);
            released_ = std::exchange(o.released_, 0);
        }
        return *this;
    }
    FileMapping(const FileMapping&) = delete;
    FileMapping& operator=(const FileMapping&) = delete;
    ~FileMapping() { reset(); }

    [[nodiscard]] std::string_view view() const noexcept { return {data_, size_}; }

    /// Drops the mapped file pages of [0, end) from this process's memory (they stay in the page
    /// cache and fault back in if touched), so that scanning a big file does not hold all of it.
    /// The copied part is kept: it has no file behind it to fault back from.
    void release_before(std::size_t end) noexcept {
        if (data_ == nullptr) return;
        const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        end = std::min(end, mapped_) / page * page;
        if (end > released_) {
            ops_->madvise(data_ + released_, end - released_, MADV_DONTNEED);
            released_ = end;
        }
    }

    void reset() noexcept {
        if (data_ != nullptr && ops_ != nullptr) ops_->munmap(data_, length_);
        data_ = nullptr;
        size_ = 0;
        length_ = 0;
        mapped_ = 0;
        released_ = 0;
    }

private:
    const FileOps* ops_ = nullptr;
    char* data_ = nullptr;
    std::size_t size_ = 0;    ///< bytes in the view
    std::size_t length_ = 0;  ///< bytes reserved (a whole number of pages, or the mapping's size)
    std::size_t mapped_ = 0;  ///< bytes at the start that map the file
    std::size_t released_ = 0;
};

}  // namespace agentcore::detail

#pragma once
// One writer per session file: an exclusive flock(2) on the open file description. The lock is
// released when the descriptor is closed or its process dies, so a crash never leaves a stale
// lock; because it belongs to the open file description, a second open of the same file in the
// same process conflicts too.

#include <agentcore/detail/file_ops.hpp>
#include <agentcore/detail/threads.hpp>
#include <agentcore/error.hpp>

#include <fcntl.h>
#include <sys/file.h>

#include <agentcore/detail/chrono.hpp>
#include <algorithm>
#include <cerrno>
#include <string>
#include <string_view>

namespace agentcore::detail {

/// Takes the exclusive lock on `fd`, polling for up to `wait` (zero: one try). Throws `locked`
/// when another writer keeps it, `storage` for any other failure.
inline void lock_exclusive(const FileOps& ops, int fd, std::chrono::milliseconds wait,
                           std::string_view path) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    auto pause = std::chrono::milliseconds(1);
    for (;;) {
        if (ops.flock(fd, LOCK_EX | LOCK_NB) == 0) return;
        const int err = errno;
        if (err == EINTR) continue;
        if (err != EWOULDBLOCK && err != EAGAIN) throw io_error("locking", path, err);
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline)
            throw SessionError(ErrorCode::locked, "session file '" + std::string(path) +
                                                      "' is open for writing elsewhere");
        pause_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
        if (pause < std::chrono::milliseconds(50)) pause *= 2;
    }
}

/// An exclusive flock on a folder, held while the object lives; waits for other holders. A
/// repository holds it on its root while it checks that a session id is free and gives the new
/// file its name, so that two processes creating one id cannot both succeed.
class FolderLock {
public:
    FolderLock(const FileOps& ops, const std::string& folder) {
        int fd = -1;
        do {
            fd = ops.open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0) throw io_error("opening folder", folder, errno);
        fd_ = FileHandle(ops, fd);
        while (ops.flock(fd, LOCK_EX) != 0)
            if (errno != EINTR) throw io_error("locking folder", folder, errno);
    }

private:
    FileHandle fd_;
};

}  // namespace agentcore::detail

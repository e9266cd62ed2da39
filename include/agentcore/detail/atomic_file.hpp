#pragma once
// Publishing files atomically: written to a temporary file in the same folder, synced, moved
// into place, the folder synced. A crash leaves either nothing or the whole file under its name;
// temporary names start with '.' and never end in ".jsonl", so listings never show them.

#include <agentcore/detail/file_ops.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace agentcore::detail {

/// A file name with ':' and '.' of a timestamp replaced by '-' (safe on every file system).
inline std::string file_stamp(std::int64_t unix_ms) {
    std::string stamp = format_timestamp(unix_ms);
    for (char& c : stamp)
        if (c == ':' || c == '.') c = '-';
    return stamp;
}

/// A new temporary file beside `target`; removed on destruction unless published.
class TempFile {
public:
    // The name takes no randomness from the session's Environment: a deterministic
    // environment must give the same entry ids whatever the storage.
    TempFile(const FileOps& ops, std::string target) : ops_(&ops), target_(std::move(target)) {
        static std::atomic<std::uint64_t> counter{0};
        for (int attempt = 0; attempt < 100; ++attempt) {
            const auto tick = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
            std::string name = parent_folder(target_) + "/." + std::string(file_name(target_)) + ".tmp-" +
                               std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-";
            append_hex(name, tick & 0xFFFFFFFFULL, 8);
            fd_ = open_file(ops, name, O_RDWR | O_CREAT | O_EXCL, 0600);
            if (fd_) {
                path_ = std::move(name);
                return;
            }
            if (errno != EEXIST) throw io_error("creating", name, errno);
        }
        throw SessionError(ErrorCode::storage, "could not create a temporary file beside '" + target_ + "'");
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
        if (const int err = pwrite_all(*ops_, fd_.get(), data, size_)) throw io_error("writing", path_, err);
        size_ += data.size();
    }

    /// Flushes the content to stable storage.
    void sync() {
        if (const int err = sync_file(*ops_, fd_.get(), false)) throw io_error("syncing", path_, err);
    }

    /// Gives the file its final name. `replace`: an existing file is replaced (rename);
    /// otherwise an existing file makes this throw already_exists (link, then unlink the
    /// temporary name). Syncs the folder. Returns the descriptor, still open.
    FileHandle publish(bool replace) {
        if (replace) {
            if (ops_->rename(path_.c_str(), target_.c_str()) != 0) throw io_error("renaming into", target_, errno);
        } else {
            if (ops_->link(path_.c_str(), target_.c_str()) != 0) {
                const int err = errno;
                if (err == EEXIST)
                    throw SessionError(ErrorCode::already_exists, "file '" + target_ + "' already exists");
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
inline std::string write_side_file(const FileOps& ops, const std::string& path, std::string_view kind,
                                   std::int64_t now_ms, std::string_view bytes) {
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
    throw SessionError(ErrorCode::storage, "could not create a " + std::string(kind) + " file beside '" + path + "'");
}

}  // namespace agentcore::detail

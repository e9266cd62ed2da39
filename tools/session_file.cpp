#include "session_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace agentcore::tool {

namespace {

// Closes a descriptor when it goes out of scope.
struct Descriptor {
    int fd;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

const char* dialect_name(Dialect dialect) noexcept {
    return dialect == Dialect::native ? "native" : "pi";
}

const char* file_type_name(unsigned mode) noexcept {
    switch (mode & S_IFMT) {
        case S_IFREG: return "a regular file";
        case S_IFDIR: return "a folder";
        case S_IFIFO: return "a FIFO";
        case S_IFCHR: return "a character device";
        case S_IFBLK: return "a block device";
        case S_IFSOCK: return "a socket";
        case S_IFLNK: return "a symbolic link";
        default: return "a special file";
    }
}

void require_regular_file(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return;  // missing or unreadable: the open names why
    if (!S_ISREG(st.st_mode))
        throw ToolError("'" + path + "': not a session file: it is " + file_type_name(st.st_mode) +
                        " (only regular files are sessions)");
}

std::optional<std::string> header_line(const std::string& path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
    const Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
    if (file.fd < 0) return std::nullopt;
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) return std::nullopt;
    if (!S_ISREG(st.st_mode))
        throw ToolError("'" + path + "': not a session file: it is " + file_type_name(st.st_mode) +
                        " (only regular files are sessions)");
    std::string line;
    char buf[4096];
    while (line.size() < header_line_limit) {
        const ssize_t n =
            ::read(file.fd, buf, std::min(sizeof buf, header_line_limit - line.size()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return std::nullopt;
        if (n == 0) return line;
        const std::string_view chunk(buf, static_cast<std::size_t>(n));
        const auto newline = chunk.find('\n');
        line.append(chunk.substr(0, newline));
        if (newline != std::string_view::npos) return line;
    }
    return std::nullopt;  // longer than any header: the open reports it
}

OutputGuard::~OutputGuard() {
    if (fd_ >= 0) ::close(fd_);
}

OutputGuard guard_output(const std::string& input, const std::string& output) {
    struct stat out {};
    if (::stat(output.c_str(), &out) != 0)
        return OutputGuard();  // a new file, or the write names why
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
        throw ToolError(
            "'" + output + "': is the input file '" + input +
            "'; writing it would replace the session being read: choose another output");
    if (!S_ISREG(out.st_mode)) return OutputGuard();
    const int fd = ::open(output.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return OutputGuard();  // unreadable: the write names why
    OutputGuard guard(fd);
    int locked = 0;
    while ((locked = ::flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
    }
    if (locked != 0) {
        if (errno == EWOULDBLOCK)
            throw ToolError(
                "'" + output +
                "': is a session open for writing elsewhere (locked); replacing it " +
                "would swap the file under its writer: choose another output or close the session");
        throw ToolError("'" + output + "': cannot lock: " + std::strerror(errno));
    }
    return guard;
}

std::optional<int> header_version(const std::string& path) {
    const auto line = header_line(path);
    if (!line) return std::nullopt;
    try {
        return decode_header(*line).version;
    } catch (const SessionError&) {
        return std::nullopt;
    }
}

}  // namespace agentcore::tool

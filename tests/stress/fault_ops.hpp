#pragma once
// File-operation tables for the reliability suite:
// - CallInjector counts every I/O call that goes through a FileOps table and fails the N-th
//   one (EIO, ENOSPC, or a short write), once or from then on;
// - PageCacheModel passes every call to the real file system and mirrors it in a model of the
//   page cache: written bytes are volatile until fsync/fdatasync, new names until their folder
//   is synced. After each call it can tell what a power cut would leave on disk.
// Both keep global state (a FileOps table holds plain function pointers) and are used by one
// thread at a time.

#include <agentcore/detail/file_ops.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace agentcore::testing {

/// How an injected fault behaves.
enum class FaultKind {
    eio,          ///< the call fails with EIO
    enospc,       ///< the call fails with ENOSPC
    short_write,  ///< a write writes half of its bytes (other calls: EIO)
};

/// Counts I/O calls and fails the chosen one. fsync/fdatasync do not reach the disk: these
/// runs test how failures are handled, not the disk (the power-cut model covers durability).
struct CallInjector {
    long calls = 0;           ///< counted calls so far (close, munmap and madvise are not counted)
    long fail_at = -1;        ///< 1-based call to fail; -1: none
    bool persistent = false;  ///< every call after fail_at fails too
    FaultKind kind = FaultKind::eio;
    long injected = 0;        ///< faults actually injected
    std::vector<char> kinds;  ///< 'w' for a write call, '-' for others, one per counted call

    static CallInjector& get() {
        static CallInjector c;
        return c;
    }
    static void reset() { get() = CallInjector{}; }

    // True when this call must fail; sets errno. `write`: the call is a write (short writes).
    static bool fail_now(bool write, bool& short_write) {
        CallInjector& c = get();
        ++c.calls;
        c.kinds.push_back(write ? 'w' : '-');
        short_write = false;
        const bool hit =
            c.fail_at > 0 && (c.calls == c.fail_at || (c.persistent && c.calls > c.fail_at));
        if (!hit) return false;
        ++c.injected;
        if (c.kind == FaultKind::short_write && write) {
            short_write = true;
            return false;
        }
        errno = c.kind == FaultKind::enospc ? ENOSPC : EIO;
        return true;
    }

    static const detail::FileOps& ops() {
        using detail::FileOps;
        static const FileOps table = [] {
            FileOps o = FileOps::real();
            o.open = [](const char* p, int f, mode_t m) {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().open(p, f, m);
            };
            o.openat = [](int d, const char* p, int f, mode_t m) {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().openat(d, p, f, m);
            };
            o.read = [](int fd, void* b, std::size_t n) -> ssize_t {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().read(fd, b, n);
            };
            o.pread = [](int fd, void* b, std::size_t n, off_t off) -> ssize_t {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().pread(fd, b, n, off);
            };
            o.write = [](int fd, const void* b, std::size_t n) -> ssize_t {
                bool s = false;
                if (fail_now(true, s)) return -1;
                return FileOps::real().write(fd, b, s && n > 1 ? n / 2 : n);
            };
            o.pwrite = [](int fd, const void* b, std::size_t n, off_t off) -> ssize_t {
                bool s = false;
                if (fail_now(true, s)) return -1;
                return FileOps::real().pwrite(fd, b, s && n > 1 ? n / 2 : n, off);
            };
            o.fdatasync = [](int) {
                bool s = false;
                return fail_now(false, s) ? -1 : 0;
            };
            o.fsync = [](int) {
                bool s = false;
                return fail_now(false, s) ? -1 : 0;
            };
            o.ftruncate = [](int fd, off_t n) {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().ftruncate(fd, n);
            };
            o.fstat = [](int fd, struct stat* st) {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().fstat(fd, st);
            };
            o.lstat = [](const char* p, struct stat* st) {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().lstat(p, st);
            };
            o.rename = [](const char* a, const char* b) {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().rename(a, b);
            };
            o.link = [](const char* a, const char* b) {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().link(a, b);
            };
            o.unlink = [](const char* p) {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().unlink(p);
            };
            o.mkdir = [](const char* p, mode_t m) {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().mkdir(p, m);
            };
            o.flock = [](int fd, int op) {
                bool s = false;
                return fail_now(false, s) ? -1 : FileOps::real().flock(fd, op);
            };
            o.mmap = [](void* a, std::size_t n, int prot, int flags, int fd, off_t off) -> void* {
                bool s = false;
                return fail_now(false, s) ? MAP_FAILED
                                          : FileOps::real().mmap(a, n, prot, flags, fd, off);
            };
            return o;
        }();
        return table;
    }
};

/// What a power cut can do to bytes written since the last sync of their file.
enum class CutDamage {
    lost,    ///< none of them reached the disk
    short_,  ///< the first half reached it
    zeros,   ///< the file's new size reached the disk, its data did not: the tail reads as NULs
};

/// A model of the page cache in front of the real file system (see the top of this file).
struct PageCacheModel {
    struct Node {
        bool folder = false;
        std::string volatile_bytes;  ///< what reads see now
        std::string durable_bytes;   ///< what survives a power cut
    };
    /// A file as a power cut at some moment would find it, before the damage is chosen.
    struct FileState {
        std::string durable;
        std::string volatile_bytes;
        bool operator==(const FileState&) const = default;
    };
    struct Snapshot {
        long call = 0;                           ///< the state lasts until after this call
        std::map<std::string, FileState> files;  ///< by path relative to the root
        std::set<std::string> folders;           ///< relative paths
    };

    std::string root;  ///< only paths under it are modelled (it is itself durable)
    std::vector<Node> nodes;
    std::map<std::string, std::size_t> names;          ///< path -> node, as the page cache sees it
    std::map<std::string, std::size_t> durable_names;  ///< path -> node, as the disk has it
    std::map<int, std::size_t> open_files;             ///< fd -> node
    std::map<int, std::string> open_folders;           ///< fd -> folder path
    long calls = 0;
    std::vector<Snapshot>
        snapshots;  ///< one after each call that changed the durable state or a file

    static PageCacheModel& get() {
        static PageCacheModel m;
        return m;
    }
    static void reset(std::string root_folder) {
        get() = PageCacheModel{};
        get().root = std::move(root_folder);
    }

    [[nodiscard]] bool modelled(const std::string& path) const {
        return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
               path[root.size()] == '/';
    }

    // The node of an existing modelled path, adopting a file made before the model started.
    std::size_t node_of(const std::string& path) {
        if (auto it = names.find(path); it != names.end()) return it->second;
        Node n;
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            n.folder = true;
        } else {
            const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            char buf[65536];
            ssize_t r = 0;
            while (fd >= 0 && (r = ::read(fd, buf, sizeof buf)) > 0)
                n.volatile_bytes.append(buf, static_cast<std::size_t>(r));
            if (fd >= 0) ::close(fd);
            n.durable_bytes = n.volatile_bytes;
        }
        nodes.push_back(std::move(n));
        names[path] = nodes.size() - 1;
        durable_names[path] = nodes.size() - 1;
        return nodes.size() - 1;
    }

    void snapshot() {
        Snapshot s;
        s.call = calls;
        auto reachable = [&](const std::string& path) {
            for (std::string p = detail::parent_folder(path); p != root && modelled(p);
                 p = detail::parent_folder(p)) {
                auto it = durable_names.find(p);
                if (it == durable_names.end() || !nodes[it->second].folder) return false;
            }
            return true;
        };
        for (const auto& [path, id] : durable_names) {
            if (!reachable(path)) continue;
            const std::string rel = path.substr(root.size() + 1);
            if (nodes[id].folder) {
                s.folders.insert(rel);
            } else {
                s.files[rel] = FileState{nodes[id].durable_bytes, nodes[id].volatile_bytes};
            }
        }
        // The same state as the last snapshot: it now lasts until this call.
        if (!snapshots.empty() && snapshots.back().files == s.files &&
            snapshots.back().folders == s.folders) {
            snapshots.back().call = calls;
            return;
        }
        snapshots.push_back(std::move(s));
    }

    static void sync_folder_now(const std::string& folder) {
        PageCacheModel& m = get();
        for (auto it = m.durable_names.begin(); it != m.durable_names.end();) {
            if (detail::parent_folder(it->first) == folder && m.names.count(it->first) == 0)
                it = m.durable_names.erase(it);
            else
                ++it;
        }
        for (const auto& [path, id] : m.names)
            if (detail::parent_folder(path) == folder) m.durable_names[path] = id;
    }

    static void write_at(int fd, const void* b, std::size_t n, std::uint64_t off) {
        PageCacheModel& m = get();
        auto it = m.open_files.find(fd);
        if (it == m.open_files.end()) return;
        std::string& bytes = m.nodes[it->second].volatile_bytes;
        if (bytes.size() < off + n) bytes.resize(static_cast<std::size_t>(off + n), '\0');
        bytes.replace(static_cast<std::size_t>(off), n, static_cast<const char*>(b), n);
    }

    static const detail::FileOps& ops() {
        using detail::FileOps;
        static const FileOps table = [] {
            FileOps o = FileOps::real();
            o.open = [](const char* p, int f, mode_t mode) {
                PageCacheModel& m = get();
                ++m.calls;
                const std::string path = p;
                const bool existed = m.names.count(path) != 0 || ::access(p, F_OK) == 0;
                const int fd = FileOps::real().open(p, f, mode);
                if (fd >= 0 && m.modelled(path)) {
                    if ((f & O_DIRECTORY) != 0) {
                        m.open_folders[fd] = path;
                    } else if (!existed) {
                        m.nodes.push_back(Node{});
                        m.names[path] = m.nodes.size() - 1;
                        m.open_files[fd] = m.nodes.size() - 1;
                    } else {
                        m.open_files[fd] = m.node_of(path);
                    }
                } else if (fd >= 0 && path == m.root && (f & O_DIRECTORY) != 0) {
                    m.open_folders[fd] = path;
                }
                m.snapshot();
                return fd;
            };
            o.close = [](int fd) {
                get().open_files.erase(fd);
                get().open_folders.erase(fd);
                return FileOps::real().close(fd);
            };
            o.pread = [](int fd, void* b, std::size_t n, off_t off) -> ssize_t {
                ++get().calls;
                return FileOps::real().pread(fd, b, n, off);
            };
            o.read = [](int fd, void* b, std::size_t n) -> ssize_t {
                ++get().calls;
                return FileOps::real().read(fd, b, n);
            };
            o.pwrite = [](int fd, const void* b, std::size_t n, off_t off) -> ssize_t {
                ++get().calls;
                const ssize_t r = FileOps::real().pwrite(fd, b, n, off);
                if (r > 0)
                    write_at(fd, b, static_cast<std::size_t>(r), static_cast<std::uint64_t>(off));
                get().snapshot();
                return r;
            };
            o.write = [](int fd, const void* b, std::size_t n) -> ssize_t {
                ++get().calls;
                const off_t off = ::lseek(fd, 0, SEEK_CUR);
                const ssize_t r = FileOps::real().write(fd, b, n);
                if (r > 0)
                    write_at(fd, b, static_cast<std::size_t>(r), static_cast<std::uint64_t>(off));
                get().snapshot();
                return r;
            };
            auto sync = [](int fd) {
                PageCacheModel& m = get();
                ++m.calls;
                if (auto it = m.open_files.find(fd); it != m.open_files.end())
                    m.nodes[it->second].durable_bytes = m.nodes[it->second].volatile_bytes;
                if (auto it = m.open_folders.find(fd); it != m.open_folders.end())
                    sync_folder_now(it->second);
                m.snapshot();
                return 0;  // the model is the disk: nothing real needs to be flushed
            };
            o.fdatasync = sync;
            o.fsync = sync;
            o.ftruncate = [](int fd, off_t n) {
                PageCacheModel& m = get();
                ++m.calls;
                const int r = FileOps::real().ftruncate(fd, n);
                if (r == 0)
                    if (auto it = m.open_files.find(fd); it != m.open_files.end())
                        m.nodes[it->second].volatile_bytes.resize(static_cast<std::size_t>(n),
                                                                  '\0');
                m.snapshot();
                return r;
            };
            o.rename = [](const char* a, const char* b) {
                PageCacheModel& m = get();
                ++m.calls;
                const int r = FileOps::real().rename(a, b);
                if (r == 0 && m.modelled(a)) {
                    m.names[b] = m.node_of(a);
                    m.names.erase(a);
                }
                m.snapshot();
                return r;
            };
            o.link = [](const char* a, const char* b) {
                PageCacheModel& m = get();
                ++m.calls;
                const int r = FileOps::real().link(a, b);
                if (r == 0 && m.modelled(a)) m.names[b] = m.node_of(a);
                m.snapshot();
                return r;
            };
            o.unlink = [](const char* p) {
                PageCacheModel& m = get();
                ++m.calls;
                const int r = FileOps::real().unlink(p);
                if (r == 0) m.names.erase(p);
                m.snapshot();
                return r;
            };
            o.mkdir = [](const char* p, mode_t mode) {
                PageCacheModel& m = get();
                ++m.calls;
                const int r = FileOps::real().mkdir(p, mode);
                if (r == 0 && m.modelled(p)) {
                    m.nodes.push_back(Node{true, {}, {}});
                    m.names[p] = m.nodes.size() - 1;
                }
                m.snapshot();
                return r;
            };
            return o;
        }();
        return table;
    }

    /// The bytes a power cut leaves of a file.
    static std::string after_cut(const FileState& f, CutDamage damage) {
        const std::string& d = f.durable;
        const std::string& v = f.volatile_bytes;
        if (v.size() <= d.size() || v.compare(0, d.size(), d) != 0) return d;
        const std::size_t extra = v.size() - d.size();
        switch (damage) {
            case CutDamage::lost: return d;
            case CutDamage::short_: return v.substr(0, d.size() + extra / 2);
            case CutDamage::zeros: return d + std::string(extra, '\0');
        }
        return d;
    }
};

}  // namespace agentcore::testing

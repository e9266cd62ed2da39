// libFuzzer target: the whole-file loader. The input is written as a session file and opened
// read-only (strict and lenient), for writing (lenient: a torn tail is cut), repaired, and read
// by the migration reader (pi v1/v2/v3). Checks: no crash; every entry an open indexed can be
// read or fails with a SessionError; a writing open and a repair lose no entry that a lenient
// read-only open sees; a repaired file opens strictly.
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/pi_migrate.hpp>
#include <agentcore/session.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace {

using namespace agentcore;

// The real calls without the syncs: the fuzzer tests parsing, not the disk.
const detail::FileOps& fast_ops() {
    static const detail::FileOps ops = [] {
        detail::FileOps o = detail::FileOps::real();
        o.fdatasync = [](int) { return 0; };
        o.fsync = [](int) { return 0; };
        return o;
    }();
    return ops;
}

const std::string& work_dir() {
    static const std::string dir = [] {
        const char* base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
        std::string d = std::string(base) + "/agentcore-fuzz-file-" + std::to_string(::getpid());
        std::filesystem::remove_all(d);
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

void write_input(const std::string& path, std::string_view bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) std::abort();
    if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) std::abort();
    ::close(fd);
}

JsonlStorageOptions options(bool lenient) {
    JsonlStorageOptions o;
    o.lenient = lenient;
    o.environment = Environment::deterministic(1796197403123, 1);
    o.file_ops = &fast_ops();
    return o;
}

// Reads every entry and builds the context at the leaf; returns false when an entry fails.
bool read_all(const JsonlSessionStorage& storage) {
    bool ok = true;
    for (std::size_t i = 0; i < storage.entry_count(); ++i) {
        try {
            (void)storage.get_entries({i, 1});
        } catch (const SessionError&) {
            ok = false;
        }
    }
    try {
        (void)build_session_context(storage.get_path_to_root_or_compaction(storage.get_leaf_id()),
                                    {});
    } catch (const SessionError&) {
        ok = false;
    }
    (void)storage.get_session_stats();
    return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::string path = work_dir() + "/s.jsonl";
    write_input(path, input);
    try {
        read_all(JsonlSessionStorage::open_read_only(path, options(false)));
    } catch (const SessionError&) {
    }
    std::size_t lenient_count = 0;
    bool readable = false;
    try {
        const auto s = JsonlSessionStorage::open_read_only(path, options(true));
        lenient_count = s.entry_count();
        readable = read_all(s);
    } catch (const SessionError&) {
        lenient_count = SIZE_MAX;
    }
    if (lenient_count != SIZE_MAX) {
        try {
            const auto w = JsonlSessionStorage::open(path, options(true));
            if (w.entry_count() != lenient_count) std::abort();  // a writing open lost an entry
        } catch (const SessionError&) {
        }
        write_input(path, input);
        try {
            const RepairReport report = JsonlSessionStorage::repair(path, options(true));
            if (report.entries_kept != lenient_count) std::abort();
            // The clean copy opens strictly with every kept entry.
            const auto strict = JsonlSessionStorage::open_read_only(path, options(false));
            if (strict.entry_count() != report.entries_kept) std::abort();
            if (readable && !read_all(strict)) std::abort();
        } catch (const SessionError&) {
        }
    }
    try {
        (void)parse_session_text(input);
    } catch (const SessionError&) {
    }
    write_input(path, input);
    try {
        (void)read_session_lines(path, Environment::deterministic(1796197403123, 1));
    } catch (const SessionError&) {
    }
    for (const auto& e : std::filesystem::directory_iterator(work_dir()))
        std::filesystem::remove(e.path());
    return 0;
}

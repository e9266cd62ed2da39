// libFuzzer target: the JSONL storage's resume index (JsonlStorageOptions::resume_index). A
// fixed session file and its valid index are made once; each input edits the index's records
// (pairs of a 16-bit offset and a byte, the first byte of the input cutting the records short)
// and the index is written with a correct checksum, so that the reader's own checks of every
// record are what is exercised, not only the checksum's. Checks: no crash and no sanitizer
// report; an open either resumes or reads the lines; every entry of a resumed open reads or
// fails with a SessionError, as does its context; an open that resumed nothing sees exactly
// what a plain open sees.
#include <agentcore/detail/bytes.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
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

JsonlStorageOptions options() {
    JsonlStorageOptions o;
    o.resume_index = true;
    o.durability = Durability::os_buffered;
    o.environment = Environment::deterministic(1796197403123, 1);
    return o;
}

struct Fixture {
    std::string path;
    std::string valid;  // the index as the storage wrote it
    std::size_t entries = 0;
};

const Fixture& fixture() {
    static const Fixture f = [] {
        Fixture out;
        const char* base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
        const std::string dir =
            std::string(base) + "/agentcore-fuzz-resume-" + std::to_string(::getpid());
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        out.path = dir + "/s.jsonl";
        SessionHeader h;
        h.id = "fuzz";
        h.timestamp = "2026-12-02T07:43:23.123Z";
        h.cwd = "/work";
        {
            Session<JsonlSessionStorage> s(std::make_shared<JsonlSessionStorage>(
                JsonlSessionStorage::create(out.path, h, options())));
            std::string first;
            for (int i = 0; i < 12; ++i) {
                const auto id = append_message(s, user_text("message " + std::to_string(i)));
                if (i == 0) first = id;
                if (i % 4 == 1) append_label(s, id, std::string("label ") + std::to_string(i));
                if (i == 6) move_to(s, first);
            }
            append_thinking_level_change(s, "high");
            append_session_name(s, "fuzzed");
        }
        (void)JsonlSessionStorage::open(out.path, options());  // writes the index
        const std::string index = JsonlSessionStorage::resume_index_path(out.path);
        const int fd = ::open(index.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) std::abort();
        char buffer[1 << 16];
        for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
            out.valid.append(buffer, static_cast<std::size_t>(n));
        ::close(fd);
        out.entries = JsonlSessionStorage::open_read_only(out.path).entry_count();
        if (out.valid.size() < 16) std::abort();
        return out;
    }();
    return f;
}

void write_file(const std::string& path, std::string_view bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) std::abort();
    if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) std::abort();
    ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const Fixture& f = fixture();
    // The records without the trailing checksum; edited, cut, then checksummed again.
    std::string index = f.valid.substr(0, f.valid.size() - 8);
    std::size_t i = 0;
    if (size > 0) {
        const std::size_t keep = 8 + data[0] * (index.size() - 8) / 255;  // the magic stays
        index.resize(keep);
        i = 1;
    }
    for (; i + 3 <= size; i += 3) {
        const std::size_t at =
            8 + (static_cast<std::size_t>(data[i]) | static_cast<std::size_t>(data[i + 1]) << 8);
        if (at < index.size()) index[at] = static_cast<char>(data[i + 2]);
    }
    detail::ByteWriter(index).put(detail::hash_bytes(index));
    write_file(JsonlSessionStorage::resume_index_path(f.path), index);

    JsonlStorageOptions read_only = options();
    const auto s = JsonlSessionStorage::open_read_only(f.path, read_only);
    if (s.resumed_lines() == 0 && s.entry_count() != f.entries) std::abort();
    for (std::size_t e = 0; e < s.entry_count(); ++e) {
        try {
            (void)s.get_entries({e, 1});
        } catch (const SessionError&) {
        }
    }
    try {
        (void)build_session_context(s.get_path_to_root_or_compaction(s.get_leaf_id()), {});
    } catch (const SessionError&) {
    }
    (void)s.get_session_stats();
    return 0;
}

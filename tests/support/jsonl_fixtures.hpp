#pragma once
// Fixtures for the JSONL tests: deterministic options, a representative session, comparisons
// through the codec, and a file-operations table that counts and fails calls on demand.

#include "support/builders.hpp"
#include "support/errors.hpp"
#include "support/scratch.hpp"

#include <agentcore/codec.hpp>
#include <agentcore/jsonl/jsonl_repo.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

namespace agentcore::testing {

using FileSession = Session<JsonlSessionStorage>;

inline constexpr std::int64_t t0 = 1796197403123;  // 2026-12-02T07:43:23.123Z

/// Deterministic options; os_buffered unless a test is about durability (fdatasync is slow).
inline JsonlStorageOptions jsonl_options(std::uint64_t seed = 1,
                                         Durability durability = Durability::os_buffered) {
    JsonlStorageOptions o;
    o.durability = durability;
    o.environment = Environment::deterministic(t0, seed);
    return o;
}

inline SessionHeader test_header(std::string id = "test-session") {
    SessionHeader h;
    h.id = std::move(id);
    h.timestamp = "2026-12-02T07:43:23.123Z";
    h.cwd = "/work";
    return h;
}

inline FileSession create_file_session(const std::string& path,
                                       JsonlStorageOptions options = jsonl_options(),
                                       SessionHeader header = test_header()) {
    return FileSession(std::make_shared<JsonlSessionStorage>(
        JsonlSessionStorage::create(path, std::move(header), std::move(options))));
}

inline FileSession open_file_session(const std::string& path,
                                     JsonlStorageOptions options = jsonl_options()) {
    return FileSession(
        std::make_shared<JsonlSessionStorage>(JsonlSessionStorage::open(path, std::move(options))));
}

inline FileSession open_file_read_only(const std::string& path,
                                       JsonlStorageOptions options = jsonl_options()) {
    return FileSession(std::make_shared<JsonlSessionStorage>(
        JsonlSessionStorage::open_read_only(path, std::move(options))));
}

/// Appends a session that uses every kind of entry: messages with usage, tool calls, settings,
/// labels, a name, a custom entry, a branch with a summary, a compaction.
template <class S>
void fill_session(Session<S>& s) {
    const auto u1 = append_message(s, user("hello"));
    append_thinking_level_change(s, "high");
    append_model_change(s, "anthropic", "claude");
    const auto a1 =
        append_message(s, assistant("hi there", "anthropic", "claude", usage(10, 20, 30, 40, 1)));
    append_label(s, u1, std::string("start"));
    append_message(s, assistant_tool_call("call-1", "read"));
    append_message(s, tool_result("call-1", "read", "file text"));
    append_active_tools_change(s, {"read", "write"});
    append_custom_entry(s, "note", Json{{"k", 1}});
    append_custom_message_entry(s, "hint", std::string("a hint"));
    append_session_name(s, "  My\r\nsession ");
    append_message(s, user("second question"));
    move_to(s, a1,
            BranchSummaryInput{"went back", Json{{"why", "test"}}, usage(5, 6, 7, 8, 0.26), false});
    const auto u3 = append_message(s, user("after the branch"));
    append_compaction(s, "summary so far", u3, 1234, Json(), false, usage(1, 2, 3, 4, 0.1));
    append_message(s, assistant("after compaction"));
    append_label(s, a1, std::string("  answer  "));
}

/// A context as JSON through the codec, for comparisons.
inline std::string context_json(const SessionContext& c) {
    Json out = Json::object();
    Json messages = Json::array();
    for (const auto& m : c.messages) messages.push_back(message_to_json(*m, Dialect::native));
    out["messages"] = std::move(messages);
    out["thinking_level"] = c.thinking_level;
    out["model"] =
        c.model ? Json{{"provider", c.model->provider}, {"model_id", c.model->model_id}} : Json();
    out["tools"] = c.active_tool_names ? Json(*c.active_tool_names) : Json();
    return dump_json(out);
}

/// Every entry as one JSON array through the codec.
inline std::string entries_json(const std::vector<EntryHandle>& entries) {
    Json out = Json::array();
    for (const auto& e : entries) out.push_back(entry_to_json(*e, Dialect::native));
    return dump_json(out);
}

/// Lines of a file (without their newlines).
inline std::vector<std::string> file_lines(const std::string& path) {
    std::vector<std::string> out;
    const std::string text = read_file(path);
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        out.push_back(text.substr(pos, nl - pos));
        pos = nl + 1;
    }
    return out;
}

/// A file-operations table that counts calls and fails them on demand. Global state: function
/// pointers cannot capture, and tests run one at a time in a process.
struct Faults {
    int pwrite_calls = 0;
    int pread_calls = 0;
    int fdatasync_calls = 0;
    int fsync_calls = 0;
    int link_calls = 0;
    int rename_calls = 0;
    int fail_pwrite_at = -1;  ///< the call number (1-based, counted from reset) that fails
    int pwrite_errno = ENOSPC;
    bool short_before_fail = false;  ///< the failing call first writes half (a short write)
    int fail_fdatasync_at = -1;
    int fail_fsync_at = -1;
    int fail_link_at = -1;
    int fail_rename_at = -1;
    int fail_pread_from = -1;  ///< from this call number on, every pread fails with EIO

    static Faults& get() {
        static Faults f;
        return f;
    }
    static void reset() { get() = Faults{}; }

    static const detail::FileOps& ops() {
        static const detail::FileOps table = [] {
            detail::FileOps o = detail::FileOps::real();
            o.pwrite = [](int fd, const void* b, std::size_t n, off_t off) -> ssize_t {
                Faults& f = get();
                ++f.pwrite_calls;
                if (f.pwrite_calls == f.fail_pwrite_at && f.short_before_fail && n > 1) {
                    f.short_before_fail = false;
                    ++f.fail_pwrite_at;  // the next call fails
                    return detail::FileOps::real().pwrite(fd, b, n / 2, off);
                }
                if (f.pwrite_calls == f.fail_pwrite_at) {
                    errno = f.pwrite_errno;
                    return -1;
                }
                return detail::FileOps::real().pwrite(fd, b, n, off);
            };
            o.pread = [](int fd, void* b, std::size_t n, off_t off) -> ssize_t {
                Faults& f = get();
                ++f.pread_calls;
                if (f.fail_pread_from > 0 && f.pread_calls >= f.fail_pread_from) {
                    errno = EIO;
                    return -1;
                }
                return detail::FileOps::real().pread(fd, b, n, off);
            };
            o.fdatasync = [](int fd) -> int {
                Faults& f = get();
                if (++f.fdatasync_calls == f.fail_fdatasync_at) {
                    errno = EIO;
                    return -1;
                }
                return detail::FileOps::real().fdatasync(fd);
            };
            o.fsync = [](int fd) -> int {
                Faults& f = get();
                if (++f.fsync_calls == f.fail_fsync_at) {
                    errno = EIO;
                    return -1;
                }
                return detail::FileOps::real().fsync(fd);
            };
            o.link = [](const char* a, const char* b) -> int {
                Faults& f = get();
                if (++f.link_calls == f.fail_link_at) {
                    errno = EIO;
                    return -1;
                }
                return detail::FileOps::real().link(a, b);
            };
            o.rename = [](const char* a, const char* b) -> int {
                Faults& f = get();
                if (++f.rename_calls == f.fail_rename_at) {
                    errno = EIO;
                    return -1;
                }
                return detail::FileOps::real().rename(a, b);
            };
            return o;
        }();
        return table;
    }
};

/// Options that route every file operation through Faults.
inline JsonlStorageOptions faulty_options(std::uint64_t seed = 1,
                                          Durability durability = Durability::durable) {
    JsonlStorageOptions o = jsonl_options(seed, durability);
    o.file_ops = &Faults::ops();
    return o;
}

}  // namespace agentcore::testing

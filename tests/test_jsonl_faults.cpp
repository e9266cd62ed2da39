// Failures of the file system and of processes: failed writes, failed syncs, crashes, other
// writers (SPEC §6). Crash and limit tests run in child processes.
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

std::uint64_t size_of(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

// Waits for a child and returns its exit code (-signal when killed).
int wait_child(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return -WTERMSIG(status);
    return -1000;
}

bool read_exact(int fd, char* out, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
        const ssize_t r = ::read(fd, out + done, n - done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        done += static_cast<std::size_t>(r);
    }
    return true;
}

}  // namespace

TEST_CASE(
    "a write that fails with ENOSPC leaves file and memory unchanged and the next append works",
    "[jsonl][faults]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    Faults::reset();
    auto s = create_file_session(path, faulty_options());
    const auto first = append_message(s, user("one"));
    const std::string before = read_file(path);
    const int calls = Faults::get().pwrite_calls;

    SECTION("no space at all") { Faults::get().fail_pwrite_at = calls + 1; }
    SECTION("a short write, then no space") {
        Faults::get().fail_pwrite_at = calls + 1;
        Faults::get().short_before_fail = true;
    }
    SECTION("an I/O error") {
        Faults::get().fail_pwrite_at = calls + 1;
        Faults::get().pwrite_errno = EIO;
    }
    const std::string message = message_of_error([&] { append_message(s, user("two")); });
    CHECK(message.find("[agentcore.storage]") == 0);
    CHECK(message.find(path) != std::string::npos);
    CHECK(read_file(path) == before);
    CHECK(s.storage().entry_count() == 1);
    CHECK(get_leaf_id(s) == first);
    CHECK(s.storage().file_size() == before.size());
    CHECK_FALSE(s.storage().poisoned());

    const auto third = append_message(s, user("three"));
    CHECK(get_leaf_id(s) == third);
    auto r = open_file_read_only(path);
    CHECK(r.storage().entry_count() == 2);
    CHECK(describe(build_context(r)) == std::vector<std::string>{"user:one", "user:three"});
}

TEST_CASE("a failed fdatasync poisons the storage until the file is opened again",
          "[jsonl][faults]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    Faults::reset();
    std::string first;
    {
        auto s = create_file_session(path, faulty_options());
        first = append_message(s, user("one"));
        Faults::get().fail_fdatasync_at = Faults::get().fdatasync_calls + 1;
        CHECK(error_of([&] { append_message(s, user("two")); }) == ErrorCode::storage);
        CHECK(s.storage().poisoned());
        CHECK(s.storage().entry_count() == 1);
        CHECK(get_leaf_id(s) == first);
        CHECK(error_of([&] { append_message(s, user("three")); }) == ErrorCode::storage);
    }
    auto s = open_file_session(path, faulty_options());
    CHECK(get_leaf_id(s) == first);
    append_message(s, user("four"));
    CHECK(s.storage().entry_count() == 2);
}

TEST_CASE("os_buffered appends do not sync, durable appends sync each line", "[jsonl][faults]") {
    ScratchDir dir;
    Faults::reset();
    auto durable = create_file_session(dir.file("a.jsonl"), faulty_options(1, Durability::durable));
    const int base = Faults::get().fdatasync_calls;
    append_message(durable, user("one"));
    append_message(durable, user("two"));
    CHECK(Faults::get().fdatasync_calls == base + 2);
    auto buffered =
        create_file_session(dir.file("b.jsonl"), faulty_options(1, Durability::os_buffered));
    const int base2 = Faults::get().fdatasync_calls;
    append_message(buffered, user("one"));
    CHECK(Faults::get().fdatasync_calls == base2);
}

TEST_CASE("a write beyond RLIMIT_FSIZE fails with storage and leaves the file as it was",
          "[jsonl][faults]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path);
        append_message(s, user("one"));
    }
    const std::uint64_t before = size_of(path);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // The child: no Catch2 here, only an exit code.
        ::signal(SIGXFSZ, SIG_IGN);
        int code = 0;
        try {
            auto s = open_file_session(path);
            rlimit lim{};
            ::getrlimit(RLIMIT_FSIZE, &lim);
            const rlimit small{static_cast<rlim_t>(before + 64), lim.rlim_max};
            ::setrlimit(RLIMIT_FSIZE, &small);
            try {
                append_message(s, user(std::string(4096, 'x')));
                code = 10;
            } catch (const SessionError& e) {
                if (e.code() != ErrorCode::storage) code = 11;
            }
            if (code == 0 && size_of(path) != before) code = 12;
            if (code == 0 && s.storage().entry_count() != 1) code = 13;
            ::setrlimit(RLIMIT_FSIZE, &lim);  // space is back
            if (code == 0) append_message(s, user("two"));
        } catch (...) {
            code = 20;
        }
        ::_exit(code);
    }
    CHECK(wait_child(pid) == 0);
    auto r = open_file_read_only(path);
    CHECK(describe(build_context(r)) == std::vector<std::string>{"user:one", "user:two"});
}

TEST_CASE("every acknowledged entry survives a writer killed with SIGKILL", "[jsonl][faults]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    { create_file_session(path); }
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(pipe_fds[0]);
        try {
            auto s = open_file_session(path, jsonl_options(99));
            for (int i = 0;; ++i) {
                const std::string id =
                    append_message(s, user("entry " + std::to_string(i) +
                                           std::string(static_cast<std::size_t>(i % 300), 'y')));
                if (::write(pipe_fds[1], id.data(), 8) != 8) ::_exit(3);  // acknowledged
            }
        } catch (...) {
            ::_exit(2);
        }
    }
    ::close(pipe_fds[1]);
    std::vector<std::string> acknowledged;
    char buf[8];
    while (acknowledged.size() < 300 && read_exact(pipe_fds[0], buf, 8))
        acknowledged.emplace_back(buf, 8);
    ::kill(pid, SIGKILL);
    while (read_exact(pipe_fds[0], buf, 8)) acknowledged.emplace_back(buf, 8);
    ::close(pipe_fds[0]);
    CHECK(wait_child(pid) == -SIGKILL);
    REQUIRE(acknowledged.size() >= 300);

    for (bool writing : {false, true}) {
        auto s = writing ? open_file_session(path) : open_file_read_only(path);
        std::size_t missing = 0;
        for (const auto& id : acknowledged)
            if (!get_entry(s, id)) ++missing;
        CHECK(missing == 0);
        CHECK(s.storage().entry_count() >= acknowledged.size());
    }
}

TEST_CASE("a writer in another process makes this one locked until it exits", "[jsonl][faults]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    { create_file_session(path); }
    int ready[2];
    int release[2];
    REQUIRE(::pipe(ready) == 0);
    REQUIRE(::pipe(release) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(ready[0]);
        ::close(release[1]);
        int code = 0;
        try {
            auto s = open_file_session(path);
            append_message(s, user("from the child"));
            if (::write(ready[1], "r", 1) != 1) code = 3;
            char c;
            if (::read(release[0], &c, 1) != 1) code = 4;
            append_message(s, user("child still writes"));
        } catch (...) {
            code = 2;
        }
        ::_exit(code);
    }
    ::close(ready[1]);
    ::close(release[0]);
    char c;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    CHECK(error_of([&] { open_file_session(path); }) == ErrorCode::locked);
    CHECK(open_file_read_only(path).storage().entry_count() == 1);
    REQUIRE(::write(release[1], "go", 1) == 1);
    auto options = jsonl_options();
    options.lock_wait = std::chrono::milliseconds(10000);
    auto s = open_file_session(path, options);  // waits until the child has exited
    CHECK(wait_child(pid) == 0);
    CHECK(describe(build_context(s)) ==
          std::vector<std::string>{"user:from the child", "user:child still writes"});
    ::close(ready[0]);
    ::close(release[1]);
}

TEST_CASE("a failure while creating a file leaves no session and no temporary file behind",
          "[jsonl][faults]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    Faults::reset();
    SECTION("the sync of the temporary file fails") { Faults::get().fail_fsync_at = 1; }
    SECTION("the publication fails") { Faults::get().fail_link_at = 1; }
    SECTION("the header cannot be written") { Faults::get().fail_pwrite_at = 1; }
    CHECK(error_of([&] { create_file_session(path, faulty_options()); }) == ErrorCode::storage);
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
        (void)e;
        ++files;
    }
    CHECK(files == 0);
}

namespace {

// The largest length of a file (not anonymous memory) mapped since reset.
struct MapRecorder {
    static std::size_t& largest() {
        static std::size_t n = 0;
        return n;
    }
    static const agentcore::detail::FileOps& ops() {
        static const agentcore::detail::FileOps table = [] {
            agentcore::detail::FileOps o = agentcore::detail::FileOps::real();
            o.mmap = [](void* a, std::size_t n, int prot, int flags, int fd, off_t off) {
                if (fd >= 0) largest() = std::max(largest(), n + static_cast<std::size_t>(off));
                return agentcore::detail::FileOps::real().mmap(a, n, prot, flags, fd, off);
            };
            return o;
        }();
        return table;
    }
};

}  // namespace

TEST_CASE(
    "a read-only open maps no byte a writer could still cut: the last line and the bad lines "
    "before it",
    "[jsonl][faults]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path);
        for (int i = 0; i < 200; ++i)
            append_message(s, user("kept " + std::to_string(i) + std::string(300, 'k')));
    }
    const std::uint64_t good = size_of(path);
    // Two bad lines a lenient writer kept, then a torn tail: a writing open cuts the tail, the
    // next one the second bad line, the next the first; none of them may be mapped by a reader.
    const std::string bad(6000, '#');
    {
        std::string text =
            read_file(path) + bad + "\n" + bad + "\r\n" + "{\"type\":\"message\",\"id\":\"to";
        write_file(path, text);
    }
    JsonlStorageOptions options = jsonl_options();
    options.lenient = true;
    options.file_ops = &MapRecorder::ops();
    MapRecorder::largest() = 0;
    {
        const auto s = JsonlSessionStorage::open_read_only(path, options);
        CHECK(s.entry_count() == 200);
        CHECK(s.had_torn_tail());
        CHECK(s.problems().size() == 2);
        CHECK(text_of(*message_of(*s.get_entries().back())).rfind("kept 199", 0) == 0);
    }
    CHECK(MapRecorder::largest() <= good);
    CHECK(MapRecorder::largest() > 0);

    // A valid last line may still be cut (an append whose sync failed): it is read, not mapped;
    // the lines before it are mapped.
    write_file(path, read_file(path).substr(0, static_cast<std::size_t>(good)));
    MapRecorder::largest() = 0;
    {
        const auto s = JsonlSessionStorage::open_read_only(path, options);
        CHECK(s.entry_count() == 200);
    }
    CHECK(MapRecorder::largest() < good);
    CHECK(MapRecorder::largest() + 4096 + 400 > good);

    // A writer holds the lock: nobody else cuts, all of it is mapped.
    MapRecorder::largest() = 0;
    { JsonlSessionStorage::open(path, options); }
    CHECK(MapRecorder::largest() == good);
}

namespace {

// Runs an action once, at the first flock after it is armed: what another process does while a
// writing open waits for the lock.
struct BeforeLock {
    static std::function<void()>& action() {
        static std::function<void()> a;
        return a;
    }
    static const agentcore::detail::FileOps& ops() {
        static const agentcore::detail::FileOps table = [] {
            agentcore::detail::FileOps o = agentcore::detail::FileOps::real();
            o.flock = [](int fd, int op) {
                if (auto a = std::exchange(action(), nullptr)) a();
                return agentcore::detail::FileOps::real().flock(fd, op);
            };
            return o;
        }();
        return table;
    }
};

}  // namespace

TEST_CASE("a writing open that waited for the lock while its file was removed gets not_found",
          "[jsonl][faults]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    { create_file_session(path); }
    JsonlStorageOptions options = jsonl_options();
    options.file_ops = &BeforeLock::ops();
    BeforeLock::action() = [&] { ::unlink(path.c_str()); };
    CHECK(error_of([&] { JsonlSessionStorage::open(path, options); }) == ErrorCode::not_found);
}

TEST_CASE(
    "a writing open that waited for the lock while its file was replaced writes to the new file",
    "[jsonl][faults]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const auto other = dir.file("other.jsonl");
    { create_file_session(path); }
    {
        auto s = create_file_session(other);
        append_message(s, user("in the new file"));
    }
    JsonlStorageOptions options = jsonl_options();
    options.file_ops = &BeforeLock::ops();
    BeforeLock::action() = [&] { ::rename(other.c_str(), path.c_str()); };  // what a repair does
    {
        auto s = open_file_session(path, options);
        CHECK(s.storage().entry_count() == 1);
        append_message(s, user("appended"));
    }
    CHECK(open_file_read_only(path).storage().entry_count() == 2);
}

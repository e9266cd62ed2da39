// Temporary files of killed writers (SPEC §6): a process killed while it creates, forks,
// repairs or converts a session leaves its hidden temporary file behind. A later create or fork
// of the repository (or repair or convert of that file) removes it once its writer is gone and it
// is old enough; a temporary file that a live process is writing is never removed, whatever the
// process id in its name.
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"

#include <agentcore/convert.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;
using namespace std::chrono_literals;

namespace {

// The child's end of the pipe that tells the parent the child stopped.
int g_stopped_fd = -1;

[[noreturn]] void report_stopped_and_wait() {
    const char byte = 'x';
    if (::write(g_stopped_fd, &byte, 1) != 1) ::_exit(3);
    for (;;) ::pause();
}

// File operations whose `link` (the publish of a create or a fork) or `rename` (the publish of a
// repair) stop the process just before the temporary file would get its final name.
const agentcore::detail::FileOps& stopping_at_link() {
    static const agentcore::detail::FileOps ops = [] {
        agentcore::detail::FileOps o = agentcore::detail::FileOps::real();
        o.link = [](const char*, const char*) -> int { report_stopped_and_wait(); };
        return o;
    }();
    return ops;
}
const agentcore::detail::FileOps& stopping_at_rename() {
    static const agentcore::detail::FileOps ops = [] {
        agentcore::detail::FileOps o = agentcore::detail::FileOps::real();
        o.rename = [](const char*, const char*) -> int { report_stopped_and_wait(); };
        return o;
    }();
    return ops;
}

// A child process, stopped where its `work` stops (or killed).
class StoppedWriter {
public:
    explicit StoppedWriter(const std::function<void()>& work) {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        std::fflush(nullptr);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            ::close(fds[0]);
            g_stopped_fd = fds[1];
            try {
                work();
            } catch (...) {
                ::_exit(2);
            }
            ::_exit(1);  // it was meant to stop
        }
        ::close(fds[1]);
        char byte = 0;
        ssize_t n = 0;
        do {
            n = ::read(fds[0], &byte, 1);
        } while (n < 0 && errno == EINTR);
        ::close(fds[0]);
        if (n != 1) {
            kill_now();
            FAIL("the writer ended before it stopped");
        }
    }
    StoppedWriter(const StoppedWriter&) = delete;
    StoppedWriter& operator=(const StoppedWriter&) = delete;
    ~StoppedWriter() { kill_now(); }

    void kill_now() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
    }

private:
    pid_t pid_ = -1;
};

// The hidden temporary files under `folder`, at any depth.
std::vector<std::string> temp_files(const std::string& folder) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(folder)) {
        const std::string name = e.path().filename().string();
        if (!name.empty() && name.front() == '.' && name.find(".tmp-") != std::string::npos)
            out.push_back(e.path().string());
    }
    return out;
}

// Sets a file's times to `age` ago (the link itself, not what it names).
void age_file(const std::string& path, std::chrono::seconds age) {
    const auto then = std::chrono::system_clock::now() - age;
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(then.time_since_epoch());
    timespec times[2];
    times[0].tv_sec = static_cast<time_t>(secs.count());
    times[0].tv_nsec = 0;
    times[1] = times[0];
    REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

constexpr auto past_grace = agentcore::detail::temp_file_grace + std::chrono::seconds(60);

CreateOptions named(std::string id) {
    CreateOptions o;
    o.id = std::move(id);
    o.cwd = "/work/project";
    return o;
}

JsonlSessionRepo repo_with(const std::string& root, const agentcore::detail::FileOps& ops) {
    JsonlStorageOptions o = jsonl_options(7, Durability::durable);
    o.file_ops = &ops;
    return JsonlSessionRepo(root, o);
}

}  // namespace

TEST_CASE(
    "a create killed before its file got its name leaves a temporary file that a later create "
    "removes",
    "[reliability][sweep]") {
    ScratchDir dir;
    const std::string root = dir.file("sessions");
    JsonlSessionRepo repo(root, jsonl_options(7, Durability::durable));
    StoppedWriter writer([&] {
        JsonlSessionRepo stopping = repo_with(root, stopping_at_link());
        create(stopping, named("killed"));
    });
    const auto temps = temp_files(root);
    REQUIRE(temps.size() == 1);
    const std::string temp = temps[0];

    // Its writer is alive (it holds the repository's lock too, so no create can run beside it):
    // the file is left however old it looks.
    age_file(temp, past_grace);
    CHECK(sweep_temporary_files(repo) == 0);
    CHECK(sweep_temporary_files(repo, 0s) == 0);
    CHECK(temp_files(root) == temps);

    writer.kill_now();
    REQUIRE(temp_files(root) == temps);  // what the kill left
    const auto listed = list(repo);
    CHECK(listed.problems.empty());
    CHECK(listed.sessions.empty());

    // Its writer is gone, but it was changed a moment ago: left for now.
    age_file(temp, 0s);
    create(repo, named("soon-after"));
    CHECK(temp_files(root) == temps);

    // Older than the grace period: the next create removes it.
    age_file(temp, past_grace);
    create(repo, named("later"));
    CHECK(temp_files(root).empty());
    CHECK(list(repo).sessions.size() == 2);
}

TEST_CASE(
    "a fork killed before its file got its name leaves a temporary file that a later fork removes",
    "[reliability][sweep]") {
    ScratchDir dir;
    const std::string root = dir.file("sessions");
    JsonlSessionRepo repo(root, jsonl_options(7, Durability::durable));
    {
        auto s = create(repo, named("source"));
        append_message(s, user("hello"));
        append_message(s, assistant("hi"));
    }
    StoppedWriter writer([&] {
        JsonlSessionRepo stopping = repo_with(root, stopping_at_link());
        ForkOptions fo;
        fo.session_id = "killed-fork";
        fork(stopping, "source", fo);
    });
    const auto temps = temp_files(root);
    REQUIRE(temps.size() == 1);
    age_file(temps[0], past_grace);
    CHECK(sweep_temporary_files(repo, 0s) == 0);  // still written

    writer.kill_now();
    REQUIRE(temp_files(root) == temps);
    age_file(temps[0], past_grace);
    ForkOptions fo;
    fo.session_id = "later-fork";
    fork(repo, "source", fo);
    CHECK(temp_files(root).empty());
    CHECK(list(repo).sessions.size() == 2);
    CHECK(open_read_only(repo, "later-fork").storage().entry_count() == 2);
}

TEST_CASE(
    "a repair killed before its clean copy took the file's place leaves a temporary file the next "
    "repair removes",
    "[reliability][sweep]") {
    ScratchDir dir;
    const std::string path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path);
        append_message(s, user("one"));
        append_message(s, assistant("two"));
        append_message(s, user("three"));
    }
    auto lines = file_lines(path);
    REQUIRE(lines.size() == 4);
    lines.insert(lines.begin() + 2, "{not json");
    std::string damaged;
    for (const auto& l : lines) damaged += l + "\n";
    write_file(path, damaged);

    StoppedWriter writer([&] {
        JsonlStorageOptions o = jsonl_options();
        o.file_ops = &stopping_at_rename();
        JsonlSessionStorage::repair(path, o);
    });
    auto temps = temp_files(dir.path());
    REQUIRE(temps.size() == 1);
    CHECK(std::filesystem::path(temps[0]).filename().string().rfind(".s.jsonl.tmp-", 0) == 0);
    age_file(temps[0], past_grace);
    CHECK(agentcore::detail::sweep_temp_files(agentcore::detail::FileOps::real(), dir.path(), {},
                                              0s) == 0);  // still written
    writer.kill_now();
    CHECK(read_file(path) == damaged);  // the repair never took the file's place

    age_file(temps[0], past_grace);
    const RepairReport report = JsonlSessionStorage::repair(path, jsonl_options());
    CHECK(report.changed);
    CHECK(temp_files(dir.path()).empty());
    CHECK(open_file_read_only(path).storage().entry_count() == 3);
}

TEST_CASE(
    "the lock decides whether a temporary file's writer lives, not the process id in its name",
    "[reliability][sweep]") {
    ScratchDir dir;
    const std::string root = dir.file("sessions");
    const std::string folder = root + "/" + JsonlSessionRepo::folder_name("/work/project");
    std::filesystem::create_directories(folder);
    JsonlSessionRepo repo(root, jsonl_options());

    // Named after a process that is alive (this one: a process id used again), but nobody holds
    // its lock: its writer is gone.
    const std::string reused =
        folder + "/.x_a.jsonl.tmp-" + std::to_string(::getpid()) + "-0-0000abcd";
    write_file(reused, "{}\n");
    age_file(reused, past_grace);

    // Named after no process, but locked by a live one.
    const std::string live = folder + "/.x_b.jsonl.tmp-999999999-0-0000abcd";
    write_file(live, "{}\n");
    age_file(live, past_grace);
    {
        StoppedWriter holder([&] {
            const int fd = ::open(live.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(4);
            report_stopped_and_wait();
        });
        CHECK(sweep_temporary_files(repo) == 1);
        CHECK_FALSE(std::filesystem::exists(reused));
        CHECK(std::filesystem::exists(live));
    }
    CHECK(sweep_temporary_files(repo) == 1);  // its holder was killed
    CHECK_FALSE(std::filesystem::exists(live));

    // Only regular files with a temporary name are removed: a FIFO or a link so named, and
    // files with other names, are left.
    const std::string fifo = folder + "/.x_c.jsonl.tmp-1-0-0000abcd";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string target = dir.file("kept.txt");
    write_file(target, "kept");
    const std::string link = folder + "/.x_d.jsonl.tmp-1-0-0000abcd";
    REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
    const std::string other = folder + "/.notes.tmp-draft";
    write_file(other, "mine");
    const std::string backup = folder + "/x_e.jsonl.bak-2026-12-02T07-43-23-123Z";
    write_file(backup, "mine");
    for (const auto& p : {fifo, link, other, backup}) age_file(p, past_grace);
    CHECK(sweep_temporary_files(repo, 0s) == 0);
    for (const auto& p : {fifo, link, other, backup})
        CHECK(std::filesystem::exists(std::filesystem::symlink_status(p)));
    CHECK(read_file(target) == "kept");
}

TEST_CASE(
    "convert removes the temporary files killed converts left beside its output, never a live one",
    "[reliability][sweep]") {
    ScratchDir dir;
    const std::string in = dir.file("in.jsonl");
    {
        auto s = create_file_session(in);
        append_message(s, user("one"));
    }
    const std::string out = dir.file("out.jsonl");
    const std::string dead = dir.file(".out.jsonl.tmp-999999998-0000abcd");
    write_file(dead, "half a sess");
    age_file(dead, past_grace);
    const std::string live = dir.file(".out.jsonl.tmp-999999999-0000abcd");
    write_file(live, "half a sess");
    age_file(live, past_grace);
    const std::string other = dir.file(".other.jsonl.tmp-999999998-0000abcd");
    write_file(other, "another file's");
    age_file(other, past_grace);
    StoppedWriter holder([&] {
        const int fd = ::open(live.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(4);
        report_stopped_and_wait();
    });
    convert(in, Dialect::pi, out);
    CHECK_FALSE(std::filesystem::exists(dead));
    CHECK(std::filesystem::exists(live));
    CHECK(std::filesystem::exists(other));  // not a temporary file of this output
    CHECK(load_session_file(out).storage.entry_count() == 1);
}

// Only regular files are sessions (SPEC §6): a FIFO, a device or a socket in place of a session
// file, or among the files of a sessions folder, never blocks a call and gets a clear error.
// Each call runs in a child process with an alarm, so that a call that blocks fails the test
// instead of hanging it.
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"

#include <agentcore/convert.hpp>

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <string>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

// Runs `call` in a child with a 5 s alarm. Returns 0 when it threw SessionError(storage) whose
// message names `path` and says "not a regular file", 1 when it returned, 2 for another error,
// -SIGALRM when it blocked.
int refused_in_child(const std::function<void()>& call, const std::string& path) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::alarm(5);
        int code = 1;
        try {
            call();
        } catch (const SessionError& e) {
            const std::string what = e.what();
            code = e.code() == ErrorCode::storage && what.find(path) != std::string::npos &&
                           what.find("not a regular file") != std::string::npos
                       ? 0
                       : 2;
            if (code != 0) std::fprintf(stderr, "%s\n", e.what());
        } catch (...) {
            code = 3;
        }
        ::_exit(code);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

}  // namespace

TEST_CASE("a FIFO in place of a session file is refused by every opening call, none blocks",
          "[reliability][special]") {
    ScratchDir dir;
    const auto fifo = dir.file("s.jsonl");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(refused_in_child([&] { JsonlSessionStorage::open(fifo, jsonl_options()); }, fifo) == 0);
    CHECK(refused_in_child([&] { JsonlSessionStorage::open_read_only(fifo, jsonl_options()); },
                           fifo) == 0);
    CHECK(refused_in_child([&] { JsonlSessionStorage::repair(fifo, jsonl_options()); }, fifo) == 0);
    CHECK(refused_in_child([&] { load_session_file(fifo); }, fifo) == 0);
    CHECK(refused_in_child([&] { convert(fifo, Dialect::pi, dir.file("out.jsonl")); }, fifo) == 0);
    CHECK(refused_in_child([&] { read_session_lines(fifo); }, fifo) == 0);
}

TEST_CASE("a device in place of a session file is refused, never read without bound",
          "[reliability][special]") {
    const std::string zero = "/dev/zero";
    CHECK(refused_in_child([&] { JsonlSessionStorage::open_read_only(zero, jsonl_options()); },
                           zero) == 0);
    CHECK(refused_in_child([&] { load_session_file(zero); }, zero) == 0);
}

TEST_CASE(
    "a FIFO among a repository's session files: list reports it, open, fork and remove never block",
    "[reliability][special]") {
    ScratchDir dir;
    const std::string root = dir.file("root");
    JsonlSessionRepo repo(root, jsonl_options());
    {
        CreateOptions o;
        o.id = "real";
        o.cwd = "/work";
        create(repo, o);
    }
    const std::string folder = root + "/" + JsonlSessionRepo::folder_name("/work");
    const std::string fifo = folder + "/2026-12-02T07-43-23-123Z_piped.jsonl";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(refused_in_child(
              [&] {
                  const auto l = list(repo);
                  // The real session is listed, the FIFO is a problem naming it.
                  if (l.sessions.size() == 1 && l.problems.size() == 1)
                      throw SessionError(ErrorCode::storage, l.problems[0].reason);
              },
              fifo) == 0);
    CHECK(refused_in_child([&] { open(repo, "piped"); }, fifo) == 0);
    CHECK(refused_in_child([&] { open_read_only(repo, "piped"); }, fifo) == 0);
    CHECK(refused_in_child([&] { fork(repo, "piped"); }, fifo) == 0);
    // remove unlinks the name without opening it.
    CHECK(refused_in_child([&] { remove(repo, "piped"); }, fifo) == 1);
    struct stat st {};
    CHECK(::lstat(fifo.c_str(), &st) != 0);
    CHECK(list(repo).sessions.size() == 1);
}

// Conversations are private (SPEC §6): modes from the start, no symbolic links followed, no
// descriptor inherited by a spawned program, hostile ids refused before any file call, no
// conversation text in any error message.
#include "stress/fault_ops.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/jsonl_fixtures.hpp"

#include <agentcore/pi_migrate.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

int wait_for(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? -WTERMSIG(status) : -1000;
}

CreateOptions session_in(std::string id, std::string cwd = "/home/ann/project") {
    CreateOptions o;
    o.id = std::move(id);
    o.cwd = std::move(cwd);
    return o;
}

}  // namespace

TEST_CASE("every file and folder is private from its creation, whatever the umask",
          "[reliability][security]") {
    ScratchDir dir;
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int code = 0;
        try {
            ::umask(0);  // the most permissive umask: modes come from the creating calls alone
            JsonlSessionRepo repo(dir.file("root"), jsonl_options());
            std::string path;
            {
                auto s = create(repo, session_in("a"));
                append_message(s, user("one"));
                path = s.storage().path();
            }
            ForkOptions fo;
            fo.session_id = "b";
            fork(repo, "a", fo);
            write_file(path, read_file(path) + "{\"torn");  // a torn tail: quarantined on open
            { open(repo, "a"); }
            write_file(path, read_file(path) + "not json\n{\"type\":\"x\"}\n");
            JsonlSessionStorage::repair(path, jsonl_options());  // a backup and a quarantine
            std::size_t files = 0;
            for (const auto& e : std::filesystem::recursive_directory_iterator(dir.file("root"))) {
                struct stat st {};
                if (::lstat(e.path().c_str(), &st) != 0) code = 3;
                const mode_t want = S_ISDIR(st.st_mode) ? 0700 : 0600;
                if ((st.st_mode & 07777) != want) code = 4;
                if (!S_ISDIR(st.st_mode)) ++files;
            }
            struct stat root {};
            if (::lstat(dir.file("root").c_str(), &root) != 0 || (root.st_mode & 07777) != 0700)
                code = 5;
            if (files < 5) code = 6;  // a, b, the quarantines, the backup
        } catch (...) {
            code = 2;
        }
        ::_exit(code);
    }
    CHECK(wait_for(pid) == 0);
}

TEST_CASE("a symbolic link in place of a session folder is refused, not followed",
          "[reliability][security]") {
    ScratchDir dir;
    const std::string root = dir.file("root");
    const std::string elsewhere = dir.file("elsewhere");
    std::filesystem::create_directories(root);
    std::filesystem::create_directories(elsewhere);
    REQUIRE(::symlink(elsewhere.c_str(),
                      (root + "/" + JsonlSessionRepo::folder_name("/home/ann/project")).c_str()) ==
            0);
    JsonlSessionRepo repo(root, jsonl_options());
    CHECK(error_of([&] { create(repo, session_in("a")); }) == ErrorCode::storage);
    // The true reason, naming the folder.
    const std::string message = message_of_error([&] { create(repo, session_in("a")); });
    CHECK(message.find("is a symbolic link; refused") != std::string::npos);
    CHECK(message.find(JsonlSessionRepo::folder_name("/home/ann/project")) != std::string::npos);
    CHECK(std::filesystem::is_empty(elsewhere));
    // A session file placed behind the link is not found through it either.
    write_file(elsewhere + "/2026-12-02T07-43-23-123Z_b.jsonl",
               encode_header(test_header("b"), Dialect::native) + "\n");
    CHECK(error_of([&] { open(repo, "b"); }) == ErrorCode::not_found);
    CHECK(list(repo).sessions.empty());
    // A link in place of a torn session's quarantine name is not written through.
    const auto path = dir.file("s.jsonl");
    { create_file_session(path); }
    write_file(path, read_file(path) + "{\"torn");
    CHECK(open_file_session(path).storage().quarantine_path());
}

TEST_CASE("a spawned program inherits no session descriptor and cannot hold the lock",
          "[reliability][security]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const auto listing = dir.file("fds.txt");
    auto writer = std::make_shared<JsonlSessionStorage>(
        JsonlSessionStorage::create(path, test_header(), jsonl_options()));
    const auto reader = JsonlSessionStorage::open_read_only(path, jsonl_options());
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const std::string script = "ls -l /proc/self/fd > '" + listing + "'; echo done >> '" +
                                   listing + "'; exec sleep 30";
        ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (read_file(listing).find("done") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const std::string fds = read_file(listing);
    CHECK(fds.find("done") != std::string::npos);
    CHECK(fds.find("s.jsonl") == std::string::npos);
    // The program still runs; with the writer closed, a new writer gets the lock at once.
    writer.reset();
    CHECK_NOTHROW(JsonlSessionStorage::open(path, jsonl_options()));
    ::kill(pid, SIGKILL);
    CHECK(wait_for(pid) == -SIGKILL);
}

TEST_CASE("hostile session ids are refused before any file call", "[reliability][security]") {
    ScratchDir dir;
    JsonlSessionRepo seed(dir.file("root"), jsonl_options());
    { create(seed, session_in("src")); }
    auto options = jsonl_options();
    options.file_ops = &CallInjector::ops();
    JsonlSessionRepo repo(dir.file("root"), options);
    const std::vector<std::string> hostile = {"../x",
                                              "../../etc/passwd",
                                              "/etc/passwd",
                                              "a/b",
                                              std::string("a\0b", 3),
                                              std::string(129, 'a'),
                                              std::string(100000, 'b'),
                                              "",
                                              ".hidden",
                                              "-dash",
                                              "x\n",
                                              "x y",
                                              "..",
                                              "\xc3\xa9t\xc3\xa9"};
    std::size_t refused = 0;
    for (const auto& id : hostile) {
        CallInjector::reset();
        ForkOptions fo;
        fo.session_id = id;
        CHECK(error_of([&] { create(repo, session_in(id)); }) == ErrorCode::invalid_session);
        CHECK(error_of([&] { open(repo, id); }) == ErrorCode::invalid_session);
        CHECK(error_of([&] { open_read_only(repo, id); }) == ErrorCode::invalid_session);
        CHECK(error_of([&] { remove(repo, id); }) == ErrorCode::invalid_session);
        CHECK(error_of([&] { fork(repo, id, {}); }) == ErrorCode::invalid_session);
        CHECK(error_of([&] { fork(repo, "src", fo); }) == ErrorCode::invalid_session);
        CHECK(CallInjector::get().calls == 0);
        refused += 6;
    }
    CallInjector::reset();
    CHECK(list(repo).sessions.size() == 1);
    CHECK(refused == 6 * hostile.size());
}

TEST_CASE("no error message carries the conversation's text", "[reliability][security]") {
    ScratchDir dir;
    const std::string secret = "TOP-SECRET-7f3a";
    const auto path = dir.file("s.jsonl");
    std::vector<std::string> messages;
    auto collect = [&](auto&& f) {
        try {
            f();
        } catch (const SessionError& e) {
            messages.emplace_back(e.what());
        }
    };
    const std::string header = encode_header(test_header(), Dialect::native) + "\n";
    const std::string good =
        "{\"type\":\"message\",\"id\":\"a1\",\"parent_id\":null,\"timestamp\":\"t\",\"message\":"
        "{\"role\":\"user\",\"content\":\"" +
        secret + "\",\"timestamp\":1}}\n";
    const std::vector<std::string> bad_lines = {
        "{\"type\":\"message\",\"id\":\"b1\",\"parent_id\":\"a1\",\"timestamp\":\"t\",\"message\":{"
        "\"role\":\"user\",\"content\":\"" +
            secret + "\n",
        "{\"type\":\"message\",\"id\":\"b2\",\"parent_id\":\"a1\",\"timestamp\":\"t\",\"message\":{"
        "\"role\":\"user\",\"content\":\"" +
            secret + "\xff\",\"timestamp\":1}}\n",
        "{\"type\":\"message\",\"id\":\"b3\",\"parent_id\":\"a1\",\"timestamp\":\"t\",\"message\":{"
        "\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"" +
            secret + "\"}],\"timestamp\":\"" + secret + "\"}}\n",
        "{\"type\":\"message\",\"id\":\"b4\",\"parent_id\":\"a1\",\"timestamp\":\"t\",\"message\":{"
        "\"role\":\"user\",\"content\":\"" +
            secret + "\" \"x\"}}\n",
        "{\"type\":\"label\",\"id\":\"b5\",\"parent_id\":\"a1\",\"timestamp\":\"t\",\"target_id\":"
        "\"a1\",\"label\":{\"" +
            secret + "\":1}}\n",
        "{\"type\":\"session_info\",\"id\":\"b6\",\"parent_id\":\"a1\",\"timestamp\":\"t\","
        "\"name\":[\"" +
            secret + "\"]}\n",
        "{\"type\":\"message\",\"id\":\"b7\",\"parent_id\":\"a1\",\"timestamp\":\"t\",\"message\":{"
        "\"role\":\"assistant\",\"content\":\"" +
            secret + "\",\"usage\":{\"input\":\"" + secret + "\"}}}\n",
    };
    for (const auto& bad : bad_lines) {
        write_file(path, header + good + bad + good.substr(0, 0));
        collect([&] { JsonlSessionStorage::open_read_only(path, jsonl_options()); });
        write_file(path, header + good + bad +
                             "{\"type\":\"custom\",\"id\":\"c1\",\"parent_id\":\"a1\","
                             "\"timestamp\":\"t\",\"custom_type\":\"x\"}\n");
        collect([&] { JsonlSessionStorage::open_read_only(path, jsonl_options()); });
        collect([&] { JsonlSessionStorage::open(path, jsonl_options()); });
        auto lenient = jsonl_options();
        lenient.lenient = true;
        collect([&] {
            const auto s = JsonlSessionStorage::open_read_only(path, lenient);
            for (const auto& p : s.problems()) messages.push_back(p.reason);
            for (const auto& e : s.get_entries()) (void)e;
        });
        collect([&] {
            const auto report = JsonlSessionStorage::repair(path, lenient);
            for (const auto& p : report.problems) messages.push_back(p.reason);
        });
        std::string line = bad.substr(0, bad.size() - 1);
        collect([&] { decode_entry(line, Dialect::native); });
        collect([&] { decode_entry(line, Dialect::pi); });
        collect([&] { decode_header(line); });
        collect([&] {
            const auto lines = parse_session_text(header + good + bad);
            for (const auto& note : lines.report.notes) messages.push_back(note.detail);
        });
    }
    // The same text in a header; and in an append that fails.
    collect(
        [&] { decode_header("{\"type\":\"session\",\"version\":3,\"id\":\"" + secret + "\n"); });
    {
        auto options = jsonl_options();
        options.file_ops = &CallInjector::ops();
        CallInjector::reset();
        auto s = create_file_session(dir.file("f.jsonl"), options);
        CallInjector::get().fail_at = CallInjector::get().calls + 1;
        collect([&] { append_message(s, user(secret)); });
        CallInjector::reset();
    }
    REQUIRE(messages.size() > 40);
    std::size_t leaks = 0;
    for (const auto& m : messages)
        if (m.find("SECRET") != std::string::npos) {
            ++leaks;
            UNSCOPED_INFO(m);
        }
    CHECK(leaks == 0);
}

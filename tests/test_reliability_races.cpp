// Concurrency (SPEC §6): one writer per session across processes and threads, readers beside
// a writer, create/fork/remove racing in one repository folder. Also built alone under
// ThreadSanitizer (tests/stress/stress.cmake) for CI.
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/sizes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

int reap(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? -WTERMSIG(status) : -1000;
}

// Runs `body` in a child process; its return value is the exit code.
template <class Body>
pid_t spawn(Body&& body) {
    std::fflush(nullptr);  // a child must not write the parent's buffered output again
    const pid_t pid = ::fork();
    if (pid == 0) {
        int code = 0;
        try {
            code = body();
        } catch (...) {
            code = 90;
        }
        ::_exit(code);
    }
    return pid;
}

std::uint64_t fnv(std::uint64_t h, const std::string& s) {
    for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    return h;
}

CreateOptions racing_session(std::string id) {
    CreateOptions o;
    o.id = std::move(id);
    o.cwd = "/work";
    return o;
}

}  // namespace

TEST_CASE(
    "of 16 processes racing to open a session for writing exactly one wins and the rest get locked",
    "[reliability][race]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    { create_file_session(path); }
    long winners_total = 0;
    long locked_total = 0;
    const int rounds = 10;
    for (int round = 0; round < rounds; ++round) {
        int go[2];
        int results[2];
        int release[2];
        REQUIRE(::pipe(go) == 0);
        REQUIRE(::pipe(results) == 0);
        REQUIRE(::pipe(release) == 0);
        std::vector<pid_t> children;
        for (int i = 0; i < 16; ++i) {
            children.push_back(spawn([&] {
                ::close(go[1]);
                ::close(results[0]);
                ::close(release[1]);
                char c;
                while (::read(go[0], &c, 1) < 0 && errno == EINTR) {
                }
                char outcome = 'E';
                std::optional<JsonlSessionStorage> s;
                try {
                    s.emplace(JsonlSessionStorage::open(path, jsonl_options()));
                    outcome = 'W';
                } catch (const SessionError& e) {
                    outcome = e.code() == ErrorCode::locked ? 'L' : 'E';
                }
                if (::write(results[1], &outcome, 1) != 1) return 3;
                while (::read(release[0], &c, 1) < 0 && errno == EINTR) {
                }  // the winner holds the lock until every child has tried
                return 0;
            }));
        }
        ::close(go[0]);
        ::close(results[1]);
        ::close(release[0]);
        ::close(go[1]);  // everyone starts now
        int winners = 0;
        int locked = 0;
        char c;
        for (int i = 0; i < 16 && ::read(results[0], &c, 1) == 1; ++i) {
            winners += c == 'W' ? 1 : 0;
            locked += c == 'L' ? 1 : 0;
        }
        ::close(release[1]);
        ::close(results[0]);
        for (const pid_t pid : children) CHECK(reap(pid) == 0);
        CHECK(winners == 1);
        CHECK(locked == 15);
        winners_total += winners;
        locked_total += locked;
    }
    std::printf("reliability: writer races: %d rounds of 16 processes, %ld winners, %ld locked\n",
                rounds, winners_total, locked_total);
}

TEST_CASE("readers opening read-only while a writer appends always see a prefix of whole lines",
          "[reliability][race]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const auto done = dir.file("done");
    { create_file_session(path); }
    const int entries = 1500;
    const pid_t writer = spawn([&] {
        auto s = open_file_session(path, jsonl_options(5));
        for (int i = 0; i < entries; ++i)
            append_message(s, user("entry " + std::to_string(i) +
                                   std::string(static_cast<std::size_t>(i % 700), 'r')));
        write_file(done, "done");
        return 0;
    });
    std::vector<pid_t> readers;
    for (int r = 0; r < 3; ++r) {
        readers.push_back(spawn([&, r] {
            std::ofstream out(dir.file("reader-" + std::to_string(r)));
            for (int reads = 0; reads < 100000; ++reads) {
                const bool finished = std::filesystem::exists(done);
                try {
                    const auto s = JsonlSessionStorage::open_read_only(path, jsonl_options());
                    std::uint64_t h = 1469598103934665603ULL;
                    for (const auto& e : s.get_entries()) h = fnv(h, id_of(*e));
                    out << s.entry_count() << ' ' << h << '\n';
                } catch (const SessionError& e) {
                    out << "error\n";
                }
                if (finished) break;
            }
            return 0;
        }));
    }
    CHECK(reap(writer) == 0);
    for (const pid_t pid : readers) CHECK(reap(pid) == 0);
    // The prefixes of the final file.
    const auto s = JsonlSessionStorage::open_read_only(path, jsonl_options());
    REQUIRE(s.entry_count() == static_cast<std::size_t>(entries));
    std::vector<std::uint64_t> prefix{1469598103934665603ULL};
    for (const auto& e : s.get_entries()) prefix.push_back(fnv(prefix.back(), id_of(*e)));
    long reads = 0;
    long bad = 0;
    for (int r = 0; r < 3; ++r) {
        std::istringstream in(read_file(dir.file("reader-" + std::to_string(r))));
        std::string count;
        std::uint64_t hash = 0;
        while (in >> count) {
            ++reads;
            if (count == "error" || !(in >> hash)) {
                ++bad;
                continue;
            }
            const auto n = std::stoul(count);
            if (n >= prefix.size() || prefix[n] != hash) ++bad;
        }
    }
    std::printf("reliability: readers beside a writer: %ld read-only opens, %ld not a prefix\n",
                reads, bad);
    CHECK(reads > 3);
    CHECK(bad == 0);
}

TEST_CASE(
    "racing create, fork and remove in one repository folder never leave a half-visible session",
    "[reliability][race]") {
    ScratchDir dir;
    const std::string root = dir.file("root");
    const int workers = 3;
    const int rounds = 40;
    const int entries = 30;
    const auto stop = dir.file("stop");
    std::vector<pid_t> children;
    for (int w = 0; w < workers; ++w) {
        children.push_back(spawn([&, w] {
            JsonlSessionRepo repo(root, jsonl_options(static_cast<std::uint64_t>(w) + 1));
            for (int i = 0; i < rounds; ++i) {
                const std::string id = "w" + std::to_string(w) + "-" + std::to_string(i);
                {
                    auto s = create(repo, racing_session(id));
                    for (int k = 0; k < entries; ++k)
                        append_message(s, user("m" + std::to_string(k)));
                }
                ForkOptions fo;
                fo.session_id = "fork-" + id;
                fork(repo, id, fo);
                remove(repo, id);
                if (i % 2 == 0) remove(repo, "fork-" + id);
            }
            return 0;
        }));
    }
    // The lister: every session it lists opens, and every fork it lists is complete.
    const pid_t lister = spawn([&] {
        JsonlSessionRepo repo(root, jsonl_options());
        std::ofstream out(dir.file("lister"));
        while (!std::filesystem::exists(stop)) {
            const auto l = list(repo);
            for (const auto& p : l.problems) out << "problem " << p.reason << '\n';
            for (const auto& listing : l.sessions) {
                try {
                    const auto s =
                        JsonlSessionStorage::open_read_only(listing.path, jsonl_options());
                    if (listing.header.id.rfind("fork-", 0) == 0 &&
                        s.entry_count() != static_cast<std::size_t>(entries))
                        out << "incomplete " << listing.header.id << '\n';
                    out << "ok\n";
                } catch (const SessionError& e) {
                    if (e.code() != ErrorCode::not_found)
                        out << "unopenable " << e.what() << '\n';  // removed meanwhile
                }
            }
        }
        return 0;
    });
    for (const pid_t pid : children) CHECK(reap(pid) == 0);
    write_file(stop, "stop");
    CHECK(reap(lister) == 0);
    const std::string seen = read_file(dir.file("lister"));
    long opened = 0;
    for (std::size_t pos = 0; (pos = seen.find("ok\n", pos)) != std::string::npos; pos += 3)
        ++opened;
    std::string problems;
    std::istringstream lines(seen);
    for (std::string line; std::getline(lines, line);)
        if (line != "ok") problems += line + "\n";
    std::printf(
        "reliability: create/fork/remove races: %d workers x %d rounds, %ld sessions opened while "
        "listed\n",
        workers, rounds, opened);
    INFO(problems.substr(0, 2000));
    CHECK(problems.empty());
    JsonlSessionRepo repo(root, jsonl_options());
    const auto l = list(repo);
    CHECK(l.problems.empty());
    CHECK(l.sessions.size() == static_cast<std::size_t>(workers * rounds / 2));
}

TEST_CASE("threads racing to open one session for writing: exactly one wins",
          "[reliability][race][threads]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    { create_file_session(path); }
    for (int round = 0; round < 5; ++round) {
        std::atomic<int> winners{0};
        std::atomic<int> locked{0};
        std::atomic<int> ready{0};
        std::atomic<bool> release{false};
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t) {
            threads.emplace_back([&, t] {
                ++ready;
                while (ready.load() < 8) std::this_thread::yield();
                try {
                    auto s = JsonlSessionStorage::open(
                        path, jsonl_options(static_cast<std::uint64_t>(t)));
                    ++winners;
                    while (!release.load()) std::this_thread::yield();
                } catch (const SessionError& e) {
                    if (e.code() == ErrorCode::locked) ++locked;
                }
                if (locked.load() == 7) release = true;
            });
        }
        for (auto& th : threads) th.join();
        CHECK(winners.load() == 1);
        CHECK(locked.load() == 7);
    }
}

TEST_CASE("threads each writing their own session of one repository while another lists",
          "[reliability][race][threads]") {
    ScratchDir dir;
    const std::string root = dir.file("root");
    std::atomic<bool> stop{false};
    std::atomic<long> listed{0};
    std::atomic<long> problems{0};
    std::thread lister([&] {
        JsonlSessionRepo repo(root, jsonl_options(99));
        while (!stop.load()) {
            const auto l = list(repo);
            listed += static_cast<long>(l.sessions.size());
            problems += static_cast<long>(l.problems.size());
        }
    });
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t) {
        writers.emplace_back([&, t] {
            JsonlSessionRepo repo(root, jsonl_options(static_cast<std::uint64_t>(t) + 1));
            for (int i = 0; i < 10; ++i) {
                const std::string id = "t" + std::to_string(t) + "-" + std::to_string(i);
                {
                    auto s = create(repo, racing_session(id));
                    for (int k = 0; k < 10; ++k) append_message(s, user("m"));
                }
                ForkOptions fo;
                fo.session_id = "f" + id;
                fork(repo, id, fo);
            }
        });
    }
    for (auto& th : writers) th.join();
    stop = true;
    lister.join();
    CHECK(problems.load() == 0);
    JsonlSessionRepo repo(root, jsonl_options());
    CHECK(list(repo).sessions.size() == 80);
}

TEST_CASE("readers opening read-only while writers cut torn tails never crash and see a prefix",
          "[reliability][race]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const auto done = dir.file("done");
    {
        auto s = create_file_session(path);
        // Big enough that a reader is still scanning when a writer cuts the tail it mapped.
        for (int i = 0; i < 1500; ++i)
            append_message(s, user("entry " + std::to_string(i) + std::string(1000, 'b')));
    }
    const int rounds = static_cast<int>(sized(150));
    const pid_t writer = spawn([&] {
        const std::string junk = "{\"type\":\"message\",\"id\":\"torn\",\"x\":\"" +
                                 std::string(std::size_t{256} << 10, 't');
        for (int i = 0; i < rounds; ++i) {
            {  // the remains of an append whose process died: no newline
                const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
                if (fd < 0 ||
                    ::write(fd, junk.data(), junk.size()) != static_cast<ssize_t>(junk.size()))
                    return 3;
                ::close(fd);
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200 * (i % 7)));
            auto s = open_file_session(path, jsonl_options(static_cast<std::uint64_t>(i) + 7));
            if (!s.storage().had_torn_tail() || !s.storage().quarantine_path()) return 4;
            std::filesystem::remove(*s.storage().quarantine_path());
            if (i % 3 == 0) append_message(s, user("acknowledged " + std::to_string(i)));
        }
        write_file(done, "done");
        return 0;
    });
    std::vector<pid_t> readers;
    for (int r = 0; r < 3; ++r) {
        readers.push_back(spawn([&, r] {
            std::ofstream out(dir.file("reader-" + std::to_string(r)));
            for (;;) {
                const bool finished = std::filesystem::exists(done);
                try {
                    const auto s = JsonlSessionStorage::open_read_only(path, jsonl_options());
                    std::uint64_t h = 1469598103934665603ULL;
                    for (const auto& e : s.get_entries()) h = fnv(h, id_of(*e));
                    out << s.entry_count() << ' ' << h << '\n';
                } catch (const SessionError& e) {
                    out << "error " << e.what() << '\n';
                }
                if (finished) break;
            }
            return 0;
        }));
    }
    CHECK(reap(writer) == 0);
    int crashed = 0;
    for (const pid_t pid : readers) crashed += reap(pid) != 0 ? 1 : 0;
    CHECK(crashed == 0);  // SIGBUS: a page of the mapping was cut away under the reader
    const auto s = JsonlSessionStorage::open_read_only(path, jsonl_options());
    std::vector<std::uint64_t> prefix{1469598103934665603ULL};
    for (const auto& e : s.get_entries()) prefix.push_back(fnv(prefix.back(), id_of(*e)));
    long reads = 0;
    std::string bad;
    for (int r = 0; r < 3; ++r) {
        std::istringstream in(read_file(dir.file("reader-" + std::to_string(r))));
        for (std::string line; std::getline(in, line);) {
            ++reads;
            std::istringstream fields(line);
            std::string count;
            std::uint64_t hash = 0;
            fields >> count;
            if (count == "error" || !(fields >> hash) || std::stoul(count) >= prefix.size() ||
                prefix[std::stoul(count)] != hash)
                bad += line.substr(0, 300) + "\n";
        }
    }
    std::printf(
        "reliability: readers beside torn-tail cuts: %d cuts of 256 KiB, %ld read-only opens, %d "
        "readers "
        "crashed, %zu reads not a prefix\n",
        rounds, reads, crashed, static_cast<std::size_t>(std::count(bad.begin(), bad.end(), '\n')));
    INFO(bad.substr(0, 2000));
    CHECK(reads > 3);
    CHECK(bad.empty());
}

TEST_CASE(
    "of processes creating or forking to one new session id exactly one wins, the rest get "
    "already_exists",
    "[reliability][race]") {
    ScratchDir dir;
    const std::string root = dir.file("root");
    {
        JsonlSessionRepo repo(root, jsonl_options());
        auto source = create(repo, racing_session("source"));
        for (int k = 0; k < 20; ++k) append_message(source, user("m" + std::to_string(k)));
    }
    const int rounds = 25;
    const int racers = 6;
    long won = 0;
    long refused = 0;
    for (int round = 0; round < rounds; ++round) {
        const std::string id = "contested-" + std::to_string(round);
        int go[2];
        int results[2];
        REQUIRE(::pipe(go) == 0);
        REQUIRE(::pipe(results) == 0);
        std::vector<pid_t> children;
        for (int i = 0; i < racers; ++i) {
            children.push_back(spawn([&, i] {
                ::close(go[1]);
                ::close(results[0]);
                // Clocks a millisecond apart: each racer's file name is its own.
                JsonlStorageOptions o = jsonl_options(static_cast<std::uint64_t>(i) + 1);
                o.environment = Environment::deterministic(t0 + 1000 * round + i,
                                                           static_cast<std::uint64_t>(i) + 1);
                JsonlSessionRepo repo(root, o);
                char c;
                while (::read(go[0], &c, 1) < 0 && errno == EINTR) {
                }
                char outcome = 'E';
                try {
                    if (i % 2 == 0) {
                        create(repo, racing_session(id));
                    } else {
                        ForkOptions fo;
                        fo.session_id = id;
                        fork(repo, "source", fo);
                    }
                    outcome = 'W';
                } catch (const SessionError& e) {
                    outcome = e.code() == ErrorCode::already_exists ? 'X' : 'E';
                }
                return ::write(results[1], &outcome, 1) == 1 ? 0 : 3;
            }));
        }
        ::close(go[0]);
        ::close(results[1]);
        ::close(go[1]);
        int winners = 0;
        int taken = 0;
        char c;
        for (int i = 0; i < racers && ::read(results[0], &c, 1) == 1; ++i) {
            winners += c == 'W' ? 1 : 0;
            taken += c == 'X' ? 1 : 0;
        }
        ::close(results[0]);
        for (const pid_t pid : children) CHECK(reap(pid) == 0);
        CHECK(winners == 1);
        CHECK(taken == racers - 1);
        won += winners;
        refused += taken;
        JsonlSessionRepo repo(root, jsonl_options());
        long files = 0;
        repo.for_each_session_file(
            [&](const std::string&, std::string_view file_id) { files += file_id == id ? 1 : 0; });
        CHECK(files == 1);
    }
    std::printf(
        "reliability: create/fork races on one new id: %d rounds of %d processes, %ld winners, %ld "
        "already_exists\n",
        rounds, racers, won, refused);
}

TEST_CASE(
    "remove racing a writer that opens, appends and closes in a loop: no append is acknowledged "
    "into a removed file",
    "[reliability][race]") {
    ScratchDir dir;
    const std::string root = dir.file("root");
    JsonlStorageOptions waiting = jsonl_options();
    waiting.lock_wait = std::chrono::milliseconds(5000);
    const int rounds = 30;
    long acknowledged = 0;
    long lost = 0;
    long errors = 0;
    for (int round = 0; round < rounds; ++round) {
        const std::string id = "removed-" + std::to_string(round);
        JsonlSessionRepo repo(root, waiting);
        { create(repo, racing_session(id)); }
        int acks[2];
        REQUIRE(::pipe(acks) == 0);
        const pid_t writer = spawn([&] {
            ::close(acks[0]);
            JsonlSessionRepo r(root, waiting);
            for (int i = 0;; ++i) {
                char outcome = 'A';
                try {
                    auto s = open(r, id);
                    append_message(s, user("m" + std::to_string(i)));
                    // Still holding the session: an acknowledged entry must have a file with a
                    // name.
                    struct stat st {};
                    if (::fstat(s.storage().native_handle(), &st) != 0 || st.st_nlink == 0)
                        outcome = 'L';
                } catch (const SessionError& e) {
                    if (e.code() == ErrorCode::not_found) return 0;
                    outcome = 'E';
                }
                if (::write(acks[1], &outcome, 1) != 1) return 3;
                // flock is not fair: a writer that takes the lock again at once could starve
                // remove's wait; a real agent spends at least this long between turns.
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        });
        ::close(acks[1]);
        char c;
        for (int seen = 0; seen < 3 && ::read(acks[0], &c, 1) == 1; ++seen) {
        }
        try {
            remove(repo, id);
        } catch (const SessionError& e) {
            UNSCOPED_INFO(e.what());
            ++errors;
            ::kill(writer, SIGKILL);  // the session is still there: end the writer, not the test
        }
        while (::read(acks[0], &c, 1) == 1) {
            acknowledged += c == 'A' ? 1 : 0;
            lost += c == 'L' ? 1 : 0;
            errors += c == 'E' ? 1 : 0;
        }
        ::close(acks[0]);
        const int status = reap(writer);
        if (errors == 0) {
            CHECK(status == 0);
            CHECK(!repo.find_path(id));
        }
    }
    std::printf(
        "reliability: remove beside a writer: %d rounds, %ld appends acknowledged after the first "
        "three, %ld "
        "into a removed file, %ld errors\n",
        rounds, acknowledged, lost, errors);
    CHECK(lost == 0);
    CHECK(errors == 0);
}

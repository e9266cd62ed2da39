#pragma once
// Crash loops shared by the reliability tests (short forms, in CI) and the stress program
// (long forms): a child process works on a session and is killed with SIGKILL at a random
// moment; the parent checks what is on disk. Each loop returns figures; a non-zero `lost`,
// `unopenable` or `damaged` is a broken promise (SPEC §6).

#include "support/jsonl_fixtures.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace agentcore::testing {

/// What the crash loops saw.
struct CrashFigures {
    long loops = 0;
    long acknowledged = 0;  ///< entries (or forks, repairs) the children reported done
    long lost = 0;          ///< acknowledged but missing afterwards
    long unopenable = 0;    ///< files that did not open afterwards
    long damaged = 0;       ///< sources changed, half-written sessions listed, bad repairs
    long completed = 0;     ///< forks / repairs found complete after the kill
    long absent = 0;        ///< forks / repairs found not done at all
    long temp_files = 0;    ///< hidden temporary files left behind by killed children
};

namespace detail_loops {

inline int reap(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? -WTERMSIG(status) : -1000;
}

// Reads into `pending` until it holds `at_least` bytes or the pipe ends (EOF).
inline void read_into(int fd, std::string& pending, std::size_t at_least) {
    char buf[4096];
    while (pending.size() < at_least) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        pending.append(buf, static_cast<std::size_t>(n));
    }
}

// The 8-byte records in `pending`.
inline std::vector<std::string> records_of(const std::string& pending) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i + 8 <= pending.size(); i += 8) out.push_back(pending.substr(i, 8));
    return out;
}

// Reads 8-byte records until EOF.
inline std::vector<std::string> read_records(int fd) {
    std::string pending;
    read_into(fd, pending, static_cast<std::size_t>(-1));
    return records_of(pending);
}

inline void write_record(int fd, const std::string& record) {
    if (::write(fd, record.data(), 8) != 8) ::_exit(3);
}

// Runs `child(pipe write end)` in a child process, kills it after `delay`, returns what it
// reported. `delay` < 0: waits for the child to finish. With `after_first_record`, the delay
// counts from the child's first record (or its end), so that a slow start (a loaded machine, a
// sanitizer) cannot leave every loop killed before it did anything.
template <class Child>
std::vector<std::string> run_and_kill(Child&& child, std::chrono::microseconds delay,
                                      bool after_first_record = false) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::fflush(nullptr);  // a child must not write the parent's buffered output again
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::close(fds[0]);
        int code = 0;
        try {
            child(fds[1]);
        } catch (...) {
            code = 2;
        }
        ::_exit(code);
    }
    ::close(fds[1]);
    std::string pending;
    if (delay.count() >= 0) {
        if (after_first_record) read_into(fds[0], pending, 8);
        std::this_thread::sleep_for(delay);
        ::kill(pid, SIGKILL);
    }
    read_into(fds[0], pending, static_cast<std::size_t>(-1));
    ::close(fds[0]);
    reap(pid);
    return records_of(pending);
}

inline long count_temp_files(const std::string& folder, bool remove) {
    long n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::recursive_directory_iterator(folder, ec)) {
        const std::string name = e.path().filename().string();
        if (name.find(".tmp-") != std::string::npos) {
            ++n;
            if (remove) std::filesystem::remove(e.path(), ec);
        }
    }
    return n;
}

}  // namespace detail_loops

/// A child opens the session for writing (durable) and appends until killed at a random moment
/// (every other loop counts the moment from its first acknowledged append); the parent checks
/// that every entry the child acknowledged is there and the file opens.
inline CrashFigures kill_appends(const std::string& folder, long loops, std::uint64_t seed) {
    using namespace detail_loops;
    CrashFigures f;
    std::mt19937_64 rng(seed);
    std::string path;
    std::vector<std::string> acked;  // every entry acknowledged in the current file
    for (long loop = 0; loop < loops; ++loop) {
        if (loop % 100 == 0) {  // a fresh file now and then keeps each open short
            path = folder + "/kill-" + std::to_string(loop / 100) + ".jsonl";
            JsonlSessionStorage::create(path, test_header(), jsonl_options(seed));
            acked.clear();
        }
        const auto delay =
            std::chrono::microseconds(std::uniform_int_distribution<long>(0, 30000)(rng));
        const std::uint64_t child_seed = seed * 1000003U + static_cast<std::uint64_t>(loop);
        const auto records = run_and_kill(
            [&](int out) {
                auto options = jsonl_options(child_seed, Durability::durable);
                options.lock_wait = std::chrono::milliseconds(5000);
                auto s = Session<JsonlSessionStorage>(JsonlSessionStorage::open(path, options));
                for (int i = 0;; ++i) {
                    const auto size = static_cast<std::size_t>(
                        (child_seed + static_cast<std::uint64_t>(i) * 7919U) % 3000U);
                    const std::string id = append_message(
                        s, user("entry " + std::to_string(i) + std::string(size, 'k')));
                    write_record(out, id);  // acknowledged
                }
            },
            delay, /*after_first_record=*/loop % 2 == 1);
        ++f.loops;
        f.acknowledged += static_cast<long>(records.size());
        acked.insert(acked.end(), records.begin(), records.end());
        try {
            const auto r = JsonlSessionStorage::open_read_only(path, jsonl_options());
            for (const auto& id : records)
                if (!r.get_entry(id)) ++f.lost;
        } catch (const SessionError&) {
            ++f.unopenable;
        }
        if (loop % 100 == 99 || loop + 1 == loops) {  // the whole file, through a writing open
            try {
                const auto w = JsonlSessionStorage::open(path, jsonl_options());
                for (const auto& id : acked)
                    if (!w.get_entry(id)) ++f.lost;
            } catch (const SessionError&) {
                ++f.unopenable;
            }
        }
    }
    return f;
}

/// A child forks a session of `entries` entries in a repository and is killed at a random
/// moment; the source must be unchanged and list must show no half-written session.
inline CrashFigures kill_forks(const std::string& folder, long loops, std::uint64_t seed,
                               int entries = 300) {
    using namespace detail_loops;
    CrashFigures f;
    std::mt19937_64 rng(seed);
    const std::string root = folder + "/repo";
    JsonlSessionRepo repo(root, jsonl_options(seed));
    std::string source_path;
    {
        CreateOptions c;
        c.id = "src";
        c.cwd = "/work";
        auto s = create(repo, c);
        for (int i = 0; i < entries; ++i) append_message(s, user("entry " + std::to_string(i)));
        source_path = s.storage().path();
    }
    const std::string source = read_file(source_path);
    // How long one fork takes: kills land anywhere in it.
    const auto start = std::chrono::steady_clock::now();
    run_and_kill(
        [&](int out) {
            JsonlSessionRepo r(root, jsonl_options(seed + 1, Durability::durable));
            ForkOptions fo;
            fo.session_id = "timing";
            fork(r, "src", fo);
            write_record(out, "forked!!");
        },
        std::chrono::microseconds(-1));
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    remove(repo, "timing");
    for (long loop = 0; loop < loops; ++loop) {
        const std::string id = "copy-" + std::to_string(loop);
        const auto delay = std::chrono::microseconds(
            std::uniform_int_distribution<long>(0, took.count() + took.count() / 4)(rng));
        const auto records = run_and_kill(
            [&](int out) {
                JsonlSessionRepo r(root, jsonl_options(seed + static_cast<std::uint64_t>(loop),
                                                       Durability::durable));
                ForkOptions fo;
                fo.session_id = id;
                fork(r, "src", fo);
                write_record(out, "forked!!");
            },
            delay);
        ++f.loops;
        f.acknowledged += static_cast<long>(records.size());
        if (read_file(source_path) != source) ++f.damaged;
        const auto l = list(repo);
        f.damaged += static_cast<long>(l.problems.size());
        bool found = false;
        for (const auto& listing : l.sessions) {
            if (listing.header.id == "src") continue;
            try {
                const auto s = JsonlSessionStorage::open_read_only(listing.path, jsonl_options());
                if (s.entry_count() != static_cast<std::size_t>(entries)) ++f.damaged;
                if (listing.header.id == id) found = true;
            } catch (const SessionError&) {
                ++f.unopenable;
            }
        }
        if (!records.empty() && !found) ++f.lost;
        found ? ++f.completed : ++f.absent;
        remove(repo, id);
        f.temp_files += count_temp_files(root, true);
    }
    return f;
}

/// A child repairs a damaged session and is killed at a random moment; the file must be the
/// damaged original or the clean copy, the backup the original.
inline CrashFigures kill_repairs(const std::string& folder, long loops, std::uint64_t seed,
                                 int entries = 300) {
    using namespace detail_loops;
    CrashFigures f;
    std::mt19937_64 rng(seed);
    const std::string sub = folder + "/repair";
    std::filesystem::create_directories(sub);
    const std::string path = sub + "/s.jsonl";
    std::string clean;
    {
        auto s = Session<JsonlSessionStorage>(
            JsonlSessionStorage::create(path, test_header(), jsonl_options(seed)));
        for (int i = 0; i < entries; ++i) append_message(s, user("entry " + std::to_string(i)));
    }
    clean = read_file(path);
    const std::size_t cut = clean.find('\n', clean.size() / 2) + 1;
    const std::string damaged =
        clean.substr(0, cut) + "{\"type\":\"message\",\"id\":\"bad\n" + clean.substr(cut);
    auto reset = [&] {
        for (const auto& e : std::filesystem::directory_iterator(sub))
            std::filesystem::remove(e.path());
        write_file(path, damaged);
    };
    reset();
    const auto start = std::chrono::steady_clock::now();
    run_and_kill(
        [&](int) { JsonlSessionStorage::repair(path, jsonl_options(seed, Durability::durable)); },
        std::chrono::microseconds(-1));
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    if (read_file(path) != clean) ++f.damaged;  // the repair itself must give the clean copy
    for (long loop = 0; loop < loops; ++loop) {
        reset();
        const auto delay = std::chrono::microseconds(
            std::uniform_int_distribution<long>(0, took.count() + took.count() / 4)(rng));
        const auto records = run_and_kill(
            [&](int out) {
                JsonlSessionStorage::repair(
                    path,
                    jsonl_options(seed + static_cast<std::uint64_t>(loop), Durability::durable));
                write_record(out, "repaired");
            },
            delay);
        ++f.loops;
        f.acknowledged += static_cast<long>(records.size());
        const std::string now = read_file(path);
        if (now == clean) {
            ++f.completed;
        } else if (now == damaged) {
            ++f.absent;
            if (!records.empty()) ++f.lost;
        } else {
            ++f.damaged;
        }
        for (const auto& e : std::filesystem::directory_iterator(sub)) {
            const std::string name = e.path().filename().string();
            if (name.find(".bak-") != std::string::npos && read_file(e.path().string()) != damaged)
                ++f.damaged;
        }
        try {
            auto options = jsonl_options();
            options.lenient = true;
            if (JsonlSessionStorage::open_read_only(path, options).entry_count() !=
                static_cast<std::size_t>(entries))
                ++f.lost;
        } catch (const SessionError&) {
            ++f.unopenable;
        }
        f.temp_files += count_temp_files(sub, false);
    }
    return f;
}

}  // namespace agentcore::testing

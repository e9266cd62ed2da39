// JSONL storage figures on a generated session file, each beside its floor (the least the
// hardware and the kernel allow for the same work, measured in the same run) and the ratio.
//
//   bench_jsonl [--entries N] [--seed S] [--sessions M] [--appends K] [--dir DIR] [--keep] [--json]
//
// N defaults to 100,000 (a ~260 MB file); M (sessions to list) to 1,000 and K (appends timed
// per mode) to 1,000, both scaled down for small N, so that `--entries 1000` is a quick smoke
// run. Files go to DIR (default: a fresh folder under $TMPDIR or /tmp), removed at the end
// unless --keep. CPU-bound figures (page cache warm) are thread CPU time; appends and anything
// that syncs are wall time.

#include "bench_util.hpp"
#include "session_files.hpp"
#include "workload.hpp"

#include <agentcore/codec.hpp>
#include <agentcore/jsonl/jsonl_repo.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/session.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

using namespace agentcore;
using namespace agentcore_bench;
namespace fs = std::filesystem;

namespace {

using FileSession = Session<JsonlSessionStorage>;

// --- Timing both clocks -----------------------------------------------------------------------

struct Timing {
    Samples cpu_us;
    Samples wall_us;
};

// Runs `fn` `runs` times after one untimed warm-up run; records each run's CPU and wall time.
template <class Fn>
Timing time_each(std::size_t runs, Fn&& fn) {
    fn();
    Timing t;
    for (std::size_t i = 0; i < runs; ++i) {
        const double c0 = thread_cpu_seconds();
        const auto w0 = Clock::now();
        fn();
        t.wall_us.add(std::chrono::duration<double, std::micro>(Clock::now() - w0).count());
        t.cpu_us.add((thread_cpu_seconds() - c0) * 1e6);
    }
    return t;
}

std::string ratio_note(double value, double floor, const std::string& floor_name) {
    return "floor " + Report::format_value(floor) + " (" + floor_name + "), ratio " +
           (floor > 0 ? fixed1(value / floor) : std::string("-")) + "x";
}

// --- Floors -------------------------------------------------------------------------------

struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    Fd(Fd&& other) noexcept : fd(other.fd) { other.fd = -1; }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    Fd& operator=(Fd&&) = delete;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

Fd open_or_throw(const std::string& path, int flags, mode_t mode = 0600) {
    Fd f(::open(path.c_str(), flags | O_CLOEXEC, mode));
    if (f.fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    return f;
}

// Maps the file and finds every line end with memchr (the storage maps its file).
std::size_t mmap_split_floor(const std::string& path) {
    Fd f = open_or_throw(path, O_RDONLY);
    struct stat st {};
    ::fstat(f.fd, &st);
    const auto size = static_cast<std::size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, f.fd, 0);
    if (map == MAP_FAILED) throw std::runtime_error("cannot map " + path);
    ::madvise(map, size, MADV_SEQUENTIAL);
    const char* p = static_cast<const char*>(map);
    const char* end = p + size;
    std::size_t lines = 0;
    while (p < end) {
        const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
        if (nl == nullptr) break;
        ++lines;
        p = static_cast<const char*>(nl) + 1;
    }
    ::munmap(map, size);
    return lines;
}

// Removes the summary file of each cwd folder under `root` (a listing with summaries then reads
// every session again).
void remove_summary_files(const std::string& root) {
    std::error_code ec;
    for (const auto& folder : fs::directory_iterator(root, ec))
        fs::remove(folder.path() / std::string(agentcore::detail::SummaryCache::file_name), ec);
}

// The least a listing can do: walk the folders, and open, read the first 4 KiB, find the first
// line end and close each session file.
std::size_t list_floor(const std::string& root) {
    std::size_t found = 0;
    char buf[4096];
    auto each = [&](const std::string& folder, bool files) {
        DIR* dir = ::opendir(folder.c_str());
        if (dir == nullptr) return std::vector<std::string>{};
        std::vector<std::string> subfolders;
        while (const dirent* e = ::readdir(dir)) {
            const std::string name = e->d_name;
            if (name[0] == '.') continue;
            if (!files) {
                subfolders.push_back(folder + "/" + name);
                continue;
            }
            Fd f(::open((folder + "/" + name).c_str(), O_RDONLY | O_CLOEXEC));
            if (f.fd < 0) continue;
            const ssize_t n = ::pread(f.fd, buf, sizeof buf, 0);
            if (n > 0 && std::memchr(buf, '\n', static_cast<std::size_t>(n)) != nullptr) ++found;
        }
        ::closedir(dir);
        return subfolders;
    };
    for (const auto& folder : each(root, false)) each(folder, true);
    return found;
}

// --- Peak memory of an open, in a fresh process -------------------------------------------

// The child: opens the file, builds the context of its leaf, prints its peak RSS before and after.
int child_open(const std::string& path) {
    const std::int64_t before = proc_status_kb("VmHWM");
    std::size_t messages = 0;
    {
        FileSession session(JsonlSessionStorage::open(path));
        messages = build_context(session).messages.size();
    }
    std::cout << before << " " << proc_status_kb("VmHWM") << " " << messages << "\n";
    return 0;
}

// Runs this program again as `--child-open path`; returns the child's peak RSS growth in bytes.
double peak_rss_of_open(const std::string& path) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::dup2(fds[1], 1);
        ::close(fds[0]);
        ::close(fds[1]);
        std::string self = "/proc/self/exe", flag = "--child-open", file = path;
        char* child_argv[] = {self.data(), flag.data(), file.data(), nullptr};
        ::execv(self.c_str(), child_argv);
        ::_exit(127);
    }
    ::close(fds[1]);
    std::string out;
    char buf[256];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
        out.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    long long before = 0, after = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        std::sscanf(out.c_str(), "%lld %lld", &before, &after) != 2)
        throw std::runtime_error("the child that opens the file failed");
    return static_cast<double>(after - before) * 1024.0;
}

// --- Appends --------------------------------------------------------------------------------

// `count` entries that continue the session in `storage`: a generated workload whose roots are
// re-parented onto the storage's leaf, with ids the session does not hold yet.
std::vector<SessionTreeEntry> continuation(const JsonlSessionStorage& storage, std::size_t count,
                                           std::uint64_t seed, std::int64_t start_ms) {
    for (std::uint64_t s = seed;; ++s) {
        WorkloadOptions o;
        o.entries = count;
        o.seed = s;
        o.start_ms = start_ms;
        auto memory = make_memory_session(o);
        std::vector<SessionTreeEntry> out;
        bool clash = false;
        for (const auto& handle : memory.storage().entries()) {
            SessionTreeEntry e = *handle;
            if (storage.get_entry(id_of(e))) clash = true;
            if (!base_of(e).parent_id) base_of(e).parent_id = storage.get_leaf_id();
            out.push_back(std::move(e));
        }
        if (!clash) return out;
    }
}

Samples time_storage_appends(const std::string& path, Durability durability,
                             const std::vector<SessionTreeEntry>& entries) {
    JsonlStorageOptions options;
    options.durability = durability;
    JsonlSessionStorage storage = JsonlSessionStorage::open(path, options);
    Samples us;
    for (const auto& e : entries) {
        SessionTreeEntry copy = e;
        const auto t0 = Clock::now();
        storage.append_entry(std::move(copy));
        us.add(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    return us;
}

Samples time_bare_writes(const std::string& path, const std::vector<std::string>& lines,
                         bool sync) {
    Fd f = open_or_throw(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
    Samples us;
    for (const auto& line : lines) {
        const auto t0 = Clock::now();
        if (::write(f.fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
            throw std::runtime_error("write failed");
        if (sync && ::fdatasync(f.fd) != 0) throw std::runtime_error("fdatasync failed");
        us.add(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    return us;
}

void truncate_to(const std::string& path, std::uintmax_t size) {
    Fd f = open_or_throw(path, O_WRONLY);
    if (::ftruncate(f.fd, static_cast<off_t>(size)) != 0 || ::fsync(f.fd) != 0)
        throw std::runtime_error("cannot truncate " + path);
}

void sync_file(const std::string& path) {
    Fd f = open_or_throw(path, O_RDONLY);
    ::fsync(f.fd);
}

// --- move_to ----------------------------------------------------------------------------------

template <class S>
std::vector<std::string> ancestors(const Session<S>& session, std::string id, std::size_t count) {
    std::vector<std::string> out{std::move(id)};
    while (out.size() <= count) {
        EntryHandle e = get_entry(session, out.back());
        if (!e || !parent_id_of(*e)) break;
        out.push_back(*parent_id_of(*e));
    }
    return out;
}

struct MoveResult {
    Samples us;
    std::size_t back = 0;
    std::size_t path = 0;
};

// move_to alternately one of two neighbouring entries `back` entries up the branch, then
// build_context; `cpu` chooses the clock.
template <class S>
MoveResult time_moves(Session<S>& session, std::size_t back, std::size_t runs, bool cpu) {
    const auto up = ancestors(session, *get_leaf_id(session), back + 1);
    MoveResult r;
    r.back = std::min(back, up.size() - 1);
    const std::string a = up[r.back];
    const std::string b = up[r.back > 0 ? r.back - 1 : 0];
    r.path = get_path_to_root_or_compaction(session, a).size();
    for (std::size_t i = 0; i < runs; ++i) {
        const double c0 = thread_cpu_seconds();
        const auto w0 = Clock::now();
        move_to(session, i % 2 ? b : a);
        auto context = build_context(session);
        do_not_optimize(context.messages.data());
        r.us.add(cpu ? (thread_cpu_seconds() - c0) * 1e6
                     : std::chrono::duration<double, std::micro>(Clock::now() - w0).count());
    }
    return r;
}

// --- Comparison mode (--data DIR): the operations bench/pi/bench_pi.mjs times on pi's
// SessionManager, on the same files, with the same keys, runs and entry ids ------------------
//
// DIR holds pi-<N>.jsonl for each size (pi dialect, from bench_gen_session) and, under
// agent/sessions/, the small sessions to list. CPU figures are the process's CPU time (as
// process.cpuUsage() on the pi side; this program has one thread), appends and anything that
// syncs are wall time.

double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// As bench_pi.mjs's timeEach: `warmup` untimed runs, then `runs` runs; medians in µs.
struct Each {
    double cpu_us = 0, wall_us = 0;
    std::size_t runs = 0;
};
template <class Fn>
Each time_runs(std::size_t runs, std::size_t warmup, Fn&& fn) {
    for (std::size_t i = 0; i < warmup; ++i) fn(i);
    Samples cpu, wall;
    for (std::size_t i = 0; i < runs; ++i) {
        const double c0 = process_cpu_seconds();
        const auto w0 = Clock::now();
        fn(i);
        wall.add(std::chrono::duration<double, std::micro>(Clock::now() - w0).count());
        cpu.add((process_cpu_seconds() - c0) * 1e6);
    }
    return Each{cpu.median(), wall.median(), runs};
}

// Short operations: batches of ~200 µs, the median over at least 11 batches and 0.3 s; µs/call.
template <class Fn>
Each time_batched(Fn&& fn) {
    std::size_t i = 0;
    const Samples cpu = time_runs_us([&] { fn(i++); }, 11, 0.3, 200000, TimeSource::thread_cpu);
    const std::size_t calls = i;
    const auto w0 = Clock::now();
    for (std::size_t k = 0; k < 5; ++k) fn(i++);
    return Each{cpu.median(),
                std::chrono::duration<double, std::micro>(Clock::now() - w0).count() / 5, calls};
}

std::size_t opens_for(std::size_t n) { return n <= 1000 ? 15 : n <= 10000 ? 7 : 3; }

struct Tip {
    std::string id;
    std::size_t depth = 0;
};

// The ~1,000-deep tip, derived as bench_pi.mjs derives it: among the entries without children,
// the one whose depth (entries from its root to it, both counted) is nearest to `want`; the
// earliest in the file on a tie.
Tip deep_tip(const JsonlSessionStorage& storage, std::size_t want = 1000) {
    std::unordered_map<std::string, std::size_t> depth;
    std::unordered_set<std::string> parents;
    std::vector<std::string> order;
    const std::size_t page = 4096;
    for (std::size_t after = 0;; after += page) {
        const auto entries = storage.get_entries(EntriesQuery{after, page});
        for (const auto& e : entries) {
            const auto parent = parent_id_of(*e);
            const std::size_t d = parent ? depth[*parent] + 1 : 1;
            depth[id_of(*e)] = d;
            if (parent) parents.insert(*parent);
            order.push_back(id_of(*e));
        }
        if (entries.size() < page) break;
    }
    Tip best;
    auto distance = [&](std::size_t d) { return d > want ? d - want : want - d; };
    for (const auto& id : order) {
        if (parents.count(id) != 0) continue;
        const std::size_t d = depth[id];
        if (best.id.empty() || distance(d) < distance(best.depth)) best = Tip{id, d};
    }
    return best;
}

// The branch summary both sides write (bench_pi.mjs's SUMMARY): fixed text of 400 characters.
std::string summary_text() {
    std::string s;
    while (s.size() < 400)
        s += "The abandoned branch tried another approach to the failing build; ";
    return s.substr(0, 400);
}

int run_compare(const std::string& data, const std::vector<std::size_t>& sizes,
                std::size_t appends_wanted, bool json) {
    Report report("agentcore JSONL storage, comparison mode");
    report.param("sizes", sizes);
    report.param("appends", appends_wanted);
    report.param("data", data);
    const std::string work = data + "/work-agentcore-" + std::to_string(::getpid());
    fs::remove_all(work);
    fs::create_directories(work);
    const std::size_t big = sizes.back();
    const auto file_of = [&](std::size_t n) {
        return data + "/pi-" + std::to_string(n) + ".jsonl";
    };
    auto cpu_extra = [](const Each& t, double scale) {
        return Json{{"clock", "cpu"}, {"wall", t.wall_us * scale}, {"runs", t.runs}};
    };

    // Open + build_context of the leaf, each size, beside its floors.
    std::vector<char> buffer(std::size_t{1} << 20);
    for (const std::size_t n : sizes) {
        const std::string file = file_of(n);
        const std::size_t runs = opens_for(n), warmup = n >= 100000 ? 0 : 1;
        const auto bytes = static_cast<double>(fs::file_size(file));
        const Each read = time_runs(
            runs, 1, [&](std::size_t) { do_not_optimize(read_file_floor(file, buffer, false)); });
        const Each split = time_runs(
            runs, 1, [&](std::size_t) { do_not_optimize(read_file_floor(file, buffer, true)); });
        std::size_t messages = 0;
        const Each open = time_runs(runs, warmup, [&](std::size_t) {
            FileSession session(JsonlSessionStorage::open(file));
            messages = build_context(session).messages.size();
        });
        // The same with the lines scanned by the opening thread alone.
        JsonlStorageOptions one_thread;
        one_thread.open_threads = 1;
        const Each open_one = time_runs(runs, warmup, [&](std::size_t) {
            FileSession session(JsonlSessionStorage::open(file, one_thread));
            do_not_optimize(build_context(session).messages.size());
        });
        const std::string sn = std::to_string(n);
        report.add_keyed("floor_read_" + sn, "floor: read() whole file, " + sn + " entries",
                         read.cpu_us / 1000, "ms", human_bytes(bytes), cpu_extra(read, 1e-3));
        report.add_keyed("floor_read_split_" + sn,
                         "floor: read() + memchr lines, " + sn + " entries", split.cpu_us / 1000,
                         "ms", "", cpu_extra(split, 1e-3));
        Json extra = cpu_extra(open, 1e-3);
        extra["messages"] = messages;
        extra["file_bytes"] = bytes;
        report.add_keyed("open_context_" + sn, "open + context of the leaf, " + sn + " entries",
                         open.cpu_us / 1000, "ms",
                         ratio_note(open.cpu_us, split.cpu_us, "read+memchr") + "; wall " +
                             fixed1(open.wall_us / 1000) + " ms; " + std::to_string(messages) +
                             " messages",
                         extra);
        report.add_keyed(
            "open_context_one_thread_" + sn,
            "open + context, one thread scanning, " + sn + " entries", open_one.cpu_us / 1000, "ms",
            "wall " + fixed1(open_one.wall_us / 1000) + " ms; all threads: wall " +
                fixed1(open.wall_us / 1000) + " ms, CPU " + fixed1(open.cpu_us / 1000) + " ms",
            cpu_extra(open_one, 1e-3));
    }

    // Peak RSS of open + build_context of the big session, in a fresh process.
    {
        const double peak = peak_rss_of_open(file_of(big));
        const auto bytes = static_cast<double>(fs::file_size(file_of(big)));
        report.add_keyed("peak_rss_open",
                         "peak RSS of open + context, " + std::to_string(big) + " entries",
                         peak / 1e6, "MB",
                         "fresh process; " + fixed1(100.0 * peak / bytes) + " % of the " +
                             human_bytes(bytes) + " file",
                         Json{{"clock", "VmHWM growth"}, {"file_bytes", bytes}});
    }

    // On a writable copy of the big session: the deep tip, moves, moves with a summary.
    const std::string copy = work + "/big.jsonl";
    fs::copy_file(file_of(big), copy, fs::copy_options::overwrite_existing);
    const auto copy_size = fs::file_size(copy);
    std::string target_a, target_b;
    std::size_t back = 0;
    const BranchSummaryInput summary{summary_text(), Json(), std::nullopt, false};
    {
        JsonlStorageOptions o;
        o.durability = Durability::os_buffered;
        FileSession s(JsonlSessionStorage::open(copy, o));
        const Tip tip = deep_tip(s.storage());
        std::size_t path = 0, messages = 0;
        {
            path = get_path_to_root_or_compaction(s, tip.id).size();
            messages = build_context_at(s, tip.id).messages.size();
            const Each t = time_batched(
                [&](std::size_t) { do_not_optimize(build_context_at(s, tip.id).messages.data()); });
            Json extra = cpu_extra(t, 1);
            extra["tip"] = tip.id;
            extra["depth"] = tip.depth;
            extra["path"] = path;
            extra["messages"] = messages;
            report.add_keyed("context_deep_tip", "context of the ~1,000-deep tip", t.cpu_us, "us",
                             "tip " + tip.id + " at depth " + std::to_string(tip.depth) +
                                 "; path " + std::to_string(path) + " entries -> " +
                                 std::to_string(messages) + " messages",
                             extra);
        }
        // The first context of the tip right after an open (the open not timed): the path's
        // entries are decoded from their lines then.
        {
            Samples cpu, wall;
            for (int i = 0; i < 3; ++i) {
                FileSession fresh(JsonlSessionStorage::open_read_only(file_of(big)));
                const double c0 = process_cpu_seconds();
                const auto w0 = Clock::now();
                do_not_optimize(build_context_at(fresh, tip.id).messages.data());
                wall.add(std::chrono::duration<double, std::micro>(Clock::now() - w0).count());
                cpu.add((process_cpu_seconds() - c0) * 1e6);
            }
            report.add_keyed("context_deep_tip_cold",
                             "first context of the ~1,000-deep tip after an open",
                             cpu.median() / 1000, "ms", "the open not timed",
                             Json{{"clock", "cpu"},
                                  {"wall", wall.median() / 1000},
                                  {"runs", 3},
                                  {"tip", tip.id}});
        }
        const auto up = ancestors(s, *get_leaf_id(s), 1001);
        back = std::min<std::size_t>(1000, up.size() - 1);
        target_a = up[back];
        target_b = up[back > 0 ? back - 1 : 0];
        const Each move = time_batched([&](std::size_t i) {
            move_to(s, i % 2 ? target_b : target_a);
            do_not_optimize(build_context(s).messages.data());
        });
        Json extra = cpu_extra(move, 1);
        extra["target"] = target_a;
        extra["back"] = back;
        report.add_keyed(
            "move_rebuild", "move 1,000 back + rebuild", move.cpu_us, "us",
            "os_buffered; " + std::to_string(back) + " entries up from the leaf, to " + target_a,
            extra);
        const Each with_summary = time_runs(31, 1, [&](std::size_t i) {
            move_to(s, i % 2 ? target_b : target_a, summary);
            do_not_optimize(build_context(s).messages.data());
        });
        report.add_keyed("move_summary_rebuild", "move 1,000 back with a branch summary + rebuild",
                         with_summary.cpu_us, "us", "os_buffered", cpu_extra(with_summary, 1));
    }
    truncate_to(copy, copy_size);
    {
        FileSession s(JsonlSessionStorage::open(copy));
        const Each move = time_runs(31, 1, [&](std::size_t i) {
            move_to(s, i % 2 ? target_b : target_a);
            do_not_optimize(build_context(s).messages.data());
        });
        const Each with_summary = time_runs(31, 1, [&](std::size_t i) {
            move_to(s, i % 2 ? target_b : target_a, summary);
            do_not_optimize(build_context(s).messages.data());
        });
        report.add_keyed("move_rebuild_durable", "move 1,000 back + rebuild, durable", move.wall_us,
                         "us", "wall: the leaf entry is synced",
                         Json{{"clock", "wall"}, {"cpu", move.cpu_us}, {"runs", move.runs}});
        report.add_keyed(
            "move_summary_rebuild_durable",
            "move 1,000 back with a branch summary + rebuild, durable", with_summary.wall_us, "us",
            "wall",
            Json{{"clock", "wall"}, {"cpu", with_summary.cpu_us}, {"runs", with_summary.runs}});
    }
    // Resume: the unchanged copy opened from its resume index, and the leaf's context.
    {
        JsonlStorageOptions o;
        o.resume_index = true;
        { const auto writer = JsonlSessionStorage::open(copy, o); }  // writes the index
        std::size_t resumed = 0;
        const Each t = time_runs(7, 1, [&](std::size_t) {
            FileSession s(JsonlSessionStorage::open_read_only(copy, o));
            resumed = s.storage().resumed_lines();
            do_not_optimize(build_context(s).messages.data());
        });
        Json extra = cpu_extra(t, 1e-3);
        extra["resumed_lines"] = resumed;
        report.add_keyed("resume_context_" + std::to_string(big),
                         "resume (open from the resume index) + context of the leaf, " +
                             std::to_string(big) + " entries",
                         t.cpu_us / 1000, "ms",
                         std::to_string(resumed) + " lines taken from the index", extra);
        fs::remove(JsonlSessionStorage::resume_index_path(copy));
    }
    // Appends onto the big session (os_buffered): messages taken from its first entries.
    {
        JsonlStorageOptions o;
        o.durability = Durability::os_buffered;
        FileSession s(JsonlSessionStorage::open(copy, o));
        std::vector<AgentMessage> messages;
        for (const auto& e : s.storage().get_entries(EntriesQuery{0, 600}))
            if (const auto* m = std::get_if<MessageEntry>(&*e)) messages.push_back(m->message);
        Samples us;
        for (const auto& m : messages) {
            AgentMessage copy_of = m;
            const auto t0 = Clock::now();
            append_message(s, std::move(copy_of));
            us.add(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
        report.add_keyed(
            "append_onto_big_mean",
            "append onto the " + std::to_string(big) + "-entry session, os_buffered", us.mean(),
            "us", std::to_string(messages.size()) + " messages; median " + fixed1(us.median()),
            Json{{"clock", "wall"}, {"count", messages.size()}});
    }
    fs::remove(copy);

    // Appends: the first K messages of the smallest session, to a new session (pi dialect),
    // per durability mode, against bare write()s of the same lines.
    {
        std::vector<AgentMessage> messages;
        std::vector<std::string> lines;
        {
            const auto source = JsonlSessionStorage::open_read_only(file_of(sizes.front()));
            for (const auto& e : source.get_entries()) {
                if (messages.size() >= appends_wanted) break;
                if (const auto* m = std::get_if<MessageEntry>(&*e)) {
                    messages.push_back(m->message);
                    lines.push_back(encode_entry(*e, Dialect::pi) + "\n");
                }
            }
        }
        // Each storage append is paired with a bare write (and, durable, write()+fdatasync()) of
        // the same line to another file right after it, so that both see the same disk and load.
        struct Paired {
            Samples storage, floor;
        };
        auto append_all = [&](Durability durability, const std::string& name) {
            JsonlStorageOptions o;
            o.durability = durability;
            o.dialect = Dialect::pi;
            SessionHeader h;
            h.id = make_uuid_v7(o.environment);
            h.timestamp = format_timestamp(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::system_clock::now().time_since_epoch())
                                               .count());
            h.cwd = "/home/dev/projects/agentcore";
            FileSession s(JsonlSessionStorage::create(work + "/" + name, h, o));
            Fd floor_file =
                open_or_throw(work + "/floor-" + name, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
            const bool sync = durability == Durability::durable;
            Paired us;
            for (std::size_t i = 0; i < messages.size(); ++i) {
                AgentMessage copy_of = messages[i];
                auto t0 = Clock::now();
                append_message(s, std::move(copy_of));
                us.storage.add(
                    std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
                const std::string& line = lines[i];
                t0 = Clock::now();
                if (::write(floor_file.fd, line.data(), line.size()) !=
                    static_cast<ssize_t>(line.size()))
                    throw std::runtime_error("write failed");
                if (sync && ::fdatasync(floor_file.fd) != 0)
                    throw std::runtime_error("fdatasync failed");
                us.floor.add(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
            }
            return us;
        };
        const Paired buffered_pair = append_all(Durability::os_buffered, "new-buffered.jsonl");
        const Paired durable_pair = append_all(Durability::durable, "new-durable.jsonl");
        const Samples& buffered = buffered_pair.storage;
        const Samples& durable = durable_pair.storage;
        const Samples& bare = buffered_pair.floor;
        const Samples& bare_sync = durable_pair.floor;
        const Json wall{{"clock", "wall"}, {"count", messages.size()}};
        report.add_keyed("append_mean", "append, os_buffered (mean)", buffered.mean(), "us",
                         ratio_note(buffered.mean(), bare.mean(), "write() per line") + "; " +
                             std::to_string(messages.size()) +
                             " messages to a new session; median " + fixed1(buffered.median()),
                         wall);
        report.add_keyed("append_p99", "append, os_buffered (p99)", buffered.percentile(99), "us",
                         ratio_note(buffered.percentile(99), bare.percentile(99), "write() p99"),
                         wall);
        report.add_keyed("append_durable_mean", "append, durable (mean)", durable.mean(), "us",
                         ratio_note(durable.mean(), bare_sync.mean(), "write()+fdatasync()"), wall);
        report.add_keyed(
            "append_durable_p99", "append, durable (p99)", durable.percentile(99), "us",
            ratio_note(durable.percentile(99), bare_sync.percentile(99), "write()+fdatasync() p99"),
            wall);
        report.add_keyed("floor_write_mean", "floor: write() per line (mean)", bare.mean(), "us",
                         "", wall);
        report.add_keyed("floor_write_p99", "floor: write() per line (p99)", bare.percentile(99),
                         "us", "", wall);
        report.add_keyed("floor_write_sync_mean", "floor: write()+fdatasync() per line (mean)",
                         bare_sync.mean(), "us", "", wall);
        report.add_keyed("floor_write_sync_p99", "floor: write()+fdatasync() per line (p99)",
                         bare_sync.percentile(99), "us", "", wall);
    }

    // Listing every session of every working directory with what pi's listAll gives (message
    // count, name, last activity): from the summary files (warm), with the summary files
    // removed before each run (cold: every session read), and the headers alone.
    {
        const std::string root = data + "/agent/sessions";
        const JsonlSessionRepo repo(root);
        ListOptions with_summaries;
        with_summaries.summaries = true;
        std::size_t listed = 0, summarised = 0;
        auto list_all = [&](const ListOptions& o) {
            const SessionList l = list(repo, o);
            listed = l.sessions.size();
            summarised = 0;
            for (const auto& one : l.sessions) summarised += one.summary ? 1U : 0U;
        };
        const Each cold = time_runs(5, 0, [&](std::size_t) {
            remove_summary_files(root);
            list_all(with_summaries);
        });
        const Each warm = time_runs(5, 1, [&](std::size_t) { list_all(with_summaries); });
        const std::size_t warm_summarised = summarised;
        const Each headers = time_runs(5, 1, [&](std::size_t) { list_all(ListOptions{}); });
        const Each floor = time_runs(5, 1, [&](std::size_t) { do_not_optimize(list_floor(root)); });
        remove_summary_files(root);
        const std::string floor_label = "readdir + open/pread 4K/close";
        Json extra = cpu_extra(warm, 1e-3);
        extra["listed"] = listed;
        extra["summarised"] = warm_summarised;
        report.add_keyed(
            "list_sessions", "list every session with its summary (warm)", warm.cpu_us / 1000, "ms",
            ratio_note(warm.cpu_us, floor.cpu_us, floor_label) + "; " + std::to_string(listed) +
                " listed, " + std::to_string(warm_summarised) + " summarised",
            extra);
        Json cold_extra = cpu_extra(cold, 1e-3);
        cold_extra["listed"] = listed;
        report.add_keyed("list_sessions_cold",
                         "list every session with its summary (cold: no summary files)",
                         cold.cpu_us / 1000, "ms",
                         ratio_note(cold.cpu_us, floor.cpu_us, floor_label), cold_extra);
        report.add_keyed(
            "list_sessions_headers", "list every session, headers only", headers.cpu_us / 1000,
            "ms", ratio_note(headers.cpu_us, floor.cpu_us, floor_label), cpu_extra(headers, 1e-3));
        report.add_keyed("floor_list", "floor: readdir + open/pread 4K/close each",
                         floor.cpu_us / 1000, "ms", "", cpu_extra(floor, 1e-3));
    }
    fs::remove_all(work);
    report.print(json);
    return 0;
}

int usage(int code) {
    (code == 0 ? std::cout : std::cerr)
        << "usage: bench_jsonl [--entries N] [--seed S] [--sessions M] [--appends K] [--dir DIR] "
           "[--keep] [--json]\n"
           "       bench_jsonl --data DIR [--sizes 1000,10000,100000] [--appends K] [--json]\n";
    return code;
}

}  // namespace

int main(int argc, char** argv) try {
    const Args args(argc, argv);
    if (args.flag("--help") || args.flag("-h")) return usage(0);
    if (!args.text("--child-open").empty()) return child_open(args.text("--child-open"));
    if (!args.text("--data").empty()) {
        std::vector<std::size_t> sizes;
        std::stringstream list_of_sizes(args.text("--sizes", "1000,10000,100000"));
        for (std::string item; std::getline(list_of_sizes, item, ',');) {
            char* end = nullptr;
            const unsigned long long v = std::strtoull(item.c_str(), &end, 10);
            if (item.empty() || *end != '\0' || v == 0) return usage(2);
            sizes.push_back(v);
        }
        if (sizes.empty()) return usage(2);
        return run_compare(args.text("--data"), sizes, args.number("--appends", 1000),
                           args.flag("--json"));
    }

    WorkloadOptions options;
    options.entries = args.number("--entries", 100000);
    options.seed = args.number("--seed", 1);
    if (options.entries < 10) return usage(2);
    const std::size_t n = options.entries;
    const std::size_t sessions =
        args.number("--sessions", std::clamp<std::size_t>(n / 100, 10, 1000));
    const std::size_t appends =
        args.number("--appends", std::clamp<std::size_t>(n / 100, 50, 1000));
    const bool json = args.flag("--json");
    const bool keep = args.flag("--keep");
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir =
        args.text("--dir", std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                               "/agentcore-bench-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string file = dir + "/session.jsonl";
    const std::string work = dir + "/work.jsonl";
    const std::string repo_root = dir + "/repo";

    Report report("agentcore JSONL storage");
    report.param("entries", n);
    report.param("seed", options.seed);
    report.param("sessions_listed", sessions);
    report.param("appends_per_mode", appends);
    report.param("dir", dir);

    // --- The file, written with the codec; the in-memory session stays for the floors.
    auto memory = make_memory_session(options);
    const std::size_t file_bytes = write_session_file(file, memory, Dialect::native);
    sync_file(file);
    report.param("file_bytes", file_bytes);
    const std::size_t opens = 7;

    // --- Open + build_context, and its floors (warm page cache).
    std::vector<char> buffer(std::size_t{1} << 20);
    const Timing read_floor =
        time_each(opens, [&] { do_not_optimize(read_file_floor(file, buffer, false)); });
    const Timing split_floor =
        time_each(opens, [&] { do_not_optimize(read_file_floor(file, buffer, true)); });
    const Timing mmap_floor = time_each(opens, [&] { do_not_optimize(mmap_split_floor(file)); });
    std::size_t leaf_messages = 0;
    const Timing open_build = time_each(opens, [&] {
        FileSession session(JsonlSessionStorage::open(file));
        leaf_messages = build_context(session).messages.size();
    });
    const Timing open_ro_build = time_each(opens, [&] {
        FileSession session(JsonlSessionStorage::open_read_only(file));
        do_not_optimize(build_context(session).messages.size());
    });
    // Resuming the unchanged file from its resume index (JsonlStorageOptions::resume_index): one
    // open writes the index, the timed ones read it instead of the lines.
    JsonlStorageOptions resume_options;
    resume_options.resume_index = true;
    (void)JsonlSessionStorage::open(file, resume_options);
    std::size_t resumed = 0;
    const Timing resume_open = time_each(opens, [&] {
        const auto storage = JsonlSessionStorage::open(file, resume_options);
        resumed = storage.resumed_lines();
        do_not_optimize(storage.entry_count());
    });
    const Timing resume_build = time_each(opens, [&] {
        FileSession session(JsonlSessionStorage::open(file, resume_options));
        do_not_optimize(build_context(session).messages.size());
    });
    fs::remove(JsonlSessionStorage::resume_index_path(file));
    const double peak_open = peak_rss_of_open(file);

    // build_context again on a storage that is already open, against the same in memory.
    FileSession opened(JsonlSessionStorage::open_read_only(file));
    const Samples rebuild =
        time_runs_us([&] { do_not_optimize(build_context(opened).messages.data()); }, 21, 0.3);
    const Samples memory_build =
        time_runs_us([&] { do_not_optimize(build_context(memory).messages.data()); }, 21, 0.3);
    opened = FileSession(
        std::make_shared<JsonlSessionStorage>(JsonlSessionStorage::open_read_only(file)));

    // --- Appends to the big session, per mode, the same entries; then bare write()s of the same
    // lines.
    fs::copy_file(file, work, fs::copy_options::overwrite_existing);
    sync_file(work);
    std::vector<SessionTreeEntry> more;
    {
        auto big = JsonlSessionStorage::open_read_only(work);
        more = continuation(big, appends, options.seed + 1000,
                            options.start_ms + static_cast<std::int64_t>(n + 10) * options.step_ms);
    }
    std::vector<std::string> lines;
    for (const auto& e : more) lines.push_back(encode_entry(e, Dialect::native) + "\n");
    const Samples buffered = time_storage_appends(work, Durability::os_buffered, more);
    truncate_to(work, file_bytes);
    const Samples durable = time_storage_appends(work, Durability::durable, more);
    truncate_to(work, file_bytes);
    const Samples bare_write = time_bare_writes(dir + "/floor.jsonl", lines, false);
    const Samples bare_sync = time_bare_writes(dir + "/floor.jsonl", lines, true);

    // --- move_to ~1,000 entries back + build_context, on the file (both modes) and in memory.
    MoveResult move_file_durable, move_file_buffered;
    {
        FileSession s(JsonlSessionStorage::open(work));
        move_file_durable = time_moves(s, 1000, 31, false);
    }
    truncate_to(work, file_bytes);
    {
        JsonlStorageOptions o;
        o.durability = Durability::os_buffered;
        FileSession s(JsonlSessionStorage::open(work, o));
        move_file_buffered = time_moves(s, 1000, 31, true);
    }
    const MoveResult move_memory = time_moves(memory, 1000, 31, true);
    memory = Session<InMemorySessionStorage<>>(InMemorySessionStorage<>());

    // --- list of many small sessions, against the least a listing must read.
    write_small_sessions(repo_root, sessions, options.seed + 2000, Dialect::native);
    const JsonlSessionRepo repo(repo_root);
    std::size_t listed = 0;
    const Timing list_time = time_each(7, [&] { listed = list(repo).sessions.size(); });
    const Timing list_floor_time = time_each(7, [&] { do_not_optimize(list_floor(repo_root)); });
    ListOptions with_summaries;
    with_summaries.summaries = true;
    const Timing list_cold_time = time_each(7, [&] {
        remove_summary_files(repo_root);
        do_not_optimize(list(repo, with_summaries).sessions.data());
    });
    const Timing list_warm_time =
        time_each(7, [&] { do_not_optimize(list(repo, with_summaries).sessions.data()); });

    // --- The table.
    const std::string file_note = human_bytes(static_cast<double>(file_bytes));
    report.add("floor: read() whole file", read_floor.cpu_us.median() / 1000, "ms",
               file_note + " in 1 MiB reads; " +
                   fixed1(static_cast<double>(file_bytes) / read_floor.cpu_us.median()) + " MB/s");
    report.add("floor: read() + memchr lines", split_floor.cpu_us.median() / 1000, "ms", "");
    report.add("floor: mmap + memchr lines", mmap_floor.cpu_us.median() / 1000, "ms", "");
    report.add("open + build_context (leaf)", open_build.cpu_us.median() / 1000, "ms",
               ratio_note(open_build.cpu_us.median() / 1000, split_floor.cpu_us.median() / 1000,
                          "read+memchr") +
                   "; median of " + std::to_string(opens) + ", wall " +
                   fixed1(open_build.wall_us.median() / 1000) + " ms; " +
                   std::to_string(leaf_messages) + " messages");
    report.add("open_read_only + build_context", open_ro_build.cpu_us.median() / 1000, "ms",
               ratio_note(open_ro_build.cpu_us.median() / 1000, split_floor.cpu_us.median() / 1000,
                          "read+memchr"));
    report.add("resume: open from the resume index", resume_open.cpu_us.median() / 1000, "ms",
               "unchanged file; target <= 10 ms; " + std::to_string(resumed) +
                   " lines taken from the index; wall " +
                   fixed1(resume_open.wall_us.median() / 1000) + " ms; " +
                   ratio_note(resume_open.cpu_us.median() / 1000,
                              split_floor.cpu_us.median() / 1000, "read+memchr"));
    report.add("resume + build_context (leaf)", resume_build.cpu_us.median() / 1000, "ms",
               "the leaf's path decoded from its lines");
    report.add("peak RSS of open + build_context", peak_open / 1e6, "MB",
               "fresh process; " + fixed1(100.0 * peak_open / static_cast<double>(file_bytes)) +
                   " % of the " + file_note + " file");
    report.add("build_context again (open storage)", rebuild.median(), "us",
               ratio_note(rebuild.median(), memory_build.median(), "in memory"));
    report.add("append, os_buffered (mean)", buffered.mean(), "us",
               ratio_note(buffered.mean(), bare_write.mean(), "write() per line") + "; wall, " +
                   std::to_string(appends) + " entries onto the " + std::to_string(n) +
                   "-entry file; median " + fixed1(buffered.median()) + ", max " +
                   fixed1(buffered.percentile(100)));
    report.add("append, os_buffered (p99)", buffered.percentile(99), "us",
               ratio_note(buffered.percentile(99), bare_write.percentile(99), "write() p99"));
    report.add("append, durable (mean)", durable.mean(), "us",
               ratio_note(durable.mean(), bare_sync.mean(), "write()+fdatasync()") + "; median " +
                   fixed1(durable.median()) + ", max " + fixed1(durable.percentile(100)));
    report.add(
        "append, durable (p99)", durable.percentile(99), "us",
        ratio_note(durable.percentile(99), bare_sync.percentile(99), "write()+fdatasync() p99"));
    report.add(
        "move_to 1,000 back + build_context, durable", move_file_durable.us.median(), "us",
        ratio_note(move_file_durable.us.median(), move_memory.us.median() + bare_sync.median(),
                   "in memory + one write+fdatasync") +
            "; wall; path " + std::to_string(move_file_durable.path) + " entries");
    report.add("move_to 1,000 back + build_context, os_buffered", move_file_buffered.us.median(),
               "us",
               ratio_note(move_file_buffered.us.median(), move_memory.us.median(), "in memory") +
                   "; " + std::to_string(move_file_buffered.back) + " entries back");
    report.add("list " + std::to_string(sessions) + " sessions", list_time.cpu_us.median() / 1000,
               "ms",
               ratio_note(list_time.cpu_us.median() / 1000, list_floor_time.cpu_us.median() / 1000,
                          "readdir + open/pread 4K/close") +
                   "; " + std::to_string(listed) + " listed, wall " +
                   fixed1(list_time.wall_us.median() / 1000) + " ms");
    report.add("list " + std::to_string(sessions) + " sessions with summaries, warm",
               list_warm_time.cpu_us.median() / 1000, "ms",
               ratio_note(list_warm_time.cpu_us.median() / 1000,
                          list_floor_time.cpu_us.median() / 1000, "readdir + open/pread 4K/close") +
                   "; from the summary files");
    report.add("list " + std::to_string(sessions) + " sessions with summaries, cold",
               list_cold_time.cpu_us.median() / 1000, "ms",
               ratio_note(list_cold_time.cpu_us.median() / 1000,
                          list_floor_time.cpu_us.median() / 1000, "readdir + open/pread 4K/close") +
                   "; every session opened read-only, summary files written");
    report.print(json);

    if (!keep) fs::remove_all(dir);
    return 0;
} catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
}

// Nothing acknowledged is ever lost (SPEC §6): a scripted workload (create, appends of every
// entry type, set leaf, fork, reopen over a torn tail, repair) run with each of its I/O calls
// failing in turn, and run under a model of the page cache cut by a power failure after each
// call. Each figure is printed as a summary line.
#include "stress/fault_ops.hpp"
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/sizes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

using Lines = std::vector<std::pair<std::string, std::string>>;  // id, encoded line

Lines entry_lines(const JsonlSessionStorage& s) {
    Lines out;
    for (const auto& e : s.get_entries())
        out.emplace_back(id_of(*e), encode_entry(*e, s.dialect()));
    return out;
}

CreateOptions main_session() {
    CreateOptions c;
    c.id = "main";
    c.cwd = "/work";
    return c;
}

// The appends of the workload: every entry type, a leaf move, a branch summary, a compaction
// with a first kept entry and a retained tail, a leaf of none.
std::vector<std::function<void(FileSession&)>> workload_steps() {
    // The first entry (after a failed first append there is none: the root then).
    auto first = [](FileSession& s) -> std::optional<std::string> {
        const auto entries = s.storage().get_entries({0, 1});
        if (entries.empty()) return std::nullopt;
        return id_of(*entries.front());
    };
    return {
        [](FileSession& s) { append_message(s, user("hello")); },
        [](FileSession& s) { append_thinking_level_change(s, "high"); },
        [](FileSession& s) { append_model_change(s, "anthropic", "claude"); },
        [](FileSession& s) {
            append_message(s,
                           assistant("hi there", "anthropic", "claude", usage(10, 20, 30, 40, 1)));
        },
        [first](FileSession& s) {
            if (const auto id = first(s)) append_label(s, *id, std::string("start"));
        },
        [](FileSession& s) { append_message(s, assistant_tool_call("call-1", "read")); },
        [](FileSession& s) { append_message(s, tool_result("call-1", "read", "file text")); },
        [](FileSession& s) {
            append_active_tools_change(s, {"read", "write"});
        },
        [](FileSession& s) {
            append_custom_entry(s, "note", Json{{"k", 1}});
        },
        [](FileSession& s) { append_custom_message_entry(s, "hint", std::string("a hint")); },
        [](FileSession& s) { append_session_name(s, "named"); },
        [first](FileSession& s) { set_leaf_id(s, first(s)); },
        [first](FileSession& s) {
            move_to(s, first(s),
                    BranchSummaryInput{"went back", Json{{"why", "test"}}, usage(5, 6, 7, 8, 0.26),
                                       false});
        },
        [first](FileSession& s) {
            append_compaction(s, "summary so far", first(s), 1234, Json(), false,
                              usage(1, 2, 3, 4, 0.1), std::vector<AgentMessage>{user("kept")});
        },
        [](FileSession& s) { append_message(s, user(std::string(5000, 'z'))); },
        [](FileSession& s) { set_leaf_id(s, std::nullopt); },
        [](FileSession& s) { append_message(s, user("a new root")); },
    };
}

// ---- 1. a fault at every I/O call ------------------------------------------------------------

struct FaultRun {
    std::vector<std::string> violations;
    long failures = 0;  ///< calls that threw
    void violation(const std::string& what) { violations.push_back(what); }
};

// While alive, no call fails (the checks read the files through the same table).
struct PauseFaults {
    long saved;
    PauseFaults() : saved(CallInjector::get().fail_at) { CallInjector::get().fail_at = -1; }
    ~PauseFaults() { CallInjector::get().fail_at = saved; }
    PauseFaults(const PauseFaults&) = delete;
    PauseFaults& operator=(const PauseFaults&) = delete;
};

JsonlStorageOptions injected_options() {
    JsonlStorageOptions o = jsonl_options(7, Durability::durable);
    o.file_ops = &CallInjector::ops();
    return o;
}

// Every session list shows opens strictly (real calls); returns their entries by id.
std::map<std::string, Lines> listed_sessions(const std::string& root, FaultRun& run) {
    std::map<std::string, Lines> out;
    JsonlSessionRepo repo(root, jsonl_options());
    const auto l = list(repo);
    for (const auto& p : l.problems) run.violation("list reports a problem: " + p.reason);
    for (const auto& s : l.sessions) {
        try {
            out[s.header.id] =
                entry_lines(JsonlSessionStorage::open_read_only(s.path, jsonl_options()));
        } catch (const SessionError& e) {
            run.violation(std::string("a listed session does not open: ") + e.what());
        }
    }
    return out;
}

void run_fault_workload(const std::string& dir, FaultRun& run) {
    const std::string root = dir + "/repo";
    JsonlSessionRepo repo(root, injected_options());
    std::optional<FileSession> s;
    for (int attempt = 0; attempt < 2 && !s; ++attempt) {
        try {
            s.emplace(create(repo, main_session()));
        } catch (const SessionError& e) {
            ++run.failures;
            PauseFaults pause;
            if (e.code() != ErrorCode::storage)
                run.violation(std::string("create: not a storage error: ") + e.what());
            const auto sessions = listed_sessions(root, run);
            if (!sessions.empty() && !(sessions.size() == 1 && sessions.count("main") == 1 &&
                                       sessions.at("main").empty()))
                run.violation("a failed create left a session that is not empty");
            if (!sessions.empty())
                break;  // it was published, then a later step (folder sync) failed
        }
    }
    if (!s) return;
    const std::string path = s->storage().path();

    // Appends: a failure leaves file and memory unchanged, or poisons the storage.
    for (const auto& step : workload_steps()) {
        std::string before;
        std::size_t count = 0;
        {
            PauseFaults pause;
            before = read_file(path);
            count = s->storage().entry_count();
        }
        try {
            step(*s);
        } catch (const SessionError& e) {
            ++run.failures;
            PauseFaults pause;
            if (e.code() != ErrorCode::storage)
                run.violation(std::string("append: not a storage error: ") + e.what());
            // A step of two appends (move_to with a summary) may have acknowledged its first.
            const std::size_t now = s->storage().entry_count();
            if (now != count && now != count + 1)
                run.violation("an append failed but memory changed");
            if (!s->storage().poisoned() && now == count && read_file(path) != before)
                run.violation(
                    "an append failed, the storage is not poisoned, yet the file changed");
            if (s->storage().poisoned()) {
                try {
                    append_message(*s, user("after the poison"));
                    run.violation("a poisoned storage accepted an append");
                } catch (const SessionError& again) {
                    if (again.code() != ErrorCode::storage)
                        run.violation("a poisoned storage: not a storage error");
                }
            }
        }
    }
    const Lines acknowledged = [&] {
        PauseFaults pause;
        return entry_lines(s->storage());
    }();
    const bool poisoned = s->storage().poisoned();

    // Fork: the source is never damaged; the copy is absent or complete.
    const std::string source_bytes = [&] {
        PauseFaults pause;
        return read_file(path);
    }();
    ForkOptions fo;
    fo.session_id = "copy";
    try {
        fork(repo, "main", fo);
    } catch (const SessionError& e) {
        ++run.failures;
        PauseFaults pause;
        if (e.code() != ErrorCode::storage)
            run.violation(std::string("fork: not a storage error: ") + e.what());
    }
    s.reset();
    {
        PauseFaults pause;
        if (read_file(path) != source_bytes) run.violation("a fork changed its source");
        const auto sessions = listed_sessions(root, run);
        if (sessions.count("copy") != 0 && sessions.at("copy").size() != acknowledged.size())
            run.violation("list shows an incomplete fork");
        // Reopening yields exactly the acknowledged entries (a poisoned storage may have left the
        // line whose sync failed: it was never acknowledged, and its bytes are whole).
        try {
            const auto reopened =
                entry_lines(JsonlSessionStorage::open_read_only(path, jsonl_options()));
            const Lines head(reopened.begin(),
                             reopened.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                    reopened.size(), acknowledged.size())));
            if (head != acknowledged || (!poisoned && reopened.size() != acknowledged.size()))
                run.violation("reopening does not yield exactly the acknowledged entries");
            const auto lines = file_lines(path);
            for (std::size_t i = 0; i < acknowledged.size() && i + 1 < lines.size(); ++i)
                if (lines[i + 1] != acknowledged[i].second)
                    run.violation("a line on disk differs from the entry");
        } catch (const SessionError& e) {
            run.violation(std::string("the session does not reopen: ") + e.what());
        }
    }

    // A writing open over a torn tail: cut (its bytes quarantined first) or left as it was.
    const std::string torn = "{\"type\":\"message\",\"id\":\"torn0001\",\"par";
    std::string with_tail;
    {
        PauseFaults pause;
        with_tail = read_file(path) + torn;
        write_file(path, with_tail);
    }
    try {
        auto reopened = JsonlSessionStorage::open(path, injected_options());
        reopened.append_entry([] {
            MessageEntry e;
            e.id = "after001";
            e.timestamp = "2026-12-02T07:43:23.123Z";
            e.message = user("after the repair");
            return SessionTreeEntry(e);
        }());
    } catch (const SessionError& e) {
        ++run.failures;
        if (e.code() != ErrorCode::storage)
            run.violation(std::string("open: not a storage error: ") + e.what());
    }
    {
        PauseFaults pause;
        const std::string now = read_file(path);
        if (now != with_tail) {
            bool quarantined = false;
            for (const auto& f :
                 std::filesystem::directory_iterator(agentcore::detail::parent_folder(path)))
                if (f.path().string().find(".quarantine-") != std::string::npos &&
                    read_file(f.path().string()) == torn)
                    quarantined = true;
            if (!quarantined) run.violation("a torn tail was cut without being quarantined");
            if (now.compare(0, with_tail.size() - torn.size(), with_tail, 0,
                            with_tail.size() - torn.size()) != 0)
                run.violation("cutting the torn tail changed the lines before it");
        }
        try {
            const auto r = JsonlSessionStorage::open_read_only(path, jsonl_options());
            const auto got = entry_lines(r);
            const Lines head(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                            got.size(), acknowledged.size())));
            if (head != acknowledged)
                run.violation("an acknowledged entry is gone after the torn-tail open");
        } catch (const SessionError& e) {
            run.violation(std::string("the session does not open after the torn-tail open: ") +
                          e.what());
        }
    }

    // Repair of a bad interior line: the file is the damaged original or the clean copy.
    std::string damaged;
    std::string clean;
    {
        PauseFaults pause;
        try {
            JsonlSessionStorage::open(path,
                                      jsonl_options());  // cuts a torn tail the step above left
        } catch (const SessionError& e) {
            run.violation(std::string("the session does not open for writing: ") + e.what());
        }
        const auto lines = file_lines(path);
        for (std::size_t i = 0; i < lines.size(); ++i) {
            if (i == 1) damaged += "{\"type\":\"message\",\"id\":\"bad\n";
            damaged += lines[i] + "\n";
            clean += lines[i] + "\n";
        }
        write_file(path, damaged);
    }
    try {
        JsonlSessionStorage::repair(path, injected_options());
    } catch (const SessionError& e) {
        ++run.failures;
        if (e.code() != ErrorCode::storage)
            run.violation(std::string("repair: not a storage error: ") + e.what());
    }
    {
        PauseFaults pause;
        const std::string now = read_file(path);
        if (now != damaged && now != clean)
            run.violation("repair left a file that is neither the original nor the clean copy");
        for (const auto& f :
             std::filesystem::directory_iterator(agentcore::detail::parent_folder(path)))
            if (f.path().string().find(".bak-") != std::string::npos &&
                read_file(f.path().string()) != damaged)
                run.violation("the backup of a repair is not the original");
    }
}

// ---- 2. power cuts ---------------------------------------------------------------------------

struct Ack {
    long call;  ///< the model's call count when the call returned
    std::string session;
    std::string id;
    std::string line;
};

struct PowerRun {
    std::vector<Ack> acks;                       ///< entries, in append order
    std::map<std::string, long> sessions_acked;  ///< session id -> call when create/fork returned
    std::map<std::string, std::size_t> fork_sizes;
};

JsonlStorageOptions modelled_options(Durability d) {
    JsonlStorageOptions o = jsonl_options(11, d);
    o.file_ops = &PageCacheModel::ops();
    return o;
}

void run_power_workload(const std::string& root, Durability durability, PowerRun& run) {
    JsonlSessionRepo repo(root, modelled_options(durability));
    auto record = [&](FileSession& s, const std::string& session, std::size_t before) {
        const auto lines = entry_lines(s.storage());
        for (std::size_t i = before; i < lines.size(); ++i)
            run.acks.push_back(
                Ack{PageCacheModel::get().calls, session, lines[i].first, lines[i].second});
    };
    {
        auto s = create(repo, main_session());
        run.sessions_acked["main"] = PageCacheModel::get().calls;
        for (const auto& step : workload_steps()) {
            const std::size_t before = s.storage().entry_count();
            step(s);
            record(s, "main", before);
        }
    }
    ForkOptions fo;
    fo.session_id = "copy";
    {
        auto copy = fork(repo, "main", fo);
        run.sessions_acked["copy"] = PageCacheModel::get().calls;
        run.fork_sizes["copy"] = copy.storage().entry_count();
    }
    // Reopened for writing after a process crash left a torn tail; more appends.
    const auto path = *repo.find_path("main");
    {
        const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        REQUIRE(fd >= 0);
        REQUIRE(::write(fd, "{\"type\":\"mess", 13) == 13);
        ::close(fd);
        PageCacheModel& m = PageCacheModel::get();
        m.nodes[m.node_of(path)].volatile_bytes += "{\"type\":\"mess";
    }
    auto s = FileSession(std::make_shared<JsonlSessionStorage>(
        JsonlSessionStorage::open(path, modelled_options(durability))));
    for (int i = 0; i < 3; ++i) {
        const std::size_t before = s.storage().entry_count();
        append_message(s, user("after reopening " + std::to_string(i)));
        record(s, "main", before);
    }
}

void write_tree(const std::string& into, const PageCacheModel::Snapshot& snap, CutDamage damage) {
    for (const auto& folder : snap.folders)
        std::filesystem::create_directories(into + "/" + folder);
    for (const auto& [rel, state] : snap.files) {
        std::filesystem::create_directories(agentcore::detail::parent_folder(into + "/" + rel));
        const std::string target = into + "/" + rel;
        const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        REQUIRE(fd >= 0);
        const std::string bytes = PageCacheModel::after_cut(state, damage);
        REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
        ::close(fd);
    }
}

// Checks the state a cut left: every session list shows opens for writing without help; in
// durable mode every acknowledged entry and session is there. Returns the violations.
std::vector<std::string> check_cut(const std::string& root, const PowerRun& run, long call,
                                   bool durable) {
    std::vector<std::string> bad;
    JsonlSessionRepo repo(root, jsonl_options());
    const auto l = list(repo);
    for (const auto& p : l.problems) bad.push_back("list reports a problem: " + p.reason);
    std::map<std::string, Lines> found;
    for (const auto& listing : l.sessions) {
        try {
            auto st = JsonlSessionStorage::open(listing.path, jsonl_options());
            found[listing.header.id] = entry_lines(st);
            const std::string bytes = read_file(listing.path);
            if (bytes.find('\0') != std::string::npos)
                bad.push_back("a NUL byte stays in the file after a writing open");
        } catch (const SessionError& e) {
            bad.push_back(std::string("a listed session does not open for writing: ") + e.what());
        }
    }
    for (const auto& [id, size] : run.fork_sizes)
        if (found.count(id) != 0 && found[id].size() != size)
            bad.push_back("list shows an incomplete fork");
    // What was appended, per session, in order: what a file holds is a prefix of it.
    std::map<std::string, Lines> appended;
    for (const auto& a : run.acks) appended[a.session].emplace_back(a.id, a.line);
    for (const auto& [id, lines] : found) {
        const auto& all = appended[id];
        if (id == "main") {
            const Lines head(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(
                                                            std::min(all.size(), lines.size())));
            if (lines.size() > all.size() || head != lines)
                bad.push_back("a file holds entries that were never appended");
        }
    }
    if (!durable) return bad;
    for (const auto& [id, when] : run.sessions_acked)
        if (when <= call && found.count(id) == 0)
            bad.push_back("acknowledged session '" + id + "' is lost");
    std::size_t index = 0;
    for (const auto& a : run.acks) {
        if (a.call > call) break;
        if (a.session != "main") continue;
        const auto& have = found["main"];
        if (index >= have.size() || have[index] != std::make_pair(a.id, a.line))
            bad.push_back("acknowledged entry '" + a.id + "' is lost");
        ++index;
    }
    return bad;
}

}  // namespace

TEST_CASE(
    "a fault at any I/O call loses no acknowledged entry and leaves the storage usable or poisoned",
    "[reliability][faults]") {
    // Count the calls of the workload, and which are writes.
    long total_calls = 0;
    std::vector<char> kinds;
    {
        ScratchDir dir;
        CallInjector::reset();
        FaultRun clean;
        run_fault_workload(dir.path(), clean);
        INFO((clean.violations.empty() ? std::string() : clean.violations.front()));
        REQUIRE(clean.violations.empty());
        REQUIRE(clean.failures == 0);
        total_calls = CallInjector::get().calls;
        kinds = CallInjector::get().kinds;
    }
    REQUIRE(total_calls > 50);

    long injected = 0;
    long runs = 0;
    long failures = 0;
    std::vector<std::string> violations;
    struct Mode {
        FaultKind kind;
        bool persistent;
        bool writes_only;
        const char* name;
    };
    const Mode modes[] = {{FaultKind::eio, false, false, "EIO once"},
                          {FaultKind::enospc, false, false, "ENOSPC once"},
                          {FaultKind::eio, true, false, "EIO from then on"},
                          {FaultKind::short_write, false, true, "a short write"},
                          {FaultKind::short_write, true, true, "short writes from then on"}};
    // Every call, or every fourth under a sanitizer (support/sizes.hpp).
    for (long n = 1; n <= total_calls; n += static_cast<long>(size_divisor)) {
        for (const Mode& mode : modes) {
            if (mode.writes_only && kinds[static_cast<std::size_t>(n - 1)] != 'w') continue;
            ScratchDir dir;
            CallInjector::reset();
            CallInjector::get().fail_at = n;
            CallInjector::get().kind = mode.kind;
            CallInjector::get().persistent = mode.persistent;
            FaultRun run;
            run_fault_workload(dir.path(), run);
            injected += CallInjector::get().injected;
            failures += run.failures;
            ++runs;
            for (const auto& v : run.violations)
                violations.push_back("call " + std::to_string(n) + " (" + mode.name + "): " + v);
        }
    }
    CallInjector::reset();
    std::printf(
        "reliability: fault injection: %ld I/O calls in the workload, %ld runs, %ld faults "
        "injected, "
        "%ld calls failed cleanly, %zu violations\n",
        total_calls, runs, injected, failures, violations.size());
    for (std::size_t i = 0; i < violations.size() && i < 20; ++i)
        std::printf("  %s\n", violations[i].c_str());
    CHECK(violations.empty());
}

TEST_CASE(
    "a power cut after any I/O call keeps every entry acknowledged in durable mode and every file "
    "opens",
    "[reliability][power]") {
    for (const Durability durability : {Durability::durable, Durability::os_buffered}) {
        ScratchDir dir;
        const std::string root = dir.file("repo");
        PageCacheModel::reset(dir.path());
        PowerRun run;
        run_power_workload(root, durability, run);
        const auto snapshots = PageCacheModel::get().snapshots;
        std::size_t states = 0;
        std::vector<std::string> violations;
        for (const auto& snap : snapshots) {
            for (const CutDamage damage : {CutDamage::lost, CutDamage::short_, CutDamage::zeros}) {
                ScratchDir after;
                write_tree(after.path(), snap, damage);
                ++states;
                for (const auto& v : check_cut(after.path() + "/repo", run, snap.call,
                                               durability == Durability::durable))
                    violations.push_back("cut after call " + std::to_string(snap.call) + ": " + v);
            }
        }
        std::printf(
            "reliability: power cuts (%s): %zu cut points, %zu disk states checked, %zu "
            "acknowledged entries, "
            "%zu violations\n",
            durability == Durability::durable ? "durable" : "os_buffered", snapshots.size(), states,
            run.acks.size(), violations.size());
        for (std::size_t i = 0; i < violations.size() && i < 20; ++i)
            std::printf("  %s\n", violations[i].c_str());
        CHECK(violations.empty());
    }
}

TEST_CASE(
    "a tail of NUL bytes is a torn tail: ignored when reading, quarantined and cut when writing",
    "[reliability][power]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    std::string good;
    {
        auto s = create_file_session(path);
        append_message(s, user("one"));
        append_message(s, user("two"));
    }
    good = read_file(path);
    for (const std::string& tail : {std::string(37, '\0'), std::string(4096, '\0') + "\n",
                                    std::string("{\"type\":") + std::string(20, '\0')}) {
        write_file(path, good + tail);
        CHECK(open_file_read_only(path).storage().entry_count() == 2);
        auto s = open_file_session(path);
        CHECK(s.storage().had_torn_tail());
        REQUIRE(s.storage().quarantine_path());
        CHECK(read_file(*s.storage().quarantine_path()) == tail);
        CHECK(read_file(path) == good);
        CHECK(s.storage().entry_count() == 2);
    }
}

// Faults of the SQLite storage: writers killed mid-transaction, a full disk, and a differential
// property test against the in-memory and JSONL storages.

#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/observe.hpp"
#include "support/scratch.hpp"
#include "support/sizes.hpp"

#include <agentcore/session.hpp>
#include <agentcore/sqlite/sqlite_repo.hpp>

#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace agentcore;
using agentcore::testing::error_of;
using agentcore::testing::from_env;
using agentcore::testing::observe;
using agentcore::testing::ScratchDir;
using agentcore::testing::sized;

namespace {

std::string integrity(const std::string& path) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* s = nullptr;
    std::string out = "no answer";
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    sqlite3_close_v2(db);
    return out;
}

CreateOptions with_id(std::string id) {
    CreateOptions o;
    o.id = std::move(id);
    o.cwd = "/w";
    return o;
}

}  // namespace

TEST_CASE("a writer killed with SIGKILL mid-transaction loses no acknowledged entry",
          "[sqlite][reliability][crash]") {
    const std::size_t rounds = from_env("AGENTCORE_SQLITE_KILL_ROUNDS", sized(500));
    ScratchDir dir;
    const std::string db = dir.file("kill.db");
    {
        SqliteSessionRepo repo(db);
        create(repo, with_id("victim"));
    }
    std::mt19937 rng(12345);
    std::size_t acked_total = 0;
    std::size_t killed_mid_append = 0;
    for (std::size_t round = 0; round < rounds; ++round) {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        std::fflush(nullptr);
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            ::close(fds[0]);
            try {
                SqliteStorageOptions o;
                // Every 25th round durable, the rest at the faster level: a SIGKILL loses neither.
                o.durability = round % 25 == 0 ? Durability::durable : Durability::os_buffered;
                o.lock_wait = std::chrono::milliseconds(2000);
                auto s = Session<SqliteSessionStorage>(SqliteSessionStorage::open(db, "victim", o));
                for (int i = 0;; ++i) {
                    append_message(
                        s, UserMessage{
                               std::string(static_cast<std::size_t>(50 + i % 400), 'k'), i, {}});
                    const char ack = 'a';
                    if (::write(fds[1], &ack, 1) != 1) ::_exit(3);
                }
            } catch (...) {
                ::_exit(2);
            }
        }
        ::close(fds[1]);
        std::size_t acked = 0;
        const auto kill_after = std::uniform_int_distribution<int>(1, 8)(rng);
        char buf[256];
        while (acked < static_cast<std::size_t>(kill_after)) {
            const ssize_t n = ::read(fds[0], buf, sizeof buf);
            if (n <= 0) break;
            acked += static_cast<std::size_t>(n);
        }
        ::kill(child, SIGKILL);
        // Acknowledgements already in the pipe count too: the append returned before them.
        for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
            acked += static_cast<std::size_t>(n);
        ::close(fds[0]);
        int status = 0;
        ::waitpid(child, &status, 0);
        REQUIRE(WIFSIGNALED(status));
        ++killed_mid_append;
        acked_total += acked;
        const auto s = SqliteSessionStorage::open_read_only(db, "victim");
        if (s.entry_count() < acked_total)
            FAIL("round " << round << ": " << s.entry_count() << " entries, " << acked_total
                          << " acknowledged");
        acked_total = s.entry_count();  // an append may commit just before its acknowledgement
        if (round % 100 == 0) REQUIRE(integrity(db) == "ok");
        if (round + 1 == rounds) {
            REQUIRE(integrity(db) == "ok");
            REQUIRE(s.get_path_to_root_or_compaction(s.get_leaf_id()).size() == s.entry_count());
        }
    }
    CHECK(killed_mid_append == rounds);
    std::printf("sqlite kill loop: %zu rounds, %zu entries acknowledged and kept, integrity ok\n",
                rounds, acked_total);
}

TEST_CASE("a full disk fails the append with storage, changes nothing, and the next append works",
          "[sqlite][reliability][faults]") {
    ScratchDir dir;
    const std::string db = dir.file("full.db");
    std::fflush(nullptr);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // The file-size limit stands in for a full disk; it applies to this child only.
        int code = 0;
        try {
            ::signal(SIGXFSZ, SIG_IGN);
            SqliteSessionRepo repo(db);
            auto s = create(repo, with_id("full"));
            const std::string a = append_message(s, UserMessage{"small", 1, {}});
            rlimit lim{};
            lim.rlim_cur = 256 * 1024;
            lim.rlim_max = RLIM_INFINITY;
            ::setrlimit(RLIMIT_FSIZE, &lim);
            try {
                append_message(s, UserMessage{std::string(2 << 20, 'x'), 2, {}});
                code = 10;
            } catch (const SessionError& e) {
                if (e.code() != ErrorCode::storage) code = 11;
            }
            if (code == 0 && (s.storage().entry_count() != 1 || s.storage().get_leaf_id() != a))
                code = 12;
            lim.rlim_cur = RLIM_INFINITY;
            ::setrlimit(RLIMIT_FSIZE, &lim);
            if (code == 0) append_message(s, UserMessage{"after", 3, {}});
            if (code == 0 && s.storage().entry_count() != 2) code = 13;
        } catch (...) {
            code = 14;
        }
        ::_exit(code);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(integrity(db) == "ok");
    const auto s = SqliteSessionStorage::open_read_only(db, "full");
    CHECK(s.entry_count() == 2);
}

namespace {

// One random operation sequence, applied alike to any session.
template <class S>
void play(Session<S>& s, std::uint64_t seed, std::size_t steps) {
    std::mt19937_64 rng(seed);
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < steps; ++i) {
        const std::size_t op = ids.empty() ? 0 : pick(10);
        const std::string any = ids.empty() ? std::string() : ids[pick(ids.size())];
        switch (op) {
            case 0:
            case 1:
                ids.push_back(append_message(
                    s, UserMessage{"u" + std::to_string(i), static_cast<std::int64_t>(i), {}}));
                break;
            case 2: {
                AssistantMessage m;
                m.content.push_back(TextContent{"a" + std::to_string(i), {}});
                m.provider = pick(2) ? "openai" : "anthropic";
                m.model = "m" + std::to_string(pick(3));
                m.usage.input = static_cast<std::int64_t>(pick(100));
                m.usage.output = static_cast<std::int64_t>(pick(100));
                m.usage.cache_read = static_cast<std::int64_t>(pick(100));
                m.usage.cost.total = static_cast<double>(pick(1000)) / 997.0;
                ids.push_back(append_message(s, std::move(m)));
                break;
            }
            case 3:
                ids.push_back(append_label(
                    s, any,
                    pick(3) ? std::optional<std::string>(" l" + std::to_string(pick(5)) + " ")
                            : std::nullopt));
                break;
            case 4:
                ids.push_back(append_session_name(
                    s, pick(4) ? "name\n" + std::to_string(pick(9)) : std::string(" ")));
                break;
            case 5: set_leaf_id(s, pick(5) ? std::optional<std::string>(any) : std::nullopt); break;
            case 6: {
                BranchSummaryInput in;
                in.summary = pick(3) ? "went elsewhere" : "";
                const auto id = move_to(s, any, in);
                if (id) ids.push_back(*id);
                break;
            }
            case 7: {
                const auto branch = get_branch(s);
                if (branch.empty()) break;
                const std::string kept = id_of(*branch[pick(branch.size())]);
                if (pick(3) == 0)
                    ids.push_back(
                        append_compaction(s, "c", std::nullopt, 5, {}, false, std::nullopt,
                                          std::vector<AgentMessage>{UserMessage{"kept", 1, {}}}));
                else
                    ids.push_back(append_compaction(s, "c", kept, 5));
                break;
            }
            case 8: ids.push_back(append_thinking_level_change(s, pick(2) ? "high" : "low")); break;
            default: ids.push_back(append_custom_entry(s, "app", Json{{"n", i}})); break;
        }
    }
}

}  // namespace

TEST_CASE("seeded random operation sequences give the same sessions on memory, JSONL and SQLite",
          "[sqlite][property]") {
    const std::size_t sequences = from_env("AGENTCORE_SQLITE_PROPERTY_RUNS", sized(2000));
    ScratchDir dir;
    // The real file system calls, with the syncs of new files and folders skipped: this test
    // compares behaviour, and thousands of session creations need not reach the disk.
    static const detail::FileOps no_sync = [] {
        detail::FileOps ops = detail::FileOps::real();
        ops.fdatasync = [](int) { return 0; };
        ops.fsync = [](int) { return 0; };
        return ops;
    }();
    JsonlStorageOptions jo;
    jo.durability = Durability::os_buffered;
    jo.file_ops = &no_sync;
    JsonlSessionRepo jsonl(dir.file("jsonl"), jo);
    SqliteStorageOptions so;
    so.durability = Durability::os_buffered;
    SqliteSessionRepo sqlite(dir.file("p.db"), so);
    std::size_t compared = 0;
    for (std::size_t run = 0; run < sequences; ++run) {
        const std::uint64_t seed = 0x5eed0000u + run;
        const std::size_t steps = 5 + run % 30;
        const std::string id = "p" + std::to_string(run);
        const Environment env = Environment::deterministic(1'700'000'000'000, seed);
        InMemorySessionRepo memory_repo(env);
        jsonl.options().environment = Environment::deterministic(1'700'000'000'000, seed);
        sqlite.options().environment = Environment::deterministic(1'700'000'000'000, seed);
        auto m = create(memory_repo, with_id(id));
        auto j = create(jsonl, with_id(id));
        auto q = create(sqlite, with_id(id));
        play(m, seed, steps);
        play(j, seed, steps);
        play(q, seed, steps);
        const bool paths = run % 10 == 0;
        const std::string expected = observe(m, paths);
        INFO("seed " << seed);
        REQUIRE(observe(j, paths) == expected);
        REQUIRE(observe(q, paths) == expected);
        if (run % 10 == 0) {  // and the same after reopening from the stores
            const std::string jp = j.storage().path();
            REQUIRE(
                observe(Session<JsonlSessionStorage>(JsonlSessionStorage::open_read_only(jp, jo)),
                        paths) == expected);
            REQUIRE(observe(open_read_only(sqlite, id), paths) == expected);
        }
        ++compared;
    }
    CHECK(compared == sequences);
}

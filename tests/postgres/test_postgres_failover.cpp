// Losing the primary or the writer: a primary killed while durable appends run and its
// synchronous standby promoted, and a writing process killed again and again. Nothing an append
// acknowledged is lost; at most the append whose outcome was unknown is there besides.

#include "postgres/pg_test.hpp"
#include "support/catch.hpp"
#include "support/sizes.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#include <agentcore/session.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace agentcore;
using agentcore::testing::pg::named;
using agentcore::testing::pg::Raw;
namespace pgt = agentcore::testing::pg;
using namespace std::chrono_literals;

namespace {

struct FailoverServers {
    pgt::Server primary;
    std::optional<pgt::Server> standby;
    ~FailoverServers() {
        if (standby) pgt::stop_server(*standby);
        pgt::stop_server(primary);
    }
};

// The primary's view of its standby: "sync" once it streams and each commit waits for it.
std::string failover_sync_state(const pgt::Server& primary) {
    Raw raw(primary.conninfo("postgres"));
    std::string state;
    for (int i = 0; i < 300 && state != "sync"; ++i) {
        state = raw.text(
            "SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming' LIMIT 1");
        if (state != "sync") std::this_thread::sleep_for(100ms);
    }
    return state;
}

}  // namespace

TEST_CASE(
    "the primary killed during durable appends and its synchronous standby promoted: every "
    "acknowledged append is there",
    "[postgres][faults][durability][failover]") {
    FailoverServers servers{pgt::start_primary(), std::nullopt};
    {
        detail::pg::Connection admin(servers.primary.conninfo("postgres"));
        admin.exec("CREATE DATABASE failover", detail::pg::Params{}, "testing");
    }
    servers.standby = pgt::start_standby(servers.primary);
    // Before the load: from here on no commit is acknowledged before the standby has it.
    REQUIRE(failover_sync_state(servers.primary) == "sync");

    constexpr int writers = 4;
    PostgresStorageOptions durable;  // synchronous_commit on: the standby has flushed each commit
    std::vector<std::vector<std::string>> acknowledged(writers);
    std::atomic<int> stopped_by_storage{0};
    {
        PostgresSessionRepo repo(servers.primary.conninfo("failover"), durable);
        std::vector<Session<PostgresSessionStorage>> sessions;
        for (int w = 0; w < writers; ++w)
            sessions.push_back(create(repo, named("failover" + std::to_string(w))));
        std::vector<std::thread> threads;
        const auto give_up = std::chrono::steady_clock::now() + 60s;
        for (int w = 0; w < writers; ++w)
            threads.emplace_back([&, w] {
                auto& s = sessions[static_cast<std::size_t>(w)];
                auto& mine = acknowledged[static_cast<std::size_t>(w)];
                for (int i = 0; std::chrono::steady_clock::now() < give_up; ++i) {
                    try {
                        mine.push_back(
                            append_message(s, UserMessage{"turn " + std::to_string(i), i, {}}));
                    } catch (const SessionError& e) {
                        if (e.code() == ErrorCode::storage) ++stopped_by_storage;
                        return;
                    } catch (const std::exception&) {
                        return;
                    }
                }
            });
        std::this_thread::sleep_for(1500ms);
        pgt::kill_server(servers.primary);
        for (auto& t : threads) t.join();
    }
    CHECK(stopped_by_storage == writers);
    pgt::promote_server(*servers.standby);

    PostgresStorageOptions taking_over = durable;
    taking_over.steal = true;  // the dead primary's writers still hold their leases
    PostgresSessionRepo repo(servers.standby->conninfo("failover"), taking_over);
    std::size_t acknowledged_count = 0;
    std::size_t found = 0;
    std::size_t unknown_kept = 0;
    for (int w = 0; w < writers; ++w) {
        const auto& mine = acknowledged[static_cast<std::size_t>(w)];
        INFO("session failover" << w << ", " << mine.size() << " acknowledged");
        auto s = open(repo, "failover" + std::to_string(w));
        const std::size_t count = s.storage().entry_count();
        for (const auto& id : mine) {
            CHECK(get_entry(s, id) != nullptr);
            if (get_entry(s, id) != nullptr) ++found;
        }
        CHECK((count == mine.size() || count == mine.size() + 1));
        CHECK(build_context(s).messages.size() == count);
        CHECK(s.storage().get_path_to_root_or_compaction(s.storage().get_leaf_id()).size() ==
              count);
        acknowledged_count += mine.size();
        unknown_kept += count - std::min(count, mine.size());
        append_message(s, UserMessage{"after the failover", 1, {}});
    }
    std::printf(
        "reliability: failover: %d sessions, %zu acknowledged appends, %zu found after failover, "
        "%zu unacknowledged kept\n",
        writers, acknowledged_count, found, unknown_kept);
    CHECK(found == acknowledged_count);
    CHECK(acknowledged_count >= static_cast<std::size_t>(writers));
}

TEST_CASE(
    "a writing process killed with SIGKILL again and again: every acknowledged append is there, "
    "positions dense, stats equal a recount",
    "[postgres][faults][durability]") {
    const std::size_t rounds = agentcore::testing::from_env("AGENTCORE_PG_KILL_ROUNDS", 8);
    const std::string db = pgt::fresh_database();
    const std::string id = "killed";
    {
        PostgresSessionRepo repo(db, PostgresStorageOptions{});
        create(repo, named(id));
    }                                 // no connection of the parent lives across fork()
    PostgresStorageOptions stealing;  // durable
    stealing.steal = true;
    std::mt19937 rng(0x5eed);
    std::vector<std::string> all_acknowledged;
    std::size_t previous = 0;
    std::size_t unknown_kept = 0;
    for (std::size_t round = 0; round < rounds; ++round) {
        int ids[2];
        REQUIRE(::pipe(ids) == 0);
        std::fflush(nullptr);
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            ::close(ids[0]);
            try {
                PostgresSessionRepo repo(db, stealing);  // connections of its own
                auto s = open(repo, id);
                for (int i = 0;; ++i) {
                    const std::string line =
                        append_message(s, UserMessage{"turn " + std::to_string(i), i, {}}) + "\n";
                    // Shorter than PIPE_BUF: written whole or not at all.
                    if (::write(ids[1], line.data(), line.size()) !=
                        static_cast<ssize_t>(line.size()))
                        ::_exit(3);
                }
            } catch (...) {
            }
            ::_exit(2);
        }
        ::close(ids[1]);
        std::string received;
        char buf[4096];
        auto drain = [&](int timeout_ms) {
            pollfd p{ids[0], POLLIN, 0};
            if (::poll(&p, 1, timeout_ms) <= 0) return false;
            const ssize_t n = ::read(ids[0], buf, sizeof buf);
            if (n <= 0) return false;
            received.append(buf, static_cast<std::size_t>(n));
            return true;
        };
        const auto kill_at =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(50 + rng() % 400);
        while (std::chrono::steady_clock::now() < kill_at) (void)drain(5);
        ::kill(child, SIGKILL);
        int status = 0;
        ::waitpid(child, &status, 0);
        CHECK(WIFSIGNALED(status));  // it was still appending, not stopped by an error
        while (drain(1000)) {
        }
        ::close(ids[0]);
        std::vector<std::string> acknowledged;
        for (std::size_t start = 0, end; (end = received.find('\n', start)) != std::string::npos;
             start = end + 1)
            acknowledged.push_back(received.substr(start, end - start));
        all_acknowledged.insert(all_acknowledged.end(), acknowledged.begin(), acknowledged.end());

        PostgresSessionRepo repo(db, stealing);  // the killed writer still holds its lease
        auto s = open(repo, id);
        Raw raw(db);
        INFO("round " << round << ", " << acknowledged.size() << " acknowledged");
        for (const auto& a : all_acknowledged) REQUIRE(get_entry(s, a) != nullptr);
        const std::size_t count = s.storage().entry_count();
        CHECK((count == previous + acknowledged.size() ||
               count == previous + acknowledged.size() + 1));
        unknown_kept += count - std::min(count, previous + acknowledged.size());
        previous = count;
        CHECK(raw.number("SELECT count(DISTINCT id) FROM entries WHERE session_id = '" + id +
                         "'") == static_cast<std::int64_t>(count));
        pgt::check_session_consistent(raw, s, id);
    }
    std::set<std::string> unique(all_acknowledged.begin(), all_acknowledged.end());
    CHECK(unique.size() == all_acknowledged.size());
    std::printf(
        "reliability: writer killed: %zu rounds, %zu acknowledged appends, all found, %zu "
        "unacknowledged kept, %zu entries\n",
        rounds, all_acknowledged.size(), unknown_kept, previous);
    CHECK(!all_acknowledged.empty());
}

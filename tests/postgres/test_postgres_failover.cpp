// Losing the primary: a primary killed while durable appends run and its synchronous standby
// promoted. Nothing an append acknowledged is lost; at most the append whose outcome was unknown
// is there besides.

#include "postgres/pg_test.hpp"
#include "support/catch.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#include <agentcore/session.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
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

// One writer per session across machines (SPEC §9): the lease with its fencing token — a second
// writer locked, lock_wait, takeover after the time-to-live, steal, heartbeat — read-only opens
// without a lease that follow new entries, and many writers at once.

#include "postgres/pg_test.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#include <agentcore/session.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace agentcore;
using agentcore::testing::error_of;
using agentcore::testing::message_of_error;
using agentcore::testing::pg::fast;
using agentcore::testing::pg::named;
using agentcore::testing::pg::Raw;
namespace pgt = agentcore::testing::pg;
using namespace std::chrono_literals;

TEST_CASE("a second writer is locked at once, or after lock_wait, and other sessions are not",
          "[postgres][lease]") {
    const std::string db = pgt::fresh_database();
    PostgresSessionRepo repo(db, fast());
    auto s = create(repo, named("one"));
    append_message(s, UserMessage{"a", 1, {}});
    const std::string message = message_of_error([&] { open(repo, "one"); });
    CHECK(message.find("[agentcore.locked]") == 0);
    CHECK(message.find("'one'") != std::string::npos);
    PostgresStorageOptions waiting = fast();
    waiting.lock_wait = 300ms;
    const auto start = std::chrono::steady_clock::now();
    CHECK(error_of([&] { (void)PostgresSessionStorage::open(repo.pool(), "one", waiting); }) ==
          ErrorCode::locked);
    CHECK(std::chrono::steady_clock::now() - start >= 300ms);
    auto other = create(repo, named("two"));
    append_message(other, UserMessage{"b", 1, {}});
    CHECK(error_of([&] { open(repo, "missing"); }) == ErrorCode::not_found);
    // A writer that waits gets the session once the holder lets go.
    std::thread release([&] {
        std::this_thread::sleep_for(200ms);
        s = create(repo, named("three"));  // destroys the writer of "one"
    });
    waiting.lock_wait = 5000ms;
    auto next = PostgresSessionStorage::open(repo.pool(), "one", waiting);
    release.join();
    CHECK(next.fence() == 2);
    CHECK(next.entry_count() == 1);
}

TEST_CASE(
    "after its time-to-live a lease is taken over, and the old owner's next append is refused with "
    "nothing written",
    "[postgres][lease]") {
    const std::string db = pgt::fresh_database();
    PostgresStorageOptions short_lease = fast();
    short_lease.lease_ttl = 1000ms;
    PostgresSessionRepo repo(db, short_lease);
    auto old_writer = create(repo, named("ttl"));
    append_message(old_writer, UserMessage{"before", 1, {}});
    CHECK(error_of([&] { open(repo, "ttl"); }) == ErrorCode::locked);
    std::this_thread::sleep_for(1200ms);
    auto new_writer = open(repo, "ttl");
    CHECK(new_writer.storage().fence() > old_writer.storage().fence());
    const std::string message = message_of_error([&] {
        append_message(old_writer, UserMessage{"zombie", 2, {}});
    });
    CHECK(message.find("[agentcore.locked]") == 0);
    CHECK(message.find("lost its lease") != std::string::npos);
    CHECK(error_of([&] { set_leaf_id(old_writer, std::nullopt); }) == ErrorCode::locked);
    CHECK(error_of([&] { old_writer.storage().heartbeat(); }) == ErrorCode::locked);
    append_message(new_writer, UserMessage{"after", 3, {}});
    Raw raw(db);
    CHECK(raw.number("SELECT count(*) FROM entries WHERE session_id = 'ttl'") == 2);
    CHECK(raw.number("SELECT count(*) FROM entries WHERE line LIKE '%zombie%'") == 0);
}

TEST_CASE("steal takes a held lease at once, and heartbeats keep a lease past its time-to-live",
          "[postgres][lease]") {
    const std::string db = pgt::fresh_database();
    PostgresStorageOptions short_lease = fast();
    short_lease.lease_ttl = 1000ms;
    PostgresSessionRepo repo(db, short_lease);
    auto holder = create(repo, named("held"));
    append_message(holder, UserMessage{"a", 1, {}});
    for (int i = 0; i < 4; ++i) {  // 1.6 s in all, renewed every 0.4 s
        std::this_thread::sleep_for(400ms);
        holder.storage().heartbeat();
        CHECK(error_of([&] { open(repo, "held"); }) == ErrorCode::locked);
    }
    append_message(holder, UserMessage{"still mine", 2, {}});
    PostgresStorageOptions stealing = short_lease;
    stealing.steal = true;
    auto thief = PostgresSessionStorage::open(repo.pool(), "held", stealing);
    CHECK(error_of([&] {
              append_message(holder, UserMessage{"stolen", 3, {}});
          }) == ErrorCode::locked);
    CHECK(thief.entry_count() == 2);
    Session<PostgresSessionStorage> t(std::move(thief));
    append_message(t, UserMessage{"thief's", 4, {}});
    CHECK(Raw(db).number("SELECT count(*) FROM entries WHERE session_id = 'held'") == 3);
}

TEST_CASE("read-only opens take no lease and follow a writer with refresh", "[postgres][lease]") {
    const std::string db = pgt::fresh_database();
    PostgresSessionRepo repo(db, fast());
    auto w = create(repo, named("followed"));
    const std::string a = append_message(w, UserMessage{"a", 1, {}});
    auto r1 = open_read_only(repo, "followed");
    auto r2 = open_read_only(repo, "followed");
    CHECK(r1.storage().fence() == 0);
    CHECK(Raw(db).text("SELECT writer_fence FROM sessions") == "1");
    CHECK(error_of([&] { append_message(r1, UserMessage{"no", 2, {}}); }) == ErrorCode::storage);
    const std::string b = append_message(w, UserMessage{"b", 2, {}});
    CHECK(r1.storage().entry_count() == 1);
    CHECK(get_entry(r1, b) == nullptr);  // as it was when opened
    r1.storage().refresh();
    CHECK(r1.storage().entry_count() == 2);
    CHECK(r1.storage().get_leaf_id() == b);
    CHECK(build_context(r1).messages.size() == 2);
    CHECK(build_context(r2).messages.size() == 1);
    (void)a;
    remove(repo, "followed");
    CHECK(error_of([&] { r1.storage().refresh(); }) == ErrorCode::not_found);
}

TEST_CASE("processes opening one session for writing at once: exactly one wins",
          "[postgres][lease]") {
    const std::string db = pgt::fresh_database();
    {
        PostgresSessionRepo repo(db, fast());
        create(repo, named("contested"));
    }
    for (int round = 0; round < 5; ++round) {
        int go[2];
        int results[2];
        REQUIRE(::pipe(go) == 0);
        REQUIRE(::pipe(results) == 0);
        std::vector<pid_t> children;
        std::fflush(nullptr);
        for (int i = 0; i < 4; ++i) {
            const pid_t child = ::fork();
            REQUIRE(child >= 0);
            if (child == 0) {
                ::close(go[1]);
                char c = 0;
                char outcome = 'e';
                try {
                    PostgresSessionRepo repo(db, fast());  // connected before the start signal
                    if (::read(go[0], &c, 1) != 0) ::_exit(3);
                    try {
                        auto s = open(repo, "contested");
                        outcome = 'w';
                        if (::write(results[1], &outcome, 1) != 1) ::_exit(3);
                        std::this_thread::sleep_for(300ms);  // hold it while the others try
                        ::_exit(0);
                    } catch (const SessionError& e) {
                        outcome = e.code() == ErrorCode::locked ? 'l' : 'e';
                    }
                } catch (...) {
                }
                if (::write(results[1], &outcome, 1) != 1) ::_exit(3);
                ::_exit(0);
            }
            children.push_back(child);
        }
        ::close(go[0]);
        ::close(results[1]);
        std::this_thread::sleep_for(300ms);
        ::close(go[1]);  // all start at once
        std::map<char, int> outcomes;
        char c = 0;
        while (::read(results[0], &c, 1) == 1) ++outcomes[c];
        ::close(results[0]);
        for (const pid_t child : children) ::waitpid(child, nullptr, 0);
        CHECK(outcomes['w'] == 1);
        CHECK(outcomes['l'] == 3);
        // The winner exited without giving its lease up (_exit), as a crash would: steal the
        // session for the next round.
        PostgresStorageOptions steal = fast();
        steal.steal = true;
        (void)PostgresSessionStorage::open(db, "contested", steal);
    }
}

TEST_CASE(
    "threads writing sessions through contended leases: positions dense, stats equal a recount",
    "[postgres][lease][concurrency]") {
    const std::string db = pgt::fresh_database();
    PostgresStorageOptions o = fast();
    o.lock_wait = 10000ms;
    PostgresSessionRepo repo(db, o);
    constexpr int sessions = 5;
    constexpr int threads = 4;
    constexpr int turns = 12;
    for (int i = 0; i < sessions; ++i) create(repo, named("m" + std::to_string(i)));
    std::atomic<int> appended{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            std::mt19937 rng(static_cast<unsigned>(t));
            for (int turn = 0; turn < turns; ++turn) {
                try {
                    auto s = open(repo, "m" + std::to_string(rng() % sessions));
                    for (int k = 0; k < 3; ++k) {
                        AssistantMessage m;
                        m.content.push_back(TextContent{"t" + std::to_string(t), {}});
                        m.usage.input = t + 1;
                        m.usage.output = k;
                        m.usage.cost.total = 0.25;
                        append_message(s, std::move(m));
                        ++appended;
                    }
                } catch (const std::exception& e) {
                    ++failures;
                    UNSCOPED_INFO(e.what());
                }
            }
        });
    for (auto& t : pool) t.join();
    CHECK(failures == 0);
    CHECK(appended == threads * turns * 3);
    Raw raw(db);
    CHECK(raw.number("SELECT count(*) FROM entries") == appended);
    for (int i = 0; i < sessions; ++i) {
        const std::string id = "m" + std::to_string(i);
        pgt::check_session_consistent(raw, open_read_only(repo, id), id);
    }
}

// Faults of the PostgreSQL storage: the writer's backend terminated mid-session, a commit whose
// outcome the client never saw, the server stopped as by a crash and restarted, and a
// differential property test against the in-memory storage.

#include "postgres/pg_test.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/observe.hpp"
#include "support/sizes.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#include <agentcore/session.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace agentcore;
using agentcore::testing::error_of;
using agentcore::testing::observe;
using agentcore::testing::pg::fast;
using agentcore::testing::pg::named;
using agentcore::testing::pg::Raw;
namespace pgt = agentcore::testing::pg;
using namespace std::chrono_literals;

namespace {

int backend_of(const Session<PostgresSessionStorage>& s) {
    return PQbackendPID(s.storage().connection().handle());
}

std::int64_t stored_count(Raw& raw, const std::string& id) {
    return raw.number("SELECT count(*) FROM entries WHERE session_id = '" + id + "'");
}

}  // namespace

TEST_CASE(
    "the writer's backend terminated: the call throws storage, nothing half-done, the next call "
    "reconnects",
    "[postgres][faults]") {
    const std::string db = pgt::fresh_database();
    PostgresSessionRepo repo(db, fast());
    Raw raw(db);
    auto s = create(repo, named("terminated"));
    const std::string a = append_message(s, UserMessage{"a", 1, {}});
    raw.exec("SELECT pg_terminate_backend(" + std::to_string(backend_of(s)) + ")");
    std::this_thread::sleep_for(100ms);
    CHECK(error_of([&] { append_message(s, UserMessage{"b", 2, {}}); }) == ErrorCode::storage);
    CHECK(s.storage().entry_count() == 1);
    CHECK(stored_count(raw, "terminated") == 1);
    const std::string c = append_message(s, UserMessage{"c", 3, {}});
    CHECK(s.storage().entry_count() == 2);
    CHECK(get_branch(s).size() == 2);
    // A reader's backend too: its next read reconnects.
    auto r = open_read_only(repo, "terminated");
    raw.exec("SELECT pg_terminate_backend(" + std::to_string(backend_of(r)) + ")");
    std::this_thread::sleep_for(100ms);
    CHECK(get_entry(r, c) != nullptr);
    CHECK(build_context(r).messages.size() == 2);
    (void)a;
}

TEST_CASE(
    "backends terminated while appends run: each append is acknowledged and kept, or refused and "
    "absent",
    "[postgres][faults]") {
    const std::string db = pgt::fresh_database();
    PostgresSessionRepo repo(db, PostgresStorageOptions{});  // durable: commits take a while
    Raw raw(db);
    auto s = create(repo, named("storm"));
    std::atomic<int> backend{backend_of(s)};
    std::atomic<bool> done{false};
    std::thread killer([&] {
        Raw k(db);
        std::mt19937 rng(7);
        while (!done) {
            std::this_thread::sleep_for(std::chrono::microseconds(500 + rng() % 4000));
            k.exec("SELECT pg_terminate_backend(" + std::to_string(backend.load()) + ")");
        }
    });
    std::vector<std::string> acknowledged;
    int refused = 0;
    for (int i = 0; i < 150; ++i) {
        try {
            acknowledged.push_back(append_message(
                s, UserMessage{std::string(static_cast<std::size_t>(2000 + i), 'x'), i, {}}));
        } catch (const SessionError& e) {
            REQUIRE(e.code() == ErrorCode::storage);
            ++refused;
        }
        backend = backend_of(s);
        REQUIRE(s.storage().entry_count() == acknowledged.size());
    }
    done = true;
    killer.join();
    // The last termination may have come after the last append: that connection is found lost
    // by the next call, which throws; the one after it reconnects.
    try {
        append_message(s, UserMessage{"settled", 1, {}});
    } catch (const SessionError& e) {
        REQUIRE(e.code() == ErrorCode::storage);
        append_message(s, UserMessage{"settled", 1, {}});
    }
    CHECK(stored_count(raw, "storm") == static_cast<std::int64_t>(acknowledged.size()) + 1);
    auto r = open_read_only(repo, "storm");
    for (const auto& id : acknowledged) CHECK(get_entry(r, id) != nullptr);
    CHECK(raw.number("SELECT count(DISTINCT line) FROM entries WHERE session_id = 'storm'") ==
          stored_count(raw, "storm"));
    INFO(refused << " appends refused");
    CHECK(refused >= 1);
}

TEST_CASE("a commit whose outcome was not seen is read back, never sent twice",
          "[postgres][faults]") {
    const std::string db = pgt::fresh_database();
    PostgresSessionRepo repo(db, fast());
    Raw raw(db);
    auto s = create(repo, named("unseen"));
    append_message(s, UserMessage{"first", 1, {}});
    // Cut before the statement is sent: it never ran, the call says so.
    s.storage().connection().inject(detail::pg::Fault::drop_before_send);
    CHECK(error_of([&] { append_message(s, UserMessage{"never", 2, {}}); }) == ErrorCode::storage);
    CHECK(s.storage().entry_count() == 1);
    CHECK(stored_count(raw, "unseen") == 1);
    // Cut after it was sent: the server commits it unseen; the storage reads it back.
    int written = 0;
    int not_written = 0;
    for (int i = 0; i < 20; ++i) {
        s.storage().connection().inject(detail::pg::Fault::drop_after_send);
        const std::size_t before = s.storage().entry_count();
        try {
            append_message(s, UserMessage{"maybe " + std::to_string(i), i, {}});
            ++written;
            CHECK(s.storage().entry_count() == before + 1);
        } catch (const SessionError& e) {
            CHECK(e.code() == ErrorCode::storage);
            ++not_written;
            CHECK(s.storage().entry_count() == before);
        }
        CHECK(stored_count(raw, "unseen") == static_cast<std::int64_t>(s.storage().entry_count()));
    }
    INFO(written << " read back as written, " << not_written << " as not written");
    CHECK(written >= 1);
    append_message(s, UserMessage{"last", 3, {}});
    CHECK(stored_count(raw, "unseen") == static_cast<std::int64_t>(s.storage().entry_count()));
    CHECK(raw.number("SELECT count(DISTINCT line) FROM entries WHERE session_id = 'unseen'") ==
          stored_count(raw, "unseen"));
}

TEST_CASE(
    "the server stopped as by a crash during appends and restarted: every acknowledged append is "
    "there",
    "[postgres][faults][durability]") {
    pgt::Server server = pgt::start_server(true);
    struct Stop {
        pgt::Server& s;
        ~Stop() { pgt::stop_server(s); }
    } stop{server};
    {
        detail::pg::Connection admin(server.conninfo("postgres"));
        admin.exec("CREATE DATABASE crash", detail::pg::Params{}, "testing");
    }
    const std::string db = server.conninfo("crash");
    PostgresStorageOptions durable;  // synchronous_commit on
    durable.lease_ttl = 500ms;
    std::vector<std::string> acknowledged;
    {
        PostgresSessionRepo repo(db, durable);
        auto s = create(repo, named("crashed"));
        std::thread crash([&] {
            std::this_thread::sleep_for(400ms);
            pgt::signal_server(server, SIGQUIT);  // immediate shutdown: no checkpoint
        });
        for (int i = 0; i < 100000; ++i) {
            try {
                acknowledged.push_back(
                    append_message(s, UserMessage{"turn " + std::to_string(i), i, {}}));
            } catch (const SessionError& e) {
                CHECK(e.code() == ErrorCode::storage);
                break;
            }
        }
        crash.join();
    }
    REQUIRE(acknowledged.size() > 5);
    pgt::restart_server(server);
    std::this_thread::sleep_for(600ms);  // the crashed writer's lease runs out
    PostgresSessionRepo repo(db, durable);
    auto s = open(repo, "crashed");
    CHECK(s.storage().entry_count() >= acknowledged.size());
    for (const auto& id : acknowledged) REQUIRE(get_entry(s, id) != nullptr);
    CHECK(get_branch(s).size() == s.storage().entry_count());
    append_message(s, UserMessage{"after the restart", 1, {}});
}

namespace {

// One random operation sequence, applied alike to any session (as the SQLite suite's).
template <class S>
void play(Session<S>& s, std::uint64_t seed, std::size_t steps) {
    std::mt19937_64 rng(seed);
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < steps; ++i) {
        const std::size_t op = ids.empty() ? 0 : pick(11);
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
                const std::string kept = pick(4) ? id_of(*branch[pick(branch.size())])
                                                 : any;  // sometimes off the branch
                if (pick(3) == 0)
                    ids.push_back(
                        append_compaction(s, "c", std::nullopt, 5, {}, false, std::nullopt,
                                          std::vector<AgentMessage>{UserMessage{"kept", 1, {}}}));
                else
                    ids.push_back(append_compaction(s, "c", kept, 5));
                break;
            }
            case 8: ids.push_back(append_thinking_level_change(s, pick(2) ? "high" : "low")); break;
            case 9:
                ids.push_back(append_model_change(s, "p", "m" + std::to_string(pick(4))));
                break;
            default: ids.push_back(append_custom_entry(s, "app", Json{{"n", i}})); break;
        }
    }
}

}  // namespace

TEST_CASE("seeded random operation sequences give the same sessions in memory and in PostgreSQL",
          "[postgres][property]") {
    const std::size_t sequences = agentcore::testing::from_env("AGENTCORE_PG_PROPERTY_RUNS", 80);
    const std::string db = pgt::fresh_database();
    PostgresSessionRepo repo(db, fast());
    std::size_t compared = 0;
    for (std::size_t run = 0; run < sequences; ++run) {
        const std::uint64_t seed = 0x9e5e0000u + run;
        const std::size_t steps = 5 + run % 40;
        const std::string id = "p" + std::to_string(run);
        InMemorySessionRepo memory_repo(Environment::deterministic(1'700'000'000'000, seed));
        repo.options().environment = Environment::deterministic(1'700'000'000'000, seed);
        auto m = create(memory_repo, named(id));
        auto q = create(repo, named(id));
        play(m, seed, steps);
        play(q, seed, steps);
        const bool paths = run % 3 == 0;
        const std::string expected = observe(m, paths);
        INFO("seed " << seed);
        REQUIRE(observe(q, paths) == expected);
        if (run % 10 == 0)
            REQUIRE(observe(open_read_only(repo, id), paths) ==
                    expected);  // from the database alone
        ++compared;
    }
    CHECK(compared == sequences);
}

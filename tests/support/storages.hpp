#pragma once
// One factory of fresh sessions for every storage, so that a test of the session operations
// runs unchanged over each of them: TEMPLATE_TEST_CASE(name, tags, AGENTCORE_TEST_STORAGES)
// with `auto s = fresh_session<TestType>();`. The core test runner defines the memory and JSONL
// kinds; the SQLite and PostgreSQL runners compile the same test files with their own kind
// (AGENTCORE_TEST_SQLITE / AGENTCORE_TEST_POSTGRES), so each storage answers every such test.
//
// A session starts empty, with the header and deterministic clock of memory_session
// (2026-12-02T07:43:23.123Z, +1 ms a call; ids from `seed`), so that a test's expectations do not
// depend on the storage. Files and databases live in one scratch folder (or one PostgreSQL
// database) per test program; each session gets its own file or id.

#include "support/builders.hpp"
#include "support/scratch.hpp"

#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/memory/memory_storage.hpp>
#include <agentcore/session.hpp>

#if defined(AGENTCORE_TEST_SQLITE)
#include <agentcore/sqlite/sqlite_storage.hpp>
#endif
#if defined(AGENTCORE_TEST_POSTGRES)
#include "postgres/pg_test.hpp"

#include <agentcore/postgres/postgres_storage.hpp>
#endif

#include <atomic>
#include <cstdint>
#include <string>

namespace agentcore::testing {

/// The header every fresh session starts with.
inline SessionHeader fresh_header() {
    SessionHeader header;
    header.id = "test-session";
    header.timestamp = "2026-12-02T07:43:23.123Z";
    header.cwd = "/work";
    return header;
}

inline Environment fresh_environment(std::uint64_t seed) {
    return Environment::deterministic(1796197403123, seed);
}

/// A name no other session of this test program has.
inline std::string fresh_name(const char* prefix) {
    static std::atomic<unsigned> counter{0};
    return prefix + std::to_string(counter++);
}

/// The scratch folder of this test program's session files and databases.
inline const ScratchDir& storage_scratch() {
    static const ScratchDir dir;
    return dir;
}

struct MemoryStorage {
    using storage_type = InMemorySessionStorage<>;
    static Session<storage_type> fresh(std::uint64_t seed) { return memory_session(seed); }
};

struct JsonlStorage {
    using storage_type = JsonlSessionStorage;
    static Session<storage_type> fresh(std::uint64_t seed) {
        JsonlStorageOptions options;
        options.environment = fresh_environment(seed);
        options.durability = Durability::os_buffered;
        return Session<storage_type>(
            JsonlSessionStorage::create(storage_scratch().file(fresh_name("session-") + ".jsonl"),
                                        fresh_header(), std::move(options)));
    }
};

#if defined(AGENTCORE_TEST_SQLITE)
struct SqliteStorage {
    using storage_type = SqliteSessionStorage;
    static Session<storage_type> fresh(std::uint64_t seed) {
        SqliteStorageOptions options;
        options.environment = fresh_environment(seed);
        options.durability = Durability::os_buffered;
        SessionHeader header = fresh_header();
        header.id = fresh_name("test-session-");
        return Session<storage_type>(SqliteSessionStorage::create(
            storage_scratch().file("sessions.db"), std::move(header), std::move(options)));
    }
};
#endif

#if defined(AGENTCORE_TEST_POSTGRES)
struct PostgresStorage {
    using storage_type = PostgresSessionStorage;
    static Session<storage_type> fresh(std::uint64_t seed) {
        static const std::string database = pg::fresh_database();
        PostgresStorageOptions options = pg::fast();
        options.environment = fresh_environment(seed);
        SessionHeader header = fresh_header();
        header.id = fresh_name("test-session-");
        return Session<storage_type>(
            PostgresSessionStorage::create(database, std::move(header), std::move(options)));
    }
};
#endif

/// An empty session on the storage `Kind` names (MemoryStorage, JsonlStorage, ...).
template <class Kind>
Session<typename Kind::storage_type> fresh_session(std::uint64_t seed = 1) {
    return Kind::fresh(seed);
}

}  // namespace agentcore::testing

/// The storages the session tests of this test program run over.
#if defined(AGENTCORE_TEST_SQLITE)
#define AGENTCORE_TEST_STORAGES agentcore::testing::SqliteStorage
#elif defined(AGENTCORE_TEST_POSTGRES)
#define AGENTCORE_TEST_STORAGES agentcore::testing::PostgresStorage
#else
#define AGENTCORE_TEST_STORAGES agentcore::testing::MemoryStorage, agentcore::testing::JsonlStorage
#endif

/// A test case of such a file that does not depend on the storage: it runs in the unit runner
/// only (elsewhere its body compiles as an unused function).
#if defined(AGENTCORE_TEST_SQLITE) || defined(AGENTCORE_TEST_POSTGRES)
#define AGENTCORE_UNIT_TEST_CASE(...) \
    [[maybe_unused]] static void INTERNAL_CATCH_UNIQUE_NAME(agentcore_unit_test_)()
#else
#define AGENTCORE_UNIT_TEST_CASE(...) TEST_CASE(__VA_ARGS__)
#endif

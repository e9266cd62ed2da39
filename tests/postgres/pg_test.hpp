#pragma once
// What the PostgreSQL tests share: a fresh database per test case, a raw connection to it (as
// another program, or a careless one, would open it), and options for fast tests.

#include "postgres/pg_server.hpp"
#include "support/catch.hpp"

#include <agentcore/postgres/postgres_repo.hpp>

#include <string>

namespace agentcore::testing::pg {

/// Fast tests: synchronous_commit off (durability is tested on its own).
inline PostgresStorageOptions fast() {
    PostgresStorageOptions o;
    o.durability = Durability::os_buffered;
    return o;
}

inline CreateOptions named(std::string id, std::string cwd = "/w") {
    CreateOptions o;
    o.id = std::move(id);
    o.cwd = std::move(cwd);
    return o;
}

/// A raw connection that runs SQL text and reads single values.
struct Raw {
    detail::pg::Connection c;
    explicit Raw(const std::string& conninfo) : c(conninfo) {}
    detail::pg::Result exec(const std::string& sql) {
        return c.exec(sql, detail::pg::Params{}, "testing");
    }
    std::string text(const std::string& sql) {
        const auto r = exec(sql);
        return r.rows() > 0 && !r.is_null(0, 0) ? std::string(r.text(0, 0)) : std::string();
    }
    std::int64_t number(const std::string& sql) { return exec(sql).int64(0, 0); }
};

/// What every writer leaves in a session however it ended (killed, its lease stolen, racing
/// others): positions dense from 1, stored stats equal to a recount of the entries, and one path
/// from the leaf through every entry, which entry_count counts. `session` is a session opened on
/// PostgreSQL.
template <class OpenSession>
void check_session_consistent(Raw& raw, const OpenSession& session, const std::string& id) {
    INFO("session " << id);
    CHECK(raw.number("SELECT coalesce(max(seq), 0) - count(*) FROM entries WHERE session_id = '" +
                     id + "'") == 0);
    const auto& storage = session.storage();
    const auto entries = storage.get_entries(EntriesQuery{});
    CHECK(entries.size() == storage.entry_count());
    SessionStats recount;
    for (const auto& e : entries) recount.add(*e);
    const SessionStats stored = storage.get_session_stats();
    CHECK(stored.message_count == recount.message_count);
    CHECK(stored.total_tokens == recount.total_tokens);
    CHECK(stored.uncached_tokens == recount.uncached_tokens);
    CHECK(stored.cost_total == recount.cost_total);
    CHECK(storage.get_path_to_root_or_compaction(storage.get_leaf_id()).size() == entries.size());
}

}  // namespace agentcore::testing::pg

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

}  // namespace agentcore::testing::pg

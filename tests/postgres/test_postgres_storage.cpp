// The PostgreSQL storage and repository (SPEC §9): the conformance kit, the schema and its
// versions, losslessness, bad input, listing, removal and the server-side fork.

#include "postgres/pg_test.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#include <agentcore/session.hpp>
#include <agentcore/testing/conformance.hpp>

#include <string>
#include <vector>

using namespace agentcore;
using agentcore::testing::error_of;
using agentcore::testing::message_of_error;
using agentcore::testing::pg::fast;
using agentcore::testing::pg::named;
using agentcore::testing::pg::Raw;
namespace pgt = agentcore::testing::pg;

static_assert(SessionRepository<PostgresSessionRepo>);

TEST_CASE("the PostgreSQL repository passes the conformance kit, reopened from its database", "[postgres][conformance]") {
    const std::string db = pgt::fresh_database();
    agentcore::testing::ConformanceTarget<PostgresSessionRepo> target;
    target.fresh = [&] { return PostgresSessionRepo(pgt::fresh_schema(db), fast()); };
    target.reopen = [](PostgresSessionRepo& r) { return PostgresSessionRepo(r.conninfo(), r.options()); };
    target.exclusive_writers = true;
    const auto report = agentcore::testing::run_conformance(target);
    INFO(report.summary());
    CHECK(report.checks.size() >= 15);
    CHECK(report.ok());
}

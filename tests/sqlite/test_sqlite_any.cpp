// open_repository("sqlite:PATH"), registered by the SQLite header.

#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/scratch.hpp"

#include <agentcore/any_repo.hpp>
#include <agentcore/session.hpp>
#include <agentcore/sqlite/sqlite_repo.hpp>
#include <agentcore/testing/conformance.hpp>

#include <memory>
#include <string>
#include <vector>

using namespace agentcore;

TEST_CASE("open_repository opens sqlite:PATH, and the type-erased SQLite repository passes the kit", "[sqlite][any]") {
    CHECK(agentcore::testing::error_of([] { open_repository("sqlite:"); }) == ErrorCode::invalid_session);
    std::vector<std::unique_ptr<agentcore::testing::ScratchDir>> dirs;
    agentcore::testing::ConformanceTarget<AnyRepository> target;
    target.fresh = [&] {
        dirs.push_back(std::make_unique<agentcore::testing::ScratchDir>());
        return open_repository("sqlite:" + dirs.back()->file("s.db"));
    };
    target.reopen = [](AnyRepository& r) { return open_repository(r.url()); };
    target.exclusive_writers = true;
    const auto report = agentcore::testing::run_conformance(target);
    INFO(report.summary());
    CHECK(report.ok());
    auto repo = target.fresh();
    CHECK(repo.target<SqliteSessionRepo>() != nullptr);
    auto s = create(repo);
    CHECK(s.storage().target<SqliteSessionStorage>() != nullptr);
}

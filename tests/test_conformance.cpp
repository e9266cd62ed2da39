// The conformance kit (agentcore/testing/conformance.hpp) over the in-memory and JSONL
// repositories; tests/sqlite/ runs it over SQLite.

#include "support/catch.hpp"
#include "support/scratch.hpp"

#include <agentcore/session.hpp>
#include <agentcore/testing/conformance.hpp>

#include <memory>
#include <string>
#include <vector>

using namespace agentcore;
using agentcore::testing::ConformanceTarget;
using agentcore::testing::run_conformance;

static_assert(SessionRepository<InMemorySessionRepo>);
static_assert(SessionRepository<JsonlSessionRepo>);

TEST_CASE("the in-memory repository passes the conformance kit", "[conformance][repo]") {
    ConformanceTarget<InMemorySessionRepo> target;
    target.fresh = [] { return InMemorySessionRepo(); };
    const auto report = run_conformance(target);
    INFO(report.summary());
    CHECK(report.checks.size() >= 15);
    CHECK(report.checks.back().find("import_session") ==
          0);  // an ImportingRepository: the import is checked
    CHECK(report.ok());
}

TEST_CASE("the JSONL repository passes the conformance kit, reopened from its files",
          "[conformance][jsonl]") {
    std::vector<std::unique_ptr<agentcore::testing::ScratchDir>> dirs;
    ConformanceTarget<JsonlSessionRepo> target;
    target.fresh = [&] {
        dirs.push_back(std::make_unique<agentcore::testing::ScratchDir>());
        JsonlStorageOptions o;
        o.durability = Durability::os_buffered;
        return JsonlSessionRepo(dirs.back()->path(), o);
    };
    target.reopen = [](JsonlSessionRepo& r) { return JsonlSessionRepo(r.root(), r.options()); };
    target.exclusive_writers = true;
    const auto report = run_conformance(target);
    INFO(report.summary());
    CHECK(report.ok());
}

TEST_CASE("the kit reports a broken promise through its callback and its report", "[conformance]") {
    // A "persistent" repository that forgets everything when reopened: the kit must notice.
    ConformanceTarget<InMemorySessionRepo> target;
    int calls = 0;
    target.fresh = [] { return InMemorySessionRepo(); };
    target.reopen = [](InMemorySessionRepo&) { return InMemorySessionRepo(); };  // loses everything
    const auto report =
        run_conformance(target, [&](const agentcore::testing::ConformanceFailure&) { ++calls; });
    CHECK_FALSE(report.ok());
    CHECK(calls == static_cast<int>(report.failures.size()));
    REQUIRE_FALSE(report.failures.empty());
    CHECK(report.failures[0].check.find("reopened") != std::string::npos);
}

TEST_CASE("the path walk over ancestors fetched by the caller equals the storage's walk",
          "[conformance][path]") {
    InMemorySessionRepo repo;
    auto s = create(repo, CreateOptions{std::string("walk"), "/", Json::object(), std::nullopt});
    const std::string a = append_message(s, UserMessage{"a", 1, {}});
    const std::string b = append_message(s, UserMessage{"b", 2, {}});
    append_compaction(s, "c", b, 10);
    const std::string d = append_message(s, UserMessage{"d", 3, {}});
    const auto expected = s.storage().get_path_to_root_or_compaction(std::string_view(d));
    // Fetched one entry at a time, the way a database fetches a batch that turns out too short.
    std::vector<EntryHandle> first{get_entry(s, d)};
    int fetches = 0;
    const auto path = walk_fetched_ancestors(std::string_view(d), s.storage().entry_count(), first,
                                             [&](std::string_view id) {
                                                 ++fetches;
                                                 return std::vector<EntryHandle>{get_entry(s, id)};
                                             });
    CHECK(path == expected);
    CHECK(fetches == 2);
    CHECK(path.front() == get_entry(s, b));
    (void)a;
}

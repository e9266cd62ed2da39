// Search over the PostgreSQL repository: the generic search of search.hpp (each session that
// passes the session filters is read), with the hits, order, snippets and pages of memory.

#include "postgres/pg_test.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/search_corpus.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#include <agentcore/session.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace agentcore;

TEST_CASE("PostgreSQL gives the hits, order, snippets and pages of memory on one corpus",
          "[postgres][search]") {
    namespace pgt = agentcore::testing::pg;
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    agentcore::testing::write_search_corpus(memory, 41, 25);
    PostgresSessionRepo postgres(pgt::fresh_schema(pgt::fresh_database()), pgt::fast());
    for (const auto& l : list(memory).sessions) copy_session(memory, postgres, l.header.id);
    AnyRepository any(postgres);
    const std::vector<std::pair<std::string, SearchOptions>> queries{
        {"login", {}},
        {"\"login bug\" -timeout", {}},
        {"ΑΘΗΝΑ ёлка", {}},
        {"caf*", {.order = SearchOrder::newest, .limit = 4}},
        {"getUserById", {.mode = SearchMode::substring}},
        {"token", {.cwd = "/work/lib", .exclude_roles = {"tool_result"}}},
        {"cache", {.metadata = Json{{"team", "web"}}}},
        {"x' OR '1'='1 --", {}},
    };
    for (const auto& [q, o] : queries) {
        INFO(q);
        const SearchResult expected = search(memory, q, o);
        for (const SearchResult& got : {search(postgres, q, o), search(any, q, o)}) {
            REQUIRE(got.hits.size() == expected.hits.size());
            for (std::size_t i = 0; i < got.hits.size(); ++i) {
                CHECK(got.hits[i].cursor() == expected.hits[i].cursor());
                CHECK(got.hits[i].entry_id == expected.hits[i].entry_id);
                CHECK(got.hits[i].snippet == expected.hits[i].snippet);
                CHECK(got.hits[i].marks == expected.hits[i].marks);
            }
            CHECK(got.next == expected.next);
        }
    }
    CHECK(!search(postgres, "login").hits.empty());
    CHECK(agentcore::testing::error_of([&] { search(postgres, "-login"); }) ==
          ErrorCode::invalid_query);
}

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

TEST_CASE("open_repository opens sqlite:PATH, and the type-erased SQLite repository passes the kit",
          "[sqlite][any]") {
    CHECK(agentcore::testing::error_of([] { open_repository("sqlite:"); }) ==
          ErrorCode::invalid_session);
    CHECK(known_repository_schemes() == std::vector<std::string>{"jsonl", "memory", "sqlite"});
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

namespace {

// Messages with usage, a label, a name, an unknown entry type and a leaf move.
void write_rich_session(AnyRepository& repo, const std::string& id) {
    auto s =
        create(repo, CreateOptions{id, "/home/ann/project", Json{{"team", "a"}}, std::nullopt});
    const std::string a =
        append_message(s, UserMessage{"héllo \"quoted\" ; DROP TABLE entries;", 1, {}});
    AssistantMessage m;
    m.content.push_back(ThinkingContent{"hmm", Json{{"signature", "sig"}}});
    m.content.push_back(ToolCallContent{"call_1", "read", Json{{"path", "/x"}}, {}});
    m.provider = "anthropic";
    m.model = "claude";
    m.usage.input = 3;
    m.usage.cost.total = 0.125;
    m.stop_reason = "tool_use";
    m.extra = Json{{"responseId", "r1"}};
    append_message(s, std::move(m));
    append_label(s, a, std::string("mark"));
    append_session_name(s, "rich");
    s.storage().append_entry(entry_from_json(Json{{"type", "future"},
                                                  {"id", "f1234567"},
                                                  {"parent_id", a},
                                                  {"timestamp", "2026-01-01T00:00:00.000Z"},
                                                  {"x", {1}}},
                                             Dialect::native));
    set_leaf_id(s, a);
}

}  // namespace

TEST_CASE(
    "a session copied from a JSONL folder into SQLite and back is the same file, in both dialects",
    "[sqlite][any][copy][lossless]") {
    for (const Dialect dialect : {Dialect::native, Dialect::pi}) {
        agentcore::testing::ScratchDir dir;
        JsonlStorageOptions jo;
        jo.dialect = dialect;
        jo.durability = Durability::os_buffered;
        AnyRepository folder(JsonlSessionRepo(dir.file("a"), jo), dir.file("a"));
        write_rich_session(folder, "rich");
        const std::string path = *folder.target<JsonlSessionRepo>()->find_path("rich");
        const std::string bytes = agentcore::testing::read_file(path);

        AnyRepository db = open_repository("sqlite:" + dir.file("s.db"));
        {
            auto copy = copy_session(folder, db, "rich");
            CHECK(copy.storage().dialect() == dialect);
            CHECK(copy.storage().target<SqliteSessionStorage>()->export_jsonl() == bytes);
        }
        AnyRepository back = open_repository(dir.file("b"));
        auto again = copy_session(db, back, "rich");
        const std::string copied = again.storage().target<JsonlSessionStorage>()->path();
        CHECK(copied.substr(dir.file("b").size()) == path.substr(dir.file("a").size()));
        CHECK(agentcore::testing::read_file(copied) == bytes);
        CHECK(agentcore::testing::error_of([&] { copy_session(folder, db, "rich"); }) ==
              ErrorCode::already_exists);
    }
}

TEST_CASE("set_leaf_id writes the lines a JSONL file holds, in both dialects", "[sqlite][leaf]") {
    for (const Dialect dialect : {Dialect::native, Dialect::pi}) {
        agentcore::testing::ScratchDir dir;
        JsonlStorageOptions jo;
        jo.dialect = dialect;
        jo.durability = Durability::os_buffered;
        jo.environment = Environment::deterministic(1767225600000, 7);
        SqliteStorageOptions so;
        so.dialect = dialect;
        so.durability = Durability::os_buffered;
        so.environment = Environment::deterministic(1767225600000, 7);
        JsonlSessionRepo folder(dir.file("a"), jo);
        SqliteSessionRepo db(dir.file("s.db"), so);
        auto run = [](auto& s) {
            const std::string a = append_message(s, UserMessage{"a", 1, {}});
            append_message(s, UserMessage{"b", 2, {}});
            set_leaf_id(s, a);
            append_message(s, UserMessage{"c", 3, {}});
            set_leaf_id(s, std::nullopt);
        };
        auto file =
            create(folder, CreateOptions{std::string("same"), "/w", Json::object(), std::nullopt});
        auto rows =
            create(db, CreateOptions{std::string("same"), "/w", Json::object(), std::nullopt});
        run(file);
        run(rows);
        CHECK(rows.storage().export_jsonl() ==
              agentcore::testing::read_file(file.storage().path()));
        CHECK(rows.storage().get_leaf_id() == file.storage().get_leaf_id());
    }
}

// Storages chosen at run time: AnyStorage, AnyRepository and open_repository (memory and JSONL
// here; tests/sqlite/ adds sqlite:).

#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/scratch.hpp"

#include <agentcore/any_repo.hpp>
#include <agentcore/session.hpp>
#include <agentcore/testing/conformance.hpp>

#include <memory>
#include <string>
#include <vector>

using namespace agentcore;
using agentcore::testing::error_of;
using agentcore::testing::message_of_error;

TEST_CASE(
    "open_repository picks memory:, jsonl: or a folder path, and every free function works on its "
    "sessions",
    "[any][repo]") {
    agentcore::testing::ScratchDir dir;
    for (const std::string& url : std::vector<std::string>{"memory:", dir.path() + "/plain",
                                                           "jsonl:" + dir.path() + "/explicit"}) {
        INFO(url);
        AnyRepository repo = open_repository(url);
        CHECK(repo.url() == url);
        auto s =
            create(repo, CreateOptions{std::string("any"), "/w", Json::object(), std::nullopt});
        const std::string a = append_message(s, UserMessage{"hi", 1, {}});
        append_label(s, a, std::string("l"));
        append_session_name(s, "n");
        CHECK(build_context(s).messages.size() == 1);
        CHECK(s.storage().get_label(a) == std::optional<std::string>("l"));
        CHECK(list(repo).sessions.size() == 1);
        CHECK(fork(repo, "any",
                   ForkOptions{std::nullopt, ForkPosition::before, std::string("copy"),
                               std::nullopt, std::nullopt})
                  .storage()
                  .entry_count() == 3);
    }
    CHECK(open_repository("memory:").target<InMemorySessionRepo>() != nullptr);
    CHECK(open_repository(dir.path() + "/plain").target<JsonlSessionRepo>() != nullptr);
    AnyRepository memory = open_repository("memory:");
    auto s = create(memory);
    CHECK(s.storage().target<InMemorySessionStorage<>>() != nullptr);
}

TEST_CASE("an unknown scheme or a bad URL is a clear error", "[any][repo]") {
    CHECK(error_of([] { open_repository(""); }) == ErrorCode::invalid_session);
    CHECK(error_of([] { open_repository("memory:extra"); }) == ErrorCode::invalid_session);
    CHECK(error_of([] { open_repository("jsonl:"); }) == ErrorCode::invalid_session);
    CHECK(known_repository_schemes() == std::vector<std::string>{"jsonl", "memory"});
    const std::string m = message_of_error([] { open_repository("postgres://db/x"); });
    CHECK(m.find("unknown scheme 'postgres'") != std::string::npos);
    CHECK(m.find("memory:") != std::string::npos);
    // This runner does not include the SQLite header: the message says what it takes.
    const std::string q = message_of_error([] { open_repository("sqlite:x.db"); });
    CHECK(q.find("agentcore/sqlite/sqlite_repo.hpp") != std::string::npos);
}

TEST_CASE("the type-erased repository passes the conformance kit", "[any][conformance]") {
    agentcore::testing::ConformanceTarget<AnyRepository> memory;
    memory.fresh = [] { return open_repository("memory:"); };
    auto report = agentcore::testing::run_conformance(memory);
    INFO(report.summary());
    CHECK(report.ok());

    std::vector<std::unique_ptr<agentcore::testing::ScratchDir>> dirs;
    agentcore::testing::ConformanceTarget<AnyRepository> jsonl;
    jsonl.fresh = [&] {
        dirs.push_back(std::make_unique<agentcore::testing::ScratchDir>());
        return open_repository(dirs.back()->path());
    };
    jsonl.reopen = [](AnyRepository& r) { return open_repository(r.url()); };
    jsonl.exclusive_writers = true;
    report = agentcore::testing::run_conformance(jsonl);
    INFO(report.summary());
    CHECK(report.ok());
}

namespace {

// A repository of an application's own that has no import_session: it models SessionRepository
// only, and AnyRepository refuses imports into it.
struct PlainRepo {
    using storage_type = InMemorySessionRepo::storage_type;
    using session_type = InMemorySessionRepo::session_type;
    InMemorySessionRepo inner{};
};
PlainRepo::session_type create(PlainRepo& r, CreateOptions o) {
    return create(r.inner, std::move(o));
}
PlainRepo::session_type open(PlainRepo& r, std::string_view id) { return open(r.inner, id); }
PlainRepo::session_type open_read_only(const PlainRepo& r, std::string_view id) {
    return open_read_only(r.inner, id);
}
SessionList list(const PlainRepo& r, const ListOptions& o) { return list(r.inner, o); }
void remove(PlainRepo& r, std::string_view id) { remove(r.inner, id); }
PlainRepo::session_type fork(PlainRepo& r, std::string_view id, const ForkOptions& o) {
    return fork(r.inner, id, o);
}

static_assert(SessionRepository<PlainRepo>);
static_assert(!ImportingRepository<PlainRepo>);

// A session with every kind of line worth copying: messages with usage, a label, a name, an
// entry type the library does not know, and a leaf move.
std::string write_rich_session(AnyRepository& repo, const std::string& id) {
    auto s =
        create(repo, CreateOptions{id, "/home/ann/project", Json{{"team", "a"}}, std::nullopt});
    const std::string a = append_message(s, UserMessage{"héllo \"quoted\"", 1, {}});
    AssistantMessage m;
    m.content.push_back(TextContent{"hi", {}});
    m.provider = "anthropic";
    m.model = "claude";
    m.usage.input = 3;
    m.usage.cost.total = 0.125;
    m.stop_reason = "stop";
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
    return s.storage().target<JsonlSessionStorage>()
               ? s.storage().target<JsonlSessionStorage>()->path()
               : "";
}

}  // namespace

TEST_CASE("copy_session copies a session between repositories with its header, entries and dialect",
          "[any][repo][copy]") {
    for (const Dialect dialect : {Dialect::native, Dialect::pi}) {
        agentcore::testing::ScratchDir dir;
        JsonlStorageOptions jo;
        jo.dialect = dialect;
        jo.durability = Durability::os_buffered;
        AnyRepository source(JsonlSessionRepo(dir.file("a"), jo), dir.file("a"));
        const std::string path = write_rich_session(source, "rich");
        const std::string bytes = agentcore::testing::read_file(path);

        // Through memory (which keeps entries, not lines) and back into a folder: the header and
        // entries are the same; the dialect is the one the copy is given.
        AnyRepository memory = open_repository("memory:");
        std::vector<std::pair<std::size_t, std::size_t>> calls;
        auto in_memory = copy_session(
            source, memory, "rich",
            [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); });
        CHECK(in_memory.storage().entry_count() == 6);
        CHECK(calls == std::vector<std::pair<std::size_t, std::size_t>>{{6, 6}});
        CHECK(in_memory.storage().dialect() == Dialect::native);
        CHECK(encode_header(in_memory.storage().metadata(), dialect) ==
              bytes.substr(0, bytes.find('\n')));

        // Folder to folder keeps the dialect, the file's name and every byte.
        AnyRepository target = open_repository(dir.file("b"));
        auto copy = copy_session(source, target, "rich");
        CHECK(copy.storage().dialect() == dialect);
        const std::string copied = copy.storage().target<JsonlSessionStorage>()->path();
        CHECK(copied.substr(dir.file("b").size()) == path.substr(dir.file("a").size()));
        CHECK(agentcore::testing::read_file(copied) == bytes);

        CHECK(agentcore::testing::error_of([&] { copy_session(source, target, "rich"); }) ==
              ErrorCode::already_exists);
        CHECK(agentcore::testing::read_file(copied) == bytes);
        CHECK(agentcore::testing::error_of([&] { copy_session(source, target, "none"); }) ==
              ErrorCode::not_found);
    }
}

TEST_CASE("an import into a repository without import_session is refused with storage",
          "[any][repo][copy]") {
    AnyRepository plain{PlainRepo{InMemorySessionRepo()}};
    SessionHeader header;
    header.id = "x";
    CHECK(agentcore::testing::error_of([&] { import_session(plain, header, {}); }) ==
          ErrorCode::storage);
    CHECK(list(plain).sessions.empty());
}

TEST_CASE("an imported session's creation time names one file in its cwd folder, whatever it holds",
          "[jsonl][repo][copy]") {
    agentcore::testing::ScratchDir dir;
    JsonlSessionRepo repo(dir.path());
    SessionHeader header;
    header.id = "odd";
    header.timestamp = "../x/y_z\n" + std::string(100, 't');
    header.cwd = "/w";
    {
        auto s = import_session(repo, header, {});
        const std::string name = s.storage().path().substr(s.storage().path().rfind('/') + 1);
        CHECK(name == "---x-y-z-" + std::string(55, 't') + "_odd.jsonl");
    }
    CHECK(repo.find_path("odd").has_value());
    const SessionList listed = list(repo);
    REQUIRE(listed.sessions.size() == 1);
    CHECK(listed.sessions[0].header.timestamp == header.timestamp);
}

namespace {

// The in-memory storage, counting how a context's state is found: through the storage's own
// index (get_state_entries) or entry by entry.
struct StateCountingStorage : InMemorySessionStorage<> {
    using InMemorySessionStorage<>::InMemorySessionStorage;
    mutable int state_calls = 0;
    mutable int entry_reads = 0;
    [[nodiscard]] StateEntries get_state_entries(std::optional<std::string_view> leaf) const {
        ++state_calls;
        return InMemorySessionStorage<>::get_state_entries(leaf);
    }
    [[nodiscard]] EntryHandle get_entry(std::string_view id) const {
        ++entry_reads;
        return InMemorySessionStorage<>::get_entry(id);
    }
};

}  // namespace

TEST_CASE("a type-erased session finds its context's state through the storage's own index",
          "[any][context]") {
    auto storage = std::make_shared<StateCountingStorage>();
    Session<StateCountingStorage> typed(storage);
    append_thinking_level_change(typed, "high");
    append_model_change(typed, "anthropic", "claude");
    for (int i = 0; i < 50; ++i) append_message(typed, user_text("turn " + std::to_string(i)));
    const auto expected = build_context(typed);

    const Session<AnyStorage> erased = erase_session(typed);
    storage->state_calls = 0;
    storage->entry_reads = 0;
    const auto context = build_context(erased);
    CHECK(context.thinking_level == expected.thinking_level);
    CHECK(context.model == expected.model);
    CHECK(context.messages.size() == expected.messages.size());
    CHECK(storage->state_calls == 1);  // forwarded, not walked through 52 entries
    CHECK(storage->entry_reads == 0);
}

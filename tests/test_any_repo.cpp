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

TEST_CASE("open_repository picks memory:, jsonl: or a folder path, and every free function works on its sessions",
          "[any][repo]") {
    agentcore::testing::ScratchDir dir;
    for (const std::string& url :
         std::vector<std::string>{"memory:", dir.path() + "/plain", "jsonl:" + dir.path() + "/explicit"}) {
        INFO(url);
        AnyRepository repo = open_repository(url);
        CHECK(repo.url() == url);
        auto s = create(repo, CreateOptions{std::string("any"), "/w", Json::object(), std::nullopt});
        const std::string a = append_message(s, UserMessage{"hi", 1, {}});
        append_label(s, a, std::string("l"));
        append_session_name(s, "n");
        CHECK(build_context(s).messages.size() == 1);
        CHECK(s.storage().get_label(a) == std::optional<std::string>("l"));
        CHECK(list(repo).sessions.size() == 1);
        CHECK(fork(repo, "any", ForkOptions{std::nullopt, ForkPosition::before, std::string("copy"), std::nullopt,
                                            std::nullopt})
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

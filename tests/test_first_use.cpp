// What a newcomer writes first: option structs, blocks and messages written with designated
// initialisers (the suite builds with -Wextra -Werror, so a member without a default initialiser
// breaks this file's build), and the builders and accessors of messages.hpp and entries.hpp.
#include "support/builders.hpp"
#include "support/catch.hpp"

using namespace agentcore;
using namespace agentcore::testing;

TEST_CASE("option structs take designated initialisers that leave members out", "[first_use]") {
    InMemorySessionRepo repo(Environment::deterministic(1767225600000, 7));
    auto session = create(repo, {.cwd = "/work/project"});
    CHECK(session.storage().metadata().cwd == "/work/project");
    CHECK(session.storage().metadata().metadata == Json::object());
    auto named = create(repo, CreateOptions{.id = "chosen-id", .cwd = "/w"});
    CHECK(named.storage().metadata().id == "chosen-id");
    CHECK(list(repo, {.cwd = "/w"}).size() == 1);

    auto first = append_message(session, UserMessage{.content = "hello"});
    append_message(session, AssistantMessage{.content = {TextContent{.text = "hi"}}, .model = "m"});
    auto summary = move_to(session, first, BranchSummaryInput{.summary = "left a greeting"});
    REQUIRE(summary);
    CHECK(std::get<BranchSummaryEntry>(*get_entry(session, *summary)).summary == "left a greeting");

    auto forked = fork(repo, session.storage().metadata().id, {.entry_id = first, .cwd = "/other"});
    CHECK(forked.storage().metadata().cwd == "/other");

    ContextBuildOptions context_options{.provider_ready = true};
    CHECK(build_context(session, context_options).messages.size() == 2);
    CompactionSettings settings{.keep_recent_tokens = 10};
    CHECK(settings.enabled);
    SummaryResult result{.summary = "short"};
    CHECK_FALSE(result.usage);
    CHECK(CompactOptions{.retain_tail = true}.max_tool_result_chars == 2000);
    CHECK(ForkOptions{.cwd = "/x"}.position == ForkPosition::before);
    CHECK(ImageContent{.data = "AA==", .mime_type = "image/png"}.extra.is_null());
    CHECK(ThinkingContent{.thinking = "hm"}.thinking == "hm");
    CHECK(ToolCallContent{.id = "c", .name = "ls"}.arguments == Json::object());
    CHECK(ToolResultMessage{.tool_call_id = "c", .is_error = true}.is_error);
    CHECK(Usage{.input = 3, .output = 4}.total_tokens == 0);
    CHECK(SessionHeader{.id = "h", .cwd = "/"}.version == 3);
    CHECK(JsonlStorageOptions{.lenient = true}.durability == Durability::durable);
}

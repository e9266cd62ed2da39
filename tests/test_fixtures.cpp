// The fixtures for applications' test suites (agentcore/testing/fixtures.hpp): deterministic
// sessions, the description language and its builder, printers, renderings and golden files.
#include "support/catch.hpp"

#include <agentcore/testing/fixtures.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore::fixtures;
using Strings = std::vector<std::string>;

namespace {

constexpr const char* branched = R"(
    # a question, a tool call and its answer, then a branch back to the question
    @q  user: Which files are there?
        assistant: Let me look.
          -> ls {"path": "."}
        tool ls: main.cpp
    @a  assistant: One file: main.cpp.
        label @a: answer
    from @q: The user asked about files.
        user: And the tests?
)";

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string description_error(std::string_view description) {
    try {
        session_from(description);
    } catch (const SessionError& e) {
        return e.what();
    }
    FAIL("the description was accepted");
    return {};
}

ErrorCode description_error_code(std::string_view description) {
    try {
        session_from(description);
    } catch (const SessionError& e) {
        return e.code();
    }
    FAIL("the description was accepted");
    return ErrorCode::storage;
}

// Sets an environment variable for the life of the object (each test case runs in a process of
// its own under ctest).
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_)
            ::setenv(name_, old_->c_str(), 1);
        else
            ::unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("a deterministic session steps its clock by a fixed amount and seeds its ids",
          "[fixtures]") {
    auto a = deterministic_session();
    auto b = deterministic_session();
    auto c = deterministic_session({.seed = 2});
    for (auto* s : {&a, &b, &c}) {
        append_message(*s, user_text("one"));
        append_message(*s, user_text("two"));
    }
    CHECK(ids_of(get_branch(a)) == ids_of(get_branch(b)));
    CHECK(ids_of(get_branch(a)) != ids_of(get_branch(c)));
    const auto path = get_branch(a);
    CHECK(base_of(*path[0]).timestamp == "2026-01-01T00:00:00.000Z");
    CHECK(base_of(*path[1]).timestamp == "2026-01-01T00:00:01.000Z");
    CHECK(a.storage().metadata().id == "test-session");
    CHECK(a.storage().metadata().timestamp == "2026-01-01T00:00:00.000Z");

    auto slow = deterministic_session({.start_ms = 0, .step_ms = 60000});
    append_message(slow, user_text("x"));
    append_message(slow, user_text("y"));
    CHECK(base_of(*get_branch(slow)[1]).timestamp == "1970-01-01T00:01:00.000Z");
}

TEST_CASE("two runs of a deterministic JSONL session write byte-identical files", "[fixtures]") {
    std::string first, second, other_seed;
    std::string folder;
    {
        auto fx = temp_jsonl_session();
        folder = fx.folder.path();
        CHECK(fx.path == folder + "/test-session.jsonl");
        build_session(fx.session, branched);
        first = file_bytes(fx.path);
    }
    CHECK_FALSE(std::filesystem::exists(folder));  // the folder goes with the fixture
    {
        auto fx = temp_jsonl_session();
        CHECK(fx.folder.path() != folder);
        build_session(fx.session, branched);
        second = file_bytes(fx.path);
    }
    {
        auto fx = temp_jsonl_session({.seed = 99});
        build_session(fx.session, branched);
        other_seed = file_bytes(fx.path);
    }
    CHECK(first.size() > 1000);
    CHECK(first == second);
    CHECK(first != other_seed);
}

TEST_CASE("the builder chain and the text form write the same session", "[fixtures]") {
    auto text = temp_jsonl_session();
    build_session(text.session, branched);

    auto chain = temp_jsonl_session();
    SessionBuilder b(chain.session);
    b.user("Which files are there?")
        .as("q")
        .assistant("Let me look.", {{"ls", {{"path", "."}}, ""}})
        .tool("ls", "main.cpp")
        .assistant("One file: main.cpp.")
        .as("a")
        .label("a", "answer")
        .from("q", "The user asked about files.")
        .user("And the tests?");
    CHECK(file_bytes(chain.path) == file_bytes(text.path));
}

TEST_CASE("a description builds turns, paired tool calls, labels and a branch", "[fixtures]") {
    auto fx = session_from(branched);
    const auto& storage = fx.session.storage();
    const auto q = storage.get_entry(fx.id("q"));
    const auto a = storage.get_entry(fx.id("a"));
    REQUIRE(q);
    REQUIRE(a);
    CHECK(describe_entry(*q) == fx.id("q") + " user: Which files are there?");
    CHECK(get_label(fx.session, fx.id("a")) == "answer");

    // The call and its result share the generated id; the reply that calls tools says tool_use.
    const auto branch_to_a = get_branch(fx.session, fx.id("a"));
    REQUIRE(branch_to_a.size() == 4);
    const auto& call_reply = std::get<AssistantMessage>(*message_of(*branch_to_a[1]));
    CHECK(call_reply.stop_reason == "tool_use");
    CHECK(call_reply.provider == "test");
    CHECK(call_reply.model == "scripted");
    const auto& call = std::get<ToolCallContent>(call_reply.content.at(1));
    CHECK(call.id == "call_1");
    CHECK(call.arguments == Json{{"path", "."}});
    CHECK(std::get<ToolResultMessage>(*message_of(*branch_to_a[2])).tool_call_id == "call_1");
    CHECK(std::get<AssistantMessage>(*message_of(*branch_to_a[3])).stop_reason == "stop");

    // The leaf is on the branch from @q: the question, its summary, the new question.
    const auto context = build_context(fx.session);
    CHECK(roles_of(context) == Strings{"user", "branch_summary", "user"});
    CHECK(passes_through(get_branch(fx.session), fx.id("q")));
    CHECK_FALSE(passes_through(get_branch(fx.session), fx.id("a")));
    CHECK(holds_tool_pair(build_context_at(fx.session, fx.id("a")), "ls"));
    CHECK_FALSE(holds_tool_pair(context, "ls"));
}

TEST_CASE("a tool result answers the oldest unanswered call of its tool on the branch",
          "[fixtures]") {
    auto fx = session_from(R"(
        user: Read both files.
        assistant:
          -> read {"path": "a.txt"}
          -> ls
          -> read#mine {"path": "b.txt"}
        tool read: A
        tool ls: a.txt b.txt
        tool read (error): no such file
        tool grep#call_77: an orphan result
    )");
    const auto path = get_branch(fx.session);
    REQUIRE(path.size() == 6);
    auto result = [&](std::size_t i) { return std::get<ToolResultMessage>(*message_of(*path[i])); };
    CHECK(result(2).tool_call_id == "call_1");
    CHECK(result(3).tool_call_id == "call_2");
    CHECK(result(3).tool_name == "ls");
    CHECK(result(4).tool_call_id == "mine");
    CHECK(result(4).is_error);
    CHECK(result(5).tool_call_id == "call_77");

    const auto context = build_context(fx.session);
    CHECK(tool_pair_names(context) == Strings{"read#call_1", "ls#call_2", "read#mine"});
    CHECK(roles_of(context) ==
          Strings{"user", "assistant", "tool_result", "tool_result", "tool_result"});
    REQUIRE(context.dropped.size() == 1);
    CHECK(context.dropped[0].tool_call_id == "call_77");
}

TEST_CASE("a description states compactions, settings and the other entries", "[fixtures]") {
    auto fx = session_from(R"(
        model: anthropic/claude-x
        thinking: high
        tools: read, ls
        name: Files
        @u1 user: one
            assistant: reply one
        @u2 user: two
            assistant: reply two
        @c  compaction keep @u2 tokens 1200: The user said one.
            custom_message note: remember\nthis
            custom progress: {"step": 3}
            custom empty
        @t  user: three
            leaf @u1
    )");
    const auto& storage = fx.session.storage();
    CHECK(get_session_name(fx.session) == "Files");
    const auto& compaction = std::get<CompactionEntry>(*storage.get_entry(fx.id("c")));
    CHECK(compaction.first_kept_entry_id == fx.id("u2"));
    CHECK(compaction.tokens_before == 1200);
    CHECK(get_leaf_id(fx.session) == fx.id("u1"));

    const auto compacted = build_context_at(fx.session, fx.id("t"));
    CHECK(roles_of(compacted) ==
          Strings{"compaction_summary", "user", "assistant", "custom", "user"});
    CHECK(message_text(*compacted.messages[3]) == "note: remember\nthis");

    const auto before = build_context_at(fx.session, fx.id("u2"));
    CHECK(before.model == ModelRef{"anthropic", "claude-x"});
    CHECK(before.thinking_level == "high");
    CHECK(before.active_tool_names == Strings{"read", "ls"});
    // Assistant replies after a model change carry that model.
    const auto& reply =
        std::get<AssistantMessage>(*message_of(*storage.find_entries("message").at(1)));
    CHECK(reply.provider == "anthropic");
    CHECK(reply.model == "claude-x");
    const auto customs = storage.find_entries("custom");
    REQUIRE(customs.size() == 2);
    CHECK(std::get<CustomEntry>(*customs[0]).data == Json{{"step", 3}});
    CHECK(std::get<CustomEntry>(*customs[1]).data.is_null());
}

TEST_CASE("from root starts a new root, with or without a summary", "[fixtures]") {
    auto fx = session_from(R"(
        user: first
        from root
        @r user: again
        @s from root: Went back to the start.
    )");
    CHECK_FALSE(parent_id_of(*fx.session.storage().get_entry(fx.id("r"))));
    const auto& summary = std::get<BranchSummaryEntry>(*fx.session.storage().get_entry(fx.id("s")));
    CHECK(summary.from_id == "root");
    CHECK(roles_of(build_context(fx.session)) == Strings{"branch_summary"});
}

TEST_CASE("errors in a description name the line and the column", "[fixtures]") {
    CHECK(description_error("user: hi\n  bogus: x") ==
          "[agentcore.invalid_entry] session description line 2, column 3: unknown item 'bogus' "
          "(expected "
          "user, assistant, tool, compaction, from, label, model, thinking, tools, name, custom, "
          "custom_message or leaf)");
    CHECK(
        description_error("user: hi\nfrom @nowhere") ==
        "[agentcore.not_found] session description line 2, column 6: no entry is named '@nowhere' "
        "(named: none)");
    CHECK(
        description_error("@a user: hi\n@a user: again") ==
        "[agentcore.already_exists] session description line 2, column 1: the name '@a' is already "
        "given to entry '" +
            session_from("@a user: hi").id("a") + "'");
    CHECK(description_error("user: hi\nassistant: x\n  -> ls {\"path\": }") ==
          "[agentcore.invalid_entry] session description line 3, column 18: the tool call's "
          "arguments is "
          "not valid JSON");
    CHECK(description_error("user: hi\n-> ls") ==
          "[agentcore.invalid_entry] session description line 2, column 1: a tool call ('->') must "
          "follow an assistant line or another tool call");
    CHECK(description_error("user: ls?\nassistant:\n -> ls\ntool read: x") ==
          "[agentcore.invalid_entry] session description line 4, column 6: no unanswered call of "
          "tool "
          "'read' on the branch (unanswered: ls#call_1)");
    CHECK(
        description_error("user hi") ==
        "[agentcore.invalid_entry] session description line 1, column 6: expected ':' after user");
    CHECK(description_error("\n\n   @x from root") ==
          "[agentcore.invalid_entry] session description line 3, column 4: '@x' names nothing: "
          "'from' "
          "without a summary appends no entry to name");
    CHECK(description_error("model: claude") ==
          "[agentcore.invalid_entry] session description line 1, column 8: expected PROVIDER/MODEL "
          "after "
          "'model:'");
    CHECK(description_error("user: a\ncompaction keep u: s") ==
          "[agentcore.invalid_entry] session description line 2, column 17: expected @name of the "
          "first "
          "kept entry");
    CHECK(description_error("user: a\ncompaction tokens many: s") ==
          "[agentcore.invalid_entry] session description line 2, column 19: expected a number of "
          "tokens "
          "after 'tokens'");
    CHECK(description_error("user: a\nassistant: b\n -> ls [1]") ==
          "[agentcore.invalid_entry] session description line 3, column 8: the tool call's "
          "arguments must "
          "be a JSON object");
    CHECK(description_error("user: a\nleaf nowhere") ==
          "[agentcore.invalid_entry] session description line 2, column 6: expected @name or "
          "'none' after "
          "'leaf'");
    CHECK(
        description_error("@ user: a") ==
        "[agentcore.invalid_entry] session description line 1, column 2: expected a name after '@' "
        "(letters, digits, '_', '.', '-')");
    CHECK(description_error("user: a\ntool ls (oops): b") ==
          "[agentcore.invalid_entry] session description line 2, column 9: expected '(error)' or "
          "':'");
    CHECK(description_error("user: a\ncustom t: {bad}") ==
          "[agentcore.invalid_entry] session description line 2, column 12: the custom entry's "
          "data is not "
          "valid JSON");
    CHECK(description_error("user: a\nlabel @zz: x") ==
          "[agentcore.not_found] session description line 2, column 7: no entry is named '@zz' "
          "(named: "
          "none)");
    CHECK(description_error_code("user: a\ntools: a,,b") == ErrorCode::invalid_entry);
    CHECK(description_error_code("user: a\nassistant: b\n -> ls#x\n -> ls#x") ==
          ErrorCode::invalid_entry);
    CHECK(description_error_code("leaf @nothing") == ErrorCode::not_found);
}

TEST_CASE("the builder reports what it cannot name or pair", "[fixtures]") {
    auto session = deterministic_session();
    SessionBuilder b(session);
    auto code = [](auto&& f) {
        try {
            f();
        } catch (const SessionError& e) {
            return e.code();
        }
        return ErrorCode::storage;  // not thrown: no test below expects `storage`
    };
    CHECK(code([&] { b.as("x"); }) == ErrorCode::invalid_entry);
    b.user("hi").as("u");
    CHECK(code([&] { b.as("u"); }) == ErrorCode::already_exists);
    CHECK(code([&] { (void)b.id("v"); }) == ErrorCode::not_found);
    CHECK(code([&] { b.tool("ls", "x"); }) == ErrorCode::invalid_entry);
    CHECK(code([&] { b.assistant("", {{"ls", Json::array(), ""}}); }) == ErrorCode::invalid_entry);
    b.from("u");
    CHECK_FALSE(b.last());
    CHECK(code([&] { b.as("moved"); }) == ErrorCode::invalid_entry);
    b.leaf_none().as("before-first");
    CHECK_FALSE(get_leaf_id(session));
    CHECK(b.anchors().all().size() == 2);
}

TEST_CASE("printers show roles, ids and shortened text as the tree does", "[fixtures]") {
    auto fx = session_from(R"(
        user: Which files are there?
        assistant: Let me look.
          -> ls {"path": "."}
        tool ls: main.cpp
        tool ls#call_9 (error): stray
    )");
    const auto path = get_branch(fx.session);
    const auto context = build_context(fx.session);
    CHECK(describe_message(*context.messages[1]) ==
          R"(assistant: Let me look. → ls#call_1 {"path":"."})");
    CHECK(describe_message(*context.messages[2]) == "tool_result: ls#call_1: main.cpp");
    CHECK(describe_message(UserMessage{std::string(100, 'x'), 0, {}}, 10) == "user: xxxxxxxxxx…");
    CHECK(describe_message(UserMessage{"a\n\n b\x1b[31m", 0, {}}) == "user: a b\\x1b[31m");
    CHECK(describe_entry(*path[0]) == id_of(*path[0]) + " user: Which files are there?");
    CHECK(describe_context(context) ==
          "3 messages (thinking off, model test/scripted):\n"
          "  [1] user: Which files are there?\n"
          "  [2] assistant: Let me look. → ls#call_1 {\"path\":\".\"}\n"
          "  [3] tool_result: ls#call_1: main.cpp\n"
          "  dropped orphan_tool_result call_9");
    CHECK(describe_context(SessionContext{}) == "0 messages (thinking off, model none)");
}

TEST_CASE("render_context is the whole text of a context, without timestamps", "[fixtures]") {
    auto fx = session_from(R"(
        tools: ls
        user: Which files\nare there?
        assistant: Let me look.
          -> ls {"path": "."}
        tool ls: main.cpp
        assistant: One file.
    )");
    CHECK(render_context(build_context(fx.session)) ==
          "thinking level: off\n"
          "model: test/scripted\n"
          "active tools: ls\n"
          "messages: 4\n"
          "[1] user\n"
          "    Which files\n"
          "    are there?\n"
          "[2] assistant\n"
          "    Let me look.\n"
          "    → ls#call_1 {\"path\":\".\"}\n"
          "[3] tool_result\n"
          "    ls#call_1: main.cpp\n"
          "[4] assistant\n"
          "    One file.\n"
          "dropped: none\n");
    // The same conversation on another clock and seed renders the same.
    auto other = session_from(
        "tools: ls\nuser: Which files\\nare there?\nassistant: Let me look.\n"
        "-> ls {\"path\": \".\"}\ntool ls: main.cpp\nassistant: One file.",
        {.seed = 5, .start_ms = 0});
    CHECK(render_context(build_context(other.session)) ==
          render_context(build_context(fx.session)));
}

TEST_CASE("render_tree draws the tree as agentcore tree does", "[fixtures]") {
    auto fx = session_from(branched);
    const std::string q = fx.id("q"), a = fx.id("a");
    const auto all = fx.session.storage().get_entries({});
    REQUIRE(all.size() == 8);
    auto id = [&](std::size_t i) { return id_of(*all[i]); };
    CHECK(render_tree(fx.session) ==
          "● " + q +
              " user: Which files are there?\n"
              "  " +
              id(1) +
              " ├─ assistant: Let me look. → ls#call_1 {\"path\":\".\"}\n"
              "  " +
              id(2) +
              " │  tool_result: ls#call_1: main.cpp\n"
              "  " +
              a +
              " │  assistant: One file: main.cpp.  [answer]\n"
              "● " +
              id(6) +
              " └─ branch_summary: The user asked about files.\n"
              "● " +
              id(7) + "    user: And the tests?  ← leaf\n");
    const std::string with_all = render_tree(fx.session, {.all = true});
    CHECK(with_all.find("label: " + a + " = answer") != std::string::npos);
    CHECK(with_all.find("leaf: → " + q) != std::string::npos);
    CHECK(
        render_tree(fx.session, {.timestamps = true}).find(q + " 2026-01-01T00:00:01.000Z user:") !=
        std::string::npos);
    CHECK(render_tree(deterministic_session()) == "(no entries)\n");
}

TEST_CASE("line_diff shows what was expected and what came", "[fixtures]") {
    CHECK(line_diff("a\nb\n", "a\nb\n").empty());
    CHECK(line_diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n") ==
          "@@ expected line 2, actual line 2 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
    CHECK(line_diff("a\nb\n", "a\nb\nc\n") == "@@ expected line 1, actual line 1 @@\n a\n b\n+c\n");
    CHECK(line_diff("a\n", "a") ==
          "the actual text lacks the final newline of the expected text\n");
    CHECK(line_diff("a", "a\n") ==
          "the actual text ends with a newline the expected text does not have\n");
}

TEST_CASE("check_golden compares, reports a diff, and writes the file when asked", "[fixtures]") {
    TempFolder folder;
    ScopedEnv dir("AGENTCORE_GOLDEN_DIR", folder.path().c_str());
    ScopedEnv update("AGENTCORE_UPDATE_GOLDEN", nullptr);
    const std::string file = folder.file("sub/context.txt");
    CHECK(golden_path("sub/context.txt") == file);
    CHECK(golden_path("/abs/x.txt") == "/abs/x.txt");

    auto missing = check_golden("one\ntwo\n", "sub/context.txt");
    CHECK_FALSE(missing);
    CHECK(missing.message ==
          "the golden file '" + file +
              "' does not exist (run with AGENTCORE_UPDATE_GOLDEN=1 to accept the actual "
              "text)");
    CHECK_FALSE(std::filesystem::exists(file));
    {
        ScopedEnv zero("AGENTCORE_UPDATE_GOLDEN", "0");
        CHECK_FALSE(check_golden("one\ntwo\n", "sub/context.txt"));
    }
    {
        ScopedEnv yes("AGENTCORE_UPDATE_GOLDEN", "1");
        auto written = check_golden("one\ntwo\n", "sub/context.txt");
        CHECK(written.matched);
        CHECK(written.updated);
        CHECK(file_bytes(file) == "one\ntwo\n");
        auto same = check_golden("one\ntwo\n", "sub/context.txt");
        CHECK(same.matched);
        CHECK_FALSE(same.updated);
    }
    CHECK(check_golden("one\ntwo\n", "sub/context.txt"));
    auto changed = check_golden("one\n2\n", "sub/context.txt");
    CHECK_FALSE(changed);
    CHECK_FALSE(changed.updated);
    CHECK(changed.message ==
          "the text differs from the golden file '" + file +
              "' (- expected, + actual) (run with AGENTCORE_UPDATE_GOLDEN=1 to accept the "
              "actual text):\n@@ expected line 1, actual line 1 @@\n one\n-two\n+2\n");
    CHECK(file_bytes(file) == "one\ntwo\n");  // a mismatch never writes
}

TEST_CASE("temporary folders are distinct and removed", "[fixtures]") {
    std::string kept;
    {
        TempFolder a;
        TempFolder b("other");
        CHECK(a.path() != b.path());
        CHECK(std::filesystem::is_directory(a.path()));
        CHECK(b.path().find("/other-") != std::string::npos);
        std::ofstream(a.file("x.txt")) << "x";
        TempFolder moved(std::move(a));
        kept = moved.path();
        CHECK(a.path().empty());
        CHECK(std::filesystem::exists(moved.file("x.txt")));
    }
    CHECK_FALSE(std::filesystem::exists(kept));
}

// The Catch2 adapter of agentcore's test fixtures (agentcore/testing/catch2.hpp), as an
// application's suite uses it: what a failed assertion prints for the library's types, and the
// matchers.
#include <agentcore/testing/catch2.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore::fixtures;

namespace {

constexpr const char* conversation = R"(
    @q user: Which files are there?
       assistant: Let me look.
         -> ls {"path": "."}
       tool ls: main.cpp
       assistant: One file.
)";

}  // namespace

TEST_CASE("Catch2 prints messages, entries and contexts as the tree does", "[fixtures][catch2]") {
    auto fx = session_from(conversation);
    const auto context = build_context(fx.session);
    const auto path = get_branch(fx.session);
    CHECK(Catch::Detail::stringify(*context.messages[1]) ==
          R"(assistant: Let me look. → ls#call_1 {"path":"."})");
    CHECK(Catch::Detail::stringify(context.messages[2]) == "tool_result: ls#call_1: main.cpp");
    CHECK(Catch::Detail::stringify(MessageHandle()) == "(null message)");
    CHECK(Catch::Detail::stringify(*path[0]) == fx.id("q") + " user: Which files are there?");
    CHECK(Catch::Detail::stringify(path[0]) == fx.id("q") + " user: Which files are there?");
    CHECK(Catch::Detail::stringify(EntryHandle()) == "(null entry)");
    CHECK(Catch::Detail::stringify(context) == describe_context(context));
    // Lists go through the element printers.
    const std::string listed = Catch::Detail::stringify(path);
    CHECK(listed.find(fx.id("q") + " user: Which files are there?") != std::string::npos);
    CHECK(listed.find("assistant: One file.") != std::string::npos);
}

TEST_CASE("RolesAre matches the roles in order and says what they were", "[fixtures][catch2]") {
    const auto context = build_context(session_from(conversation).session);
    CHECK_THAT(context, RolesAre({"user", "assistant", "tool_result", "assistant"}));
    auto wrong = RolesAre({"user", "assistant"});
    CHECK_FALSE(wrong.match(context));
    CHECK(wrong.describe() ==
          "has the roles [user, assistant] (its roles: [user, assistant, tool_result, assistant])");
    CHECK_THAT(context, !RolesAre({"user"}));
}

TEST_CASE("HoldsToolPair needs both the call and its result", "[fixtures][catch2]") {
    auto fx = session_from(R"(
        user: Look.
        assistant:
          -> ls
          -> read {"path": "a"}
        tool ls: a
    )");
    const auto context = build_context(fx.session);
    CHECK_THAT(context, HoldsToolPair("ls"));
    auto read = HoldsToolPair("read");
    CHECK_FALSE(read.match(context));
    CHECK(read.describe() == "holds a call of tool 'read' and its result (its pairs: [ls#call_1])");
}

TEST_CASE("PassesThrough matches a path holding the entry", "[fixtures][catch2]") {
    auto fx = session_from("@a user: one\n@b user: two\nfrom @a\nuser: three");
    CHECK_THAT(get_branch(fx.session), PassesThrough(fx.id("a")));
    CHECK_THAT(get_branch(fx.session), !PassesThrough(fx.id("b")));
    CHECK(PassesThrough("x").describe() == "passes through entry x");
}

TEST_CASE("MatchesGolden matches the file and shows the diff when it does not",
          "[fixtures][catch2]") {
    ::unsetenv("AGENTCORE_UPDATE_GOLDEN");  // this test's mismatch must not be accepted
    TempFolder folder;
    const std::string file = folder.file("golden.txt");
    {
        std::ofstream out(file, std::ios::binary);
        out << "a\nb\n";
    }
    CHECK_THAT(std::string("a\nb\n"), MatchesGolden(file));
    auto other = MatchesGolden(file);
    CHECK_FALSE(other.match(std::string("a\nc\n")));
    CHECK(other.describe() ==
          "matches the golden file: the text differs from the golden file '" + file +
              "' (- expected, + actual) (run with AGENTCORE_UPDATE_GOLDEN=1 to accept the actual "
              "text):\n@@ expected line 1, actual line 1 @@\n a\n-b\n+c\n");
}

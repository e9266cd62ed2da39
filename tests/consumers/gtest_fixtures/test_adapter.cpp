// The GoogleTest adapter of agentcore's test fixtures (agentcore/testing/gtest.hpp), as an
// application's suite uses it: what a failed assertion prints for the library's types, and the
// matchers.
#include <agentcore/testing/gtest.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore::fixtures;
using ::testing::Not;

namespace {

constexpr const char* conversation = R"(
    @q user: Which files are there?
       assistant: Let me look.
         -> ls {"path": "."}
       tool ls: main.cpp
       assistant: One file.
)";

// What a matcher says about a value it does not match.
template <class T, class M>
std::string explain(const M& matcher, const T& value) {
    ::testing::StringMatchResultListener listener;
    EXPECT_FALSE(matcher.MatchAndExplain(value, &listener));
    return ::testing::DescribeMatcher<T>(matcher) + "; " + listener.str();
}

}  // namespace

TEST(Printers, ShowMessagesEntriesAndContextsAsTheTreeDoes) {
    auto fx = session_from(conversation);
    const SessionContext context = build_context(fx.session);
    const auto path = get_branch(fx.session);
    EXPECT_EQ(::testing::PrintToString(*context.messages[1]),
              R"(assistant: Let me look. → ls#call_1 {"path":"."})");
    EXPECT_EQ(::testing::PrintToString(context.messages[2]), "tool_result: ls#call_1: main.cpp");
    EXPECT_EQ(::testing::PrintToString(MessageHandle()), "(null message)");
    EXPECT_EQ(::testing::PrintToString(*path[0]), fx.id("q") + " user: Which files are there?");
    EXPECT_EQ(::testing::PrintToString(path[0]), fx.id("q") + " user: Which files are there?");
    EXPECT_EQ(::testing::PrintToString(EntryHandle()), "(null entry)");
    EXPECT_EQ(::testing::PrintToString(context), describe_context(context));
    const std::string listed = ::testing::PrintToString(path);
    EXPECT_NE(listed.find(fx.id("q") + " user: Which files are there?"), std::string::npos)
        << listed;
    EXPECT_NE(listed.find("assistant: One file."), std::string::npos) << listed;
}

TEST(Matchers, RolesAreMatchesTheRolesInOrder) {
    const SessionContext context = build_context(session_from(conversation).session);
    EXPECT_THAT(context, RolesAre({"user", "assistant", "tool_result", "assistant"}));
    EXPECT_THAT(context, Not(RolesAre({"user"})));
    EXPECT_EQ(explain<const SessionContext&>(RolesAre({"user", "assistant"}), context),
              "has the roles [user, assistant]; whose roles are [user, assistant, tool_result, "
              "assistant]");
}

TEST(Matchers, HoldsToolPairNeedsTheCallAndItsResult) {
    auto fx =
        session_from("user: Look.\nassistant:\n -> ls\n -> read {\"path\": \"a\"}\ntool ls: a");
    const SessionContext context = build_context(fx.session);
    EXPECT_THAT(context, HoldsToolPair("ls"));
    EXPECT_EQ(explain<const SessionContext&>(HoldsToolPair("read"), context),
              "holds a call of tool 'read' and its result; whose tool pairs are [ls#call_1]");
}

TEST(Matchers, PassesThroughMatchesAPathHoldingTheEntry) {
    auto fx = session_from("@a user: one\n@b user: two\nfrom @a\nuser: three");
    EXPECT_THAT(get_branch(fx.session), PassesThrough(fx.id("a")));
    EXPECT_THAT(get_branch(fx.session), Not(PassesThrough(fx.id("b"))));
}

TEST(Matchers, MatchesGoldenShowsTheDiff) {
    ::unsetenv("AGENTCORE_UPDATE_GOLDEN");  // this test's mismatch must not be accepted
    TempFolder folder;
    const std::string file = folder.file("golden.txt");
    std::ofstream(file, std::ios::binary) << "a\nb\n";
    EXPECT_THAT(std::string("a\nb\n"), MatchesGolden(file));
    EXPECT_EQ(
        explain<const std::string&>(MatchesGolden(file), std::string("a\nc\n")),
        "matches the golden file '" + file + "'; the text differs from the golden file '" + file +
            "' (- expected, + actual) (run with AGENTCORE_UPDATE_GOLDEN=1 to accept the actual "
            "text):\n@@ expected line 1, actual line 1 @@\n a\n-b\n+c\n");
}

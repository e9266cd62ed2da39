// Assertions that fail on purpose (disabled in a normal run): the gtest_failure_output test runs
// them and checks what GoogleTest prints for the library's types and matchers.
#include <agentcore/testing/gtest.hpp>

#include <fstream>
#include <string>

using namespace agentcore;
using namespace agentcore::fixtures;

TEST(FailureDemo, DISABLED_ShowsTheContextThePathAndTheGoldenDiff) {
    auto fx = session_from(R"(
        @q user: What is 2 + 2?
        @a    assistant: 4
        from @q: Tried plain arithmetic.
              user: Explain it to a child.
    )");
    const SessionContext context = build_context(fx.session);
    EXPECT_THAT(context, RolesAre({"user", "assistant"}));
    EXPECT_THAT(get_branch(fx.session), PassesThrough(fx.id("a")));
    EXPECT_EQ(get_entry(fx.session, fx.id("a")), get_branch(fx.session).back());

    TempFolder folder;
    std::ofstream(folder.file("context.txt"))
        << render_context(build_context_at(fx.session, fx.id("a")));
    EXPECT_THAT(render_context(context), MatchesGolden(folder.file("context.txt")));
}

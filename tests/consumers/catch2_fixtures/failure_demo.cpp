// Assertions that fail on purpose (hidden from a normal run: tag [.]): the catch2_failure_output
// test runs them and checks what Catch2 prints for the library's types and matchers.
#include <agentcore/testing/catch2.hpp>

#include <fstream>
#include <string>

using namespace agentcore;
using namespace agentcore::fixtures;

TEST_CASE("a failing check shows the context, the path and the golden diff", "[.][failure-demo]") {
    auto fx = session_from(R"(
        @q user: What is 2 + 2?
        @a    assistant: 4
        from @q: Tried plain arithmetic.
              user: Explain it to a child.
    )");
    const SessionContext context = build_context(fx.session);
    CHECK_THAT(context, RolesAre({"user", "assistant"}));
    CHECK_THAT(get_branch(fx.session), PassesThrough(fx.id("a")));
    CHECK(get_entry(fx.session, fx.id("a")) == get_branch(fx.session).back());

    TempFolder folder;
    std::ofstream(folder.file("context.txt"))
        << render_context(build_context_at(fx.session, fx.id("a")));
    CHECK_THAT(render_context(context), MatchesGolden(folder.file("context.txt")));
}

// The README's first example: a conversation, a branch, and the context an LLM would get.
#include <agentcore/session.hpp>

#include <iostream>

int main() {
    using namespace agentcore;
    Session session{InMemorySessionStorage<>()};
    auto question = append_message(session, user_text("What is 2 + 2?"));
    AssistantMessage answer;
    answer.content = {TextContent{"4", {}}};
    answer.provider = "scripted";
    answer.model = "calculator";
    append_message(session, answer);
    move_to(session, question, BranchSummaryInput{"Tried plain arithmetic.", {}, {}, false});
    append_message(session, user_text("Explain it to a child."));
    for (const auto& message : build_context(session).messages)
        std::cout << role_of(*message) << "\n";  // user, branch_summary, user
}

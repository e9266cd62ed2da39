// 03 — Automatic compaction in an agent loop.
//
// A scripted "model" (no network) answers each user request by reading a file with a tool and
// then replying. After every turn the loop estimates the context, asks should_compact, and when
// the context no longer leaves the reserve free, prepares a compaction and lets a scripted
// summariser write the summary. The printout shows the context size before and after.
#include <agentcore/session.hpp>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

using namespace agentcore;

namespace {

constexpr std::int64_t context_window = 12000;  // a small model, so that compaction comes soon

std::int64_t sum_of_estimates(const std::vector<MessageHandle>& messages) {
    std::int64_t n = 0;
    for (const auto& m : messages) n += estimate_tokens(*m);
    return n;
}

// The "model": asks to read a file on the first call of a turn, replies once it has the result.
// Its usage reports the tokens it was sent, as a provider would.
AssistantMessage scripted_model(const SessionContext& context, int turn, std::int64_t now_ms) {
    AssistantMessage reply;
    reply.timestamp = now_ms;
    reply.api = "scripted";
    reply.provider = "example";
    reply.model = "tiny-12k";
    const bool has_result = std::holds_alternative<ToolResultMessage>(*context.messages.back());
    if (!has_result) {
        reply.content.push_back(
            ToolCallContent{"call-" + std::to_string(turn),
                            "read",
                            Json{{"path", "src/module" + std::to_string(turn) + ".cpp"}},
                            {}});
        reply.stop_reason = "tool_use";
    } else {
        reply.content.push_back(TextContent{
            "Module " + std::to_string(turn) + " looks fine; " + std::string(600, '.'), {}});
    }
    reply.usage.input = sum_of_estimates(context.messages);
    reply.usage.output = estimate_tokens(reply);
    reply.usage.total_tokens = reply.usage.input + reply.usage.output;
    return reply;
}

// The "tool": a file of about 1,000 tokens.
ToolResultMessage run_tool(const AssistantMessage& call_message, std::int64_t now_ms) {
    const auto& call = std::get<ToolCallContent>(call_message.content.front());
    ToolResultMessage result;
    result.timestamp = now_ms;
    result.tool_call_id = call.id;
    result.tool_name = call.name;
    result.content.push_back(TextContent{
        "// " + call.arguments["path"].get<std::string>() + "\n" + std::string(4000, 'x'), {}});
    return result;
}

// The "summariser": a real one would send request.conversation_text to a model.
SummaryResult scripted_summary(const SummaryRequest& request) {
    std::string summary = "Reviewed " + std::to_string(request.messages.size()) + " messages";
    if (request.previous_summary) summary += " after: " + *request.previous_summary;
    summary += format_file_lists(request.files).empty() ? "" : " (files tracked)";
    return SummaryResult{summary, std::nullopt};
}

}  // namespace

int main() {
    SessionHeader header;
    header.id = "auto-compaction-demo";
    header.cwd = "/demo";
    Session<InMemorySessionStorage<>> session(
        InMemorySessionStorage<>(header, Environment::deterministic(1796197403123, 3)));
    const CompactionSettings settings{true, 2000, 3000};  // reserve 2,000; keep about 3,000

    const auto now = [&] { return session.storage().environment().now_ms(); };
    int compactions = 0;
    for (int turn = 1; turn <= 18; ++turn) {
        append_message(session,
                       user_text("Please review module " + std::to_string(turn) + ".", now()));
        // The agent loop: call the model until it stops asking for tools.
        for (;;) {
            AssistantMessage reply = scripted_model(build_context(session), turn, now());
            append_message(session, reply);
            if (reply.stop_reason != "tool_use") break;
            append_message(session, run_tool(reply, now()));
        }

        const std::int64_t before = estimate_context_tokens(build_context(session).messages).tokens;
        std::cout << "turn " << turn << ": context ~" << before << " tokens";
        if (should_compact(before, context_window, settings)) {
            if (auto preparation = prepare_compaction(session, settings)) {
                compact(session, *preparation, scripted_summary);
                ++compactions;
                const std::int64_t after =
                    estimate_context_tokens(build_context(session).messages).tokens;
                std::cout << " -> compacted " << preparation->messages_to_summarize.size()
                          << " messages, now ~" << after << " tokens";
                if (after >= before) return 1;
            }
        }
        std::cout << '\n';
    }

    const auto context = build_context(session);
    const std::int64_t final_tokens = estimate_context_tokens(context.messages).tokens;
    std::cout << compactions << " compactions; final context: " << context.messages.size()
              << " messages, ~" << final_tokens << " tokens of a " << context_window
              << "-token window\n";
    const bool ok = compactions > 0 && final_tokens <= context_window && verify(session).ok();
    return ok ? 0 : 1;
}

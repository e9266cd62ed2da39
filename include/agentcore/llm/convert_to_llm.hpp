#pragma once
// From the context a session builds to the messages an LLM accepts: user, assistant and tool
// results only, with pi's wording for the roles no provider knows.

#include <agentcore/context.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/messages.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace agentcore::llm {

/// The text around a compaction summary (pi's wording).
inline constexpr std::string_view compaction_summary_prefix =
    "The conversation history before this point was compacted into the following summary:\n\n"
    "<summary>\n";
inline constexpr std::string_view compaction_summary_suffix = "\n</summary>";
/// The text around a branch summary (pi's wording; no line break before the closing tag).
inline constexpr std::string_view branch_summary_prefix =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
inline constexpr std::string_view branch_summary_suffix = "</summary>";

/// What the model is told of a shell command the user ran: "Ran `cmd`", the output fenced (or
/// "(no output)"), then "(command cancelled)" or the non-zero exit code, then where the full
/// output is when it was truncated.
inline std::string bash_execution_to_text(const BashExecutionMessage& m) {
    std::string text = "Ran `" + m.command + "`\n";
    if (!m.output.empty())
        text += "```\n" + m.output + "\n```";
    else
        text += "(no output)";
    if (m.cancelled)
        text += "\n\n(command cancelled)";
    else if (m.exit_code && *m.exit_code != 0)
        text += "\n\nCommand exited with code " + std::to_string(*m.exit_code);
    if (m.truncated && m.full_output_path)
        text += "\n\n[Output truncated. Full output: " + *m.full_output_path + "]";
    return text;
}

/// The messages to send to an LLM, from context messages (SessionContext::messages):
/// - user, assistant and tool results pass through (shared, not copied);
/// - `bash_execution` becomes a user message (bash_execution_to_text), or nothing when it is
///   excluded from the context;
/// - `custom` becomes a user message with its content (a string becomes one text block);
/// - branch and compaction summaries become user messages with the summary inside pi's
///   preamble and `<summary>` tags;
/// - messages of unknown roles are dropped.
/// Each new user message keeps the timestamp of the message it replaces. The result keeps the
/// pairing invariant (SPEC §8): a tool result whose tool call is not earlier is dropped.
///
/// Complexity: linear in the number of messages; only converted messages are allocated.
/// Example: `auto messages = llm::convert_to_llm(build_context(session).messages);`
inline std::vector<MessageHandle> convert_to_llm(const std::vector<MessageHandle>& messages) {
    std::vector<MessageHandle> out;
    out.reserve(messages.size());
    auto user = [&](std::vector<ContentBlock> content, std::int64_t timestamp) {
        out.push_back(std::make_shared<const AgentMessage>(
            UserMessage{Content(std::move(content)), timestamp, {}}));
    };
    for (const auto& handle : messages) {
        if (!handle) continue;
        std::visit(
            [&](const auto& m) {
                using T = std::decay_t<decltype(m)>;
                if constexpr (std::is_same_v<T, UserMessage> ||
                              std::is_same_v<T, AssistantMessage> ||
                              std::is_same_v<T, ToolResultMessage>) {
                    out.push_back(handle);
                } else if constexpr (std::is_same_v<T, BashExecutionMessage>) {
                    if (m.exclude_from_context.value_or(false)) return;
                    user({TextContent{bash_execution_to_text(m), {}}}, m.timestamp);
                } else if constexpr (std::is_same_v<T, CustomMessage>) {
                    if (const auto* s = std::get_if<std::string>(&m.content))
                        user({TextContent{*s, {}}}, m.timestamp);
                    else
                        user(std::get<std::vector<ContentBlock>>(m.content), m.timestamp);
                } else if constexpr (std::is_same_v<T, BranchSummaryMessage>) {
                    user({TextContent{std::string(branch_summary_prefix) + m.summary +
                                          std::string(branch_summary_suffix),
                                      {}}},
                         m.timestamp);
                } else if constexpr (std::is_same_v<T, CompactionSummaryMessage>) {
                    user({TextContent{std::string(compaction_summary_prefix) + m.summary +
                                          std::string(compaction_summary_suffix),
                                      {}}},
                         m.timestamp);
                }
            },
            *handle);
    }
    std::vector<DroppedMessage> dropped;
    enforce_tool_pairing(out, dropped);
    return out;
}

/// The same for a built context.
inline std::vector<MessageHandle> convert_to_llm(const SessionContext& context) {
    return convert_to_llm(context.messages);
}

}  // namespace agentcore::llm

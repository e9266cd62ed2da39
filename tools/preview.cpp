#include "preview.hpp"

#include <agentcore/codec.hpp>
#include <agentcore/detail/terminal_text.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <type_traits>
#include <variant>

namespace agentcore::tool {

namespace {

std::string arguments_text(const Json& arguments) {
    return arguments.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string blocks_text(const std::vector<ContentBlock>& blocks) {
    std::string out;
    auto add = [&out](std::string_view piece) {
        if (!out.empty() && !piece.empty()) out += "\n";
        out += piece;
    };
    for (const auto& block : blocks) {
        std::visit(
            [&](const auto& b) {
                using T = std::decay_t<decltype(b)>;
                if constexpr (std::is_same_v<T, TextContent>)
                    add(b.text);
                else if constexpr (std::is_same_v<T, ImageContent>)
                    add("[image " + b.mime_type + "]");
                else if constexpr (std::is_same_v<T, ThinkingContent>)
                    add("[thinking]");
                else if constexpr (std::is_same_v<T, ToolCallContent>)
                    add("→ " + b.name + " " + arguments_text(b.arguments));
                else
                    add("[" + b.type + "]");
            },
            block);
    }
    return out;
}

std::string content_text(const Content& content) {
    if (const auto* s = std::get_if<std::string>(&content)) return *s;
    return blocks_text(std::get<std::vector<ContentBlock>>(content));
}

std::string message_text(const AgentMessage& message) {
    return std::visit(
        [](const auto& m) -> std::string {
            using T = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<T, UserMessage> || std::is_same_v<T, CustomMessage>) {
                return content_text(m.content);
            } else if constexpr (std::is_same_v<T, AssistantMessage>) {
                std::string text = blocks_text(m.content);
                if (m.error_message) {
                    if (!text.empty()) text += '\n';
                    text += "error: ";
                    text += *m.error_message;
                }
                return text;
            } else if constexpr (std::is_same_v<T, ToolResultMessage>) {
                return m.tool_name + (m.is_error ? " (error): " : ": ") + blocks_text(m.content);
            } else if constexpr (std::is_same_v<T, BashExecutionMessage>) {
                return "$ " + m.command + "\n" + m.output;
            } else if constexpr (std::is_same_v<T, BranchSummaryMessage> ||
                                 std::is_same_v<T, CompactionSummaryMessage>) {
                return m.summary;
            } else {
                return "[" + m.role + "]";
            }
        },
        message);
}

std::string entry_kind(const SessionTreeEntry& entry) {
    if (const auto* m = message_of(entry)) return std::string(role_of(*m));
    return std::string(type_of(entry));
}

std::string entry_text(const SessionTreeEntry& entry) {
    return std::visit(
        [](const auto& e) -> std::string {
            using T = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<T, MessageEntry>) {
                return message_text(e.message);
            } else if constexpr (std::is_same_v<T, ThinkingLevelChangeEntry>) {
                return e.thinking_level;
            } else if constexpr (std::is_same_v<T, ModelChangeEntry>) {
                return e.provider + "/" + e.model_id;
            } else if constexpr (std::is_same_v<T, ActiveToolsChangeEntry>) {
                std::string out;
                for (const auto& name : e.active_tool_names)
                    out += (out.empty() ? "" : ", ") + name;
                return out;
            } else if constexpr (std::is_same_v<T, CompactionEntry>) {
                return e.summary;
            } else if constexpr (std::is_same_v<T, BranchSummaryEntry>) {
                return e.summary;
            } else if constexpr (std::is_same_v<T, CustomEntry>) {
                return e.custom_type;
            } else if constexpr (std::is_same_v<T, CustomMessageEntry>) {
                return e.custom_type + ": " + content_text(e.content);
            } else if constexpr (std::is_same_v<T, LabelEntry>) {
                return e.target_id + (e.label ? " = " + *e.label : std::string(" cleared"));
            } else if constexpr (std::is_same_v<T, SessionInfoEntry>) {
                return e.name.value_or("");
            } else if constexpr (std::is_same_v<T, LeafEntry>) {
                return "→ " + e.target_id.value_or("(before the first entry)");
            } else {
                return std::string();
            }
        },
        entry);
}

std::string one_line(std::string_view text, std::size_t max_chars) {
    return detail::one_line_text(text, max_chars);
}

std::string printable(std::string_view text) { return detail::printable_text(text); }

std::string escaped(std::string_view text, std::size_t max_chars) {
    return detail::escaped_text(text, max_chars);
}

}  // namespace agentcore::tool

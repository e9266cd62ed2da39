#pragma once
// Content blocks, usage and the agent messages (SPEC §2.1, §2.2).
//
// Every struct keeps the JSON fields it does not model in `extra` (an object, or null when there
// are none); the codec writes them back unchanged after the modelled fields.

#include <agentcore/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace agentcore {

// ---------------------------------------------------------------------------------------------
// Content blocks

/// A piece of text.
struct TextContent {
    std::string text;
    Json extra;
};

/// An image, base64 encoded.
struct ImageContent {
    std::string data;
    std::string mime_type;
    Json extra;
};

/// A model's reasoning text.
struct ThinkingContent {
    std::string thinking;
    Json extra;  ///< e.g. provider signatures, `redacted`
};

/// A tool call made by the assistant.
struct ToolCallContent {
    std::string id;
    std::string name;
    Json arguments = Json::object();  ///< a JSON object
    Json extra;
};

/// A block of a type this library does not know; kept as written.
struct OpaqueContent {
    std::string type;
    Json raw;  ///< the whole block as read
};

/// One block of message content.
using ContentBlock =
    std::variant<TextContent, ImageContent, ThinkingContent, ToolCallContent, OpaqueContent>;

/// Content that is either a plain string or a list of blocks; which one is kept.
using Content = std::variant<std::string, std::vector<ContentBlock>>;

// ---------------------------------------------------------------------------------------------
// Usage

/// Costs in dollars.
struct Cost {
    double input = 0;
    double output = 0;
    double cache_read = 0;
    double cache_write = 0;
    double total = 0;
    Json extra;
};

/// Token counts and cost of one model call (or of a summary).
struct Usage {
    std::int64_t input = 0;
    std::int64_t output = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_write = 0;
    std::int64_t total_tokens = 0;
    Cost cost;
    Json extra;
};

// ---------------------------------------------------------------------------------------------
// Messages

/// A message from the user.
struct UserMessage {
    Content content;
    std::int64_t timestamp = 0;  ///< Unix ms
    Json extra;
};

/// A reply of the model.
struct AssistantMessage {
    std::vector<ContentBlock> content;
    std::string api;
    std::string provider;
    std::string model;
    Usage usage;
    std::string stop_reason = "stop";  ///< native spelling: stop, length, tool_use, error, aborted
    std::optional<std::string> error_message;
    std::int64_t timestamp = 0;
    Json extra;  ///< e.g. responseId, diagnostics
};

/// The result of a tool call.
struct ToolResultMessage {
    std::string tool_call_id;
    std::string tool_name;
    std::vector<ContentBlock> content;
    Json details;  ///< null when absent
    bool is_error = false;
    std::int64_t timestamp = 0;
    Json extra;
    /// True when this was read from a line without `is_error` (pi reads that as false): it is
    /// then left out when written, unless `is_error` is true, so the line round-trips.
    bool is_error_omitted = false;
};

/// A shell command the user ran directly.
struct BashExecutionMessage {
    std::string command;
    std::string output;
    std::optional<std::int64_t> exit_code;
    bool cancelled = false;
    bool truncated = false;
    std::optional<std::string> full_output_path;
    std::optional<bool> exclude_from_context;
    std::int64_t timestamp = 0;
    Json extra;
};

/// A message injected by the application or an extension.
struct CustomMessage {
    std::string custom_type;
    Content content;
    bool display = false;
    Json details;  ///< null when absent
    std::int64_t timestamp = 0;
    Json extra;
    /// True when this was read from a line without `display` (pi reads that as false): it is
    /// then left out when written, unless `display` is true, so the line round-trips.
    bool display_omitted = false;
};

/// The summary of a branch the conversation came back from.
struct BranchSummaryMessage {
    std::string summary;
    std::string from_id;
    std::int64_t timestamp = 0;
    Json extra;
};

/// The summary that replaces compacted history.
struct CompactionSummaryMessage {
    std::string summary;
    std::int64_t tokens_before = 0;
    std::int64_t timestamp = 0;
    Json extra;
};

/// A message of a role this library does not know; kept and written back unchanged.
struct OpaqueMessage {
    std::string role;
    Json raw;  ///< the whole message as read
};

/// Any message of the conversation.
using AgentMessage =
    std::variant<UserMessage, AssistantMessage, ToolResultMessage, BashExecutionMessage,
                 CustomMessage, BranchSummaryMessage, CompactionSummaryMessage, OpaqueMessage>;

/// The role of a message in the native spelling ("user", "tool_result", ...), or the opaque role.
inline std::string_view role_of(const AgentMessage& message) noexcept {
    return std::visit(
        [](const auto& m) -> std::string_view {
            using T = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<T, UserMessage>) return "user";
            else if constexpr (std::is_same_v<T, AssistantMessage>) return "assistant";
            else if constexpr (std::is_same_v<T, ToolResultMessage>) return "tool_result";
            else if constexpr (std::is_same_v<T, BashExecutionMessage>) return "bash_execution";
            else if constexpr (std::is_same_v<T, CustomMessage>) return "custom";
            else if constexpr (std::is_same_v<T, BranchSummaryMessage>) return "branch_summary";
            else if constexpr (std::is_same_v<T, CompactionSummaryMessage>) return "compaction_summary";
            else return m.role;
        },
        message);
}

/// The timestamp of a message in Unix ms (0 for an opaque message without a numeric one).
inline std::int64_t timestamp_of(const AgentMessage& message) noexcept {
    return std::visit(
        [](const auto& m) -> std::int64_t {
            using T = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<T, OpaqueMessage>) {
                auto it = m.raw.find("timestamp");
                return (it != m.raw.end() && it->is_number_integer()) ? it->template get<std::int64_t>() : 0;
            } else {
                return m.timestamp;
            }
        },
        message);
}

/// Convenience: a user message with plain string content.
inline AgentMessage user_text(std::string text, std::int64_t timestamp = 0) {
    return UserMessage{std::move(text), timestamp, {}};
}

}  // namespace agentcore

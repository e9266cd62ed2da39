#pragma once
// Content blocks, usage and the agent messages (SPEC §2.1, §2.2).
//
// Every struct keeps the JSON fields it does not model in `extra` (an object, or null when there
// are none); the codec writes them back unchanged after the modelled fields.

#include <agentcore/detail/dependent.hpp>
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
    std::string text{};
    Json extra{};
};

/// An image, base64 encoded.
struct ImageContent {
    std::string data{};
    std::string mime_type{};
    Json extra{};
};

/// A model's reasoning text.
struct ThinkingContent {
    std::string thinking{};
    Json extra{};  ///< e.g. provider signatures, `redacted`
};

/// A tool call made by the assistant.
struct ToolCallContent {
    std::string id{};
    std::string name{};
    Json arguments = Json(Json::value_t::object);  ///< a JSON object
    Json extra{};
};

/// A block of a type this library does not know; kept as written.
struct OpaqueContent {
    std::string type{};
    Json raw{};  ///< the whole block as read
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
    Json extra{};
};

/// Token counts and cost of one model call (or of a summary).
struct Usage {
    std::int64_t input = 0;
    std::int64_t output = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_write = 0;
    std::int64_t total_tokens = 0;
    Cost cost{};
    Json extra{};
};

// ---------------------------------------------------------------------------------------------
// Messages

/// A message from the user.
struct UserMessage {
    Content content{};
    std::int64_t timestamp = 0;  ///< Unix ms
    Json extra{};
};

/// A reply of the model.
struct AssistantMessage {
    std::vector<ContentBlock> content{};
    std::string api{};  ///< empty: unknown, not written
    std::string provider{};
    std::string model{};
    Usage usage{};
    std::string stop_reason = "stop";  ///< native spelling: stop, length, tool_use, error, aborted
                                       ///< (stop_reasons); other values do not encode
    std::optional<std::string> error_message{};
    std::int64_t timestamp = 0;
    Json extra{};  ///< e.g. responseId, diagnostics
};

/// The result of a tool call.
struct ToolResultMessage {
    std::string tool_call_id{};
    std::string tool_name{};
    std::vector<ContentBlock> content{};
    Json details{};  ///< null when absent
    bool is_error = false;
    std::int64_t timestamp = 0;
    Json extra{};
    /// True when this was read from a line without `is_error` (pi reads that as false): it is
    /// then left out when written, unless `is_error` is true, so the line round-trips.
    bool is_error_omitted = false;
};

/// A shell command the user ran directly.
struct BashExecutionMessage {
    std::string command{};
    std::string output{};
    std::optional<std::int64_t> exit_code{};
    bool cancelled = false;
    bool truncated = false;
    std::optional<std::string> full_output_path{};
    std::optional<bool> exclude_from_context{};
    std::int64_t timestamp = 0;
    Json extra{};
};

/// A message injected by the application or an extension.
struct CustomMessage {
    std::string custom_type{};
    Content content{};
    bool display = false;
    Json details{};  ///< null when absent
    std::int64_t timestamp = 0;
    Json extra{};
    /// True when this was read from a line without `display` (pi reads that as false): it is
    /// then left out when written, unless `display` is true, so the line round-trips.
    bool display_omitted = false;
};

/// The summary of a branch the conversation came back from.
struct BranchSummaryMessage {
    std::string summary{};
    std::string from_id{};
    std::int64_t timestamp = 0;
    Json extra{};
};

/// The summary that replaces compacted history.
struct CompactionSummaryMessage {
    std::string summary{};
    std::int64_t tokens_before = 0;
    std::int64_t timestamp = 0;
    Json extra{};
};

/// A message of a role this library does not know; kept and written back unchanged.
struct OpaqueMessage {
    std::string role{};
    Json raw{};  ///< the whole message as read
};

/// Any message of the conversation.
using AgentMessage =
    std::variant<UserMessage, AssistantMessage, ToolResultMessage, BashExecutionMessage,
                 CustomMessage, BranchSummaryMessage, CompactionSummaryMessage, OpaqueMessage>;

/// The role of a message in the native spelling ("user", "tool_result", ...), or the opaque role.
template <class T = void>
std::string_view role_of(const detail::dependent<AgentMessage, T>& message) noexcept {
    return std::visit(
        [](const auto& m) -> std::string_view {
            using M = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<M, UserMessage>)
                return "user";
            else if constexpr (std::is_same_v<M, AssistantMessage>)
                return "assistant";
            else if constexpr (std::is_same_v<M, ToolResultMessage>)
                return "tool_result";
            else if constexpr (std::is_same_v<M, BashExecutionMessage>)
                return "bash_execution";
            else if constexpr (std::is_same_v<M, CustomMessage>)
                return "custom";
            else if constexpr (std::is_same_v<M, BranchSummaryMessage>)
                return "branch_summary";
            else if constexpr (std::is_same_v<M, CompactionSummaryMessage>)
                return "compaction_summary";
            else
                return m.role;
        },
        message);
}

/// The role of a message as the dialect spells it: native "tool_result", pi "toolResult", ...;
/// the opaque role as it was read.
template <class T = void>
std::string_view role_of(const detail::dependent<AgentMessage, T>& message,
                         Dialect dialect) noexcept {
    const std::string_view native = role_of(message);
    if (dialect == Dialect::native || std::holds_alternative<OpaqueMessage>(message)) return native;
    if (native == "tool_result") return "toolResult";
    if (native == "bash_execution") return "bashExecution";
    if (native == "branch_summary") return "branchSummary";
    if (native == "compaction_summary") return "compactionSummary";
    return native;
}

/// The stop reasons of SPEC §2.2 in the native spelling (pi spells tool_use "toolUse"; the codec
/// translates).
inline constexpr std::string_view stop_reasons[] = {"stop", "length", "tool_use", "error",
                                                    "aborted"};

/// True when `reason` is one of stop_reasons (native spelling).
constexpr bool is_known_stop_reason(std::string_view reason) noexcept {
    for (std::string_view known : stop_reasons)
        if (known == reason) return true;
    return false;
}

/// The timestamp of a message in Unix ms (0 for an opaque message without a numeric one).
template <class T = void>
std::int64_t timestamp_of(const detail::dependent<AgentMessage, T>& message) noexcept {
    return std::visit(
        [](const auto& m) -> std::int64_t {
            using M = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<M, OpaqueMessage>) {
                auto it = m.raw.find("timestamp");
                return (it != m.raw.end() && it->is_number_integer())
                           ? it->template get<std::int64_t>()
                           : 0;
            } else {
                return m.timestamp;
            }
        },
        message);
}

// ---------------------------------------------------------------------------------------------
// Builders and accessors
//
// A message whose timestamp is 0 (the builders' default) is stamped by append_message with the
// session's clock: the same time as the entry that holds it.

/// A user message with plain string content.
///
/// Example: `append_message(session, user_text("What is in main.cpp?"));`
template <class = void>
UserMessage user_text(std::string text, std::int64_t timestamp = 0) {
    return UserMessage{std::move(text), timestamp, {}};
}

/// A user message with content blocks (text and images).
template <class = void>
UserMessage user_blocks(std::vector<ContentBlock> blocks, std::int64_t timestamp = 0) {
    return UserMessage{std::move(blocks), timestamp, {}};
}

/// A tool call block: the call's id (the provider's), the tool's name, its arguments (a JSON
/// object).
template <class T = void>
ToolCallContent tool_call(std::string id, std::string name, Json arguments = Json::object()) {
    return detail::dependent<ToolCallContent, T>{
        std::move(id), std::move(name), std::move(arguments), {}};
}

/// What assistant_reply puts into an assistant message; every field may be left out.
///
/// Example: `assistant_reply({.text = "Let me look.", .tool_calls = {tool_call("c1", "ls")},
/// .model = "claude-sonnet-4-5"})`
struct AssistantReply {
    std::string thinking{};                     ///< a thinking block (first) when not empty
    std::string text{};                         ///< a text block when not empty
    std::vector<ToolCallContent> tool_calls{};  ///< tool call blocks, after the text
    std::string provider{};
    std::string model{};
    std::string api{};
    Usage usage{};
    /// Default: "tool_use" when there are tool calls, else "stop".
    std::optional<std::string> stop_reason{};
    std::int64_t timestamp = 0;  ///< 0: the session's clock at append
};

/// An assistant message: thinking, text and tool calls in that order, the model that wrote it.
template <class T = void>
AssistantMessage assistant_reply(AssistantReply reply) {
    detail::dependent<AssistantMessage, T> m;
    if (!reply.thinking.empty())
        m.content.emplace_back(ThinkingContent{std::move(reply.thinking), {}});
    if (!reply.text.empty()) m.content.emplace_back(TextContent{std::move(reply.text), {}});
    for (auto& call : reply.tool_calls) m.content.emplace_back(std::move(call));
    m.api = std::move(reply.api);
    m.provider = std::move(reply.provider);
    m.model = std::move(reply.model);
    m.usage = std::move(reply.usage);
    m.stop_reason = reply.stop_reason ? std::move(*reply.stop_reason)
                                      : std::string(reply.tool_calls.empty() ? "stop" : "tool_use");
    m.timestamp = reply.timestamp;
    return m;
}

/// An assistant message with one text block.
template <class = void>
AssistantMessage assistant_text(std::string text) {
    AssistantReply reply;
    reply.text = std::move(text);
    return assistant_reply(std::move(reply));
}

/// The result of a tool call: its id and tool name are the call's, its content one text block.
///
/// Example: `append_message(session, tool_result(call, run(call)));`
template <class T = void>
ToolResultMessage tool_result(const ToolCallContent& call, std::string text,
                              bool is_error = false) {
    detail::dependent<ToolResultMessage, T> m;
    m.tool_call_id = call.id;
    m.tool_name = call.name;
    m.content.emplace_back(TextContent{std::move(text), {}});
    m.is_error = is_error;
    return m;
}

/// The result of a tool call with content blocks (text and images).
template <class T = void>
ToolResultMessage tool_result(const ToolCallContent& call,
                              // Moved into the result; the check misreads the assignment to a
                              // member of the dependent type.
                              // NOLINTNEXTLINE(performance-unnecessary-value-param)
                              std::vector<ContentBlock> content, bool is_error = false) {
    detail::dependent<ToolResultMessage, T> m;
    m.tool_call_id = call.id;
    m.tool_name = call.name;
    m.content = std::move(content);
    m.is_error = is_error;
    return m;
}

/// The text of a message: the text blocks (or the string content) of user, assistant, tool
/// result and custom messages, joined as they are; the summary of a summary message; empty for
/// bash executions and opaque messages. Thinking, images and tool calls are not text.
template <class T = void>
std::string text_of(const detail::dependent<AgentMessage, T>& message);

namespace detail {
template <class T = void>
std::string text_blocks_joined(const dependent<std::vector<ContentBlock>, T>& blocks) {
    std::string out;
    for (const auto& b : blocks)
        if (const auto* t = std::get_if<TextContent>(&b)) out += t->text;
    return out;
}
template <class T = void>
std::string content_text_joined(const dependent<Content, T>& c) {
    if (const auto* s = std::get_if<std::string>(&c)) return *s;
    return text_blocks_joined(std::get<std::vector<ContentBlock>>(c));
}
}  // namespace detail

/// The text of an assistant message (see text_of(const AgentMessage&)).
template <class T = void>
std::string text_of(const detail::dependent<AssistantMessage, T>& message) {
    return detail::text_blocks_joined(message.content);
}

template <class T>
std::string text_of(const detail::dependent<AgentMessage, T>& message) {
    auto blocks_text = detail::text_blocks_joined<>;
    auto content_text = detail::content_text_joined<>;
    if (const auto* u = std::get_if<UserMessage>(&message)) return content_text(u->content);
    if (const auto* a = std::get_if<AssistantMessage>(&message)) return blocks_text(a->content);
    if (const auto* t = std::get_if<ToolResultMessage>(&message)) return blocks_text(t->content);
    if (const auto* c = std::get_if<CustomMessage>(&message)) return content_text(c->content);
    if (const auto* b = std::get_if<BranchSummaryMessage>(&message)) return b->summary;
    if (const auto* s = std::get_if<CompactionSummaryMessage>(&message)) return s->summary;
    return {};
}

/// The tool calls of an assistant message, in order (none for any other message).
///
/// Example: `for (const ToolCallContent& call : tool_calls_of(reply)) ...`
template <class T = void>
std::vector<ToolCallContent> tool_calls_of(const detail::dependent<AssistantMessage, T>& message) {
    std::vector<ToolCallContent> out;
    for (const auto& b : message.content)
        if (const auto* c = std::get_if<ToolCallContent>(&b)) out.push_back(*c);
    return out;
}
template <class T = void>
std::vector<ToolCallContent> tool_calls_of(const detail::dependent<AgentMessage, T>& message) {
    const auto* a = std::get_if<AssistantMessage>(&message);
    return a ? tool_calls_of(*a) : std::vector<ToolCallContent>{};
}

}  // namespace agentcore

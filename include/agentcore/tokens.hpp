#pragma once
// Token estimates of messages and contexts (SPEC §8).
//
// The library never sees a tokenizer: it estimates. A message costs about one token per four
// characters (rounded up), which overestimates for English prose and code — the safe side for a
// decision about when to compact. A context's size comes from what the provider last reported
// (the newest valid assistant usage) plus estimates of the messages after it. Every sum
// saturates at INT64_MAX instead of wrapping (token counts in a file may be hostile).

#include <agentcore/detail/codec_nesting.hpp>
#include <agentcore/detail/saturate.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/json.hpp>
#include <agentcore/messages.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace agentcore {

/// Characters counted as one token.
inline constexpr std::int64_t chars_per_token = 4;

/// Tokens counted for every image, whatever its size (providers bill images by pixels, which the
/// library does not decode; 1,200 tokens is a mid-sized screenshot).
inline constexpr std::int64_t image_token_estimate = 1200;

namespace detail {

// Characters are Unicode code points of the UTF-8 text (a byte count would charge CJK text
// three times); a stray continuation byte of invalid UTF-8 simply does not count.
template <class = void>
std::int64_t count_chars(std::string_view text) noexcept {
    std::int64_t n = 0;
    for (char c : text)
        if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) ++n;
    return n;
}

// JSON as written on the wire; invalid UTF-8 in a string is replaced rather than thrown on. A
// value nested deeper than the library's limit (which no reader hands out) is counted by its
// first levels only: dump() recurses.
template <class = void>
std::string dump_json(const Json& value) {
    if (!nests_within(value, max_json_depth)) return "[deeply nested JSON]";
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

struct TextCost {
    std::int64_t chars = 0;
    std::int64_t images = 0;

    [[nodiscard]] std::int64_t tokens() const noexcept {
        const std::int64_t image_tokens =
            images > std::numeric_limits<std::int64_t>::max() / image_token_estimate
                ? std::numeric_limits<std::int64_t>::max()
                : images * image_token_estimate;
        return saturating_add(chars / chars_per_token + (chars % chars_per_token != 0 ? 1 : 0),
                              image_tokens);
    }
};

template <class = void>
void add_block_cost(const ContentBlock& block, TextCost& cost) {
    std::visit(
        [&](const auto& b) {
            using T = std::decay_t<decltype(b)>;
            if constexpr (std::is_same_v<T, TextContent>) {
                cost.chars += count_chars(b.text);
            } else if constexpr (std::is_same_v<T, ImageContent>) {
                ++cost.images;
            } else if constexpr (std::is_same_v<T, ThinkingContent>) {
                cost.chars += count_chars(b.thinking);
            } else if constexpr (std::is_same_v<T, ToolCallContent>) {
                cost.chars += count_chars(b.name) + count_chars(dump_json(b.arguments));
            } else {
                cost.chars += count_chars(dump_json(b.raw));
            }
        },
        block);
}

template <class = void>
void add_content_cost(const Content& content, TextCost& cost) {
    if (const auto* s = std::get_if<std::string>(&content)) {
        cost.chars += count_chars(*s);
        return;
    }
    for (const auto& block : std::get<std::vector<ContentBlock>>(content))
        add_block_cost(block, cost);
}

inline const AgentMessage& deref(const AgentMessage& m) noexcept { return m; }
inline const AgentMessage& deref(const MessageHandle& m) noexcept { return *m; }

}  // namespace detail

/// Estimated tokens of one message: ceil(characters / 4) plus 1,200 per image.
///
/// Counted: the text of user, assistant, tool result and custom messages; assistant thinking;
/// tool calls as name + serialised arguments; a bash execution's command and output (nothing
/// when it is excluded from the context); the summary of summary messages. Blocks and messages of
/// unknown types count their raw JSON (conservative).
///
/// Complexity: linear in the message's size.
/// Example: a user message "hello world" (11 characters) → 3; a tool result with the text
/// "abcd" and one image → 1 + 1200 = 1201.
template <class = void>
std::int64_t estimate_tokens(const AgentMessage& message) {
    detail::TextCost cost;
    std::visit(
        [&](const auto& m) {
            using T = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<T, UserMessage> || std::is_same_v<T, CustomMessage>) {
                detail::add_content_cost(m.content, cost);
            } else if constexpr (std::is_same_v<T, AssistantMessage> ||
                                 std::is_same_v<T, ToolResultMessage>) {
                for (const auto& block : m.content) detail::add_block_cost(block, cost);
            } else if constexpr (std::is_same_v<T, BashExecutionMessage>) {
                if (!m.exclude_from_context.value_or(false))
                    cost.chars += detail::count_chars(m.command) + detail::count_chars(m.output);
            } else if constexpr (std::is_same_v<T, BranchSummaryMessage> ||
                                 std::is_same_v<T, CompactionSummaryMessage>) {
                cost.chars += detail::count_chars(m.summary);
            } else {
                cost.chars += detail::count_chars(detail::dump_json(m.raw));
            }
        },
        message);
    return cost.tokens();
}

/// The tokens a usage record says the context held: `total_tokens` when the provider reported
/// it, else input + output + cache_read + cache_write.
/// Example: {input 10, output 20, cache_read 30, cache_write 40, total 0} → 100.
template <class = void>
std::int64_t usage_context_tokens(const Usage& usage) noexcept {
    using detail::saturating_add;
    if (usage.total_tokens > 0) return usage.total_tokens;
    return saturating_add(saturating_add(usage.input, usage.output),
                          saturating_add(usage.cache_read, usage.cache_write));
}

/// The usage of an assistant message that can be trusted as a context size: none for other
/// messages, for replies that were aborted or ended in an error (their usage is partial), and
/// for a usage of zero tokens (never reported: a real reply always has input).
template <class = void>
const Usage* valid_assistant_usage(const AgentMessage& message) noexcept {
    const auto* a = std::get_if<AssistantMessage>(&message);
    if (!a || a->stop_reason == "aborted" || a->stop_reason == "error") return nullptr;
    if (usage_context_tokens(a->usage) <= 0) return nullptr;
    return &a->usage;
}

/// The estimated size of a context, and how it was reached.
struct ContextTokenEstimate {
    std::int64_t tokens = 0;           ///< usage_tokens + trailing_tokens
    std::int64_t usage_tokens = 0;     ///< what the newest valid usage reported (0 without one)
    std::int64_t trailing_tokens = 0;  ///< estimates of the messages after it (all without one)
    std::optional<std::size_t> last_usage_index;  ///< that assistant message's index
};

/// The size of a context: the newest valid assistant usage (see valid_assistant_usage,
/// usage_context_tokens) plus the estimates of the messages after it; without such a usage, the
/// sum of all estimates. Accepts the messages of a SessionContext or plain messages.
///
/// After a compaction, the replies it kept reported the size of the context *before* it: a usage
/// whose message is not newer than the newest compaction summary in the list (by timestamp) is
/// not trusted, so that the estimate drops as soon as the compaction is appended.
///
/// Complexity: linear in the messages.
/// Example: [user "hello world", assistant (usage total 1000), user "abcdefgh"] → 1000 + 2 = 1002.
template <class Messages>
requires std::is_same_v<typename Messages::value_type, MessageHandle> ||
    std::is_same_v<typename Messages::value_type, AgentMessage>
        ContextTokenEstimate estimate_context_tokens(const Messages& messages) {
    ContextTokenEstimate out;
    std::optional<std::int64_t> compacted_at;
    for (const auto& m : messages)
        if (const auto* c = std::get_if<CompactionSummaryMessage>(&detail::deref(m)))
            compacted_at = compacted_at ? std::max(*compacted_at, c->timestamp) : c->timestamp;
    std::size_t first_trailing = 0;
    for (std::size_t i = messages.size(); i-- > 0;) {
        const AgentMessage& m = detail::deref(messages[i]);
        if (compacted_at && timestamp_of(m) <= *compacted_at) continue;
        if (const Usage* u = valid_assistant_usage(m)) {
            out.usage_tokens = usage_context_tokens(*u);
            out.last_usage_index = i;
            first_trailing = i + 1;
            break;
        }
    }
    for (std::size_t i = first_trailing; i < messages.size(); ++i)
        out.trailing_tokens = detail::saturating_add(out.trailing_tokens,
                                                     estimate_tokens(detail::deref(messages[i])));
    out.tokens = detail::saturating_add(out.usage_tokens, out.trailing_tokens);
    return out;
}

}  // namespace agentcore

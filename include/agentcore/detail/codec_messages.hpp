#pragma once
// The JSON codec of content blocks, usage and messages, in both dialects (SPEC §2.1, §2.2, §3).
//
// Readers take the JSON by reference and move strings and free-form values out of it; the
// fields the model does not know go into `extra` in their original order. Writers emit the
// modelled fields in a fixed order per dialect, then the extras.

#include <agentcore/detail/codec_raw.hpp>
#include <agentcore/detail/codec_read.hpp>
#include <agentcore/detail/codec_sinks.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/json.hpp>
#include <agentcore/messages.hpp>

#include <array>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace agentcore::detail {

/// A field name in both dialects.
struct Key {
    std::string_view native;
    std::string_view pi;
    [[nodiscard]] constexpr std::string_view operator()(Dialect d) const noexcept {
        return d == Dialect::pi ? pi : native;
    }
};

namespace keys {
inline constexpr Key mime_type{"mime_type", "mimeType"};
inline constexpr Key cache_read{"cache_read", "cacheRead"};
inline constexpr Key cache_write{"cache_write", "cacheWrite"};
inline constexpr Key total_tokens{"total_tokens", "totalTokens"};
inline constexpr Key stop_reason{"stop_reason", "stopReason"};
inline constexpr Key error_message{"error_message", "errorMessage"};
inline constexpr Key tool_call_id{"tool_call_id", "toolCallId"};
inline constexpr Key tool_name{"tool_name", "toolName"};
inline constexpr Key is_error{"is_error", "isError"};
inline constexpr Key exit_code{"exit_code", "exitCode"};
inline constexpr Key full_output_path{"full_output_path", "fullOutputPath"};
inline constexpr Key exclude_from_context{"exclude_from_context", "excludeFromContext"};
inline constexpr Key custom_type{"custom_type", "customType"};
inline constexpr Key from_id{"from_id", "fromId"};
inline constexpr Key tokens_before{"tokens_before", "tokensBefore"};
}  // namespace keys

namespace block_types {
inline constexpr Key tool_call{"tool_call", "toolCall"};
}  // namespace block_types

namespace roles {
inline constexpr Key tool_result{"tool_result", "toolResult"};
inline constexpr Key bash_execution{"bash_execution", "bashExecution"};
inline constexpr Key branch_summary{"branch_summary", "branchSummary"};
inline constexpr Key compaction_summary{"compaction_summary", "compactionSummary"};
}  // namespace roles

/// The stop reasons as the dialect spells them, for messages.
template <class = void>
std::string_view stop_reasons_spelled(Dialect d) noexcept {
    return d == Dialect::pi ? "stop, length, toolUse, error, aborted"
                            : "stop, length, tool_use, error, aborted";
}

/// The stop reason as the model keeps it (native spelling) from the dialect's spelling; a value
/// outside SPEC §2.2's set (or spelled as the other dialect spells it) is an empty string.
template <class = void>
std::string stop_reason_from_wire(std::string value, Dialect d) {
    if (d == Dialect::pi && value == "toolUse") return "tool_use";
    if (value == "tool_use" ? d == Dialect::pi : !is_known_stop_reason(value)) return {};
    return value;
}

/// The dialect's spelling of a stop reason. Throws invalid_entry for a value outside the set.
template <class = void>
std::string_view stop_reason_to_wire(std::string_view value, Dialect d) {
    if (!is_known_stop_reason(value))
        throw SessionError(ErrorCode::invalid_entry,
                           "assistant message: stop_reason must be one of " +
                               std::string(stop_reasons_spelled(Dialect::native)));
    if (d == Dialect::pi && value == "tool_use") return "toolUse";
    return value;
}

// ---------------------------------------------------------------------------------------------
// Reading

// Every reader takes its value as V: a Json* into a DOM or a RawJson (codec_raw.hpp).

template <class V>
void require_object(V j, const ReadContext& ctx, const FieldPath& path) {
    if (!is_object(j)) expected(ctx, path, "an object", j);
}

template <class V>
ContentBlock read_block(V j, Dialect d, const ReadContext& ctx, const FieldPath& path) {
    require_object(j, ctx, path);
    const V type_value = find_field(j, "type");
    if (is_missing(type_value)) ctx.missing(path / "type");
    if (!is_string(type_value)) expected(ctx, path / "type", "a string", type_value);
    std::string scratch;
    const std::string_view type = string_view_of(type_value, scratch);

    if (type == "text") {
        std::array<V, 2> s{};
        Json extra = split_fields(j, std::array<std::string_view, 2>{"type", "text"}, s);
        return TextContent{take_string(s[1], ctx, path / "text"), std::move(extra)};
    }
    if (type == "image") {
        std::array<V, 3> s{};
        Json extra =
            split_fields(j, std::array<std::string_view, 3>{"type", "data", keys::mime_type(d)}, s);
        ImageContent b;
        b.data = take_string(s[1], ctx, path / "data");
        b.mime_type = take_string(s[2], ctx, path / keys::mime_type(d));
        b.extra = std::move(extra);
        return b;
    }
    if (type == "thinking") {
        std::array<V, 2> s{};
        Json extra = split_fields(j, std::array<std::string_view, 2>{"type", "thinking"}, s);
        return ThinkingContent{take_string(s[1], ctx, path / "thinking"), std::move(extra)};
    }
    if (type == block_types::tool_call(d)) {
        std::array<V, 4> s{};
        Json extra =
            split_fields(j, std::array<std::string_view, 4>{"type", "id", "name", "arguments"}, s);
        ToolCallContent b;
        b.id = take_string(s[1], ctx, path / "id");
        b.name = take_string(s[2], ctx, path / "name");
        b.arguments = take_object(s[3], ctx, path / "arguments");
        b.extra = std::move(extra);
        return b;
    }
    std::string opaque_type(type);
    return OpaqueContent{std::move(opaque_type), whole_json(j)};
}

template <class V>
std::vector<ContentBlock> read_blocks(V v, Dialect d, const ReadContext& ctx,
                                      const FieldPath& path) {
    if (is_missing(v)) ctx.missing(path);
    if (!is_array(v)) expected(ctx, path, "an array of content blocks", v);
    std::vector<ContentBlock> blocks;
    for_each_item(
        v, [&](V item, std::size_t i) { blocks.push_back(read_block(item, d, ctx, path[i])); });
    return blocks;
}

/// Content that is a string or a list of blocks; which one is kept.
template <class V>
Content read_content(V v, Dialect d, const ReadContext& ctx, const FieldPath& path) {
    if (is_missing(v)) ctx.missing(path);
    if (is_string(v)) return take_string(v, ctx, path);
    if (!is_array(v)) expected(ctx, path, "a string or an array of content blocks", v);
    return read_blocks(v, d, ctx, path);
}

template <class V>
Cost read_cost(V j, Dialect d, const ReadContext& ctx, const FieldPath& path) {
    require_object(j, ctx, path);
    std::array<V, 5> s{};
    Json extra =
        split_fields(j,
                     std::array<std::string_view, 5>{"input", "output", keys::cache_read(d),
                                                     keys::cache_write(d), "total"},
                     s);
    Cost c;
    c.input = read_number(s[0], ctx, path / "input");
    c.output = read_number(s[1], ctx, path / "output");
    c.cache_read = read_number(s[2], ctx, path / keys::cache_read(d));
    c.cache_write = read_number(s[3], ctx, path / keys::cache_write(d));
    c.total = read_number(s[4], ctx, path / "total");
    c.extra = std::move(extra);
    return c;
}

template <class V>
Usage read_usage(V j, Dialect d, const ReadContext& ctx, const FieldPath& path) {
    require_object(j, ctx, path);
    std::array<V, 6> s{};
    Json extra = split_fields(
        j,
        std::array<std::string_view, 6>{"input", "output", keys::cache_read(d),
                                        keys::cache_write(d), keys::total_tokens(d), "cost"},
        s);
    Usage u;
    u.input = read_int(s[0], ctx, path / "input");
    u.output = read_int(s[1], ctx, path / "output");
    u.cache_read = read_int(s[2], ctx, path / keys::cache_read(d));
    u.cache_write = read_int(s[3], ctx, path / keys::cache_write(d));
    u.total_tokens = read_int(s[4], ctx, path / keys::total_tokens(d));
    if (is_missing(s[5])) ctx.missing(path / "cost");
    u.cost = read_cost(s[5], d, ctx, path / "cost");
    u.extra = std::move(extra);
    return u;
}

template <class V>
AgentMessage read_message(V j, Dialect d, const ReadContext& ctx, const FieldPath& path) {
    require_object(j, ctx, path);
    const V role_value = find_field(j, "role");
    if (is_missing(role_value)) ctx.missing(path / "role");
    if (!is_string(role_value)) expected(ctx, path / "role", "a string", role_value);
    std::string scratch;
    const std::string_view role = string_view_of(role_value, scratch);

    if (role == "user") {
        std::array<V, 3> s{};
        Json extra =
            split_fields(j, std::array<std::string_view, 3>{"role", "content", "timestamp"}, s);
        UserMessage m;
        m.content = read_content(s[1], d, ctx, path / "content");
        m.timestamp = read_int(s[2], ctx, path / "timestamp");
        m.extra = std::move(extra);
        return m;
    }
    if (role == "assistant") {
        std::array<V, 9> s{};
        Json extra = split_fields(j,
                                  std::array<std::string_view, 9>{
                                      "role", "content", "api", "provider", "model", "usage",
                                      keys::stop_reason(d), keys::error_message(d), "timestamp"},
                                  s);
        AssistantMessage m;
        m.content = read_blocks(s[1], d, ctx, path / "content");
        m.api = take_optional_string(s[2], ctx, path / "api").value_or(std::string());
        m.provider = take_string(s[3], ctx, path / "provider");
        m.model = take_string(s[4], ctx, path / "model");
        if (is_missing(s[5])) ctx.missing(path / "usage");
        m.usage = read_usage(s[5], d, ctx, path / "usage");
        m.stop_reason =
            stop_reason_from_wire(take_string(s[6], ctx, path / keys::stop_reason(d)), d);
        if (m.stop_reason.empty())
            ctx.fail(path / keys::stop_reason(d),
                     "not one of " + std::string(stop_reasons_spelled(d)));
        m.error_message = take_optional_string(s[7], ctx, path / keys::error_message(d));
        m.timestamp = read_int(s[8], ctx, path / "timestamp");
        m.extra = std::move(extra);
        return m;
    }
    if (role == roles::tool_result(d)) {
        std::array<V, 7> s{};
        Json extra = split_fields(
            j,
            std::array<std::string_view, 7>{"role", keys::tool_call_id(d), keys::tool_name(d),
                                            "content", "details", keys::is_error(d), "timestamp"},
            s);
        ToolResultMessage m;
        m.tool_call_id = take_string(s[1], ctx, path / keys::tool_call_id(d));
        m.tool_name = take_string(s[2], ctx, path / keys::tool_name(d));
        m.content = read_blocks(s[3], d, ctx, path / "content");
        m.details = take_json(s[4]);
        m.is_error_omitted = absent(s[5]);
        m.is_error = read_optional_bool(s[5], ctx, path / keys::is_error(d)).value_or(false);
        m.timestamp = read_int(s[6], ctx, path / "timestamp");
        m.extra = std::move(extra);
        return m;
    }
    if (role == roles::bash_execution(d)) {
        std::array<V, 9> s{};
        Json extra = split_fields(
            j,
            std::array<std::string_view, 9>{"role", "command", "output", keys::exit_code(d),
                                            "cancelled", "truncated", keys::full_output_path(d),
                                            keys::exclude_from_context(d), "timestamp"},
            s);
        BashExecutionMessage m;
        m.command = take_string(s[1], ctx, path / "command");
        m.output = take_string(s[2], ctx, path / "output");
        m.exit_code = read_optional_int(s[3], ctx, path / keys::exit_code(d));
        m.cancelled = read_bool(s[4], ctx, path / "cancelled");
        m.truncated = read_bool(s[5], ctx, path / "truncated");
        m.full_output_path = take_optional_string(s[6], ctx, path / keys::full_output_path(d));
        m.exclude_from_context =
            read_optional_bool(s[7], ctx, path / keys::exclude_from_context(d));
        m.timestamp = read_int(s[8], ctx, path / "timestamp");
        m.extra = std::move(extra);
        return m;
    }
    if (role == "custom") {
        std::array<V, 6> s{};
        Json extra =
            split_fields(j,
                         std::array<std::string_view, 6>{"role", keys::custom_type(d), "content",
                                                         "display", "details", "timestamp"},
                         s);
        CustomMessage m;
        m.custom_type = take_string(s[1], ctx, path / keys::custom_type(d));
        m.content = read_content(s[2], d, ctx, path / "content");
        m.display_omitted = absent(s[3]);
        m.display = read_optional_bool(s[3], ctx, path / "display").value_or(false);
        m.details = take_json(s[4]);
        m.timestamp = read_int(s[5], ctx, path / "timestamp");
        m.extra = std::move(extra);
        return m;
    }
    if (role == roles::branch_summary(d)) {
        std::array<V, 4> s{};
        Json extra = split_fields(
            j, std::array<std::string_view, 4>{"role", "summary", keys::from_id(d), "timestamp"},
            s);
        BranchSummaryMessage m;
        m.summary = take_string(s[1], ctx, path / "summary");
        m.from_id = take_string(s[2], ctx, path / keys::from_id(d));
        m.timestamp = read_int(s[3], ctx, path / "timestamp");
        m.extra = std::move(extra);
        return m;
    }
    if (role == roles::compaction_summary(d)) {
        std::array<V, 4> s{};
        Json extra = split_fields(
            j,
            std::array<std::string_view, 4>{"role", "summary", keys::tokens_before(d), "timestamp"},
            s);
        CompactionSummaryMessage m;
        m.summary = take_string(s[1], ctx, path / "summary");
        m.tokens_before = read_int(s[2], ctx, path / keys::tokens_before(d));
        m.timestamp = read_int(s[3], ctx, path / "timestamp");
        m.extra = std::move(extra);
        return m;
    }
    std::string opaque_role(role);
    return OpaqueMessage{std::move(opaque_role), whole_json(j)};
}

// ---------------------------------------------------------------------------------------------
// Writing
//
// Each put_* writes the fields of one object into a sink (codec_sinks.hpp): an ObjectBuilder
// for the *_to_json functions, a TextObject for encode_entry. The write_* functions build the
// JSON value.

/// An opaque value written back as read; `tag_key` (type/role) follows the struct when set.
template <class T = void>
Json write_opaque(const dependent<Json, T>& raw, std::string_view tag_key, const std::string& tag) {
    if (!raw.is_object()) {
        dependent<ObjectBuilder, T> b;
        b.add(tag_key, tag);
        return b.take();
    }
    dependent<Json, T> out = raw;
    if (!tag.empty()) {
        auto it = out.find(tag_key);
        if (it == out.end() || !it->is_string() ||
            it->template get_ref<const std::string&>() != tag)
            out[std::string(tag_key)] = tag;
    }
    return out;
}

/// True when the opaque value `raw` is written as it is (write_opaque would change nothing).
template <class T = void>
bool opaque_as_read(const dependent<Json, T>& raw, std::string_view tag_key,
                    const std::string& tag) {
    if (!raw.is_object()) return false;
    if (tag.empty()) return true;
    auto it = raw.find(tag_key);
    return it != raw.end() && it->is_string() && it->template get_ref<const std::string&>() == tag;
}

/// The fields of an opaque value, as write_opaque gives them.
template <class O, class T = void>
void put_opaque(O& o, const dependent<Json, T>& raw, std::string_view tag_key,
                const std::string& tag) {
    if (opaque_as_read<T>(raw, tag_key, tag))
        o.add_fields(raw);
    else
        o.add_fields(write_opaque<T>(raw, tag_key, tag));
}

template <class O, class T = void>
void put_block(O& o, const dependent<ContentBlock, T>& block, Dialect d) {
    std::visit(
        [&o, d](const auto& b) {
            using E = std::decay_t<decltype(b)>;
            if constexpr (std::is_same_v<E, OpaqueContent>) {
                put_opaque<O, T>(o, b.raw, "type", b.type);
                return;
            } else if constexpr (std::is_same_v<E, TextContent>) {
                o.add_string("type", "text");
                o.add_string("text", b.text);
            } else if constexpr (std::is_same_v<E, ImageContent>) {
                o.add_string("type", "image");
                o.add_string("data", b.data);
                o.add_string(keys::mime_type(d), b.mime_type);
            } else if constexpr (std::is_same_v<E, ThinkingContent>) {
                o.add_string("type", "thinking");
                o.add_string("thinking", b.thinking);
            } else {
                static_assert(std::is_same_v<E, ToolCallContent>);
                o.add_string("type", block_types::tool_call(d));
                o.add_string("id", b.id);
                o.add_string("name", b.name);
                if (b.arguments.is_null())
                    o.add_object("arguments", [](auto&) {});
                else
                    o.add_json("arguments", b.arguments);
            }
            if constexpr (!std::is_same_v<E, OpaqueContent>) o.add_extra(b.extra);
        },
        block);
}

template <class O, class T = void>
void put_blocks(O& o, std::string_view key, const dependent<std::vector<ContentBlock>, T>& blocks,
                Dialect d) {
    o.add_array(key, [&blocks, d](auto& a) {
        for (const auto& b : blocks) a.add_object([&b, d](auto& ob) { put_block(ob, b, d); });
    });
}

template <class O, class T = void>
void put_content(O& o, std::string_view key, const dependent<Content, T>& content, Dialect d) {
    if (const auto* text = std::get_if<std::string>(&content))
        o.add_string(key, *text);
    else
        put_blocks(o, key, std::get<std::vector<ContentBlock>>(content), d);
}

template <class O, class T = void>
void put_cost(O& o, const dependent<Cost, T>& c, Dialect d) {
    o.add_number("input", c.input);
    o.add_number("output", c.output);
    o.add_number(keys::cache_read(d), c.cache_read);
    o.add_number(keys::cache_write(d), c.cache_write);
    o.add_number("total", c.total);
    o.add_extra(c.extra);
}

template <class O, class T = void>
void put_usage(O& o, const dependent<Usage, T>& u, Dialect d) {
    o.add_int("input", u.input);
    o.add_int("output", u.output);
    o.add_int(keys::cache_read(d), u.cache_read);
    o.add_int(keys::cache_write(d), u.cache_write);
    o.add_int(keys::total_tokens(d), u.total_tokens);
    o.add_object("cost", [&u, d](auto& c) { put_cost(c, u.cost, d); });
    o.add_extra(u.extra);
}

template <class O, class T = void>
void put_message(O& o, const dependent<AgentMessage, T>& message, Dialect d) {
    std::visit(
        [&o, d](const auto& m) {
            using E = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<E, OpaqueMessage>) {
                put_opaque<O, T>(o, m.raw, "role", m.role);
                return;
            } else if constexpr (std::is_same_v<E, UserMessage>) {
                o.add_string("role", "user");
                put_content(o, "content", m.content, d);
                o.add_int("timestamp", m.timestamp);
            } else if constexpr (std::is_same_v<E, AssistantMessage>) {
                o.add_string("role", "assistant");
                put_blocks(o, "content", m.content, d);
                if (!m.api.empty()) o.add_string("api", m.api);
                o.add_string("provider", m.provider);
                o.add_string("model", m.model);
                o.add_object("usage", [&m, d](auto& u) { put_usage(u, m.usage, d); });
                o.add_string(keys::stop_reason(d), stop_reason_to_wire(m.stop_reason, d));
                if (d == Dialect::native) {
                    if (m.error_message) o.add_string("error_message", *m.error_message);
                    o.add_int("timestamp", m.timestamp);
                } else {
                    // pi's providers build the message with the timestamp and assign responseId
                    // and then errorMessage while streaming: errorMessage is the last key of
                    // the lines pi writes.
                    o.add_int("timestamp", m.timestamp);
                    o.add_extra(m.extra);
                    if (m.error_message) o.add_string("errorMessage", *m.error_message);
                    return;
                }
            } else if constexpr (std::is_same_v<E, ToolResultMessage>) {
                o.add_string("role", roles::tool_result(d));
                o.add_string(keys::tool_call_id(d), m.tool_call_id);
                o.add_string(keys::tool_name(d), m.tool_name);
                put_blocks(o, "content", m.content, d);
                if (!m.details.is_null()) o.add_json("details", m.details);
                if (m.is_error || !m.is_error_omitted) o.add_bool(keys::is_error(d), m.is_error);
                o.add_int("timestamp", m.timestamp);
            } else if constexpr (std::is_same_v<E, BashExecutionMessage>) {
                o.add_string("role", roles::bash_execution(d));
                o.add_string("command", m.command);
                o.add_string("output", m.output);
                if (m.exit_code) o.add_int(keys::exit_code(d), *m.exit_code);
                o.add_bool("cancelled", m.cancelled);
                o.add_bool("truncated", m.truncated);
                if (m.full_output_path)
                    o.add_string(keys::full_output_path(d), *m.full_output_path);
                if (d == Dialect::native) {
                    if (m.exclude_from_context)
                        o.add_bool("exclude_from_context", *m.exclude_from_context);
                    o.add_int("timestamp", m.timestamp);
                } else {
                    // pi's bash message literal puts excludeFromContext after the timestamp.
                    o.add_int("timestamp", m.timestamp);
                    if (m.exclude_from_context)
                        o.add_bool("excludeFromContext", *m.exclude_from_context);
                }
            } else if constexpr (std::is_same_v<E, CustomMessage>) {
                o.add_string("role", "custom");
                o.add_string(keys::custom_type(d), m.custom_type);
                put_content(o, "content", m.content, d);
                if (m.display || !m.display_omitted) o.add_bool("display", m.display);
                if (!m.details.is_null()) o.add_json("details", m.details);
                o.add_int("timestamp", m.timestamp);
            } else if constexpr (std::is_same_v<E, BranchSummaryMessage>) {
                o.add_string("role", roles::branch_summary(d));
                o.add_string("summary", m.summary);
                o.add_string(keys::from_id(d), m.from_id);
                o.add_int("timestamp", m.timestamp);
            } else {
                static_assert(std::is_same_v<E, CompactionSummaryMessage>);
                o.add_string("role", roles::compaction_summary(d));
                o.add_string("summary", m.summary);
                o.add_int(keys::tokens_before(d), m.tokens_before);
                o.add_int("timestamp", m.timestamp);
            }
            if constexpr (!std::is_same_v<E, OpaqueMessage>) o.add_extra(m.extra);
        },
        message);
}

template <class T = void>
Json write_block(const dependent<ContentBlock, T>& block, Dialect d) {
    dependent<ObjectBuilder, T> o;
    put_block(o, block, d);
    return o.take();
}

template <class T = void>
Json write_usage(const dependent<Usage, T>& u, Dialect d) {
    dependent<ObjectBuilder, T> o;
    put_usage(o, u, d);
    return o.take();
}

template <class T = void>
Json write_message(const dependent<AgentMessage, T>& message, Dialect d) {
    dependent<ObjectBuilder, T> o;
    put_message(o, message, d);
    return o.take();
}

}  // namespace agentcore::detail

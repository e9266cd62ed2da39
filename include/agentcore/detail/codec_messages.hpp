#pragma once
// The JSON codec of content blocks, usage and messages, in both dialects (SPEC §2.1, §2.2, §3).
//
// Readers take the JSON by reference and move strings and free-form values out of it; the
// fields the model does not know go into `extra` in their original order. Writers emit the
// modelled fields in a fixed order per dialect, then the extras.

#include <agentcore/detail/codec_read.hpp>
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

/// Builds a JSON object field by field, in order.
class ObjectBuilder {
public:
    ObjectBuilder() : json_(Json::value_t::object) {}

    /// Appends a modelled field (its key is not yet present).
    template <class T = void>
    void add(std::string_view key, dependent<Json, T> value) {
        dependent<Json::object_t, T>& out = fields();
        out.emplace_back(std::string(key), std::move(value));
    }

    /// Appends the fields of `extra` (an object or null); a key already written is skipped, so
    /// that an extra can never shadow a modelled field.
    template <class T = void>
    void add_extra(const dependent<Json, T>& extra) {
        if (extra.is_null()) return;
        if (!extra.is_object())
            throw SessionError(
                ErrorCode::invalid_entry,
                std::string("'extra' must be a JSON object or null, not ") + extra.type_name());
        dependent<Json::object_t, T>& out = fields();
        for (const auto& field : extra.template get_ref<const Json::object_t&>()) {
            bool taken = false;
            for (const auto& existing : out) {
                if (existing.first == field.first) {
                    taken = true;
                    break;
                }
            }
            if (!taken) out.emplace_back(field.first, field.second);
        }
    }

    [[nodiscard]] Json take() { return std::move(json_); }

private:
    Json::object_t& fields() { return json_.get_ref<Json::object_t&>(); }
    Json json_;
};

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

template <class = void>
void require_object(const Json& j, const ReadContext& ctx, const FieldPath& path) {
    if (!j.is_object()) ctx.expected(path, "an object", j);
}

template <class T = void>
ContentBlock read_block(dependent<Json, T>& j, Dialect d, const ReadContext& ctx,
                        const FieldPath& path) {
    require_object(j, ctx, path);
    auto type_it = j.find("type");
    if (type_it == j.end()) ctx.missing(path / "type");
    if (!type_it->is_string()) ctx.expected(path / "type", "a string", *type_it);
    const auto& type = type_it->template get_ref<const std::string&>();

    if (type == "text") {
        std::array<Json*, 2> s{};
        Json extra = split_fields(j, std::array<std::string_view, 2>{"type", "text"}, s);
        return TextContent{take_string(s[1], ctx, path / "text"), std::move(extra)};
    }
    if (type == "image") {
        std::array<Json*, 3> s{};
        Json extra =
            split_fields(j, std::array<std::string_view, 3>{"type", "data", keys::mime_type(d)}, s);
        ImageContent b;
        b.data = take_string(s[1], ctx, path / "data");
        b.mime_type = take_string(s[2], ctx, path / keys::mime_type(d));
        b.extra = std::move(extra);
        return b;
    }
    if (type == "thinking") {
        std::array<Json*, 2> s{};
        Json extra = split_fields(j, std::array<std::string_view, 2>{"type", "thinking"}, s);
        return ThinkingContent{take_string(s[1], ctx, path / "thinking"), std::move(extra)};
    }
    if (type == block_types::tool_call(d)) {
        std::array<Json*, 4> s{};
        Json extra =
            split_fields(j, std::array<std::string_view, 4>{"type", "id", "name", "arguments"}, s);
        ToolCallContent b;
        b.id = take_string(s[1], ctx, path / "id");
        b.name = take_string(s[2], ctx, path / "name");
        b.arguments = take_object(s[3], ctx, path / "arguments");
        b.extra = std::move(extra);
        return b;
    }
    std::string opaque_type = type;
    return OpaqueContent{std::move(opaque_type), std::move(j)};
}

template <class T = void>
std::vector<ContentBlock> read_blocks(dependent<Json, T>* v, Dialect d, const ReadContext& ctx,
                                      const FieldPath& path) {
    if (v == nullptr) ctx.missing(path);
    if (!v->is_array()) ctx.expected(path, "an array of content blocks", *v);
    auto& items = v->template get_ref<typename dependent<Json, T>::array_t&>();
    std::vector<dependent<ContentBlock, T>> blocks;
    blocks.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i)
        blocks.push_back(read_block(items[i], d, ctx, path[i]));
    return blocks;
}

/// Content that is a string or a list of blocks; which one is kept.
template <class = void>
Content read_content(Json* v, Dialect d, const ReadContext& ctx, const FieldPath& path) {
    if (v == nullptr) ctx.missing(path);
    if (v->is_string()) return std::move(v->get_ref<std::string&>());
    if (!v->is_array()) ctx.expected(path, "a string or an array of content blocks", *v);
    return read_blocks(v, d, ctx, path);
}

template <class = void>
Cost read_cost(Json& j, Dialect d, const ReadContext& ctx, const FieldPath& path) {
    require_object(j, ctx, path);
    std::array<Json*, 5> s{};
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

template <class = void>
Usage read_usage(Json& j, Dialect d, const ReadContext& ctx, const FieldPath& path) {
    require_object(j, ctx, path);
    std::array<Json*, 6> s{};
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
    if (s[5] == nullptr) ctx.missing(path / "cost");
    u.cost = read_cost(*s[5], d, ctx, path / "cost");
    u.extra = std::move(extra);
    return u;
}

template <class Message = AgentMessage>
Message read_message(Json& j, Dialect d, const ReadContext& ctx, const FieldPath& path) {
    require_object(j, ctx, path);
    auto role_it = j.find("role");
    if (role_it == j.end()) ctx.missing(path / "role");
    if (!role_it->is_string()) ctx.expected(path / "role", "a string", *role_it);
    const auto& role = role_it->get_ref<const std::string&>();

    if (role == "user") {
        std::array<Json*, 3> s{};
        Json extra =
            split_fields(j, std::array<std::string_view, 3>{"role", "content", "timestamp"}, s);
        dependent<UserMessage, Message> m;
        m.content = read_content(s[1], d, ctx, path / "content");
        m.timestamp = read_int(s[2], ctx, path / "timestamp");
        m.extra = std::move(extra);
        return m;
    }
    if (role == "assistant") {
        std::array<Json*, 9> s{};
        Json extra = split_fields(j,
                                  std::array<std::string_view, 9>{
                                      "role", "content", "api", "provider", "model", "usage",
                                      keys::stop_reason(d), keys::error_message(d), "timestamp"},
                                  s);
        dependent<AssistantMessage, Message> m;
        m.content = read_blocks(s[1], d, ctx, path / "content");
        m.api = take_optional_string(s[2], ctx, path / "api").value_or(std::string());
        m.provider = take_string(s[3], ctx, path / "provider");
        m.model = take_string(s[4], ctx, path / "model");
        if (s[5] == nullptr) ctx.missing(path / "usage");
        m.usage = read_usage(*s[5], d, ctx, path / "usage");
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
        std::array<Json*, 7> s{};
        Json extra = split_fields(
            j,
            std::array<std::string_view, 7>{"role", keys::tool_call_id(d), keys::tool_name(d),
                                            "content", "details", keys::is_error(d), "timestamp"},
            s);
        dependent<ToolResultMessage, Message> m;
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
        std::array<Json*, 9> s{};
        Json extra = split_fields(
            j,
            std::array<std::string_view, 9>{"role", "command", "output", keys::exit_code(d),
                                            "cancelled", "truncated", keys::full_output_path(d),
                                            keys::exclude_from_context(d), "timestamp"},
            s);
        dependent<BashExecutionMessage, Message> m;
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
        std::array<Json*, 6> s{};
        Json extra =
            split_fields(j,
                         std::array<std::string_view, 6>{"role", keys::custom_type(d), "content",
                                                         "display", "details", "timestamp"},
                         s);
        dependent<CustomMessage, Message> m;
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
        std::array<Json*, 4> s{};
        Json extra = split_fields(
            j, std::array<std::string_view, 4>{"role", "summary", keys::from_id(d), "timestamp"},
            s);
        dependent<BranchSummaryMessage, Message> m;
        m.summary = take_string(s[1], ctx, path / "summary");
        m.from_id = take_string(s[2], ctx, path / keys::from_id(d));
        m.timestamp = read_int(s[3], ctx, path / "timestamp");
        m.extra = std::move(extra);
        return m;
    }
    if (role == roles::compaction_summary(d)) {
        std::array<Json*, 4> s{};
        Json extra = split_fields(
            j,
            std::array<std::string_view, 4>{"role", "summary", keys::tokens_before(d), "timestamp"},
            s);
        dependent<CompactionSummaryMessage, Message> m;
        m.summary = take_string(s[1], ctx, path / "summary");
        m.tokens_before = read_int(s[2], ctx, path / keys::tokens_before(d));
        m.timestamp = read_int(s[3], ctx, path / "timestamp");
        m.extra = std::move(extra);
        return m;
    }
    std::string opaque_role = role;
    return OpaqueMessage{std::move(opaque_role), std::move(j)};
}

// ---------------------------------------------------------------------------------------------
// Writing

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

template <class T = void>
Json write_block(const dependent<ContentBlock, T>& block, Dialect d) {
    return std::visit(
        [d](const auto& b) -> dependent<Json, T> {
            using E = std::decay_t<decltype(b)>;
            if constexpr (std::is_same_v<E, OpaqueContent>) {
                return write_opaque(b.raw, "type", b.type);
            } else {
                dependent<ObjectBuilder, T> o;
                if constexpr (std::is_same_v<E, TextContent>) {
                    o.add("type", "text");
                    o.add("text", b.text);
                } else if constexpr (std::is_same_v<E, ImageContent>) {
                    o.add("type", "image");
                    o.add("data", b.data);
                    o.add(keys::mime_type(d), b.mime_type);
                } else if constexpr (std::is_same_v<E, ThinkingContent>) {
                    o.add("type", "thinking");
                    o.add("thinking", b.thinking);
                } else {
                    static_assert(std::is_same_v<E, ToolCallContent>);
                    o.add("type", block_types::tool_call(d));
                    o.add("id", b.id);
                    o.add("name", b.name);
                    o.add("arguments", b.arguments.is_null() ? Json::object() : b.arguments);
                }
                o.add_extra(b.extra);
                return o.take();
            }
        },
        block);
}

template <class T = void>
Json write_blocks(const dependent<std::vector<ContentBlock>, T>& blocks, Dialect d) {
    dependent<Json, T> out = Json::array();
    auto& items = out.template get_ref<typename dependent<Json, T>::array_t&>();
    items.reserve(blocks.size());
    for (const auto& b : blocks) items.push_back(write_block(b, d));
    return out;
}

template <class T = void>
Json write_content(const dependent<Content, T>& content, Dialect d) {
    if (const auto* text = std::get_if<std::string>(&content)) return *text;
    return write_blocks(std::get<std::vector<ContentBlock>>(content), d);
}

template <class T = void>
Json write_cost(const dependent<Cost, T>& c, Dialect d) {
    dependent<ObjectBuilder, T> o;
    o.add("input", c.input);
    o.add("output", c.output);
    o.add(keys::cache_read(d), c.cache_read);
    o.add(keys::cache_write(d), c.cache_write);
    o.add("total", c.total);
    o.add_extra(c.extra);
    return o.take();
}

template <class T = void>
Json write_usage(const dependent<Usage, T>& u, Dialect d) {
    dependent<ObjectBuilder, T> o;
    o.add("input", u.input);
    o.add("output", u.output);
    o.add(keys::cache_read(d), u.cache_read);
    o.add(keys::cache_write(d), u.cache_write);
    o.add(keys::total_tokens(d), u.total_tokens);
    o.add("cost", write_cost(u.cost, d));
    o.add_extra(u.extra);
    return o.take();
}

template <class T = void>
Json write_message(const dependent<AgentMessage, T>& message, Dialect d) {
    return std::visit(
        [d](const auto& m) -> dependent<Json, T> {
            using E = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<E, OpaqueMessage>) {
                return write_opaque(m.raw, "role", m.role);
            } else {
                dependent<ObjectBuilder, T> o;
                if constexpr (std::is_same_v<E, UserMessage>) {
                    o.add("role", "user");
                    o.add("content", write_content(m.content, d));
                    o.add("timestamp", m.timestamp);
                } else if constexpr (std::is_same_v<E, AssistantMessage>) {
                    o.add("role", "assistant");
                    o.add("content", write_blocks(m.content, d));
                    if (!m.api.empty()) o.add("api", m.api);
                    o.add("provider", m.provider);
                    o.add("model", m.model);
                    o.add("usage", write_usage(m.usage, d));
                    o.add(keys::stop_reason(d), stop_reason_to_wire(m.stop_reason, d));
                    if (d == Dialect::native) {
                        if (m.error_message) o.add("error_message", *m.error_message);
                        o.add("timestamp", m.timestamp);
                    } else {
                        // pi's providers build the message with the timestamp and assign
                        // responseId and then errorMessage while streaming: errorMessage is the
                        // last key of the lines pi writes.
                        o.add("timestamp", m.timestamp);
                        o.add_extra(m.extra);
                        if (m.error_message) o.add("errorMessage", *m.error_message);
                        return o.take();
                    }
                } else if constexpr (std::is_same_v<E, ToolResultMessage>) {
                    o.add("role", roles::tool_result(d));
                    o.add(keys::tool_call_id(d), m.tool_call_id);
                    o.add(keys::tool_name(d), m.tool_name);
                    o.add("content", write_blocks(m.content, d));
                    if (!m.details.is_null()) o.add("details", m.details);
                    if (m.is_error || !m.is_error_omitted) o.add(keys::is_error(d), m.is_error);
                    o.add("timestamp", m.timestamp);
                } else if constexpr (std::is_same_v<E, BashExecutionMessage>) {
                    o.add("role", roles::bash_execution(d));
                    o.add("command", m.command);
                    o.add("output", m.output);
                    if (m.exit_code) o.add(keys::exit_code(d), *m.exit_code);
                    o.add("cancelled", m.cancelled);
                    o.add("truncated", m.truncated);
                    if (m.full_output_path) o.add(keys::full_output_path(d), *m.full_output_path);
                    if (d == Dialect::native) {
                        if (m.exclude_from_context)
                            o.add("exclude_from_context", *m.exclude_from_context);
                        o.add("timestamp", m.timestamp);
                    } else {
                        // pi's bash message literal puts excludeFromContext after the timestamp.
                        o.add("timestamp", m.timestamp);
                        if (m.exclude_from_context)
                            o.add("excludeFromContext", *m.exclude_from_context);
                    }
                } else if constexpr (std::is_same_v<E, CustomMessage>) {
                    o.add("role", "custom");
                    o.add(keys::custom_type(d), m.custom_type);
                    o.add("content", write_content(m.content, d));
                    if (m.display || !m.display_omitted) o.add("display", m.display);
                    if (!m.details.is_null()) o.add("details", m.details);
                    o.add("timestamp", m.timestamp);
                } else if constexpr (std::is_same_v<E, BranchSummaryMessage>) {
                    o.add("role", roles::branch_summary(d));
                    o.add("summary", m.summary);
                    o.add(keys::from_id(d), m.from_id);
                    o.add("timestamp", m.timestamp);
                } else {
                    static_assert(std::is_same_v<E, CompactionSummaryMessage>);
                    o.add("role", roles::compaction_summary(d));
                    o.add("summary", m.summary);
                    o.add(keys::tokens_before(d), m.tokens_before);
                    o.add("timestamp", m.timestamp);
                }
                o.add_extra(m.extra);
                return o.take();
            }
        },
        message);
}

}  // namespace agentcore::detail

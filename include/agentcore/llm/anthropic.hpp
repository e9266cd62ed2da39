#pragma once
// Anthropic Messages: the request body, the whole response and the streamed response.
//
// A thinking block keeps Anthropic's signature in its `thinkingSignature`; a redacted thinking
// block is a thinking block with `redacted: true` and the encrypted data as its signature. Both
// are sent back unchanged to the same model, as the API requires.

#include <agentcore/json.hpp>
#include <agentcore/llm/reply.hpp>
#include <agentcore/llm/request.hpp>
#include <agentcore/llm/usage.hpp>
#include <agentcore/messages.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore::llm {

namespace detail {

inline std::string anthropic_tool_call_id(const std::string& id, const ModelSpec&,
                                          const AssistantMessage&) {
    return sanitize_id(id, 64);
}

// Models that take adaptive thinking with an effort instead of a token budget.
inline bool anthropic_adaptive_thinking(std::string_view id) {
    for (std::string_view s :
         {"opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6"})
        if (id.find(s) != std::string_view::npos) return true;
    return false;
}

inline Json anthropic_image(const ImageContent& i) {
    return Json{
        {"type", "image"},
        {"source", Json{{"type", "base64"}, {"media_type", i.mime_type}, {"data", i.data}}}};
}

inline Json anthropic_result_content(const std::vector<ContentBlock>& content) {
    if (!has_image(content)) return wire_text(joined_text(content, "\n"));
    Json blocks = Json::array();
    bool text = false;
    for (const auto& b : content) {
        if (const auto* t = std::get_if<TextContent>(&b)) {
            blocks.push_back(Json{{"type", "text"}, {"text", wire_text(t->text)}});
            text = true;
        } else if (const auto* i = std::get_if<ImageContent>(&b)) {
            blocks.push_back(anthropic_image(*i));
        }
    }
    if (!text)
        blocks.insert(blocks.begin(), Json{{"type", "text"}, {"text", "(see attached image)"}});
    return blocks;
}

inline Json anthropic_messages(const Prepared& messages, const Json& cache) {
    Json out = Json::array();
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const AgentMessage& message = messages[i];
        if (const auto* u = std::get_if<UserMessage>(&message)) {
            if (const auto* s = std::get_if<std::string>(&u->content)) {
                if (!is_blank(*s))
                    out.push_back(Json{{"role", "user"}, {"content", wire_text(*s)}});
                continue;
            }
            Json blocks = Json::array();
            for (const auto& b : std::get<std::vector<ContentBlock>>(u->content)) {
                if (const auto* t = std::get_if<TextContent>(&b)) {
                    if (!is_blank(t->text))
                        blocks.push_back(Json{{"type", "text"}, {"text", wire_text(t->text)}});
                } else if (const auto* img = std::get_if<ImageContent>(&b)) {
                    blocks.push_back(anthropic_image(*img));
                }
            }
            if (!blocks.empty())
                out.push_back(Json{{"role", "user"}, {"content", std::move(blocks)}});
        } else if (const auto* a = std::get_if<AssistantMessage>(&message)) {
            Json blocks = Json::array();
            for (const auto& b : a->content) {
                if (const auto* t = std::get_if<TextContent>(&b)) {
                    if (!is_blank(t->text))
                        blocks.push_back(Json{{"type", "text"}, {"text", wire_text(t->text)}});
                } else if (const auto* th = std::get_if<ThinkingContent>(&b)) {
                    const std::string* sig = extra_string(th->extra, thinking_signature_key);
                    if (extra_flag(th->extra, redacted_key)) {
                        blocks.push_back(Json{{"type", "redacted_thinking"},
                                              {"data", sig ? *sig : std::string()}});
                        continue;
                    }
                    if (is_blank(th->thinking)) continue;
                    if (!sig || is_blank(*sig))
                        blocks.push_back(Json{{"type", "text"}, {"text", wire_text(th->thinking)}});
                    else
                        blocks.push_back(Json{{"type", "thinking"},
                                              {"thinking", wire_text(th->thinking)},
                                              {"signature", *sig}});
                } else if (const auto* c = std::get_if<ToolCallContent>(&b)) {
                    blocks.push_back(Json{{"type", "tool_use"},
                                          {"id", c->id},
                                          {"name", c->name},
                                          {"input", c->arguments}});
                }
            }
            if (!blocks.empty())
                out.push_back(Json{{"role", "assistant"}, {"content", std::move(blocks)}});
        } else if (std::holds_alternative<ToolResultMessage>(message)) {
            Json results = Json::array();
            std::size_t j = i;
            for (; j < messages.size() && std::holds_alternative<ToolResultMessage>(messages[j]);
                 ++j) {
                const auto& r = std::get<ToolResultMessage>(messages[j]);
                results.push_back(Json{{"type", "tool_result"},
                                       {"tool_use_id", r.tool_call_id},
                                       {"content", anthropic_result_content(r.content)},
                                       {"is_error", r.is_error}});
            }
            i = j - 1;
            out.push_back(Json{{"role", "user"}, {"content", std::move(results)}});
        }
    }
    // The cache marker on the last user turn (its last text, image or tool result block).
    if (!cache.is_null() && !out.empty() && out.back()["role"] == "user") {
        Json& content = out.back()["content"];
        if (content.is_string()) {
            content = Json::array({Json{
                {"type", "text"}, {"text", content.get<std::string>()}, {"cache_control", cache}}});
        } else if (content.is_array() && !content.empty()) {
            Json& last = content.back();
            const std::string type = string_or(&last, "type");
            if (type == "text" || type == "image" || type == "tool_result")
                last["cache_control"] = cache;
        }
    }
    return out;
}

inline std::string anthropic_stop_reason(std::string_view reason,
                                         std::optional<std::string>& error) {
    if (reason == "end_turn" || reason == "pause_turn" || reason == "stop_sequence") return "stop";
    if (reason == "max_tokens") return "length";
    if (reason == "tool_use") return "tool_use";
    if (reason == "refusal")
        error = "the model refused to answer (stop_reason refusal)";
    else if (reason == "sensitive")
        error = "the reply was flagged by safety filters (stop_reason sensitive)";
    else
        error = "unknown stop_reason '" + std::string(reason) + "'";
    return "error";
}

// Usage members present in `raw` replace those in `u`.
inline void anthropic_usage(Usage& u, const Json* raw, const Prices& prices) {
    auto take = [&](std::string_view key, std::int64_t& field) {
        if (const Json* v = member(raw, key); v && !v->is_null()) field = token_count(v);
    };
    take("input_tokens", u.input);
    take("output_tokens", u.output);
    take("cache_read_input_tokens", u.cache_read);
    take("cache_creation_input_tokens", u.cache_write);
    finish_usage(u, prices);
}

inline ContentBlock anthropic_block(AssistantMessage& m, const Json& b, bool& known) {
    const std::string type = string_or(&b, "type");
    known = true;
    if (type == "text") return TextContent{string_or(&b, "text"), {}};
    if (type == "thinking")
        return ThinkingContent{string_or(&b, "thinking"), Json{{std::string(thinking_signature_key),
                                                                string_or(&b, "signature")}}};
    if (type == "redacted_thinking")
        return ThinkingContent{"[Reasoning redacted]",
                               Json{{std::string(thinking_signature_key), string_or(&b, "data")},
                                    {std::string(redacted_key), true}}};
    if (type == "tool_use") {
        ToolCallContent call;
        call.id = string_or(&b, "id");
        call.name = string_or(&b, "name");
        const Json* input = member(b, "input");
        if (input && input->is_object())
            call.arguments = *input;
        else if (input && !input->is_null())
            set_tool_arguments(m, call, input->dump());
        return call;
    }
    known = false;
    return TextContent{};
}

}  // namespace detail

/// The request body of a Messages call (`POST /v1/messages`).
///
/// The system prompt becomes one system text block; user text and images become blocks (blank
/// text is left out, as the API rejects it); an assistant message text, `thinking` (with its
/// signature; without one, as text), `redacted_thinking` and `tool_use` blocks; consecutive
/// tool results one user message of `tool_result` blocks. Tools take the application's schema
/// as `input_schema` ({type: object, properties, required}). The thinking level: for a
/// reasoning model, off → `thinking: {type: disabled}`; a level → adaptive thinking with
/// `output_config.effort` (Claude 4.6 and later) or `thinking: {type: enabled, budget_tokens}`
/// with the budget added to max_tokens (minimal 1024, low 2048, medium 8192, high and xhigh
/// 16384, capped at the model's limit). Prompt caching (unless CacheRetention::none) marks the
/// system block, the last tool and the last user block with `cache_control: {type: ephemeral}`
/// (`ttl: "1h"` for long_term). max_tokens is required by the API: without an option or a known
/// model limit it is 4096.
///
/// Throws nothing but for memory exhaustion. Complexity: linear in the size of the messages.
inline Json to_anthropic_messages(const std::vector<MessageHandle>& messages,
                                  const ModelSpec& model, const RequestOptions& options = {}) {
    const ModelSpec m = detail::with_api(model, anthropic_messages_api);
    const detail::Prepared prepared =
        detail::prepare_messages(messages, m, detail::anthropic_tool_call_id);
    Json cache;
    if (options.cache_retention != CacheRetention::none) {
        cache = Json{{"type", "ephemeral"}};
        if (options.cache_retention == CacheRetention::long_term) cache["ttl"] = "1h";
    }
    std::int64_t max_tokens = detail::default_max_tokens(m, options);
    if (max_tokens <= 0) max_tokens = 4096;
    const std::string level = detail::clamp_thinking_level(m, options.thinking_level);
    Json thinking, output_config;
    if (m.reasoning && level == "off") {
        thinking = Json{{"type", "disabled"}};
    } else if (m.reasoning && detail::anthropic_adaptive_thinking(m.id)) {
        thinking = Json{{"type", "adaptive"}, {"display", "summarized"}};
        output_config = Json{{"effort", level == "minimal" ? std::string("low") : level}};
    } else if (m.reasoning) {
        std::int64_t budget = level == "minimal"  ? 1024
                              : level == "low"    ? 2048
                              : level == "medium" ? 8192
                                                  : 16384;
        const std::int64_t limit =
            m.max_output_tokens > 0 ? m.max_output_tokens : max_tokens + budget;
        max_tokens = std::min(max_tokens + budget, limit);
        if (max_tokens <= budget) budget = std::max<std::int64_t>(0, max_tokens - 1024);
        thinking = Json{{"type", "enabled"}, {"budget_tokens", budget}, {"display", "summarized"}};
    }

    Json body{{"model", m.id},
              {"messages", detail::anthropic_messages(prepared, cache)},
              {"max_tokens", max_tokens},
              {"stream", options.stream}};
    if (!options.system_prompt.empty()) {
        Json block{{"type", "text"}, {"text", detail::wire_text(options.system_prompt)}};
        if (!cache.is_null()) block["cache_control"] = cache;
        body["system"] = Json::array({std::move(block)});
    }
    const bool thinking_on = thinking.is_object() && thinking["type"] != "disabled";
    if (options.temperature && !thinking_on) body["temperature"] = *options.temperature;
    if (!options.tools.empty()) {
        Json tools = Json::array();
        for (std::size_t i = 0; i < options.tools.size(); ++i) {
            const auto& t = options.tools[i];
            const Json* properties = detail::member(t.parameters, "properties");
            const Json* required = detail::member(t.parameters, "required");
            Json tool{
                {"name", t.name},
                {"description", t.description},
                {"eager_input_streaming", true},
                {"input_schema", Json{{"type", "object"},
                                      {"properties", properties ? *properties : Json::object()},
                                      {"required", required ? *required : Json::array()}}}};
            if (!cache.is_null() && i + 1 == options.tools.size()) tool["cache_control"] = cache;
            tools.push_back(std::move(tool));
        }
        body["tools"] = std::move(tools);
    }
    if (thinking.is_object()) body["thinking"] = std::move(thinking);
    if (output_config.is_object()) body["output_config"] = std::move(output_config);
    return body;
}

/// The assistant message of a whole Messages response (`stream: false`).
///
/// Content blocks: text, thinking (signature kept), redacted_thinking, tool_use. stop_reason:
/// end_turn, pause_turn, stop_sequence → stop; max_tokens → length; tool_use → tool_use;
/// refusal and others → error with a message. Usage: input, output, cache read
/// (`cache_read_input_tokens`) and cache write (`cache_creation_input_tokens`), cost from
/// `prices`. An error body (`{"type": "error", "error": {...}}`) gives stop_reason error with
/// "<type>: <message>". Never throws (but for memory exhaustion).
inline AssistantMessage parse_anthropic_response(std::string_view body, const ModelSpec& model,
                                                 const Prices& prices = {}, int http_status = 200) {
    AssistantMessage m = detail::empty_reply(model, anthropic_messages_api);
    std::optional<Json> json = detail::response_json(m, body, http_status);
    if (!json) return m;
    detail::set_response_id(m, &*json);
    if (const Json* content = detail::member(*json, "content"); content && content->is_array()) {
        for (const auto& b : *content) {
            bool known = false;
            ContentBlock block = detail::anthropic_block(m, b, known);
            if (known) m.content.push_back(std::move(block));
        }
    }
    if (const Json* usage = detail::member(*json, "usage"); usage && usage->is_object())
        detail::anthropic_usage(m.usage, usage, prices);
    else
        detail::add_diagnostic(m, "missing_usage", "the response has no usage");
    if (const std::string* reason = detail::string_at(&*json, "stop_reason"))
        m.stop_reason = detail::anthropic_stop_reason(*reason, m.error_message);
    return m;
}

/// Accumulates a streamed Messages response (`message_start`, `content_block_start/delta/stop`,
/// `message_delta`, `message_stop`; `ping` ignored).
///
/// Blocks are matched by their `index`; a delta for an index that was never started is ignored
/// and reported. Usage starts with message_start's and takes message_delta's counts. The stream
/// is complete with `message_stop`; one that ends before is an error ("the stream ended before
/// message_stop"), and an `error` event fails it with "<type>: <message>".
class AnthropicStream final : public StreamAccumulator {
public:
    explicit AnthropicStream(const ModelSpec& model, Prices prices = {})
        : StreamAccumulator(model, prices, anthropic_messages_api) {}

private:
    struct Open {
        std::int64_t index;
        std::size_t block;
        std::string args;
    };

    void on_event(const SseEvent& event) override {
        if (event.event == "ping" || event.data.empty()) return;
        std::optional<Json> j = event_json(event);
        if (!j) return;
        const std::string type = detail::string_or(&*j, "type", event.event);
        if (type == "error" || event.event == "error") {
            fail(detail::error_body_message(*j).value_or("error event"));
        } else if (type == "message_start") {
            const Json* msg = detail::member(*j, "message");
            detail::set_response_id(message_, msg);
            if (const Json* usage = detail::member(msg, "usage"); usage && usage->is_object()) {
                detail::anthropic_usage(message_.usage, usage, prices_);
                usage_seen_ = true;
            }
            started_ = true;
        } else if (type == "content_block_start") {
            const Json* b = detail::member(*j, "content_block");
            bool known = false;
            ContentBlock block = b ? detail::anthropic_block(message_, *b, known) : ContentBlock{};
            if (!known) {
                diagnostic("unknown_block", "a content block of type '" +
                                                detail::string_or(b, "type") + "' was ignored");
                return;
            }
            StreamEventType start = StreamEventType::text_start;
            if (auto* c = std::get_if<ToolCallContent>(&block)) {
                start = StreamEventType::toolcall_start;
                c->arguments = Json::object();  // the input streams as input_json_delta
            } else if (std::holds_alternative<ThinkingContent>(block)) {
                start = StreamEventType::thinking_start;
            }
            message_.content.push_back(std::move(block));
            open_.push_back(Open{index_of(*j), message_.content.size() - 1, {}});
            emit(start, message_.content.size() - 1, {});
        } else if (type == "content_block_delta") {
            Open* o = find(index_of(*j), type);
            if (!o) return;
            const Json* delta = detail::member(*j, "delta");
            const std::string kind = detail::string_or(delta, "type");
            auto& block = message_.content[o->block];
            if (kind == "text_delta" && std::holds_alternative<TextContent>(block)) {
                const std::string d = detail::string_or(delta, "text");
                std::get<TextContent>(block).text += d;
                emit(StreamEventType::text_delta, o->block, d);
            } else if (kind == "thinking_delta" && std::holds_alternative<ThinkingContent>(block)) {
                const std::string d = detail::string_or(delta, "thinking");
                std::get<ThinkingContent>(block).thinking += d;
                emit(StreamEventType::thinking_delta, o->block, d);
            } else if (kind == "signature_delta" &&
                       std::holds_alternative<ThinkingContent>(block)) {
                Json& sig = std::get<ThinkingContent>(block)
                                .extra[std::string(detail::thinking_signature_key)];
                sig = (sig.is_string() ? sig.get<std::string>() : std::string()) +
                      detail::string_or(delta, "signature");
            } else if (kind == "input_json_delta" &&
                       std::holds_alternative<ToolCallContent>(block)) {
                const std::string d = detail::string_or(delta, "partial_json");
                o->args += d;
                emit(StreamEventType::toolcall_delta, o->block, d);
            } else {
                diagnostic("out_of_order_event",
                           "a '" + kind + "' delta for a block of another kind");
            }
        } else if (type == "content_block_stop") {
            const std::int64_t index = index_of(*j);
            Open* o = find(index, type);
            if (!o) return;
            close(*o);
            open_.erase(open_.begin() + (o - open_.data()));
        } else if (type == "message_delta") {
            if (const std::string* reason =
                    detail::string_at(detail::member(*j, "delta"), "stop_reason"))
                message_.stop_reason =
                    detail::anthropic_stop_reason(*reason, message_.error_message);
            if (const Json* usage = detail::member(*j, "usage"); usage && usage->is_object()) {
                detail::anthropic_usage(message_.usage, usage, prices_);
                usage_seen_ = true;
            }
        } else if (type == "message_stop") {
            stopped_ = true;
        }
    }

    static std::int64_t index_of(const Json& j) {
        const Json* index = detail::member(j, "index");
        return index && index->is_number_integer() ? index->get<std::int64_t>() : -1;
    }

    Open* find(std::int64_t index, std::string_view event) {
        for (auto& o : open_)
            if (o.index == index) return &o;
        diagnostic("out_of_order_event", "'" + std::string(event) + "' for block " +
                                             std::to_string(index) + ", which is not open");
        return nullptr;
    }

    void close(Open& o) {
        auto& block = message_.content[o.block];
        if (auto* t = std::get_if<TextContent>(&block))
            emit(StreamEventType::text_end, o.block, t->text);
        else if (auto* th = std::get_if<ThinkingContent>(&block))
            emit(StreamEventType::thinking_end, o.block, th->thinking);
        else if (auto* c = std::get_if<ToolCallContent>(&block)) {
            detail::set_tool_arguments(message_, *c, o.args);
            emit(StreamEventType::toolcall_end, o.block, o.args);
        }
    }

    void close_blocks() override {
        for (auto& o : open_) close(o);
        open_.clear();
    }

    void end_of_stream() override {
        close_blocks();
        if (!stopped_) {
            detail::fail(message_, started_ ? "the stream ended before message_stop"
                                            : "the stream ended before message_start");
            return;
        }
        if (!usage_seen_) diagnostic("missing_usage", "the stream carried no usage");
    }

    std::vector<Open> open_;
    bool started_ = false;
    bool stopped_ = false;
    bool usage_seen_ = false;
};

}  // namespace agentcore::llm

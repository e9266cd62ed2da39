#pragma once
// The OpenAI Responses API: the request body, the whole response and the streamed response.
//
// Tool call ids are "<call_id>|<item id>" (pi's convention), so that a replay sends both back.
// A reasoning item is kept whole, as JSON text, in the thinking block's `thinkingSignature`
// (with its encrypted content when the request asked for it); a message item's id in the text
// block's `textSignature` ({"v":1,"id":...}).

#include <agentcore/json.hpp>
#include <agentcore/llm/reply.hpp>
#include <agentcore/llm/request.hpp>
#include <agentcore/llm/usage.hpp>
#include <agentcore/messages.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore::llm {

namespace detail {

// pi's shortHash (over bytes here; ids are ASCII).
inline std::string short_hash(std::string_view s) {
    auto imul = [](std::uint32_t a, std::uint32_t b) { return static_cast<std::uint32_t>(a * b); };
    std::uint32_t h1 = 0xdeadbeefu, h2 = 0x41c6ce57u;
    for (char c : s) {
        const std::uint32_t ch = static_cast<unsigned char>(c);
        h1 = imul(h1 ^ ch, 2654435761u);
        h2 = imul(h2 ^ ch, 1597334677u);
    }
    h1 = imul(h1 ^ (h1 >> 16), 2246822507u) ^ imul(h2 ^ (h2 >> 13), 3266489909u);
    h2 = imul(h2 ^ (h2 >> 16), 2246822507u) ^ imul(h1 ^ (h1 >> 13), 3266489909u);
    auto base36 = [](std::uint32_t v) {
        std::string out;
        do {
            out.insert(out.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36]);
            v /= 36;
        } while (v != 0);
        return out;
    };
    return base36(h2) + base36(h1);
}

inline std::string responses_id_part(std::string_view part) {
    std::string s = sanitize_id(part, 64);
    while (!s.empty() && s.back() == '_') s.pop_back();
    return s;
}

inline std::string responses_tool_call_id(const std::string& id, const ModelSpec& model,
                                          const AssistantMessage& source) {
    const bool openai_ids = model.provider == "openai" || model.provider == "openai-codex" ||
                            model.provider == "opencode";
    const auto bar = id.find('|');
    if (!openai_ids || bar == std::string::npos) return responses_id_part(id);
    const std::string call_id = responses_id_part(id.substr(0, bar));
    std::string item = id.substr(bar + 1);
    item = item.substr(0, item.find('|'));
    const bool foreign = source.provider != model.provider || source.api != model.api;
    std::string item_id =
        foreign ? ("fc_" + short_hash(item)).substr(0, 64) : responses_id_part(item);
    if (item_id.rfind("fc_", 0) != 0) item_id = responses_id_part("fc_" + item_id);
    return call_id + "|" + item_id;
}

inline Json responses_image(const ImageContent& image) {
    return Json{{"type", "input_image"}, {"detail", "auto"}, {"image_url", data_url(image)}};
}

inline Json responses_input(const Prepared& messages, const ModelSpec& model,
                            const RequestOptions& options) {
    Json out = Json::array();
    if (!options.system_prompt.empty())
        out.push_back(Json{{"role", model.reasoning ? "developer" : "system"},
                           {"content", wire_text(options.system_prompt)}});
    std::size_t index = 0;
    for (const auto& message : messages) {
        if (const auto* u = std::get_if<UserMessage>(&message)) {
            Json parts = Json::array();
            if (const auto* s = std::get_if<std::string>(&u->content)) {
                parts.push_back(Json{{"type", "input_text"}, {"text", wire_text(*s)}});
            } else {
                for (const auto& b : std::get<std::vector<ContentBlock>>(u->content)) {
                    if (const auto* t = std::get_if<TextContent>(&b))
                        parts.push_back(Json{{"type", "input_text"}, {"text", wire_text(t->text)}});
                    else if (const auto* i = std::get_if<ImageContent>(&b))
                        parts.push_back(responses_image(*i));
                }
                if (parts.empty()) continue;
            }
            out.push_back(Json{{"role", "user"}, {"content", std::move(parts)}});
        } else if (const auto* a = std::get_if<AssistantMessage>(&message)) {
            const bool other_model =
                a->model != model.id && a->provider == model.provider && a->api == model.api;
            Json items = Json::array();
            for (const auto& b : a->content) {
                if (const auto* th = std::get_if<ThinkingContent>(&b)) {
                    if (const std::string* sig = extra_string(th->extra, thinking_signature_key);
                        sig && !sig->empty())
                        if (auto item = parse_untrusted(*sig)) items.push_back(std::move(*item));
                } else if (const auto* t = std::get_if<TextContent>(&b)) {
                    std::string id;
                    std::optional<std::string> phase;
                    if (const std::string* sig = extra_string(t->extra, text_signature_key);
                        sig && !sig->empty()) {
                        id = *sig;
                        if (sig->front() == '{')
                            if (auto parsed = parse_untrusted(*sig);
                                parsed && parsed->value("v", 0) == 1)
                                if (const std::string* pid = string_at(&*parsed, "id")) {
                                    id = *pid;
                                    const std::string p = string_or(&*parsed, "phase");
                                    if (p == "commentary" || p == "final_answer") phase = p;
                                }
                    }
                    if (id.empty())
                        id = "msg_" + std::to_string(index);
                    else if (id.size() > 64)
                        id = "msg_" + short_hash(id);
                    Json item{{"type", "message"},
                              {"role", "assistant"},
                              {"content", Json::array({Json{{"type", "output_text"},
                                                            {"text", wire_text(t->text)},
                                                            {"annotations", Json::array()}}})},
                              {"status", "completed"},
                              {"id", id}};
                    if (phase) item["phase"] = *phase;
                    items.push_back(std::move(item));
                } else if (const auto* c = std::get_if<ToolCallContent>(&b)) {
                    const auto bar = c->id.find('|');
                    const std::string call_id = c->id.substr(0, bar);
                    std::optional<std::string> item_id;
                    if (bar != std::string::npos) {
                        std::string rest = c->id.substr(bar + 1);
                        item_id = rest.substr(0, rest.find('|'));
                    }
                    if (other_model && item_id && item_id->rfind("fc_", 0) == 0) item_id.reset();
                    Json item{{"type", "function_call"}};
                    if (item_id) item["id"] = *item_id;
                    item["call_id"] = call_id;
                    item["name"] = c->name;
                    item["arguments"] = js_stringify(c->arguments);
                    items.push_back(std::move(item));
                }
            }
            if (items.empty()) continue;
            for (auto& item : items) out.push_back(std::move(item));
        } else if (const auto* r = std::get_if<ToolResultMessage>(&message)) {
            const std::string text = joined_text(r->content, "\n");
            Json output;
            if (has_image(r->content) && model.images) {
                output = Json::array();
                if (!text.empty())
                    output.push_back(Json{{"type", "input_text"}, {"text", wire_text(text)}});
                for (const auto& b : r->content)
                    if (const auto* i = std::get_if<ImageContent>(&b))
                        output.push_back(responses_image(*i));
            } else {
                output = wire_text(text.empty() ? "(see attached image)" : text);
            }
            out.push_back(Json{{"type", "function_call_output"},
                               {"call_id", r->tool_call_id.substr(0, r->tool_call_id.find('|'))},
                               {"output", std::move(output)}});
        }
        ++index;
    }
    return out;
}

inline Usage responses_usage(const Json* raw, const Prices& prices) {
    Usage u;
    const std::int64_t cached = count_at(member(raw, "input_tokens_details"), "cached_tokens");
    u.input = std::max<std::int64_t>(0, count_at(raw, "input_tokens") - cached);
    u.output = count_at(raw, "output_tokens");
    u.cache_read = cached;
    finish_usage(u, prices);
    // The provider's own total (it counts reasoning tokens the output count may not).
    if (member(raw, "total_tokens")) u.total_tokens = count_at(raw, "total_tokens");
    return u;
}

inline std::string reasoning_text(const Json& item) {
    auto join = [](const Json* parts) {
        std::string out;
        if (!parts || !parts->is_array()) return out;
        bool first = true;
        for (const auto& p : *parts) {
            if (!first) out += "\n\n";
            out += string_or(&p, "text");
            first = false;
        }
        return out;
    };
    std::string summary = join(member(item, "summary"));
    return summary.empty() ? join(member(item, "content")) : summary;
}

inline std::string message_item_text(const Json& item, bool& refused, std::string& refusal) {
    std::string out;
    if (const Json* parts = member(item, "content"); parts && parts->is_array())
        for (const auto& p : *parts) {
            if (string_or(&p, "type") == "refusal") {
                refused = true;
                refusal += string_or(&p, "refusal");
                out += string_or(&p, "refusal");
            } else {
                out += string_or(&p, "text");
            }
        }
    return out;
}

inline std::string text_signature(const Json& item) {
    Json sig{{"v", 1}, {"id", string_or(&item, "id")}};
    if (const std::string* phase = string_at(&item, "phase")) sig["phase"] = *phase;
    return js_stringify(sig);
}

// Applies a terminal response object (whole response, or response.completed / incomplete /
// failed): usage, stop reason, error.
inline void responses_finish(AssistantMessage& m, const Json& response, const Prices& prices,
                             bool& usage_seen) {
    set_response_id(m, &response);
    if (const Json* usage = member(response, "usage"); usage && usage->is_object()) {
        m.usage = responses_usage(usage, prices);
        usage_seen = true;
    }
    const std::string status = string_or(&response, "status");
    if (status == "incomplete") {
        m.stop_reason = "length";
        const std::string reason = string_or(member(response, "incomplete_details"), "reason");
        if (!reason.empty() && reason != "max_output_tokens") fail(m, "incomplete: " + reason);
    } else if (status == "failed" || status == "cancelled") {
        const Json* error = member(response, "error");
        fail(m, error && error->is_object() ? string_or(error, "code", "unknown") + ": " +
                                                  string_or(error, "message", "no message")
                                            : "response " + status);
    } else {
        m.stop_reason = "stop";
        for (const auto& b : m.content)
            if (std::holds_alternative<ToolCallContent>(b)) m.stop_reason = "tool_use";
    }
}

}  // namespace detail

/// The request body of a Responses call (`POST /v1/responses`).
///
/// The system prompt becomes the first input item (`developer` for a reasoning model); user
/// content `input_text`/`input_image` parts; an assistant message its reasoning items (replayed
/// from `thinkingSignature`), `message` items (id from `textSignature`, else `msg_<n>`) and
/// `function_call` items; a tool result a `function_call_output`. For a reasoning model the
/// thinking level becomes `reasoning: {effort, summary: "auto"}` with the encrypted reasoning
/// included, and level off `reasoning: {effort: "none"}`. `store` is false.
///
/// Throws nothing but for memory exhaustion and SessionError(invalid_entry) for tool arguments
/// that are not UTF-8. Complexity: linear in the size of the messages.
inline Json to_openai_responses(const std::vector<MessageHandle>& messages, const ModelSpec& model,
                                const RequestOptions& options = {}) {
    const ModelSpec m = detail::with_api(model, openai_responses_api);
    const detail::Prepared prepared =
        detail::prepare_messages(messages, m, detail::responses_tool_call_id);
    Json body{{"model", m.id},
              {"input", detail::responses_input(prepared, m, options)},
              {"stream", options.stream}};
    detail::add_prompt_cache_fields(body, options);
    body["store"] = false;
    if (const auto max = detail::default_max_tokens(m, options); max > 0)
        body["max_output_tokens"] = max;
    if (options.temperature) body["temperature"] = *options.temperature;
    if (!options.tools.empty()) {
        Json tools = Json::array();
        for (const auto& t : options.tools)
            tools.push_back(Json{{"type", "function"},
                                 {"name", t.name},
                                 {"description", t.description},
                                 {"parameters", t.parameters},
                                 {"strict", false}});
        body["tools"] = std::move(tools);
    }
    if (m.reasoning) {
        const std::string level = detail::clamp_thinking_level(m, options.thinking_level);
        if (level != "off") {
            body["reasoning"] = Json{{"effort", level}, {"summary", "auto"}};
            body["include"] = Json::array({"reasoning.encrypted_content"});
        } else {
            body["reasoning"] = Json{{"effort", "none"}};
        }
    }
    return body;
}

/// The assistant message of a whole Responses response (`stream: false`).
///
/// Output items: `reasoning` → a thinking block (summary text, or the reasoning text; the item
/// kept as its signature), `message` → a text block (a `refusal` part gives stop_reason error
/// with the refusal), `function_call` → a tool call "<call_id>|<id>". status completed → stop
/// (tool_use when it called tools), incomplete → length, failed → error with the error's code
/// and message. Usage: input without cached tokens, cache read from
/// `input_tokens_details.cached_tokens`, cost from `prices`.
///
/// Never throws (but for memory exhaustion); see parse_openai_chat_response for error bodies.
inline AssistantMessage parse_openai_responses_response(std::string_view body,
                                                        const ModelSpec& model,
                                                        const Prices& prices = {},
                                                        int http_status = 200) {
    AssistantMessage m = detail::empty_reply(model, openai_responses_api);
    std::optional<Json> json = detail::response_json(m, body, http_status);
    if (!json) return m;
    bool refused = false;
    std::string refusal;
    if (const Json* output = detail::member(*json, "output"); output && output->is_array()) {
        for (const auto& item : *output) {
            const std::string type = detail::string_or(&item, "type");
            if (type == "reasoning") {
                m.content.emplace_back(ThinkingContent{
                    detail::reasoning_text(item), Json{{std::string(detail::thinking_signature_key),
                                                        detail::js_stringify(item)}}});
            } else if (type == "message") {
                m.content.emplace_back(TextContent{
                    detail::message_item_text(item, refused, refusal),
                    Json{{std::string(detail::text_signature_key), detail::text_signature(item)}}});
            } else if (type == "function_call") {
                ToolCallContent call;
                call.id =
                    detail::string_or(&item, "call_id") + "|" + detail::string_or(&item, "id");
                call.name = detail::string_or(&item, "name");
                detail::set_tool_arguments(m, call, detail::string_or(&item, "arguments", "{}"));
                m.content.emplace_back(std::move(call));
            }
        }
    }
    bool usage_seen = false;
    detail::responses_finish(m, *json, prices, usage_seen);
    if (!usage_seen) detail::add_diagnostic(m, "missing_usage", "the response has no usage");
    if (refused && m.stop_reason != "error") detail::fail(m, "refusal: " + refusal);
    return m;
}

/// Accumulates a streamed Responses response (`event: response.*` with JSON data).
///
/// Items open with `response.output_item.added` and close with `response.output_item.done`;
/// text, refusal, reasoning summary and argument deltas go to the open item. The stream is
/// complete with `response.completed` (or `response.incomplete`); `response.failed` and `error`
/// events fail it with their message; a stream that ends before is an error.
class OpenAiResponsesStream final : public StreamAccumulator {
public:
    explicit OpenAiResponsesStream(const ModelSpec& model, Prices prices = {})
        : StreamAccumulator(model, prices, openai_responses_api) {}

private:
    void on_event(const SseEvent& event) override {
        if (event.data.empty() || event.data == "[DONE]") return;
        std::optional<Json> j = event_json(event);
        if (!j) return;
        const std::string type = detail::string_or(&*j, "type", event.event);
        if (type == "response.created") {
            if (const Json* r = detail::member(*j, "response"))
                detail::set_response_id(message_, r);
        } else if (type == "response.output_item.added") {
            const Json* item = detail::member(*j, "item");
            const std::string kind = detail::string_or(item, "type");
            if (kind == "reasoning")
                open(ThinkingContent{}, StreamEventType::thinking_start, kind);
            else if (kind == "message")
                open(TextContent{}, StreamEventType::text_start, kind);
            else if (kind == "function_call") {
                ToolCallContent call;
                call.id = detail::string_or(item, "call_id") + "|" + detail::string_or(item, "id");
                call.name = detail::string_or(item, "name");
                args_ = detail::string_or(item, "arguments");
                open(std::move(call), StreamEventType::toolcall_start, kind);
            }
        } else if (type == "response.reasoning_summary_text.delta" ||
                   type == "response.reasoning_text.delta") {
            if (auto* th = current<ThinkingContent>(type)) {
                const std::string d = detail::string_or(&*j, "delta");
                th->thinking += d;
                emit(StreamEventType::thinking_delta, *open_, d);
            }
        } else if (type == "response.reasoning_summary_part.done") {
            if (auto* th = current<ThinkingContent>(type)) {
                th->thinking += "\n\n";
                emit(StreamEventType::thinking_delta, *open_, "\n\n");
            }
        } else if (type == "response.output_text.delta" || type == "response.refusal.delta") {
            if (auto* t = current<TextContent>(type)) {
                const std::string d = detail::string_or(&*j, "delta");
                t->text += d;
                if (type == "response.refusal.delta") refusal_ += d;
                emit(StreamEventType::text_delta, *open_, d);
            }
        } else if (type == "response.function_call_arguments.delta") {
            if (current<ToolCallContent>(type)) {
                const std::string d = detail::string_or(&*j, "delta");
                args_ += d;
                emit(StreamEventType::toolcall_delta, *open_, d);
            }
        } else if (type == "response.function_call_arguments.done") {
            if (current<ToolCallContent>(type)) args_ = detail::string_or(&*j, "arguments", args_);
        } else if (type == "response.output_item.done") {
            item_done(detail::member(*j, "item"));
        } else if (type == "response.completed" || type == "response.incomplete") {
            if (open_) close_blocks();
            const Json* r = detail::member(*j, "response");
            bool usage_seen = false;
            if (r && r->is_object()) detail::responses_finish(message_, *r, prices_, usage_seen);
            if (!usage_seen) diagnostic("missing_usage", "the stream carried no usage");
            if (type == "response.incomplete" && message_.stop_reason == "stop")
                message_.stop_reason = "length";
            completed_ = true;
        } else if (type == "response.failed") {
            const Json* r = detail::member(*j, "response");
            const Json* error = detail::member(r, "error");
            const std::string reason =
                detail::string_or(detail::member(r, "incomplete_details"), "reason");
            fail(error && error->is_object()
                     ? detail::string_or(error, "code", "unknown") + ": " +
                           detail::string_or(error, "message", "no message")
                     : (!reason.empty() ? "incomplete: " + reason
                                        : "Unknown error (no error details in response)"));
        } else if (type == "error") {
            fail("Error Code " + detail::string_or(&*j, "code", "unknown") + ": " +
                 detail::string_or(&*j, "message"));
        }
    }

    template <class Block>
    Block* current(std::string_view event) {
        if (open_) {
            if (auto* b = std::get_if<Block>(&message_.content[*open_])) return b;
        }
        diagnostic("out_of_order_event",
                   "'" + std::string(event) + "' without an open item of its kind");
        return nullptr;
    }

    void open(ContentBlock block, StreamEventType start, const std::string&) {
        if (open_) close_blocks();
        message_.content.push_back(std::move(block));
        open_ = message_.content.size() - 1;
        emit(start, *open_, {});
    }

    void item_done(const Json* item) {
        if (!open_) {
            diagnostic("out_of_order_event", "'response.output_item.done' without an open item");
            return;
        }
        const std::size_t index = *open_;
        auto& block = message_.content[index];
        const std::string kind = detail::string_or(item, "type");
        if (auto* th = std::get_if<ThinkingContent>(&block); th && kind == "reasoning") {
            const std::string text = detail::reasoning_text(*item);
            if (!text.empty()) th->thinking = text;
            th->extra =
                Json{{std::string(detail::thinking_signature_key), detail::js_stringify(*item)}};
            emit(StreamEventType::thinking_end, index, th->thinking);
        } else if (auto* t = std::get_if<TextContent>(&block); t && kind == "message") {
            bool refused = false;
            std::string refusal;
            t->text = detail::message_item_text(*item, refused, refusal);
            if (refused) refusal_ = refusal;
            t->extra =
                Json{{std::string(detail::text_signature_key), detail::text_signature(*item)}};
            emit(StreamEventType::text_end, index, t->text);
        } else if (auto* c = std::get_if<ToolCallContent>(&block); c && kind == "function_call") {
            if (args_.empty()) args_ = detail::string_or(item, "arguments", "{}");
            detail::set_tool_arguments(message_, *c, args_);
            emit(StreamEventType::toolcall_end, index, args_);
        } else {
            diagnostic("out_of_order_event",
                       "'response.output_item.done' for another kind of item");
            return;
        }
        open_.reset();
        args_.clear();
    }

    void close_blocks() override {
        if (!open_) return;
        const std::size_t index = *open_;
        auto& block = message_.content[index];
        if (auto* t = std::get_if<TextContent>(&block))
            emit(StreamEventType::text_end, index, t->text);
        else if (auto* th = std::get_if<ThinkingContent>(&block))
            emit(StreamEventType::thinking_end, index, th->thinking);
        else if (auto* c = std::get_if<ToolCallContent>(&block)) {
            detail::set_tool_arguments(message_, *c, args_);
            emit(StreamEventType::toolcall_end, index, args_);
        }
        open_.reset();
        args_.clear();
    }

    void end_of_stream() override {
        close_blocks();
        if (!completed_) {
            detail::fail(message_, "the stream ended before response.completed");
            return;
        }
        if (!refusal_.empty() && message_.stop_reason != "error")
            detail::fail(message_, "refusal: " + refusal_);
    }

    std::optional<std::size_t> open_;
    std::string args_;
    std::string refusal_;
    bool completed_ = false;
};

}  // namespace agentcore::llm

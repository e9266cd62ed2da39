#pragma once
// OpenAI Chat Completions (and every OpenAI-compatible server: llama.cpp, vLLM, Ollama, ...):
// the request body, the whole response and the streamed response.

#include <agentcore/json.hpp>
#include <agentcore/llm/reply.hpp>
#include <agentcore/llm/request.hpp>
#include <agentcore/llm/usage.hpp>
#include <agentcore/messages.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore::llm {

namespace detail {

inline std::string chat_tool_call_id(const std::string& id, const ModelSpec& model,
                                     const AssistantMessage&) {
    if (id.find('|') != std::string::npos) return sanitize_id(id.substr(0, id.find('|')), 40);
    if (model.provider == "openai" && id.size() > 40) return id.substr(0, 40);
    return id;
}

inline Json chat_user_part(const ContentBlock& block) {
    if (const auto* t = std::get_if<TextContent>(&block))
        return Json{{"type", "text"}, {"text", wire_text(t->text)}};
    if (const auto* i = std::get_if<ImageContent>(&block))
        return Json{{"type", "image_url"}, {"image_url", Json{{"url", data_url(*i)}}}};
    return nullptr;
}

inline bool chat_has_tool_history(const Prepared& messages) {
    for (const auto& m : messages) {
        if (std::holds_alternative<ToolResultMessage>(m)) return true;
        if (const auto* a = std::get_if<AssistantMessage>(&m))
            for (const auto& b : a->content)
                if (std::holds_alternative<ToolCallContent>(b)) return true;
    }
    return false;
}

inline Json chat_messages(const Prepared& messages, const ModelSpec& model,
                          const RequestOptions& options) {
    Json out = Json::array();
    if (!options.system_prompt.empty())
        out.push_back(Json{{"role", model.reasoning ? "developer" : "system"},
                           {"content", wire_text(options.system_prompt)}});
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const AgentMessage& message = messages[i];
        if (const auto* u = std::get_if<UserMessage>(&message)) {
            if (const auto* s = std::get_if<std::string>(&u->content)) {
                out.push_back(Json{{"role", "user"}, {"content", wire_text(*s)}});
                continue;
            }
            Json parts = Json::array();
            for (const auto& b : std::get<std::vector<ContentBlock>>(u->content)) {
                Json part = chat_user_part(b);
                if (!part.is_null()) parts.push_back(std::move(part));
            }
            if (parts.empty()) continue;
            out.push_back(Json{{"role", "user"}, {"content", std::move(parts)}});
        } else if (const auto* a = std::get_if<AssistantMessage>(&message)) {
            Json msg{{"role", "assistant"}, {"content", nullptr}};
            std::string text;
            std::vector<const ThinkingContent*> thinking;
            Json calls = Json::array();
            for (const auto& b : a->content) {
                if (const auto* t = std::get_if<TextContent>(&b)) {
                    if (!is_blank(t->text)) text += wire_text(t->text);
                } else if (const auto* th = std::get_if<ThinkingContent>(&b)) {
                    if (!is_blank(th->thinking)) thinking.push_back(th);
                } else if (const auto* c = std::get_if<ToolCallContent>(&b)) {
                    calls.push_back(
                        Json{{"id", c->id},
                             {"type", "function"},
                             {"function",
                              Json{{"name", c->name}, {"arguments", js_stringify(c->arguments)}}}});
                }
            }
            if (!text.empty()) msg["content"] = text;
            if (!thinking.empty()) {
                // llama.cpp and others name the field their reasoning came in; it is sent back
                // there.
                const std::string* field =
                    extra_string(thinking.front()->extra, thinking_signature_key);
                if (field && !field->empty()) {
                    std::string joined;
                    for (std::size_t k = 0; k < thinking.size(); ++k)
                        joined += (k ? "\n" : "") + thinking[k]->thinking;
                    msg[*field] = wire_text(joined);
                }
            }
            if (!calls.empty()) {
                Json details = Json::array();
                for (const auto& b : a->content)
                    if (const auto* c = std::get_if<ToolCallContent>(&b))
                        if (const std::string* sig = extra_string(c->extra, thought_signature_key))
                            if (auto parsed = parse_untrusted(*sig))
                                details.push_back(std::move(*parsed));
                msg["tool_calls"] = std::move(calls);
                if (!details.empty()) msg["reasoning_details"] = std::move(details);
            }
            if (msg["content"].is_null() && !msg.contains("tool_calls")) continue;
            out.push_back(std::move(msg));
        } else if (std::holds_alternative<ToolResultMessage>(message)) {
            Json images = Json::array();
            std::size_t j = i;
            for (; j < messages.size() && std::holds_alternative<ToolResultMessage>(messages[j]);
                 ++j) {
                const auto& r = std::get<ToolResultMessage>(messages[j]);
                const std::string text = joined_text(r.content, "\n");
                out.push_back(
                    Json{{"role", "tool"},
                         {"content", wire_text(text.empty() ? "(see attached image)" : text)},
                         {"tool_call_id", r.tool_call_id}});
                if (model.images)
                    for (const auto& b : r.content)
                        if (const auto* img = std::get_if<ImageContent>(&b))
                            images.push_back(Json{{"type", "image_url"},
                                                  {"image_url", Json{{"url", data_url(*img)}}}});
            }
            i = j - 1;
            if (!images.empty()) {
                Json content = Json::array(
                    {Json{{"type", "text"}, {"text", "Attached image(s) from tool result:"}}});
                for (auto& img : images) content.push_back(std::move(img));
                out.push_back(Json{{"role", "user"}, {"content", std::move(content)}});
            }
        }
    }
    return out;
}

inline std::string chat_stop_reason(std::string_view reason, std::optional<std::string>& error) {
    if (reason == "stop" || reason == "end") return "stop";
    if (reason == "length") return "length";
    if (reason == "tool_calls" || reason == "function_call") return "tool_use";
    error = "Provider finish_reason: " + std::string(reason);
    return "error";
}

inline Usage chat_usage(const Json* raw, const Prices& prices) {
    Usage u;
    const Json* details = member(raw, "prompt_tokens_details");
    const std::int64_t prompt = count_at(raw, "prompt_tokens");
    std::int64_t cached = count_at(details, "cached_tokens");
    if (member(details, "cached_tokens") == nullptr)
        cached = count_at(raw, "prompt_cache_hit_tokens");
    const std::int64_t write = count_at(details, "cache_write_tokens");
    u.cache_read = write > 0 ? std::max<std::int64_t>(0, cached - write) : cached;
    u.cache_write = write;
    u.input = std::max<std::int64_t>(0, prompt - u.cache_read - u.cache_write);
    u.output = count_at(raw, "completion_tokens");
    finish_usage(u, prices);
    return u;
}

}  // namespace detail

/// The request body of a Chat Completions call (`POST /v1/chat/completions`).
///
/// The messages are context messages (convert_to_llm is applied first, then the preparation
/// shared with pi: see detail::prepare_messages). The system prompt becomes a `system` message
/// (`developer` for a reasoning model); user content with images becomes parts with data URLs;
/// an assistant message becomes one string of its text, its tool calls with their ids and the
/// arguments as JSON text, its reasoning sent back under the field it came in (kept as the
/// thinking block's `thinkingSignature`, e.g. `reasoning_content`); tool results become `tool`
/// messages, their images a user message after them. Tools become functions with the
/// application's schemas (`strict: false`); a conversation with tool calls but no tools sends
/// `tools: []`. The thinking level becomes `reasoning_effort` for a reasoning model (xhigh is
/// sent as high). Streaming asks for usage (`stream_options.include_usage`); `store` is false.
///
/// Throws nothing but for memory exhaustion and SessionError(invalid_entry) for text that is
/// not UTF-8 in tool arguments.
/// Complexity: linear in the size of the messages.
/// Example: `Json body = llm::to_openai_chat(build_context(session).messages, model, options);`
inline Json to_openai_chat(const std::vector<MessageHandle>& messages, const ModelSpec& model,
                           const RequestOptions& options = {}) {
    const ModelSpec m = detail::with_api(model, openai_chat_api);
    const detail::Prepared prepared =
        detail::prepare_messages(messages, m, detail::chat_tool_call_id);
    Json body{{"model", m.id},
              {"messages", detail::chat_messages(prepared, m, options)},
              {"stream", options.stream}};
    detail::add_prompt_cache_fields(body, options);
    if (options.stream) body["stream_options"] = Json{{"include_usage", true}};
    body["store"] = false;
    if (const auto max = detail::default_max_tokens(m, options); max > 0)
        body["max_completion_tokens"] = max;
    if (options.temperature) body["temperature"] = *options.temperature;
    if (!options.tools.empty()) {
        Json tools = Json::array();
        for (const auto& t : options.tools)
            tools.push_back(Json{{"type", "function"},
                                 {"function", Json{{"name", t.name},
                                                   {"description", t.description},
                                                   {"parameters", t.parameters},
                                                   {"strict", false}}}});
        body["tools"] = std::move(tools);
    } else if (detail::chat_has_tool_history(prepared)) {
        body["tools"] = Json::array();
    }
    const std::string level = detail::clamp_thinking_level(m, options.thinking_level);
    if (m.reasoning && level != "off") body["reasoning_effort"] = level;
    return body;
}

/// The assistant message of a whole (not streamed) Chat Completions response.
///
/// Reads the first choice: `content` → a text block, `reasoning_content` (or `reasoning`) → a
/// thinking block, `tool_calls` → tool call blocks, `refusal` → a text block and stop_reason
/// error with the refusal as error_message. finish_reason → stop, length, tool_use or error
/// ("Provider finish_reason: content_filter"). Usage: input without cached tokens, cache read
/// from `prompt_tokens_details.cached_tokens`, cost from `prices`; a response without usage
/// gets zeros and a "missing_usage" diagnostic.
///
/// Never throws (but for memory exhaustion): a body that is not JSON, an error body
/// (`{"error": {...}}`) or an HTTP status outside 2xx gives stop_reason error with the message.
/// Tool arguments that are not a JSON object are kept as text (see detail::set_tool_arguments).
/// Complexity: linear in the size of the body.
inline AssistantMessage parse_openai_chat_response(std::string_view body, const ModelSpec& model,
                                                   const Prices& prices = {},
                                                   int http_status = 200) {
    AssistantMessage m = detail::empty_reply(model, openai_chat_api);
    std::optional<Json> json = detail::response_json(m, body, http_status);
    if (!json) return m;
    detail::set_response_id(m, &*json);
    const Json* usage = detail::member(*json, "usage");
    if (usage && usage->is_object())
        m.usage = detail::chat_usage(usage, prices);
    else
        detail::add_diagnostic(m, "missing_usage", "the response has no usage");
    const Json* choices = detail::member(*json, "choices");
    if (!choices || !choices->is_array() || choices->empty()) {
        detail::fail(m, "the response has no choices");
        return m;
    }
    const Json& choice = choices->front();
    const Json* message = detail::member(choice, "message");
    for (std::string_view field : {"reasoning_content", "reasoning", "reasoning_text"}) {
        if (const std::string* r = detail::string_at(message, field); r && !r->empty()) {
            m.content.emplace_back(ThinkingContent{
                *r, Json{{std::string(detail::thinking_signature_key), std::string(field)}}});
            break;
        }
    }
    if (const std::string* text = detail::string_at(message, "content"); text && !text->empty())
        m.content.emplace_back(TextContent{*text, {}});
    if (const Json* calls = detail::member(message, "tool_calls"); calls && calls->is_array()) {
        for (const auto& c : *calls) {
            ToolCallContent call;
            call.id = detail::string_or(&c, "id");
            const Json* fn = detail::member(c, "function");
            call.name = detail::string_or(fn, "name");
            detail::set_tool_arguments(m, call, detail::string_or(fn, "arguments"));
            m.content.emplace_back(std::move(call));
        }
    }
    if (const std::string* reason = detail::string_at(&choice, "finish_reason"))
        m.stop_reason = detail::chat_stop_reason(*reason, m.error_message);
    if (const std::string* refusal = detail::string_at(message, "refusal");
        refusal && !refusal->empty()) {
        m.content.emplace_back(TextContent{*refusal, {}});
        detail::fail(m, "refusal: " + *refusal);
    }
    return m;
}

/// Accumulates a streamed Chat Completions response (`data: {chunk}` lines, then `data: [DONE]`).
///
/// Text, reasoning (`reasoning_content`, `reasoning`, `reasoning_text`) and tool calls (matched
/// by `index`, else by `id`) grow as deltas arrive; usage comes from the chunk that carries it.
/// The stream is complete once a finish_reason arrived; one that ends before is an error
/// ("the stream ended before a finish_reason"). A chunk with an `error` member fails the reply
/// with its message.
class OpenAiChatStream final : public StreamAccumulator {
public:
    explicit OpenAiChatStream(const ModelSpec& model, Prices prices = {})
        : StreamAccumulator(model, prices, openai_chat_api) {}

private:
    struct Call {
        std::size_t block;
        std::string args;
    };

    void on_event(const SseEvent& event) override {
        if (event.data == "[DONE]") {
            done_ = true;
            return;
        }
        if (event.data.empty()) return;
        std::optional<Json> j = event_json(event);
        if (!j) return;
        if (auto e = detail::error_body_message(*j)) {
            fail(std::move(*e));
            return;
        }
        if (detail::string_at(&*j, "id") &&
            !(message_.extra.is_object() && message_.extra.contains("responseId")))
            detail::set_response_id(message_, &*j);
        const Json* usage = detail::member(*j, "usage");
        const Json* choices = detail::member(*j, "choices");
        const Json* choice =
            choices && choices->is_array() && !choices->empty() ? &choices->front() : nullptr;
        if (!(usage && usage->is_object()) && choice) usage = detail::member(choice, "usage");
        if (usage && usage->is_object()) {
            message_.usage = detail::chat_usage(usage, prices_);
            have_usage_ = true;
        }
        if (!choice) return;
        if (const std::string* reason = detail::string_at(choice, "finish_reason")) {
            message_.stop_reason = detail::chat_stop_reason(*reason, message_.error_message);
            finished_ = true;
        }
        const Json* delta = detail::member(choice, "delta");
        if (!delta || !delta->is_object()) return;
        if (const std::string* text = detail::string_at(delta, "content"); text && !text->empty()) {
            if (!text_) {
                text_ = open(TextContent{}, StreamEventType::text_start);
            }
            std::get<TextContent>(message_.content[*text_]).text += *text;
            emit(StreamEventType::text_delta, *text_, *text);
        }
        for (std::string_view field : {"reasoning_content", "reasoning", "reasoning_text"}) {
            const std::string* r = detail::string_at(delta, field);
            if (!r || r->empty()) continue;
            if (!thinking_)
                thinking_ = open(ThinkingContent{{},
                                                 Json{{std::string(detail::thinking_signature_key),
                                                       std::string(field)}}},
                                 StreamEventType::thinking_start);
            std::get<ThinkingContent>(message_.content[*thinking_]).thinking += *r;
            emit(StreamEventType::thinking_delta, *thinking_, *r);
            break;
        }
        if (const Json* calls = detail::member(delta, "tool_calls"); calls && calls->is_array()) {
            for (const auto& c : *calls) tool_call_delta(c);
        }
        if (const std::string* refusal = detail::string_at(delta, "refusal");
            refusal && !refusal->empty())
            refusal_ += *refusal;
    }

    void tool_call_delta(const Json& c) {
        const Json* index = detail::member(c, "index");
        const std::string id = detail::string_or(&c, "id");
        Call* call = nullptr;
        if (index && index->is_number_integer()) {
            auto it = by_index_.find(index->get<std::int64_t>());
            if (it != by_index_.end()) call = &calls_[it->second];
        }
        if (!call && !id.empty())
            for (auto& known : calls_) {
                if (std::get<ToolCallContent>(message_.content[known.block]).id == id)
                    call = &known;
            }
        const Json* fn = detail::member(c, "function");
        if (!call) {
            ToolCallContent block;
            block.id = id;
            block.name = detail::string_or(fn, "name");
            calls_.push_back(Call{open(std::move(block), StreamEventType::toolcall_start), {}});
            call = &calls_.back();
            if (index && index->is_number_integer())
                by_index_[index->get<std::int64_t>()] = calls_.size() - 1;
        }
        auto& block = std::get<ToolCallContent>(message_.content[call->block]);
        if (block.id.empty()) block.id = id;
        if (block.name.empty()) block.name = detail::string_or(fn, "name");
        const std::string args = detail::string_or(fn, "arguments");
        call->args += args;
        emit(StreamEventType::toolcall_delta, call->block, args);
    }

    std::size_t open(ContentBlock block, StreamEventType start) {
        message_.content.push_back(std::move(block));
        emit(start, message_.content.size() - 1, {});
        return message_.content.size() - 1;
    }

    void close_blocks() override {
        if (blocks_closed_) return;
        blocks_closed_ = true;
        std::map<std::size_t, const Call*> call_at;
        for (const auto& c : calls_) call_at[c.block] = &c;
        for (std::size_t i = 0; i < message_.content.size(); ++i) {
            auto& b = message_.content[i];
            if (auto* t = std::get_if<TextContent>(&b))
                emit(StreamEventType::text_end, i, t->text);
            else if (auto* th = std::get_if<ThinkingContent>(&b))
                emit(StreamEventType::thinking_end, i, th->thinking);
            else if (auto* c = std::get_if<ToolCallContent>(&b)) {
                detail::set_tool_arguments(message_, *c, call_at[i]->args);
                emit(StreamEventType::toolcall_end, i, call_at[i]->args);
            }
        }
    }

    void end_of_stream() override {
        close_blocks();
        if (!refusal_.empty()) {
            message_.content.emplace_back(TextContent{refusal_, {}});
            detail::fail(message_, "refusal: " + refusal_);
            return;
        }
        if (!finished_) {
            detail::fail(message_, done_ ? "the stream ended without a finish_reason"
                                         : "the stream ended before a finish_reason");
            return;
        }
        if (!have_usage_) diagnostic("missing_usage", "the stream carried no usage");
    }

    std::optional<std::size_t> text_;
    std::optional<std::size_t> thinking_;
    std::vector<Call> calls_;
    std::map<std::int64_t, std::size_t> by_index_;
    std::string refusal_;
    bool done_ = false;
    bool finished_ = false;
    bool have_usage_ = false;
    bool blocks_closed_ = false;
};

}  // namespace agentcore::llm

#pragma once
// What the three response parsers share: the assistant message they fill, diagnostics, tool
// call arguments, and the stream accumulator's frame (SSE in, UI events and a message out).

#include <agentcore/json.hpp>
#include <agentcore/llm/request.hpp>
#include <agentcore/llm/sse.hpp>
#include <agentcore/llm/usage.hpp>
#include <agentcore/messages.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore::llm {

/// The most bytes a stream accumulator holds for one unfinished SSE line or event; a stream that
/// sends more without ending it fails (stop_reason error) instead of growing without bound.
inline constexpr std::size_t max_sse_event_bytes = 64u << 20;

namespace detail {

inline std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

inline AssistantMessage empty_reply(const ModelSpec& model, std::string_view api) {
    AssistantMessage m;
    m.api = model.api.empty() ? std::string(api) : model.api;
    m.provider = model.provider;
    m.model = model.id;
    m.stop_reason = "stop";
    m.timestamp = now_ms();
    return m;
}

// Records something a parser recovered from in extra.diagnostics: [{type, message}].
inline void add_diagnostic(AssistantMessage& m, std::string_view type, std::string message) {
    if (!m.extra.is_object()) m.extra = Json::object();
    Json& list = m.extra["diagnostics"];
    if (!list.is_array()) list = Json::array();
    list.push_back(Json{{"type", std::string(type)}, {"message", std::move(message)}});
}

inline void fail(AssistantMessage& m, std::string message) {
    m.stop_reason = "error";
    m.error_message = std::move(message);
}

// A tool call's arguments from their JSON text. Text that is not a JSON object leaves the
// arguments empty, keeps the text in the block's extra as "rawArguments" and reports it.
inline void set_tool_arguments(AssistantMessage& m, ToolCallContent& call, std::string_view text) {
    if (is_blank(text)) {
        call.arguments = Json::object();
        return;
    }
    std::optional<Json> parsed = parse_untrusted(text);
    if (parsed && parsed->is_object()) {
        call.arguments = std::move(*parsed);
        return;
    }
    call.arguments = Json::object();
    if (!call.extra.is_object()) call.extra = Json::object();
    call.extra["rawArguments"] = wire_text(text);
    add_diagnostic(
        m, "invalid_tool_arguments",
        "arguments of tool call '" + call.id + "' (" + call.name + ") are not a JSON object");
}

inline void set_response_id(AssistantMessage& m, const Json* body) {
    if (const std::string* id = string_at(body, "id")) {
        if (!m.extra.is_object()) m.extra = Json::object();
        m.extra["responseId"] = *id;
    }
}

// The message of a provider's error body: {"error": {"message", "type"|"code"}} or
// {"error": "text"}; nullopt when the body is not one.
inline std::optional<std::string> error_body_message(const Json& body) {
    const Json* error = member(body, "error");
    if (error == nullptr || error->is_null()) return std::nullopt;
    if (error->is_string()) return error->get<std::string>();
    std::string message = string_or(error, "message", "unknown error");
    std::string kind = string_or(error, "type");
    if (kind.empty()) {
        if (const Json* code = member(error, "code"); code && code->is_string())
            kind = code->get<std::string>();
        else if (code && code->is_number_integer())
            kind = std::to_string(code->get<std::int64_t>());
    }
    return kind.empty() ? message : kind + ": " + message;
}

// A whole response: its JSON, or the error message for a body that is not a JSON object or an
// HTTP status that is not 2xx.
inline std::optional<Json> response_json(AssistantMessage& m, std::string_view body,
                                         int http_status) {
    std::optional<Json> json = parse_untrusted(body);
    if (json && !json->is_object()) json.reset();
    if (http_status < 200 || http_status > 299) {
        std::string message = "HTTP " + std::to_string(http_status);
        if (json)
            if (auto e = error_body_message(*json)) message += ": " + *e;
        fail(m, std::move(message));
        return std::nullopt;
    }
    if (!json) {
        fail(m, "the response is not a JSON object");
        return std::nullopt;
    }
    if (auto e = error_body_message(*json)) {
        fail(m, std::move(*e));
        return std::nullopt;
    }
    return json;
}

}  // namespace detail

/// The frame of the three stream accumulators: feed it the bytes of a streamed reply in chunks of
/// any size, show the events it returns, and take the message from finish().
///
/// Never throws for any input (only for memory exhaustion): malformed JSON, an error event, a
/// refusal or a stream that ends early give stop_reason "error" with the reason in
/// error_message, keeping the content received so far. Unknown event types are ignored; events
/// that refer to a block that was never started are ignored and reported in
/// extra.diagnostics.
class StreamAccumulator {
public:
    virtual ~StreamAccumulator() = default;
    StreamAccumulator(const StreamAccumulator&) = delete;
    StreamAccumulator& operator=(const StreamAccumulator&) = delete;

    /// Feeds bytes of the reply; returns the events they complete.
    /// Complexity: linear in the bytes fed (amortised).
    std::vector<StreamEvent> feed(std::string_view bytes) {
        if (closed_) return {};
        for (auto& e : sse_.feed(bytes)) dispatch(e);
        if (!closed_ && sse_.buffered() > max_sse_event_bytes)
            fail("an SSE event exceeds " + std::to_string(max_sse_event_bytes) + " bytes");
        return take_events();
    }

    /// The end of the reply: completes the message (an error when the stream ended before the
    /// provider's end event) and returns it. Events it completes are in take_events().
    AssistantMessage finish() {
        if (!closed_) {
            for (auto& e : sse_.finish()) dispatch(e);
            if (!closed_) {
                end_of_stream();
                closed_ = true;
                if (message_.stop_reason == "error")
                    emit(StreamEventType::error, 0, message_.error_message.value_or(""));
                else
                    emit(StreamEventType::done, 0, {});
            }
        }
        return message_;
    }

    /// The message as received so far.
    [[nodiscard]] const AssistantMessage& partial() const noexcept { return message_; }

    /// Events not yet returned (those of finish()).
    std::vector<StreamEvent> take_events() {
        std::vector<StreamEvent> out;
        out.swap(events_);
        return out;
    }

protected:
    StreamAccumulator(const ModelSpec& model, Prices prices, std::string_view api)
        : message_(detail::empty_reply(model, api)), prices_(prices) {}

    /// Handles one SSE event.
    virtual void on_event(const SseEvent& event) = 0;
    /// The stream ended without fail(): check that it was complete.
    virtual void end_of_stream() = 0;

    void emit(StreamEventType type, std::size_t index, std::string delta) {
        events_.push_back(StreamEvent{type, index, std::move(delta)});
    }

    /// Ends the reply with stop_reason error; later bytes are ignored.
    void fail(std::string message) {
        close_blocks();
        detail::fail(message_, message);
        closed_ = true;
        emit(StreamEventType::error, 0, std::move(message));
    }

    /// Called before a failure: finish open blocks (tool call arguments).
    virtual void close_blocks() {}

    /// The data of an event as a JSON object; fails the stream when it is not one.
    std::optional<Json> event_json(const SseEvent& event) {
        std::optional<Json> j = detail::parse_untrusted(event.data);
        if (j && j->is_object()) return j;
        const std::string name = event.event.empty() ? std::string("data") : event.event;
        std::string sample = event.data.substr(0, 200);
        fail("malformed JSON in a '" + name + "' event: " + detail::wire_text(sample));
        return std::nullopt;
    }

    void diagnostic(std::string_view type, std::string message) {
        detail::add_diagnostic(message_, type, std::move(message));
    }

    AssistantMessage message_;
    Prices prices_;
    bool closed_ = false;

private:
    void dispatch(const SseEvent& event) {
        if (closed_) return;
        on_event(event);
    }

    SseParser sse_;
    std::vector<StreamEvent> events_;
};

}  // namespace agentcore::llm

// libFuzzer target: the untrusted side of the LLM converters, on the whole input as a provider's
// reply. The SSE parser, the three stream accumulators (OpenAI Chat, OpenAI Responses,
// Anthropic) and the three whole-response parsers promise never to throw (but for memory
// exhaustion) for any bytes. Checks: no exception escapes any of them, and no crash; the SSE
// parser gives the same events whether fed whole or in small chunks, and every event is valid
// UTF-8; an accumulator gives the same message in both chunkings, its stop reason is one of
// SPEC's, an error carries its message, bytes after the end change nothing, and the message
// writes as JSON in both dialects.
#include <agentcore/codec.hpp>
#include <agentcore/llm/anthropic.hpp>
#include <agentcore/llm/openai_chat.hpp>
#include <agentcore/llm/openai_responses.hpp>
#include <agentcore/llm/sse.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace agentcore;

[[noreturn]] void broken(const char* what) {
    std::fprintf(stderr, "fuzz_llm: %s\n", what);
    std::abort();
}

std::vector<llm::SseEvent> sse_events(std::string_view bytes, std::size_t chunk) {
    llm::SseParser parser;
    std::vector<llm::SseEvent> out;
    for (std::size_t i = 0; i < bytes.size(); i += chunk)
        for (auto& e : parser.feed(bytes.substr(i, chunk))) out.push_back(std::move(e));
    for (auto& e : parser.finish()) out.push_back(std::move(e));
    if (parser.pending()) broken("the SSE parser holds bytes after finish()");
    return out;
}

void check_sse(std::string_view bytes, std::size_t chunk) {
    const auto whole = sse_events(bytes, bytes.size() + 1);
    const auto pieces = sse_events(bytes, chunk);
    if (whole.size() != pieces.size())
        broken("the SSE parser gives another number of events in chunks");
    for (std::size_t i = 0; i < whole.size(); ++i) {
        if (whole[i].event != pieces[i].event || whole[i].data != pieces[i].data)
            broken("the SSE parser gives another event in chunks");
        if (!llm::detail::is_utf8(whole[i].event) || !llm::detail::is_utf8(whole[i].data))
            broken("an SSE event is not UTF-8");
    }
}

/// The message as JSON without its timestamp (the accumulator's clock).
Json comparable(const AssistantMessage& m) {
    Json j = message_to_json(AgentMessage(m), Dialect::native);
    j.erase("timestamp");
    return j;
}

void check_message(const AssistantMessage& m) {
    if (!is_known_stop_reason(m.stop_reason)) broken("a stop reason outside SPEC's set");
    if (m.stop_reason == "error" && (!m.error_message || m.error_message->empty()))
        broken("an error without its message");
    (void)message_to_json(AgentMessage(m), Dialect::pi).dump();
    (void)encode_entry(SessionTreeEntry(MessageEntry{
                           {"e", std::nullopt, "2026-01-01T00:00:00.000Z", {}}, AgentMessage(m)}),
                       Dialect::native);
}

template <class Stream>
AssistantMessage stream(std::string_view bytes, std::size_t chunk) {
    const llm::ModelSpec model{"fuzz", "fuzz-model", "", true, true, 4096};
    Stream s(model, llm::Prices{3, 15, 0.3, 3.75});
    for (std::size_t i = 0; i < bytes.size(); i += chunk) (void)s.feed(bytes.substr(i, chunk));
    AssistantMessage m = s.finish();
    (void)s.take_events();
    if (!s.feed(bytes.substr(0, 64)).empty()) broken("events after the end of the stream");
    if (comparable(s.finish()) != comparable(m))
        broken("the message changed after the end of the stream");
    return m;
}

template <class Stream>
void check_stream(std::string_view bytes, std::size_t chunk) {
    const AssistantMessage whole = stream<Stream>(bytes, bytes.size() + 1);
    const AssistantMessage pieces = stream<Stream>(bytes, chunk);
    check_message(whole);
    if (comparable(whole) != comparable(pieces))
        broken("an accumulator gives another message in chunks");
}

void check_whole(std::string_view body) {
    const llm::ModelSpec model{"fuzz", "fuzz-model", "", true, true, 4096};
    const llm::Prices prices{3, 15, 0.3, 3.75};
    for (int status : {200, 400}) {
        check_message(llm::parse_openai_chat_response(body, model, prices, status));
        check_message(llm::parse_openai_responses_response(body, model, prices, status));
        check_message(llm::parse_anthropic_response(body, model, prices, status));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const std::size_t chunk = 1 + size % 7;  // small pieces that split lines, events and UTF-8
    try {
        check_sse(bytes, chunk);
        check_stream<llm::OpenAiChatStream>(bytes, chunk);
        check_stream<llm::OpenAiResponsesStream>(bytes, chunk);
        check_stream<llm::AnthropicStream>(bytes, chunk);
        check_whole(bytes);
        (void)llm::detail::parse_untrusted(bytes);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz_llm: an exception escaped: %s\n", e.what());
        std::abort();
    } catch (...) {
        broken("an exception escaped");
    }
    return 0;
}

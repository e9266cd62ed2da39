// OpenAI Chat Completions: request bodies (golden), whole and streamed replies, bad input.
#include "llm/scenarios.hpp"
#include "support/builders.hpp"
#include "support/catch.hpp"

#include <agentcore/llm/openai_chat.hpp>

using namespace agentcore;
using namespace agentcore::testing;
using namespace agentcore::testing::llm_fixtures;

namespace {

llm::ModelSpec gpt() { return llm::ModelSpec{"openai", "gpt-4.1", "", false, true, 32768}; }

AssistantMessage stream_chat(const std::string& bytes, std::size_t chunk = 64) {
    llm::OpenAiChatStream s(gpt(), prices());
    return stream_all(s, bytes, chunk);
}

std::string chunk(const std::string& choice_json) {
    return "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[" + choice_json +
           "]}\n\n";
}

}  // namespace

TEST_CASE("chat request bodies match the golden files", "[llm][openai_chat]") {
    for (const char* name : {"chat_tools_images", "chat_reasoning_model"}) {
        INFO(name);
        const Scenario s = scenario(name);
        CHECK(plain(llm::to_openai_chat(s.messages, s.model, s.options)) ==
              nlohmann::json::parse(fixture(std::string("golden/") + name + ".json")));
    }
}

TEST_CASE("chat requests: system role, thinking level, max tokens and tool history",
          "[llm][openai_chat]") {
    std::vector<MessageHandle> messages{std::make_shared<const AgentMessage>(user("hi"))};
    llm::RequestOptions o;
    o.system_prompt = "sys";
    o.thinking_level = "medium";
    Json body = llm::to_openai_chat(messages, gpt(), o);
    CHECK(body["messages"][0]["role"] == "system");
    CHECK_FALSE(body.contains("reasoning_effort"));  // not a reasoning model
    CHECK(body["max_completion_tokens"] == 32000);
    CHECK_FALSE(body.contains("tools"));

    llm::ModelSpec o4{"openai", "o4-mini", "", true, true, 0};
    body = llm::to_openai_chat(messages, o4, o);
    CHECK(body["messages"][0]["role"] == "developer");
    CHECK(body["reasoning_effort"] == "medium");
    CHECK_FALSE(body.contains("max_completion_tokens"));  // no known limit, none asked for
    o.thinking_level = "off";
    CHECK_FALSE(llm::to_openai_chat(messages, o4, o).contains("reasoning_effort"));
    o.stream = false;
    o.session_id = "s-1";
    body = llm::to_openai_chat(messages, o4, o);
    CHECK(body["stream"] == false);
    CHECK_FALSE(body.contains("stream_options"));
    CHECK(body["prompt_cache_key"] == "s-1");

    messages.push_back(std::make_shared<const AgentMessage>(assistant_tool_call("c1", "read")));
    messages.push_back(std::make_shared<const AgentMessage>(tool_result("c1", "read", "x")));
    CHECK(llm::to_openai_chat(messages, gpt(), {})["tools"] == Json::array());
}

TEST_CASE("a whole chat response: text, parallel tool calls, usage and cost",
          "[llm][openai_chat]") {
    auto m = llm::parse_openai_chat_response(fixture("chat_response_tool.json"), gpt(), prices());
    CHECK(m.stop_reason == "tool_use");
    CHECK_FALSE(m.error_message);
    CHECK(m.api == "openai-completions");
    CHECK(m.provider == "openai");
    REQUIRE(m.content.size() == 3);
    CHECK(std::get<TextContent>(m.content[0]).text == "Checking the weather in two cities.");
    const auto& second = std::get<ToolCallContent>(m.content[2]);
    CHECK(second.id == "call_def456");
    CHECK(second.name == "get_weather");
    CHECK(second.arguments == Json{{"location", "Bogotá"}, {"unit", "c"}});
    CHECK(m.usage.input == 93);
    CHECK(m.usage.cache_read == 1024);
    CHECK(m.usage.output == 46);
    CHECK(m.usage.total_tokens == 1163);
    CHECK(m.usage.cost.total == Approx((93 * 3 + 46 * 15 + 1024 * 0.3) / 1e6));
    CHECK(m.extra["responseId"] == "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG");
}

TEST_CASE("chat finish reasons map to the SPEC's stop reasons", "[llm][openai_chat]") {
    auto with = [](const std::string& reason) {
        return llm::parse_openai_chat_response(
            R"({"choices":[{"message":{"content":"x"},"finish_reason":")" + reason +
                R"("}],"usage":{}})",
            gpt());
    };
    CHECK(with("stop").stop_reason == "stop");
    CHECK(with("length").stop_reason == "length");
    CHECK(with("tool_calls").stop_reason == "tool_use");
    CHECK(with("function_call").stop_reason == "tool_use");
    auto filtered = with("content_filter");
    CHECK(filtered.stop_reason == "error");
    CHECK(filtered.error_message == "Provider finish_reason: content_filter");
}

TEST_CASE("chat error bodies, HTTP errors, refusals and non-JSON bodies give stop_reason error",
          "[llm][openai_chat]") {
    auto quota = llm::parse_openai_chat_response(fixture("chat_error.json"), gpt());
    CHECK(quota.stop_reason == "error");
    CHECK(quota.error_message ==
          "insufficient_quota: You exceeded your current quota, please check your plan and billing "
          "details.");
    auto http = llm::parse_openai_chat_response(fixture("chat_error.json"), gpt(), {}, 429);
    CHECK(http.error_message ==
          "HTTP 429: insufficient_quota: You exceeded your current quota, please check your plan "
          "and billing details.");
    CHECK(
        llm::parse_openai_chat_response("<html>Bad gateway</html>", gpt(), {}, 502).error_message ==
        "HTTP 502");
    auto garbage = llm::parse_openai_chat_response("{\"choices\": [", gpt());
    CHECK(garbage.stop_reason == "error");
    CHECK(garbage.error_message == "the response is not a JSON object");
    auto refusal = llm::parse_openai_chat_response(fixture("chat_refusal.json"), gpt());
    CHECK(refusal.stop_reason == "error");
    CHECK(refusal.error_message == "refusal: I'm sorry, I cannot help with that.");
    REQUIRE(refusal.content.size() == 1);
    CHECK(llm::parse_openai_chat_response(R"({"choices":[]})", gpt()).error_message ==
          "the response has no choices");
}

TEST_CASE("chat: missing usage is zero and reported, huge counts are clamped",
          "[llm][openai_chat]") {
    auto m = llm::parse_openai_chat_response(
        R"({"choices":[{"message":{"content":"x"},"finish_reason":"stop"}]})", gpt(), prices());
    CHECK(m.stop_reason == "stop");
    CHECK(m.usage.total_tokens == 0);
    CHECK(m.usage.cost.total == 0);
    CHECK(has_diagnostic(m, "missing_usage"));
    auto huge = llm::parse_openai_chat_response(
        R"({"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1e300,"completion_tokens":99999999999999999999999}})",
        gpt());
    CHECK(huge.usage.input == llm::max_token_count);
    CHECK(huge.usage.output == llm::max_token_count);
    CHECK(huge.usage.total_tokens == 2 * llm::max_token_count);
    auto overflow =
        llm::parse_openai_chat_response(R"({"choices":[],"usage":{"prompt_tokens":1e400}})", gpt());
    CHECK(overflow.stop_reason == "error");
}

TEST_CASE("chat: tool arguments that are not a JSON object are kept as text and reported",
          "[llm][openai_chat]") {
    auto m = llm::parse_openai_chat_response(
        R"({"choices":[{"message":{"tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{\"a\": 1"}}]},"finish_reason":"tool_calls"}],"usage":{}})",
        gpt());
    const auto& call = std::get<ToolCallContent>(m.content.at(0));
    CHECK(call.arguments == Json::object());
    CHECK(call.extra["rawArguments"] == "{\"a\": 1");
    CHECK(has_diagnostic(m, "invalid_tool_arguments"));
    CHECK(m.stop_reason == "tool_use");
}

TEST_CASE("a streamed chat reply gives the same message in every chunking", "[llm][openai_chat]") {
    const std::string bytes = fixture("chat_stream_tool.sse");
    const AssistantMessage whole = stream_chat(bytes, bytes.size());
    CHECK(whole.stop_reason == "tool_use");
    REQUIRE(whole.content.size() == 3);
    CHECK(std::get<TextContent>(whole.content[0]).text == "Reading both.");
    CHECK(std::get<ToolCallContent>(whole.content[1]).arguments == Json{{"path", "a.txt"}});
    CHECK(std::get<ToolCallContent>(whole.content[2]).id == "call_Ee22");
    CHECK(whole.usage.cache_read == 1024);
    CHECK(whole.usage.input == 176);
    for (std::size_t c : {1u, 2u, 7u, 13u, 100u}) {
        INFO(c);
        const AssistantMessage m = stream_chat(bytes, c);
        CHECK(plain(message_to_json(m, Dialect::native)).erase("timestamp") ==
              plain(message_to_json(whole, Dialect::native)).erase("timestamp"));
    }
}

TEST_CASE("a streamed chat reply yields UI events in order", "[llm][openai_chat]") {
    llm::OpenAiChatStream s(gpt());
    std::vector<llm::StreamEvent> events;
    stream_all(s, fixture("chat_stream_tool.sse"), 9, &events);
    std::string text;
    std::vector<llm::StreamEventType> kinds;
    for (const auto& e : events) {
        if (e.type == llm::StreamEventType::text_delta) text += e.delta;
        if (kinds.empty() || kinds.back() != e.type) kinds.push_back(e.type);
    }
    CHECK(text == "Reading both.");
    using T = llm::StreamEventType;
    CHECK(kinds == std::vector<T>{T::text_start, T::text_delta, T::toolcall_start,
                                  T::toolcall_delta, T::toolcall_start, T::toolcall_delta,
                                  T::text_end, T::toolcall_end, T::done});
}

TEST_CASE("chat streams: reasoning_content becomes thinking and is sent back in the same field",
          "[llm][openai_chat]") {
    llm::ModelSpec oss{"llama.cpp", "gpt-oss-20b", "openai-completions", true, false, 16384};
    llm::OpenAiChatStream s(oss);
    auto m = stream_all(s, fixture("chat_stream_reasoning.sse"), 5);
    CHECK(m.stop_reason == "length");
    const auto& th = std::get<ThinkingContent>(m.content.at(0));
    CHECK(th.thinking == "3 plus 3 is 6.");
    auto body = llm::to_openai_chat(
        {std::make_shared<const AgentMessage>(user("q")), std::make_shared<const AgentMessage>(m)},
        oss);
    CHECK(body["messages"][1]["reasoning_content"] == "3 plus 3 is 6.");
    CHECK(body["messages"][1]["content"] == "6");
}

TEST_CASE("chat streams: bad input is an error or a documented recovery, never an exception",
          "[llm][openai_chat]") {
    const std::string text = chunk(R"({"index":0,"delta":{"content":"Hel"}})");
    const std::string done =
        chunk(R"({"index":0,"delta":{},"finish_reason":"stop"})") + "data: [DONE]\n\n";

    SECTION("malformed JSON") {
        auto m = stream_chat(text + "data: {\"choices\": [\n\n" + done);
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message->rfind("malformed JSON in a 'data' event", 0) == 0);
        CHECK(std::get<TextContent>(m.content.at(0)).text == "Hel");  // kept
    }
    SECTION("cut mid-event") {
        const std::string all = text + done;
        auto m = stream_chat(all.substr(0, text.size() + 30));
        CHECK(m.stop_reason == "error");
    }
    SECTION("ended before a finish_reason") {
        auto m = stream_chat(text);
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message == "the stream ended before a finish_reason");
    }
    SECTION("unknown fields and event types are ignored") {
        auto m =
            stream_chat("event: keepalive\ndata: {\"hello\":1}\n\n" + text + ": ping\n\n" + done);
        CHECK(m.stop_reason == "stop");
        CHECK(std::get<TextContent>(m.content.at(0)).text == "Hel");
        CHECK(has_diagnostic(m, "missing_usage"));
    }
    SECTION("an error chunk") {
        auto m = stream_chat(
            text + "data: {\"error\":{\"message\":\"Rate limit\",\"type\":\"rate_limit\"}}\n\n");
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message == "rate_limit: Rate limit");
    }
    SECTION("a tool call delta before its start, arguments that are not JSON") {
        auto m = stream_chat(
            chunk(
                R"({"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{oops"}}]}})") +
            chunk(
                R"({"index":0,"delta":{"tool_calls":[{"index":3,"id":"late","function":{"name":"f"}}]},"finish_reason":"tool_calls"})"));
        const auto& call = std::get<ToolCallContent>(m.content.at(0));
        CHECK(call.id == "late");
        CHECK(call.name == "f");
        CHECK(call.extra["rawArguments"] == "{oops");
        CHECK(has_diagnostic(m, "invalid_tool_arguments"));
    }
    SECTION("non-UTF-8 bytes") {
        auto m = stream_chat(chunk("{\"index\":0,\"delta\":{\"content\":\"caf\xE9\"}}") + done, 3);
        CHECK(std::get<TextContent>(m.content.at(0)).text == "caf\xEF\xBF\xBD");
        CHECK_NOTHROW(message_to_json(m, Dialect::native).dump());
    }
    SECTION("huge numbers") {
        auto m = stream_chat(text + done +
                             "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1e999}}\n\n");
        CHECK(m.stop_reason == "error");
        auto clamped = stream_chat(text + done +
                                   "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1e99}}\n\n");
        CHECK(clamped.usage.input == llm::max_token_count);
    }
    SECTION("a refusal") {
        auto m = stream_chat(chunk(R"({"index":0,"delta":{"refusal":"No."}})") + done);
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message == "refusal: No.");
    }
    SECTION("bytes after the end are ignored") {
        llm::OpenAiChatStream s(gpt());
        s.feed(text + done);
        auto m = s.finish();
        CHECK(s.feed(text).empty());
        CHECK(s.finish().content.size() == m.content.size());
    }
}

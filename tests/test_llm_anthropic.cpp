// Anthropic Messages: request bodies (golden), whole and streamed replies, thinking signatures
// round trip, bad input.
#include "llm/scenarios.hpp"
#include "support/builders.hpp"
#include "support/catch.hpp"

#include <agentcore/llm/anthropic.hpp>

using namespace agentcore;
using namespace agentcore::testing;
using namespace agentcore::testing::llm_fixtures;

namespace {

llm::ModelSpec sonnet() {
    return llm::ModelSpec{"anthropic", "claude-sonnet-4-5", "", true, true, 64000};
}

AssistantMessage stream_anthropic(const std::string& bytes, std::size_t chunk = 64) {
    llm::AnthropicStream s(sonnet(), prices());
    return stream_all(s, bytes, chunk);
}

const std::string start = sse_event(
    "message_start", R"("message":{"id":"msg_1","usage":{"input_tokens":10,"output_tokens":1}})");
const std::string text_block =
    sse_event("content_block_start", R"("index":0,"content_block":{"type":"text","text":""})") +
    sse_event("content_block_delta", R"("index":0,"delta":{"type":"text_delta","text":"Hi"})") +
    sse_event("content_block_stop", R"("index":0)");
const std::string stream_end =
    sse_event("message_delta",
              R"("delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4})") +
    sse_event("message_stop", "");

}  // namespace

TEST_CASE("anthropic request bodies match the golden files", "[llm][anthropic]") {
    for (const char* name : {"anthropic_thinking_tools", "anthropic_adaptive_long_cache",
                             "anthropic_from_other_model"}) {
        INFO(name);
        const Scenario s = scenario(name);
        CHECK(plain(llm::to_anthropic_messages(s.messages, s.model, s.options)) ==
              nlohmann::json::parse(fixture(std::string("golden/") + name + ".json")));
    }
}

TEST_CASE("anthropic requests: thinking budget per level, cache markers off, temperature",
          "[llm][anthropic]") {
    std::vector<MessageHandle> messages{std::make_shared<const AgentMessage>(user("hi"))};
    llm::RequestOptions o;
    o.thinking_level = "minimal";
    o.temperature = 0.5;
    o.max_tokens = 1000;
    Json body = llm::to_anthropic_messages(messages, sonnet(), o);
    CHECK(body["thinking"] ==
          Json{{"type", "enabled"}, {"budget_tokens", 1024}, {"display", "summarized"}});
    CHECK(body["max_tokens"] == 2024);
    CHECK_FALSE(body.contains("temperature"));  // the API rejects a temperature with thinking
    o.thinking_level = "off";
    body = llm::to_anthropic_messages(messages, sonnet(), o);
    CHECK(body["thinking"] == Json{{"type", "disabled"}});
    CHECK(body["temperature"] == 0.5);
    CHECK(body["max_tokens"] == 1000);
    o.cache_retention = llm::CacheRetention::none;
    o.system_prompt = "sys";
    body = llm::to_anthropic_messages(messages, sonnet(), o);
    CHECK(body.dump().find("cache_control") == std::string::npos);
    llm::ModelSpec unknown{"anthropic", "claude-x", "", false, true, 0};
    CHECK(llm::to_anthropic_messages(messages, unknown, {})["max_tokens"] == 4096);
    llm::ModelSpec small{"anthropic", "claude-y", "", true, true, 4000};
    o.thinking_level = "high";
    o.max_tokens.reset();
    body = llm::to_anthropic_messages(messages, small, o);
    CHECK(body["max_tokens"] == 4000);
    CHECK(body["thinking"]["budget_tokens"] == 2976);
}

TEST_CASE(
    "a whole anthropic reply: thinking with signature, redacted thinking, tool use, cache usage",
    "[llm][anthropic]") {
    auto m = llm::parse_anthropic_response(fixture("anthropic_response.json"), sonnet(), prices());
    CHECK(m.stop_reason == "tool_use");
    REQUIRE(m.content.size() == 4);
    CHECK(std::get<ThinkingContent>(m.content[0]).extra["thinkingSignature"] ==
          "WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve");
    CHECK(std::get<ThinkingContent>(m.content[1]).extra["redacted"] == true);
    CHECK(std::get<ToolCallContent>(m.content[3]).arguments ==
          Json{{"location", "Paris"}, {"unit", "celsius"}});
    CHECK(m.usage.input == 2095);
    CHECK(m.usage.cache_write == 1000);
    CHECK(m.usage.cache_read == 5000);
    CHECK(m.usage.output == 503);
    CHECK(m.usage.total_tokens == 8598);
    CHECK(m.usage.cost.cache_write == Approx(1000 * 3.75 / 1e6));
}

TEST_CASE("thinking signatures survive the session file and go back to the same model unchanged",
          "[llm][anthropic]") {
    const AssistantMessage reply = stream_anthropic(fixture("anthropic_stream_tool.sse"), 11);
    REQUIRE(reply.stop_reason == "tool_use");
    for (Dialect d : {Dialect::native, Dialect::pi}) {
        // Written and read back as a session would: the signature lives in the block's extra.
        const AgentMessage stored =
            message_from_json(Json::parse(message_to_json(reply, d).dump()), d);
        const auto body =
            llm::to_anthropic_messages({std::make_shared<const AgentMessage>(user("q")),
                                        std::make_shared<const AgentMessage>(stored),
                                        std::make_shared<const AgentMessage>(tool_result(
                                            "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "read", "log"))},
                                       sonnet());
        const Json& assistant = body["messages"][1];
        CHECK(assistant["content"][0] ==
              Json{{"type", "thinking"},
                   {"thinking", "The user wants the test log. I will read it."},
                   {"signature", "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDWXc"}});
        CHECK(assistant["content"][2]["id"] == "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
        CHECK(body["messages"][2]["content"][0]["tool_use_id"] == "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    }
    // To another model the thinking goes as text, without the signature.
    llm::ModelSpec other{"anthropic", "claude-haiku-4-5", "", false, true, 8192};
    const auto body = llm::to_anthropic_messages({std::make_shared<const AgentMessage>(user("q")),
                                                  std::make_shared<const AgentMessage>(reply)},
                                                 other);
    CHECK(body["messages"][1]["content"][0] ==
          Json{{"type", "text"}, {"text", "The user wants the test log. I will read it."}});
}

TEST_CASE("anthropic: error bodies, refusals and unknown stop reasons", "[llm][anthropic]") {
    auto overloaded =
        llm::parse_anthropic_response(fixture("anthropic_error.json"), sonnet(), {}, 529);
    CHECK(overloaded.stop_reason == "error");
    CHECK(overloaded.error_message == "HTTP 529: overloaded_error: Overloaded");
    CHECK(llm::parse_anthropic_response(fixture("anthropic_error.json"), sonnet()).error_message ==
          "overloaded_error: Overloaded");
    auto refusal = llm::parse_anthropic_response(fixture("anthropic_refusal.json"), sonnet());
    CHECK(refusal.stop_reason == "error");
    CHECK(refusal.error_message == "the model refused to answer (stop_reason refusal)");
    CHECK(std::get<TextContent>(refusal.content.at(0)).text == "I can't help with that.");
    auto odd = llm::parse_anthropic_response(
        R"({"content":[],"stop_reason":"new_reason","usage":{}})", sonnet());
    CHECK(odd.error_message == "unknown stop_reason 'new_reason'");
    CHECK(llm::parse_anthropic_response(R"({"content":[],"stop_reason":"pause_turn","usage":{}})",
                                        sonnet())
              .stop_reason == "stop");
    CHECK(llm::parse_anthropic_response(R"({"content":[],"stop_reason":"max_tokens","usage":{}})",
                                        sonnet())
              .stop_reason == "length");
}

TEST_CASE("anthropic: a body that is not a JSON object gives stop_reason error, never an exception",
          "[llm][anthropic]") {
    for (const std::string& body :
         {std::string(R"({"type":"message","content":[)"), std::string("<html>Overloaded</html>"),
          std::string(), std::string("null"), std::string("[{\"type\":\"text\"}]"),
          std::string(R"({"content":[],"stop_reason":"end_turn","usage":{"input_tokens":1e999}})"),
          std::string("{\"content\":[{\"type\":\"text\",\"text\":\"\xC3(\"}]")}) {
        INFO(body);
        AssistantMessage m;
        CHECK_NOTHROW(m = llm::parse_anthropic_response(body, sonnet()));
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message == "the response is not a JSON object");
        CHECK(m.content.empty());
    }
    CHECK(
        llm::parse_anthropic_response("<html>Overloaded</html>", sonnet(), {}, 529).error_message ==
        "HTTP 529");
    // Huge counts that still read as numbers are clamped; text that is not UTF-8 gets U+FFFD.
    auto odd = llm::parse_anthropic_response(
        "{\"content\":[{\"type\":\"text\",\"text\":\"\xC3(\"}],\"stop_reason\":\"end_turn\","
        "\"usage\":{\"input_tokens\":1e300,\"output_tokens\":99999999999999999999999}}",
        sonnet());
    CHECK(odd.stop_reason == "stop");
    CHECK(std::get<TextContent>(odd.content.at(0)).text == "\xEF\xBF\xBD(");
    CHECK(odd.usage.input == llm::max_token_count);
    CHECK(odd.usage.output == llm::max_token_count);
}

TEST_CASE("a streamed anthropic reply gives the same message in every chunking",
          "[llm][anthropic]") {
    const std::string bytes = fixture("anthropic_stream_tool.sse");
    const AssistantMessage whole = stream_anthropic(bytes, bytes.size());
    CHECK(whole.stop_reason == "tool_use");
    REQUIRE(whole.content.size() == 3);
    CHECK(std::get<TextContent>(whole.content[1]).text == "I'll read the log — ünïcode ✓.");
    CHECK(std::get<ToolCallContent>(whole.content[2]).arguments == Json{{"path", "/tmp/out.log"}});
    CHECK(whole.usage.input == 472);
    CHECK(whole.usage.output == 89);
    CHECK(whole.usage.cache_read == 10240);
    CHECK(whole.usage.cache_write == 2048);
    for (std::size_t c : {1u, 2u, 5u, 64u}) {
        INFO(c);
        CHECK(plain(message_to_json(stream_anthropic(bytes, c), Dialect::native))
                  .erase("timestamp") ==
              plain(message_to_json(whole, Dialect::native)).erase("timestamp"));
    }
}

TEST_CASE("anthropic streams: bad input is an error or a documented recovery", "[llm][anthropic]") {
    SECTION("a delta for a block that was never started is ignored and reported") {
        auto m =
            stream_anthropic(start +
                             sse_event("content_block_delta",
                                       R"("index":5,"delta":{"type":"text_delta","text":"x"})") +
                             text_block + stream_end);
        CHECK(m.stop_reason == "stop");
        CHECK(m.content.size() == 1);
        CHECK(has_diagnostic(m, "out_of_order_event"));
    }
    SECTION("unknown events and block types are ignored") {
        auto m = stream_anthropic(
            start + sse_event("future_event", R"("x":1)") +
            sse_event("content_block_start",
                      R"("index":0,"content_block":{"type":"server_tool_use","id":"s"})") +
            sse_event("content_block_stop", R"("index":0)") + text_block + stream_end);
        CHECK(m.stop_reason == "stop");
        REQUIRE(m.content.size() == 1);
        CHECK(has_diagnostic(m, "unknown_block"));
    }
    SECTION("a stream that ends before message_stop") {
        auto m = stream_anthropic(start + text_block);
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message == "the stream ended before message_stop");
        CHECK(std::get<TextContent>(m.content.at(0)).text == "Hi");
    }
    SECTION("an empty stream") {
        CHECK(stream_anthropic("").error_message == "the stream ended before message_start");
    }
    SECTION("cut mid-event") {
        const std::string all = start + text_block + stream_end;
        auto m = stream_anthropic(all.substr(0, start.size() + 40));
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message->rfind("malformed JSON in a 'content_block_start' event", 0) == 0);
    }
    SECTION("an event that never ends is cut off at max_sse_event_bytes") {
        llm::AnthropicStream s(sonnet());
        s.feed(start + "event: content_block_delta\ndata: ");
        const std::string chunk(1 << 20, 'x');
        std::size_t fed = 0;
        while (fed <= llm::max_sse_event_bytes && s.partial().stop_reason != "error") {
            s.feed(chunk);
            fed += chunk.size();
        }
        const auto m = s.finish();
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message == "an SSE event exceeds 67108864 bytes");
        CHECK(s.feed(stream_end).empty());
    }
    SECTION("an error event") {
        auto m = stream_anthropic(
            start +
            sse_event("error", R"("error":{"type":"overloaded_error","message":"Overloaded"})"));
        CHECK(m.error_message == "overloaded_error: Overloaded");
    }
    SECTION("tool input that is not JSON") {
        auto m = stream_anthropic(
            start +
            sse_event(
                "content_block_start",
                R"("index":0,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}})") +
            sse_event(
                "content_block_delta",
                R"("index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":tru"})") +
            sse_event("content_block_stop", R"("index":0)") +
            sse_event("message_delta",
                      R"("delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":4})") +
            sse_event("message_stop", ""));
        const auto& call = std::get<ToolCallContent>(m.content.at(0));
        CHECK(call.arguments == Json::object());
        CHECK(call.extra["rawArguments"] == "{\"a\":tru");
        CHECK(has_diagnostic(m, "invalid_tool_arguments"));
        CHECK(m.stop_reason == "tool_use");
    }
    SECTION("missing usage, huge numbers, non-UTF-8 text") {
        auto m = stream_anthropic(
            sse_event("message_start", R"("message":{"id":"m"})") +
            sse_event("content_block_start",
                      R"("index":0,"content_block":{"type":"text","text":""})") +
            "event: content_block_delta\ndata: "
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
            "\"text\":\"\xC3(\"}}\n\n" +
            sse_event("content_block_stop", R"("index":0)") +
            sse_event("message_delta",
                      R"("delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1e200})") +
            sse_event("message_stop", ""));
        CHECK(m.stop_reason == "stop");
        CHECK(std::get<TextContent>(m.content.at(0)).text == "\xEF\xBF\xBD(");
        CHECK(m.usage.output == llm::max_token_count);
        CHECK(m.usage.input == 0);
    }
}

// OpenAI Responses: request bodies (golden), whole and streamed replies, bad input.
#include "llm/scenarios.hpp"
#include "support/builders.hpp"
#include "support/catch.hpp"

#include <agentcore/llm/openai_responses.hpp>

using namespace agentcore;
using namespace agentcore::testing;
using namespace agentcore::testing::llm_fixtures;

namespace {

llm::ModelSpec gpt5() { return llm::ModelSpec{"openai", "gpt-5", "", true, true, 128000}; }

AssistantMessage stream_responses(const std::string& bytes, std::size_t chunk = 64) {
    llm::OpenAiResponsesStream s(gpt5(), prices());
    return stream_all(s, bytes, chunk);
}

const std::string completed = sse_event(
    "response.completed",
    R"("response":{"id":"r1","status":"completed","usage":{"input_tokens":5,"output_tokens":2,"total_tokens":7}})");

}  // namespace

TEST_CASE("responses request bodies match the golden files", "[llm][openai_responses]") {
    for (const char* name : {"responses_reasoning_tools", "responses_from_anthropic"}) {
        INFO(name);
        const Scenario s = scenario(name);
        CHECK(plain(llm::to_openai_responses(s.messages, s.model, s.options)) ==
              nlohmann::json::parse(fixture(std::string("golden/") + name + ".json")));
    }
}

TEST_CASE("responses requests: reasoning effort per thinking level, cache retention",
          "[llm][openai_responses]") {
    std::vector<MessageHandle> messages{std::make_shared<const AgentMessage>(user("hi"))};
    llm::RequestOptions o;
    o.thinking_level = "xhigh";
    Json body = llm::to_openai_responses(messages, gpt5(), o);
    CHECK(body["reasoning"] == Json{{"effort", "high"}, {"summary", "auto"}});
    CHECK(body["include"] == Json::array({"reasoning.encrypted_content"}));
    o.thinking_level = "off";
    CHECK(llm::to_openai_responses(messages, gpt5(), o)["reasoning"] == Json{{"effort", "none"}});
    llm::ModelSpec plain_model{"openai", "gpt-4.1", "", false, true, 0};
    CHECK_FALSE(llm::to_openai_responses(messages, plain_model, o).contains("reasoning"));
    o.cache_retention = llm::CacheRetention::long_term;
    o.session_id = "sess";
    body = llm::to_openai_responses(messages, gpt5(), o);
    CHECK(body["prompt_cache_retention"] == "24h");
    CHECK(body["prompt_cache_key"] == "sess");
    o.cache_retention = llm::CacheRetention::none;
    CHECK_FALSE(llm::to_openai_responses(messages, gpt5(), o).contains("prompt_cache_key"));
}

TEST_CASE("a whole responses reply: reasoning, message, function call, usage",
          "[llm][openai_responses]") {
    auto m =
        llm::parse_openai_responses_response(fixture("responses_response.json"), gpt5(), prices());
    CHECK(m.stop_reason == "tool_use");
    REQUIRE(m.content.size() == 3);
    const auto& th = std::get<ThinkingContent>(m.content[0]);
    CHECK(th.thinking == "Look up the weather.\n\nThen answer.");
    CHECK(Json::parse(th.extra["thinkingSignature"].get<std::string>())["encrypted_content"] ==
          "gAAAA");
    CHECK(std::get<TextContent>(m.content[1]).extra["textSignature"] ==
          "{\"v\":1,\"id\":\"msg_6801b\"}");
    const auto& call = std::get<ToolCallContent>(m.content[2]);
    CHECK(call.id == "call_6801d|fc_6801c");
    CHECK(call.arguments == Json{{"location", "Paris"}});
    CHECK(m.usage.input == 200);
    CHECK(m.usage.cache_read == 128);
    CHECK(m.usage.output == 52);
    CHECK(m.usage.total_tokens == 380);

    // Replayed to the same model: the reasoning item, the message id, both halves of the call id.
    auto body = llm::to_openai_responses(
        {std::make_shared<const AgentMessage>(user("q")), std::make_shared<const AgentMessage>(m),
         std::make_shared<const AgentMessage>(tool_result(call.id, "get_weather", "sunny"))},
        gpt5());
    const Json& input = body["input"];
    CHECK(input[1]["id"] == "rs_6801a");
    CHECK(input[1]["encrypted_content"] == "gAAAA");
    CHECK(input[2]["id"] == "msg_6801b");
    CHECK(input[3]["id"] == "fc_6801c");
    CHECK(input[3]["call_id"] == "call_6801d");
    CHECK(input[4]["call_id"] == "call_6801d");
}

TEST_CASE("responses: incomplete, failed, refusal and error bodies", "[llm][openai_responses]") {
    auto inc = llm::parse_openai_responses_response(fixture("responses_incomplete.json"), gpt5());
    CHECK(inc.stop_reason == "length");
    CHECK_FALSE(inc.error_message);
    auto failed = llm::parse_openai_responses_response(
        R"({"id":"r","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]})",
        gpt5());
    CHECK(failed.stop_reason == "error");
    CHECK(failed.error_message == "server_error: boom");
    auto refusal = llm::parse_openai_responses_response(
        R"({"status":"completed","output":[{"type":"message","id":"m","content":[{"type":"refusal","refusal":"No."}]}],"usage":{}})",
        gpt5());
    CHECK(refusal.stop_reason == "error");
    CHECK(refusal.error_message == "refusal: No.");
    auto error = llm::parse_openai_responses_response(
        R"({"error":{"message":"Invalid key","type":"invalid_request_error"}})", gpt5(), {}, 401);
    CHECK(error.error_message == "HTTP 401: invalid_request_error: Invalid key");
}

TEST_CASE("responses: a body that is not a JSON object gives stop_reason error, never an exception",
          "[llm][openai_responses]") {
    for (const std::string& body :
         {std::string(R"({"status":"completed","output":[)"),
          std::string("<html>Bad gateway</html>"), std::string(), std::string("[1,2]"),
          std::string("\"text\""),
          std::string(R"({"status":"completed","usage":{"input_tokens":1e999}})"),
          std::string("{\"status\":\"compl\xFF\"")}) {
        INFO(body);
        AssistantMessage m;
        CHECK_NOTHROW(m = llm::parse_openai_responses_response(body, gpt5()));
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message == "the response is not a JSON object");
        CHECK(m.content.empty());
    }
    CHECK(llm::parse_openai_responses_response("<html>Bad gateway</html>", gpt5(), {}, 502)
              .error_message == "HTTP 502");
    // Huge counts that still read as numbers are clamped.
    auto huge = llm::parse_openai_responses_response(
        R"({"status":"completed","output":[],"usage":{"input_tokens":1e300,"output_tokens":99999999999999999999999}})",
        gpt5());
    CHECK(huge.stop_reason == "stop");
    CHECK(huge.usage.input == llm::max_token_count);
    CHECK(huge.usage.output == llm::max_token_count);
}

TEST_CASE("a streamed responses reply gives the same message in every chunking",
          "[llm][openai_responses]") {
    const std::string bytes = fixture("responses_stream.sse");
    const AssistantMessage whole = stream_responses(bytes, bytes.size());
    CHECK(whole.stop_reason == "tool_use");
    REQUIRE(whole.content.size() == 3);
    CHECK(std::get<ThinkingContent>(whole.content[0]).thinking == "Listing files needs bash.");
    CHECK(std::get<TextContent>(whole.content[1]).text == "Running ls.");
    CHECK(std::get<ToolCallContent>(whole.content[2]).id == "call_Q1|fc_01");
    CHECK(whole.usage.input == 500);
    CHECK(whole.usage.cache_read == 1500);
    CHECK(whole.extra["responseId"] == "resp_67c");
    for (std::size_t c : {1u, 3u, 17u, 256u}) {
        INFO(c);
        CHECK(plain(message_to_json(stream_responses(bytes, c), Dialect::native))
                  .erase("timestamp") ==
              plain(message_to_json(whole, Dialect::native)).erase("timestamp"));
    }
}

TEST_CASE("responses streams: bad input is an error or a documented recovery",
          "[llm][openai_responses]") {
    const std::string msg = sse_event("response.output_item.added",
                                      R"("item":{"id":"m1","type":"message","content":[]})") +
                            sse_event("response.output_text.delta", R"("delta":"Hi")");
    SECTION("a delta before its item is ignored and reported") {
        auto m = stream_responses(sse_event("response.output_text.delta", R"("delta":"lost")") +
                                  msg + completed);
        CHECK(m.stop_reason == "stop");
        CHECK(std::get<TextContent>(m.content.at(0)).text == "Hi");
        CHECK(has_diagnostic(m, "out_of_order_event"));
    }
    SECTION("unknown event types are ignored") {
        auto m = stream_responses(sse_event("response.future_thing", R"("x":1)") + msg + completed);
        CHECK(m.stop_reason == "stop");
        CHECK(m.content.size() == 1);
    }
    SECTION("a stream that ends before response.completed") {
        auto m = stream_responses(msg);
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message == "the stream ended before response.completed");
        CHECK(std::get<TextContent>(m.content.at(0)).text == "Hi");
    }
    SECTION("cut mid-event") {
        const std::string all = msg + completed;
        auto m = stream_responses(all.substr(0, all.size() - 20));
        CHECK(m.stop_reason == "error");
        CHECK(m.error_message->rfind("malformed JSON in a 'response.completed' event", 0) == 0);
    }
    SECTION("response.failed and error events") {
        auto failed = stream_responses(
            msg + sse_event("response.failed",
                            R"("response":{"error":{"code":"server_error","message":"down"}})"));
        CHECK(failed.error_message == "server_error: down");
        auto error = stream_responses(
            msg + sse_event("error", R"("code":"rate_limit_exceeded","message":"slow down")"));
        CHECK(error.error_message == "Error Code rate_limit_exceeded: slow down");
    }
    SECTION("function call arguments that are not JSON") {
        auto m = stream_responses(
            sse_event(
                "response.output_item.added",
                R"("item":{"id":"fc_1","type":"function_call","call_id":"c","name":"f","arguments":""})") +
            sse_event("response.function_call_arguments.delta", R"("delta":"[1,")") +
            sse_event(
                "response.output_item.done",
                R"("item":{"id":"fc_1","type":"function_call","call_id":"c","name":"f","arguments":"[1,"})") +
            completed);
        const auto& call = std::get<ToolCallContent>(m.content.at(0));
        CHECK(call.extra["rawArguments"] == "[1,");
        CHECK(has_diagnostic(m, "invalid_tool_arguments"));
        CHECK(m.stop_reason == "tool_use");
    }
    SECTION("missing usage") {
        auto m = stream_responses(
            msg + sse_event("response.completed", R"("response":{"status":"completed"})"));
        CHECK(m.stop_reason == "stop");
        CHECK(has_diagnostic(m, "missing_usage"));
    }
    SECTION("non-UTF-8 bytes") {
        // A Latin-1 e-acute (0xE9) in a text delta, and a lone continuation byte (0x80).
        const std::string bytes = sse_event("response.output_item.added",
                                            R"("item":{"id":"m1","type":"message","content":[]})") +
                                  sse_event("response.output_text.delta", "\"delta\":\"caf\xE9\"") +
                                  sse_event("response.output_text.delta", "\"delta\":\" \x80!\"") +
                                  completed;
        for (std::size_t c : {1u, 3u, 64u}) {
            INFO(c);
            auto m = stream_responses(bytes, c);
            CHECK(m.stop_reason == "stop");
            CHECK(std::get<TextContent>(m.content.at(0)).text == "caf\xEF\xBF\xBD \xEF\xBF\xBD!");
            CHECK_NOTHROW(message_to_json(m, Dialect::native).dump());
        }
    }
    SECTION("huge numbers") {
        auto usage = [&](const std::string& numbers) {
            return stream_responses(
                msg + sse_event("response.completed",
                                R"("response":{"status":"completed","usage":)" + numbers + "}"));
        };
        auto clamped = usage(
            R"({"input_tokens":1e99,"output_tokens":99999999999999999999999,"input_tokens_details":{"cached_tokens":-5}})");
        CHECK(clamped.stop_reason == "stop");
        CHECK(clamped.usage.input == llm::max_token_count);
        CHECK(clamped.usage.output == llm::max_token_count);
        CHECK(clamped.usage.cache_read == 0);
        CHECK(clamped.usage.total_tokens == 2 * llm::max_token_count);
        // A number too large for a double is not JSON that can be read: the stream fails, the
        // text received so far is kept.
        auto overflow = usage(R"({"input_tokens":1e999,"output_tokens":1})");
        CHECK(overflow.stop_reason == "error");
        CHECK(overflow.error_message->rfind("malformed JSON in a 'response.completed' event", 0) ==
              0);
        CHECK(std::get<TextContent>(overflow.content.at(0)).text == "Hi");
    }
}

// The JSON codec's errors: codes, field paths, entry ids, and never the conversation's text.
#include "support/catch.hpp"

#include <agentcore/codec.hpp>

#include <string>
#include <string_view>

using namespace agentcore;

namespace {

// Decodes `line`, expects a SessionError of `code`, returns its message.
std::string entry_error(std::string_view line, Dialect d,
                        ErrorCode code = ErrorCode::invalid_entry) {
    try {
        decode_entry(line, d);
    } catch (const SessionError& e) {
        CHECK(e.code() == code);
        return e.what();
    }
    FAIL("no error for " << line);
    return {};
}

std::string header_error(std::string_view line) {
    try {
        decode_header(line);
    } catch (const SessionError& e) {
        CHECK(e.code() == ErrorCode::invalid_session);
        return e.what();
    }
    FAIL("no error for " << line);
    return {};
}

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("an ill-typed usage count names the field path and the entry", "[codec]") {
    const std::string msg = entry_error(
        R"({"type":"message","id":"ab12cd34","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":"many","output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}})",
        Dialect::pi);
    CHECK(contains(msg, "entry 'ab12cd34'"));
    CHECK(contains(msg, "field 'message.usage.input': expected an integer"));
    CHECK_FALSE(contains(msg, "many"));
}

TEST_CASE("a field path names the dialect's spelling, array indexes and nested costs", "[codec]") {
    CHECK(contains(
        entry_error(
            R"({"type":"message","id":"e1","parent_id":null,"timestamp":"t","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cache_read":0,"cache_write":0,"total_tokens":0,"cost":{"input":0,"output":0,"cache_read":"free","cache_write":0,"total":0}},"stop_reason":"stop","timestamp":1}})",
            Dialect::native),
        "field 'message.usage.cost.cache_read': expected a number"));
    CHECK(contains(
        entry_error(
            R"({"type":"message","id":"e2","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"ok"},{"type":"text","text":5}],"timestamp":1}})",
            Dialect::pi),
        "field 'message.content[1].text': expected a string"));
    CHECK(contains(
        entry_error(
            R"({"type":"compaction","id":"e3","parentId":null,"timestamp":"t","summary":"s","tokensBefore":1,"retainedTail":[{"role":"user","content":"x","timestamp":1},{"role":"toolResult","toolCallId":"c","toolName":"n","content":[],"isError":"no","timestamp":1}],"fromHook":false})",
            Dialect::pi),
        "field 'retainedTail[1].isError': expected a boolean"));
    CHECK(contains(
        entry_error(
            R"({"type":"message","id":"e4","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":"{}"}],"api":"a","provider":"p","model":"m","usage":{},"stopReason":"stop","timestamp":1}})",
            Dialect::pi),
        "field 'message.content[0].arguments': expected an object"));
}

TEST_CASE("a missing required field is named", "[codec]") {
    CHECK(contains(
        entry_error(
            R"({"type":"model_change","id":"m1","parentId":"p","timestamp":"t","provider":"x"})",
            Dialect::pi),
        "entry 'm1': field 'modelId': required field is missing"));
    CHECK(contains(entry_error(R"({"type":"message","id":"m2","parent_id":"p","timestamp":"t"})",
                               Dialect::native),
                   "field 'message': required field is missing"));
    CHECK(contains(entry_error(R"({"id":"m3","parent_id":"p","timestamp":"t"})", Dialect::native),
                   "field 'type': required field is missing"));
    CHECK(
        contains(entry_error(R"({"type":"label","parent_id":"p","timestamp":"t","target_id":"x"})",
                             Dialect::native),
                 "field 'id': required field is missing"));
    CHECK(contains(entry_error(R"({"type":"future","parent_id":"p"})", Dialect::native),
                   "field 'id': required field is missing"));
    CHECK(contains(
        entry_error(
            R"({"type":"message","id":"m4","parentId":null,"timestamp":"t","message":{"content":"x","timestamp":1}})",
            Dialect::pi),
        "field 'message.role': required field is missing"));
    CHECK(contains(
        entry_error(
            R"({"type":"message","id":"m5","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1}})",
            Dialect::pi),
        "field 'message.usage': required field is missing"));
    CHECK(contains(
        entry_error(
            R"({"type":"message","id":"m6","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"text":"x"}],"timestamp":1}})",
            Dialect::pi),
        "field 'message.content[0].type': required field is missing"));
}

TEST_CASE("ill-typed base fields are named, with the id when it is known", "[codec]") {
    const std::string bad_id =
        entry_error(R"({"type":"leaf","id":7,"parentId":null,"timestamp":"t"})", Dialect::pi);
    CHECK(contains(bad_id, "entry: field 'id': expected a string, got number"));
    CHECK_FALSE(contains(bad_id, "entry '"));
    CHECK(contains(
        entry_error(R"({"type":"leaf","id":"x1","parentId":5,"timestamp":"t"})", Dialect::pi),
        "entry 'x1': field 'parentId': expected a string or null"));
    CHECK(contains(entry_error(R"({"type":"leaf","id":"x2","parent_id":null,"timestamp":null})",
                               Dialect::native),
                   "entry 'x2': field 'timestamp': expected a string, got null"));
    CHECK(contains(entry_error(R"({"type":3,"id":"x3"})", Dialect::native),
                   "field 'type': expected a string"));
    CHECK(contains(entry_error(R"({"type":"future","id":"x4","parentId":[]})", Dialect::pi),
                   "entry 'x4': field 'parentId': expected a string or null"));
}

TEST_CASE("values of the wrong type are refused everywhere a type is modelled", "[codec]") {
    CHECK(contains(
        entry_error(
            R"({"type":"active_tools_change","id":"a","parent_id":null,"timestamp":"t","active_tool_names":["a",1]})",
            Dialect::native),
        "field 'active_tool_names[1]': expected a string"));
    CHECK(contains(
        entry_error(
            R"({"type":"compaction","id":"a","parent_id":null,"timestamp":"t","summary":"s","tokens_before":1.5,"from_hook":false})",
            Dialect::native),
        "field 'tokens_before': expected an integer"));
    CHECK(contains(
        entry_error(
            R"({"type":"compaction","id":"a","parent_id":null,"timestamp":"t","summary":"s","tokens_before":1,"retained_tail":{},"from_hook":false})",
            Dialect::native),
        "field 'retained_tail': expected an array of messages"));
    CHECK(contains(
        entry_error(
            R"({"type":"custom_message","customType":"c","content":7,"display":true,"id":"a","parentId":null,"timestamp":"t"})",
            Dialect::pi),
        "field 'content': expected a string or an array of content blocks"));
    CHECK(contains(
        entry_error(
            R"({"type":"custom_message","customType":"c","content":"x","display":1,"id":"a","parentId":null,"timestamp":"t"})",
            Dialect::pi),
        "field 'display': expected a boolean or null"));
    CHECK(contains(
        entry_error(
            R"({"type":"branch_summary","id":"a","parentId":null,"timestamp":"t","fromId":"root","summary":"s","fromHook":"yes"})",
            Dialect::pi),
        "field 'fromHook': expected a boolean or null"));
    CHECK(contains(
        entry_error(
            R"({"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"bashExecution","command":"c","output":"","exitCode":"1","cancelled":false,"truncated":false,"timestamp":1}})",
            Dialect::pi),
        "field 'message.exitCode': expected an integer or null"));
    CHECK(contains(
        entry_error(
            R"({"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x","timestamp":18446744073709551615}})",
            Dialect::pi),
        "field 'message.timestamp': expected an integer"));
    CHECK(contains(
        entry_error(R"({"type":"message","id":"a","parentId":null,"timestamp":"t","message":[]})",
                    Dialect::pi),
        "field 'message': expected an object, got array"));
}

TEST_CASE("a line that is JSON but not an object is an invalid entry", "[codec]") {
    CHECK(contains(entry_error("[1,2]", Dialect::native),
                   "entry: expected a JSON object, got array"));
    CHECK(contains(entry_error("\"text\"", Dialect::pi), "got string"));
}

TEST_CASE("an unparseable line names the column and never its text", "[codec]") {
    const std::string secret = "my password is hunter2";
    const std::string line =
        R"({"type":"message","id":"a","message":{"role":"user","content":")" + secret + "\"";
    const std::string msg = entry_error(line, Dialect::native);
    CHECK(contains(msg, "invalid JSON: unexpected end of line in field 'message' at column"));
    CHECK_FALSE(contains(msg, "hunter2"));
    CHECK_FALSE(contains(msg, "password"));
    CHECK(contains(entry_error("", Dialect::native),
                   "invalid JSON: unexpected end of line at column 1"));
    const std::string trailing = entry_error("{\"a\":1} trailing secret", Dialect::pi);
    CHECK(contains(trailing, "invalid JSON: unexpected text after the JSON value at column 9"));
    CHECK_FALSE(contains(trailing, "secret"));
}

TEST_CASE("errors about values never quote the values", "[codec]") {
    const std::string msg = entry_error(
        R"({"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"the launch code is 0000","timestamp":"the launch code"}})",
        Dialect::pi);
    CHECK(contains(msg, "field 'message.timestamp'"));
    CHECK_FALSE(contains(msg, "launch"));
}

TEST_CASE("an id shown in an error is made printable and short", "[codec]") {
    const std::string msg = entry_error(R"({"type":"leaf","id":"bad\nid)" + std::string(100, 'x') +
                                            R"(","parentId":null,"timestamp":5})",
                                        Dialect::pi);
    CHECK(contains(msg, "entry 'bad?id"));
    CHECK_FALSE(contains(msg, std::string(70, 'x')));
}

TEST_CASE("standalone readers raise invalid_entry naming the field", "[codec]") {
    try {
        usage_from_json(
            Json::parse(R"({"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10})"),
            Dialect::pi);
        FAIL("no error");
    } catch (const SessionError& e) {
        CHECK(e.code() == ErrorCode::invalid_entry);
        CHECK(contains(e.what(), "field 'cost': required field is missing"));
    }
    try {
        content_block_from_json(Json::parse(R"({"type":"image","data":"x"})"), Dialect::pi);
        FAIL("no error");
    } catch (const SessionError& e) {
        CHECK(e.code() == ErrorCode::invalid_entry);
        CHECK(contains(e.what(), "field 'mimeType'"));
    }
    try {
        message_from_json(
            Json::parse(R"({"role":"compaction_summary","summary":"s","timestamp":1})"),
            Dialect::native);
        FAIL("no error");
    } catch (const SessionError& e) {
        CHECK(e.code() == ErrorCode::invalid_entry);
        CHECK(contains(e.what(), "field 'tokens_before'"));
    }
}

TEST_CASE("an extra that is not an object cannot be written", "[codec]") {
    SessionInfoEntry e;
    e.id = "s";
    e.extra = Json::array({1});
    try {
        encode_entry(e, Dialect::native);
        FAIL("no error");
    } catch (const SessionError& err) {
        CHECK(err.code() == ErrorCode::invalid_entry);
        CHECK(contains(err.what(), "'extra'"));
    }
}

TEST_CASE("header errors are invalid_session and name the field", "[codec]") {
    CHECK(contains(header_error(R"({"type":"message","id":"s"})"), "session header: field 'type'"));
    CHECK(contains(header_error(R"({"version":3,"id":"s"})"),
                   "field 'type': required field is missing"));
    CHECK(contains(header_error(R"({"type":"session","version":3,"id":42})"),
                   "field 'id': expected a string"));
    CHECK(contains(header_error(R"({"type":"session","version":3})"),
                   "field 'id': required field is missing"));
    CHECK(contains(header_error(R"({"type":"session","version":"3","id":"s"})"),
                   "field 'version': expected an integer"));
    CHECK(contains(header_error(R"({"type":"session","version":0,"id":"s"})"),
                   "unsupported session format version 0"));
    CHECK(contains(header_error(R"({"type":"session","version":3,"id":"s","cwd":1})"),
                   "field 'cwd'"));
    CHECK(contains(
        header_error(R"({"type":"session","version":3,"id":"s","parent_session":7,"metadata":{}})"),
        "field 'parent_session': expected a string or null"));
    CHECK(contains(
        header_error(
            R"({"type":"session","version":3,"id":"s","parent_session":null,"metadata":[]})"),
        "field 'metadata': expected an object"));
    CHECK(contains(header_error("[]"), "session header: expected a JSON object"));
    const std::string parse = header_error(R"({"type":"session","cwd":"/home/secret)");
    CHECK(contains(parse, "invalid JSON: unterminated string"));
    CHECK_FALSE(contains(parse, "secret"));
}

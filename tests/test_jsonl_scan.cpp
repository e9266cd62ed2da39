// The validating JSON scanner and line framing behind fast opens of JSONL sessions.
#include "support/catch.hpp"

#include <agentcore/detail/json_scan.hpp>
#include <agentcore/detail/line_index.hpp>

#include <string>
#include <vector>

using namespace agentcore;
using agentcore::detail::JsonScanner;
using agentcore::detail::ScannedEntry;

namespace {

bool valid(std::string_view text) {
    std::string error;
    return JsonScanner::validate(text, error);
}

bool parses_with_nlohmann(std::string_view text) {
    try {
        const Json parsed = Json::parse(text.begin(), text.end());
        (void)parsed;
        return true;
    } catch (const Json::parse_error&) {
        return false;
    }
}

}  // namespace

// nlohmann refuses a lone surrogate escape; JavaScript (and so the scanner) accepts it.
bool lone_surrogate_sample(std::string_view s) {
    return s == R"({"s":"\ud83d"})" || s == R"({"s":"\ude00"})" || s == R"({"s":"\ud83dx"})";
}

TEST_CASE("the scanner accepts exactly the JSON that nlohmann accepts, lone surrogates aside",
          "[jsonl]") {
    const std::vector<std::string> samples = {R"({})",
                                              R"([])",
                                              R"({"a":1})",
                                              R"({"a":[1,2,{"b":null}],"c":true,"d":false})",
                                              R"(  {"a" : "b" }  )",
                                              R"({"n":-0.5e+10})",
                                              R"({"n":0})",
                                              R"({"n":01})",
                                              R"({"n":1.})",
                                              R"({"n":.5})",
                                              R"({"n":-})",
                                              R"({"n":1e})",
                                              R"({"a":1,})",
                                              R"({"a":1 "b":2})",
                                              R"({"a"})",
                                              R"({"a":tru})",
                                              R"({"a":nul})",
                                              R"({"s":"\u00e9\n\t\"\\\/"})",
                                              R"({"s":"\x"})",
                                              R"({"s":"\ud83d\ude00"})",
                                              R"({"s":"\ud83d"})",
                                              R"({"s":"\ude00"})",
                                              R"({"s":"\ud83dx"})",
                                              R"({"s":"\u12"})",
                                              "{\"s\":\"tab\there\"}",
                                              "{\"s\":\"caf\xC3\xA9\"}",
                                              "{\"s\":\"\xC3\"}",
                                              "{\"s\":\"\xC0\xAF\"}",
                                              "{\"s\":\"\xED\xA0\x80\"}",
                                              "{\"s\":\"\xF4\x90\x80\x80\"}",
                                              "{\"s\":\"\xF0\x9F\x98\x80\"}",
                                              "{\"s\":\"\xE0\x80\xAF\"}",
                                              "{\"s\":\"\xFF\"}",
                                              R"({"a":"unterminated)",
                                              R"({"a":1}})",
                                              R"({"a":1} x)",
                                              "{\"a\":\"0123456789abcdef0123456789\"}",
                                              "{\"a\":\"0123456789ab\\\"cdef0123456789\"}",
                                              R"([1,[2,[3]]])",
                                              R"("x")",
                                              R"(12)",
                                              ""};
    for (const auto& s : samples) {
        INFO(s);
        CHECK(valid(s) == (parses_with_nlohmann(s) || lone_surrogate_sample(s)));
    }
}

TEST_CASE("the scanner returns the raw id, type, parent and usage of an entry line", "[jsonl]") {
    const std::string line =
        R"({"type":"message","id":"a1","parent_id":"p0","timestamp":"t","message":{"role":"assistant",)"
        R"("content":[{"type":"text","text":"id \"x\""}],"usage":{"input":1,"output":2}}})";
    ScannedEntry e;
    std::string error;
    REQUIRE(JsonScanner::scan_entry(line, Dialect::native, e, error));
    CHECK(e.type == "\"message\"");
    CHECK(e.id == "\"a1\"");
    CHECK(e.parent_id == "\"p0\"");
    CHECK(e.message_role == "\"assistant\"");
    CHECK(e.message_usage == R"({"input":1,"output":2})");
    CHECK(e.usage.empty());

    REQUIRE(JsonScanner::scan_entry(
        R"({"type":"compaction","id":"c","parentId":null,"usage":{"input":3}})", Dialect::pi, e,
        error));
    CHECK(e.parent_id == "null");
    CHECK(e.usage == R"({"input":3})");
}

TEST_CASE("the scanner names the column of a syntax error, never the text", "[jsonl]") {
    ScannedEntry e;
    std::string error;
    CHECK_FALSE(JsonScanner::scan_entry(R"({"type":"secret text)", Dialect::native, e, error));
    CHECK(error.find("column") != std::string::npos);
    CHECK(error.find("secret") == std::string::npos);
    CHECK_FALSE(JsonScanner::scan_entry("[1]", Dialect::native, e, error));
    CHECK(error.find("not a JSON object") != std::string::npos);
}

TEST_CASE("the scanner refuses nesting deeper than its limit instead of overflowing the stack",
          "[jsonl]") {
    std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
    ScannedEntry e;
    std::string error;
    CHECK_FALSE(JsonScanner::scan_entry(deep, Dialect::native, e, error));
    CHECK(error.find("nesting") != std::string::npos);
}

TEST_CASE("escaped strings decode to UTF-8", "[jsonl]") {
    std::string out;
    REQUIRE(JsonScanner::unescape(R"(a\u00e9\ud83d\ude00\n\"b)", out));
    CHECK(out == "a\xC3\xA9\xF0\x9F\x98\x80\n\"b");
    std::string_view v;
    REQUIRE(JsonScanner::string_value(R"("plain")", out, v));
    CHECK(v == "plain");
    CHECK_FALSE(JsonScanner::string_value("12", out, v));
}

TEST_CASE(
    "line framing drops CRLF endings and a BOM on the first line and flags an unterminated tail",
    "[jsonl]") {
    const std::string buffer = "\xEF\xBB\xBF{\"a\":1}\r\n{\"b\":2}\n\n{\"c\":3}";
    agentcore::detail::LineReader reader(buffer);
    agentcore::detail::LineSpan line;
    std::vector<std::string> texts;
    std::vector<bool> terminated;
    while (reader.next(line)) {
        texts.emplace_back(reader.text(line));
        terminated.push_back(line.terminated);
    }
    CHECK(texts == std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "", "{\"c\":3}"});
    CHECK(terminated == std::vector<bool>{true, true, true, false});
}

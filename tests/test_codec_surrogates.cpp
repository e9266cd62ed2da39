// Lone UTF-16 surrogates: JavaScript writes `"\ud83d"` when it slices a string between the two
// halves of an emoji, and pi does. Every reader accepts them as JavaScript does, holds them as
// WTF-8 in std::string, and the writer gives back the same escape: the line round-trips.
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/scratch.hpp"

#include <agentcore/convert.hpp>
#include <agentcore/session.hpp>

#include <string>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

const std::string pi_header =
    R"({"type":"session","version":3,"id":"s","timestamp":"2026-12-02T07:43:23.123Z","cwd":"/w"})";
// What pi writes for a user message whose text was cut after the first half of 😀 (U+1F600).
const std::string sliced =
    R"({"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-12-02T07:43:23.123Z","message":{"role":"user","content":"smile \ud83d","timestamp":1}})";
const std::string low_alone =
    R"({"type":"message","id":"a1b2c3d5","parentId":"a1b2c3d4","timestamp":"2026-12-02T07:43:23.124Z","message":{"role":"user","content":[{"type":"text","text":"\ude00 then \ud83dA"}],"timestamp":2}})";

std::string text_of_user(const SessionTreeEntry& e) {
    const auto& m = std::get<UserMessage>(std::get<MessageEntry>(e).message);
    if (const auto* s = std::get_if<std::string>(&m.content)) return *s;
    return std::get<TextContent>(std::get<std::vector<ContentBlock>>(m.content).front()).text;
}

}  // namespace

TEST_CASE("a lone surrogate escape decodes to WTF-8 bytes and a pair to one code point",
          "[codec][surrogates]") {
    std::string out;
    REQUIRE(detail::JsonScanner::unescape(R"(\ud83d)", out));
    CHECK(out == "\xED\xA0\xBD");
    REQUIRE(detail::JsonScanner::unescape(R"(\ude00)", out));
    CHECK(out == "\xED\xB8\x80");
    REQUIRE(detail::JsonScanner::unescape(R"(\ud83d\u0041\ud83d\ude00)", out));
    CHECK(out ==
          "\xED\xA0\xBD"
          "A"
          "\xF0\x9F\x98\x80");
    REQUIRE(
        detail::JsonScanner::unescape(R"(\ud83d\ud83d\ude00)", out));  // a lone high, then a pair
    CHECK(out == "\xED\xA0\xBD\xF0\x9F\x98\x80");
    // Raw surrogate bytes in a file are still invalid UTF-8: JavaScript never writes them.
    std::string error;
    CHECK_FALSE(detail::JsonScanner::validate("\"\xED\xA0\xBD\"", error));
}

TEST_CASE("a line with lone surrogates reads and writes back byte for byte",
          "[codec][surrogates]") {
    const SessionTreeEntry a = decode_entry(sliced, Dialect::pi);
    CHECK(text_of_user(a) == "smile \xED\xA0\xBD");
    CHECK(encode_entry(a, Dialect::pi) == sliced);
    const SessionTreeEntry b = decode_entry(low_alone, Dialect::pi);
    CHECK(text_of_user(b) ==
          "\xED\xB8\x80 then \xED\xA0\xBD"
          "A");
    CHECK(encode_entry(b, Dialect::pi) == low_alone);
    // A lone high surrogate before an escaped character that is not a low one stays lone.
    CHECK(dump_json(detail::parse_line(R"(["\ud83d\u0041"])", ErrorCode::invalid_entry, "entry")) ==
          R"(["\ud83dA"])");
    // A key, too.
    const Json j = detail::parse_line(R"({"k\ud800":1})", ErrorCode::invalid_entry, "entry");
    CHECK(dump_json(j) == R"({"k\ud800":1})");
}

TEST_CASE("a session file with lone surrogates opens, keeps them, and converts both ways unchanged",
          "[jsonl][surrogates]") {
    ScratchDir dir;
    const std::string path = dir.file("pi.jsonl");
    const std::string text = pi_header + "\n" + sliced + "\n" + low_alone + "\n";
    write_file(path, text);
    {
        auto session = open_file_session(path);  // a writing open: nothing is cut as torn
        CHECK_FALSE(session.storage().had_torn_tail());
        CHECK(session.storage().entry_count() == 2);
        CHECK(text_of_user(*get_entry(session, "a1b2c3d4")) == "smile \xED\xA0\xBD");
        CHECK(build_context(session).messages.size() == 2);
        append_message(session, user("again \xED\xA0\xBD"));
    }
    const auto lines = file_lines(path);
    REQUIRE(lines.size() == 4);
    CHECK(lines[1] == sliced);
    CHECK(lines[3].find(R"("content":"again \ud83d")") != std::string::npos);
    CHECK(read_file(path).substr(0, text.size()) == text);

    const LoadedSession loaded = load_session_file(path);
    CHECK(loaded.storage.entry_count() == 3);
    convert(path, Dialect::native, dir.file("native.jsonl"));
    convert(dir.file("native.jsonl"), Dialect::pi, dir.file("back.jsonl"));
    CHECK(file_lines(dir.file("back.jsonl"))[1] == sliced);
    CHECK(file_lines(dir.file("back.jsonl"))[2] == file_lines(path)[2]);
}

TEST_CASE(
    "the writer refuses a surrogate pair split into two WTF-8 halves, naming the entry and field",
    "[codec][surrogates]") {
    auto session = memory_session();
    const std::string id = append_message(session, user("ok"));
    UserMessage halves;
    halves.content = std::string("\xED\xA0\xBD\xED\xB8\x80");
    const std::string msg = message_of_error([&] {
        (void)encode_entry(
            MessageEntry{{id, std::nullopt, "t", {}}, AgentMessage(std::move(halves))},
            Dialect::pi);
    });
    CHECK(msg.find("invalid_entry") != std::string::npos);
    CHECK(msg.find("entry '" + id + "'") != std::string::npos);
    CHECK(msg.find("field 'message.content'") != std::string::npos);
    CHECK(msg.find("not valid UTF-8 (byte 0 of the string)") != std::string::npos);
}

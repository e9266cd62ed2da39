// The framing shared by the streamed replies: SSE in any chunking, UTF-8 repair, token counts.
#include "support/catch.hpp"

#include <agentcore/llm/sse.hpp>
#include <agentcore/llm/usage.hpp>

#include <string>
#include <vector>

using namespace agentcore;

namespace {

std::vector<llm::SseEvent> parse_in_chunks(const std::string& bytes, std::size_t chunk) {
    llm::SseParser p;
    std::vector<llm::SseEvent> out;
    for (std::size_t i = 0; i < bytes.size(); i += chunk)
        for (auto& e : p.feed(std::string_view(bytes).substr(i, chunk))) out.push_back(e);
    for (auto& e : p.finish()) out.push_back(e);
    return out;
}

}  // namespace

TEST_CASE("SSE events come out the same in every chunking and with every line ending",
          "[llm][sse]") {
    const std::string lf =
        ": comment\nevent: a\ndata: one\ndata:two\n\ndata: {\"x\":1}\nid: 7\nretry: 10\n\n";
    std::string crlf, cr;
    for (char c : lf) {
        if (c == '\n') {
            crlf += "\r\n";
            cr += "\r";
        } else {
            crlf += c;
            cr += c;
        }
    }
    for (const std::string* text :
         {&lf, static_cast<const std::string*>(&crlf), static_cast<const std::string*>(&cr)}) {
        for (std::size_t chunk : {1u, 2u, 3u, 5u, 1000u}) {
            auto events = parse_in_chunks(*text, chunk);
            REQUIRE(events.size() == 2);
            CHECK(events[0].event == "a");
            CHECK(events[0].data == "one\ntwo");
            CHECK(events[1].event.empty());
            CHECK(events[1].data == "{\"x\":1}");
        }
    }
}

TEST_CASE(
    "SSE: an event without its blank line, or a last line without its break, still arrives at the "
    "end",
    "[llm][sse]") {
    auto events = parse_in_chunks("data: a\n\ndata: b", 4);
    REQUIRE(events.size() == 2);
    CHECK(events[1].data == "b");
    llm::SseParser p;
    CHECK(p.feed("data: x\n").empty());
    CHECK(p.pending());
    CHECK(p.finish().size() == 1);
    CHECK_FALSE(p.pending());
}

TEST_CASE("bytes that are not UTF-8 become U+FFFD, valid text is untouched", "[llm][sse]") {
    using llm::detail::sanitize_utf8;
    CHECK(sanitize_utf8("plain") == "plain");
    CHECK(sanitize_utf8("\xC3\xA9\xE2\x9C\x93\xF0\x9F\x99\x88") ==
          "\xC3\xA9\xE2\x9C\x93\xF0\x9F\x99\x88");
    CHECK(sanitize_utf8("a\xFF"
                        "b") ==
          "a\xEF\xBF\xBD"
          "b");
    CHECK(sanitize_utf8("\xC3") == "\xEF\xBF\xBD");  // cut sequence
    CHECK(sanitize_utf8("\xED\xA0\x80") ==
          "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");                   // encoded surrogate
    CHECK(sanitize_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
    auto events = parse_in_chunks("data: caf\xE9\n\n", 3);
    REQUIRE(events.size() == 1);
    CHECK(events[0].data == "caf\xEF\xBF\xBD");
    CHECK(llm::detail::is_utf8(events[0].data));
}

TEST_CASE("untrusted JSON never throws: garbage, overflowing numbers and bad UTF-8", "[llm][sse]") {
    CHECK_FALSE(llm::detail::parse_untrusted("{\"a\":"));
    CHECK_FALSE(llm::detail::parse_untrusted("{\"n\": 1e400}"));
    CHECK_FALSE(llm::detail::parse_untrusted(""));
    auto j = llm::detail::parse_untrusted("{\"s\":\"\xFF\"}");
    REQUIRE(j);
    CHECK((*j)["s"] == "\xEF\xBF\xBD");
}

TEST_CASE("token counts are clamped: negative, fractional, huge and non-numeric values",
          "[llm][usage]") {
    using llm::detail::token_count;
    const Json values =
        Json::parse(R"([12, -5, 3.9, 1e30, 18446744073709551615, "7", null, true])");
    CHECK(token_count(&values[0]) == 12);
    CHECK(token_count(&values[1]) == 0);
    CHECK(token_count(&values[2]) == 3);
    CHECK(token_count(&values[3]) == llm::max_token_count);
    CHECK(token_count(&values[4]) == llm::max_token_count);
    CHECK(token_count(&values[5]) == 0);
    CHECK(token_count(&values[6]) == 0);
    CHECK(token_count(&values[7]) == 0);
    CHECK(token_count(nullptr) == 0);
}

TEST_CASE("cost comes from the application's price table, per million tokens", "[llm][usage]") {
    Usage u;
    u.input = 1'000'000;
    u.output = 500'000;
    u.cache_read = 2'000'000;
    u.cache_write = 100'000;
    llm::apply_prices(u, llm::Prices{3, 15, 0.3, 3.75});
    CHECK(u.cost.input == Approx(3));
    CHECK(u.cost.output == Approx(7.5));
    CHECK(u.cost.cache_read == Approx(0.6));
    CHECK(u.cost.cache_write == Approx(0.375));
    CHECK(u.cost.total == Approx(11.475));
}

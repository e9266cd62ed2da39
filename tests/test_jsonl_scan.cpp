// The validating JSON scanner and line framing behind fast opens of JSONL sessions.
//
// The scanner's two ways over string bytes (ScanPath): the vector one (16 bytes a step with SSE2)
// and the portable scalar one must accept and refuse the same texts with the same messages, and
// agree with nlohmann's parser. Special bytes are swept over every position of a string around
// the 16-byte steps and the end of the buffer; each text sits in a buffer of its exact size, so
// that a read past its end shows under AddressSanitizer.
#include "support/catch.hpp"

#include <agentcore/codec.hpp>
#include <agentcore/detail/codec_check.hpp>
#include <agentcore/detail/json_scan.hpp>
#include <agentcore/detail/line_index.hpp>

#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace agentcore;
using agentcore::detail::JsonScanner;
using agentcore::detail::ScannedEntry;
using agentcore::detail::ScanPath;

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

namespace {

// A copy of `text` in a heap block of exactly its size.
class ExactBuffer {
public:
    explicit ExactBuffer(std::string_view text)
        : data_(std::make_unique<char[]>(text.size() == 0 ? 1 : text.size())), size_(text.size()) {
        if (size_ != 0) std::memcpy(data_.get(), text.data(), size_);
    }
    [[nodiscard]] std::string_view view() const noexcept { return {data_.get(), size_}; }

private:
    std::unique_ptr<char[]> data_;
    std::size_t size_;
};

struct Outcome {
    bool ok = false;
    std::string error;
    bool operator==(const Outcome&) const = default;
};

template <ScanPath P>
Outcome validate_on(std::string_view text) {
    const ExactBuffer buffer(text);
    Outcome o;
    o.ok = JsonScanner::validate<P>(buffer.view(), o.error);
    return o;
}

template <ScanPath P>
Outcome scan_on(std::string_view text, ScannedEntry& entry) {
    const ExactBuffer buffer(text);
    Outcome o;
    o.ok = JsonScanner::scan_entry<P>(buffer.view(), Dialect::native, entry, o.error);
    // The views point into the buffer: keep offsets only.
    auto offset = [&](std::string_view v) {
        return v.empty() ? std::string("-")
                         : std::to_string(v.data() - buffer.view().data()) + "+" +
                               std::to_string(v.size());
    };
    o.error += " |" + offset(entry.type) + "|" + offset(entry.id) + "|" + offset(entry.parent_id) +
               "|" + offset(entry.message_role) + "|" + offset(entry.message_usage) + "|" +
               offset(entry.usage);
    entry = {};
    return o;
}

// Both paths agree on `text`; returns whether it is valid.
bool both_paths(std::string_view text) {
    const Outcome scalar = validate_on<ScanPath::scalar>(text);
    const Outcome vector = validate_on<ScanPath::vector>(text);
    CHECK(scalar == vector);
    ScannedEntry e;
    CHECK(scan_on<ScanPath::scalar>(text, e) == scan_on<ScanPath::vector>(text, e));
    return scalar.ok;
}

std::string repeated(char c, std::size_t n) { return std::string(n, c); }

// `{"s":"<lead><special><tail>"}` with `lead` plain bytes before the special sequence.
std::string string_with(std::size_t lead, std::string_view special, std::size_t tail) {
    std::string s = "{\"s\":\"";
    for (std::size_t i = 0; i < lead; ++i) s += static_cast<char>('a' + i % 26);
    s += special;
    s += repeated('z', tail);
    s += "\"}";
    return s;
}

}  // namespace

TEST_CASE("the vector scan path uses SSE2 on x86-64", "[jsonl]") {
#if defined(__x86_64__)
    CHECK(agentcore::detail::scan_path_vectorized);
#else
    SUCCEED("not x86-64: the vector path is "
            << (agentcore::detail::scan_path_vectorized ? "vectorized" : "the scalar one"));
#endif
}

TEST_CASE("both scan paths classify every byte value at every position of a string", "[jsonl]") {
    for (std::size_t lead = 0; lead < 34; ++lead) {
        for (const std::size_t tail : {0U, 1U, 7U, 8U, 9U, 15U, 16U, 17U}) {
            for (int b = 0; b < 256; ++b) {
                const char byte = static_cast<char>(b);
                const std::string text = string_with(lead, std::string_view(&byte, 1), tail);
                INFO("lead " << lead << ", tail " << tail << ", byte " << b);
                const bool plain = b >= 0x20 && b < 0x80 && b != '"' && b != '\\';
                CHECK(both_paths(text) == plain);
                CHECK(parses_with_nlohmann(text) == plain);
            }
        }
    }
}

TEST_CASE("both scan paths check UTF-8 sequences that cross the 16-byte steps and the end",
          "[jsonl]") {
    struct Sequence {
        std::string bytes;
        bool valid;
    };
    const std::vector<Sequence> sequences = {
        {"\xC3\xA9", true},           // é
        {"\xE2\x82\xAC", true},       // €
        {"\xF0\x9F\x98\x80", true},   // 😀
        {"\xEF\xBF\xBF", true},       // U+FFFF
        {"\xF4\x8F\xBF\xBF", true},   // U+10FFFF
        {"\xED\x9F\xBF", true},       // U+D7FF, below the surrogates
        {"\xC0\xAF", false},          // overlong '/'
        {"\xC1\xBF", false},          // overlong
        {"\xE0\x80\xAF", false},      // overlong, three bytes
        {"\xE0\x9F\xBF", false},      // overlong, three bytes
        {"\xF0\x80\x80\xAF", false},  // overlong, four bytes
        {"\xF0\x8F\xBF\xBF", false},  // overlong, four bytes
        {"\xED\xA0\x80", false},      // a surrogate, encoded
        {"\xED\xBF\xBF", false},      // a surrogate, encoded
        {"\xF4\x90\x80\x80", false},  // above U+10FFFF
        {"\xF5\x80\x80\x80", false},  // no such lead byte
        {"\xC3", false},              // truncated
        {"\xE2\x82", false},          // truncated
        {"\xF0\x9F\x98", false},      // truncated
        {"\x80", false},              // a continuation alone
        {"\xC3\xA9\xC3\xA9\xC3\xA9", true},
        {"\xC3\x28", false},          // a lead byte before ASCII
        {"\xE2\x28\xA1", false},      // a bad second byte
        {"\xF0\x9F\x98\x28", false},  // a bad fourth byte
    };
    for (const auto& [bytes, is_valid] : sequences) {
        for (std::size_t lead = 0; lead < 34; ++lead) {
            for (std::size_t tail = 0; tail < 20; ++tail) {
                const std::string text = string_with(lead, bytes, tail);
                INFO("lead " << lead << ", tail " << tail << ", sequence of " << bytes.size());
                CHECK(both_paths(text) == is_valid);
                CHECK(parses_with_nlohmann(text) == is_valid);
            }
            // The sequence right before the end of the buffer, its string unterminated.
            const std::string cut = "{\"s\":\"" + repeated('a', lead) + bytes;
            CHECK_FALSE(both_paths(cut));
        }
    }
}

TEST_CASE("both scan paths read escapes at every position, the lone surrogate rule included",
          "[jsonl]") {
    struct Escape {
        std::string text;
        bool valid;
    };
    const std::vector<Escape> escapes = {
        {R"(\")", true},           {R"(\\)", true},
        {R"(\/)", true},           {R"(\b)", true},
        {R"(\f)", true},           {R"(\n)", true},
        {R"(\r)", true},           {R"(\t)", true},
        {R"(\u00e9)", true},       {R"(\u00E9)", true},
        {R"(\ud83d\ude00)", true}, {R"(\ud83d)", true},
        {R"(\ude00)", true},       {R"(\ud83dx)", true},
        {R"(\x)", false},          {R"(\u12)", false},
        {R"(\u12g4)", false},      {R"(\U00e9)", false},
        {"\\\x01", false},         {R"(\n\n\n\n\n\n\n\n)", true},
    };
    for (const auto& [escape, is_valid] : escapes) {
        for (std::size_t lead = 0; lead < 34; ++lead) {
            for (std::size_t tail = 0; tail < 18; ++tail) {
                const std::string text = string_with(lead, escape, tail);
                INFO("lead " << lead << ", tail " << tail << ", escape " << escape);
                CHECK(both_paths(text) == is_valid);
                if (escape.find("\\ud") == std::string::npos)  // nlohmann refuses lone ones
                    CHECK(parses_with_nlohmann(text) == is_valid);
            }
            // A backslash as the line's last byte, and a cut \u escape.
            CHECK_FALSE(both_paths("{\"s\":\"" + repeated('a', lead) + "\\"));
            CHECK_FALSE(both_paths("{\"s\":\"" + repeated('a', lead) + "\\u00"));
        }
    }
}

TEST_CASE("both scan paths find a string's end wherever it falls in the buffer", "[jsonl]") {
    for (std::size_t length = 0; length < 70; ++length) {
        for (const std::string_view filler : {"a", "\xC3\xA9", "\\n", "\\\""}) {
            std::string inner;
            while (inner.size() < length) inner += filler;
            // Unterminated at the very end of the buffer, then closed with nothing after it.
            CHECK_FALSE(both_paths("{\"s\":\"" + inner));
            CHECK_FALSE(both_paths("{\"s\":\"" + inner + "\""));
            CHECK(both_paths("{\"s\":\"" + inner + "\"}"));
            CHECK(both_paths("\"" + inner + "\""));
            CHECK(both_paths("{\"" + inner + "\":\"" + inner + "\",\"k\":[\"" + inner + "\"]}"));

            const std::string raw = inner + "\"rest";
            const ExactBuffer buffer(raw);
            const char* begin = buffer.view().data();
            const char* end = begin + buffer.view().size();
            const char* scalar = JsonScanner::string_end<ScanPath::scalar>(begin, end);
            const char* vector = JsonScanner::string_end<ScanPath::vector>(begin, end);
            CHECK(scalar == vector);
            CHECK(static_cast<std::size_t>(scalar - begin) == inner.size());
            // Without the closing quote: the end of the buffer.
            const ExactBuffer open(inner);
            const char* o = open.view().data();
            const char* o_end = o + open.view().size();
            CHECK(JsonScanner::string_end<ScanPath::scalar>(o, o_end) == o_end);
            CHECK(JsonScanner::string_end<ScanPath::vector>(o, o_end) == o_end);
        }
    }
}

TEST_CASE("both scan paths stop at the same byte of a plain run", "[jsonl]") {
    for (std::size_t size = 0; size < 40; ++size) {
        for (std::size_t at = 0; at <= size; ++at) {
            for (const char special : {'"', '\\', '\x1f', '\x00', '\x80', '\xff', '\x7f'}) {
                std::string text(size, 'x');
                if (at < size) text[at] = special;
                const ExactBuffer buffer(text);
                const char* begin = buffer.view().data();
                const char* end = begin + buffer.view().size();
                const char* scalar = JsonScanner::skip_plain<ScanPath::scalar>(begin, end);
                const char* vector = JsonScanner::skip_plain<ScanPath::vector>(begin, end);
                INFO("size " << size << ", special at " << at << ": " << int(special));
                CHECK(scalar == vector);
                // 0x7f (DEL) is printable enough for JSON: it never stops a run.
                const std::size_t expected = (at < size && special != '\x7f') ? at : size;
                CHECK(static_cast<std::size_t>(scalar - begin) == expected);
            }
        }
    }
}

TEST_CASE("both scan paths agree on random lines of special bytes", "[jsonl]") {
    std::mt19937 rng(20260101);
    const std::vector<std::string> pieces = {"a",
                                             "bcdefghijklmnop",
                                             "\"",
                                             "\\",
                                             "\\n",
                                             "\\u00e9",
                                             "\\ud83d",
                                             "\\ude00",
                                             "\xC3\xA9",
                                             "\xE2\x82\xAC",
                                             "\xF0\x9F\x98\x80",
                                             "\xC3",
                                             "\xED\xA0\x80",
                                             "\t",
                                             "\x01",
                                             " ",
                                             ":",
                                             ",",
                                             "{",
                                             "}",
                                             "[",
                                             "]",
                                             "1",
                                             "-2.5e3",
                                             "true",
                                             "null",
                                             "\"k\":",
                                             "\x7f",
                                             "\xFF"};
    std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
    std::uniform_int_distribution<int> count(0, 40);
    for (int round = 0; round < 20000; ++round) {
        std::string text = "{\"s\":\"";
        const int n = count(rng);
        for (int i = 0; i < n; ++i) text += pieces[pick(rng)];
        if (round % 2 == 0) text += "\"}";
        INFO(text);
        const bool ok = both_paths(text);
        const bool lone = text.find("\\ud") != std::string::npos;
        if (!lone) CHECK(ok == parses_with_nlohmann(text));
    }
}

TEST_CASE("both scan paths check runs of non-ASCII text with a bad sequence at every position",
          "[jsonl]") {
    // Text of multi-byte characters back to back, as the vector path checks it 16 bytes a
    // step, with one bad sequence (or a quote, backslash or control character) put in at every
    // character position, for every length up to a few steps.
    const std::vector<std::string> good = {
        "\xC3\xA9", "\xE2\x82\xAC",     "\xF0\x9F\x98\x80", "\xE4\xB8\xAD", "a",
        "\xD0\x96", "\xF4\x8F\xBF\xBF", "\xED\x9F\xBF",     "\xEF\xBF\xBF"};
    const std::vector<std::string> bad = {"\xC0\xAF",
                                          "\xE0\x9F\xBF",
                                          "\xED\xA0\x80",
                                          "\xF0\x8F\xBF\xBF",
                                          "\xF4\x90\x80\x80",
                                          "\xF5\x80",
                                          "\xC3",
                                          "\xE2\x82",
                                          "\x80",
                                          "\xFF",
                                          "\xC3\xC3\xA9",
                                          "\xE2\x28\xA1",
                                          "\x01",
                                          "\\n",
                                          "\\x"};
    std::size_t checked = 0;
    for (std::size_t length = 0; length < 40; ++length) {
        std::string run;
        for (std::size_t i = 0; i < length; ++i) run += good[(i * 7 + length) % good.size()];
        const std::string valid = "{\"s\":\"" + run + "\"}";
        INFO(valid);
        CHECK(both_paths(valid));
        CHECK(parses_with_nlohmann(valid));
        for (std::size_t at = 0; at <= length; ++at) {
            std::string prefix;
            for (std::size_t i = 0; i < at; ++i) prefix += good[(i * 7 + length) % good.size()];
            for (const auto& b : bad) {
                const std::string text =
                    "{\"s\":\"" + prefix + b + run.substr(prefix.size()) + "\"}";
                INFO(text);
                const bool ok = both_paths(text);
                CHECK(ok == (b == "\\n"));
                if (b != "\\n") CHECK_FALSE(parses_with_nlohmann(text));
                ++checked;
            }
        }
    }
    CHECK(checked > 10000);
}

TEST_CASE("both scan paths agree with nlohmann on random non-ASCII text", "[jsonl]") {
    std::mt19937 rng(20261205);
    const std::vector<std::string> pieces = {
        "\xC3\xA9",
        "\xE2\x82\xAC",
        "\xF0\x9F\x98\x80",
        "\xE4\xB8\xAD",
        "\xD0\x96",
        "xy",
        "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"};
    std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
    std::uniform_int_distribution<int> count(0, 60);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int round = 0; round < 20000; ++round) {
        std::string text = "{\"s\":\"";
        const int n = count(rng);
        for (int i = 0; i < n; ++i) text += pieces[pick(rng)];
        // Every other line gets one byte changed inside its string.
        if (round % 2 == 1 && text.size() > 6) {
            std::uniform_int_distribution<std::size_t> where(6, text.size() - 1);
            text[where(rng)] = static_cast<char>(byte(rng));
        }
        text += "\"}";
        INFO(text);
        CHECK(both_paths(text) == parses_with_nlohmann(text));
    }
}

namespace {

// A random valid JSON value: containers up to `depth` deep, strings short and long.
Json random_value(std::mt19937& rng, int depth) {
    std::uniform_int_distribution<int> kind(0, depth > 0 ? 6 : 3);
    std::uniform_int_distribution<int> size(0, 5);
    switch (kind(rng)) {
        case 0: return Json(std::uniform_int_distribution<int>(-9, 99999)(rng));
        case 1: return Json(nullptr);
        case 2: return Json(std::string(static_cast<std::size_t>(size(rng)), 's'));
        case 3: {
            std::string text(static_cast<std::size_t>(size(rng) * 20), 'l');
            if (!text.empty()) text[text.size() / 2] = '"';  // an escape inside
            return Json(text);
        }
        case 4:
        case 5: {
            Json object = Json::object();
            const int n = size(rng);
            for (int i = 0; i < n; ++i)
                object["k" + std::to_string(i) +
                       std::string(static_cast<std::size_t>(i * 7), 'x')] =
                    random_value(rng, depth - 1);
            return object;
        }
        default: {
            Json array = Json::array();
            const int n = size(rng);
            for (int i = 0; i < n; ++i) array.push_back(random_value(rng, depth - 1));
            return array;
        }
    }
}

// The raw values of the members of `object`, walked with `memo` (or without).
std::vector<std::string> members_of(std::string_view object, agentcore::detail::SkipMemo* memo) {
    std::vector<std::string> out;
    JsonScanner::for_each_member(
        object,
        [&](std::string_view key, std::string_view value) {
            out.push_back(std::string(key) + "=" + std::string(value));
        },
        memo);
    return out;
}

// The field check's verdict; with `memo`, the one the scan of the line filled.
std::optional<std::string> check_verdict(const std::string& line,
                                         agentcore::detail::SkipMemo* memo = nullptr) {
    agentcore::detail::ScannedEntry scanned;
    std::string error;
    REQUIRE(JsonScanner::scan_entry(line, Dialect::native, scanned, error, memo));
    try {
        (void)agentcore::detail::check_entry_fields(line, "message", Dialect::native, memo);
    } catch (const SessionError& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

std::optional<std::string> codec_verdict_of(const std::string& line) {
    try {
        (void)decode_entry(line, Dialect::native);
    } catch (const SessionError& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE("a walk that jumps over values recorded in a skip memo sees the same members",
          "[jsonl]") {
    std::mt19937 rng(7);
    for (int round = 0; round < 2000; ++round) {
        Json outer = Json::object();
        for (int i = 0; i < 6; ++i) outer["m" + std::to_string(i)] = random_value(rng, 12);
        const std::string text = outer.dump(round % 3 == 0 ? 1 : -1);
        const std::vector<std::string> plain = members_of(text, nullptr);
        agentcore::detail::SkipMemo memo;
        CHECK(members_of(text, &memo) == plain);  // records while it walks
        CHECK(members_of(text, &memo) == plain);  // jumps over what it recorded
        // A memo the scanner filled while it validated the line.
        agentcore::detail::SkipMemo scanned_memo;
        agentcore::detail::ScannedEntry scanned;
        std::string error;
        REQUIRE(JsonScanner::scan_entry(text, Dialect::native, scanned, error, &scanned_memo));
        CHECK(members_of(text, &scanned_memo) == plain);
        JsonScanner::for_each_member(text, [&](std::string_view, std::string_view value) {
            if (value.front() == '{')
                CHECK(members_of(value, &scanned_memo) == members_of(value, nullptr));
        });
        // Each object member again, through the memo filled by the walk of the line.
        JsonScanner::for_each_member(text, [&](std::string_view, std::string_view value) {
            if (value.front() == '{') CHECK(members_of(value, &memo) == members_of(value, nullptr));
        });
    }
}

TEST_CASE("the field check agrees with the codec past the skip memo's capacity and depth",
          "[jsonl][check]") {
    auto line_with = [](std::size_t blocks, std::size_t bad_at, int nesting) {
        Json content = Json::array();
        for (std::size_t i = 0; i < blocks; ++i) {
            Json block = {{"type", "text"}, {"text", std::string(40 + i % 50, 't')}};
            if (i % 3 == 1) {
                Json arguments = Json::object();
                Json* at = &arguments;
                for (int level = 0; level < nesting; ++level) {
                    (*at)["n"] = Json::object();
                    (*at)["long"] = std::string(60, 'x');
                    at = &(*at)["n"];
                }
                block = {{"type", "tool_call"},
                         {"id", "c" + std::to_string(i)},
                         {"name", "read"},
                         {"arguments", arguments}};
            }
            if (i == bad_at) block["text"] = 5;
            content.push_back(block);
        }
        Json message = {{"role", "assistant"},
                        {"content", content},
                        {"provider", "p"},
                        {"model", "m"},
                        {"usage",
                         {{"input", 1},
                          {"output", 2},
                          {"cache_read", 0},
                          {"cache_write", 0},
                          {"total_tokens", 3},
                          {"cost",
                           {{"input", 0},
                            {"output", 0},
                            {"cache_read", 0},
                            {"cache_write", 0},
                            {"total", 0}}}}},
                        {"stop_reason", "stop"},
                        {"timestamp", 1}};
        return Json{{"type", "message"},
                    {"id", "e1"},
                    {"parent_id", nullptr},
                    {"timestamp", "2026-01-01T00:00:00.000Z"},
                    {"message", message}}
            .dump();
    };
    const std::size_t none = static_cast<std::size_t>(-1);
    for (const std::size_t blocks : {1U, 10U, 60U, 127U, 128U, 129U, 300U}) {
        for (const int nesting : {0, 7, 8, 9, 20}) {
            for (const std::size_t bad_at : {none, std::size_t{0}, blocks / 2, blocks - 1}) {
                if (bad_at != none && bad_at % 3 == 1) continue;  // a tool call has no text
                const std::string line = line_with(blocks, bad_at, nesting);
                INFO("blocks " << blocks << ", nesting " << nesting << ", bad at " << bad_at);
                const auto checked = check_verdict(line);
                const auto decoded = codec_verdict_of(line);
                CHECK(checked.has_value() == (bad_at != none));
                CHECK(checked == decoded);
                agentcore::detail::SkipMemo memo;
                CHECK(check_verdict(line, &memo) == decoded);  // filled by the scanner
                // A memo of another line is not used.
                const std::string other = line_with(blocks, none, nesting);
                agentcore::detail::ScannedEntry scanned;
                std::string error;
                REQUIRE(JsonScanner::scan_entry(other, Dialect::native, scanned, error, &memo));
                std::optional<std::string> verdict;
                try {
                    (void)agentcore::detail::check_entry_fields(line, "message", Dialect::native,
                                                                &memo);
                } catch (const SessionError& e) {
                    verdict = e.what();
                }
                CHECK(verdict == decoded);
            }
        }
    }
}

// The open path's field check agrees with the codec: a line of valid JSON with a field of the
// wrong type is found when the file is opened (strict: invalid_entry naming the line; lenient:
// skipped and reported; repair: removed), and load_session_file accepts exactly the files the
// storage accepts.
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/scratch.hpp"

#include <agentcore/convert.hpp>
#include <agentcore/detail/codec_check.hpp>
#include <agentcore/session.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

/// Entries of every type and message role, each a root.
std::vector<SessionTreeEntry> sample_entries() {
    auto s = memory_session();
    fill_session(s);
    BashExecutionMessage bash;
    bash.command = "ls";
    bash.output = "a";
    bash.exit_code = 0;
    bash.full_output_path = "/tmp/x";
    bash.exclude_from_context = true;
    append_message(s, std::move(bash));
    append_message(s,
                   CustomMessage{"note",
                                 std::vector<ContentBlock>{TextContent{"t", {}},
                                                           ImageContent{"AA==", "image/png", {}}},
                                 true,
                                 Json{{"k", 1}},
                                 5,
                                 {}});
    append_message(s, BranchSummaryMessage{"sum", "root", 6, {}});
    append_message(s, CompactionSummaryMessage{"sum", 10, 7, {}});
    AssistantMessage a;
    a.content.push_back(ThinkingContent{"hm", {}});
    a.content.push_back(OpaqueContent{"future_block", Json{{"type", "future_block"}, {"x", 1}}});
    a.api = "x";
    a.provider = "p";
    a.model = "m";
    a.error_message = "e";
    append_message(s, std::move(a));
    CompactionEntry c;
    c.id = s.storage().create_entry_id();
    c.timestamp = "2026-12-02T07:43:23.123Z";
    c.summary = "s";
    c.first_kept_entry_id = "abc";
    c.retained_tail = std::vector<AgentMessage>{user("kept"), tool_result("c", "t", "r")};
    c.usage = usage(1, 2, 3, 4, 0.5);
    append_entry(s, std::move(c));
    UnknownEntry u;
    u.type = "future";
    u.id = s.storage().create_entry_id();
    u.raw = Json{{"type", "future"}, {"id", u.id}, {"timestamp", "t"}, {"x", Json::array({1, 2})}};
    append_entry(s, std::move(u));
    std::vector<SessionTreeEntry> out;
    for (const auto& e : s.storage().entries()) {
        SessionTreeEntry copy = *e;
        base_of(copy).parent_id.reset();
        out.push_back(std::move(copy));
    }
    return out;
}

/// Every line that differs from `line` by one field removed or given a value of another type.
std::vector<std::string> damaged_variants(const std::string& line) {
    const std::vector<Json> wrongs = {
        Json(5),       Json("s"), Json(true), Json(nullptr), Json::object(),
        Json::array(), Json(1.5), Json(-1),   Json(1e300),   Json(9223372036854775807LL)};
    const Json original = Json::parse(line);
    std::vector<std::string> out;
    std::function<void(const Json::json_pointer&, const Json&)> walk =
        [&](const Json::json_pointer& at, const Json& value) {
            if (!at.empty()) {
                for (const auto& w : wrongs) {
                    Json copy = original;
                    copy[at] = w;
                    out.push_back(dump_json(copy));
                }
                Json removed = original;
                removed[at.parent_pointer()].erase(
                    removed[at.parent_pointer()].is_object()
                        ? removed[at.parent_pointer()].find(at.back())
                        : removed[at.parent_pointer()].begin() +
                              static_cast<std::ptrdiff_t>(std::stoul(at.back())));
                out.push_back(dump_json(removed));
            }
            if (value.is_object())
                for (auto it = value.begin(); it != value.end(); ++it)
                    walk(at / it.key(), it.value());
            if (value.is_array())
                for (std::size_t i = 0; i < value.size(); ++i) walk(at / i, value[i]);
        };
    walk(Json::json_pointer(), original);
    return out;
}

/// What the open path says of a line (as the open does): nullopt when it is accepted.
std::optional<std::string> open_verdict(const std::string& line, Dialect d) {
    detail::ScannedEntry scanned;
    std::string error;
    if (!detail::JsonScanner::scan_entry(line, d, scanned, error)) return error;
    std::string scratch;
    std::string_view type;
    if (scanned.type.empty() || !detail::JsonScanner::string_value(scanned.type, scratch, type))
        return "type";
    if (scanned.id.empty() || scanned.id.front() != '"') return "id";
    if (type == LabelEntry::type || type == SessionInfoEntry::type || type == LeafEntry::type) {
        try {
            (void)decode_entry(line, d);
        } catch (const SessionError& e) {
            return std::string(e.what());
        }
        return std::nullopt;
    }
    try {
        (void)detail::check_entry_fields(line, type, d);
    } catch (const SessionError& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

std::optional<std::string> decode_verdict(const std::string& line, Dialect d) {
    try {
        (void)decode_entry(line, d);
    } catch (const SessionError& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

std::string header_line(Dialect d) {
    SessionHeader h = test_header();
    h.metadata = Json::object();
    return encode_header(h, d);
}

}  // namespace

TEST_CASE(
    "the open path's field check accepts exactly the lines the codec decodes, with the same error",
    "[codec][check]") {
    std::size_t variants = 0;
    std::size_t refused = 0;
    for (const Dialect d : {Dialect::native, Dialect::pi}) {
        for (const auto& entry : sample_entries()) {
            const std::string good = encode_entry(entry, d);
            REQUIRE_FALSE(open_verdict(good, d).has_value());
            for (const auto& line : damaged_variants(good)) {
                INFO(line);
                const auto opened = open_verdict(line, d);
                const auto decoded = decode_verdict(line, d);
                CHECK(opened.has_value() == decoded.has_value());
                if (opened && decoded && opened->find("entry") != std::string::npos)
                    CHECK(*opened == *decoded);
                ++variants;
                refused += decoded ? 1U : 0U;
            }
        }
    }
    CHECK(variants > 2000);
    CHECK(refused > 500);
}

namespace {

// A line's entry read through a parsed DOM (entry_from_json) or straight from its text
// (decode_entry): the entry's value in both dialects, or the error.
std::string check_outcome_via_dom(const std::string& line, Dialect d) {
    try {
        Json parsed;
        std::string error;
        if (!detail::parse_json(line, parsed, error)) return "invalid JSON: " + error;
        const SessionTreeEntry e = entry_from_json(std::move(parsed), d);
        return entry_to_json(e, Dialect::native).dump() + entry_to_json(e, Dialect::pi).dump();
    } catch (const SessionError& e) {
        return e.what();
    }
}

std::string check_outcome_via_text(const std::string& line, Dialect d) {
    try {
        std::string error;
        if (!detail::JsonScanner::validate(line, error)) return "invalid JSON: " + error;
        const SessionTreeEntry e = decode_entry(line, d);
        return entry_to_json(e, Dialect::native).dump() + entry_to_json(e, Dialect::pi).dump();
    } catch (const SessionError& e) {
        return e.what();
    }
}

}  // namespace

TEST_CASE("decoding a line's text gives what reading its parsed value gives, errors included",
          "[codec][check]") {
    std::size_t compared = 0;
    for (const Dialect d : {Dialect::native, Dialect::pi}) {
        for (const auto& entry : sample_entries()) {
            const std::string good = encode_entry(entry, d);
            CHECK(check_outcome_via_text(good, d) == check_outcome_via_dom(good, d));
            for (const auto& line : damaged_variants(good)) {
                INFO(line);
                CHECK(check_outcome_via_text(line, d) == check_outcome_via_dom(line, d));
                ++compared;
            }
        }
    }
    CHECK(compared > 2000);
    // Repeated keys (the last value wins, an extra keeps its first place), keys written with
    // escapes, blanks around the value and inside it, numbers in every form, unknown types,
    // roles and blocks kept whole.
    const std::vector<std::string> lines = {
        R"({"type":"message","id":"a","x":1,"parent_id":null,"x":2,"timestamp":"t","message":{"role":"user","content":"one","content":"two","timestamp":1}})",
        R"({"t\u0079pe":"message","\u0069d":"a\u00e9\ud83c\udf89","parent_id":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"a\nb\u0000"}],"timestamp":1e3}})",
        " \t{ \"type\" : \"label\" , \"id\" : \"l\" , \"parent_id\" : null , \"timestamp\" : \"t\" "
        ", \"target_id\" : \"a\" , \"label\" : null }\r\n",
        R"({"type":"message","id":"a","parent_id":"p","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{"k":[1,2.5,-0,1e400,true,null,{"z":"\ud800"}]}},{"type":"future","k":{}}],"provider":"p","model":"m","usage":{"input":1,"output":2.0,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":1e-7,"output":18446744073709551615,"cacheRead":-1,"cacheWrite":0.5,"total":2}},"stopReason":"toolUse","timestamp":-5,"responseId":"r"}})",
        R"({"type":"message","id":"a","parent_id":null,"timestamp":"t","message":{"role":"future_role","body":[1,{"a":null}]}})",
        R"({"type":"future_entry","id":"a","parentId":"p","payload":{"k":"v"},"timestamp":"t"})",
        R"({"type":"future_entry","id":"a","timestamp":5})",
        R"({"type":"compaction","id":"c","parent_id":"a","timestamp":"t","summary":"s","tokens_before":9.0,"retained_tail":[{"role":"user","content":"x","timestamp":1},{"role":"bash_execution","command":"ls","output":"","exit_code":null,"cancelled":false,"truncated":true,"timestamp":2}],"details":{"d":[]},"from_hook":true})",
        R"({"type":"active_tools_change","id":"a","parent_id":null,"timestamp":"t","active_tool_names":["a","b\"c",5]})",
        R"({"type":"message","id":"a","parent_id":null,"timestamp":"t","message":{"role":"user","content":"x","timestamp":9223372036854775808}})",
        R"([1,2])",
        R"({"id":"a"})",
    };
    for (const auto& line : lines) {
        for (const Dialect d : {Dialect::native, Dialect::pi}) {
            INFO(line);
            CHECK(check_outcome_via_text(line, d) == check_outcome_via_dom(line, d));
        }
    }
    CHECK(check_outcome_via_text(lines[0], Dialect::native).find(R"("x":2)") != std::string::npos);
}

TEST_CASE(
    "a field of the wrong type is found at open: strict names the line, lenient skips it, repair "
    "removes it",
    "[jsonl][check]") {
    ScratchDir dir;
    const std::string path = dir.file("s.jsonl");
    const std::string bad =
        R"({"type":"message","id":"bad00001","parent_id":null,"timestamp":"t","message":{"role":"user","content":5,"timestamp":1}})";
    const std::string good =
        R"({"type":"message","id":"good0001","parent_id":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}})";
    std::string second = good;
    second.replace(second.find("good0001"), 8, "good0002");
    write_file(path,
               header_line(Dialect::native) + "\n" + good + "\n" + bad + "\n" + second + "\n");

    const std::string strict = message_of_error([&] { JsonlSessionStorage::open_read_only(path); });
    CHECK(strict.find("invalid_entry") != std::string::npos);
    CHECK(strict.find("line 3") != std::string::npos);
    CHECK(strict.find("entry 'bad00001'") != std::string::npos);
    CHECK(strict.find("field 'message.content'") != std::string::npos);
    CHECK(error_of([&] { JsonlSessionStorage::open(path); }) == ErrorCode::invalid_entry);
    CHECK(error_of([&] { load_session_file(path); }) == ErrorCode::invalid_entry);

    JsonlStorageOptions lenient;
    lenient.lenient = true;
    auto opened = JsonlSessionStorage::open_read_only(path, lenient);
    CHECK(opened.entry_count() == 2);
    REQUIRE(opened.problems().size() == 1);
    CHECK(opened.problems()[0].line == 3);
    FileSession session(std::make_shared<JsonlSessionStorage>(std::move(opened)));
    CHECK(build_context(session).messages.size() == 1);  // every entry it kept can be read

    const RepairReport repaired = JsonlSessionStorage::repair(path);
    CHECK(repaired.changed);
    REQUIRE(repaired.problems.size() == 1);
    CHECK(repaired.problems[0].line == 3);
    CHECK(JsonlSessionStorage::open(path).entry_count() == 2);
    CHECK(load_session_file(path).storage.entry_count() == 2);
    CHECK_FALSE(JsonlSessionStorage::repair(path).changed);
}

TEST_CASE("load_session_file and the storage accept exactly the same damaged files",
          "[jsonl][check]") {
    ScratchDir dir;
    const std::string path = dir.file("s.jsonl");
    std::size_t files = 0;
    std::size_t accepted = 0;
    auto compare = [&](const std::string& text, const std::string& what) {
        INFO(what);
        write_file(path, text);
        std::optional<std::size_t> by_storage;
        std::optional<std::size_t> by_loader;
        try {
            by_storage = JsonlSessionStorage::open_read_only(path).entry_count();
        } catch (const SessionError&) {
        }
        try {
            by_loader = load_session_file(path).storage.entry_count();
        } catch (const SessionError&) {
        }
        CHECK(by_storage == by_loader);
        ++files;
        accepted += by_storage ? 1U : 0U;
    };
    const std::string first =
        R"({"type":"custom","id":"first001","parent_id":null,"timestamp":"t","custom_type":"x"})";
    for (const Dialect d : {Dialect::native, Dialect::pi}) {
        const std::string header = header_line(d);
        const std::string root =
            d == Dialect::pi
                ? std::string(
                      R"({"type":"custom","id":"first001","parentId":null,"timestamp":"t","customType":"x"})")
                : first;
        std::size_t n = 0;
        for (const auto& entry : sample_entries()) {
            const auto variants = damaged_variants(encode_entry(entry, d));
            // Every fifth variant: in the middle, as the last line, and as an unterminated last
            // line.
            for (std::size_t i = 0; i < variants.size(); i += 5, ++n) {
                compare(header + "\n" + variants[i] + "\n" + root + "\n", "middle: " + variants[i]);
                compare(header + "\n" + root + "\n" + variants[i] + "\n", "last: " + variants[i]);
                compare(header + "\n" + root + "\n" + variants[i], "unterminated: " + variants[i]);
            }
        }
        // Framing: blank lines of every kind, CRLF, a byte order mark, NUL after the object,
        // a duplicate id, an unknown parent, text after the object.
        compare(header + "\n \t\r\n" + root + "\n", "blank");
        compare(header + "\n\f\n" + root + "\n", "form feed");
        compare(header + "\r\n" + root + "\r\n", "crlf");
        compare("\xEF\xBB\xBF" + header + "\n" + root + "\n", "bom");
        compare(header + "\n" + root + std::string("\0x", 2) + "\n" + root + "\n", "nul");
        compare(header + "\n" + root + "\n" + root + "\n", "duplicate");
        compare(header + "\n" + root + "\n" + root, "duplicate unterminated");
        compare(header + "\n" + root + " x\n", "junk last");
        compare(header + "\n" + root + " x\n" + root + "\n", "junk middle");
        compare(header + "\n", "header only");
        compare(header, "header unterminated");
    }
    CHECK(files > 500);
    CHECK(accepted > 100);
    CHECK(accepted < files);
}

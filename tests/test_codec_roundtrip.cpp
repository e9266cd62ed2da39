// The JSON codec over generated entries, and the JSON.stringify-compatible writer (SPEC §3).
#include "support/catch.hpp"

#include <agentcore/codec.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace agentcore;

namespace {

// A seeded generator of entries of every kind, with every optional present or absent and
// extras at every level.
class EntryGenerator {
public:
    explicit EntryGenerator(std::uint64_t seed) : rng_(seed) {}

    SessionTreeEntry next(std::size_t kind) {
        switch (kind % 12) {
            case 0: return base(MessageEntry{{}, message(true)});
            case 1: {
                ThinkingLevelChangeEntry e;
                e.thinking_level = pick({"off", "low", "medium", "high"});
                return base(std::move(e));
            }
            case 2: {
                ModelChangeEntry e;
                e.provider = text();
                e.model_id = text();
                return base(std::move(e));
            }
            case 3: {
                ActiveToolsChangeEntry e;
                for (int i = 0, n = below(4); i < n; ++i) e.active_tool_names.push_back(text());
                return base(std::move(e));
            }
            case 4: {
                CompactionEntry e;
                e.summary = text();
                if (coin()) e.first_kept_entry_id = id();
                e.tokens_before = count();
                if (coin()) {
                    e.retained_tail.emplace();
                    for (int i = 0, n = below(3); i < n; ++i)
                        e.retained_tail->push_back(message(false));
                }
                if (coin()) e.details = free_json();
                if (coin()) e.usage = usage();
                e.from_hook = coin();
                return base(std::move(e));
            }
            case 5: {
                BranchSummaryEntry e;
                e.from_id = coin() ? std::string("root") : id();
                e.summary = text();
                if (coin()) e.details = free_json();
                if (coin()) e.usage = usage();
                e.from_hook = coin();
                return base(std::move(e));
            }
            case 6: {
                CustomEntry e;
                e.custom_type = text();
                if (coin()) e.data = free_json();
                return base(std::move(e));
            }
            case 7: {
                CustomMessageEntry e;
                e.custom_type = text();
                e.content = content();
                if (coin()) e.details = free_json();
                e.display = coin();
                return base(std::move(e));
            }
            case 8: {
                LabelEntry e;
                e.target_id = id();
                if (coin()) e.label = text();
                return base(std::move(e));
            }
            case 9: {
                SessionInfoEntry e;
                if (coin()) e.name = text();
                return base(std::move(e));
            }
            case 10: {
                LeafEntry e;
                if (coin()) e.target_id = id();
                return base(std::move(e));
            }
            default: {
                UnknownEntry e;
                e.type = "future_" + std::to_string(below(5));
                e.id = id();
                if (coin()) e.parent_id = id();
                e.timestamp = "2026-12-02T07:43:23.123Z";
                e.raw = Json::object();
                e.raw["type"] = e.type;
                e.raw["id"] = e.id;
                e.raw[coin() ? "parentId" : "parent_id"] =
                    e.parent_id ? Json(*e.parent_id) : Json();
                e.raw["timestamp"] = e.timestamp;
                e.raw["payload"] = free_json();
                return e;
            }
        }
    }

private:
    template <class E>
    SessionTreeEntry base(E e) {
        e.id = id();
        if (coin()) e.parent_id = id();
        e.timestamp = "2026-12-02T07:43:23." + std::to_string(100 + below(900)) + "Z";
        e.extra = extra();
        return e;
    }

    AgentMessage message(bool any_role) {
        switch (below(any_role ? 8 : 7)) {
            case 0: return UserMessage{content(), stamp(), extra()};
            case 1: {
                AssistantMessage m;
                for (int i = 0, n = below(4); i < n; ++i) m.content.push_back(block(true));
                m.api = text();
                m.provider = text();
                m.model = text();
                m.usage = usage();
                m.stop_reason = pick({"stop", "length", "tool_use", "error", "aborted"});
                if (coin()) m.error_message = text();
                m.timestamp = stamp();
                m.extra = extra();
                return m;
            }
            case 2: {
                ToolResultMessage m;
                m.tool_call_id = id();
                m.tool_name = text();
                for (int i = 0, n = below(3); i < n; ++i) m.content.push_back(block(false));
                if (coin()) m.details = free_json();
                m.is_error = coin();
                m.timestamp = stamp();
                m.extra = extra();
                return m;
            }
            case 3: {
                BashExecutionMessage m;
                m.command = text();
                m.output = text();
                if (coin()) m.exit_code = below(256) - 1;
                m.cancelled = coin();
                m.truncated = coin();
                if (coin()) m.full_output_path = text();
                if (coin()) m.exclude_from_context = coin();
                m.timestamp = stamp();
                m.extra = extra();
                return m;
            }
            case 4: {
                CustomMessage m;
                m.custom_type = text();
                m.content = content();
                m.display = coin();
                if (coin()) m.details = free_json();
                m.timestamp = stamp();
                m.extra = extra();
                return m;
            }
            case 5: return BranchSummaryMessage{text(), id(), stamp(), extra()};
            case 6: return CompactionSummaryMessage{text(), count(), stamp(), extra()};
            default: {
                OpaqueMessage m;
                m.role = "future_role";
                m.raw = Json::object();
                m.raw["role"] = m.role;
                m.raw["body"] = free_json();
                return m;
            }
        }
    }

    ContentBlock block(bool assistant) {
        switch (below(assistant ? 5 : 3)) {
            case 0: return TextContent{text(), extra()};
            case 1: return ImageContent{"iVBORw0KGgo=", "image/png", extra()};
            case 2: {
                OpaqueContent b;
                b.type = "future_block";
                b.raw = Json::object();
                b.raw["type"] = b.type;
                b.raw["data"] = free_json();
                return b;
            }
            case 3: return ThinkingContent{text(), extra()};
            default: {
                ToolCallContent b;
                b.id = id();
                b.name = text();
                b.arguments = Json::object();
                b.arguments["arg"] = free_json();
                b.extra = extra();
                return b;
            }
        }
    }

    Content content() {
        if (coin()) return text();
        std::vector<ContentBlock> blocks;
        for (int i = 0, n = below(3); i < n; ++i) blocks.push_back(block(false));
        return blocks;
    }

    Usage usage() {
        Usage u;
        u.input = count();
        u.output = count();
        u.cache_read = count();
        u.cache_write = count();
        u.total_tokens = u.input + u.output + u.cache_read + u.cache_write;
        u.cost = Cost{money(), money(), money(), money(), money(), coin() ? extra() : Json()};
        u.extra = extra();
        return u;
    }

    // Costs as providers compute them: tokens times a price per million, some of them zero.
    double money() {
        if (below(4) == 0) return 0.0;
        return static_cast<double>(count()) * (static_cast<double>(1 + below(1500)) / 100.0) / 1e6;
    }

    Json free_json() {
        switch (below(6)) {
            case 0: return Json::object({{"k", text()}, {"n", count()}, {"f", money()}});
            case 1: return Json::array({1, 2.5, nullptr, true, text()});
            case 2: return text();
            case 3: return money();
            case 4:
                return Json::object(
                    {{"nested", Json::object({{"deep", Json::array({Json::object()})}})}});
            default: return count();
        }
    }

    Json extra() {
        if (below(3) != 0) return Json();
        Json e = Json::object();
        for (int i = 0, n = 1 + below(3); i < n; ++i) e["x_" + std::to_string(i)] = free_json();
        return e;
    }

    std::string text() {
        static const char* const pieces[] = {
            "hello", " ", "\"quoted\"", "back\\slash", "line\nbreak", "\ttab",  "\x01\x1f",
            "\x7f",  "é", "日本語",     "🎉",           "/path",       "\u2028", ""};
        std::string s;
        for (int i = 0, n = below(5); i < n; ++i) s += pieces[below(14)];
        return s;
    }

    std::string id() {
        static const char hex[] = "0123456789abcdef";
        std::string s;
        for (int i = 0; i < 8; ++i) s += hex[below(16)];
        return s;
    }

    std::int64_t count() { return static_cast<std::int64_t>(rng_() % 200000); }
    std::int64_t stamp() { return 1767225600000 + static_cast<std::int64_t>(rng_() % 100000000); }
    bool coin() { return (rng_() & 1) != 0; }
    int below(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
    const char* pick(std::initializer_list<const char*> options) {
        return options.begin()[below(static_cast<int>(options.size()))];
    }

    std::mt19937_64 rng_;
};

}  // namespace

TEST_CASE("generated entries of every kind survive model to line to model in both dialects",
          "[codec]") {
    EntryGenerator gen(20261202);
    for (std::size_t i = 0; i < 2400; ++i) {
        const SessionTreeEntry entry = gen.next(i);
        for (const Dialect d : {Dialect::native, Dialect::pi}) {
            const std::string line = encode_entry(entry, d);
            INFO(line);
            REQUIRE(line.find('\n') == std::string::npos);
            const SessionTreeEntry back = decode_entry(line, d);
            CHECK(back.index() == entry.index());
            CHECK(entry_to_json(back, d) == entry_to_json(entry, d));
            CHECK(encode_entry(back, d) == line);
        }
    }
}

namespace {

// The line as 0.1 wrote it: the JSON value built by entry_to_json's writer, dumped.
std::string roundtrip_line_through_value(const SessionTreeEntry& entry, Dialect d) {
    const std::string& id =
        std::visit([](const auto& e) -> const std::string& { return e.id; }, entry);
    agentcore::detail::ReadContext ctx;
    ctx.subject = "entry";
    ctx.entry_id = &id;
    std::string out;
    agentcore::detail::append_json(out, agentcore::detail::write_entry(entry, d), 0, ctx,
                                   agentcore::detail::FieldPath{});
    return out;
}

// What encoding `entry` gives: the line, or the error's code and message.
template <class Encode>
std::string roundtrip_outcome(Encode&& encode) {
    try {
        return encode();
    } catch (const SessionError& e) {
        return "error " + std::string(to_string(e.code())) + ": " + e.what();
    }
}

}  // namespace

TEST_CASE("encode_entry writes the dump of entry_to_json's value, byte for byte", "[codec]") {
    EntryGenerator gen(20261204);
    for (std::size_t i = 0; i < 2400; ++i) {
        SessionTreeEntry entry = gen.next(i);
        // Opaque values whose tag the struct changed, or that are not objects, are written by
        // write_opaque's rules: exercise them too.
        if (i % 7 == 0) {
            if (auto* m = std::get_if<MessageEntry>(&entry)) {
                if (auto* o = std::get_if<OpaqueMessage>(&m->message))
                    o->role = i % 2 == 0 ? "renamed_role" : "";
            }
            if (auto* u = std::get_if<UnknownEntry>(&entry)) {
                if (i % 2 == 0) u->raw = Json::array({1, 2});
                u->timestamp.clear();
            }
        }
        for (const Dialect d : {Dialect::native, Dialect::pi}) {
            const std::string line = encode_entry(entry, d);
            INFO(line);
            CHECK(line == roundtrip_line_through_value(entry, d));
            CHECK(line == dump_json(entry_to_json(entry, d)));
        }
    }
    OpaqueContent changed;
    changed.type = "new_block";
    changed.raw = Json::parse(R"({"type":"old_block","z":1,"a":[true]})");
    OpaqueContent not_object;
    not_object.type = "lonely";
    not_object.raw = Json(5);
    OpaqueContent untagged;
    untagged.raw = Json::parse(R"({"k":"v"})");
    const SessionTreeEntry blocks =
        MessageEntry{{"b1", std::nullopt, "t", {}},
                     UserMessage{std::vector<ContentBlock>{changed, not_object, untagged}, 3, {}}};
    CHECK(
        encode_entry(blocks, Dialect::native) ==
        R"({"type":"message","id":"b1","parent_id":null,"timestamp":"t","message":{"role":"user","content":[{"type":"new_block","z":1,"a":[true]},{"type":"lonely"},{"k":"v"}],"timestamp":3}})");
    CHECK(encode_entry(blocks, Dialect::pi) == roundtrip_line_through_value(blocks, Dialect::pi));
}

TEST_CASE("encode_entry refuses what the value's dump refuses, with the same message", "[codec]") {
    const std::string bad = "ok \xfe";
    std::vector<SessionTreeEntry> entries;
    entries.push_back(MessageEntry{{"u1", std::nullopt, "t", {}}, user_text(bad, 1)});
    entries.push_back(MessageEntry{{"u2", std::nullopt, "t", Json{{bad, 1}}}, user_text("x", 1)});
    entries.push_back(MessageEntry{{"u3", std::nullopt, "t", Json{{"x", Json::array({1, bad})}}},
                                   user_text("x", 1)});
    AssistantMessage a;
    a.content.push_back(TextContent{"fine", {}});
    a.content.push_back(ToolCallContent{"c1", "bash", Json{{"cmd", bad}}, {}});
    a.stop_reason = "tool_use";
    entries.push_back(MessageEntry{{"a1", "u1", "t", {}}, a});
    CompactionEntry c;
    c.id = "c2";
    c.timestamp = "t";
    c.summary = "s";
    c.retained_tail = std::vector<AgentMessage>{user_text("x", 1), user_text(bad, 2)};
    entries.push_back(c);
    LabelEntry l;
    l.id = "l1";
    l.timestamp = "t";
    l.target_id = "u1";
    l.label = bad;
    entries.push_back(l);
    LabelEntry not_an_object = l;
    not_an_object.label = "fine";
    not_an_object.extra = Json::array({1});
    entries.push_back(not_an_object);
    for (const auto& entry : entries) {
        for (const Dialect d : {Dialect::native, Dialect::pi}) {
            const std::string got = roundtrip_outcome([&] { return encode_entry(entry, d); });
            INFO(got);
            CHECK(got.rfind("error invalid_entry: ", 0) == 0);
            CHECK(got == roundtrip_outcome([&] { return roundtrip_line_through_value(entry, d); }));
        }
    }
    CHECK(roundtrip_outcome([&] { return encode_entry(entries[3], Dialect::pi); })
              .find("entry 'a1': field 'message.content[1].arguments.cmd': a string is not valid "
                    "UTF-8 (byte 3 of the string)") != std::string::npos);
    CHECK(roundtrip_outcome([&] {
              return encode_entry(entries[4], Dialect::native);
          }).find("field 'retained_tail[1].content'") != std::string::npos);
}

TEST_CASE("encode_header writes the dump of header_to_json's value", "[codec]") {
    SessionHeader h;
    h.id = "s1";
    h.timestamp = "2026-12-04T10:00:00.000Z";
    h.cwd = "/work/\"quoted\"\n";
    for (int variant = 0; variant < 8; ++variant) {
        h.parent_session = (variant & 1) != 0 ? std::optional<std::string>("p/0") : std::nullopt;
        h.metadata = (variant & 2) != 0 ? Json{{"k", Json::array({1, 2.5})}} : Json::object();
        h.extra = (variant & 4) != 0 ? Json{{"id", "shadow"}, {"later", nullptr}} : Json();
        for (const Dialect d : {Dialect::native, Dialect::pi}) {
            INFO(variant);
            CHECK(encode_header(h, d) == dump_json(header_to_json(h, d)));
            CHECK(header_from_json(Json::parse(encode_header(h, d))).cwd == h.cwd);
        }
    }
    h.cwd = "bad \xff";
    try {
        (void)encode_header(h, Dialect::native);
        FAIL("no error");
    } catch (const SessionError& e) {
        CHECK(e.code() == ErrorCode::invalid_session);
        CHECK(std::string(e.what()).find("session header: field 'cwd': a string is not valid "
                                         "UTF-8") != std::string::npos);
    }
}

TEST_CASE("converting native to pi and back gives identical lines", "[codec]") {
    EntryGenerator gen(7);
    for (std::size_t i = 0; i < 2400; ++i) {
        const std::string native = encode_entry(gen.next(i), Dialect::native);
        INFO(native);
        const std::string pi = encode_entry(decode_entry(native, Dialect::native), Dialect::pi);
        CHECK(encode_entry(decode_entry(pi, Dialect::pi), Dialect::native) == native);
    }
}

TEST_CASE("the const overloads leave their input as it was", "[codec]") {
    const Json line = Json::parse(
        R"({"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1},"x":[1]})");
    const Json copy = line;
    const SessionTreeEntry e = entry_from_json(line, Dialect::pi);
    CHECK(line == copy);
    CHECK(entry_to_json(e, Dialect::pi) == copy);
}

TEST_CASE("a double with an integral value is written as an integer, as JSON.stringify does",
          "[codec]") {
    CHECK(dump_json(Json(0.0)) == "0");
    CHECK(dump_json(Json(-0.0)) == "0");
    CHECK(dump_json(Json(3.0)) == "3");
    CHECK(dump_json(Json(-42.0)) == "-42");
    CHECK(dump_json(Json(1e20)) == "100000000000000000000");
    CHECK(dump_json(Json(123e18)) == "123000000000000000000");
    CHECK(dump_json(Json(1152921504606846976.0)) ==
          "1152921504606847000");  // 2^60, as node prints it
    CHECK(dump_json(Json::parse(R"({"a":0.0,"b":[1.0,2.50]})")) == R"({"a":0,"b":[1,2.5]})");
}

TEST_CASE("doubles are written in JavaScript's shortest notation", "[codec]") {
    CHECK(dump_json(Json(0.0036)) == "0.0036");
    CHECK(dump_json(Json(0.1 + 0.2)) == "0.30000000000000004");
    CHECK(dump_json(Json(123.456)) == "123.456");
    CHECK(dump_json(Json(0.000015)) == "0.000015");  // nlohmann would write 1.5e-05
    CHECK(dump_json(Json(0.000001)) == "0.000001");
    CHECK(dump_json(Json(1.5e-7)) == "1.5e-7");
    CHECK(dump_json(Json(-2.5e-9)) == "-2.5e-9");
    CHECK(dump_json(Json(1e21)) == "1e+21");
    CHECK(dump_json(Json(1.7976931348623157e308)) == "1.7976931348623157e+308");
    CHECK(dump_json(Json(5e-324)) == "5e-324");
    CHECK(dump_json(Json(std::numeric_limits<double>::quiet_NaN())) == "null");
    CHECK(dump_json(Json(std::numeric_limits<double>::infinity())) == "null");
}

TEST_CASE("integers are written exactly over their whole range", "[codec]") {
    CHECK(dump_json(Json(std::numeric_limits<std::int64_t>::min())) == "-9223372036854775808");
    CHECK(dump_json(Json(std::numeric_limits<std::int64_t>::max())) == "9223372036854775807");
    CHECK(dump_json(Json(std::numeric_limits<std::uint64_t>::max())) == "18446744073709551615");
    CHECK(dump_json(Json(1767225600000)) == "1767225600000");
}

TEST_CASE("strings are escaped as JSON.stringify escapes them", "[codec]") {
    CHECK(dump_json(Json("a\"b\\c/d")) == R"("a\"b\\c/d")");
    CHECK(dump_json(Json("\b\f\n\r\t")) == R"("\b\f\n\r\t")");
    CHECK(dump_json(Json(std::string("\x00\x01\x1f", 3))) == R"("\u0000\u0001\u001f")");
    CHECK(dump_json(Json("\x7f")) == "\"\x7f\"");
    CHECK(dump_json(Json("é日本🎉\u2028")) == "\"é日本🎉\u2028\"");
    CHECK(dump_json(Json::parse(R"({"k\n":["",{}],"e":{}})")) == R"({"k\n":["",{}],"e":{}})");
}

TEST_CASE("a string that is not valid UTF-8 cannot be written", "[codec]") {
    // A lone surrogate held as WTF-8 is written (as its escape); a pair in two halves is not.
    for (const std::string& bad :
         {std::string("\xff"), std::string("a\xc3"), std::string("\xed\xa0\xbd\xed\xb8\x80"),
          std::string("\xc0\xaf"), std::string("\xf4\x90\x80\x80")}) {
        try {
            dump_json(Json(bad));
            FAIL("no error");
        } catch (const SessionError& e) {
            CHECK(e.code() == ErrorCode::invalid_entry);
            CHECK(std::string(e.what()).find("UTF-8") != std::string::npos);
        }
    }
    UserMessage m;
    m.content = std::string("ok \xfe");
    CHECK_THROWS_AS(encode_entry(MessageEntry{{"a", std::nullopt, "t", {}}, m}, Dialect::native),
                    SessionError);
}

TEST_CASE("extras never shadow a modelled field when written", "[codec]") {
    LabelEntry e;
    e.id = "l1";
    e.timestamp = "t";
    e.target_id = "x";
    e.extra = Json::parse(R"({"id":"evil","target_id":"y","note":1})");
    CHECK(
        encode_entry(e, Dialect::native) ==
        R"({"type":"label","id":"l1","parent_id":null,"timestamp":"t","target_id":"x","note":1})");
}

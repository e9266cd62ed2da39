// Fields pi leaves out: `fromHook` (omitted by pi's SessionManager unless its caller passes it),
// `display` and `isError` (required by pi's types, tolerated absent by its readers, which take
// them as false). They read as pi reads them and are written back exactly as they were read.
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/scratch.hpp"

#include <agentcore/convert.hpp>
#include <agentcore/session.hpp>

#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

// As pi 0.73.1's SessionManager writes them when appendCompaction / branchWithSummary are
// called without fromHook, and messages of older writers without display / isError.
const std::vector<std::string> pi_lines = {
    R"({"type":"compaction","id":"c0000001","parentId":null,"timestamp":"2026-12-02T07:43:23.123Z","summary":"s","firstKeptEntryId":"c0000001","tokensBefore":10})",
    R"({"type":"compaction","id":"c0000002","parentId":"c0000001","timestamp":"2026-12-02T07:43:23.124Z","summary":"s","tokensBefore":10,"details":{"a":1},"fromHook":false})",
    R"({"type":"branch_summary","id":"b0000001","parentId":"c0000002","timestamp":"2026-12-02T07:43:23.125Z","fromId":"root","summary":"s"})",
    R"({"type":"custom_message","customType":"note","content":"hi","id":"m0000001","parentId":"b0000001","timestamp":"2026-12-02T07:43:23.126Z"})",
    R"({"type":"message","id":"m0000002","parentId":"m0000001","timestamp":"2026-12-02T07:43:23.127Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"x"}],"timestamp":1}})",
    R"({"type":"message","id":"m0000003","parentId":"m0000002","timestamp":"2026-12-02T07:43:23.128Z","message":{"role":"custom","customType":"note","content":"x","timestamp":2}})",
};

}  // namespace

TEST_CASE("absent fromHook, display and isError read as false and are written back absent",
          "[codec][pi]") {
    for (const auto& line : pi_lines) {
        INFO(line);
        const SessionTreeEntry e = decode_entry(line, Dialect::pi);
        CHECK(encode_entry(e, Dialect::pi) == line);
        // And through the native dialect and back.
        CHECK(encode_entry(decode_entry(encode_entry(e, Dialect::native), Dialect::native),
                           Dialect::pi) == line);
    }
    CHECK_FALSE(std::get<CompactionEntry>(decode_entry(pi_lines[0], Dialect::pi)).from_hook);
    CHECK(std::get<CompactionEntry>(decode_entry(pi_lines[0], Dialect::pi)).from_hook_omitted);
    CHECK_FALSE(
        std::get<CompactionEntry>(decode_entry(pi_lines[1], Dialect::pi)).from_hook_omitted);
    CHECK_FALSE(std::get<CustomMessageEntry>(decode_entry(pi_lines[3], Dialect::pi)).display);
    const SessionTreeEntry tool_entry = decode_entry(pi_lines[4], Dialect::pi);
    const auto& result = std::get<ToolResultMessage>(std::get<MessageEntry>(tool_entry).message);
    CHECK_FALSE(result.is_error);
    CHECK(result.is_error_omitted);
    // null reads as absent, as pi's falsy check does.
    const std::string with_null =
        R"({"type":"custom_message","customType":"note","content":"hi","display":null,"id":"m1","parentId":null,"timestamp":"t"})";
    CHECK_FALSE(std::get<CustomMessageEntry>(decode_entry(with_null, Dialect::pi)).display);
}

TEST_CASE(
    "new entries write fromHook, display and isError, as pi's agent does, setting one writes it",
    "[codec][pi]") {
    CompactionEntry c;
    c.id = "c1";
    c.timestamp = "t";
    CHECK(encode_entry(c, Dialect::pi).find(R"("fromHook":false)") != std::string::npos);
    CHECK(encode_entry(c, Dialect::native).find(R"("from_hook":false)") != std::string::npos);
    SessionTreeEntry read = decode_entry(pi_lines[0], Dialect::pi);
    std::get<CompactionEntry>(read).from_hook = true;
    CHECK(encode_entry(read, Dialect::pi).find(R"("fromHook":true)") != std::string::npos);
    ToolResultMessage r;
    CHECK(message_to_json(r, Dialect::pi).contains("isError"));
    CustomMessageEntry m;
    CHECK(entry_to_json(m, Dialect::pi).contains("display"));
}

TEST_CASE(
    "a pi file without fromHook, display or isError opens, converts and round-trips byte for byte",
    "[jsonl][pi]") {
    ScratchDir dir;
    const std::string path = dir.file("pi.jsonl");
    std::string text = R"({"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"})"
                       "\n";
    for (const auto& line : pi_lines) text += line + "\n";
    write_file(path, text);
    CHECK(JsonlSessionStorage::open(path).entry_count() == pi_lines.size());
    CHECK(load_session_file(path).storage.entry_count() == pi_lines.size());
    convert(path, Dialect::native, dir.file("native.jsonl"));
    convert(dir.file("native.jsonl"), Dialect::pi, dir.file("back.jsonl"));
    CHECK(read_file(dir.file("back.jsonl")) == text);
    convert(path, Dialect::pi, dir.file("same.jsonl"));
    CHECK(read_file(dir.file("same.jsonl")) == text);
}

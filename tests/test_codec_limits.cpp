// One nesting limit for every reader and writer, and no input of any depth that overflows the
// stack: appends, codec calls, opens, forks, load_session_file and convert all answer a value
// nested 100,000 levels deep with a SessionError.
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

constexpr int very_deep = 100000;

/// `levels` arrays nested in each other, built without recursion.
Json nested(int levels) {
    Json v = 1;
    for (int i = 0; i < levels; ++i) {
        Json outer = Json::array();
        outer.push_back(std::move(v));
        v = std::move(outer);
    }
    return v;
}

/// The text of `levels` nested arrays.
std::string nested_text(int levels) {
    return std::string(static_cast<std::size_t>(levels), '[') + "1" +
           std::string(static_cast<std::size_t>(levels), ']');
}

/// A native entry line whose `details` holds `levels` nested arrays: the line nests levels + 1.
std::string deep_line(const std::string& id, const std::string& parent, int levels) {
    return R"({"type":"custom","id":")" + id + R"(","parent_id":)" +
           (parent.empty() ? "null" : "\"" + parent + "\"") +
           R"(,"timestamp":"2026-12-02T07:43:23.123Z","custom_type":"x","data":)" +
           nested_text(levels) + "}";
}

MessageEntry message_with_details(Json details) {
    ToolResultMessage m;
    m.tool_call_id = "c";
    m.tool_name = "t";
    m.details = std::move(details);
    MessageEntry e;
    e.id = "deep0001";
    e.timestamp = "2026-12-02T07:43:23.123Z";
    e.message = std::move(m);
    return e;
}

std::string native_header() {
    return R"({"type":"session","version":3,"id":"s","timestamp":"2026-12-02T07:43:23.123Z","cwd":"/w","parent_session":null,"metadata":{}})";
}

}  // namespace

TEST_CASE("one nesting limit: the writer refuses exactly what the scanner refuses",
          "[codec][limits]") {
    ScratchDir dir;
    const std::string path = dir.file("s.jsonl");
    std::string at_limit;
    std::string after;
    {
        auto session = create_file_session(path);
        // `data` is a member of the entry's object (level 1): it may hold max_json_depth - 1
        // levels.
        at_limit = append_custom_entry(session, "x", nested(detail::max_json_depth - 1));
        CHECK(error_of([&] {
                  append_custom_entry(session, "x", nested(detail::max_json_depth));
              }) == ErrorCode::invalid_entry);
        after = append_message(session, user("after"));
    }

    // What was acknowledged reads back, by a writing open too (no torn tail cut), strict.
    auto reopened = open_file_session(path);
    CHECK(reopened.storage().entry_count() == 2);
    CHECK_FALSE(reopened.storage().had_torn_tail());
    CHECK(get_entry(reopened, at_limit) != nullptr);
    CHECK(get_entry(reopened, after) != nullptr);
    CHECK(load_session_file(path).storage.entry_count() == 2);

    std::string error;
    CHECK(detail::JsonScanner::validate(deep_line("a", "", detail::max_json_depth - 1), error));
    CHECK_FALSE(detail::JsonScanner::validate(deep_line("a", "", detail::max_json_depth), error));
}

TEST_CASE(
    "appending a value nested 100,000 levels deep is invalid_entry in every storage, nothing "
    "written",
    "[codec][limits]") {
    ScratchDir dir;
    const std::string path = dir.file("s.jsonl");
    auto file = create_file_session(path);
    append_message(file, user("before"));
    const std::string before = read_file(path);
    CHECK(error_of([&] { file.storage().append_entry(message_with_details(nested(very_deep))); }) ==
          ErrorCode::invalid_entry);
    CHECK(read_file(path) == before);
    CHECK(file.storage().entry_count() == 1);

    auto memory = memory_session();
    const std::string msg = message_of_error(
        [&] { memory.storage().append_entry(message_with_details(nested(very_deep))); });
    CHECK(msg.find("entry 'deep0001'") != std::string::npos);
    CHECK(msg.find("message.details") != std::string::npos);
    CHECK(msg.find("nested deeper than 512") != std::string::npos);
    CHECK(memory.storage().entry_count() == 0);

    // Through the session operations, with a deep tool argument and a deep extra.
    AssistantMessage a;
    Json arguments = Json::object();
    arguments["deep"] = nested(very_deep);
    a.content.push_back(ToolCallContent{"c", "t", std::move(arguments), {}});
    CHECK(error_of([&] { append_message(memory, std::move(a)); }) == ErrorCode::invalid_entry);
    UserMessage u;
    u.content = std::string("x");
    u.extra = Json::object();
    u.extra["deep"] = nested(very_deep);
    CHECK(error_of([&] { append_message(file, std::move(u)); }) == ErrorCode::invalid_entry);
    CHECK(read_file(path) == before);
}

TEST_CASE("the codec's writers refuse a value nested 100,000 levels deep before copying it",
          "[codec][limits]") {
    ToolResultMessage result;
    result.details =
        nested(very_deep);  // built by moves: copying it is what the library must not do
    const AgentMessage m = std::move(result);
    CHECK(error_of([&] { (void)message_to_json(m, Dialect::pi); }) == ErrorCode::invalid_entry);
    CHECK(error_of([&] {
              (void)content_block_to_json(ToolCallContent{"c", "t", nested(very_deep), {}},
                                          Dialect::native);
          }) == ErrorCode::invalid_entry);
    Json opaque = Json::object();
    opaque["type"] = "x";
    opaque["v"] = nested(very_deep);
    CHECK(error_of([&] {
              (void)content_block_to_json(OpaqueContent{"x", std::move(opaque)}, Dialect::native);
          }) == ErrorCode::invalid_entry);
    Usage usage;
    usage.extra = Json::object();
    usage.extra["deep"] = nested(very_deep);
    CHECK(error_of([&] { (void)usage_to_json(usage, Dialect::native); }) ==
          ErrorCode::invalid_entry);
    const Json deep = nested(very_deep);
    CHECK(error_of([&] { (void)dump_json(deep); }) == ErrorCode::invalid_entry);
    const SessionTreeEntry entry = message_with_details(nested(very_deep));
    CHECK(error_of([&] { (void)encode_entry(entry, Dialect::native); }) ==
          ErrorCode::invalid_entry);
    CHECK(error_of([&] { (void)entry_to_json(entry, Dialect::native); }) ==
          ErrorCode::invalid_entry);
    UnknownEntry unknown;
    unknown.type = "future";
    unknown.id = "u1";
    unknown.raw = Json::object();
    unknown.raw["v"] = nested(very_deep);
    const SessionTreeEntry unknown_entry = std::move(unknown);
    CHECK(error_of([&] { (void)entry_to_json(unknown_entry, Dialect::pi); }) ==
          ErrorCode::invalid_entry);

    SessionHeader header = test_header();
    header.metadata = Json::object();
    header.metadata["deep"] = nested(very_deep);
    CHECK(error_of([&] { (void)encode_header(header, Dialect::native); }) ==
          ErrorCode::invalid_session);
    ScratchDir dir;
    CHECK(error_of([&] {
              JsonlSessionStorage::create(dir.file("h.jsonl"), std::move(header), jsonl_options());
          }) == ErrorCode::invalid_session);
}

TEST_CASE("every reader answers a line nested 100,000 levels deep with a SessionError",
          "[codec][limits]") {
    const std::string deep = deep_line("deep0001", "", very_deep);
    CHECK(error_of([&] { (void)decode_entry(deep, Dialect::native); }) == ErrorCode::invalid_entry);
    const std::string message =
        message_of_error([&] { (void)decode_entry(deep, Dialect::native); });
    CHECK(message.find("nesting too deep") != std::string::npos);
    // The field is named by its first and last steps: one short line, not 512 levels of "[0]".
    CHECK(message.find("in field 'data[0][0][0][0][0]...(") != std::string::npos);
    CHECK(message.find(" levels)...[0][0][0]'") != std::string::npos);
    CHECK(message.size() < 300);
    CHECK(error_of([&] { (void)decode_header(nested_text(very_deep)); }) ==
          ErrorCode::invalid_session);

    ScratchDir dir;
    const std::string middle = dir.file("middle.jsonl");
    write_file(
        middle,
        native_header() + "\n" + deep + "\n" +
            R"({"type":"custom","id":"b","parent_id":null,"timestamp":"t","custom_type":"x"})"
            "\n");
    CHECK(error_of([&] { JsonlSessionStorage::open_read_only(middle); }) ==
          ErrorCode::invalid_entry);
    CHECK(error_of([&] { JsonlSessionStorage::open(middle); }) == ErrorCode::invalid_entry);
    JsonlStorageOptions lenient;
    lenient.lenient = true;
    const auto skipped = JsonlSessionStorage::open_read_only(middle, lenient);
    CHECK(skipped.entry_count() == 1);
    REQUIRE(skipped.problems().size() == 1);
    CHECK(skipped.problems()[0].line == 2);
    CHECK(error_of([&] { load_session_file(middle); }) == ErrorCode::invalid_entry);
    CHECK(error_of([&] { convert(middle, Dialect::pi, dir.file("out.jsonl")); }) ==
          ErrorCode::invalid_entry);
    const auto repaired = JsonlSessionStorage::repair(middle);
    CHECK(repaired.changed);
    CHECK(JsonlSessionStorage::open(middle).entry_count() == 1);

    // A deep header, and a fork of a session whose file holds a deep line.
    const std::string header_file = dir.file("header.jsonl");
    write_file(header_file, nested_text(very_deep) + "\n");
    CHECK(error_of([&] { JsonlSessionStorage::open_read_only(header_file); }) ==
          ErrorCode::invalid_session);
    CHECK(error_of([&] { load_session_file(header_file); }) == ErrorCode::invalid_session);

    JsonlSessionRepo repo(dir.file("repo"), jsonl_options());
    std::string source_path;
    {
        auto source = create(repo);
        append_message(source, user("x"));
        source_path = source.storage().path();
    }
    std::string text = read_file(source_path);
    write_file(
        source_path,
        text + deep + "\n" +
            R"({"type":"custom","id":"b","parent_id":null,"timestamp":"t","custom_type":"x"})"
            "\n");
    const std::string source_id =
        JsonlSessionStorage::open_read_only(source_path, lenient).metadata().id;
    CHECK(error_of([&] { fork(repo, source_id); }) == ErrorCode::invalid_entry);
    ForkOptions deep_metadata;
    deep_metadata.metadata = Json::object();
    (*deep_metadata.metadata)["deep"] = nested(very_deep);
    write_file(source_path, text);
    CHECK(error_of([&] { fork(repo, source_id, deep_metadata); }) == ErrorCode::invalid_session);
}

TEST_CASE("a deep last line is an unacknowledged append to every reader alike", "[codec][limits]") {
    ScratchDir dir;
    const std::string path = dir.file("tail.jsonl");
    write_file(
        path, native_header() + "\n" +
                  R"({"type":"custom","id":"a","parent_id":null,"timestamp":"t","custom_type":"x"})"
                  "\n" +
                  deep_line("deep0001", "a", very_deep));
    CHECK(JsonlSessionStorage::open_read_only(path).entry_count() == 1);
    const auto loaded = load_session_file(path);
    CHECK(loaded.storage.entry_count() == 1);
    CHECK(loaded.report.count(PiMigrationKind::torn_last_line) == 1);
}

TEST_CASE("the codec refuses text after the object, a NUL byte included, as the scanner does",
          "[codec][limits]") {
    const std::string line =
        std::string(
            R"({"type":"custom","id":"a","parent_id":null,"timestamp":"t","custom_type":"x"})") +
        std::string("\0junk", 5);
    CHECK(error_of([&] { (void)decode_entry(line, Dialect::native); }) == ErrorCode::invalid_entry);
    std::string error;
    detail::ScannedEntry scanned;
    CHECK_FALSE(detail::JsonScanner::scan_entry(line, Dialect::native, scanned, error));
    CHECK(error_of([&] { (void)decode_header(native_header() + std::string("\0", 1)); }) ==
          ErrorCode::invalid_session);

    ScratchDir dir;
    const std::string path = dir.file("nul.jsonl");
    write_file(
        path, native_header() + "\n" + line + "\n" +
                  R"({"type":"custom","id":"b","parent_id":null,"timestamp":"t","custom_type":"x"})"
                  "\n");
    CHECK(error_of([&] { JsonlSessionStorage::open_read_only(path); }) == ErrorCode::invalid_entry);
    CHECK(error_of([&] { load_session_file(path); }) == ErrorCode::invalid_entry);
}

// pi session files of formats v1 and v2 upgraded to v3 in memory and on request on disk, and
// the documented recoveries for damaged or odd pi files (pi_migrate.hpp).

#include "fixtures/pi/pi_fixtures.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/scratch.hpp"

#include <agentcore/context.hpp>
#include <agentcore/convert.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/pi_migrate.hpp>

#include <filesystem>
#include <string>
#include <vector>

using namespace agentcore;
using agentcore::testing::error_of;
using agentcore::testing::pi_fixture;
using agentcore::testing::read_file;
using agentcore::testing::ScratchDir;
using agentcore::testing::write_file;

namespace {

bool is_entry_id(const Json& id) {
    if (!id.is_string() || id.get<std::string>().size() != 8) return false;
    for (char c : id.get<std::string>())
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

// The lines of a session file as JSON, without any migration.
SessionLines raw_lines(const std::string& path) {
    return parse_session_text(read_file(path), path);
}

Json without(Json j, std::initializer_list<const char*> keys) {
    for (const char* k : keys) j.erase(k);
    return j;
}

const char* const v1_header =
    R"({"type":"session","id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"})";

std::string v1_line(const std::string& text) {
    return R"({"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":")" +
           text + R"(","timestamp":1}})";
}

std::string v1_compaction(const std::string& index) {
    return R"({"type":"compaction","timestamp":"2026-01-01T00:00:02.000Z","summary":"sum","tokensBefore":5,"firstKeptEntryIndex":)" +
           index + "}";
}

}  // namespace

TEST_CASE(
    "A v1 pi file becomes a chain of entries with fresh ids, the same ids for the same environment",
    "[pi]") {
    const std::string path = pi_fixture("v1-linear.jsonl");
    const std::string before = read_file(path);
    const SessionLines raw = raw_lines(path);
    REQUIRE_FALSE(raw.header.contains("version"));

    const SessionLines up = read_session_lines(path, Environment::deterministic(0, 42));
    CHECK(up.report.from_version == 1);
    CHECK(up.report.to_version == 3);
    CHECK(up.report.changed());
    CHECK(up.header["version"] == 3);
    REQUIRE(up.entries.size() == raw.entries.size());
    for (std::size_t i = 0; i < up.entries.size(); ++i) {
        const Json& e = up.entries[i];
        CHECK(is_entry_id(e["id"]));
        CHECK(e["parentId"] == (i == 0 ? Json() : up.entries[i - 1]["id"]));
        // type, id, parentId first, as in a v3 line; the rest unchanged.
        CHECK(e.begin().key() == "type");
        CHECK(std::next(e.begin()).key() == "id");
        CHECK(std::next(e.begin(), 2).key() == "parentId");
    }
    CHECK(up.line_numbers.front() == 2);

    const SessionLines again = read_session_lines(path, Environment::deterministic(0, 42));
    for (std::size_t i = 0; i < up.entries.size(); ++i)
        CHECK(again.entries[i]["id"] == up.entries[i]["id"]);
    const SessionLines other = read_session_lines(path, Environment::deterministic(0, 43));
    CHECK(other.entries[0]["id"] != up.entries[0]["id"]);

    CHECK(up.report.count(PiMigrationKind::ids_assigned) == 1);
    CHECK(read_file(path) == before);  // reading never changes the file
}

TEST_CASE("A v1 firstKeptEntryIndex becomes the id of the entry on that line", "[pi]") {
    const std::string path = pi_fixture("v1-linear.jsonl");
    const SessionLines raw = raw_lines(path);
    const SessionLines up = read_session_lines(path, Environment::deterministic(0, 1));
    std::size_t compactions = 0;
    for (std::size_t i = 0; i < raw.entries.size(); ++i) {
        if (raw.entries[i]["type"] != "compaction") continue;
        ++compactions;
        const auto index = raw.entries[i]["firstKeptEntryIndex"].get<std::size_t>();  // 0 = header
        CHECK_FALSE(up.entries[i].contains("firstKeptEntryIndex"));
        CHECK(up.entries[i]["firstKeptEntryId"] == up.entries[index - 1]["id"]);
    }
    CHECK(compactions == 1);
    CHECK(up.report.count(PiMigrationKind::first_kept_index_mapped) == 1);
}

TEST_CASE(
    "A v1 file upgrades to the same entries as the v2 file of the same session, apart from ids",
    "[pi]") {
    const SessionLines v1 =
        read_session_lines(pi_fixture("v1-linear.jsonl"), Environment::deterministic(0, 1));
    const SessionLines v2 =
        read_session_lines(pi_fixture("v2-linear.jsonl"), Environment::deterministic(0, 1));
    REQUIRE(v1.entries.size() == v2.entries.size());
    for (std::size_t i = 0; i < v1.entries.size(); ++i)
        CHECK(without(v1.entries[i], {"id", "parentId", "firstKeptEntryId"}) ==
              without(v2.entries[i], {"id", "parentId", "firstKeptEntryId"}));
    CHECK(without(v1.header, {"version"}) == without(v2.header, {"version"}));
}

TEST_CASE("A v2 pi file: role hookMessage becomes custom, nothing else changes", "[pi]") {
    const std::string path = pi_fixture("v2-linear.jsonl");
    const SessionLines raw = raw_lines(path);
    CHECK(raw.header["version"] == 2);
    const SessionLines up = read_session_lines(path);
    CHECK(up.report.from_version == 2);
    CHECK(up.header["version"] == 3);
    REQUIRE(up.report.count(PiMigrationKind::hook_message_renamed) == 1);
    for (std::size_t i = 0; i < raw.entries.size(); ++i) {
        Json expected = raw.entries[i];
        if (expected["type"] == "message" && expected["message"]["role"] == "hookMessage")
            expected["message"]["role"] = "custom";
        CHECK(up.entries[i] == expected);
    }
    const LoadedSession loaded = load_session_file(path);
    std::size_t custom = 0;
    for (const auto& e : loaded.storage.entries())
        if (const auto* m = message_of(*e))
            custom += std::holds_alternative<CustomMessage>(*m) ? 1U : 0U;
    CHECK(custom == 1);
}

TEST_CASE(
    "A v1 compaction whose index names the header, itself, a later line or nothing keeps the "
    "compaction without a pointer",
    "[pi]") {
    const std::string index =
        GENERATE(as<std::string>{}, "0", "3", "4", "99", "-1", "\"2\"", "1.5");
    // Lines: 0 header, 1 and 2 messages, 3 the compaction, 4 a message.
    const std::string text = std::string(v1_header) + "\n" + v1_line("a") + "\n" + v1_line("b") +
                             "\n" + v1_compaction(index) + "\n" + v1_line("c") + "\n";
    ScratchDir dir;
    const std::string path = dir.file("v1.jsonl");
    write_file(path, text);
    const SessionLines up = read_session_lines(path, Environment::deterministic(0, 1));
    REQUIRE(up.entries.size() == 4);
    CHECK(up.entries[2]["type"] == "compaction");
    CHECK_FALSE(up.entries[2].contains("firstKeptEntryId"));
    CHECK_FALSE(up.entries[2].contains("firstKeptEntryIndex"));
    REQUIRE(up.report.count(PiMigrationKind::first_kept_index_dropped) == 1);
    for (const auto& n : up.report.notes) {
        if (n.kind != PiMigrationKind::first_kept_index_dropped) continue;
        CHECK(n.line == 4);
        CHECK(n.entry_id == up.entries[2]["id"]);
        CHECK(n.detail.find(index) != std::string::npos);  // the original value is reported
    }
    // The context is the summary and what follows it (what pi builds for such a file too).
    const LoadedSession loaded = load_session_file(path, Environment::deterministic(0, 1));
    const auto context = build_session_context(
        loaded.storage.get_path_to_root_or_compaction(loaded.storage.get_leaf_id()));
    REQUIRE(context.messages.size() == 2);
    CHECK(std::holds_alternative<CompactionSummaryMessage>(*context.messages[0]));
    CHECK(std::get<std::string>(std::get<UserMessage>(*context.messages[1]).content) == "c");
}

TEST_CASE("A header of an unknown format version is invalid_session, and nothing is changed",
          "[pi]") {
    const std::string version = GENERATE(as<std::string>{}, "4", "0", "\"3\"", "2.5");
    ScratchDir dir;
    const std::string path = dir.file("future.jsonl");
    const std::string text = R"({"type":"session","version":)" + version +
                             R"(,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"})" +
                             "\n" + v1_line("a") + "\n";
    write_file(path, text);
    CHECK(error_of([&] { (void)read_session_lines(path); }) == ErrorCode::invalid_session);
    CHECK(error_of([&] { (void)load_session_file(path); }) == ErrorCode::invalid_session);
    CHECK(error_of([&] { (void)upgrade_file(path); }) == ErrorCode::invalid_session);
    CHECK(error_of([&] { (void)convert(path, Dialect::native, dir.file("out.jsonl")); }) ==
          ErrorCode::invalid_session);
    CHECK(read_file(path) == text);
    CHECK_FALSE(std::filesystem::exists(dir.file("out.jsonl")));
}

TEST_CASE("A header that is not a session header is invalid_session", "[pi]") {
    CHECK(error_of([] {
              (void)migrate_session_lines(Json{{"type", "message"}}, {});
          }) == ErrorCode::invalid_session);
    CHECK(error_of([] { (void)parse_session_text(""); }) == ErrorCode::invalid_session);
    CHECK(error_of([] { (void)parse_session_text("{not json\n"); }) == ErrorCode::invalid_session);
    CHECK(error_of([] { (void)migrate_session_lines(Json::parse(v1_header), {Json::array()}); }) ==
          ErrorCode::invalid_entry);
}

TEST_CASE(
    "A torn last line is ignored and reported, a complete last line without its newline is kept",
    "[pi]") {
    const std::string full = read_file(pi_fixture("v3-branches.jsonl"));
    const SessionLines whole = parse_session_text(full);

    const std::string torn = full + R"({"type":"message","id":"abc)";
    const SessionLines a = parse_session_text(torn, "torn.jsonl");
    CHECK(a.entries.size() == whole.entries.size());
    REQUIRE(a.report.count(PiMigrationKind::torn_last_line) == 1);
    CHECK(a.report.notes.back().line == whole.entries.size() + 2);

    const SessionLines c = parse_session_text(full + "{\"type\":\"mess\n");
    CHECK(c.entries.size() == whole.entries.size());
    CHECK(c.report.count(PiMigrationKind::torn_last_line) == 1);

    const std::string unterminated = full.substr(0, full.size() - 1);
    const SessionLines b = parse_session_text(unterminated);
    CHECK(b.entries.size() == whole.entries.size());
    CHECK(b.report.notes.empty());

    // Through the file functions: the torn line is not an entry, the file is untouched.
    ScratchDir dir;
    const std::string path = dir.file("torn.jsonl");
    write_file(path, torn);
    const LoadedSession loaded = load_session_file(path);
    CHECK(loaded.storage.entry_count() == whole.entries.size());
    CHECK(loaded.report.count(PiMigrationKind::torn_last_line) == 1);
    CHECK(read_file(path) == torn);
}

TEST_CASE("A bad line in the middle of a pi file is invalid_entry naming the file and the line",
          "[pi]") {
    std::string text = read_file(pi_fixture("v3-branches.jsonl"));
    const auto second_line = text.find('\n') + 1;
    text.insert(second_line, "{oops\n");
    ScratchDir dir;
    const std::string path = dir.file("bad.jsonl");
    write_file(path, text);
    try {
        (void)read_session_lines(path);
        FAIL("no error");
    } catch (const SessionError& e) {
        CHECK(e.code() == ErrorCode::invalid_entry);
        CHECK(std::string(e.what()).find(path + ":2") != std::string::npos);
    }
    CHECK(read_file(path) == text);
}

TEST_CASE(
    "A hookMessage in a v3 file stays an opaque message, is reported, and is written back "
    "unchanged",
    "[pi]") {
    const std::string header =
        R"({"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"})";
    const std::string hook =
        R"({"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"x","content":"hi","display":true,"timestamp":5}})";
    ScratchDir dir;
    const std::string path = dir.file("hook.jsonl");
    write_file(path, header + "\n" + hook + "\n");
    const LoadedSession loaded = load_session_file(path);
    REQUIRE(loaded.report.count(PiMigrationKind::hook_message_kept) == 1);
    CHECK(loaded.report.notes.front().entry_id == "aaaa0001");
    CHECK(loaded.report.notes.front().line == 2);
    CHECK_FALSE(loaded.report.changed());
    const auto* message = message_of(*loaded.storage.entries().front());
    REQUIRE(message != nullptr);
    REQUIRE(std::holds_alternative<OpaqueMessage>(*message));
    CHECK(std::get<OpaqueMessage>(*message).role == "hookMessage");
    CHECK(encode_entry(*loaded.storage.entries().front(), Dialect::pi) == hook);
    // As in pi, the message is part of the context as it is.
    const auto context =
        build_session_context(loaded.storage.get_path_to_root_or_compaction("aaaa0001"));
    CHECK(context.messages.size() == 1);
    // Nothing to upgrade: the file stays as it is.
    const UpgradeResult result = upgrade_file(path);
    CHECK_FALSE(result.rewritten);
    CHECK(read_file(path) == header + "\n" + hook + "\n");
}

TEST_CASE(
    "Entries of a v2/v3 file without a parentId key are roots, as pi reads them, and are reported",
    "[pi]") {
    const std::string version = GENERATE(as<std::string>{}, "2", "3");
    const std::string header = R"({"type":"session","version":)" + version +
                               R"(,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"})";
    const std::string a =
        R"({"type":"message","id":"aaaa0001","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}})";
    const std::string b =
        R"({"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"b","timestamp":2}})";
    const std::string c =
        R"({"type":"message","id":"aaaa0003","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"c","timestamp":3}})";
    ScratchDir dir;
    const std::string path = dir.file("orphans.jsonl");
    write_file(path, header + "\n" + a + "\n" + b + "\n" + c + "\n");
    const LoadedSession loaded = load_session_file(path);
    CHECK(loaded.report.count(PiMigrationKind::missing_parent_key) == 2);
    CHECK(loaded.storage.entry_count() == 3);
    CHECK_FALSE(parent_id_of(*loaded.storage.get_entry("aaaa0001")).has_value());
    CHECK_FALSE(parent_id_of(*loaded.storage.get_entry("aaaa0003")).has_value());
    CHECK(loaded.storage.get_leaf_id() == "aaaa0003");
    CHECK(loaded.storage.get_path_to_root_or_compaction("aaaa0003").size() == 1);
    CHECK(loaded.storage.get_path_to_root_or_compaction("aaaa0002").size() == 2);
}

TEST_CASE("An entry that names itself as parent becomes a root, reported", "[pi]") {
    const Json header =
        Json::parse(R"({"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"})");
    const Json self = Json::parse(
        R"({"type":"message","id":"aaaa0001","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}})");
    const SessionLines up = migrate_session_lines(header, {self});
    CHECK(up.entries[0]["parentId"].is_null());
    CHECK(up.report.count(PiMigrationKind::self_parent) == 1);
    CHECK(up.report.changed());
}

TEST_CASE("upgrade_file rewrites an old pi file as v3 atomically and keeps the original beside it",
          "[pi]") {
    const std::string name = GENERATE(as<std::string>{}, "v1-linear.jsonl", "v2-linear.jsonl");
    ScratchDir dir;
    const std::string path = dir.file(name);
    const std::string original = read_file(pi_fixture(name));
    write_file(path, original);
    const SessionLines expected = read_session_lines(path, Environment::deterministic(0, 9));

    const UpgradeResult result = upgrade_file(path, Environment::deterministic(0, 9));
    CHECK(result.rewritten);
    CHECK(result.report.from_version == (name[1] == '1' ? 1 : 2));
    CHECK(result.original_path ==
          path + ".v" + std::to_string(result.report.from_version) + ".orig");
    CHECK(read_file(result.original_path) == original);
    CHECK(read_file(path) == session_lines_text(expected));
    CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::all) ==
          (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
    // Only the session, its kept original: no temporary file left behind.
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                        std::filesystem::directory_iterator()) == 2);

    // Now a v3 pi file: the JSONL storage opens it, and a second upgrade changes nothing.
    const auto storage = JsonlSessionStorage::open_read_only(path);
    CHECK(storage.dialect() == Dialect::pi);
    CHECK(storage.metadata().version == 3);
    CHECK(storage.entry_count() == expected.entries.size());
    const std::string upgraded = read_file(path);
    const UpgradeResult again = upgrade_file(path);
    CHECK_FALSE(again.rewritten);
    CHECK(read_file(path) == upgraded);

    // A second upgrade of another old copy does not overwrite the kept original.
    write_file(path, original);
    const UpgradeResult third = upgrade_file(path);
    CHECK(third.original_path == result.original_path + ".2");
    CHECK(read_file(result.original_path) == original);
}

TEST_CASE(
    "upgrade_file of a missing file is not_found, of a file with an entry the codec rejects, "
    "invalid_entry and no change",
    "[pi]") {
    ScratchDir dir;
    CHECK(error_of([&] { (void)upgrade_file(dir.file("missing.jsonl")); }) == ErrorCode::not_found);
    const std::string path = dir.file("bad.jsonl");
    const std::string text = std::string(v1_header) + "\n" +
                             R"({"type":"message","timestamp":"2026-01-01T00:00:01.000Z"})" + "\n";
    write_file(path, text);
    CHECK(error_of([&] { (void)upgrade_file(path); }) == ErrorCode::invalid_entry);
    CHECK(read_file(path) == text);
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                        std::filesystem::directory_iterator()) == 1);
}

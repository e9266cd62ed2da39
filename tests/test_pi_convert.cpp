// Whole-session conversion between the native and the pi dialect (convert.hpp), and the shapes
// of pi files that agentcore must read: files without leaf entries, fromHook, provider fields,
// and the newer harness entries (leaf, active_tools_change, retainedTail, usage on summaries).

#include "fixtures/pi/pi_fixtures.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/scratch.hpp"

#include <agentcore/codec.hpp>
#include <agentcore/context.hpp>
#include <agentcore/convert.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

using namespace agentcore;
using agentcore::testing::error_of;
using agentcore::testing::pi_fixture;
using agentcore::testing::read_file;
using agentcore::testing::ScratchDir;
using agentcore::testing::write_file;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::size_t files_in(const std::string& folder) {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(folder),
                                                  std::filesystem::directory_iterator()));
}

}  // namespace

TEST_CASE("Converting a pi session to native and back to pi changes only the documented details",
          "[pi][convert]") {
    const std::string name = GENERATE(as<std::string>{}, "v3-full.jsonl", "v3-branches.jsonl");
    ScratchDir dir;
    const ConvertReport to_native =
        convert(pi_fixture(name), Dialect::native, dir.file("native.jsonl"));
    CHECK(to_native.from == Dialect::pi);
    CHECK(to_native.to == Dialect::native);
    CHECK(to_native.migration.notes.empty());
    const ConvertReport back = convert(dir.file("native.jsonl"), Dialect::pi, dir.file("pi.jsonl"));
    CHECK(back.from == Dialect::native);
    CHECK(back.entry_count == to_native.entry_count);

    const auto original = lines_of(read_file(pi_fixture(name)));
    const auto round = lines_of(read_file(dir.file("pi.jsonl")));
    REQUIRE(original.size() == round.size());
    for (std::size_t i = 0; i < original.size(); ++i) {
        if (original[i] == round[i]) continue;
        // Deliberate difference 4: pi's SessionManager leaves fromHook out unless given.
        INFO("line " << i + 1);
        CHECK(round[i] == original[i].substr(0, original[i].size() - 1) + ",\"fromHook\":false}");
    }
}

TEST_CASE("Converting native to pi and back gives the same bytes", "[pi][convert]") {
    const std::string name = GENERATE(as<std::string>{}, "v3-full.jsonl", "v3-branches.jsonl",
                                      "v2-linear.jsonl", "v1-linear.jsonl");
    ScratchDir dir;
    (void)convert(pi_fixture(name), Dialect::native, dir.file("a.jsonl"),
                  Environment::deterministic(0, 3));
    (void)convert(dir.file("a.jsonl"), Dialect::pi, dir.file("b.jsonl"));
    (void)convert(dir.file("b.jsonl"), Dialect::native, dir.file("c.jsonl"));
    const std::string native = read_file(dir.file("a.jsonl"));
    CHECK(read_file(dir.file("c.jsonl")) == native);
    // The native file is the native dialect: snake_case keys, a header with parent_session.
    CHECK(native.find("\"parent_session\":null") != std::string::npos);
    CHECK(native.find("\"parentId\"") == std::string::npos);
    // pi → pi after the first round is stable too.
    (void)convert(dir.file("b.jsonl"), Dialect::pi, dir.file("d.jsonl"));
    CHECK(read_file(dir.file("d.jsonl")) == read_file(dir.file("b.jsonl")));
}

TEST_CASE("Converting keeps the session: same entries, leaf, name, labels and contexts",
          "[pi][convert]") {
    ScratchDir dir;
    (void)convert(pi_fixture("v3-full.jsonl"), Dialect::native, dir.file("native.jsonl"));
    const auto pi = JsonlSessionStorage::open_read_only(pi_fixture("v3-full.jsonl"));
    const auto native = JsonlSessionStorage::open_read_only(dir.file("native.jsonl"));
    CHECK(native.dialect() == Dialect::native);
    REQUIRE(native.entry_count() == pi.entry_count());
    CHECK(native.get_leaf_id() == pi.get_leaf_id());
    CHECK(native.get_session_name() == pi.get_session_name());
    CHECK(native.metadata().id == pi.metadata().id);
    for (const auto& e : pi.get_entries({})) {
        const std::string& id = id_of(*e);
        CHECK(native.get_label(id) == pi.get_label(id));
        const auto a = build_session_context(pi.get_path_to_root_or_compaction(id));
        const auto b = build_session_context(native.get_path_to_root_or_compaction(id));
        REQUIRE(a.messages.size() == b.messages.size());
        for (std::size_t i = 0; i < a.messages.size(); ++i)
            CHECK(message_to_json(*a.messages[i], Dialect::pi) ==
                  message_to_json(*b.messages[i], Dialect::pi));
        CHECK(a.thinking_level == b.thinking_level);
        CHECK(a.model == b.model);
    }
}

TEST_CASE(
    "Converting places each leaf entry as its dialect's writer does, and native to pi and back "
    "keeps the bytes",
    "[pi][convert]") {
    ScratchDir dir;
    {
        JsonlStorageOptions options;
        options.environment = Environment::deterministic(1796197403123, 5);
        options.durability = Durability::os_buffered;
        SessionHeader header;
        header.id = "moves";
        header.timestamp = "2026-12-02T07:43:23.123Z";
        header.cwd = "/work";
        auto s = JsonlSessionStorage::create(dir.file("native.jsonl"), header, options);
        auto append = [&](std::optional<std::string> parent, std::string text) {
            MessageEntry e;
            e.id = s.create_entry_id();
            e.parent_id = std::move(parent);
            e.timestamp = "2026-12-02T07:43:23.123Z";
            e.message = UserMessage{std::move(text), 1, {}};
            s.append_entry(e);
            return e.id;
        };
        const std::string a = append(std::nullopt, "a");
        append(a, "b");
        s.set_leaf_id(a);
        append(a, "c");
        s.set_leaf_id(std::nullopt);
    }
    (void)convert(dir.file("native.jsonl"), Dialect::pi, dir.file("pi.jsonl"));
    const auto pi = JsonlSessionStorage::open_read_only(dir.file("pi.jsonl"));
    const auto leaves = pi.find_entries("leaf");
    REQUIRE(leaves.size() == 2);
    for (const auto& leaf : leaves)
        CHECK(parent_id_of(*leaf) == std::get<LeafEntry>(*leaf).target_id);
    const auto native = JsonlSessionStorage::open_read_only(dir.file("native.jsonl"));
    CHECK(parent_id_of(*native.find_entries("leaf").front()) !=
          std::get<LeafEntry>(*leaves.front()).target_id);
    CHECK(pi.get_leaf_id() == native.get_leaf_id());
    (void)convert(dir.file("pi.jsonl"), Dialect::native, dir.file("native2.jsonl"));
    CHECK(read_file(dir.file("native2.jsonl")) == read_file(dir.file("native.jsonl")));

    // pi appended under a leaf entry: that entry stays where it is in both dialects.
    std::string with_child = read_file(dir.file("pi.jsonl"));
    const std::string leaf_id = id_of(*leaves.back());
    with_child +=
        R"({"type":"message","id":"pichild1","parentId":")" + leaf_id +
        R"(","timestamp":"2026-12-02T07:43:24.000Z","message":{"role":"user","content":"from pi","timestamp":2}})" +
        "\n";
    write_file(dir.file("child.jsonl"), with_child);
    (void)convert(dir.file("child.jsonl"), Dialect::native, dir.file("child-native.jsonl"));
    const auto child_native = JsonlSessionStorage::open_read_only(dir.file("child-native.jsonl"));
    CHECK(parent_id_of(*child_native.get_entry(leaf_id)) ==
          std::get<LeafEntry>(*leaves.back()).target_id);
    (void)convert(dir.file("child-native.jsonl"), Dialect::pi, dir.file("child-pi.jsonl"));
    CHECK(read_file(dir.file("child-pi.jsonl")) == with_child);
}

TEST_CASE(
    "convert upgrades old pi files, replaces its output atomically and never changes its input",
    "[pi][convert]") {
    ScratchDir dir;
    const std::string input = dir.file("v1.jsonl");
    const std::string original = read_file(pi_fixture("v1-linear.jsonl"));
    write_file(input, original);
    write_file(dir.file("out.jsonl"), "old content\n");
    const ConvertReport report =
        convert(input, Dialect::pi, dir.file("out.jsonl"), Environment::deterministic(0, 5));
    CHECK(report.migration.from_version == 1);
    CHECK(report.migration.count(PiMigrationKind::first_kept_index_mapped) == 1);
    CHECK(read_file(input) == original);
    CHECK(files_in(dir.path()) == 2);  // no temporary file left
    const auto out = JsonlSessionStorage::open_read_only(dir.file("out.jsonl"));
    CHECK(out.metadata().version == 3);
    CHECK(out.entry_count() == report.entry_count);
}

TEST_CASE("convert of a missing or broken input is an error and writes nothing", "[pi][convert]") {
    ScratchDir dir;
    CHECK(error_of([&] {
              (void)convert(dir.file("missing.jsonl"), Dialect::native, dir.file("out.jsonl"));
          }) == ErrorCode::not_found);
    // A parent that is not on an earlier line.
    const std::string header =
        R"({"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"})";
    const std::string orphan =
        R"({"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"b","timestamp":2}})";
    write_file(dir.file("orphan.jsonl"), header + "\n" + orphan + "\n");
    try {
        (void)convert(dir.file("orphan.jsonl"), Dialect::native, dir.file("out.jsonl"));
        FAIL("no error");
    } catch (const SessionError& e) {
        CHECK(e.code() == ErrorCode::invalid_entry);
        CHECK(std::string(e.what()).find("orphan.jsonl:2") != std::string::npos);
    }
    CHECK_FALSE(std::filesystem::exists(dir.file("out.jsonl")));
}

TEST_CASE("A pi file has no leaf entries: its leaf is its last entry", "[pi]") {
    const auto storage = JsonlSessionStorage::open_read_only(pi_fixture("v3-full.jsonl"));
    CHECK(storage.find_entries("leaf").empty());
    CHECK(storage.get_leaf_id() == id_of(*storage.get_entries({}).back()));
    const LoadedSession loaded = load_session_file(pi_fixture("v3-full.jsonl"));
    CHECK(loaded.dialect == Dialect::pi);
    CHECK(loaded.storage.get_leaf_id() == storage.get_leaf_id());
}

TEST_CASE("pi's fromHook and provider-specific fields decode and write back unchanged", "[pi]") {
    const auto storage = JsonlSessionStorage::open_read_only(pi_fixture("v3-full.jsonl"));
    const auto summaries = storage.find_entries("branch_summary");
    REQUIRE(summaries.size() == 1);
    CHECK(std::get<BranchSummaryEntry>(*summaries.front()).from_hook);
    const auto compactions = storage.find_entries("compaction");
    REQUIRE(compactions.size() == 1);
    CHECK_FALSE(std::get<CompactionEntry>(*compactions.front()).from_hook);

    bool saw_response_id = false, saw_signature = false;
    for (const auto& e : storage.find_entries("message")) {
        const auto* a = std::get_if<AssistantMessage>(message_of(*e));
        if (a == nullptr) continue;
        saw_response_id =
            saw_response_id || (a->extra.is_object() && a->extra.contains("responseId"));
        for (const auto& block : a->content)
            if (const auto* t = std::get_if<ThinkingContent>(&block))
                saw_signature = saw_signature || t->extra.contains("thinkingSignature");
    }
    CHECK(saw_response_id);
    CHECK(saw_signature);

    // Every line pi wrote reads and writes back byte for byte, a fromHook pi left out included.
    const auto lines = lines_of(read_file(pi_fixture("v3-full.jsonl")));
    for (std::size_t i = 1; i < lines.size(); ++i) {
        INFO("line " << i + 1);
        CHECK(encode_entry(decode_entry(lines[i], Dialect::pi), Dialect::pi) == lines[i]);
    }
}

TEST_CASE(
    "pi's newer harness shapes decode: leaf, active_tools_change, retainedTail, usage on summaries",
    "[pi]") {
    const std::vector<std::string> lines = {
        R"({"type":"session","version":3,"id":"harness","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"})",
        R"({"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"one","timestamp":1}})",
        R"({"type":"active_tools_change","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:02.000Z","activeToolNames":["read","bash"]})",
        R"({"type":"message","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"two","timestamp":3}})",
        R"({"type":"compaction","id":"aaaa0004","parentId":"aaaa0003","timestamp":"2026-01-01T00:00:04.000Z","summary":"s","tokensBefore":10,"retainedTail":[{"role":"user","content":"two","timestamp":3}],"usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.1}},"fromHook":false})",
        R"({"type":"leaf","id":"aaaa0005","parentId":"aaaa0004","timestamp":"2026-01-01T00:00:05.000Z","targetId":"aaaa0001"})",
        R"({"type":"branch_summary","id":"aaaa0006","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:06.000Z","fromId":"aaaa0001","summary":"b","usage":{"input":5,"output":6,"cacheRead":7,"cacheWrite":8,"totalTokens":26,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.26}},"fromHook":true})",
        R"({"type":"leaf","id":"aaaa0007","parentId":"aaaa0006","timestamp":"2026-01-01T00:00:07.000Z","targetId":"aaaa0004"})",
    };
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    ScratchDir dir;
    write_file(dir.file("harness.jsonl"), text);
    for (std::size_t i = 1; i < lines.size(); ++i)
        CHECK(encode_entry(decode_entry(lines[i], Dialect::pi), Dialect::pi) == lines[i]);

    const LoadedSession loaded = load_session_file(dir.file("harness.jsonl"));
    CHECK(loaded.storage.get_leaf_id() == "aaaa0004");  // the last leaf entry's target
    const auto& compaction = std::get<CompactionEntry>(*loaded.storage.get_entry("aaaa0004"));
    REQUIRE(compaction.retained_tail.has_value());
    CHECK(compaction.retained_tail->size() == 1);
    REQUIRE(compaction.usage.has_value());
    CHECK(compaction.usage->total_tokens == 10);
    CHECK(std::get<BranchSummaryEntry>(*loaded.storage.get_entry("aaaa0006")).usage->cost.total ==
          Approx(0.26));
    const auto context = build_session_context(
        loaded.storage.get_path_to_root_or_compaction(loaded.storage.get_leaf_id()));
    REQUIRE(context.messages.size() == 2);  // the summary and the retained tail
    CHECK(std::holds_alternative<CompactionSummaryMessage>(*context.messages[0]));
    const auto stats = loaded.storage.get_session_stats();
    CHECK(stats.total_tokens == 36);

    // The JSONL storage reads the same file alike, and converting it round trips.
    const auto jsonl = JsonlSessionStorage::open_read_only(dir.file("harness.jsonl"));
    CHECK(jsonl.get_leaf_id() == "aaaa0004");
    (void)convert(dir.file("harness.jsonl"), Dialect::native, dir.file("n.jsonl"));
    (void)convert(dir.file("n.jsonl"), Dialect::pi, dir.file("p.jsonl"));
    // The one change: a leaf entry that nothing hangs under comes back under its target.
    std::string under_targets = text;
    for (const char* id : {"aaaa0005", "aaaa0007"}) {
        const auto at = under_targets.find(std::string("\"id\":\"") + id + "\",\"parentId\":\"");
        REQUIRE(at != std::string::npos);
        const auto parent = at + 28;
        const auto target = under_targets.find("\"targetId\":\"", parent) + 12;
        under_targets.replace(parent, 8, under_targets.substr(target, 8));
    }
    CHECK(read_file(dir.file("p.jsonl")) == under_targets);
}

// JsonlSessionStorage: the file format, reopening, dialects, recovery (SPEC §3, §6).
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/sizes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

// A valid native file: the header and chain_entries(n, filler), `n` user messages in a chain,
// each with `filler` more bytes of text.
std::string chain_file(int n, std::size_t filler = 0) {
    std::string text = encode_header(test_header(), Dialect::native) + "\n";
    for (const auto& e : chain_entries(n, filler)) text += encode_entry(e, Dialect::native) + "\n";
    return text;
}

std::size_t count_files_with(const std::string& folder, std::string_view part) {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(folder))
        if (e.path().filename().string().find(part) != std::string::npos) ++n;
    return n;
}

}  // namespace

TEST_CASE("a new session file holds the header and every appended entry after reopening",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    std::string context_before;
    std::optional<std::string> leaf_before;
    {
        auto s = create_file_session(path);
        fill_session(s);
        context_before = context_json(build_context(s));
        leaf_before = get_leaf_id(s);
    }
    auto lines = file_lines(path);
    REQUIRE(lines.size() == 19);
    CHECK(lines[0].rfind(R"({"type":"session","version":3,"id":"test-session")", 0) == 0);
    CHECK(lines[0].find(R"("parent_session":null,"metadata":{})") != std::string::npos);
    CHECK(read_file(path).back() == '\n');

    auto r = open_file_read_only(path);
    CHECK(r.storage().metadata().id == "test-session");
    CHECK(r.storage().entry_count() == 18);
    CHECK(get_leaf_id(r) == leaf_before);
    CHECK(context_json(build_context(r)) == context_before);
}

TEST_CASE("a reopened file behaves like the in-memory storage holding the same entries",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    auto memory = memory_session(7);
    fill_session(memory);
    {
        auto file = create_file_session(path, jsonl_options(7));
        fill_session(file);
        CHECK(entries_json(file.storage().get_entries()) ==
              entries_json(memory.storage().get_entries()));
    }
    for (bool writing : {false, true}) {
        auto file = writing ? open_file_session(path) : open_file_read_only(path);
        CHECK(context_json(build_context(file)) == context_json(build_context(memory)));
        CHECK(entries_json(file.storage().get_entries()) ==
              entries_json(memory.storage().get_entries()));
        CHECK(entries_json(get_branch(file)) == entries_json(get_branch(memory)));
        CHECK(get_leaf_id(file) == get_leaf_id(memory));
        CHECK(get_session_name(file) == get_session_name(memory));
        CHECK(get_session_name(file) == "My session");
        for (const auto& e : memory.storage().get_entries())
            CHECK(get_label(file, id_of(*e)) == get_label(memory, id_of(*e)));
        const auto a = get_session_stats(file);
        const auto b = get_session_stats(memory);
        CHECK(a.message_count == b.message_count);
        CHECK(a.cached_tokens == b.cached_tokens);
        CHECK(a.uncached_tokens == b.uncached_tokens);
        CHECK(a.total_tokens == b.total_tokens);
        CHECK(a.cost_total == Approx(b.cost_total));
        CHECK(entries_json(file.storage().find_entries("label")) ==
              entries_json(memory.storage().find_entries("label")));
        CHECK(entries_json(file.storage().get_entries({3, 4})) ==
              entries_json(memory.storage().get_entries({3, 4})));
    }
}

TEST_CASE(
    "stats, the leaf, labels and the name are known right after open without decoding payloads",
    "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path);
        fill_session(s);
    }
    Faults::reset();
    auto s = open_file_read_only(path, faulty_options());
    const int at_open = Faults::get().pread_calls;  // the last lines, read rather than mapped
    const auto stats = get_session_stats(s);
    CHECK(stats.message_count == 7);
    CHECK(stats.cached_tokens == 40);
    CHECK(stats.uncached_tokens == 68);
    CHECK(stats.total_tokens == 136);
    CHECK(stats.cost_total == Approx(1.36));
    CHECK(get_leaf_id(s).has_value());
    CHECK(get_session_name(s) == "My session");
    CHECK(Faults::get().pread_calls == at_open);

    // The path walk decodes the path's entries only, and a live entry is not decoded twice.
    const auto branch = get_branch(s);
    CHECK(branch.size() == 4);  // the compaction's first kept entry, ..., the compaction, the reply
    CHECK(Faults::get().pread_calls ==
          at_open + static_cast<int>(branch.size()) - 1);  // one label is pinned
    const auto again = get_branch(s);
    CHECK(Faults::get().pread_calls == at_open + static_cast<int>(branch.size()) - 1);
    CHECK(again.front().get() == branch.front().get());
}

TEST_CASE("decoded entries stay cached within their byte budget after their handles are gone",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path);
        fill_session(s);
    }
    Faults::reset();
    auto cached = open_file_read_only(path, faulty_options());
    const auto first = get_branch(cached).size();
    const int reads = Faults::get().pread_calls;
    CHECK(reads > 0);
    CHECK(get_branch(cached).size() == first);  // no handle kept: the cache still holds them
    CHECK(Faults::get().pread_calls == reads);

    auto options = faulty_options();
    options.decoded_cache_bytes = 0;  // no cache: each rebuild decodes its path again
    Faults::reset();
    auto uncached = open_file_read_only(path, options);
    const int uncached_open = Faults::get().pread_calls;
    (void)get_branch(uncached);
    const int uncached_reads = Faults::get().pread_calls - uncached_open;
    (void)get_branch(uncached);
    CHECK(Faults::get().pread_calls == uncached_open + 2 * uncached_reads);

    options.decoded_cache_bytes = 1;  // smaller than any line: nothing is held
    Faults::reset();
    auto tiny = open_file_read_only(path, options);
    (void)get_branch(tiny);
    (void)get_branch(tiny);
    CHECK(Faults::get().pread_calls == uncached_open + 2 * uncached_reads);
}

TEST_CASE("get_entries reads a run of lines with one read and decodes them together", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("big.jsonl");
    // 600 lines of 10 KB: more than one run (JsonlSessionStorage reads up to 4 MiB at once).
    const std::string text = chain_file(600, 10000);
    write_file(path, text);
    const auto lines = file_lines(path);
    auto options = faulty_options();
    options.decoded_cache_bytes = 0;  // every get_entries reads the file again

    Faults::reset();
    auto s = open_file_read_only(path, options);
    {
        const int at_open = Faults::get().pread_calls;
        const auto all = s.storage().get_entries();
        REQUIRE(all.size() == 600);
        CHECK(Faults::get().pread_calls - at_open == 2);
        for (std::size_t i = 0; i < all.size(); ++i)
            CHECK(encode_entry(*all[i], Dialect::native) == lines[i + 1]);
    }
    {
        // A page in the middle, and single entries, are the same entries.
        const auto page = s.storage().get_entries({123, 45});
        REQUIRE(page.size() == 45);
        for (std::size_t i = 0; i < page.size(); ++i)
            CHECK(encode_entry(*page[i], Dialect::native) == lines[124 + i]);
        CHECK(encode_entry(*s.storage().get_entries({599, 5}).at(0), Dialect::native) ==
              lines.back());
    }
    // No entry is kept now (no cache, no handle left): the reads below go to the file.

    SECTION("a read that fails names the first line it could not read") {
        Faults::get().fail_pread_from = Faults::get().pread_calls + 1;
        const auto read = [&] { (void)s.storage().get_entries({9}); };
        CHECK(error_of(read) == ErrorCode::storage);
        const std::string message = message_of_error(read);
        CHECK(message.find("reading line 11 of") != std::string::npos);
        CHECK(message.find(path) != std::string::npos);
    }
    SECTION("of two lines damaged after the open, the first is reported, by its line") {
        std::string damaged = text;
        for (const std::size_t entry : {std::size_t{450}, std::size_t{150}}) {
            // The same length, so that the lines stay where the open found them: an array where
            // the object of the entry was.
            std::size_t at = 0;
            for (std::size_t k = 0; k <= entry; ++k) at = damaged.find('\n', at) + 1;
            damaged[at] = '[';
        }
        {
            const int fd = ::open(path.c_str(), O_WRONLY);
            REQUIRE(fd >= 0);
            REQUIRE(::pwrite(fd, damaged.data(), damaged.size(), 0) ==
                    static_cast<ssize_t>(damaged.size()));
            ::close(fd);
        }
        const auto read = [&] { (void)s.storage().get_entries(); };
        CHECK(error_of(read) == ErrorCode::invalid_entry);
        const std::string message = message_of_error(read);
        CHECK(message.find("line 152") != std::string::npos);
        CHECK(s.storage().get_entries({0, 150}).size() == 150);  // the lines before still read
    }
}

TEST_CASE("a file created with many entries reports the first bad entry in order and is not made",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("many.jsonl");
    // Enough entries to be encoded on several threads.
    auto entries = chain_entries(300);
    std::get<MessageEntry>(entries[200]).id = "e1000";  // a taken id
    const auto create = [&] {
        (void)JsonlSessionStorage::create(path, test_header(), jsonl_options(), entries);
    };
    SECTION("a taken id") { CHECK(error_of(create) == ErrorCode::already_exists); }
    SECTION("an entry no line can hold, before the taken id") {
        entries[100] = unwritable_entry("e1100", "e1099");
        CHECK(error_of(create) == ErrorCode::invalid_entry);
        CHECK(message_of_error(create).find("cannot be written") != std::string::npos);
    }
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK(count_files_with(dir.path(), "many") == 0);
}

TEST_CASE("a file created with more entries than a batch and more bytes than a write holds",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("big.jsonl");
    // 9,000 entries of about 600 bytes: encoded in three batches, written in two writes of
    // 4 MiB and the rest.
    auto entries = chain_entries(9000, 520);
    std::string expected = encode_header(test_header(), Dialect::native) + "\n";
    for (const auto& e : entries) expected += encode_entry(e, Dialect::native) + "\n";
    REQUIRE(expected.size() > (std::size_t{4} << 20));
    SECTION("the file is the header and the entries' lines, in order") {
        auto s = JsonlSessionStorage::create(path, test_header(), jsonl_options(), entries);
        CHECK(s.entry_count() == 9000);
        CHECK(read_file(path) == expected);
        CHECK(open_file_read_only(path).storage().entry_count() == 9000);
    }
    SECTION("a bad entry after the first write: nothing is made, nothing is left") {
        std::get<MessageEntry>(entries[8500]).id = "e1000";  // a taken id, in the third batch
        const auto create = [&] {
            (void)JsonlSessionStorage::create(path, test_header(), jsonl_options(), entries);
        };
        CHECK(error_of(create) == ErrorCode::already_exists);
        CHECK(message_of_error(create).find("e1000") != std::string::npos);
        CHECK_FALSE(std::filesystem::exists(path));
        CHECK(count_files_with(dir.path(), "big") == 0);
    }
}

TEST_CASE("appends to a pi-dialect file keep camelCase and the file opens again", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("pi.jsonl");
    write_file(
        path,
        R"({"type":"session","version":3,"id":"pi-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"})"
        "\n"
        R"({"type":"message","id":"a0000001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}})"
        "\n"
        R"({"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"stopReason":"toolUse","timestamp":2}})"
        "\n");
    {
        auto s = open_file_session(path);
        CHECK(s.storage().dialect() == Dialect::pi);
        CHECK(get_session_stats(s).cached_tokens == 3);
        CHECK(get_session_stats(s).total_tokens == 10);
        CHECK(get_leaf_id(s) == "a0000002");
        append_message(s, tool_result("c1", "read", "text"));
    }
    const auto lines = file_lines(path);
    REQUIRE(lines.size() == 4);
    CHECK(lines[3].find(R"("parentId":"a0000002")") != std::string::npos);
    CHECK(lines[3].find(R"("toolCallId":"c1")") != std::string::npos);
    CHECK(lines[3].find("parent_id") == std::string::npos);
    CHECK(lines[0].find("parent_session") == std::string::npos);
    auto r = open_file_read_only(path);
    CHECK(r.storage().entry_count() == 3);
    CHECK(describe(build_context(r)).back() == "tool_result:text");
}

TEST_CASE("a new file can be written in the pi dialect", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("pi.jsonl");
    auto options = jsonl_options();
    options.dialect = Dialect::pi;
    {
        auto s = create_file_session(path, options);
        fill_session(s);
    }
    CHECK(file_lines(path)[0].find("parent_session") == std::string::npos);
    CHECK(file_lines(path)[2].find("parentId") != std::string::npos);
    auto memory = memory_session(1);
    fill_session(memory);
    auto r = open_file_read_only(path);
    CHECK(r.storage().dialect() == Dialect::pi);
    CHECK(context_json(build_context(r)) == context_json(build_context(memory)));
}

TEST_CASE("creating over an existing file is already_exists and leaves it alone", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    write_file(path, "something");
    CHECK(error_of([&] { create_file_session(path); }) == ErrorCode::already_exists);
    CHECK(read_file(path) == "something");
    CHECK(count_files_with(dir.path(), ".tmp-") == 0);
}

TEST_CASE("a read-only open takes no lock, never changes the file and refuses appends", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    write_file(path, chain_file(3) + R"({"type":"message","id":"torn)");
    const std::string before = read_file(path);
    auto first_reader = open_file_read_only(path);
    auto reader = open_file_read_only(path);
    CHECK(reader.storage().entry_count() == 3);
    CHECK(reader.storage().had_torn_tail());
    CHECK(error_of([&] { append_message(reader, user("x")); }) == ErrorCode::storage);
    CHECK(read_file(path) == before);
    // A writer can still open while readers are open.
    auto w = open_file_session(path);
    CHECK(w.storage().entry_count() == 3);
}

TEST_CASE("a second writer in the same process gets locked at once and the first keeps working",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    auto first = create_file_session(path);
    append_message(first, user("one"));
    CHECK(error_of([&] { open_file_session(path); }) == ErrorCode::locked);
    append_message(first, user("two"));
    CHECK(open_file_read_only(path).storage().entry_count() == 2);
}

TEST_CASE("a writer that waits for the lock gets it once the holder closes", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    auto holder = std::make_unique<FileSession>(create_file_session(path));
    std::thread release([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        holder.reset();
    });
    auto options = jsonl_options();
    options.lock_wait = std::chrono::milliseconds(5000);
    const auto start = std::chrono::steady_clock::now();
    auto second = open_file_session(path, options);
    release.join();
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(90));
    append_message(second, user("mine now"));
    options.lock_wait = std::chrono::milliseconds(30);
    CHECK(error_of([&] { open_file_session(path, options); }) == ErrorCode::locked);
}

TEST_CASE(
    "a torn last line is ignored when reading and cut off into a quarantine file when writing",
    "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const std::string good = chain_file(4);
    const std::string torn =
        R"({"type":"message","id":"e9999","parent_id":"e1003","message":{"role":"us)";
    write_file(path, good + torn);
    CHECK(open_file_read_only(path).storage().entry_count() == 4);
    CHECK(read_file(path) == good + torn);
    {
        auto s = open_file_session(path);
        CHECK(s.storage().entry_count() == 4);
        REQUIRE(s.storage().quarantine_path());
        CHECK(read_file(*s.storage().quarantine_path()) == torn);
        CHECK(read_file(path) == good);
        append_message(s, user("after recovery"));
    }
    CHECK(open_file_read_only(path).storage().entry_count() == 5);
}

TEST_CASE("an unparseable last line with its newline is torn too", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    write_file(path, chain_file(2) + "{\"type\":\"mess\n");
    CHECK(open_file_read_only(path).storage().entry_count() == 2);
    auto s = open_file_session(path);
    CHECK(read_file(path) == chain_file(2));
}

TEST_CASE("a complete last line without its newline is kept and the newline added when writing",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    std::string text = chain_file(3);
    text.pop_back();
    write_file(path, text);
    CHECK(open_file_read_only(path).storage().entry_count() == 3);
    CHECK(read_file(path) == text);
    {
        auto s = open_file_session(path);
        CHECK(s.storage().entry_count() == 3);
        CHECK(read_file(path) == text + "\n");
        append_message(s, user("next"));
    }
    CHECK(file_lines(path).size() == 5);
    CHECK(open_file_read_only(path).storage().entry_count() == 4);
}

// A valid file of `n` small entries of several types (kept small: the every-byte test opens
// the file once per byte; no labels, which are decoded at open).
static std::string compact_file(int n) {
    std::string text = encode_header(test_header(), Dialect::native) + "\n";
    std::optional<std::string> parent;
    for (int i = 0; i < n; ++i) {
        const std::string id = "c" + std::to_string(100 + i);
        SessionTreeEntry e;
        if (i % 3 == 0) {
            MessageEntry m;
            m.message = user("u" + std::to_string(i));
            e = std::move(m);
        } else if (i % 3 == 1) {
            CustomEntry c;
            c.custom_type = "x";
            e = std::move(c);
        } else {
            ModelChangeEntry m;
            m.provider = "p";
            m.model_id = "m";
            e = std::move(m);
        }
        base_of(e).id = id;
        base_of(e).parent_id = parent;
        base_of(e).timestamp = "t";
        text += encode_entry(e, Dialect::native) + "\n";
        parent = id;
    }
    return text;
}

TEST_CASE("a file cut at any byte keeps every complete line before the cut", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const std::string full = compact_file(150);
    const JsonlStorageOptions options = jsonl_options();
    // Where each line's text ends (before its newline), in order.
    std::vector<std::size_t> line_ends;
    for (std::size_t i = 0; i < full.size(); ++i)
        if (full[i] == '\n') line_ends.push_back(i);
    write_file(path, full);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    // Every cut, or under a sanitizer every fourth one and each one within a byte of a line's end.
    const auto visited = [&](std::size_t cut) {
        if (cut % size_divisor == 0) return true;
        for (std::size_t end : line_ends)
            if (cut + 1 >= end && cut <= end + 1) return true;
        return false;
    };
    std::size_t failures = 0;
    for (std::size_t cut = full.size() + 1; cut-- > 0;) {
        if (!visited(cut)) continue;
        REQUIRE(::ftruncate(fd, static_cast<off_t>(cut)) == 0);
        std::size_t complete = 0;  // lines whose text is wholly before the cut
        for (std::size_t end : line_ends)
            if (end <= cut) ++complete;
        if (complete == 0) {
            if (error_of([&] { JsonlSessionStorage::open_read_only(path, options); }) !=
                ErrorCode::invalid_session)
                ++failures;
            continue;
        }
        const auto s = JsonlSessionStorage::open_read_only(path, options);
        if (s.entry_count() != complete - 1) ++failures;
    }
    ::close(fd);
    CHECK(failures == 0);

    // Writing opens on a sample of cuts: the file is left holding exactly the complete lines.
    for (std::size_t cut = 0; cut <= full.size(); cut += 331) {
        std::size_t complete = 0;
        std::size_t keep = 0;
        for (std::size_t end : line_ends)
            if (end <= cut) {
                ++complete;
                keep = end + 1;
            }
        write_file(path, full.substr(0, cut));
        if (complete == 0) {
            CHECK(error_of([&] { open_file_session(path); }) == ErrorCode::invalid_session);
            CHECK(read_file(path) == full.substr(0, cut));
            continue;
        }
        auto s = open_file_session(path);
        CHECK(s.storage().entry_count() == complete - 1);
        CHECK(read_file(path) == full.substr(0, keep));
    }
}

TEST_CASE(
    "a bad interior line fails the open with invalid_entry naming file and line, file untouched",
    "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const auto lines = file_lines([&] {
        write_file(path, chain_file(4));
        return path;
    }());
    SECTION("garbage") {
        write_file(path, lines[0] + "\n" + lines[1] + "\nnot json at all\n" + lines[2] + "\n");
    }
    SECTION("invalid UTF-8 inside a string") {
        std::string bad = lines[2];
        bad.replace(bad.find("message number"), 1, "\xC3\x28");
        write_file(path, lines[0] + "\n" + lines[1] + "\n" + bad + "\n" + lines[3] + "\n");
    }
    const std::string before = read_file(path);
    for (bool writing : {false, true}) {
        const std::string message = message_of_error(
            [&] { writing ? open_file_session(path) : open_file_read_only(path); });
        CHECK(error_of([&] { writing ? open_file_session(path) : open_file_read_only(path); }) ==
              ErrorCode::invalid_entry);
        CHECK(message.find(path) != std::string::npos);
        CHECK(message.find("line 3") != std::string::npos);
        CHECK(message.find("message number") == std::string::npos);
    }
    CHECK(read_file(path) == before);
}

TEST_CASE(
    "entries that break the tree fail the open naming the line, and a lenient open skips them",
    "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const std::string head = encode_header(test_header(), Dialect::native) + "\n";
    auto line = [](std::string id, std::optional<std::string> parent) {
        MessageEntry e;
        e.id = std::move(id);
        e.parent_id = std::move(parent);
        e.timestamp = "2026-12-02T07:43:23.123Z";
        e.message = user("text");
        return encode_entry(e, Dialect::native) + "\n";
    };
    std::string reason;
    SECTION("a duplicate id") {
        write_file(path, head + line("a", std::nullopt) + line("a", std::nullopt) + line("b", "a"));
        reason = "already appears on line 2";
    }
    SECTION("a parent that does not exist") {
        write_file(path, head + line("a", std::nullopt) + line("c", "zz") + line("b", "a"));
        reason = "which does not appear on an earlier line";
    }
    SECTION("a child before its parent") {
        write_file(path, head + line("a", std::nullopt) + line("c", "b") + line("b", "a"));
        reason = "names parent 'b'";
    }
    SECTION("a leaf entry pointing nowhere") {
        LeafEntry leaf;
        leaf.id = "l";
        leaf.parent_id = "a";
        leaf.timestamp = "2026-12-02T07:43:23.123Z";
        leaf.target_id = "nowhere";
        write_file(path, head + line("a", std::nullopt) + encode_entry(leaf, Dialect::native) +
                             "\n" + line("b", "a"));
        reason = "targets 'nowhere'";
    }
    SECTION("a line without an id") {
        write_file(path, head + line("a", std::nullopt) +
                             R"({"type":"custom","parent_id":"a","custom_type":"x"})"
                             "\n" +
                             line("b", "a"));
        reason = "field 'id': missing";
    }
    const std::string before = read_file(path);
    const std::string message = message_of_error([&] { open_file_read_only(path); });
    CHECK(error_of([&] { open_file_session(path); }) == ErrorCode::invalid_entry);
    CHECK(message.find("line 3") != std::string::npos);
    CHECK(message.find(reason) != std::string::npos);
    CHECK(read_file(path) == before);

    auto options = jsonl_options();
    options.lenient = true;
    auto s = open_file_read_only(path, options);
    CHECK(s.storage().entry_count() == 2);
    REQUIRE(s.storage().problems().size() == 1);
    CHECK(s.storage().problems()[0].line == 3);
    CHECK(s.storage().problems()[0].reason.find(reason) != std::string::npos);
    CHECK(get_leaf_id(s) == "b");
}

TEST_CASE("a lenient writing open skips bad lines and keeps appending", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    auto lines = file_lines([&] {
        write_file(path, chain_file(3));
        return path;
    }());
    write_file(path, lines[0] + "\n" + lines[1] + "\n{oops}\n" + lines[2] + "\n" + lines[3] + "\n");
    auto options = jsonl_options();
    options.lenient = true;
    auto s = open_file_session(path, options);
    CHECK(s.storage().entry_count() == 3);
    CHECK(s.storage().problems().size() == 1);
    append_message(s, user("more"));
    CHECK(s.storage().entry_count() == 4);
}

TEST_CASE("repair writes a clean copy, keeps the original and quarantines the dropped bytes",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    auto lines = file_lines([&] {
        write_file(path, chain_file(3));
        return path;
    }());
    const std::string damaged = lines[0] + "\r\n" + lines[1] + "\n{oops}\n" + lines[2] + "\n" +
                                lines[3] + "\n{\"type\":\"mes";
    write_file(path, damaged);
    CHECK(error_of([&] { open_file_read_only(path); }) == ErrorCode::invalid_entry);

    const auto report = JsonlSessionStorage::repair(path, jsonl_options());
    CHECK(report.changed);
    CHECK(report.entries_kept == 3);
    REQUIRE(report.problems.size() == 2);
    CHECK(report.problems[0].line == 3);
    REQUIRE(report.backup_path);
    CHECK(read_file(*report.backup_path) == damaged);
    REQUIRE(report.quarantine_path);
    CHECK(read_file(*report.quarantine_path) == "{oops}\n{\"type\":\"mes");
    CHECK(read_file(path) == lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n" + lines[3] + "\n");
    CHECK(open_file_read_only(path).storage().entry_count() == 3);
    CHECK(count_files_with(dir.path(), ".tmp-") == 0);

    const auto again = JsonlSessionStorage::repair(path, jsonl_options());
    CHECK_FALSE(again.changed);
    CHECK_FALSE(again.backup_path);
}

TEST_CASE(
    "empty files, missing or invalid headers and future versions are invalid_session, file "
    "untouched",
    "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const std::string entry_line = file_lines([&] {
        write_file(path, chain_file(1));
        return path;
    }())[1];
    for (const std::string& text :
         {std::string(), std::string("\n"), entry_line + "\n",
          std::string("{\"type\":\"session\",\"id\":3}\n"),
          std::string("{\"type\":\"session\",\"version\":4,\"id\":\"x\"}\n") + entry_line + "\n",
          std::string("not json\n") + entry_line + "\n"}) {
        write_file(path, text);
        CHECK(error_of([&] { open_file_read_only(path); }) == ErrorCode::invalid_session);
        CHECK(error_of([&] { open_file_session(path); }) == ErrorCode::invalid_session);
        CHECK(read_file(path) == text);
    }
    CHECK(error_of([&] { open_file_session(dir.file("missing.jsonl")); }) == ErrorCode::not_found);
}

TEST_CASE("CRLF line endings and a BOM on the first line are accepted", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    auto lines = file_lines([&] {
        write_file(path, chain_file(3));
        return path;
    }());
    write_file(path, "\xEF\xBB\xBF" + lines[0] + "\r\n" + lines[1] + "\r\n" + lines[2] + "\r\n" +
                         lines[3] + "\r\n");
    auto r = open_file_read_only(path);
    CHECK(r.storage().entry_count() == 3);
    CHECK(describe(build_context(r)).back() == "user:message number 2");
    auto w = open_file_session(path);
    append_message(w, user("appended"));
    CHECK(open_file_read_only(path).storage().entry_count() == 4);
}

TEST_CASE("a 50 MB line is written, opened and read back", "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const std::string big(50u << 20, 'x');
    std::string id;
    {
        auto s = create_file_session(path);
        append_message(s, user("small"));
        id = append_message(s, user(big));
        append_message(s, user("after"));
    }
    auto r = open_file_read_only(path);
    CHECK(r.storage().entry_count() == 3);
    auto e = get_entry(r, id);
    REQUIRE(e);
    CHECK(text_of(std::get<MessageEntry>(*e).message).size() == big.size());
}

TEST_CASE("an ill-typed field is reported when the file is opened, naming file and line",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    write_file(
        path,
        encode_header(test_header(), Dialect::native) + "\n" +
            R"({"type":"model_change","id":"m1","parent_id":null,"timestamp":"t","provider":5,"model_id":"x"})"
            "\n" +
            R"({"type":"model_change","id":"m2","parent_id":null,"timestamp":"t","provider":"p","model_id":"x"})"
            "\n");
    const std::string message = message_of_error([&] { open_file_read_only(path); });
    CHECK(error_of([&] { open_file_read_only(path); }) == ErrorCode::invalid_entry);
    CHECK(message.find(path + "' line 2") != std::string::npos);
    CHECK(message.find("provider") != std::string::npos);
    JsonlStorageOptions lenient = jsonl_options();
    lenient.lenient = true;
    auto r = open_file_read_only(path, lenient);
    CHECK(r.storage().entry_count() == 1);
    CHECK(get_entry(r, "m2") != nullptr);
}

TEST_CASE("an entry of an unknown type is a node of the tree and is written back unchanged",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const std::string future =
        R"({"type":"hologram","id":"h1","parent_id":"e1000","timestamp":"t","beam":[1,2]})";
    write_file(path, chain_file(1) + future + "\n");
    auto s = open_file_session(path);
    CHECK(get_leaf_id(s) == "h1");
    append_message(s, user("next"));
    CHECK(file_lines(path)[2] == future);
    CHECK(parent_id_of(*get_entry(s, *get_leaf_id(s))) == "h1");
}

TEST_CASE("session files are created with mode 0600 and their descriptors are close-on-exec",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    auto s = create_file_session(path);
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    CHECK((::fcntl(s.storage().native_handle(), F_GETFD) & FD_CLOEXEC) != 0);
    auto r = open_file_read_only(path);
    CHECK((::fcntl(r.storage().native_handle(), F_GETFD) & FD_CLOEXEC) != 0);
}

TEST_CASE("a symbolic link in place of a session file is refused", "[jsonl]") {
    ScratchDir dir;
    const auto target = dir.file("real.jsonl");
    write_file(target, chain_file(1));
    const auto link = dir.file("link.jsonl");
    REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
    CHECK(error_of([&] { open_file_read_only(link); }) == ErrorCode::storage);
    CHECK(error_of([&] { open_file_session(link); }) == ErrorCode::storage);
    CHECK(error_of([&] { create_file_session(link); }) == ErrorCode::already_exists);
    CHECK(read_file(target) == chain_file(1));
}

TEST_CASE("appending an entry whose id is taken or whose parent is missing writes nothing",
          "[jsonl]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    auto s = create_file_session(path);
    const auto id = append_message(s, user("one"));
    const std::string before = read_file(path);
    MessageEntry dup;
    dup.id = id;
    dup.timestamp = "t";
    dup.message = user("dup");
    CHECK(error_of([&] { append_entry(s, dup); }) == ErrorCode::already_exists);
    MessageEntry orphan;
    orphan.id = "orphan01";
    orphan.parent_id = "nope";
    orphan.timestamp = "t";
    orphan.message = user("x");
    CHECK(error_of([&] { append_entry(s, orphan); }) == ErrorCode::invalid_entry);
    CHECK(error_of([&] { set_leaf_id(s, std::string("nope")); }) == ErrorCode::not_found);
    CHECK(read_file(path) == before);
    set_leaf_id(s, std::nullopt);
    CHECK_FALSE(get_leaf_id(s));
    CHECK_FALSE(get_leaf_id(open_file_read_only(path)));
}

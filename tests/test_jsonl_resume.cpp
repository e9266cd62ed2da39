// The JSONL storage's resume index (JsonlStorageOptions::resume_index): an unchanged file opens
// from the index, a grown file from the index and its new lines, anything else from its lines.
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"

#include <agentcore/jsonl/jsonl_repo.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

JsonlStorageOptions resuming(std::uint64_t seed = 1) {
    JsonlStorageOptions o = jsonl_options(seed);
    o.resume_index = true;
    return o;
}

// What an open knows of a session, through the public API only.
struct Seen {
    std::string entries, context, leaf, name, labels;
    std::size_t messages = 0;
    std::int64_t tokens = 0;
    double cost = 0;

    bool operator==(const Seen&) const = default;
};

template <class S>
Seen seen(const Session<S>& s) {
    Seen out;
    const auto& storage = s.storage();
    const auto all = storage.get_entries(EntriesQuery{});
    out.entries = entries_json(all);
    out.context = context_json(build_context(s));
    out.leaf = get_leaf_id(s).value_or("(none)");
    out.name = storage.get_session_name().value_or("(none)");
    for (const auto& e : all)
        if (auto label = storage.get_label(id_of(*e))) out.labels += id_of(*e) + "=" + *label + ";";
    const auto stats = storage.get_session_stats();
    out.messages = stats.message_count;
    out.tokens = stats.total_tokens;
    out.cost = stats.cost_total;
    return out;
}

// The state a context is built from, at every entry (SPEC §4.5).
template <class S>
std::string state_everywhere(const Session<S>& s) {
    std::string out;
    for (const auto& e : s.storage().get_entries(EntriesQuery{})) {
        const StateEntries st = s.storage().get_state_entries(id_of(*e));
        for (const EntryHandle& h : {st.thinking_level, st.model, st.active_tools})
            out += (h ? id_of(*h) : std::string("-")) + ",";
        out += ";";
    }
    return out;
}

std::string index_of(const std::string& path) {
    return JsonlSessionStorage::resume_index_path(path);
}

}  // namespace

TEST_CASE("an unchanged file opens from its resume index and reads the same", "[jsonl][resume]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path, resuming());
        fill_session(s);
    }
    const auto plain = open_file_read_only(path);
    CHECK(plain.storage().resumed_lines() == 0);
    CHECK_FALSE(std::filesystem::exists(index_of(path)));  // only an open writes the index

    std::size_t lines = 0;
    {
        const auto first = open_file_session(path, resuming());
        CHECK(first.storage().resumed_lines() == 0);  // nothing to resume from yet
        lines = file_lines(path).size();
    }
    REQUIRE(std::filesystem::exists(index_of(path)));
    struct stat st {};
    REQUIRE(::stat(index_of(path).c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);

    auto again = open_file_session(path, resuming());
    CHECK(again.storage().resumed_lines() == lines);
    CHECK(seen(again) == seen(plain));
    CHECK(state_everywhere(again) == state_everywhere(plain));
    CHECK(again.storage().entry_count() == plain.storage().entry_count());
    // Entries the index covers decode from their lines when read, as any other.
    for (const auto& e : plain.storage().get_entries(EntriesQuery{}))
        CHECK(entry_to_json(*again.storage().get_entry(id_of(*e)), Dialect::native) ==
              entry_to_json(*e, Dialect::native));

    // Appending after a resumed open continues the same file.
    const auto id = append_message(again, user("after resuming"));
    CHECK(get_leaf_id(again) == id);
    const auto reread = open_file_read_only(path);
    CHECK(seen(reread) == seen(again));
}

TEST_CASE("a file that grew is resumed from its index and its new lines are read",
          "[jsonl][resume]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path, resuming());
        fill_session(s);
    }
    (void)open_file_session(path, resuming());  // writes the index
    const std::size_t indexed = file_lines(path).size();
    {
        // Another writer (pi, or agentcore without the index) appends.
        auto other = open_file_session(path, jsonl_options(2));
        append_message(other, user("appended elsewhere"));
        append_label(other, *get_leaf_id(other), std::string("late label"));
        append_session_name(other, "renamed");
    }
    const auto plain = open_file_read_only(path);
    {
        auto s = open_file_session(path, resuming());
        CHECK(s.storage().resumed_lines() == indexed);
        CHECK(seen(s) == seen(plain));
        CHECK(state_everywhere(s) == state_everywhere(plain));
    }
    // That open extended the index: the next one resumes every line.
    const auto s = open_file_session(path, resuming());
    CHECK(s.storage().resumed_lines() == file_lines(path).size());
    CHECK(seen(s) == seen(plain));
}

TEST_CASE("a resumed open still refuses a damaged line after the index", "[jsonl][resume]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path, resuming());
        fill_session(s);
    }
    (void)open_file_session(path, resuming());
    const std::size_t indexed = file_lines(path).size();
    MessageEntry later;
    later.id = "yy";
    later.timestamp = "2026-12-02T07:43:23.123Z";
    later.message = user("later");
    write_file(path, read_file(path) + "{\"type\":\"message\",\"id\":\"zz\"}\n" +
                         encode_entry(later, Dialect::native) + "\n");
    try {
        (void)open_file_session(path, resuming());
        FAIL("a damaged line was accepted");
    } catch (const SessionError& e) {
        CHECK(e.code() == ErrorCode::invalid_entry);
        CHECK(e.line() == indexed + 1);
        CHECK(e.file() == path);
    }
}

TEST_CASE("an index that does not match its file is not used, and is rebuilt", "[jsonl][resume]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path, resuming());
        fill_session(s);
    }
    (void)open_file_session(path, resuming());
    const std::string index_bytes = read_file(index_of(path));
    const std::string file_bytes = read_file(path);
    const auto plain_seen = [&] { return seen(open_file_read_only(path)); };

    SECTION("a byte of the file changed in the part the index covers") {
        std::string changed = file_bytes;
        const auto at = changed.rfind("after compaction");
        REQUIRE(at != std::string::npos);
        changed[at] = 'A';
        write_file(path, changed);
    }
    SECTION("the file was cut and written again to another size") {
        write_file(path, file_bytes.substr(0, file_bytes.find('\n') + 1));
    }
    SECTION("the index is cut short") {
        write_file(index_of(path), index_bytes.substr(0, index_bytes.size() / 2));
    }
    SECTION("a byte of the index changed") {
        std::string changed = index_bytes;
        changed[changed.size() / 2] = static_cast<char>(changed[changed.size() / 2] ^ 0x40);
        write_file(index_of(path), changed);
    }
    SECTION("the index is empty") { write_file(index_of(path), ""); }
    SECTION("the index is a folder") {
        std::filesystem::remove(index_of(path));
        std::filesystem::create_directory(index_of(path));
    }
    const Seen expected = plain_seen();
    {
        const auto s = open_file_session(path, resuming());
        CHECK(s.storage().resumed_lines() == 0);
        CHECK(seen(s) == expected);
    }
    if (std::filesystem::is_regular_file(index_of(path))) {
        // The open wrote a matching index again: the next open resumes.
        const auto s = open_file_session(path, resuming());
        CHECK(s.storage().resumed_lines() == file_lines(path).size());
        CHECK(seen(s) == expected);
    }
}

TEST_CASE("a torn last line after the index is cut as always, and the index covers the rest",
          "[jsonl][resume]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path, resuming());
        fill_session(s);
    }
    (void)open_file_session(path, resuming());
    const std::string clean = read_file(path);
    write_file(path, clean + "{\"type\":\"message\",\"id\":\"torn");
    {
        const auto s = open_file_session(path, resuming());
        CHECK(s.storage().had_torn_tail());
        CHECK(s.storage().resumed_lines() == file_lines(path).size());
    }
    CHECK(read_file(path) == clean);
    const auto s = open_file_session(path, resuming());
    CHECK(s.storage().resumed_lines() == file_lines(path).size());
}

TEST_CASE("read-only and lenient opens do not write a resume index", "[jsonl][resume]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    {
        auto s = create_file_session(path, resuming());
        fill_session(s);
    }
    (void)open_file_read_only(path, resuming());
    JsonlStorageOptions lenient = resuming();
    lenient.lenient = true;
    (void)open_file_session(path, lenient);
    CHECK_FALSE(std::filesystem::exists(index_of(path)));
    (void)open_file_session(path, resuming());
    REQUIRE(std::filesystem::exists(index_of(path)));
    // A read-only open uses it; a lenient one reads the lines.
    CHECK(open_file_read_only(path, resuming()).storage().resumed_lines() > 0);
    CHECK(open_file_session(path, lenient).storage().resumed_lines() == 0);
}

TEST_CASE("a pi file resumes in its own dialect", "[jsonl][resume][pi]") {
    ScratchDir dir;
    const auto path = dir.file("pi.jsonl");
    JsonlStorageOptions o = resuming();
    o.dialect = Dialect::pi;
    {
        auto s = create_file_session(path, o);
        fill_session(s);
        move_to(s, std::nullopt);
    }
    (void)open_file_session(path, o);
    const auto plain = open_file_read_only(path);
    const auto s = open_file_session(path, o);
    CHECK(s.storage().dialect() == Dialect::pi);
    CHECK(s.storage().resumed_lines() == file_lines(path).size());
    CHECK(seen(s) == seen(plain));
    CHECK(state_everywhere(s) == state_everywhere(plain));
}

TEST_CASE("removing a session removes its resume index", "[jsonl][resume][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("repo"), resuming());
    std::string path;
    {
        auto s = create(repo, CreateOptions{.id = "one", .cwd = "/work"});
        append_message(s, user("hello"));
        path = s.storage().path();
    }
    (void)open(repo, "one");
    REQUIRE(std::filesystem::exists(index_of(path)));
    CHECK(list(repo).sessions.size() == 1);  // the index is not a session
    remove(repo, "one");
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK_FALSE(std::filesystem::exists(index_of(path)));
}

TEST_CASE("the id table finds every id, refuses one it holds, and takes the newest away",
          "[tree_index]") {
    // Against a plain map, through growth and through backward-shift deletions in runs of
    // colliding probes (many ids in a small table).
    agentcore::detail::IdTable<> table;
    std::vector<std::string> model;
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;
    auto next = [&x] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    auto check_all = [&] {
        REQUIRE(table.size() == model.size());
        for (std::size_t pos = 0; pos < model.size(); ++pos) {
            const auto found = table.find(model[pos]);
            REQUIRE(found);
            REQUIRE(*found == pos);
            REQUIRE(table.id_at(pos) == model[pos]);
        }
    };
    for (int step = 0; step < 20000; ++step) {
        const std::uint64_t r = next();
        if (r % 7 == 0 && !model.empty()) {
            table.pop_back();
            model.pop_back();
        } else if (r % 11 == 0 && !model.empty()) {
            const std::string& taken = model[next() % model.size()];
            REQUIRE_FALSE(table.push_back(taken));
        } else {
            const std::string id = std::to_string(next() % 5000);
            const bool fresh = std::find(model.begin(), model.end(), id) == model.end();
            REQUIRE(table.push_back(id) == fresh);
            if (fresh) model.push_back(id);
        }
        if (step % 997 == 0) check_all();
        CHECK_FALSE(table.find("absent-" + std::to_string(step)));
    }
    check_all();
    while (!model.empty()) {
        table.pop_back();
        model.pop_back();
        if (model.size() % 101 == 0) check_all();
    }
    CHECK_FALSE(table.find("0"));
}

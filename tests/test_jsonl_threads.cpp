// An open scans a file's lines on several threads (JsonlStorageOptions::open_threads) and records
// them in file order: whatever the number of threads, it must index the same entries and fail,
// skip or repair exactly the lines one thread does, with the same messages. Tagged [race] too:
// the ThreadSanitizer build runs these.
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/sizes.hpp"

#include <agentcore/session.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

// The thread counts every outcome is compared over: the opening thread alone, two, and more
// threads than this machine may have (the scan is shared by whoever is started).
constexpr std::size_t thread_counts[] = {1, 2, 5};

// The sessions' sizes: 6000 entries make about 1.9 MB, read in four batches; under a sanitizer
// a quarter of that still makes two batches (the first is 256 KiB), both scanned by several
// threads, the second while the first is recorded. The fault loop opens its file 231 times (77
// under a sanitizer), so it runs on half as many entries (three batches; two under a sanitizer).
constexpr std::size_t threads_entries = sized(6000);
constexpr std::size_t threads_fault_entries = sanitized_build ? 1500 : 3000;

std::string threads_entry_id(std::size_t i) {
    char id[16];
    std::snprintf(id, sizeof id, "e%07zx", i);
    return id;
}

// The lines (header first, each without its newline) of a session of `n` entries, about 1.9 MB
// at n = 6000, so that an open reads it in several batches of which most are scanned by several
// threads: branches, labels, names, leaf moves, assistant messages with usage, texts with
// escapes and non-ASCII letters.
std::vector<std::string> threads_session_lines(Dialect dialect, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::string> lines{encode_header(test_header("threads"), dialect)};
    std::vector<std::string> ids;
    const std::string ts = "2026-12-02T07:43:23.123Z";
    for (std::size_t i = 0; i < n; ++i) {
        const std::string id = threads_entry_id(i);
        std::optional<std::string> parent;
        if (!ids.empty()) parent = rng() % 10 == 0 ? ids[rng() % ids.size()] : ids.back();
        const unsigned kind = ids.empty() ? 10 : static_cast<unsigned>(rng() % 20);
        SessionTreeEntry entry;
        if (kind == 0) {
            LabelEntry e;
            e.target_id = ids[rng() % ids.size()];
            e.label = "label " + std::to_string(i);
            entry = e;
        } else if (kind == 1) {
            SessionInfoEntry e;
            e.name = "name \"" + std::to_string(i) + "\"";
            entry = e;
        } else if (kind == 2) {
            LeafEntry e;
            e.target_id = ids[rng() % ids.size()];
            if (dialect == Dialect::pi) parent = e.target_id;
            entry = e;
        } else if (kind < 7) {
            MessageEntry e;
            e.message = assistant("answer " + std::to_string(i), "anthropic", "claude",
                                  usage(static_cast<std::int64_t>(i), 20, 30, 40, 0.5));
            entry = e;
        } else {
            std::string text = "question " + std::to_string(i) + ": \"quoted\"\n\tC:\\path é ";
            text += std::string(50 + rng() % 500, static_cast<char>('a' + i % 26));
            MessageEntry e;
            e.message = user(text);
            entry = e;
        }
        std::visit(
            [&](auto& e) {
                e.id = id;
                e.parent_id = parent;
                e.timestamp = ts;
            },
            entry);
        lines.push_back(encode_entry(entry, dialect));
        ids.push_back(id);
    }
    return lines;
}

// An assistant message under `parent` whose usage has a text where a number belongs.
std::string threads_bad_usage(const std::string& parent) {
    MessageEntry e;
    e.id = "bad-usage";
    e.parent_id = parent;
    e.timestamp = "2026-12-02T07:43:23.123Z";
    e.message = assistant("a", "anthropic", "claude", usage(1, 2, 3, 4, 0));
    std::string out = encode_entry(e, Dialect::native);
    out.replace(out.find("\"input\":1"), 9, "\"input\":\"one\"");
    return out;
}

std::string threads_join(const std::vector<std::string>& lines, bool last_terminated = true) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    if (!last_terminated) out.pop_back();
    return out;
}

// Everything an open learnt, or the error it threw.
std::string threads_outcome(const std::string& path, std::size_t threads, bool lenient) {
    JsonlStorageOptions o = jsonl_options();
    o.open_threads = threads;
    o.lenient = lenient;
    try {
        auto s = open_file_read_only(path, o);
        const SessionStats stats = get_session_stats(s);
        std::string out = "entries " + std::to_string(s.storage().entry_count()) + "; leaf " +
                          get_leaf_id(s).value_or("-") + "; name " +
                          get_session_name(s).value_or("-") + "; messages " +
                          std::to_string(stats.message_count) + "; tokens " +
                          std::to_string(stats.total_tokens) + "; torn " +
                          (s.storage().had_torn_tail() ? "yes" : "no") + "\n";
        for (const auto& p : s.storage().problems())
            out += "problem " + std::to_string(p.line) + ": " + p.reason + "\n";
        out += entries_json(s.storage().get_entries({})) + "\n";
        out += context_json(build_context(s));
        return out;
    } catch (const SessionError& e) {
        return "error " + std::string(to_string(e.code())) + ": " + e.what();
    }
}

// The same for every thread count; returns it.
std::string threads_same_outcome(const std::string& path, bool lenient) {
    const std::string one = threads_outcome(path, 1, lenient);
    for (const std::size_t t : thread_counts) {
        INFO("threads: " << t << ", lenient: " << lenient);
        CHECK(threads_outcome(path, t, lenient) == one);
    }
    return one;
}

}  // namespace

TEST_CASE("an open on several threads indexes a session as one thread does",
          "[jsonl][open][threads][race]") {
    const Dialect dialect = GENERATE(Dialect::native, Dialect::pi);
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const auto lines = threads_session_lines(dialect, threads_entries, 7);
    write_file(path, threads_join(lines));
    REQUIRE(std::filesystem::file_size(path) > (std::size_t{400} << 10));
    const std::string one = threads_same_outcome(path, false);
    CHECK(one.rfind("entries " + std::to_string(threads_entries) + ";", 0) == 0);
    threads_same_outcome(path, true);

    // A writing open (which saves a resume index, then resumes from it) agrees as well.
    for (const std::size_t t : thread_counts) {
        JsonlStorageOptions o = jsonl_options();
        o.open_threads = t;
        o.resume_index = true;
        auto s = open_file_session(path, o);
        CHECK(entries_json(s.storage().get_entries({})) ==
              entries_json(open_file_read_only(path).storage().get_entries({})));
    }
}

TEST_CASE("an open on several threads fails, skips and repairs the lines one thread does",
          "[jsonl][open][threads][race]") {
    ScratchDir dir;
    const std::size_t n = threads_fault_entries;
    const auto lines = threads_session_lines(Dialect::native, n, 11);
    REQUIRE(threads_join(lines).size() > (std::size_t{400} << 10));
    // Lines to spoil: in the first batch, in the middle, near the end (1-based line numbers;
    // line 1 is the header).
    const std::size_t position = GENERATE(range(std::size_t{0}, std::size_t{3}));
    const std::size_t where = std::array<std::size_t, 3>{6, n / 2 + 1, n - 10}[position];
    // Each fault, and how to make it from the line that is there.
    struct Fault {
        const char* name;
        std::string (*make)(const std::string& line, const std::vector<std::string>& lines);
    };
    const Fault faults[] = {
        {"not JSON", [](const std::string& l, const auto&) { return l.substr(0, l.size() / 2); }},
        {"a parent that does not exist",
         [](const std::string&, const auto&) {
             MessageEntry e;
             e.id = "orphan";
             e.parent_id = std::string("nowhere");
             e.timestamp = "2026-12-02T07:43:23.123Z";
             e.message = user("lost");
             return encode_entry(e, Dialect::native);
         }},
        {"a duplicate id",
         [](const std::string& l, const auto&) {
             std::string out = l;
             const auto at = out.find("\"id\":\"");
             out.replace(at + 6, 8, threads_entry_id(0));
             return out;
         }},
        {"a usage that is not numbers, under a parent that does not exist",
         [](const std::string&, const auto&) { return threads_bad_usage("nowhere"); }},
        {"a usage that is not numbers",
         [](const std::string&, const auto&) { return threads_bad_usage(threads_entry_id(0)); }},
        {"a label that is not text, with a duplicate id",
         [](const std::string&, const auto&) {
             LabelEntry e;
             e.id = threads_entry_id(0);
             e.parent_id = threads_entry_id(0);
             e.timestamp = "2026-12-02T07:43:23.123Z";
             e.target_id = threads_entry_id(0);
             e.label = "x";
             std::string out = encode_entry(e, Dialect::native);
             out.replace(out.find("\"label\":\"x\""), 11, "\"label\":5");
             return out;
         }},
        {"a leaf move to an entry that does not exist",
         [](const std::string&, const auto&) {
             LeafEntry e;
             e.id = "leaf-nowhere";
             e.parent_id = threads_entry_id(0);
             e.timestamp = "2026-12-02T07:43:23.123Z";
             e.target_id = std::string("nowhere");
             return encode_entry(e, Dialect::native);
         }},
    };
    for (std::size_t f = 0; f < std::size(faults); ++f) {
        // Every fault at every place; under a sanitizer each fault at one of the three places
        // (each place still sees two or three kinds of fault).
        if (sanitized_build && f % 3 != position) continue;
        const Fault& fault = faults[f];
        INFO("fault: " << fault.name << ", line " << where);
        auto spoiled = lines;
        spoiled[where - 1] = fault.make(spoiled[where - 1], spoiled);
        const auto path = dir.file("s.jsonl");
        write_file(path, threads_join(spoiled));
        const std::string strict = threads_same_outcome(path, false);
        CHECK(strict.rfind("error invalid_entry: ", 0) == 0);
        CHECK(strict.find("line " + std::to_string(where)) != std::string::npos);
        const std::string lenient = threads_same_outcome(path, true);
        CHECK(lenient.find("problem " + std::to_string(where) + ": ") != std::string::npos);

        // A repair writes the same file and reports the same lines (the spoiled one first; the
        // entries under it go with it).
        std::string repaired;
        std::string problems;
        for (const std::size_t t : thread_counts) {
            const auto copy = dir.file("r" + std::to_string(t) + ".jsonl");
            write_file(copy, threads_join(spoiled));
            JsonlStorageOptions o = jsonl_options();
            o.open_threads = t;
            const RepairReport report = JsonlSessionStorage::repair(copy, o);
            REQUIRE(!report.problems.empty());
            CHECK(report.problems[0].line == where);
            std::string listed = std::to_string(report.entries_kept) + "\n";
            for (const auto& p : report.problems)
                listed += std::to_string(p.line) + ": " + p.reason + "\n";
            if (t == 1) {
                repaired = read_file(copy);
                problems = listed;
            }
            CHECK(read_file(copy) == repaired);
            CHECK(listed == problems);
        }
    }
}

TEST_CASE("an open on several threads treats a torn last line as one thread does",
          "[jsonl][open][threads][race]") {
    ScratchDir dir;
    auto lines = threads_session_lines(Dialect::native, threads_entries, 13);
    lines.back() = lines.back().substr(0, lines.back().size() / 2);
    const auto path = dir.file("s.jsonl");
    write_file(path, threads_join(lines, false));
    const std::string read = threads_same_outcome(path, false);
    CHECK(read.find("torn yes") != std::string::npos);
    CHECK(read.rfind("entries " + std::to_string(threads_entries - 1) + ";", 0) == 0);

    // A writing open cuts it away, with any number of threads.
    const std::string torn_file = threads_join(lines, false);
    lines.pop_back();
    const std::string cut_file = threads_join(lines);
    for (const std::size_t t : thread_counts) {
        const auto copy = dir.file("w" + std::to_string(t) + ".jsonl");
        write_file(copy, torn_file);
        JsonlStorageOptions o = jsonl_options();
        o.open_threads = t;
        auto s = open_file_session(copy, o);
        CHECK(s.storage().had_torn_tail());
        CHECK(s.storage().entry_count() == threads_entries - 1);
        CHECK(read_file(copy) == cut_file);
    }
}

// Damaged files (SPEC §6): bytes flipped, inserted, NUL-filled at every line boundary, files cut
// at every byte. Every complete line before the damage is recovered by a lenient open, every
// damaged line is reported, and nothing crashes or hangs.
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"
#include "support/sizes.hpp"

#include <agentcore/pi_migrate.hpp>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

// A native file of `n` entries forming a binary tree: entry k's parent is entry (k-1)/2, so
// damage to a line orphans exactly its subtree.
std::string tree_file(int n, std::vector<std::string>& ids, std::vector<int>& parents) {
    std::string text = encode_header(test_header(), Dialect::native) + "\n";
    for (int k = 0; k < n; ++k) {
        MessageEntry e;
        e.id = "n" + std::to_string(10000 + k);
        if (k > 0) e.parent_id = ids[static_cast<std::size_t>((k - 1) / 2)];
        e.timestamp = "2026-12-02T07:43:23.123Z";
        e.message = k % 3 == 1
                        ? assistant("answer " + std::to_string(k), "p", "m", usage(1, 2, 3, 4, 0.5))
                        : user("question number " + std::to_string(k));
        ids.push_back(e.id);
        parents.push_back(k > 0 ? (k - 1) / 2 : -1);
        text += encode_entry(e, Dialect::native) + "\n";
    }
    return text;
}

struct Damage {
    const char* name;
    std::string text;
    std::set<int> damaged;  ///< entry indexes whose lines are damaged
    bool to_end = false;    ///< everything from the damage on is one torn tail
};

std::size_t non_blank_lines(const std::string& text) {
    std::size_t n = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        if (nl > pos) ++n;
        pos = nl + 1;
    }
    return n;
}

}  // namespace

TEST_CASE(
    "damage at any line boundary loses only the damaged lines and their subtrees, each reported",
    "[reliability][damage]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    std::vector<std::string> ids;
    std::vector<int> parents;
    const int n = 200;
    const std::string full = tree_file(n, ids, parents);
    std::vector<std::size_t> starts;  // where each entry's line starts
    for (std::size_t i = 0, line = 0; i < full.size(); ++i)
        if (full[i] == '\n' && ++line >= 1 && i + 1 < full.size()) starts.push_back(i + 1);
    REQUIRE(starts.size() == static_cast<std::size_t>(n));

    // Every line boundary; under a sanitizer every fourth, and the last line (sizes.hpp).
    std::vector<int> lines_damaged;
    for (int k = 0; k < n; k += static_cast<int>(size_divisor)) lines_damaged.push_back(k);
    if (lines_damaged.back() != n - 1) lines_damaged.push_back(n - 1);
    std::size_t cases = 0;
    std::vector<std::string> failures;
    for (const int k : lines_damaged) {
        const std::size_t at = starts[static_cast<std::size_t>(k)];
        const std::size_t end = full.find('\n', at);  // this line's newline
        std::vector<Damage> damages;
        damages.push_back(
            {"newline replaced", full.substr(0, end) + "x" + full.substr(end + 1), {k, k + 1}});
        damages.push_back(
            {"NUL inserted", full.substr(0, at) + std::string(1, '\0') + full.substr(at), {k}});
        damages.push_back({"line NUL-filled",
                           full.substr(0, at) + std::string(end - at, '\0') + full.substr(end),
                           {k}});
        std::string flipped = full;
        flipped[at] = static_cast<char>(flipped[at] ^ 0x80);
        damages.push_back({"first byte flipped", flipped, {k}});
        std::string flipped_end = full;
        flipped_end[end - 1] = static_cast<char>(flipped_end[end - 1] ^ 0x01);
        damages.push_back({"last byte flipped", flipped_end, {k}});
        damages.push_back(
            {"newline inserted", full.substr(0, at + 10) + "\n" + full.substr(at + 10), {k}});
        damages.push_back({"zeros to the end",
                           full.substr(0, at) + std::string(full.size() - at, '\0'),
                           {},
                           true});
        for (const Damage& d : damages) {
            ++cases;
            write_file(path, d.text);
            // The expected survivors: undamaged entries whose parent survived.
            std::vector<std::string> expected;
            std::vector<bool> alive(static_cast<std::size_t>(n), false);
            for (int j = 0; j < n; ++j) {
                if (d.to_end && j >= k) break;
                if (d.damaged.count(j) != 0) continue;
                const int p = parents[static_cast<std::size_t>(j)];
                if (p >= 0 && !alive[static_cast<std::size_t>(p)]) continue;
                alive[static_cast<std::size_t>(j)] = true;
                expected.push_back(ids[static_cast<std::size_t>(j)]);
            }
            const std::string what = std::string(d.name) + " at entry " + std::to_string(k);
            try {
                auto options = jsonl_options();
                options.lenient = true;
                const auto s = JsonlSessionStorage::open_read_only(path, options);
                std::vector<std::string> got;
                for (const auto& e : s.get_entries()) got.push_back(id_of(*e));
                if (got != expected)
                    failures.push_back(what + ": the wrong entries were recovered");
                const std::size_t lines = non_blank_lines(d.text) - 1;
                if (got.size() + s.problems().size() + (s.had_torn_tail() ? 1U : 0U) != lines)
                    failures.push_back(what + ": a damaged line was not reported");
                // A strict open names the first bad line, or (damage in the last line only) reads
                // on.
                try {
                    const auto strict = JsonlSessionStorage::open_read_only(path, jsonl_options());
                    if (!s.problems().empty())
                        failures.push_back(what + ": a strict open accepted a bad line");
                } catch (const SessionError& e) {
                    if (e.code() != ErrorCode::invalid_entry ||
                        std::string(e.what()).find(" line ") == std::string::npos)
                        failures.push_back(what + ": a strict open failed without naming the line");
                }
            } catch (const std::exception& e) {
                failures.push_back(what + ": " + e.what());
            }
        }
    }
    std::printf(
        "reliability: damage sweep: %zu damaged files over %zu of %d line boundaries, %zu "
        "failures\n",
        cases, lines_damaged.size(), n, failures.size());
    INFO((failures.empty() ? std::string() : failures.front()));
    CHECK(failures.empty());
}

TEST_CASE("a pi-dialect file of every entry type cut at any byte decodes every complete line",
          "[reliability][damage]") {
    ScratchDir dir;
    const auto source = dir.file("source.jsonl");
    {
        auto options = jsonl_options();
        options.dialect = Dialect::pi;
        auto s = create_file_session(source, options);
        fill_session(s);
    }
    const std::string full = read_file(source);
    const auto path = dir.file("cut.jsonl");
    std::size_t failures = 0;
    std::size_t cuts = 0;
    // Every byte, or every fourth under a sanitizer (support/sizes.hpp).
    for (std::size_t cut = 0; cut <= full.size(); cut += size_divisor) {
        ++cuts;
        const std::string text = full.substr(0, cut);
        write_file(path, text);
        std::size_t complete = 0;  // entry lines whose text is all there
        for (std::size_t i = 0; i < cut; ++i)
            if (full[i] == '\n') ++complete;
        if (cut < full.size() && full[cut] == '\n')
            ++complete;  // the text is whole, the newline is not
        try {
            const auto s = open_file_read_only(path);
            if (complete == 0 || s.storage().entry_count() != complete - 1) ++failures;
            build_context(s);
            for (const auto& e : s.storage().get_entries()) (void)encode_entry(*e, Dialect::pi);
        } catch (const SessionError& e) {
            if (complete != 0 || e.code() != ErrorCode::invalid_session) ++failures;
        }
        // The migration reader sees the same lines.
        try {
            const auto lines = parse_session_text(text);
            if (complete == 0 || lines.entries.size() != complete - 1) ++failures;
        } catch (const SessionError& e) {
            if (complete != 0) ++failures;
        }
    }
    std::printf("reliability: pi-dialect truncation sweep: %zu cuts, %zu failures\n", cuts,
                failures);
    CHECK(failures == 0);
}

TEST_CASE(
    "a damaged header byte either still reads or fails the open with invalid_session, never a "
    "crash",
    "[reliability][damage]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    std::vector<std::string> ids;
    std::vector<int> parents;
    const std::string full = tree_file(3, ids, parents);
    const std::size_t header_end = full.find('\n');
    std::size_t failures = 0;
    for (std::size_t i = 0; i < header_end; ++i) {
        for (const char replacement : {'\0', 'x', '\n', '"'}) {
            std::string text = full;
            text[i] = replacement;
            write_file(path, text);
            for (bool lenient : {false, true}) {
                auto options = jsonl_options();
                options.lenient = lenient;
                try {
                    JsonlSessionStorage::open_read_only(path, options);
                } catch (const SessionError& e) {
                    // A damaged `parent_session` key turns the header into pi's: the native lines
                    // after it then break the pi dialect's field rules, which the open checks.
                    bool dialect_changed = false;
                    try {
                        Dialect d = Dialect::native;
                        (void)decode_header(std::string_view(text).substr(0, text.find('\n')), &d);
                        dialect_changed = d == Dialect::pi;
                    } catch (const SessionError&) {
                    }
                    if (e.code() != ErrorCode::invalid_session &&
                        !(e.code() == ErrorCode::invalid_entry && !lenient && dialect_changed))
                        ++failures;
                }
            }
        }
    }
    CHECK(failures == 0);
}

TEST_CASE(
    "a number too large for a double is a bad line with a library error, never a stray exception",
    "[reliability][damage]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    const std::string header = encode_header(test_header(), Dialect::native) + "\n";
    auto custom = [](const std::string& id, const std::string& data) {
        return "{\"type\":\"custom\",\"id\":\"" + id +
               "\",\"parent_id\":null,\"timestamp\":\"t\",\"custom_type\":\"x\",\"data\":" + data +
               "}";
    };
    for (const std::string& big :
         std::vector<std::string>{"1e1000", "-17684694e1000", "0.5e400", std::string(400, '9')}) {
        const std::string bad = custom("c2", big);
        write_file(path, header + custom("c1", "1") + "\n" + bad + "\n" + custom("c3", "2") + "\n");
        const std::string message = message_of_error([&] { open_file_read_only(path); });
        CHECK(message.find("line 3") != std::string::npos);
        auto lenient = jsonl_options();
        lenient.lenient = true;
        const auto s = JsonlSessionStorage::open_read_only(path, lenient);
        CHECK(s.entry_count() == 2);
        CHECK(s.problems().size() == 1);
        CHECK(error_of([&] { decode_entry(bad, Dialect::native); }) == ErrorCode::invalid_entry);
        CHECK(error_of([&] {
                  decode_header("{\"type\":\"session\",\"version\":3,\"id\":\"a\",\"x\":" + big +
                                "}");
              }) == ErrorCode::invalid_session);
    }
    // Numbers that underflow read as zero, as nlohmann reads them.
    write_file(path, header + custom("c1", "1e-1000") + "\n" + custom("c2", "0e999") + "\n" +
                         custom("c3", "1.7e308") + "\n");
    CHECK(open_file_read_only(path).storage().entry_count() == 3);
}

#pragma once
// A seeded corpus of sessions for the search tests: multilingual text with diacritics, code
// identifiers and paths, tool calls and results, thinking, images, labels, names, compactions,
// branch summaries and custom messages, spread over a few working directories. The same seed
// gives the same sessions (ids, times, text), so one corpus can be copied into every storage and
// the same queries compared.

#include <agentcore/search.hpp>
#include <agentcore/session.hpp>

#include "support/sizes.hpp"

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace agentcore::testing {

/// The words the corpus is made of; the queries of the tests pick from them.
inline const std::vector<std::string>& search_corpus_words() {
    static const std::vector<std::string> words{"login",
                                                "bug",
                                                "fixed",
                                                "the",
                                                "session",
                                                "timeout",
                                                "Café",
                                                "naïve",
                                                "Crème",
                                                "brûlée",
                                                "Ελληνικά",
                                                "Αθήνα",
                                                "ΣΟΦΊΑ",
                                                "Москва",
                                                "ёлка",
                                                "Привет",
                                                "getUserById",
                                                "parse_json",
                                                "src/auth/login.cpp",
                                                "HTTP",
                                                "database",
                                                "migration",
                                                "Straße",
                                                "Zürich",
                                                "東京",
                                                "token",
                                                "refresh",
                                                "cache",
                                                "retry",
                                                "flaky",
                                                "deploy",
                                                "rollback",
                                                "user.name",
                                                "NEAR",
                                                "AND",
                                                "OR",
                                                "\"quoted\"",
                                                "O'Brien",
                                                "50%",
                                                "rare_zebra_word"};
    return words;
}

/// A sentence of `n` corpus words chosen by `rng`.
inline std::string corpus_sentence(std::mt19937_64& rng, std::size_t n) {
    const auto& words = search_corpus_words();
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        // The last word is rare: about one sentence in 40 holds it.
        std::size_t pick = rng() % (words.size() - 1);
        if (rng() % 40 == 0) pick = words.size() - 1;
        if (!out.empty()) out += (rng() % 7 == 0) ? ", " : " ";
        out += words[pick];
    }
    return out;
}

/// The size of a corpus's sessions. The default gives the tests' small sessions (3 to 8 turns,
/// a few KiB); the benchmark asks for sessions of the size agents write, whose bytes are mostly
/// tool output.
struct SearchCorpusShape {
    std::size_t min_turns = 3;
    std::size_t extra_turns = 6;  ///< turns: min_turns + a draw below this
    /// Each tool result also holds output of up to this many words (0: none): code-like words
    /// of a vocabulary of their own, one word in 200 a corpus word.
    std::size_t output_words = 0;
};

/// `n` words of tool output: identifiers of a large vocabulary of their own (made of
/// syllables), in lines of about 12 words, one word in 200 a corpus word.
inline std::string corpus_output(std::mt19937_64& rng, std::size_t n) {
    static constexpr const char* syllables[] = {"ka", "lo", "mi", "ne", "pu", "ra", "si", "to",
                                                "vu", "ze", "bo", "di", "fa", "gu", "he", "jo"};
    const auto& words = search_corpus_words();
    std::string out;
    out.reserve(n * 8);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t r = rng();
        if (i > 0) out += (i % 12 == 0) ? "\n" : (r % 5 == 0 ? "." : " ");
        if (r % 200 == 0) {
            out += words[(r >> 8) % words.size()];
            continue;
        }
        const std::size_t parts = 2 + (r >> 8) % 3;
        for (std::size_t k = 0; k < parts; ++k) out += syllables[(r >> (16 + 4 * k)) % 16];
        if ((r >> 40) % 4 == 0) out += std::to_string((r >> 44) % 100);
    }
    return out;
}

/// Writes `sessions` sessions of the corpus of `seed` into `repo` (any repository).
template <class Repo>
void write_search_corpus(Repo& repo, std::uint64_t seed, std::size_t sessions,
                         const SearchCorpusShape& shape = {}) {
    std::mt19937_64 rng(seed);
    const std::vector<std::string> cwds{"/work/app", "/work/lib", "/home/ana/notes"};
    for (std::size_t s = 0; s < sessions; ++s) {
        CreateOptions co;
        co.id = "corpus-" + std::to_string(seed) + "-" + std::to_string(s);
        co.cwd = cwds[rng() % cwds.size()];
        co.metadata = Json{{"team", (rng() % 2 == 0) ? "core" : "web"}, {"n", s}};
        auto session = create(repo, co);
        const std::size_t turns = shape.min_turns + rng() % shape.extra_turns;
        std::string last_user;
        for (std::size_t t = 0; t < turns; ++t) {
            UserMessage u;
            if (rng() % 4 == 0) {
                std::vector<ContentBlock> blocks;
                blocks.push_back(TextContent{corpus_sentence(rng, 4 + rng() % 6), {}});
                // Base64 that spells corpus words must never be found.
                blocks.push_back(
                    ImageContent{"bG9naW4gYnVn rare_zebra_word login", "image/png", {}});
                u.content = std::move(blocks);
            } else {
                u.content = corpus_sentence(rng, 3 + rng() % 8);
            }
            u.timestamp = 1000;
            last_user = append_message(session, u);
            AssistantMessage a;
            a.api = "messages";
            a.provider = "anthropic";
            a.model = "claude";
            if (rng() % 3 == 0) a.content.push_back(ThinkingContent{corpus_sentence(rng, 5), {}});
            a.content.push_back(TextContent{corpus_sentence(rng, 5 + rng() % 10), {}});
            const bool tool = rng() % 2 == 0;
            if (tool) {
                a.content.push_back(
                    ToolCallContent{"call-" + std::to_string(t),
                                    (rng() % 2 == 0) ? "read_file" : "bash",
                                    Json{{"path", corpus_sentence(rng, 2)}, {"n", 3}},
                                    {}});
                a.stop_reason = "tool_use";
            }
            append_message(session, a);
            if (tool) {
                ToolResultMessage r;
                r.tool_call_id = "call-" + std::to_string(t);
                r.tool_name = "read_file";
                r.content.push_back(TextContent{corpus_sentence(rng, 6 + rng() % 30), {}});
                if (shape.output_words > 0)
                    r.content.push_back(
                        TextContent{corpus_output(rng, rng() % shape.output_words), {}});
                r.is_error = rng() % 5 == 0;
                append_message(session, r);
            }
            switch (rng() % 9) {
                case 0: append_label(session, last_user, corpus_sentence(rng, 2)); break;
                case 1: append_session_name(session, corpus_sentence(rng, 3)); break;
                case 2:
                    append_custom_message_entry(session, "note", corpus_sentence(rng, 4));
                    break;
                case 3: append_compaction(session, corpus_sentence(rng, 8), last_user, 1234); break;
                case 4:
                    move_to(session, last_user,
                            BranchSummaryInput{corpus_sentence(rng, 6), {}, std::nullopt, false});
                    break;
                case 5: append_custom_entry(session, "app", Json{{"text", "login bug"}}); break;
                default: break;
            }
        }
    }
}

/// How many pages of each relevance case a paging test compares, at most: `full`, or half as many
/// under a sanitizer (sizes.hpp), where the first pages still cover every case.
constexpr int relevance_pages(int full) { return sanitized_build ? (full + 1) / 2 : full; }

/// Calls `each(query, options)` for every case the storages' pages by relevance are compared
/// with memory's on: queries of one and more terms, phrases, prefixes and exclusions, pages of
/// one and three hits, and text options that read the defaults' text, less of it and more.
template <class Each>
void for_each_relevance_case(const Each& each) {
    for (const std::string q : {"session", "token", "login bug", "\"fixed the\"", "caf*",
                                "deploy -timeout", "login bug fix*", "session token login"})
        for (const std::size_t limit : {std::size_t{1}, std::size_t{3}})
            for (const SearchTextOptions text :
                 {SearchTextOptions{}, SearchTextOptions{.tool_results = false},
                  SearchTextOptions{.thinking = true, .tool_result_cap = 30},
                  SearchTextOptions{.tool_result_cap = 10000}}) {
                SearchOptions o;
                o.limit = limit;
                o.text = text;
                each(q, o);
            }
}

}  // namespace agentcore::testing

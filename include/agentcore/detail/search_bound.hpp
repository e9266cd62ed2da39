#pragma once
// Bounds of a hit's score that an index can give without reading the entry: the word counts of
// an entry's text and the levels at which it repeats each word (word_repeat_marks). A page by
// relevance reads its candidates best bound first and stops once no candidate left can reach
// the page, so that the best hits of a word thousands of entries hold cost the reading of the
// few that can compete. The SQLite and PostgreSQL repositories keep the same counts and marks.

#include <agentcore/entries.hpp>
#include <agentcore/messages.hpp>
#include <agentcore/search.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <queue>
#include <string>
#include <variant>
#include <vector>

namespace agentcore::detail {

/// How many words (count_search_words, as the matcher counts them for a score) an entry's text
/// has as a search reads it: `words` with the default SearchTextOptions, `base` with neither
/// thinking nor tool results (the least any options read). More thinking or a larger cap only
/// add words, so these bound the length below, and the score above.
struct SearchWordCounts {
    std::int64_t words = 0;
    std::int64_t base = 0;
};

inline SearchWordCounts search_word_counts(const SessionTreeEntry& entry) {
    SearchWordCounts out;
    out.words =
        static_cast<std::int64_t>(count_search_words(search_text_of(entry, SearchTextOptions{})));
    out.base = out.words;
    // Only tool results and shell output are read by the defaults and not by every option.
    const AgentMessage* m = message_of(entry);
    if (m && (std::holds_alternative<ToolResultMessage>(*m) ||
              std::holds_alternative<BashExecutionMessage>(*m))) {
        SearchTextOptions base;
        base.tool_results = false;
        out.base = static_cast<std::int64_t>(count_search_words(search_text_of(entry, base)));
    }
    return out;
}

/// Whether an entry's length under `text` is bounded by its `words` count (options that read
/// at least what the defaults read: thinking and a larger cap only add words) rather than its
/// `base` count (options that leave tool output out or cut it shorter).
inline bool reads_default_words(const SearchTextOptions& text) noexcept {
    return text.tool_results && text.tool_result_cap >= SearchTextOptions{}.tool_result_cap;
}

/// The saturating part of match_text's score for a term found `count` times (infinity: its
/// limit, 2.2).
inline double saturated(double count) noexcept {
    return std::isinf(count) ? 2.2 : count * 2.2 / (count + 1.2);
}

/// The most a hit can score for `query` in words mode when each term i occurs `most[i]` times at
/// most (infinity: unknown), before the length's share: match_text's sum over the terms, a hair
/// above, so that rounding never puts an entry below its own score. Divided by
/// length_share(words) it bounds the score in a text of `words` words or more.
inline double score_sum_bound(const SearchQuery& query, const std::vector<double>& most) {
    double sum = 0;
    for (std::size_t i = 0; i < query.terms.size(); ++i) {
        const auto& term = query.terms[i];
        if (!term.excluded) sum += saturated(most[i]) * (term.tokens.size() > 1 ? 1.5 : 1.0);
    }
    return sum * (1.0 + 1e-9);
}

/// What match_text divides a score by for a text of `words` words.
inline double length_share(std::int64_t words) noexcept {
    return 1.0 + std::log1p(static_cast<double>(words) / 64.0);
}

/// The least word counts (SearchWordCounts::words) of the length classes an index can mark
/// each entry with (length_mark), ascending: an entry of class k has at least
/// length_class_floors[k] words, so length_share of that floor bounds the share of every entry
/// of the class. Finer where the share changes fastest for a word count's step.
inline constexpr std::int64_t length_class_floors[] = {
    0,  2,  4,   6,   8,   10,  12,  16,  20,  24,   32,   40,   48,  64,
    80, 96, 128, 160, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192};

/// The length class of an entry of `words` words: the last class whose floor is at most
/// `words` (PostgreSQL's width_bucket(words, floors) - 1).
inline std::size_t length_class(std::int64_t words) noexcept {
    const auto* end = std::end(length_class_floors);
    const auto* at = std::upper_bound(std::begin(length_class_floors), end, words);
    return at == std::begin(length_class_floors)
               ? 0
               : static_cast<std::size_t>(at - std::begin(length_class_floors) - 1);
}

/// The mark of length class `k` in an entry's index: `~n` and the class (`~` is never part of
/// a word, so a mark is never a word, nor a repeat_mark, which starts with one).
inline std::string length_mark(std::size_t k) { return "~n" + std::to_string(k); }

/// The whole words of a term of a words query that counts in a score: its tokens but the last
/// of a `prefix*` term (a prefix, not a word); none for an excluded term. An index marks how
/// often an entry repeats each of them, and the term occurs at most as often as each.
inline std::vector<std::string> term_whole_words(const SearchTerm& term) {
    if (term.excluded) return {};
    std::vector<std::string> out(term.tokens.begin(), term.tokens.end());
    if (term.prefix && !out.empty()) out.pop_back();
    return out;
}

/// How often the terms of a words query can occur in each indexed entry, from the entries an
/// index marks as repeating each whole word of a term (the last word of a `prefix*` term is not
/// one) at each of repeat_levels. A term occurs at most as often as each of its whole words (a
/// phrase's every occurrence holds each of them at a place of its own). `Key` names an entry
/// in the index (ordered).
template <class Key>
class TermRepeats {
public:
    /// `marked(mark)` gives the keys of the entries whose index holds `mark` (repeat_mark of a
    /// word and level), in ascending order.
    template <class Marked>
    TermRepeats(const SearchQuery& query, const Marked& marked) : terms_(query.terms.size()) {
        for (std::size_t t = 0; t < query.terms.size(); ++t)
            for (std::string& word : term_whole_words(query.terms[t])) {
                const auto found = std::find(words_.begin(), words_.end(), word);
                terms_[t].push_back(static_cast<std::size_t>(found - words_.begin()));
                if (found == words_.end()) words_.push_back(std::move(word));
            }
        for (const std::string& word : words_) {
            auto& levels = keys_.emplace_back();
            // Each level's entries are among the level's before it: an empty one ends the asking.
            for (const std::size_t level : repeat_levels) {
                levels.push_back(marked(repeat_mark(word, level)));
                if (levels.back().empty()) break;
            }
        }
    }

    /// The most each term of the query can occur in the entry `key` (infinity: unknown), into
    /// `most` (one per term).
    void most(const Key& key, std::vector<double>& most) const {
        most.assign(terms_.size(), std::numeric_limits<double>::infinity());
        for (std::size_t t = 0; t < terms_.size(); ++t)
            for (const std::size_t w : terms_[t]) {
                int marked = -1;
                for (std::size_t level = 0; level < keys_[w].size(); ++level) {
                    const auto& keys = keys_[w][level];
                    if (!std::binary_search(keys.begin(), keys.end(), key)) break;
                    marked = static_cast<int>(level);
                }
                most[t] = std::min(most[t], most_repeats(marked));
            }
    }

private:
    std::vector<std::vector<std::size_t>> terms_;  // per term: its whole words in words_
    std::vector<std::string> words_;
    std::vector<std::vector<std::vector<Key>>> keys_;  // per word, per level
};

/// The scores a page by relevance has found so far: of the hits after the options' cursor, the
/// best `limit + 1` (the page and one hit more, which says whether a next page exists). A
/// candidate whose bound is below the least of them once they are all found cannot change the
/// page.
class PageScores {
public:
    explicit PageScores(const SearchOptions& options)
        : options_(options),
          wanted_(options.limit < std::numeric_limits<std::size_t>::max() ? options.limit + 1
                                                                          : options.limit) {}

    /// Keeps a judged hit in `hits` and counts its score; a hit before the cursor is dropped.
    void add(std::vector<SearchHit>& hits, SearchHit&& hit) {
        if (options_.after && !hit_before(*options_.after, hit, options_.order)) return;
        best_.push(hit.score);
        if (best_.size() > wanted_) best_.pop();
        hits.push_back(std::move(hit));
    }

    /// Whether a candidate that can score at most `bound` may still enter the page.
    [[nodiscard]] bool can_reach(double bound) const {
        return best_.size() < wanted_ || bound >= best_.top();
    }

    /// How many more hits the page and its one more still lack.
    [[nodiscard]] std::size_t missing() const noexcept {
        return best_.size() < wanted_ ? wanted_ - best_.size() : 0;
    }

    /// The page and one hit more: how many hits the page needs before any can be left unread.
    [[nodiscard]] std::size_t wanted() const noexcept { return wanted_; }

private:
    const SearchOptions& options_;
    std::size_t wanted_;
    std::priority_queue<double, std::vector<double>, std::greater<>> best_;
};

}  // namespace agentcore::detail

#pragma once
// Search across every session of a repository: the query language, the text normaliser, what
// text each entry offers to a search, the matcher, snippets, scores, filters, ordering and
// paging. docs/search.md describes the language and the guarantees.
//
// One judge for every storage: whatever finds candidate entries (a scan here, an FTS5 or
// tsvector index in the database storages), each candidate's text is extracted and checked by
// the matcher of this header, and its score and snippet come from the same code. So every
// repository returns the same hits, in the same order, for the same query and options.

#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/json.hpp>
#include <agentcore/messages.hpp>
#include <agentcore/repo.hpp>
#include <agentcore/storage.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace agentcore {

// ---------------------------------------------------------------------------------------------
// The query language

/// How the terms of a query match the text.
enum class SearchMode {
    /// Whole words, case- and diacritic-insensitive: `login bug` (all words), `"login bug"`
    /// (a phrase), `log*` (a prefix), `-flaky` (excluded).
    words,
    /// Each term is a substring of the text (case- and diacritic-insensitive): for code
    /// identifiers and paths such as `getUserById` or `src/auth/login.cpp`. Terms need at least
    /// three characters; `"..."` keeps spaces inside a term and `-` excludes one.
    substring,
};

/// One term of a parsed query.
struct SearchTerm {
    /// Words mode: the normalised tokens that must follow each other in the text (one for a
    /// word). Substring mode: one element, the normalised text to find.
    std::vector<std::string> tokens;
    bool prefix = false;    ///< words mode: the last token may be the start of a longer word
    bool excluded = false;  ///< the text must not match this term
};

/// A parsed query: data, never syntax handed to a database.
struct SearchQuery {
    SearchMode mode = SearchMode::words;
    std::vector<SearchTerm> terms;
};

/// The limits of a query; beyond them parse_search_query throws invalid_query.
inline constexpr std::size_t max_query_bytes = 1024;
inline constexpr std::size_t max_query_terms = 16;
inline constexpr std::size_t min_substring_chars = 3;

// ---------------------------------------------------------------------------------------------
// The normaliser

namespace detail {

/// Decodes the code point at `i` of `s` and advances `i`; an invalid or truncated sequence is
/// one U+FFFD for its first byte (the decoder never throws and never reads past `s`).
template <class = void>
char32_t next_code_point(std::string_view s, std::size_t& i) noexcept {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b0 = byte(i);
    if (b0 < 0x80) {
        ++i;
        return b0;
    }
    std::size_t len = 0;
    char32_t cp = 0;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2;
        cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3;
        cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4;
        cp = b0 & 0x07;
    } else {
        ++i;
        return 0xFFFD;
    }
    if (i + len > s.size()) {
        ++i;
        return 0xFFFD;
    }
    for (std::size_t k = 1; k < len; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) {
            ++i;
            return 0xFFFD;
        }
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    const bool overlong =
        (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        ++i;
        return 0xFFFD;
    }
    i += len;
    return cp;
}

/// True when every byte sequence of `s` is valid UTF-8.
template <class = void>
bool is_valid_utf8(std::string_view s) noexcept {
    std::size_t i = 0;
    while (i < s.size()) {
        const std::size_t at = i;
        if (next_code_point(s, i) == 0xFFFD) {
            // U+FFFD itself is valid when it is spelled in three bytes.
            if (i - at != 3) return false;
        }
    }
    return true;
}

template <class = void>
void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

// Base letters of Latin-1 Supplement U+00C0..U+00FF and Latin Extended-A U+0100..U+017F, lower
// case, diacritics removed. '*' keeps the code point (×, ÷, þ); upper-case letters stand for
// two-letter results: 'A' = "ae", 'S' = "ss", 'I' = "ij", 'O' = "oe".
inline constexpr std::string_view latin1_bases =
    "aaaaaaAceeeeiiiidnooooo*ouuuuy*SaaaaaaAceeeeiiiidnooooo*ouuuuy*y";
inline constexpr std::string_view latin_a_bases =
    "aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiiIIjjkkkllllllllllnnnnnnnnnooooooOOrrrrrrss"
    "ssssssttttttuuuuuuuuuuuuwwyyyzzzzzzs";
static_assert(latin1_bases.size() == 64);
static_assert(latin_a_bases.size() == 128);

/// What a code point becomes in normalised text: lower case, without diacritics (Latin, Greek,
/// Cyrillic), appended to `out`. Combining marks (U+0300..U+036F) vanish.
template <class = void>
void append_folded(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
        return;
    }
    if (cp >= 0x300 && cp <= 0x36F) return;
    auto from_table = [&](char c, char32_t self) {
        switch (c) {
            case '*': append_utf8(out, self); return;
            case 'A': out += "ae"; return;
            case 'S': out += "ss"; return;
            case 'I': out += "ij"; return;
            case 'O': out += "oe"; return;
            default: out.push_back(c); return;
        }
    };
    if (cp >= 0xC0 && cp <= 0xFF) {
        const char c = latin1_bases[cp - 0xC0];
        from_table(c, cp == 0xDE ? char32_t{0xFE} : cp);
        return;
    }
    if (cp >= 0x100 && cp <= 0x17F) {
        from_table(latin_a_bases[cp - 0x100], cp);
        return;
    }
    char32_t r = cp;
    if ((cp >= 0x391 && cp <= 0x3A9) || (cp >= 0x410 && cp <= 0x42F)) {  // Greek, Cyrillic capitals
        r = cp + 0x20;
    } else if (cp >= 0x386 && cp <= 0x3CE) {
        switch (cp) {
            case 0x386:
            case 0x3AC: r = 0x3B1; break;  // α
            case 0x388:
            case 0x3AD: r = 0x3B5; break;  // ε
            case 0x389:
            case 0x3AE: r = 0x3B7; break;  // η
            case 0x38A:
            case 0x3AF:
            case 0x390:
            case 0x3AA:
            case 0x3CA: r = 0x3B9; break;  // ι
            case 0x38C:
            case 0x3CC: r = 0x3BF; break;  // ο
            case 0x38E:
            case 0x3CD:
            case 0x3B0:
            case 0x3AB:
            case 0x3CB: r = 0x3C5; break;  // υ
            case 0x38F:
            case 0x3CE: r = 0x3C9; break;  // ω
            case 0x3C2: r = 0x3C3; break;  // final sigma
            default: break;
        }
    } else if (cp >= 0x400 && cp <= 0x40F) {
        r = cp + 0x50;
    } else if ((cp >= 0x460 && cp <= 0x481) || (cp >= 0x48A && cp <= 0x4BF)) {
        r = cp | 1;
    }
    switch (r) {  // Cyrillic letters with a diacritic
        case 0x450:
        case 0x451: r = 0x435; break;  // ѐ ё → е
        case 0x453: r = 0x433; break;  // ѓ → г
        case 0x45C: r = 0x43A; break;  // ќ → к
        case 0x45D: r = 0x438; break;  // ѝ → и
        case 0x45E: r = 0x443; break;  // ў → у
        case 0x457: r = 0x456; break;  // ї → і
        default: break;
    }
    append_utf8(out, r);
}

/// True for the ASCII letters and digits, the ASCII characters of words.
constexpr bool ascii_word_char(char32_t c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/// True for the code points of words: ASCII letters and digits, and letters of other scripts
/// (everything from U+0080 up that is not punctuation, a space, a symbol block or a mark).
template <class = void>
bool is_word_char(char32_t cp) noexcept {
    if (cp < 0x80) return ascii_word_char(cp);
    if (cp <= 0xBF) return cp == 0xAA || cp == 0xB5 || cp == 0xBA;
    if (cp == 0xD7 || cp == 0xF7) return false;
    if (cp >= 0x2000 && cp <= 0x2BFF) return false;    // punctuation, arrows, math, boxes
    if (cp >= 0x3000 && cp <= 0x303F) return false;    // CJK punctuation
    if (cp >= 0xFE30 && cp <= 0xFE4F) return false;    // CJK compatibility forms
    if (cp >= 0xFF00 && cp <= 0xFF0F) return false;    // full-width punctuation
    if (cp >= 0x1F000 && cp <= 0x1FAFF) return false;  // emoji and pictographs
    if (cp == 0xFFFD || cp == 0xFEFF) return false;
    return true;
}

/// Ideographs and kana: each one is a word of its own (those scripts put no spaces between
/// words, so a query word matches inside a run of them).
template <class = void>
bool is_single_char_word(char32_t cp) noexcept {
    return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x9FFF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x2FFFF);
}

/// A word of a text: its normalised form and where it is in the original (bytes).
struct SearchToken {
    std::string norm;
    std::size_t begin = 0;
    std::size_t end = 0;
};

/// Calls `f(norm, begin, end)` for each word of `text` in order: its normalised form (a view
/// into `norm`, valid during the call) and where it is in the original (bytes). A word is a run
/// of word characters (is_word_char), with the combining marks that follow its letters; each
/// ideograph or kana is a word of its own. `norm` keeps its buffer from call to call.
///
/// `skip(at)`, asked between words, may pass over words the caller does not need to see: it
/// returns where the walk goes on (`at` itself to pass over nothing), a place that is not inside
/// a word, and counts the words it passed over itself.
template <class F, class Skip>
void for_each_search_word(std::string_view text, std::string& norm, F&& f, Skip&& skip) {
    std::size_t begin = 0;
    std::size_t end = 0;
    bool in_word = false;
    const auto close = [&] {
        if (in_word) f(std::string_view(norm), begin, end);
        in_word = false;
    };
    std::size_t i = 0;
    while (i < text.size()) {
        if (!in_word) {
            i = skip(i);
            if (i >= text.size()) break;
        }
        const std::size_t at = i;
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte < 0x80) {  // ASCII, the common case: a run of letters and digits at a time
            if (!ascii_word_char(byte)) {
                close();
                ++i;
                continue;
            }
            std::size_t stop = i;
            bool capital = false;
            while (stop < text.size() && ascii_word_char(static_cast<unsigned char>(text[stop]))) {
                capital = capital || (text[stop] >= 'A' && text[stop] <= 'Z');
                ++stop;
            }
            // A whole word of small letters and digits (no character after it that could
            // continue it) is its own normal form: no copy.
            if (!in_word && !capital &&
                (stop == text.size() || static_cast<unsigned char>(text[stop]) < 0x80)) {
                f(text.substr(i, stop - i), i, stop);
                i = stop;
                continue;
            }
            if (!in_word) {
                norm.clear();
                begin = at;
                in_word = true;
            }
            const std::size_t from = norm.size();
            norm.resize(from + (stop - i));
            for (std::size_t k = i; k < stop; ++k) {
                const auto b = static_cast<unsigned char>(text[k]);
                norm[from + (k - i)] = static_cast<char>(b >= 'A' && b <= 'Z' ? b + 32 : b);
            }
            i = stop;
            end = i;
            continue;
        }
        const char32_t cp = next_code_point(text, i);
        const bool combining = cp >= 0x300 && cp <= 0x36F;
        if (combining && in_word) {
            end = i;  // a mark belongs to the letter before it
            continue;
        }
        if (!is_word_char(cp) || combining) {
            close();
            continue;
        }
        const bool single = is_single_char_word(cp);
        if (!in_word || single) {
            close();
            norm.clear();
            begin = at;
            in_word = true;
        }
        append_folded(norm, cp);
        end = i;
        if (single) close();
    }
    close();
}

/// for_each_search_word over every word.
template <class F>
void for_each_search_word(std::string_view text, std::string& norm, F&& f) {
    for_each_search_word(text, norm, std::forward<F>(f), [](std::size_t at) { return at; });
}

/// The words of `text`, normalised, with their places (for_each_search_word).
template <class T = void>
std::vector<SearchToken> tokenize_for_search(std::string_view text) {
    dependent<std::vector<SearchToken>, T> out;
    std::string norm;
    for_each_search_word(text, norm,
                         [&](std::string_view word, std::size_t begin, std::size_t end) {
                             out.push_back(SearchToken{std::string(word), begin, end});
                         });
    return out;
}

/// How many words `text` has (for_each_search_word).
template <class = void>
std::size_t count_search_words(std::string_view text) {
    std::size_t n = 0;
    std::string norm;
    for_each_search_word(text, norm, [&](std::string_view, std::size_t, std::size_t) { ++n; });
    return n;
}

}  // namespace detail

/// The text as search compares it: lower case, without diacritics (Latin, Greek, Cyrillic),
/// every run of characters that are not letters or digits one space, trimmed. Invalid UTF-8
/// becomes spaces. Example: `normalize_for_search("Ça va, Ölçer!")` is `"ca va olcer"`.
///
/// Complexity: linear in the size of `text`.
template <class = void>
std::string normalize_for_search(std::string_view text) {
    std::string out;
    std::string norm;
    detail::for_each_search_word(text, norm, [&](std::string_view word, std::size_t, std::size_t) {
        if (!out.empty()) out.push_back(' ');
        out += word;
    });
    return out;
}

namespace detail {

/// Folded text for substring matching: every code point folded (punctuation kept), and for
/// each byte of the result the offset of the original code point it came from.
struct FoldedText {
    std::string text;
    std::vector<std::size_t> origin;  ///< one per byte of text, plus the end
};

template <class T = void>
FoldedText fold_for_substring(std::string_view text) {
    dependent<FoldedText, T> out;
    out.text.reserve(text.size());
    out.origin.reserve(text.size() + 1);
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t at = i;
        const char32_t cp = next_code_point(text, i);
        const std::size_t before = out.text.size();
        append_folded(out.text, cp == 0xFFFD ? char32_t{' '} : cp);
        out.origin.insert(out.origin.end(), out.text.size() - before, at);
    }
    out.origin.push_back(text.size());
    return out;
}

}  // namespace detail

/// The text folded for substring search: each character lower case and without diacritics,
/// punctuation and spaces kept, invalid UTF-8 as spaces. Example: `"Crème.Brûlée"` →
/// `"creme.brulee"`.
template <class = void>
std::string fold_for_substring(std::string_view text) {
    return detail::fold_for_substring(text).text;
}

// ---------------------------------------------------------------------------------------------
// Parsing

namespace detail {

template <class = void>
[[noreturn]] void bad_query(const std::string& what) {
    throw SessionError(ErrorCode::invalid_query, "search query: " + what);
}

// A term as written, for messages: at most 40 bytes, cut at a character boundary.
template <class = void>
std::string quoted_term(std::string_view raw) {
    std::string_view cut = raw.substr(0, 40);
    while (!cut.empty() && cut.size() < raw.size() &&
           (static_cast<unsigned char>(raw[cut.size()]) & 0xC0) == 0x80)
        cut.remove_suffix(1);
    return "'" + std::string(cut) + (cut.size() < raw.size() ? "...'" : "'");
}

}  // namespace detail

/// Parses a query. Words mode: terms are separated by spaces; `"a b"` is a phrase; a `*` at the
/// end of a term makes its last word a prefix; a leading `-` excludes a term; a term of several
/// words (`login-bug`, `get_user`) is the phrase of its words. Substring mode: `"..."` keeps
/// spaces, `-` excludes, `*` is an ordinary character. Nothing else has a meaning: AND, OR,
/// NEAR, parentheses, colons and quotes of SQL are text.
///
/// Throws invalid_query, naming what is wrong, when the query is empty or blank, longer than
/// max_query_bytes, not valid UTF-8 or holds a NUL or another control character but tab and
/// newline, has more than max_query_terms terms, has a `"` without its closing one, has no term
/// with a letter or digit (words mode leaves such terms out: `--`, `&&`, a lone `*`), has only
/// excluded terms, or (substring mode) a term shorter than min_substring_chars characters.
///
/// Complexity: linear in the size of `text`.
template <class T = void>
SearchQuery parse_search_query(std::string_view text, SearchMode mode = SearchMode::words) {
    using detail::bad_query;
    if (text.size() > max_query_bytes)
        bad_query("longer than " + std::to_string(max_query_bytes) + " bytes (" +
                  std::to_string(text.size()) + ")");
    if (!detail::is_valid_utf8(text)) bad_query("not valid UTF-8");
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u == 0) bad_query("holds a NUL character");
        if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7F)
            bad_query("holds a control character");
    }
    detail::dependent<SearchQuery, T> query;
    query.mode = mode;
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    std::size_t i = 0;
    bool any = false;
    std::string punctuation;  // the last term left out for having no letter or digit
    while (i < text.size()) {
        while (i < text.size() && space(text[i])) ++i;
        if (i == text.size()) break;
        any = true;
        const std::size_t start = i;
        detail::dependent<SearchTerm, T> term;
        if (text[i] == '-' && i + 1 < text.size() && !space(text[i + 1])) {
            term.excluded = true;
            ++i;
        }
        std::string_view body;
        if (i < text.size() && text[i] == '"') {
            const std::size_t close = text.find('"', i + 1);
            if (close == std::string_view::npos)
                bad_query("the phrase starting at byte " + std::to_string(i) +
                          " has no closing \"");
            body = text.substr(i + 1, close - i - 1);
            i = close + 1;
            if (mode == SearchMode::words && i < text.size() && text[i] == '*') {
                term.prefix = true;
                ++i;
            }
            while (i < text.size() && !space(text[i])) ++i;  // text glued after a phrase
        } else {
            const std::size_t begin = i;
            while (i < text.size() && !space(text[i])) ++i;
            body = text.substr(begin, i - begin);
            if (mode == SearchMode::words && !body.empty() && body.back() == '*') {
                term.prefix = true;
                while (!body.empty() && body.back() == '*') body.remove_suffix(1);
            }
        }
        const std::string_view raw = text.substr(start, i - start);
        if (query.terms.size() == max_query_terms)
            bad_query("more than " + std::to_string(max_query_terms) + " terms");
        if (mode == SearchMode::words) {
            for (auto& t : detail::tokenize_for_search(body))
                term.tokens.push_back(std::move(t.norm));
            // Punctuation alone ("--", "&&", a lone "*") finds nothing as a word: it is left out.
            if (term.tokens.empty()) {
                punctuation = detail::quoted_term(raw);
                continue;
            }
        } else {
            std::string folded = fold_for_substring(body);
            std::size_t chars = 0;
            for (std::size_t k = 0; k < folded.size();) {
                detail::next_code_point(folded, k);
                ++chars;
            }
            if (chars < min_substring_chars)
                bad_query("the substring term " + detail::quoted_term(raw) + " is shorter than " +
                          std::to_string(min_substring_chars) + " characters");
            term.tokens.push_back(std::move(folded));
        }
        query.terms.push_back(std::move(term));
    }
    if (!any) bad_query("empty");
    if (query.terms.empty())
        bad_query("no term has a letter or digit (" + punctuation + " is punctuation only)");
    const bool positive = std::any_of(query.terms.begin(), query.terms.end(),
                                      [](const SearchTerm& t) { return !t.excluded; });
    if (!positive) bad_query("only excluded terms; give at least one term to find");
    return query;
}

// ---------------------------------------------------------------------------------------------
// What an entry offers to a search

/// The largest tool_result_cap: database indexes hold this much of each tool result.
inline constexpr std::size_t max_tool_result_cap = 65536;

/// What is searched besides the conversation's plain text.
struct SearchTextOptions {
    bool thinking = false;     ///< the assistant's thinking blocks
    bool tool_results = true;  ///< the text of tool results and shell output
    /// At most this many bytes of each (cut at a character); at most max_tool_result_cap.
    std::size_t tool_result_cap = 4096;
};

namespace detail {

template <class = void>
void append_part(std::string& out, std::string_view part) {
    if (part.empty()) return;
    if (!out.empty()) out.push_back('\n');
    out.append(part);
}

/// How many bytes past a cap capped() reads: the character that starts at the cap.
inline constexpr std::size_t capped_lookahead = 4;

/// True when the code point at `i` of `text` continues a word begun before it: a letter or
/// digit that is not a word of its own (is_single_char_word), or a combining mark.
template <class = void>
bool continues_word(std::string_view text, std::size_t i) noexcept {
    const char32_t cp = next_code_point(text, i);
    return (cp >= 0x300 && cp <= 0x36F) || (is_word_char(cp) && !is_single_char_word(cp));
}

/// The first `cap` bytes of `text` at most, cut between characters and never inside a word
/// (a word the cap would cut is left out whole). So the words of a text capped at one size are
/// the first words of the text capped at a larger one, as many times each or fewer: an index
/// of each tool result capped at max_tool_result_cap holds every word that a search with a
/// smaller cap reads. Reads at most capped_lookahead bytes past the cap.
template <class = void>
std::string_view capped(std::string_view text, std::size_t cap) {
    if (text.size() <= cap) return text;
    std::size_t n = cap;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    if (!continues_word(text, n)) return text.substr(0, n);
    while (n > 0) {
        std::size_t before = n - 1;
        while (before > 0 && (static_cast<unsigned char>(text[before]) & 0xC0) == 0x80) --before;
        if (!continues_word(text, before)) break;
        n = before;
    }
    return text.substr(0, n);
}

// The string values of tool arguments (nested ones too), in document order; keys and numbers
// are not text the user would search for.
template <class = void>
void append_json_strings(std::string& out, const Json& value, int depth = 0) {
    if (depth > 64) return;
    if (value.is_string()) {
        append_part(out, value.get_ref<const std::string&>());
    } else if (value.is_array() || value.is_object()) {
        for (const auto& v : value) append_json_strings(out, v, depth + 1);
    }
}

template <class = void>
void append_blocks(std::string& out, const std::vector<ContentBlock>& blocks,
                   const SearchTextOptions& options, bool thinking_allowed) {
    for (const auto& b : blocks) {
        if (const auto* t = std::get_if<TextContent>(&b)) {
            append_part(out, t->text);
        } else if (const auto* th = std::get_if<ThinkingContent>(&b)) {
            if (thinking_allowed && options.thinking) append_part(out, th->thinking);
        } else if (const auto* c = std::get_if<ToolCallContent>(&b)) {
            append_part(out, c->name);
            append_json_strings(out, c->arguments);
        }
        // Images (base64 data) and blocks of unknown types are never searched.
    }
}

template <class = void>
void append_content(std::string& out, const Content& content, const SearchTextOptions& options) {
    if (const auto* s = std::get_if<std::string>(&content)) {
        append_part(out, *s);
    } else {
        append_blocks(out, std::get<std::vector<ContentBlock>>(content), options, false);
    }
}

}  // namespace detail

/// The text of an entry that search looks at: user and assistant text, thinking (when asked),
/// tool names and the string values of tool arguments, tool results and shell commands with
/// their output (when asked, each capped), custom messages, compaction and branch summaries,
/// labels and session names; parts separated by newlines. Never image data, never custom
/// entries' application data. Empty for entries with nothing to search.
///
/// Complexity: linear in the size of the entry's text.
template <class T = void>
std::string search_text_of(const detail::dependent<SessionTreeEntry, T>& entry,
                           const SearchTextOptions& options = {}) {
    std::string out;
    using detail::append_part;
    if (const auto* m = std::get_if<MessageEntry>(&entry)) {
        const AgentMessage& msg = m->message;
        if (const auto* u = std::get_if<UserMessage>(&msg)) {
            detail::append_content(out, u->content, options);
        } else if (const auto* a = std::get_if<AssistantMessage>(&msg)) {
            detail::append_blocks(out, a->content, options, true);
        } else if (const auto* t = std::get_if<ToolResultMessage>(&msg)) {
            append_part(out, t->tool_name);
            if (options.tool_results) {
                std::string body;
                detail::append_blocks(body, t->content, options, false);
                append_part(out, detail::capped(body, options.tool_result_cap));
            }
        } else if (const auto* b = std::get_if<BashExecutionMessage>(&msg)) {
            append_part(out, b->command);
            if (options.tool_results)
                append_part(out, detail::capped(b->output, options.tool_result_cap));
        } else if (const auto* c = std::get_if<CustomMessage>(&msg)) {
            detail::append_content(out, c->content, options);
        } else if (const auto* bs = std::get_if<BranchSummaryMessage>(&msg)) {
            append_part(out, bs->summary);
        } else if (const auto* cs = std::get_if<CompactionSummaryMessage>(&msg)) {
            append_part(out, cs->summary);
        }
    } else if (const auto* c = std::get_if<CompactionEntry>(&entry)) {
        append_part(out, c->summary);
    } else if (const auto* b = std::get_if<BranchSummaryEntry>(&entry)) {
        append_part(out, b->summary);
    } else if (const auto* cm = std::get_if<CustomMessageEntry>(&entry)) {
        detail::append_content(out, cm->content, options);
    } else if (const auto* l = std::get_if<LabelEntry>(&entry)) {
        if (l->label) append_part(out, *l->label);
    } else if (const auto* s = std::get_if<SessionInfoEntry>(&entry)) {
        if (s->name) append_part(out, *s->name);
    }
    return out;
}

/// The text a database index keeps of an entry: the words of search_text_of with thinking and
/// tool results (capped at max_tool_result_cap), normalised as normalize_for_search does, one
/// space between words. Whatever a search with any SearchTextOptions matches in an entry, in
/// words or substring mode, is made of these words, so an index of them finds every candidate
/// (index_words). Empty for entries with nothing to search.
template <class = void>
std::string search_index_text(const SessionTreeEntry& entry) {
    return normalize_for_search(search_text_of(
        entry,
        SearchTextOptions{
            .thinking = true, .tool_results = true, .tool_result_cap = max_tool_result_cap}));
}

/// The role of an entry's message ("user", "tool_result", ...), or "" for other entries.
template <class = void>
std::string_view search_role_of(const SessionTreeEntry& entry) noexcept {
    const AgentMessage* m = message_of(entry);
    return m ? role_of(*m) : std::string_view{};
}

// ---------------------------------------------------------------------------------------------
// Matching, scoring, snippets

/// A marked stretch of a snippet: bytes [begin, end) matched a term.
struct SnippetMark {
    std::size_t begin = 0;
    std::size_t end = 0;
    friend bool operator==(const SnippetMark&, const SnippetMark&) = default;
};

/// The outcome of matching one text: whether it matched, its score, and its snippet.
struct TextMatch {
    bool matched = false;
    double score = 0;
    std::string snippet;
    std::vector<SnippetMark> marks;
};

/// How long snippets are (bytes of the original text, about).
inline constexpr std::size_t snippet_bytes = 160;

namespace detail {

struct Span {
    std::size_t begin = 0;
    std::size_t end = 0;
};

// Where a words-mode term occurs among the tokens: the original byte spans of each occurrence.
template <class T = void>
std::vector<Span> word_term_spans(const SearchTerm& term,
                                  const dependent<std::vector<SearchToken>, T>& tokens) {
    dependent<std::vector<Span>, T> out;
    const std::size_t n = term.tokens.size();
    if (n == 0 || tokens.size() < n) return out;
    for (std::size_t i = 0; i + n <= tokens.size(); ++i) {
        bool ok = true;
        for (std::size_t k = 0; k < n && ok; ++k) {
            const std::string& want = term.tokens[k];
            const std::string& have = tokens[i + k].norm;
            if (k + 1 == n && term.prefix)
                ok = have.compare(0, want.size(), want) == 0;
            else
                ok = have == want;
        }
        if (ok) out.push_back(Span{tokens[i].begin, tokens[i + n - 1].end});
    }
    return out;
}

/// True when every byte of `bytes` is ASCII (below 0x80): such bytes fold (fold_bytes) one to
/// one, 'A'..'Z' to 'a'..'z' and every other byte to itself.
template <class = void>
bool all_ascii(std::string_view bytes) noexcept {
    const char* p = bytes.data();
    const char* end = p + bytes.size();
#if defined(__SSE2__)
    __m128i any = _mm_setzero_si128();
    for (; end - p >= 64; p += 64) {
        const auto* q = reinterpret_cast<const __m128i*>(p);
        any = _mm_or_si128(
            any, _mm_or_si128(_mm_or_si128(_mm_loadu_si128(q), _mm_loadu_si128(q + 1)),
                              _mm_or_si128(_mm_loadu_si128(q + 2), _mm_loadu_si128(q + 3))));
    }
    if (_mm_movemask_epi8(any) != 0) return false;
#endif
    for (; p != end; ++p)
        if ((static_cast<unsigned char>(*p) & 0x80) != 0) return false;
    return true;
}

/// Where the folded `needle` (as fold_bytes gives it) first occurs in the folded form of
/// `haystack`, an ASCII text (all_ascii), without folding it: with SSE2, 16 places a step are
/// tested on the needle's first and last bytes in both cases, then compared whole. npos when
/// nowhere, and for a needle that is not ASCII (folded ASCII text cannot hold it).
template <class = void>
std::size_t find_ascii_folded(std::string_view haystack, std::string_view needle) noexcept {
    const auto fold = [](char c) noexcept {
        return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
    };
    const auto upper = [](char c) noexcept {
        return c >= 'a' && c <= 'z' ? static_cast<char>(c - ('a' - 'A')) : c;
    };
    const std::size_t n = needle.size();
    if (n == 0) return 0;
    if (n > haystack.size() || !all_ascii(needle)) return std::string_view::npos;
    const char* h = haystack.data();
    const auto same_at = [&](std::size_t at) noexcept {
        for (std::size_t k = 0; k < n; ++k)
            if (fold(h[at + k]) != needle[k]) return false;
        return true;
    };
    const std::size_t last_start = haystack.size() - n;  // the last place a match can start
    std::size_t i = 0;
#if defined(__SSE2__)
    const __m128i first = _mm_set1_epi8(needle.front());
    const __m128i first_upper = _mm_set1_epi8(upper(needle.front()));
    const __m128i last = _mm_set1_epi8(needle.back());
    const __m128i last_upper = _mm_set1_epi8(upper(needle.back()));
    for (; i + 16 <= last_start + 1; i += 16) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i + n - 1));
        const __m128i at_first =
            _mm_or_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(a, first_upper));
        const __m128i at_last =
            _mm_or_si128(_mm_cmpeq_epi8(b, last), _mm_cmpeq_epi8(b, last_upper));
        auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(at_first, at_last)));
        while (mask != 0) {
            const auto bit = static_cast<std::size_t>(__builtin_ctz(mask));
            if (same_at(i + bit)) return i + bit;
            mask &= mask - 1;
        }
    }
#endif
    for (; i <= last_start; ++i)
        if (fold(h[i]) == needle.front() && same_at(i)) return i;
    return std::string_view::npos;
}

/// How many words an ASCII text (all_ascii) has: its runs of letters and digits. With SSE2, 16
/// bytes a step.
template <class = void>
std::size_t count_ascii_words(std::string_view text) noexcept {
    const char* p = text.data();
    std::size_t i = 0;
    std::size_t count = 0;
    unsigned previous = 0;  // 1 when the byte before `i` is a letter or digit
#if defined(__SSE2__)
    const __m128i below_digits = _mm_set1_epi8('0' - 1);
    const __m128i above_digits = _mm_set1_epi8('9' + 1);
    const __m128i below_letters = _mm_set1_epi8('a' - 1);
    const __m128i above_letters = _mm_set1_epi8('z' + 1);
    const __m128i small = _mm_set1_epi8(0x20);  // 'A'..'Z' | 0x20 is 'a'..'z'
    for (; i + 16 <= text.size(); i += 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
        const __m128i digit =
            _mm_and_si128(_mm_cmpgt_epi8(x, below_digits), _mm_cmpgt_epi8(above_digits, x));
        const __m128i lower = _mm_or_si128(x, small);
        const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(lower, below_letters),
                                             _mm_cmpgt_epi8(above_letters, lower));
        const auto word = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(digit, letter)));
        count += static_cast<std::size_t>(__builtin_popcount(word & ~((word << 1) | previous)));
        previous = (word >> 15) & 1U;
    }
#endif
    for (; i < text.size(); ++i) {
        const unsigned word = ascii_word_char(static_cast<unsigned char>(p[i])) ? 1U : 0U;
        count += word & ~previous;
        previous = word;
    }
    return count;
}

/// Where the first byte at or after `from` that is not ASCII is in `bytes`; its size when none.
/// With SSE2, 16 bytes a step.
template <class = void>
std::size_t first_non_ascii(std::string_view bytes, std::size_t from) noexcept {
    const char* p = bytes.data();
    std::size_t i = from;
#if defined(__SSE2__)
    for (; i + 16 <= bytes.size(); i += 16) {
        const auto high = static_cast<unsigned>(
            _mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
        if (high != 0) return i + static_cast<std::size_t>(__builtin_ctz(high));
    }
#endif
    for (; i < bytes.size(); ++i)
        if ((static_cast<unsigned char>(p[i]) & 0x80) != 0) return i;
    return bytes.size();
}

/// The places of each term of a words-mode `query` in `text` (word_term_spans of each, in the
/// query's order) and the text's number of words, from one walk over its words without keeping
/// them: for each term, the set of its first words that the latest words match is kept as bits.
/// False (and nothing written) for a term of 64 words or more, which the walk does not follow.
///
/// Between phrases, the walk passes over the ASCII words that cannot start one, counting them
/// 16 bytes a step (count_ascii_words): a word of ASCII bytes is its own lower case, so it can be
/// a term's first word only where that word's bytes occur (find_ascii_folded); a word holding
/// other bytes is always walked. The walk goes on at the word that holds the next such
/// occurrence or the next byte that is not ASCII, whichever comes first.
template <class T = void>
bool stream_word_terms(const dependent<SearchQuery, T>& query, std::string_view text,
                       std::vector<std::vector<Span>>& found, std::size_t& words) {
    std::size_t longest = 1;
    for (const auto& term : query.terms) longest = std::max(longest, term.tokens.size());
    if (longest >= 64) return false;
    found.assign(query.terms.size(), {});
    dependent<std::vector<std::uint64_t>, T> partial(query.terms.size(), 0);
    dependent<std::vector<std::size_t>, T> begins(longest, 0);  // the latest words' places
    std::size_t count = 0;
    std::string norm;
    constexpr std::size_t unknown = std::string_view::npos;
    const bool can_skip = std::all_of(query.terms.begin(), query.terms.end(), [](const auto& t) {
        return t.tokens.empty() || !t.tokens.front().empty();
    });
    std::size_t stretch_end = 0;  // the end of the ASCII stretch the walk is in
    // Where each term's first word next occurs in the stretch (its end when nowhere).
    dependent<std::vector<std::size_t>, T> next_at(query.terms.size(), unknown);
    const auto skip = [&](std::size_t at) {
        if (!can_skip) return at;
        for (const std::uint64_t p : partial)
            if (p != 0) return at;  // a phrase is under way: every word counts
        if (at >= stretch_end) {
            stretch_end = first_non_ascii(text, at);
            std::fill(next_at.begin(), next_at.end(), unknown);
        }
        std::size_t to = stretch_end;
        for (std::size_t j = 0; j < query.terms.size(); ++j) {
            if (query.terms[j].tokens.empty()) continue;
            if (next_at[j] == unknown || next_at[j] < at) {
                const std::size_t found_at = find_ascii_folded(text.substr(at, stretch_end - at),
                                                               query.terms[j].tokens.front());
                next_at[j] = found_at == unknown ? stretch_end : at + found_at;
            }
            to = std::min(to, next_at[j]);
        }
        while (to > at && ascii_word_char(static_cast<unsigned char>(text[to - 1]))) --to;
        count += count_ascii_words(text.substr(at, to - at));
        return to;
    };
    for_each_search_word(
        text, norm,
        [&](std::string_view word, std::size_t begin, std::size_t end) {
            begins[count % longest] = begin;
            for (std::size_t j = 0; j < query.terms.size(); ++j) {
                const SearchTerm& term = query.terms[j];
                const std::size_t n = term.tokens.size();
                if (n == 0) continue;
                // Bit k: the latest k words are the term's first k; the word may be its word k.
                std::uint64_t try_at = partial[j] | 1;
                std::uint64_t next = 0;
                while (try_at != 0) {
                    const auto k = static_cast<std::size_t>(__builtin_ctzll(try_at));
                    try_at &= try_at - 1;
                    const std::string& want = term.tokens[k];
                    const bool same = k + 1 == n && term.prefix
                                          ? word.substr(0, want.size()) == want
                                          : word == want;
                    if (same) next |= std::uint64_t{1} << (k + 1);
                }
                if ((next >> n) & 1U) {
                    found[j].push_back(Span{begins[(count + 1 - n) % longest], end});
                    next &= ~(std::uint64_t{1} << n);
                }
                partial[j] = next;
            }
            ++count;
        },
        skip);
    words = count;
    return true;
}

template <class T = void>
std::vector<Span> substring_term_spans(const SearchTerm& term,
                                       const dependent<FoldedText, T>& folded) {
    dependent<std::vector<Span>, T> out;
    const std::string& want = term.tokens.front();
    if (want.empty()) return out;
    std::size_t from = 0;
    while (true) {
        const std::size_t at = folded.text.find(want, from);
        if (at == std::string::npos) break;
        out.push_back(Span{folded.origin[at], folded.origin[at + want.size()]});
        from = at + 1;
    }
    return out;
}

// A cut of `text` at or before `at` that does not split a character.
template <class = void>
std::size_t char_floor(std::string_view text, std::size_t at) {
    if (at >= text.size()) return text.size();
    while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
    return at;
}

template <class T = void>
void make_snippet(std::string_view text, dependent<std::vector<Span>, T> spans,
                  dependent<TextMatch, T>& out) {
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.begin < b.begin; });
    const std::size_t first = spans.empty() ? 0 : spans.front().begin;
    std::size_t begin = first > snippet_bytes / 4 ? first - snippet_bytes / 4 : 0;
    begin = char_floor(text, begin);
    // Start at a word when one starts shortly before the cut.
    if (begin > 0) {
        const std::size_t space = text.find_first_of(" \n\t", begin);
        if (space != std::string_view::npos && space < first) begin = space + 1;
    }
    std::size_t end = char_floor(text, std::min(text.size(), begin + snippet_bytes));
    for (const auto& s : spans)
        if (s.begin < end && s.end > end && s.begin >= begin) end = s.end;  // whole first mark
    std::string& snippet = out.snippet;
    if (begin > 0) snippet += "…";
    const std::size_t shift = snippet.size();
    for (std::size_t k = begin; k < end; ++k) {
        const char c = text[k];
        snippet.push_back(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
    }
    if (end < text.size()) snippet += "…";
    std::size_t last_end = 0;
    for (const auto& s : spans) {
        if (s.begin < begin || s.end > end || s.begin < last_end) continue;
        out.marks.push_back(SnippetMark{s.begin - begin + shift, s.end - begin + shift});
        last_end = s.end;
    }
}

}  // namespace detail

/// Matches a text against a query: every term that is not excluded occurs, no excluded term
/// does. The score (higher is better) grows with the number of occurrences of each term
/// (saturating) and shrinks slowly with the length of the text; the snippet is about
/// snippet_bytes of the text around the first occurrence, newlines as spaces, "…" where it was
/// cut, with each occurrence of a term marked.
///
/// Complexity: linear in the size of `text` times the number of terms.
template <class T = void>
TextMatch match_text(const detail::dependent<SearchQuery, T>& query, std::string_view text) {
    detail::dependent<TextMatch, T> out;
    if (text.empty() || query.terms.empty()) return out;
    detail::dependent<std::vector<detail::Span>, T> spans;
    double score = 0;
    std::size_t length = 0;
    detail::dependent<std::vector<detail::SearchToken>, T> tokens;
    detail::dependent<detail::FoldedText, T> folded;
    detail::dependent<std::vector<std::vector<detail::Span>>, T> streamed;  // when streamed
    if (query.mode == SearchMode::words) {
        if (!detail::stream_word_terms(query, text, streamed, length)) {
            tokens = detail::tokenize_for_search(text);
            length = tokens.size();
        }
    } else {
        folded = detail::fold_for_substring(text);
        length = folded.text.size() / 6 + 1;
    }
    for (std::size_t j = 0; j < query.terms.size(); ++j) {
        const SearchTerm& term = query.terms[j];
        const auto found = !streamed.empty() ? std::move(streamed[j])
                           : query.mode == SearchMode::words
                               ? detail::word_term_spans(term, tokens)
                               : detail::substring_term_spans(term, folded);
        if (term.excluded) {
            if (!found.empty()) return out;
            continue;
        }
        if (found.empty()) return out;
        const auto tf = static_cast<double>(found.size());
        score += (tf * 2.2) / (tf + 1.2) * (term.tokens.size() > 1 ? 1.5 : 1.0);
        spans.insert(spans.end(), found.begin(), found.end());
    }
    out.matched = true;
    out.score = score / (1.0 + std::log1p(static_cast<double>(length) / 64.0));
    detail::make_snippet(text, std::move(spans), out);
    return out;
}

/// A snippet with its marks written in: `open` before and `close` after each marked stretch.
/// Example: `marked_snippet(hit.snippet, hit.marks, "[", "]")`.
template <class = void>
std::string marked_snippet(std::string_view snippet, const std::vector<SnippetMark>& marks,
                           std::string_view open, std::string_view close) {
    std::string out;
    std::size_t at = 0;
    for (const auto& m : marks) {
        if (m.begin < at || m.end > snippet.size()) continue;
        out.append(snippet.substr(at, m.begin - at));
        out.append(open);
        out.append(snippet.substr(m.begin, m.end - m.begin));
        out.append(close);
        at = m.end;
    }
    out.append(snippet.substr(at));
    return out;
}

// ---------------------------------------------------------------------------------------------
// Options and results

/// The order of hits.
enum class SearchOrder {
    relevance,  ///< highest score first
    newest,     ///< newest entry first (by its timestamp)
};

/// Where a page of search results starts: after the hit with these keys. Take it from
/// SearchResult::next; it stays valid while sessions are appended to (keyset paging).
struct SearchCursor {
    double score = 0;
    std::string timestamp;
    std::string session_id;
    std::uint64_t seq = 0;
    friend bool operator==(const SearchCursor&, const SearchCursor&) = default;
};

/// What a search looks at and how it returns hits.
struct SearchOptions {
    SearchMode mode = SearchMode::words;       ///< for the overloads that take the query as text
    SearchTextOptions text{};                  ///< which text of an entry is searched
    std::optional<std::string> cwd{};          ///< only sessions of this working directory
    std::optional<std::string> since{};        ///< only entries at or after this ISO 8601 UTC time
    std::optional<std::string> until{};        ///< only entries before this ISO 8601 UTC time
    std::vector<std::string> roles{};          ///< only message entries of these roles (empty: any)
    std::vector<std::string> exclude_roles{};  ///< never message entries of these roles
    std::vector<std::string> types{};          ///< only entries of these types (empty: any)
    std::vector<std::string> exclude_types{};  ///< never entries of these types
    /// Only sessions whose name contains this text (compared as words-mode text is: case and
    /// diacritics ignored).
    std::optional<std::string> session_name{};
    /// Only sessions whose header metadata holds each of these keys with an equal value.
    Json metadata = Json(Json::value_t::object);
    SearchOrder order = SearchOrder::relevance;
    std::size_t limit = 50;                            ///< at most this many hits a page
    std::optional<SearchCursor> after = std::nullopt;  ///< keyset paging: start after this hit
};

/// One entry that matched.
struct SearchHit {
    std::string session_id;
    std::string cwd;
    std::string session_name;  ///< empty when the session has none
    std::string entry_id;
    std::string entry_type;  ///< "message", "compaction", "label", ...
    std::string role;        ///< the message's role; empty for other entries
    std::string timestamp;   ///< the entry's
    std::uint64_t seq = 0;   ///< the entry's position in its session (append order, from 0)
    double score = 0;
    std::string snippet;
    std::vector<SnippetMark> marks;

    /// The cursor that starts the page after this hit.
    [[nodiscard]] SearchCursor cursor() const {
        return SearchCursor{score, timestamp, session_id, seq};
    }
};

/// A page of hits in the options' order and the cursor of the next page when more follow.
struct SearchResult {
    std::vector<SearchHit> hits;
    std::optional<SearchCursor> next;
};

/// Receives hits as a search finds them (in no particular order); return false to stop.
using SearchHitSink = std::function<bool(SearchHit&&)>;

namespace detail {

// True for the start of an ISO 8601 UTC time as entries carry it ("2026", "2026-12-02",
// "2026-12-02T07:43", "2026-12-02T07:43:23.123Z"): it then compares with entry times as text.
template <class = void>
bool is_time_bound(std::string_view t) {
    constexpr std::string_view shape = "dddd-dd-ddTdd:dd:dd.dddZ";
    // Whole parts only: a year, a month, a day, an hour, minutes, seconds, milliseconds, Z.
    constexpr std::size_t sizes[] = {4, 7, 10, 13, 16, 19, 23, 24};
    if (std::find(std::begin(sizes), std::end(sizes), t.size()) == std::end(sizes)) return false;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (shape[i] == 'd' ? (t[i] < '0' || t[i] > '9') : t[i] != shape[i]) return false;
    }
    return true;
}

template <class = void>
void check_search_options(const SearchOptions& options) {
    if (options.limit == 0) bad_query("limit is 0; ask for at least one hit");
    if (!options.metadata.is_object()) bad_query("the metadata filter is not a JSON object");
    if (options.text.tool_result_cap > max_tool_result_cap)
        bad_query("tool_result_cap " + std::to_string(options.text.tool_result_cap) +
                  " is above max_tool_result_cap (" + std::to_string(max_tool_result_cap) + ")");
    if (options.since && !is_time_bound(*options.since))
        bad_query("since " + quoted_term(*options.since) +
                  " is not an ISO 8601 UTC time such as 2026-12-02 or 2026-12-02T07:43:23.123Z");
    if (options.until && !is_time_bound(*options.until))
        bad_query("until " + quoted_term(*options.until) +
                  " is not an ISO 8601 UTC time such as 2026-12-02 or 2026-12-02T07:43:23.123Z");
}

/// The session-level filters: cwd, metadata and name.
template <class = void>
bool session_passes(const SearchOptions& options, const SessionHeader& header,
                    std::string_view name) {
    if (options.cwd && header.cwd != *options.cwd) return false;
    for (const auto& [key, value] : options.metadata.items()) {
        if (!header.metadata.is_object()) return false;
        const auto it = header.metadata.find(key);
        if (it == header.metadata.end() || !json_equal(*it, value)) return false;
    }
    if (options.session_name) {
        const std::string want = normalize_for_search(*options.session_name);
        const std::string have = normalize_for_search(name);
        if (have.find(want) == std::string::npos) return false;
    }
    return true;
}

template <class = void>
bool listed(const std::vector<std::string>& list, std::string_view value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

/// What an index of words (the words of search_index_text) can check of an entry that might
/// match a query.
struct IndexWord {
    enum class Kind {
        whole,   ///< the entry holds this word
        prefix,  ///< the entry holds a word that starts with this
        part,    ///< the entry holds a word that contains this
    };
    std::string text;
    Kind kind = Kind::whole;
    friend bool operator==(const IndexWord&, const IndexWord&) = default;
};

template <class = void>
std::size_t char_count(std::string_view s) {
    std::size_t chars = 0;
    for (std::size_t k = 0; k < s.size();) {
        next_code_point(s, k);
        ++chars;
    }
    return chars;
}

/// The conditions an entry that can match `query` meets in an index of its words: each of them
/// holds for every such entry, so the entries meeting all of them are a superset of the hits
/// (the matcher then decides). Words mode: each word of a term that is not excluded is a whole
/// word, and the last one a prefix when the term ends with `*` (prefixes of one character are
/// left out: they narrow down nothing). Substring mode: a term is cut into its words as the
/// text is; a word with a non-word character (or the term's start or end) on both sides is a
/// whole word of the text, one that ends the term is the start of a word, and one that starts
/// it is part of a word (at least two characters, else left out). Empty: the index cannot
/// narrow the search down.
template <class T = void>
std::vector<IndexWord> index_words(const dependent<SearchQuery, T>& query) {
    dependent<std::vector<IndexWord>, T> out;
    const auto add = [&](IndexWord w) {
        if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(std::move(w));
    };
    for (const auto& term : query.terms) {
        if (term.excluded) continue;
        if (query.mode == SearchMode::words) {
            for (std::size_t k = 0; k < term.tokens.size(); ++k) {
                const bool prefix = term.prefix && k + 1 == term.tokens.size();
                if (prefix && char_count(term.tokens[k]) < 2) continue;
                add(IndexWord{term.tokens[k],
                              prefix ? IndexWord::Kind::prefix : IndexWord::Kind::whole});
            }
            continue;
        }
        // The runs of word characters of the folded term, each ideograph or kana a run of its
        // own, as tokenize_for_search cuts the text (whose folded form holds the term).
        const std::string& s = term.tokens.front();
        struct Run {
            std::size_t begin, end;
            bool single;
        };
        dependent<std::vector<Run>, T> runs;
        bool in_run = false;
        for (std::size_t i = 0; i < s.size();) {
            const std::size_t at = i;
            const char32_t cp = next_code_point(s, i);
            if (!is_word_char(cp)) {
                in_run = false;
                continue;
            }
            const bool single = is_single_char_word(cp);
            if (!in_run || single) runs.push_back(Run{at, at, single});
            runs.back().end = i;
            in_run = !single;
        }
        for (std::size_t r = 0; r < runs.size(); ++r) {
            const Run& run = runs[r];
            const bool starts = run.single || run.begin > 0;
            const bool ends = run.single || run.end < s.size();
            std::string text = s.substr(run.begin, run.end - run.begin);
            if (starts && ends)
                add(IndexWord{std::move(text), IndexWord::Kind::whole});
            else if (char_count(text) >= 2)
                add(IndexWord{std::move(text),
                              starts ? IndexWord::Kind::prefix : IndexWord::Kind::part});
        }
    }
    return out;
}

/// True when a search_index_text (words and single spaces) meets every one of `words`: the
/// check index_words asks of an index, made on the text itself.
///
/// Complexity: linear in the size of `text` times the number of words.
template <class = void>
bool index_text_holds(const std::vector<IndexWord>& words, std::string_view text) {
    for (const IndexWord& w : words) {
        bool found = false;
        for (std::size_t at = text.find(w.text); at != std::string_view::npos && !found;
             at = text.find(w.text, at + 1)) {
            const std::size_t end = at + w.text.size();
            const bool starts = at == 0 || text[at - 1] == ' ';
            const bool ends = end == text.size() || text[end] == ' ';
            found = w.kind == IndexWord::Kind::part ||
                    (starts && (w.kind == IndexWord::Kind::prefix || ends));
        }
        if (!found) return false;
    }
    return true;
}

/// The counts at which an index records that an entry repeats a word (word_repeat_marks): the
/// entry's search_index_text holds the word at least this many times. A level of its own for
/// 3: most entries that repeat a word hold it twice, and with the next level at 4 each of them
/// would be bounded as holding it 3 times, which lets far more of them compete for a page by
/// relevance than can reach it.
inline constexpr std::size_t repeat_levels[] = {2, 3, 4, 8};

/// The mark of a word an entry holds at least `level` times: the word, `~`, the level (`~` is
/// never part of a word, so a mark is never a word).
template <class = void>
std::string repeat_mark(std::string_view word, std::size_t level) {
    std::string out(word);
    out.push_back('~');
    out += std::to_string(level);
    return out;
}

/// The repeat marks of a search_index_text (words and single spaces): for each word it holds
/// twice or more, the mark of every level of repeat_levels it reaches, one space between.
/// Empty when no word is repeated. An index of them bounds how often an entry holds a word,
/// and so its score, without reading the entry.
///
/// With `distinct`, also writes there the text's words each once, sorted, one space between:
/// what an index that keeps which entries hold a word, not how often, needs (one sort for
/// both).
///
/// Complexity: O(n log n) in its n words (sorted to count them).
template <class T = void>
std::string word_repeat_marks(std::string_view text, std::string* distinct = nullptr) {
    if (distinct != nullptr) distinct->clear();
    // Each word with its first 8 bytes as a big-endian number (zero-padded): the numbers compare
    // in the words' byte order (where they differ, so do the words, the same way), and most
    // comparisons of the sort end there, without a memcmp. Equal numbers fall back to the words.
    struct Keyed {
        std::uint64_t head;
        std::string_view word;
    };
    dependent<std::vector<Keyed>, T> words;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find(' ', at);
        if (end == std::string_view::npos) end = text.size();
        if (end > at) {
            Keyed k{0, text.substr(at, end - at)};
            const std::size_t n = std::min<std::size_t>(k.word.size(), 8);
            for (std::size_t b = 0; b < n; ++b)
                k.head |= std::uint64_t{static_cast<unsigned char>(k.word[b])} << (56 - 8 * b);
            words.push_back(k);
        }
        at = end + 1;
    }
    std::string out;
    if (words.size() < 2) {
        if (distinct != nullptr && !words.empty()) distinct->assign(words.front().word);
        return out;
    }
    std::sort(words.begin(), words.end(), [](const Keyed& a, const Keyed& b) {
        return a.head != b.head ? a.head < b.head : a.word < b.word;
    });
    for (std::size_t i = 0; i < words.size();) {
        const std::string_view word = words[i].word;
        std::size_t j = i + 1;
        while (j < words.size() && words[j].word == word) ++j;
        if (distinct != nullptr) {
            if (!distinct->empty()) distinct->push_back(' ');
            distinct->append(word);
        }
        for (const std::size_t level : repeat_levels) {
            if (j - i < level) break;
            if (!out.empty()) out.push_back(' ');
            out += repeat_mark(word, level);
        }
        i = j;
    }
    return out;
}

/// The most times an entry can hold a word, given the highest level of repeat_levels at which
/// it is marked (`marked`: that level's index, or -1 when the word is not marked, that is held
/// once at most); infinity at the highest level.
template <class = void>
double most_repeats(int marked) noexcept {
    constexpr std::size_t levels = std::size(repeat_levels);
    if (marked < 0) return 1;
    const auto at = static_cast<std::size_t>(marked);
    if (at + 1 >= levels) return std::numeric_limits<double>::infinity();
    return static_cast<double>(repeat_levels[at + 1] - 1);
}

/// Where `needle` first occurs in `haystack` (npos when nowhere). With SSE2, 16 places a step
/// are tested at once on the needle's first and last bytes, then compared whole: a common
/// first byte does not stop the search at each of its places, as find and memchr do.
template <class = void>
std::size_t find_bytes(std::string_view haystack, std::string_view needle) noexcept {
    const std::size_t n = needle.size();
    if (n == 0) return 0;
    if (n > haystack.size()) return std::string_view::npos;
#if defined(__SSE2__)
    const char* h = haystack.data();
    const std::size_t last_start = haystack.size() - n;  // the last place a match can start
    const __m128i first = _mm_set1_epi8(needle.front());
    const __m128i last = _mm_set1_epi8(needle.back());
    std::size_t i = 0;
    for (; i + 16 <= last_start + 1; i += 16) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i + n - 1));
        auto mask = static_cast<unsigned>(
            _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last))));
        while (mask != 0) {
            const auto bit = static_cast<std::size_t>(__builtin_ctz(mask));
            if (std::memcmp(h + i + bit, needle.data(), n) == 0) return i + bit;
            mask &= mask - 1;
        }
    }
    const std::size_t rest = haystack.substr(i).find(needle);
    return rest == std::string_view::npos ? rest : i + rest;
#else
    return haystack.find(needle);
#endif
}

/// Where `a` or `b` first occurs in `haystack` (npos when neither does), in one pass: with SSE2,
/// 16 places a step are tested on each needle's first and last bytes, as find_bytes tests one.
/// Two finds would read a haystack that holds neither twice. The needles must not be empty.
template <class = void>
std::size_t find_either(std::string_view haystack, std::string_view a,
                        std::string_view b) noexcept {
    const std::size_t shortest = std::min(a.size(), b.size());
    if (shortest > haystack.size()) return std::string_view::npos;
    const char* h = haystack.data();
    const auto at = [&](std::size_t i, std::string_view needle) {
        return i + needle.size() <= haystack.size() &&
               std::memcmp(h + i, needle.data(), needle.size()) == 0;
    };
    std::size_t i = 0;
#if defined(__SSE2__)
    const std::size_t longest = std::max(a.size(), b.size());
    const __m128i a_first = _mm_set1_epi8(a.front());
    const __m128i a_last = _mm_set1_epi8(a.back());
    const __m128i b_first = _mm_set1_epi8(b.front());
    const __m128i b_last = _mm_set1_epi8(b.back());
    for (; i + 15 + longest <= haystack.size(); i += 16) {
        const auto load = [&](std::size_t k) {
            return _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + k));
        };
        const __m128i at_a = _mm_and_si128(_mm_cmpeq_epi8(load(i), a_first),
                                           _mm_cmpeq_epi8(load(i + a.size() - 1), a_last));
        const __m128i at_b = _mm_and_si128(_mm_cmpeq_epi8(load(i), b_first),
                                           _mm_cmpeq_epi8(load(i + b.size() - 1), b_last));
        auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(at_a, at_b)));
        while (mask != 0) {
            const auto bit = static_cast<std::size_t>(__builtin_ctz(mask));
            if (at(i + bit, a) || at(i + bit, b)) return i + bit;
            mask &= mask - 1;
        }
    }
#endif
    for (; i + shortest <= haystack.size(); ++i)
        if (at(i, a) || at(i, b)) return i;
    return std::string_view::npos;
}

/// The bytes of a JSON document folded as fold_for_substring folds text (without the offsets),
/// into `out` (after what it holds, with `append`): runs of ASCII 16 or 8 bytes at a time, other
/// characters one by one. Folding never makes the text longer.
///
/// Complexity: linear in the size of `bytes`.
template <class = void>
void fold_bytes(std::string_view bytes, std::string& out, bool append = false) {
    const std::size_t base = append ? out.size() : 0;
    out.resize(base + bytes.size());
    char* w = out.data() + base;
    const char* p = bytes.data();
    const char* end = p + bytes.size();
    constexpr std::uint64_t ones = 0x0101010101010101ULL;
    constexpr std::uint64_t highs = 0x8080808080808080ULL;
    std::string one;  // one folded character
    while (p != end) {
#if defined(__SSE2__)
        // 16 ASCII bytes a step: 'A'..'Z' (compared as signed bytes, all below 0x80) get 0x20.
        const __m128i below_a = _mm_set1_epi8('A' - 1);
        const __m128i above_z = _mm_set1_epi8('Z' + 1);
        const __m128i case_bit = _mm_set1_epi8(0x20);
        while (end - p >= 16) {
            const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            if (_mm_movemask_epi8(x) != 0) break;
            const __m128i upper =
                _mm_and_si128(_mm_cmpgt_epi8(x, below_a), _mm_cmplt_epi8(x, above_z));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(w),
                             _mm_or_si128(x, _mm_and_si128(upper, case_bit)));
            p += 16;
            w += 16;
        }
#endif
        while (end - p >= 8) {
            std::uint64_t x;
            std::memcpy(&x, p, 8);
            if ((x & highs) != 0) break;
            // Bytes below 0x80: 'A'..'Z' are those that reach 0x80 when 0x3F is added and do not
            // when 0x25 is; each gets 0x20.
            const std::uint64_t upper = ((x + ones * 0x3FU) ^ (x + ones * 0x25U)) & highs;
            x |= upper >> 2;
            std::memcpy(w, &x, 8);
            p += 8;
            w += 8;
        }
        if (p == end) break;
        const auto c = static_cast<unsigned char>(*p);
        if (c < 0x80) {
            *w++ = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
            ++p;
            continue;
        }
        std::size_t i = static_cast<std::size_t>(p - bytes.data());
        const char32_t cp = next_code_point(bytes, i);
        one.clear();
        append_folded(one, cp == 0xFFFD ? char32_t{' '} : cp);
        w = std::copy(one.begin(), one.end(), w);
        p = bytes.data() + i;
    }
    out.resize(static_cast<std::size_t>(w - out.data()));
}

/// True when the folded bytes of a document (fold_bytes) hold every one of `words`.
template <class = void>
bool folded_holds(const std::vector<IndexWord>& words, std::string_view folded) {
    return std::all_of(words.begin(), words.end(), [&](const IndexWord& w) {
        return find_bytes(folded, w.text) != std::string_view::npos;
    });
}

/// True for the first byte of a character whose folded form (fold_bytes) holds ASCII letters
/// or digits, or nothing: U+00C0..U+017F (`é` → `e`, `ß` → `ss`; lead bytes 0xC3..0xC5) and the
/// combining marks U+0300..U+036F, which vanish (lead bytes 0xCC and 0xCD). Every other
/// character folds to characters that are not ASCII, or (U+FFFD, invalid bytes) to a space.
constexpr bool folds_toward_ascii(unsigned char lead) noexcept {
    return (lead >= 0xC3 && lead <= 0xC5) || lead == 0xCC || lead == 0xCD;
}

/// Calls `f(at)` for each byte of `bytes` that folds_toward_ascii, in order, while it returns
/// true, and stops at the first `\u` escape: true when it found one. With SSE2, 16 bytes a step:
/// `f` sees the bytes of the steps before the one that holds the escape.
template <class F>
bool escape_or_each_toward_ascii(std::string_view bytes, F&& f) {
    const char* h = bytes.data();
    std::size_t i = 0;
#if defined(__SSE2__)
    const __m128i lead_c3 = _mm_set1_epi8(static_cast<char>(0xC3));
    const __m128i lead_c4 = _mm_set1_epi8(static_cast<char>(0xC4));  // and 0xC5
    const __m128i lead_cc = _mm_set1_epi8(static_cast<char>(0xCC));  // and 0xCD
    const __m128i low_bit_off = _mm_set1_epi8(static_cast<char>(0xFE));
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i letter_u = _mm_set1_epi8('u');
    for (; i + 17 <= bytes.size(); i += 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
        const __m128i next = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i + 1));
        if (_mm_movemask_epi8(
                _mm_and_si128(_mm_cmpeq_epi8(x, backslash), _mm_cmpeq_epi8(next, letter_u))) != 0)
            return true;
        const __m128i even = _mm_and_si128(x, low_bit_off);
        auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
            _mm_cmpeq_epi8(x, lead_c3),
            _mm_or_si128(_mm_cmpeq_epi8(even, lead_c4), _mm_cmpeq_epi8(even, lead_cc)))));
        while (mask != 0) {
            if (!f(i + static_cast<std::size_t>(__builtin_ctz(mask)))) return false;
            mask &= mask - 1;
        }
    }
#endif
    for (; i < bytes.size(); ++i) {
        if (h[i] == '\\' && i + 1 < bytes.size() && h[i + 1] == 'u') return true;
        if (folds_toward_ascii(static_cast<unsigned char>(h[i])) && !f(i)) return false;
    }
    return false;
}

/// True when `word` is made of ASCII letters and digits only.
template <class = void>
bool ascii_word(std::string_view word) noexcept {
    return std::all_of(word.begin(), word.end(),
                       [](char c) { return ascii_word_char(static_cast<unsigned char>(c)); });
}

/// folded_holds over the folded bytes of a whole document (fold_bytes), mostly without folding
/// it. Also true when the document has a `\u` escape (which may spell a word). Words of ASCII
/// letters and digits (ascii_word) are looked for in the bytes as they are (find_ascii_folded):
/// an occurrence there is one in the folded bytes. One that is not found there can only be in
/// the folded form of a stretch that holds a character folding toward ASCII
/// (folds_toward_ascii). Such an occurrence of a word of `n` bytes takes at most `n` - 1 ASCII
/// bytes before the first of those characters, after the last and between two of them, and
/// nothing else: it lies within `n` bytes of the characters, whose stretches join when they are
/// that close. Those stretches alone are folded and searched. A document asked for another word
/// is folded whole. `scratch` keeps its buffer from call to call.
///
/// Complexity: linear in the size of `bytes` times the number of words.
template <class T = void>
bool folded_may_hold(const std::vector<IndexWord>& words, std::string_view bytes,
                     std::string& scratch) {
    if (words.empty()) return true;
    if (!std::all_of(words.begin(), words.end(),
                     [](const IndexWord& w) { return !w.text.empty() && ascii_word(w.text); })) {
        if (find_bytes(bytes, "\\u") != std::string_view::npos) return true;
        fold_bytes(bytes, scratch);
        return folded_holds(words, scratch);
    }
    dependent<std::vector<std::string_view>, T> left;  // the words not found as they are
    std::size_t reach = 0;
    for (const IndexWord& w : words) {
        if (find_ascii_folded(bytes, w.text) != std::string_view::npos) continue;
        left.emplace_back(w.text);
        reach = std::max(reach, w.text.size());
    }
    if (left.empty()) return true;
    std::size_t from = 0;  // the stretch waiting to be folded: [from, to)
    std::size_t to = 0;
    const auto search_stretch = [&] {
        if (to <= from || left.empty()) return;
        fold_bytes(bytes.substr(from, to - from), scratch);
        left.erase(std::remove_if(left.begin(), left.end(),
                                  [&](std::string_view w) {
                                      return find_bytes(scratch, w) != std::string_view::npos;
                                  }),
                   left.end());
    };
    const auto continuation = [&](std::size_t at) {
        return at < bytes.size() && (static_cast<unsigned char>(bytes[at]) & 0xC0) == 0x80;
    };
    const bool escape = escape_or_each_toward_ascii(bytes, [&](std::size_t at) {
        std::size_t begin = at > reach ? at - reach : 0;
        std::size_t end = std::min(bytes.size(), at + 2 + reach);
        for (int k = 0; k < 3 && begin > 0 && continuation(begin); ++k) --begin;
        for (int k = 0; k < 3 && continuation(end); ++k) ++end;
        if (begin <= to && to > from) {
            to = std::max(to, end);
            return true;
        }
        search_stretch();
        from = begin;
        to = end;
        return !left.empty();
    });
    if (escape) return true;
    search_stretch();
    return left.empty();
}

/// True unless the bytes of a JSON document (a session file, a line) surely hold none of the
/// entries that meet `words` (index_words): every word must occur in the folded bytes
/// (fold_bytes). A word of an entry's text is written as it is in JSON (word characters are
/// never escaped), so its folded form is in the folded bytes; documents with a `\u` escape are
/// never ruled out. A quick check before decoding.
///
/// Complexity: linear in the size of `bytes` times the number of words.
template <class = void>
bool raw_may_hold(const std::vector<IndexWord>& words, std::string_view bytes) {
    std::string scratch;
    return folded_may_hold(words, bytes, scratch);
}

/// `text` as an FTS5 string literal: in double quotes, its own quotes doubled. Being a string
/// literal, it has no operator of its own.
template <class = void>
std::string fts5_literal(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
    return out;
}

/// The entry-level filters on an entry's type, role ("" for entries that are not messages)
/// and time.
template <class = void>
bool entry_fields_pass(const SearchOptions& options, std::string_view type, std::string_view role,
                       std::string_view timestamp) {
    if (options.since && timestamp < *options.since) return false;
    if (options.until && !(timestamp < *options.until)) return false;
    if (!options.types.empty() && !listed(options.types, type)) return false;
    if (listed(options.exclude_types, type)) return false;
    if (!options.roles.empty() && (role.empty() || !listed(options.roles, role))) return false;
    if (!role.empty() && listed(options.exclude_roles, role)) return false;
    return true;
}

/// The entry-level filters: time, roles, types (applied before any text is looked at).
template <class T = void>
bool entry_passes(const SearchOptions& options, const dependent<SessionTreeEntry, T>& entry) {
    return entry_fields_pass(options, type_of(entry), search_role_of(entry),
                             base_of(entry).timestamp);
}

/// Matches one entry (filters first) and, when it matches, hands its hit to `sink`.
template <class T = void>
bool search_entry(const SearchQuery& query, const SearchOptions& options,
                  const SessionHeader& header, const std::string& name,
                  const dependent<SessionTreeEntry, T>& entry, std::uint64_t seq,
                  const SearchHitSink& sink) {
    if (!entry_passes(options, entry)) return true;
    const std::string text = search_text_of(entry, options.text);
    dependent<TextMatch, T> m = match_text(query, text);
    if (!m.matched) return true;
    dependent<SearchHit, T> hit;
    hit.session_id = header.id;
    hit.cwd = header.cwd;
    hit.session_name = name;
    hit.entry_id = id_of(entry);
    hit.entry_type = std::string(type_of(entry));
    hit.role = std::string(search_role_of(entry));
    hit.timestamp = base_of(entry).timestamp;
    hit.seq = seq;
    hit.score = m.score;
    hit.snippet = std::move(m.snippet);
    hit.marks = std::move(m.marks);
    return sink(std::move(hit));
}

/// Searches every entry of one stored session (read in pages); false when the sink stopped.
template <SessionStorage S>
bool search_storage(const SearchQuery& query, const SearchOptions& options, const S& storage,
                    const SearchHitSink& sink) {
    const SessionHeader& header = storage.metadata();
    const std::string name = storage.get_session_name().value_or("");
    if (!session_passes(options, header, name)) return true;
    constexpr std::size_t page = 1024;
    std::size_t seq = 0;
    while (true) {
        const auto handles = storage.get_entries(EntriesQuery{seq, page});
        if (handles.empty()) return true;
        for (const auto& h : handles) {
            if (!search_entry(query, options, header, name, *h, seq, sink)) return false;
            ++seq;
        }
    }
}

/// True when `a` comes before `b` in the order of the options. Each is a SearchCursor or a
/// SearchHit (whose keys are compared where they are, without making its cursor).
template <class A, class B>
bool hit_before(const A& a, const B& b, SearchOrder order) {
    if (order == SearchOrder::relevance) {
        if (a.score != b.score) return a.score > b.score;
    } else if (a.timestamp != b.timestamp) {
        return a.timestamp > b.timestamp;
    }
    if (a.session_id != b.session_id) return a.session_id < b.session_id;
    return a.seq < b.seq;
}

/// Keeps the hits of the options' page, in order, and sets the next cursor.
template <class T = void>
SearchResult page_hits(dependent<std::vector<SearchHit>, T> hits, const SearchOptions& options) {
    dependent<SearchResult, T> out;
    if (options.after) {
        const SearchCursor& after = *options.after;
        std::erase_if(hits,
                      [&](const SearchHit& h) { return !hit_before(after, h, options.order); });
    }
    const auto before = [&](const SearchHit& a, const SearchHit& b) {
        return hit_before(a, b, options.order);
    };
    if (hits.size() > options.limit) {
        std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(options.limit),
                          hits.end(), before);
        hits.resize(options.limit);
        out.next = hits.back().cursor();
    } else {
        std::sort(hits.begin(), hits.end(), before);
    }
    out.hits = std::move(hits);
    return out;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Searching repositories

/// Streams the hits of `query` over every session of `repo` to `sink`, in no particular order,
/// until the sink returns false; the options' filters and text options apply, their order and
/// paging do not. This generic version reads each session that passes the session filters
/// (list, then open_read_only); repositories with an index or a faster scan overload it.
///
/// Throws invalid_query for options that cannot be met (a limit of 0, metadata that is not an
/// object, an empty time bound); the repository's own errors as it throws them, except that a
/// session removed while the search runs is skipped.
///
/// Complexity: reads every entry of every session that passes the session filters.
template <SessionRepository R>
void search_each(const R& repo, const SearchQuery& query, const SearchOptions& options,
                 const SearchHitSink& sink) {
    detail::check_search_options(options);
    ListOptions lo;
    lo.cwd = options.cwd;
    const SessionList sessions = list(repo, lo);
    for (const auto& listing : sessions.sessions) {
        std::optional<typename R::session_type> session;
        try {
            session.emplace(open_read_only(repo, listing.header.id));
        } catch (const SessionError& e) {
            if (e.code() == ErrorCode::not_found) continue;  // removed since it was listed
            throw;
        }
        if (!detail::search_storage(query, options, session->storage(), sink)) return;
    }
}

/// The hits of `query` over every session of `repo`: the page the options ask for, in their
/// order (relevance: score, then session id, then position; newest: entry time, then session
/// id, then position), with the cursor of the next page. Every repository gives the same hits
/// in the same order for the same sessions: the index of a database only narrows down which
/// entries are read, the matcher of this header decides.
///
/// Throws invalid_query as search_each does; the repository's own errors as it throws them.
///
/// Example: `auto page = search(repo, parse_search_query("login bug"), {});`
///
/// Complexity: that of search_each, plus sorting the hits.
template <SessionRepository R>
SearchResult search(const R& repo, const SearchQuery& query, const SearchOptions& options = {}) {
    detail::check_search_options(options);
    std::vector<SearchHit> hits;
    search_each(repo, query, options, [&hits](SearchHit&& h) {
        hits.push_back(std::move(h));
        return true;
    });
    return detail::page_hits(std::move(hits), options);
}

/// search with the query given as text, parsed in the options' mode (parse_search_query's
/// errors: invalid_query).
template <SessionRepository R>
SearchResult search(const R& repo, std::string_view query, const SearchOptions& options = {}) {
    return search(repo, parse_search_query(query, options.mode), options);
}

}  // namespace agentcore

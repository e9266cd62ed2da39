#pragma once
// A validating JSON scanner for the open path of big session files.
//
// Opening a session must not build a DOM of every payload: a 100,000-entry file would spend
// seconds allocating strings nobody reads. This scanner checks one line's JSON syntax and UTF-8
// (the same rules nlohmann::json's parser applies, so that a line accepted here also parses
// later) and returns the raw text of the few fields the index needs: `type`, `id`, the parent
// id, and where usage lives (`message.role`, `message.usage`, `usage`). It allocates nothing.
//
// Hand-written rather than a dependency: the library depends on nlohmann/json alone, and the
// scanner is a few hundred lines that only need to be fast on strings. Most of a session file is
// string text, so a string's plain bytes are skipped 16 a step with SSE2 (the x86-64 baseline):
// one compare per class of byte that ends a plain run (a quote, a backslash, a control character
// or a non-ASCII byte), then the first of them found with a bit scan. Text in other scripts is
// checked as whole runs of UTF-8 sequences, 16 bytes a step too (utf8_run16). Targets without
// SSE2 use the portable scalar path (8 bytes a step); both paths accept and refuse the same texts
// with the same messages, and the tests run both over the same inputs (ScanPath).
//
// The scanner is also the gate of every other reader: parse_json() validates a text with it
// before building a DOM, so that the codec, the open path and load_session_file accept the same
// lines. Its rules are nlohmann's, with two deliberate exceptions:
// - nesting is limited to max_json_depth containers (the writer refuses deeper values, so every
//   line the library writes reads back, and no reader recurses without bound);
// - a lone UTF-16 surrogate escape (`"\ud83d"`, written by JavaScript when it slices a string
//   between the two halves of an emoji) is accepted, as JavaScript's JSON.parse accepts it. In
//   the decoded std::string it is held as WTF-8: the surrogate's code point encoded like any
//   other three-byte sequence (U+D83D is ED A0 BD). A surrogate pair is always one four-byte
//   sequence. The writer turns such bytes back into the `\udXXX` escape (lowercase hex, as
//   JSON.stringify writes it), so the line round-trips byte for byte.

#include <agentcore/json.hpp>

#include <array>
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace agentcore::detail {

/// How many containers (objects and arrays) deep a JSON value may nest: an entry line's top
/// object is level 1. One limit for every reader and writer of the library: deeper input is
/// refused (invalid_entry), never read with unbounded recursion.
inline constexpr int max_json_depth = 512;

/// Which implementation the scanner steps over plain string bytes with: `vector` 16 bytes a step
/// with SSE2 where the target has it (otherwise it is the scalar path), `scalar` 8 bytes a step
/// in portable code. Only tests name one; every reader uses the default, `vector`.
enum class ScanPath { scalar, vector };

/// True when ScanPath::vector uses vector instructions on this target.
#if defined(__SSE2__)
inline constexpr bool scan_path_vectorized = true;
#else
inline constexpr bool scan_path_vectorized = false;
#endif

/// The raw JSON text of the fields the open path needs from an entry line (empty: absent).
struct ScannedEntry {
    std::string_view type;           ///< raw value of `type`
    std::string_view id;             ///< raw value of `id`
    std::string_view parent_id;      ///< raw value of `parent_id` (native) / `parentId` (pi)
    std::string_view message_role;   ///< raw value of `message.role`
    std::string_view message_usage;  ///< raw value of `message.usage`
    std::string_view usage;          ///< raw value of the top-level `usage`
};

/// Where values of a validated line end, met while a walk skipped over them, so that a later
/// walk of a value inside one skipped before jumps over its parts instead of reading their bytes
/// again. The field check (codec_check.hpp) walks the line's members, then the message's, then
/// each content block's: without it a block's text would be read once per level.
///
/// Holds the containers (up to 8 levels inside the value skipped) and the strings of at least
/// 32 bytes a skip met, in the order they start. Bounded: what does not fit is walked again.
/// Valid for one text, which must not change while it is used. The scanner fills one for the
/// line it accepts (scan_entry with a memo), so that the field check of that line
/// (check_entry_fields with the same memo) reads none of its long values again.
class SkipMemo {
public:
    static constexpr std::size_t capacity = 128;
    static constexpr std::ptrdiff_t min_string = 32;
    static constexpr int levels = 8;  // containers recorded below the one walked

    SkipMemo() noexcept {}  // NOLINT: the spans are written before they are read

    /// Empties the memo and ties it to `text`.
    void reset(std::string_view text) noexcept {
        text_ = text;
        size_ = 0;
    }
    /// True when the memo was filled for `text` (the same bytes at the same address).
    [[nodiscard]] bool covers(std::string_view text) const noexcept {
        return text_.data() == text.data() && text_.size() == text.size();
    }

    /// The end of the value that starts at `begin`, when it was recorded; else nullptr.
    [[nodiscard]] const char* find(const char* begin) const noexcept {
        std::size_t lo = 0;
        std::size_t hi = size_;
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (spans_[mid].begin < begin)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo < size_ && spans_[lo].begin == begin ? spans_[lo].end : nullptr;
    }

    /// Starts a record of the value at `begin` (its end comes with close()); returns its slot, or
    /// `none` when the table is full or `begin` is not after every recorded start.
    std::size_t open(const char* begin) noexcept {
        if (size_ == capacity || (size_ != 0 && spans_[size_ - 1].begin >= begin)) return none;
        spans_[size_] = Span{begin, nullptr};
        return size_++;
    }
    void close(std::size_t slot, const char* end) noexcept {
        if (slot != none) spans_[slot].end = end;
    }
    void add(const char* begin, const char* end) noexcept { close(open(begin), end); }

    static constexpr std::size_t none = static_cast<std::size_t>(-1);

private:
    struct Span {
        const char* begin;
        const char* end;  // nullptr until closed
    };
    std::array<Span, capacity> spans_;
    std::size_t size_ = 0;
    std::string_view text_;
};

class JsonScanner {
public:
    static constexpr int max_depth = max_json_depth;

    /// Checks that `line` is one JSON object (whitespace around it allowed) with valid UTF-8,
    /// and fills `out`. On failure returns false and sets `error` to a reason that names a
    /// column, never the text.
    ///
    /// `memo`, when given, is reset and filled with where the line's containers and long
    /// strings end (SkipMemo), for check_entry_fields on the same line.
    template <ScanPath P = ScanPath::vector>
    static bool scan_entry(std::string_view line, Dialect dialect, ScannedEntry& out,
                           std::string& error, SkipMemo* memo = nullptr) {
        JsonScanner s(line, dialect);
        if (memo != nullptr) {
            memo->reset(line);
            s.memo_ = memo;
        }
        out = {};
        s.skip_ws();
        if (s.p_ == s.end_ || *s.p_ != '{') return s.fail(error, "not a JSON object");
        if (!s.parse_object<P>(1, Level::top, &out)) {
            s.fail(error, s.reason_);
            // The entry, when its id came before the fault (it usually comes second).
            if (out.id.size() >= 2 && out.id.front() == '"' &&
                out.id.find('\\') == std::string_view::npos)
                error = "entry '" + shown(out.id.substr(1, out.id.size() - 2)) + "': " + error;
            return false;
        }
        s.skip_ws();
        if (s.p_ != s.end_) return s.fail(error, "unexpected text after the JSON object");
        return true;
    }

    /// Checks that `text` is one JSON value with valid UTF-8.
    template <ScanPath P = ScanPath::vector>
    static bool validate(std::string_view text, std::string& error) {
        JsonScanner s(text, Dialect::native);
        s.skip_ws();
        if (!s.parse_value<P>(0))
            return s.fail(error, s.reason_);  // a top-level container is level 1
        s.skip_ws();
        if (s.p_ != s.end_) return s.fail(error, "unexpected text after the JSON value");
        return true;
    }

private:
    enum class Level { top, message, other };

    JsonScanner(std::string_view text, Dialect dialect) noexcept
        : begin_(text.data()),
          p_(text.data()),
          end_(text.data() + text.size()),
          dialect_(dialect) {}

    // Text from the line shown in a message: printable ASCII only, at most 64 characters.
    static std::string shown(std::string_view text) {
        std::string out;
        for (char c : text.substr(0, 64)) out += (c >= 0x20 && c < 0x7f && c != '\'') ? c : '?';
        if (text.size() > 64) out += "...";
        return out;
    }

    bool fail(std::string& error, const char* reason) const {
        error = reason != nullptr ? reason : "invalid JSON";
        if (path_depth_ > 0) {
            // A path of more steps than a line holds shows its first and last ones: a value
            // nested hundreds of levels deep still gets a message of one short line.
            constexpr int first_steps = 6;
            constexpr int last_steps = 3;
            std::string path;
            for (int i = 1; i <= path_depth_; ++i) {
                if (i == first_steps + 1 && path_depth_ > first_steps + last_steps + 1) {
                    path += "...(" + std::to_string(path_depth_ - first_steps - last_steps) +
                            " levels)...";
                    i = path_depth_ - last_steps;
                    continue;
                }
                const PathStep& step = path_[static_cast<std::size_t>(i)];
                if (step.index != no_index) {
                    path += '[' + std::to_string(step.index) + ']';
                } else {
                    if (!path.empty()) path += '.';
                    path += shown(std::string_view(step.key, step.key_size));
                }
            }
            error += " in field '" + path + "'";
        }
        error += " at column " + std::to_string(static_cast<std::size_t>(p_ - begin_) + 1);
        return false;
    }

    bool bad(const char* reason) noexcept {
        reason_ = reason;
        return false;
    }

    void skip_ws() noexcept {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
    }

    template <ScanPath P>
    bool parse_value(int depth) {
        if (p_ == end_) return bad("unexpected end of line");
        if (memo_ != nullptr && depth <= SkipMemo::levels) return parse_recorded_value<P>(depth);
        return parse_unrecorded_value<P>(depth);
    }

    // A value whose end goes into the memo when it is a container or a long string.
    template <ScanPath P>
    bool parse_recorded_value(int depth) {
        const char* begin = p_;
        const bool container = *p_ == '{' || *p_ == '[';
        const std::size_t slot = container ? memo_->open(begin) : SkipMemo::none;
        if (!parse_unrecorded_value<P>(depth)) return false;
        if (container)
            memo_->close(slot, p_);
        else if (*begin == '"' && p_ - begin >= SkipMemo::min_string)
            memo_->add(begin, p_);
        return true;
    }

    template <ScanPath P>
    bool parse_unrecorded_value(int depth) {
        switch (*p_) {
            case '{': return parse_object<P>(depth + 1, Level::other, nullptr);
            case '[': return parse_array<P>(depth + 1);
            case '"': return parse_string<P>();
            case 't': return parse_literal("true");
            case 'f': return parse_literal("false");
            case 'n': return parse_literal("null");
            default: return parse_number();
        }
    }

    bool parse_literal(std::string_view word) noexcept {
        if (static_cast<std::size_t>(end_ - p_) < word.size() ||
            std::memcmp(p_, word.data(), word.size()) != 0)
            return bad("invalid literal");
        p_ += word.size();
        return true;
    }

    static bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

    bool parse_number() noexcept {
        const char* start = p_;
        if (p_ != end_ && *p_ == '-') ++p_;
        if (p_ == end_ || !is_digit(*p_)) return bad("invalid value");
        const char* int_begin = p_;
        if (*p_ == '0') {
            ++p_;
        } else {
            while (p_ != end_ && is_digit(*p_)) ++p_;
        }
        const auto int_digits = static_cast<long>(p_ - int_begin);
        long frac_zeros = 0;  // zeros that start the fraction
        if (p_ != end_ && *p_ == '.') {
            ++p_;
            if (p_ == end_ || !is_digit(*p_)) return bad("invalid number");
            while (p_ != end_ && *p_ == '0') ++p_, ++frac_zeros;
            while (p_ != end_ && is_digit(*p_)) ++p_;
        }
        long exponent = 0;
        bool has_exponent = false;
        if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
            has_exponent = true;
            ++p_;
            bool negative = false;
            if (p_ != end_ && (*p_ == '+' || *p_ == '-')) negative = *p_++ == '-';
            if (p_ == end_ || !is_digit(*p_)) return bad("invalid number");
            while (p_ != end_ && is_digit(*p_)) {
                if (exponent < 100000) exponent = exponent * 10 + (*p_ - '0');
                ++p_;
            }
            if (negative) exponent = -exponent;
        }
        // nlohmann refuses a number that overflows a double (out_of_range), so the scanner does
        // too; one that underflows reads as zero there and is fine. Only a long integer part or
        // an exponent can overflow.
        if (has_exponent || int_digits > 300) {
            double value = 0;
            const auto r = std::from_chars(start, p_, value);
            if (r.ec == std::errc::result_out_of_range) {
                const bool zero_int = *int_begin == '0';
                const long magnitude = (zero_int ? -(frac_zeros + 1) : int_digits - 1) + exponent;
                if (magnitude > 0) return bad("number out of range");
            }
        }
        return true;
    }

    template <ScanPath P>
    bool parse_array(int depth) {
        if (depth > max_depth) return bad("nesting too deep");
        ++p_;  // '['
        skip_ws();
        if (p_ != end_ && *p_ == ']') {
            ++p_;
            return true;
        }
        for (std::size_t index = 0;; ++index) {
            skip_ws();
            path_[static_cast<std::size_t>(depth)] = PathStep{nullptr, 0, index};
            path_depth_ = depth;
            if (!parse_value<P>(depth)) return false;
            path_depth_ = depth - 1;
            skip_ws();
            if (p_ == end_) return bad("unexpected end of line");
            if (*p_ == ',') {
                ++p_;
                continue;
            }
            if (*p_ == ']') {
                ++p_;
                return true;
            }
            return bad("expected ',' or ']'");
        }
    }

    // Compares a raw key (the text between the quotes) with a plain ASCII name.
    static bool key_is(std::string_view raw, bool escaped, std::string_view name) {
        if (!escaped) return raw == name;
        std::string decoded;
        return unescape(raw, decoded) && decoded == name;
    }

    template <ScanPath P>
    bool parse_object(int depth, Level level, ScannedEntry* out) {
        if (depth > max_depth) return bad("nesting too deep");
        ++p_;  // '{'
        skip_ws();
        if (p_ != end_ && *p_ == '}') {
            ++p_;
            return true;
        }
        for (;;) {
            skip_ws();
            if (p_ == end_ || *p_ != '"') return bad("expected a key");
            const char* key_begin = p_ + 1;
            escaped_ = false;
            if (!parse_string<P>()) return false;
            const std::string_view key(key_begin, static_cast<std::size_t>(p_ - 1 - key_begin));
            const bool escaped = escaped_;
            path_[static_cast<std::size_t>(depth)] = PathStep{key.data(), key.size(), no_index};
            path_depth_ = depth;
            skip_ws();
            if (p_ == end_ || *p_ != ':') return bad("expected ':'");
            ++p_;
            skip_ws();
            const char* value_begin = p_;
            std::string_view* target = nullptr;
            bool nested_message = false;
            if (level == Level::top) {
                if (key_is(key, escaped, "type"))
                    target = &out->type;
                else if (key_is(key, escaped, "id"))
                    target = &out->id;
                else if (key_is(key, escaped, dialect_ == Dialect::pi ? "parentId" : "parent_id"))
                    target = &out->parent_id;
                else if (key_is(key, escaped, "usage"))
                    target = &out->usage;
                else if (key_is(key, escaped, "message"))
                    nested_message = true;
            } else if (level == Level::message) {
                if (key_is(key, escaped, "role"))
                    target = &out->message_role;
                else if (key_is(key, escaped, "usage"))
                    target = &out->message_usage;
            }
            if (nested_message && p_ != end_ && *p_ == '{') {
                // A repeated key replaces what an earlier one said, as in the DOM parser.
                out->message_role = {};
                out->message_usage = {};
                const std::size_t slot = memo_ != nullptr ? memo_->open(p_) : SkipMemo::none;
                if (!parse_object<P>(depth + 1, Level::message, out)) return false;
                if (memo_ != nullptr) memo_->close(slot, p_);
            } else if (!parse_value<P>(depth)) {
                return false;
            }
            if (target != nullptr)
                *target = std::string_view(value_begin, static_cast<std::size_t>(p_ - value_begin));
            path_depth_ = depth - 1;
            skip_ws();
            if (p_ == end_) return bad("unexpected end of line");
            if (*p_ == ',') {
                ++p_;
                continue;
            }
            if (*p_ == '}') {
                ++p_;
                return true;
            }
            return bad("expected ',' or '}'");
        }
    }

    // True when none of the 8 bytes at `q` needs a look: no quote, backslash, control character
    // or non-ASCII byte.
    static bool plain8(const char* q) noexcept {
        std::uint64_t x;
        std::memcpy(&x, q, 8);
        constexpr std::uint64_t ones = 0x0101010101010101ULL;
        constexpr std::uint64_t highs = 0x8080808080808080ULL;
        const std::uint64_t quote = x ^ (ones * 0x22U);
        const std::uint64_t backslash = x ^ (ones * 0x5CU);
        const std::uint64_t t = ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash) |
                                ((x - ones * 0x20U) & ~x) | x;
        return (t & highs) == 0;
    }

    // True when `c` continues a string's plain run: printable ASCII other than a quote or a
    // backslash.
    static bool plain_byte(char c) noexcept {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u < 0x80 && u != '"' && u != '\\';
    }

#if defined(__SSE2__)
    // Bit i set when byte i of the 16 at `q` ends a string's plain run: a quote, a backslash, a
    // control character or a non-ASCII byte.
    static unsigned special16(const char* q) noexcept {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));  // NOLINT
        // As signed bytes, every non-ASCII byte is negative: one compare finds both the control
        // characters and the bytes of UTF-8 sequences.
        const __m128i low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        const __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
        const __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
        return static_cast<unsigned>(
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(low, quote), backslash)));
    }

    // How many bytes from `q` on (0-16) are whole, valid UTF-8 sequences and plain ASCII,
    // up to the first quote, backslash or control character, or the start of a sequence that
    // does not end within the 16 bytes at `q`. `q` starts a sequence (or is ASCII). 0 when the
    // first sequence is invalid or cut: the caller checks that one with parse_utf8, which names
    // the error as the scalar path does. Sixteen bytes a step with SSE2 alone: every byte is
    // classified by range with signed compares (the bytes 0x80-0xFF are the negative ones, in
    // the same order), each lead byte says where continuation bytes must be, and the two masks
    // must agree; the four lead bytes whose second byte has a narrower range are checked by
    // their own masks (overlong forms, surrogates, beyond U+10FFFF).
    static unsigned utf8_run16(const char* q) noexcept {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));  // NOLINT
        auto mask = [](__m128i m) { return static_cast<unsigned>(_mm_movemask_epi8(m)); };
        auto below = [&](int byte) {  // as signed bytes: 0x80-0xFF, in order, then ASCII
            return mask(_mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(byte))));
        };
        auto equal = [&](int byte) {
            return mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(static_cast<char>(byte))));
        };
        const unsigned high = mask(v);
        const unsigned special = (below(0x20) & ~high) | equal('"') | equal('\\');
        const unsigned b_c0 = below(0xC0) & high, b_c2 = below(0xC2) & high;
        const unsigned b_e0 = below(0xE0) & high, b_f0 = below(0xF0) & high;
        const unsigned b_f5 = below(0xF5) & high;
        const unsigned cont = b_c0;
        const unsigned lead2 = b_e0 & ~b_c2, lead3 = b_f0 & ~b_e0, lead4 = b_f5 & ~b_f0;
        const unsigned invalid = (high & ~b_f5) | (b_c2 & ~b_c0);
        const unsigned limit = special != 0 ? static_cast<unsigned>(std::countr_zero(special)) : 16;
        // The first sequence that starts before `limit` but does not end before it: the run
        // stops there.
        const unsigned before = (1U << limit) - 1;
        const unsigned crossing = (lead2 & (before & ~(before >> 1))) |
                                  (lead3 & (before & ~(before >> 2))) |
                                  (lead4 & (before & ~(before >> 3)));
        const unsigned whole =
            crossing != 0 ? static_cast<unsigned>(std::countr_zero(crossing)) : limit;
        const unsigned in = (1U << whole) - 1;
        // Where the sequences that start in the run need their continuation bytes: exactly
        // there and nowhere else in the run, and not past it.
        const unsigned l2 = lead2 & in, l3 = lead3 & in, l4 = lead4 & in;
        const unsigned need = ((l2 | l3 | l4) << 1) | ((l3 | l4) << 2) | (l4 << 3);
        const unsigned a0 = below(0xA0), x90 = below(0x90);
        const unsigned second_bad = ((equal(0xE0) << 1) & a0) | ((equal(0xED) << 1) & ~a0) |
                                    ((equal(0xF0) << 1) & x90) | ((equal(0xF4) << 1) & ~x90);
        if ((need & ~in) != 0 || (((need ^ cont) | invalid | second_bad) & in) != 0) return 0;
        return whole;
    }

    // Bit i set when byte i of the 16 at `q` is a quote or a backslash.
    static unsigned quote16(const char* q) noexcept {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));  // NOLINT
        const __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
        const __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
        return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(quote, backslash)));
    }
#endif

public:
    /// The first byte at or after `p` (inside a string, before `end`) that ends its plain run: a
    /// quote, a backslash, a control character or a non-ASCII byte; `end` when there is none.
    /// Reads nothing at or past `end`: 16-byte loads only while 16 bytes remain.
    template <ScanPath P = ScanPath::vector>
    static const char* skip_plain(const char* p, const char* end) noexcept {
#if defined(__SSE2__)
        if constexpr (P == ScanPath::vector) {
            while (end - p >= 16) {
                const unsigned hits = special16(p);
                if (hits != 0) return p + std::countr_zero(hits);
                p += 16;
            }
        }
#endif
        while (end - p >= 8 && plain8(p)) p += 8;
        while (p != end && plain_byte(*p)) ++p;
        return p;
    }

private:
    // True when none of the 8 bytes at `q` is a quote or a backslash (text already validated:
    // only those end a string's plain run).
    static bool unquoted8(const char* q) noexcept {
        std::uint64_t x;
        std::memcpy(&x, q, 8);
        constexpr std::uint64_t ones = 0x0101010101010101ULL;
        constexpr std::uint64_t highs = 0x8080808080808080ULL;
        const std::uint64_t quote = x ^ (ones * 0x22U);
        const std::uint64_t backslash = x ^ (ones * 0x5CU);
        return ((((quote - ones) & ~quote) | ((backslash - ones) & ~backslash)) & highs) == 0;
    }

    static int hex_value(char c) noexcept {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    bool read_hex4(unsigned& out) noexcept {
        if (end_ - p_ < 4) return bad("invalid \\u escape");
        out = 0;
        for (int i = 0; i < 4; ++i) {
            const int v = hex_value(p_[i]);
            if (v < 0) return bad("invalid \\u escape");
            out = out * 16 + static_cast<unsigned>(v);
        }
        p_ += 4;
        return true;
    }

    bool parse_escape() noexcept {
        escaped_ = true;
        ++p_;  // '\\'
        if (p_ == end_) return bad("unexpected end of line");
        const char c = *p_++;
        switch (c) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't': return true;
            case 'u': {
                unsigned cp = 0;
                if (!read_hex4(cp)) return false;
                // A lone surrogate (high without a low after it, or a low alone) is accepted, as
                // JavaScript accepts it; the escape that follows a lone high one is read on its
                // own.
                (void)cp;
                return true;
            }
            default: --p_; return bad("invalid escape");
        }
    }

    static bool cont(unsigned char c) noexcept { return (c & 0xC0U) == 0x80U; }

    bool parse_utf8() noexcept {
        const auto* u = reinterpret_cast<const unsigned char*>(p_);  // NOLINT
        const auto left = end_ - p_;
        const unsigned char c = u[0];
        if (c >= 0xC2 && c <= 0xDF) {
            if (left < 2 || !cont(u[1])) return bad("invalid UTF-8");
            p_ += 2;
            return true;
        }
        if (c >= 0xE0 && c <= 0xEF) {
            if (left < 3 || !cont(u[1]) || !cont(u[2])) return bad("invalid UTF-8");
            if (c == 0xE0 && u[1] < 0xA0) return bad("invalid UTF-8");
            if (c == 0xED && u[1] > 0x9F) return bad("invalid UTF-8");
            p_ += 3;
            return true;
        }
        if (c >= 0xF0 && c <= 0xF4) {
            if (left < 4 || !cont(u[1]) || !cont(u[2]) || !cont(u[3])) return bad("invalid UTF-8");
            if (c == 0xF0 && u[1] < 0x90) return bad("invalid UTF-8");
            if (c == 0xF4 && u[1] > 0x8F) return bad("invalid UTF-8");
            p_ += 4;
            return true;
        }
        return bad("invalid UTF-8");
    }

    template <ScanPath P>
    bool parse_string() noexcept {
        ++p_;  // '"'
        for (;;) {
            p_ = skip_plain<P>(p_, end_);  // stops only at a byte that needs a look
            if (p_ == end_) return bad("unterminated string");
            const auto c = static_cast<unsigned char>(*p_);
            if (c == '"') {
                ++p_;
                return true;
            }
            if (c == '\\') {
                if (!parse_escape()) return false;
            } else if (c < 0x20) {
                return bad("control character in string");
            } else {  // c >= 0x80
#if defined(__SSE2__)
                if constexpr (P == ScanPath::vector) {
                    // A run of non-ASCII text: whole sequences 16 bytes a step.
                    const char* const from = p_;
                    while (end_ - p_ >= 16) {
                        const unsigned n = utf8_run16(p_);
                        if (n == 0) break;
                        p_ += n;
                        // Stopped short at a quote, backslash or control character: the loop
                        // above takes it. At a sequence that did not fit: the next step.
                        if (n != 16 && static_cast<unsigned char>(*p_) < 0x80) break;
                    }
                    if (p_ != from) continue;
                }
#endif
                if (!parse_utf8()) return false;
            }
        }
    }

public:
    /// The closing quote of a string whose text starts at `p` (just after its opening quote), in
    /// text already validated; `end` when there is none. Steps over plain bytes 16 at a time
    /// (ScanPath::vector) or 8 at a time, reading nothing at or past `end`.
    template <ScanPath P = ScanPath::vector>
    static const char* string_end(const char* p, const char* end) noexcept {
        for (;;) {
#if defined(__SSE2__)
            if constexpr (P == ScanPath::vector) {
                // 16 bytes a step, straight to the first quote or backslash.
                for (;;) {
                    if (end - p < 16) {
                        while (end - p >= 8 && unquoted8(p)) p += 8;
                        while (p != end && *p != '"' && *p != '\\') ++p;
                        break;
                    }
                    const unsigned hits = quote16(p);
                    if (hits != 0) {
                        p += std::countr_zero(hits);
                        break;
                    }
                    p += 16;
                }
            } else
#endif
            {
                while (end - p >= 8 && unquoted8(p)) p += 8;
                while (p != end && *p != '"' && *p != '\\') ++p;
            }
            if (p == end || *p == '"') return p;
            p += end - p >= 2 ? 2 : 1;  // an escape: its second byte is never the closing quote
        }
    }

    /// Decodes the text between a JSON string's quotes (already validated) into UTF-8.
    static bool unescape(std::string_view raw, std::string& out) {
        out.clear();
        out.reserve(raw.size());
        for (std::size_t i = 0; i < raw.size(); ++i) {
            // The run up to the next backslash is copied as it is, in one piece.
            const void* found = std::memchr(raw.data() + i, '\\', raw.size() - i);
            const std::size_t backslash =
                found == nullptr
                    ? raw.size()
                    : static_cast<std::size_t>(static_cast<const char*>(found) - raw.data());
            out.append(raw.data() + i, backslash - i);
            if (backslash == raw.size()) break;
            i = backslash;
            if (++i >= raw.size()) return false;
            switch (raw[i]) {
                case '"': out.push_back('"'); break;
                case '\\': out.push_back('\\'); break;
                case '/': out.push_back('/'); break;
                case 'b': out.push_back('\b'); break;
                case 'f': out.push_back('\f'); break;
                case 'n': out.push_back('\n'); break;
                case 'r': out.push_back('\r'); break;
                case 't': out.push_back('\t'); break;
                case 'u': {
                    auto hex4 = [&](std::size_t at, unsigned& v) {
                        if (at + 4 > raw.size()) return false;
                        v = 0;
                        for (std::size_t k = at; k < at + 4; ++k) {
                            const int h = hex_value(raw[k]);
                            if (h < 0) return false;
                            v = v * 16 + static_cast<unsigned>(h);
                        }
                        return true;
                    };
                    unsigned cp = 0;
                    if (!hex4(i + 1, cp)) return false;
                    i += 4;
                    unsigned low = 0;
                    if (cp >= 0xD800 && cp <= 0xDBFF && i + 2 < raw.size() && raw[i + 1] == '\\' &&
                        raw[i + 2] == 'u' && hex4(i + 3, low) && low >= 0xDC00 && low <= 0xDFFF) {
                        i += 6;
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }  // else a lone surrogate: three WTF-8 bytes, below
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
                    break;
                }
                default: return false;
            }
        }
        return true;
    }

    /// The string a raw JSON value holds, when it is a string. `scratch` holds the decoded text
    /// when the string has escapes; otherwise the result points into `raw`.
    static bool string_value(std::string_view raw, std::string& scratch, std::string_view& out) {
        if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return false;
        const std::string_view inner = raw.substr(1, raw.size() - 2);
        if (inner.find('\\') == std::string_view::npos) {
            out = inner;
            return true;
        }
        if (!unescape(inner, scratch)) return false;
        out = scratch;
        return true;
    }

    /// The end of the value that starts at `p` in text already validated (`end` bounds the
    /// text). With a memo, jumps over a value recorded there and records the containers and long
    /// strings it walks (SkipMemo).
    static const char* value_end(const char* p, const char* end, SkipMemo* memo) noexcept {
        if (p == end) return p;
        if (memo != nullptr && (*p == '"' || *p == '{' || *p == '['))
            if (const char* known = memo->find(p); known != nullptr && known <= end) return known;
        if (*p == '"') {
            const char* q = string_end(p + 1, end);
            if (q != end) ++q;
            if (memo != nullptr && q - p >= SkipMemo::min_string) memo->add(p, q);
            return q;
        }
        if (*p == '{' || *p == '[') {
            constexpr int recorded_levels = 8;
            std::array<std::size_t, recorded_levels> slots{};
            int depth = 0;
            do {
                if (*p == '"') {
                    const char* q = string_end(p + 1, end);
                    if (q != end) ++q;
                    if (memo != nullptr && q - p >= SkipMemo::min_string) memo->add(p, q);
                    p = q;
                    continue;
                }
                if (*p == '{' || *p == '[') {
                    if (memo != nullptr && depth < recorded_levels)
                        slots[static_cast<std::size_t>(depth)] = memo->open(p);
                    ++depth;
                } else if (*p == '}' || *p == ']') {
                    --depth;
                    if (memo != nullptr && depth < recorded_levels)
                        memo->close(slots[static_cast<std::size_t>(depth)], p + 1);
                }
                ++p;
            } while (p != end && depth > 0);
            return p;
        }
        while (p != end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
               *p != '\n' && *p != '\r')
            ++p;
        return p;
    }

    /// Calls `visit(raw_key, raw_value)` for each member of a JSON object that is already
    /// known to be valid (scanned before). Raw keys are the text between the quotes. `memo`, when
    /// given, is shared by the walks of one text (SkipMemo).
    template <class Visit>
    static void for_each_member(std::string_view object, Visit&& visit, SkipMemo* memo = nullptr) {
        const char* p = object.data();
        const char* end = p + object.size();
        auto ws = [&] {
            while (p != end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
        };
        auto skip_string = [&] {
            p = string_end(p + 1, end);
            if (p != end) ++p;
        };
        auto skip_value = [&] { p = value_end(p, end, memo); };
        ws();
        if (p == end || *p != '{') return;
        ++p;
        for (;;) {
            ws();
            if (p == end || *p != '"') return;
            const char* key_begin = p + 1;
            skip_string();
            const std::string_view key(key_begin, static_cast<std::size_t>(p - 1 - key_begin));
            ws();
            if (p == end || *p != ':') return;
            ++p;
            ws();
            const char* value_begin = p;
            skip_value();
            visit(key, std::string_view(value_begin, static_cast<std::size_t>(p - value_begin)));
            ws();
            if (p == end || *p != ',') return;
            ++p;
        }
    }

private:
    // Where the scanner is, for error messages: the key or index at each level.
    static constexpr std::size_t no_index = static_cast<std::size_t>(-1);
    // Trivial, so that the scanner's path array costs nothing until it is written.
    struct PathStep {
        const char* key;
        std::size_t key_size;
        std::size_t index;
    };

    const char* begin_;
    const char* p_;
    const char* end_;
    Dialect dialect_;
    const char* reason_ = nullptr;
    bool escaped_ = false;  // the last string parsed had an escape
    SkipMemo* memo_ = nullptr;
    std::array<PathStep, static_cast<std::size_t>(max_json_depth) + 1>
        path_;  // [1, path_depth_] are set
    int path_depth_ = 0;
};

/// The number a JSON number's text (already validated) holds, as nlohmann's parser makes it: an
/// integer without fraction or exponent is unsigned when it is not negative, signed when it is,
/// and a double when it does not fit 64 bits; anything else is a double (one too small for a
/// double reads as zero; one too large was refused by the scanner).
template <class = void>
Json json_number(std::string_view text) {
    const char* first = text.data();
    const char* last = first + text.size();
    if (text.find_first_of(".eE") == std::string_view::npos) {
        if (text.front() == '-') {
            std::int64_t v = 0;
            const auto r = std::from_chars(first, last, v);
            if (r.ec == std::errc() && r.ptr == last) return Json(v);
        } else {
            std::uint64_t v = 0;
            const auto r = std::from_chars(first, last, v);
            if (r.ec == std::errc() && r.ptr == last) return Json(v);
        }
    }
    double d = 0;
    const auto r = std::from_chars(first, last, d);
    if (r.ec == std::errc::result_out_of_range) d = text.front() == '-' ? -0.0 : 0.0;
    return Json(d);
}

/// Builds the DOM of one JSON value whose text the scanner has validated (JsonScanner::validate,
/// or a value inside a line it scanned), as nlohmann's parser would build it.
///
/// Complexity: linear in the text; recursion is bounded by max_json_depth.
template <class = void>
void build_json(std::string_view text, Json& out) {
    struct Builder {
        const char* p;
        const char* end;
        std::string scratch;

        void ws() noexcept {
            while (p != end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
        }
        std::string_view raw_string() noexcept {
            const char* begin = ++p;
            p = JsonScanner::string_end(p, end);
            const std::string_view raw(begin, static_cast<std::size_t>(p - begin));
            ++p;
            return raw;
        }
        std::string string() {
            const std::string_view raw = raw_string();
            if (raw.find('\\') == std::string_view::npos) return std::string(raw);
            JsonScanner::unescape(raw, scratch);
            return scratch;
        }
        void value(Json& v) {
            switch (*p) {
                case '{': {
                    v = Json::object();
                    auto& fields = v.get_ref<Json::object_t&>();
                    ++p;
                    ws();
                    if (*p == '}') {
                        ++p;
                        return;
                    }
                    for (;;) {
                        ws();
                        std::string key = string();
                        ws();
                        ++p;  // ':'
                        ws();
                        // A repeated key keeps its first place and takes the last value, as in
                        // nlohmann's parser.
                        value(fields.emplace(key, Json()).first->second);
                        ws();
                        if (*p++ == '}') return;
                    }
                }
                case '[': {
                    v = Json::array();
                    auto& items = v.get_ref<Json::array_t&>();
                    ++p;
                    ws();
                    if (*p == ']') {
                        ++p;
                        return;
                    }
                    for (;;) {
                        ws();
                        items.emplace_back();
                        value(items.back());
                        ws();
                        if (*p++ == ']') return;
                    }
                }
                case '"': v = string(); return;
                case 't':
                    p += 4;
                    v = true;
                    return;
                case 'f':
                    p += 5;
                    v = false;
                    return;
                case 'n':
                    p += 4;
                    v = nullptr;
                    return;
                default: {
                    const char* begin = p;
                    while (p != end && (is_number_char(*p))) ++p;
                    v = json_number(std::string_view(begin, static_cast<std::size_t>(p - begin)));
                }
            }
        }
        static bool is_number_char(char c) noexcept {
            return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' ||
                   c == 'E';
        }
    };
    Builder b{text.data(), text.data() + text.size(), {}};
    b.ws();
    out = Json();
    b.value(out);
}

/// Parses one JSON value with the scanner's rules (see the top of this header): the text is
/// validated first, so that no reader of the library accepts what another refuses, and then
/// built into a DOM. On failure returns false and sets `error` to a reason naming a column.
///
/// Complexity: linear in the text; recursion is bounded by max_json_depth.
template <class = void>
bool parse_json(std::string_view text, Json& out, std::string& error) {
    if (!JsonScanner::validate(text, error)) return false;
    build_json(text, out);
    return true;
}

}  // namespace agentcore::detail

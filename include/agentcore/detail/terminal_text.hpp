#pragma once
// Conversation text made safe and short for a terminal or a test report: whitespace runs folded,
// control characters (C0, DEL, C1, hence ESC), line separators and bidirectional controls shown as
// visible escapes (\n, \x1b, \u202e), bytes that are not UTF-8 as \xNN, a length limit in
// characters. Shared by the command-line tool and the test fixtures, so that both show a
// conversation the same way and neither lets a file's text drive the terminal.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace agentcore::detail {

// Decodes the UTF-8 sequence at the start of `text`: its length and code point, or length 1 and
// no code point for a byte that does not start a valid sequence.
struct CodePoint {
    std::size_t length = 1;
    std::optional<std::uint32_t> value;
};

inline CodePoint decode(std::string_view text) noexcept {
    const auto lead = static_cast<unsigned char>(text[0]);
    if (lead < 0x80) return {1, lead};
    std::size_t length = 0;
    std::uint32_t value = 0;
    std::uint32_t min = 0;
    if (lead >= 0xC2 && lead <= 0xDF)
        length = 2, value = lead & 0x1Fu, min = 0x80;
    else if (lead >= 0xE0 && lead <= 0xEF)
        length = 3, value = lead & 0x0Fu, min = 0x800;
    else if (lead >= 0xF0 && lead <= 0xF4)
        length = 4, value = lead & 0x07u, min = 0x10000;
    else
        return {};
    if (text.size() < length) return {};
    for (std::size_t k = 1; k < length; ++k) {
        const auto c = static_cast<unsigned char>(text[k]);
        if ((c & 0xC0) != 0x80) return {};
        value = (value << 6) | (c & 0x3Fu);
    }
    if (value < min || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return {};
    return {length, value};
}

// True for what must not reach a terminal as is: C0 controls, DEL, C1 controls, the line and
// paragraph separators, and the bidirectional marks, embeddings, overrides and isolates (which
// reorder what follows them on the line).
inline bool needs_escape(std::uint32_t c) noexcept {
    return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x200E || c == 0x200F ||
           (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

// The visible escape of one code point or byte: \n, \t, \r, \x1b, \u0085, \u202e; \xNN for a
// byte that is not UTF-8.
inline std::string escape(std::optional<std::uint32_t> c, unsigned char byte) {
    char buf[16];
    if (!c)
        std::snprintf(buf, sizeof buf, "\\x%02x", byte);
    else if (*c == '\n')
        return "\\n";
    else if (*c == '\t')
        return "\\t";
    else if (*c == '\r')
        return "\\r";
    else if (*c < 0x80)
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(*c));
    else
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(*c));
    return buf;
}

// `text` with what needs_escape names (and bytes that are not UTF-8) escaped; code points for
// which `keep` is true are left as they are. At most `max_chars` characters (an escape counts
// as its length); "…" marks a cut.
template <class Keep>
std::string visible(std::string_view text, std::size_t max_chars, Keep&& keep) {
    std::string out;
    std::size_t chars = 0;
    for (std::size_t i = 0; i < text.size();) {
        const CodePoint cp = decode(text.substr(i));
        const std::string_view seq = text.substr(i, cp.length);
        const auto byte = static_cast<unsigned char>(text[i]);
        i += cp.length;
        const bool plain = cp.value && (!needs_escape(*cp.value) || keep(*cp.value));
        const std::string escaped = plain ? std::string() : escape(cp.value, byte);
        const std::size_t width = plain ? 1 : escaped.size();
        if (chars + width > max_chars) {
            out += "…";
            return out;
        }
        chars += width;
        out += plain ? seq : std::string_view(escaped);
    }
    return out;
}

inline std::string one_line_text(std::string_view text, std::size_t max_chars) {
    // Whitespace runs become one space (trimmed at both ends); the rest is escaped.
    std::string spaced;
    spaced.reserve(text.size());
    bool pending_space = false;
    for (const char c : text) {
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
            pending_space = !spaced.empty();
            continue;
        }
        if (pending_space) spaced += ' ';
        pending_space = false;
        spaced += c;
    }
    return visible(spaced, max_chars, [](std::uint32_t) { return false; });
}

inline std::string printable_text(std::string_view text) {
    return visible(text, std::string_view::npos,
                   [](std::uint32_t c) { return c == '\n' || c == '\t'; });
}

inline std::string escaped_text(std::string_view text, std::size_t max_chars) {
    return visible(text, max_chars, [](std::uint32_t) { return false; });
}

}  // namespace agentcore::detail

#pragma once
// Conversation text made safe and short for a terminal or a test report: whitespace runs folded,
// control characters (C0, DEL, C1, hence ESC) dropped, a length limit in code points. Shared by the
// command-line tool and the test fixtures, so that both show a conversation the same way.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace agentcore::detail {

// Length of the UTF-8 sequence that starts with `lead` (1 for a stray continuation byte).
inline std::size_t utf8_sequence_length(unsigned char lead) noexcept {
    if (lead >= 0xF0) return 4;
    if (lead >= 0xE0) return 3;
    if (lead >= 0xC0) return 2;
    return 1;
}

// True for a C1 control (U+0080..U+009F), encoded C2 80..C2 9F.
inline bool is_c1_control(std::string_view seq) noexcept {
    return seq.size() == 2 && static_cast<unsigned char>(seq[0]) == 0xC2 &&
           static_cast<unsigned char>(seq[1]) < 0xA0;
}

// `text` on one line: whitespace runs become one space, control characters are dropped, and at
// most `max_chars` code points are kept ("…" marks a cut).
inline std::string one_line_text(std::string_view text, std::size_t max_chars) {
    std::string out;
    std::size_t chars = 0;
    bool pending_space = false;
    for (std::size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        const std::size_t len = std::min(utf8_sequence_length(lead), text.size() - i);
        const std::string_view seq = text.substr(i, len);
        i += len;
        if (lead == ' ' || lead == '\n' || lead == '\t' || lead == '\r') {
            pending_space = !out.empty();
            continue;
        }
        if (lead < 0x20 || lead == 0x7F || is_c1_control(seq)) continue;
        if (chars + (pending_space ? 1 : 0) + 1 > max_chars) {
            out += "…";
            return out;
        }
        if (pending_space) {
            out += ' ';
            ++chars;
            pending_space = false;
        }
        out += seq;
        ++chars;
    }
    return out;
}

// `text` with control characters other than newline and tab dropped (for multi-line output).
inline std::string printable_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        const std::size_t len = std::min(utf8_sequence_length(lead), text.size() - i);
        const std::string_view seq = text.substr(i, len);
        i += len;
        if ((lead < 0x20 && lead != '\n' && lead != '\t') || lead == 0x7F || is_c1_control(seq)) continue;
        out += seq;
    }
    return out;
}

}  // namespace agentcore::detail

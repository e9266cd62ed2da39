#pragma once
// Line framing of a JSONL buffer: where each line starts and ends, whether it was terminated by
// a newline. A `\r` before the `\n` (CRLF files) and a UTF-8 byte order mark at the start of
// the first line are not part of the line.

#include <cstddef>
#include <cstring>
#include <string_view>

namespace agentcore::detail {

/// One line of a buffer.
struct LineSpan {
    std::size_t offset = 0;   ///< first byte of the line's text
    std::size_t length = 0;   ///< length of the text, without `\r\n` / `\n`
    std::size_t end = 0;      ///< offset just after the line's newline (or the buffer's end)
    bool terminated = false;  ///< ends with `\n`
    std::size_t number = 0;   ///< 1-based line number
};

/// True for a line of spaces, tabs and carriage returns only: every reader skips it.
inline bool blank_line(std::string_view text) noexcept {
    for (char c : text)
        if (c != ' ' && c != '\t' && c != '\r') return false;
    return true;
}

/// Walks the lines of a buffer with memchr.
class LineReader {
public:
    /// Reads `buffer` from `start`; `lines_before` lines precede it (the first line read is
    /// number lines_before + 1; only a first line of the buffer may start with a byte order
    /// mark).
    explicit LineReader(std::string_view buffer, std::size_t start = 0,
                        std::size_t lines_before = 0) noexcept
        : buffer_(buffer), pos_(start), number_(lines_before) {}

    /// The next line, or false at the end of the buffer.
    bool next(LineSpan& line) noexcept {
        if (pos_ >= buffer_.size()) return false;
        const char* base = buffer_.data();
        std::size_t begin = pos_;
        if (number_ == 0 && buffer_.size() - begin >= 3 &&
            std::memcmp(base + begin, "\xEF\xBB\xBF", 3) == 0)
            begin += 3;
        const void* nl = std::memchr(base + begin, '\n', buffer_.size() - begin);
        line.number = ++number_;
        line.offset = begin;
        if (nl != nullptr) {
            const auto at = static_cast<std::size_t>(static_cast<const char*>(nl) - base);
            line.terminated = true;
            line.end = at + 1;
            line.length = at - begin;
            if (line.length > 0 && base[at - 1] == '\r') --line.length;
        } else {
            line.terminated = false;
            line.end = buffer_.size();
            line.length = buffer_.size() - begin;
        }
        pos_ = line.end;
        return true;
    }

    /// The text of a line.
    [[nodiscard]] std::string_view text(const LineSpan& line) const noexcept {
        return buffer_.substr(line.offset, line.length);
    }

private:
    std::string_view buffer_;
    std::size_t pos_ = 0;
    std::size_t number_ = 0;
};

}  // namespace agentcore::detail

#pragma once
// Server-sent events (the framing of every streamed provider reply), the events a stream
// accumulator yields for a user interface, and the safe reading of untrusted JSON.

#include <agentcore/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore::llm {

/// One server-sent event: its `event:` name (empty when the event had none) and its data lines
/// joined with "\n".
struct SseEvent {
    std::string event;
    std::string data;
};

/// Splits a byte stream into server-sent events, fed in chunks of any size (a chunk may end
/// inside a line, or inside a UTF-8 sequence).
///
/// Lines end with "\n", "\r\n" or "\r"; a blank line ends an event; lines starting with ":" are
/// comments; fields other than `event` and `data` are ignored (the SSE standard). Bytes that are
/// not UTF-8 are replaced with U+FFFD, as a browser's decoder does.
class SseParser {
public:
    /// Feeds bytes; returns the events they completed.
    /// Complexity: linear in the bytes fed (a line split over many chunks is scanned once).
    std::vector<SseEvent> feed(std::string_view bytes) {
        std::vector<SseEvent> out;
        buffer_.append(bytes.data(), bytes.size());
        std::size_t start = 0;
        std::size_t i = scanned_;  // bytes before it hold no line break: a long line costs O(n)
        for (; i < buffer_.size(); ++i) {
            const char c = buffer_[i];
            if (c != '\n' && c != '\r') continue;
            if (c == '\r' && i + 1 == buffer_.size()) break;  // a "\r\n" may be split
            line(std::string_view(buffer_).substr(start, i - start), out);
            if (c == '\r' && buffer_[i + 1] == '\n') ++i;
            start = i + 1;
        }
        buffer_.erase(0, start);
        scanned_ = i - start;
        return out;
    }

    /// The end of the stream: a last line without its line break and an event without its blank
    /// line are still delivered (as browsers do).
    std::vector<SseEvent> finish() {
        std::vector<SseEvent> out;
        if (!buffer_.empty()) {
            std::string rest;
            rest.swap(buffer_);
            scanned_ = 0;
            if (!rest.empty() && rest.back() == '\r') rest.pop_back();
            line(rest, out);
        }
        flush(out);
        return out;
    }

    /// True when bytes of an unfinished line or event are held.
    [[nodiscard]] bool pending() const noexcept { return !buffer_.empty() || has_fields_; }

    /// Bytes held for an unfinished line or event.
    [[nodiscard]] std::size_t buffered() const noexcept { return buffer_.size() + data_.size(); }

private:
    void line(std::string_view text, std::vector<SseEvent>& out);
    void flush(std::vector<SseEvent>& out) {
        if (!has_fields_) return;
        out.push_back(SseEvent{std::move(event_), std::move(data_)});
        event_.clear();
        data_.clear();
        has_fields_ = false;
        has_data_ = false;
    }

    std::string buffer_;
    std::size_t scanned_ = 0;
    std::string event_;
    std::string data_;
    bool has_fields_ = false;
    bool has_data_ = false;
};

/// What an accumulator reports while a reply streams in, for a user interface.
enum class StreamEventType {
    text_start,
    text_delta,
    text_end,
    thinking_start,
    thinking_delta,
    thinking_end,
    toolcall_start,
    toolcall_delta,  ///< `delta` is a piece of the arguments' JSON text
    toolcall_end,
    done,   ///< the reply is complete
    error,  ///< the reply failed; `delta` holds the error message
};

/// One event of a streamed reply: its type, the index of the content block it concerns in the
/// final message, and the text it adds (deltas) or the block's whole text (ends).
struct StreamEvent {
    StreamEventType type = StreamEventType::text_delta;
    std::size_t content_index = 0;
    std::string delta;
};

namespace detail {

// Replaces every byte sequence that is not well-formed UTF-8 (including encoded surrogates and
// overlong forms) with U+FFFD.
inline std::string sanitize_utf8(std::string_view in) {
    std::string out;
    out.reserve(in.size());
    const auto* s = reinterpret_cast<const unsigned char*>(in.data());
    const std::size_t n = in.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char c = s[i];
        if (c < 0x80) {
            out.push_back(static_cast<char>(c));
            ++i;
            continue;
        }
        std::size_t len = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            len = 2;
        else if (c == 0xE0)
            len = 3, lo = 0xA0;
        else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
            len = 3;
        else if (c == 0xED)
            len = 3, hi = 0x9F;
        else if (c == 0xF0)
            len = 4, lo = 0x90;
        else if (c >= 0xF1 && c <= 0xF3)
            len = 4;
        else if (c == 0xF4)
            len = 4, hi = 0x8F;
        std::size_t ok = 0;
        if (len != 0) {
            ok = 1;
            while (ok < len && i + ok < n) {
                const unsigned char b = s[i + ok];
                const unsigned char l = ok == 1 ? lo : 0x80, h = ok == 1 ? hi : 0xBF;
                if (b < l || b > h) break;
                ++ok;
            }
        }
        if (len != 0 && ok == len) {
            out.append(in.data() + i, len);
            i += len;
        } else {
            out += "\xEF\xBF\xBD";
            i += ok == 0 ? 1 : ok;
        }
    }
    return out;
}

inline bool is_utf8(std::string_view in) noexcept {
    for (char c : in)
        if (static_cast<unsigned char>(c) >= 0x80) return sanitize_utf8(in) == in;
    return true;
}

// Text for an outgoing request: valid UTF-8 always (pi strips lone surrogates likewise).
inline std::string wire_text(std::string_view in) {
    return is_utf8(in) ? std::string(in) : sanitize_utf8(in);
}

// Parses untrusted JSON text (made UTF-8 first); nullopt when it is not JSON, including a
// number too large for a double. Never throws but for memory exhaustion.
inline std::optional<Json> parse_untrusted(std::string_view text) {
    Json j = is_utf8(text) ? Json::parse(text, nullptr, false)
                           : Json::parse(sanitize_utf8(text), nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
}

inline const std::string* string_at(const Json* j, std::string_view key) noexcept {
    if (j == nullptr || !j->is_object()) return nullptr;
    auto it = j->find(key);
    if (it == j->end() || !it->is_string()) return nullptr;
    return &it->get_ref<const std::string&>();
}
inline std::string string_or(const Json* j, std::string_view key, std::string_view fallback = {}) {
    const std::string* s = string_at(j, key);
    return s ? *s : std::string(fallback);
}

}  // namespace detail

inline void SseParser::line(std::string_view text, std::vector<SseEvent>& out) {
    if (text.empty()) {
        flush(out);
        return;
    }
    if (text.front() == ':') return;
    const std::size_t colon = text.find(':');
    const std::string_view field = text.substr(0, colon);
    std::string_view value =
        colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "event") {
        event_ = detail::wire_text(value);
        has_fields_ = true;
    } else if (field == "data") {
        if (has_data_) data_.push_back('\n');
        data_ += detail::wire_text(value);
        has_data_ = true;
        has_fields_ = true;
    }
}

}  // namespace agentcore::llm

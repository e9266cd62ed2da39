// libFuzzer target: the line decoder of both dialects, the header decoder and the open path's
// scanner, on every line of the input. Checks: no crash; the scanner accepts exactly the
// objects nlohmann accepts (lone surrogates aside) and parse_json builds the same DOM; the open
// path's field check (codec_check.hpp) accepts exactly the lines the codec decodes, with or
// without the skip memo the scan filled; the scanner's scalar path says what its vector path
// says, with the same message; an entry that decodes is written back and read again unchanged.
#include <agentcore/codec.hpp>
#include <agentcore/detail/codec_check.hpp>
#include <agentcore/detail/json_scan.hpp>
#include <agentcore/detail/line_index.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

bool plain_json_object(std::string_view text) {
    // nlohmann skips a byte order mark, ends the input at a NUL byte (so it accepts
    // `{...}\0junk`) and nests without limit; the scanner does none of these.
    if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") return false;
    if (text.find('\0') != std::string_view::npos) return false;
    std::size_t opens = 0;
    for (char c : text) opens += (c == '{' || c == '[') ? 1U : 0U;
    if (opens >= agentcore::detail::JsonScanner::max_depth) return false;
    // A lone surrogate escape: nlohmann refuses it, JavaScript and the scanner accept it.
    if (text.find("\\ud") != std::string_view::npos || text.find("\\uD") != std::string_view::npos)
        return false;
    const auto first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && text[first] == '{';
}

void check_line(std::string_view line) {
    using namespace agentcore;
    for (const Dialect dialect : {Dialect::native, Dialect::pi}) {
        detail::ScannedEntry scanned;
        std::string reason;
        detail::SkipMemo memo;
        const bool scanner_accepts =
            detail::JsonScanner::scan_entry(line, dialect, scanned, reason, &memo);
        {
            detail::ScannedEntry scalar;
            std::string scalar_reason;
            if (detail::JsonScanner::scan_entry<detail::ScanPath::scalar>(
                    line, dialect, scalar, scalar_reason) != scanner_accepts ||
                scalar_reason != reason || scalar.type != scanned.type || scalar.id != scanned.id ||
                scalar.parent_id != scanned.parent_id ||
                scalar.message_role != scanned.message_role ||
                scalar.message_usage != scanned.message_usage || scalar.usage != scanned.usage)
                std::abort();
            std::string vector_error;
            std::string scalar_error;
            if (detail::JsonScanner::validate(line, vector_error) !=
                    detail::JsonScanner::validate<detail::ScanPath::scalar>(line, scalar_error) ||
                vector_error != scalar_error)
                std::abort();
        }
        const bool plain = plain_json_object(line);
        if (plain && scanner_accepts != Json::accept(line)) std::abort();
        if (plain && scanner_accepts) {
            Json ours;
            std::string error;
            if (!detail::parse_json(line, ours, error) || ours != Json::parse(line)) std::abort();
        }
        // The open path's verdict (for the entries it does not decode at open) is the codec's.
        std::string scratch;
        std::string_view type;
        if (scanner_accepts && !scanned.type.empty() && !scanned.id.empty() &&
            scanned.id.front() == '"' &&
            detail::JsonScanner::string_value(scanned.type, scratch, type) && type != "label" &&
            type != "session_info" && type != "leaf") {
            bool checked = true;
            std::string check_error;
            try {
                (void)detail::check_entry_fields(line, type, dialect);
            } catch (const SessionError& e) {
                checked = false;
                check_error = e.what();
            }
            bool checked_with_memo = true;
            std::string memo_error;
            try {
                (void)detail::check_entry_fields(line, type, dialect, &memo);
            } catch (const SessionError& e) {
                checked_with_memo = false;
                memo_error = e.what();
            }
            if (checked != checked_with_memo || check_error != memo_error) std::abort();
            bool decoded = true;
            try {
                (void)decode_entry(line, dialect);
            } catch (const SessionError&) {
                decoded = false;
            }
            if (checked != decoded) std::abort();
        }
        // Decoding the text and reading the parsed value agree: the same entry or the same error.
        if (scanner_accepts) {
            std::string from_text;
            std::string from_value;
            try {
                const SessionTreeEntry e = decode_entry(line, dialect);
                from_text = encode_entry(e, Dialect::native) + encode_entry(e, Dialect::pi);
            } catch (const SessionError& e) {
                from_text = e.what();
            }
            try {
                Json parsed;
                std::string error;
                if (!detail::parse_json(line, parsed, error)) std::abort();
                const SessionTreeEntry e = entry_from_json(std::move(parsed), dialect);
                from_value = encode_entry(e, Dialect::native) + encode_entry(e, Dialect::pi);
            } catch (const SessionError& e) {
                from_value = e.what();
            }
            if (from_text != from_value) std::abort();
        }
        try {
            const SessionTreeEntry entry = decode_entry(line, dialect);
            const std::string once = encode_entry(entry, dialect);
            const std::string twice = encode_entry(decode_entry(once, dialect), dialect);
            if (once != twice) std::abort();
        } catch (const SessionError&) {
        }
    }
    try {
        Dialect detected = Dialect::native;
        const SessionHeader header = decode_header(line, &detected);
        const std::string once = encode_header(header, detected);
        if (encode_header(decode_header(once), detected) != once) std::abort();
    } catch (const SessionError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    check_line(input);
    agentcore::detail::LineReader reader(input);
    agentcore::detail::LineSpan span;
    int lines = 0;
    while (reader.next(span) && ++lines < 64) {
        if (span.offset == 0 && span.end == input.size()) break;  // the whole input: done above
        check_line(reader.text(span));
    }
    return 0;
}

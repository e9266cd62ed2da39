#pragma once
// What a search needs of an entry, read from the raw text of its line: its type, id, time,
// role and the text search_text_of (search.hpp) would give the decoded entry, without building
// a DOM or a typed entry.
//
// A common word is held by thousands of entries; decoding each candidate whole (a DOM, then the
// typed entry) costs several times what reading its few text fields does. The reader follows
// the codec's rules for the fields it reads (the last of repeated keys, escapes decoded,
// WTF-8 for lone surrogates, the dialect's spellings of roles, block types and keys) and
// builds the parts in search_text_of's order. Whatever it is not sure of (a field of an
// unexpected type, a repeated key inside tool arguments, whose order a DOM would change) it
// leaves to the codec: the caller then decodes the line. tests/test_search.cpp compares it with
// search_text_of on every line of a generated corpus and on hand-written odd lines.

#include <agentcore/codec.hpp>
#include <agentcore/detail/codec_check.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/detail/json_scan.hpp>
#include <agentcore/search.hpp>

#include <agentcore/storage.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentcore::detail {

/// What search_line_fields read of an entry line.
struct SearchLineFields {
    std::string type;
    std::string id;
    std::string timestamp;
    std::string_view role;  ///< native spelling ("tool_result"); empty for other entries
    std::string text;       ///< search_text_of the decoded entry
};

/// The outcome of search_line_fields.
enum class SearchLineRead {
    text,     ///< the fields are read (the text may be empty)
    nothing,  ///< an entry the codec reads as one without text (a type or role it keeps opaque)
    decode,   ///< the line has a shape left to the codec: decode it
};

class SearchLineReader {
public:
    SearchLineReader(Dialect dialect, const SearchTextOptions& options) noexcept
        : d_(dialect), options_(options) {}

    /// Reads `line`, an entry line the scanner has validated (JsonScanner::scan_entry), into
    /// `out`. `memo`: the one that scan filled for this line (SkipMemo), when the caller kept
    /// it; the values the reader steps over are then not walked again.
    SearchLineRead read(std::string_view line, SearchLineFields& out, SkipMemo* memo = nullptr) {
        memo_ = memo != nullptr && memo->covers(line) ? memo : nullptr;
        out.text.clear();
        out.role = {};
        enum : std::size_t { type, id, timestamp, message, summary, content, label, name, count };
        std::array<RawValue, count> v{};
        collect_members(line,
                        std::array<std::string_view, count>{"type", "id", "timestamp", "message",
                                                            "summary", "content", "label", "name"},
                        v, memo_);
        if (!string_of(v[type], out.type) || !string_of(v[id], out.id))
            return SearchLineRead::decode;
        const std::string_view t = out.type;
        const bool known = t == MessageEntry::type || t == CompactionEntry::type ||
                           t == BranchSummaryEntry::type || t == CustomMessageEntry::type ||
                           t == LabelEntry::type || t == SessionInfoEntry::type ||
                           t == ThinkingLevelChangeEntry::type || t == ModelChangeEntry::type ||
                           t == ActiveToolsChangeEntry::type || t == CustomEntry::type ||
                           t == LeafEntry::type;
        if (!known) return SearchLineRead::nothing;  // an entry of a newer writer: no text
        out.timestamp.clear();
        if (!FieldCheck::absent(v[timestamp]) && !string_of(v[timestamp], out.timestamp))
            return SearchLineRead::decode;
        bool ok = true;
        if (t == MessageEntry::type) {
            if (v[message].empty() || v[message].front() != '{') return SearchLineRead::decode;
            const SearchLineRead r = message_text(v[message], out);
            if (r != SearchLineRead::text) return r;
        } else if (t == CompactionEntry::type || t == BranchSummaryEntry::type) {
            ok = part(v[summary], out.text);
        } else if (t == CustomMessageEntry::type) {
            ok = content_text(v[content], out.text);
        } else if (t == LabelEntry::type) {
            ok = optional_part(v[label], out.text);
        } else if (t == SessionInfoEntry::type) {
            ok = optional_part(v[name], out.text);
        }
        return ok ? SearchLineRead::text : SearchLineRead::decode;
    }

private:
    // The string a raw value holds (escapes decoded); false when it is not a string.
    bool string_of(RawValue raw, std::string& out) {
        if (raw.size() < 2 || raw.front() != '"') return false;
        const std::string_view inner = raw.substr(1, raw.size() - 2);
        if (inner.find('\\') == std::string_view::npos) {
            out.assign(inner);
            return true;
        }
        return JsonScanner::unescape(inner, out);
    }

    // Appends a string value as a part of the text (append_part); false when not a string.
    bool part(RawValue raw, std::string& out) {
        return capped_part(raw, out, no_cap - capped_lookahead);
    }

    // Appends a string value as a part of the text (append_part), decoded a run of plain bytes
    // at a time; for a tool's output, of which only the first `cap` bytes are searched
    // (capped), decoding stops once `out` holds `cap` bytes and the character after them
    // (capped_lookahead), which is all capped() looks at. False when the value is not a string.
    bool capped_part(RawValue raw, std::string& out, std::size_t cap) {
        if (raw.size() < 2 || raw.front() != '"') return false;
        const std::string_view inner = raw.substr(1, raw.size() - 2);
        const std::size_t enough = cap + capped_lookahead;
        if (inner.empty() || out.size() >= enough) return true;
        if (!out.empty()) out.push_back('\n');
        std::size_t i = 0;
        while (i < inner.size() && out.size() < enough) {
            std::size_t escape = inner.find('\\', i);
            if (escape == std::string_view::npos) escape = inner.size();
            const std::size_t take = std::min(escape - i, enough - out.size());
            out.append(inner.substr(i, take));
            i += take;
            if (i < escape || i == inner.size()) break;
            // One escape; a \u escape with another after it may be a surrogate pair.
            std::size_t length = inner[i + 1] == 'u' ? 6 : 2;
            if (length == 6 && i + 12 <= inner.size() && inner[i + 6] == '\\' &&
                inner[i + 7] == 'u')
                length = 12;
            if (!JsonScanner::unescape(inner.substr(i, length), scratch_)) return false;
            out += scratch_;
            i += length;
        }
        return true;
    }

    bool optional_part(RawValue raw, std::string& out) {
        return FieldCheck::absent(raw) || part(raw, out);
    }

    SearchLineRead message_text(RawValue message, SearchLineFields& out) {
        enum : std::size_t { role, content, tool_name, command, output, summary, count };
        std::array<RawValue, count> v{};
        collect_members(message,
                        std::array<std::string_view, count>{"role", "content", keys::tool_name(d_),
                                                            "command", "output", "summary"},
                        v, memo_);
        std::string role_text;
        if (!string_of(v[role], role_text)) return SearchLineRead::decode;
        std::string& text = out.text;
        bool ok = true;
        if (role_text == "user") {
            out.role = "user";
            ok = content_text(v[content], text);
        } else if (role_text == "assistant") {
            out.role = "assistant";
            ok = blocks_text(v[content], text, true);
        } else if (role_text == roles::tool_result(d_)) {
            out.role = "tool_result";
            ok = part(v[tool_name], text);
            if (ok && options_.tool_results) {
                body_.clear();
                cap_ = options_.tool_result_cap;
                ok = blocks_text(v[content], body_, false);
                cap_ = no_cap;
                append_part(text, capped(body_, options_.tool_result_cap));
            }
        } else if (role_text == roles::bash_execution(d_)) {
            out.role = "bash_execution";
            ok = part(v[command], text);
            if (ok && options_.tool_results) {
                body_.clear();
                ok = capped_part(v[output], body_, options_.tool_result_cap);
                append_part(text, capped(body_, options_.tool_result_cap));
            }
        } else if (role_text == "custom") {
            out.role = "custom";
            ok = content_text(v[content], text);
        } else if (role_text == roles::branch_summary(d_)) {
            out.role = "branch_summary";
            ok = part(v[summary], text);
        } else if (role_text == roles::compaction_summary(d_)) {
            out.role = "compaction_summary";
            ok = part(v[summary], text);
        } else {
            return SearchLineRead::nothing;  // a role of a newer writer: kept opaque, no text
        }
        return ok ? SearchLineRead::text : SearchLineRead::decode;
    }

    // Content: a string, or an array of blocks (no thinking outside assistant messages).
    bool content_text(RawValue raw, std::string& out) {
        if (!raw.empty() && raw.front() == '"') return part(raw, out);
        return blocks_text(raw, out, false);
    }

    bool blocks_text(RawValue raw, std::string& out, bool thinking_allowed) {
        if (raw.empty() || raw.front() != '[') return false;
        bool ok = true;
        for_each_item(raw, [&](RawValue block) {
            if (ok) ok = block_text(block, out, thinking_allowed);
        });
        return ok;
    }

    bool block_text(RawValue block, std::string& out, bool thinking_allowed) {
        if (block.empty() || block.front() != '{') return false;
        enum : std::size_t { type, text, thinking, name, arguments, count };
        std::array<RawValue, count> v{};
        collect_members(
            block,
            std::array<std::string_view, count>{"type", "text", "thinking", "name", "arguments"}, v,
            memo_);
        std::string type_text;
        if (!string_of(v[type], type_text)) return false;
        if (type_text == "text")
            return cap_ == no_cap ? part(v[text], out) : capped_part(v[text], out, cap_);
        if (type_text == "thinking") {
            if (v[thinking].empty() || v[thinking].front() != '"') return false;
            return !(thinking_allowed && options_.thinking) || part(v[thinking], out);
        }
        if (type_text == block_types::tool_call(d_)) {
            if (!part(v[name], out)) return false;
            // take_object: an object is required; the codec decides anything else.
            if (v[arguments].empty() || v[arguments].front() != '{') return false;
            return json_strings(v[arguments], out, 0);
        }
        if (type_text == "image") {
            // The codec requires its data to be a string; images are never searched.
            return true;
        }
        return true;  // a block type of a newer writer: kept opaque, never searched
    }

    // append_json_strings over a raw value: the string values in document order. A repeated
    // key (which a DOM would keep in its first place with its last value) or an escaped key
    // is left to the codec.
    template <class T = void>
    bool json_strings(RawValue raw, std::string& out, int depth) {
        if (depth > 64) return true;
        if (raw.front() == '"') return part(raw, out);
        bool ok = true;
        if (raw.front() == '[') {
            for_each_item(raw, [&](RawValue item) {
                if (ok) ok = json_strings(item, out, depth + 1);
            });
            return ok;
        }
        if (raw.front() != '{') return true;  // numbers, booleans, null
        dependent<std::vector<std::string_view>, T> keys;
        JsonScanner::for_each_member(
            raw,
            [&](std::string_view key, std::string_view value) {
                if (!ok) return;
                if (key.find('\\') != std::string_view::npos) {
                    ok = false;
                    return;
                }
                keys.push_back(key);
                ok = json_strings(value, out, depth + 1);
            },
            memo_);
        if (!ok) return false;
        std::sort(keys.begin(), keys.end());
        return std::adjacent_find(keys.begin(), keys.end()) == keys.end();
    }

    // Calls `visit(raw_item)` for each item of a valid JSON array.
    template <class Visit>
    void for_each_item(std::string_view array, Visit&& visit) const {
        const char* p = array.data();
        const char* end = p + array.size();
        const auto ws = [&] {
            while (p != end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
        };
        ++p;  // '['
        for (;;) {
            ws();
            if (p == end || *p == ']') return;
            const char* begin = p;
            p = JsonScanner::value_end(p, end, memo_);
            visit(std::string_view(begin, static_cast<std::size_t>(p - begin)));
            ws();
            if (p == end || *p != ',') return;
            ++p;
        }
    }

    static constexpr std::size_t no_cap = static_cast<std::size_t>(-1);

    Dialect d_;
    const SearchTextOptions& options_;
    std::size_t cap_ = no_cap;  // while a tool result's blocks are read: its cap
    SkipMemo* memo_ = nullptr;  // the line's, during read()
    std::string scratch_;
    std::string body_;
};

/// The name of the session in the JSONL text `data` (a whole session file), as its storage's
/// index gives it: the name of its last session_info entry, trimmed; none when that one has no
/// name. Only lines that mention session_info are read, in one pass with the search for a `\\u`
/// escape, which may spell the type: from the first line that holds one, every line is read.
template <class = void>
std::optional<std::string> session_file_name(std::string_view data, Dialect dialect) {
    std::optional<std::string> name;
    bool escapes = false;
    std::size_t from = 0;
    std::string type;
    while (from < data.size()) {
        std::size_t at = from;
        if (!escapes) {
            at = find_either(data.substr(from), SessionInfoEntry::type, "\\u");
            if (at == std::string_view::npos) break;
            at += from;
            escapes = data.substr(at, 2) == "\\u";
        }
        const std::size_t begin = at == 0 ? 0 : data.rfind('\n', at - 1) + 1;  // npos + 1 == 0
        std::size_t end = data.find('\n', at);
        if (end == std::string_view::npos) end = data.size();
        from = end + 1;
        if (begin == 0) continue;  // the header
        std::string_view line = data.substr(begin, end - begin);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        ScannedEntry scanned;
        std::string reason;
        if (!JsonScanner::scan_entry(line, dialect, scanned, reason)) continue;
        std::array<RawValue, 2> v{};
        collect_members(line, std::array<std::string_view, 2>{"type", "name"}, v);
        std::string_view t;
        if (!JsonScanner::string_value(v[0], type, t) || t != SessionInfoEntry::type) continue;
        std::string value;
        std::string_view text;
        if (!FieldCheck::absent(v[1]) && JsonScanner::string_value(v[1], value, text))
            text = trim(text);
        else
            text = {};
        name = text.empty() ? std::nullopt : std::optional<std::string>(text);
    }
    return name;
}

/// Matches one entry line at position `seq` of a session: the line must have passed
/// JsonScanner::scan_entry, which filled `memo` (SkipMemo; may be null). Its text fields are
/// read (SearchLineReader), or the line decoded when the reader leaves it to the codec; a hit's
/// line must meet the codec's field rules (check_entry_fields). `fail(reason)` is called (and
/// must throw) for a line the codec refuses. Returns false when the sink stopped.
template <class Fail>
bool search_entry_line(const SearchQuery& query, const SearchOptions& options,
                       SearchLineReader& reader, SearchLineFields& f, std::string_view line,
                       SkipMemo* memo, Dialect dialect, const SessionHeader& header,
                       const std::string& name, std::uint64_t seq, const SearchHitSink& sink,
                       Fail&& fail) {
    const SearchLineRead read = reader.read(line, f, memo);
    if (read == SearchLineRead::nothing) return true;
    if (read == SearchLineRead::decode) {
        dependent<SessionTreeEntry, Fail> entry;
        try {
            entry = decode_entry(line, dialect);
        } catch (const SessionError& e) {
            fail(std::string(e.detail()));
        }
        return search_entry(query, options, header, name, entry, seq, sink);
    }
    if (!entry_fields_pass(options, f.type, f.role, f.timestamp)) return true;
    TextMatch m = match_text(query, f.text);
    if (!m.matched) return true;
    if (f.type != LabelEntry::type && f.type != SessionInfoEntry::type &&
        f.type != LeafEntry::type) {
        try {
            check_entry_fields(line, f.type, dialect, memo);
        } catch (const SessionError& e) {
            fail(std::string(e.detail()));
        }
    }
    SearchHit hit;
    hit.session_id = header.id;
    hit.cwd = header.cwd;
    hit.session_name = name;
    hit.entry_id = f.id;
    hit.entry_type = f.type;
    hit.role = std::string(f.role);
    hit.timestamp = f.timestamp;
    hit.seq = seq;
    hit.score = m.score;
    hit.snippet = std::move(m.snippet);
    hit.marks = std::move(m.marks);
    return sink(std::move(hit));
}

}  // namespace agentcore::detail

#pragma once
// The codec's field rules, checked on an entry line's raw text without building a DOM.
//
// The JSONL storage opens a big file without decoding payloads, but a line of valid JSON with a
// field of the wrong type (`"content":5`) must be found at open, not when the entry is first
// read. check_entry_fields() walks the line's objects with the scanner's member walker and
// applies, field by field, the rules the readers of codec_messages.hpp and codec_entries.hpp
// apply (the same required fields, types, integer and boolean rules, dialect spellings, the
// last of repeated keys), and raises the same SessionError(invalid_entry) they would, naming
// the entry and the field. A line it accepts decodes; a line it refuses does not. Keep the two
// in step: tests feed both the same damaged lines (test_codec_check.cpp), and so does the
// fuzz_line target.
//
// It allocates nothing for a valid line except for keys written with escapes.

#include <agentcore/detail/codec_entries.hpp>
#include <agentcore/detail/codec_messages.hpp>
#include <agentcore/detail/codec_raw.hpp>
#include <agentcore/detail/codec_read.hpp>
#include <agentcore/detail/json_scan.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace agentcore::detail {

/// The raw text of one member of an object; empty when the member is absent.
using RawValue = std::string_view;

/// The field rules of the codec's readers on raw values (see the top of this header).
class FieldCheck {
public:
    /// `memo`, when given, is shared by every walk of the line checked (SkipMemo).
    FieldCheck(Dialect d, ReadContext& ctx, SkipMemo* memo = nullptr) noexcept
        : d_(d), ctx_(ctx), memo_(memo) {}

    template <class = void>
    [[noreturn]] void expected(const FieldPath& path, std::string_view what, RawValue got) const {
        std::string problem = "expected ";
        problem += what;
        problem += ", got ";
        problem += raw_type_name(got);
        ctx_.fail(path, problem);
    }

    static bool absent(RawValue v) noexcept { return v.empty() || v.front() == 'n'; }

    template <class = void>
    void string(RawValue v, const FieldPath& path) const {
        if (v.empty()) ctx_.missing(path);
        if (v.front() != '"') expected(path, "a string", v);
    }
    template <class = void>
    void optional_string(RawValue v, const FieldPath& path) const {
        if (!absent(v) && v.front() != '"') expected(path, "a string or null", v);
    }
    template <class = void>
    static bool is_int(RawValue v) {
        if (raw_type_name(v)[0] != 'n' || v.front() == 'n') return false;  // "number"
        std::int64_t out = 0;
        return json_to_int64(json_number(v), out);
    }
    template <class = void>
    void integer(RawValue v, const FieldPath& path) const {
        if (v.empty()) ctx_.missing(path);
        if (!is_int(v)) expected(path, "an integer", v);
    }
    template <class = void>
    void optional_integer(RawValue v, const FieldPath& path) const {
        if (!absent(v) && !is_int(v)) expected(path, "an integer or null", v);
    }
    template <class = void>
    void number(RawValue v, const FieldPath& path) const {
        if (v.empty()) ctx_.missing(path);
        if (raw_type_name(v)[0] != 'n' || v.front() == 'n') expected(path, "a number", v);
    }
    template <class = void>
    void boolean(RawValue v, const FieldPath& path) const {
        if (v.empty()) ctx_.missing(path);
        if (v.front() != 't' && v.front() != 'f') expected(path, "a boolean", v);
    }
    template <class = void>
    void optional_boolean(RawValue v, const FieldPath& path) const {
        if (!absent(v) && v.front() != 't' && v.front() != 'f')
            expected(path, "a boolean or null", v);
    }
    template <class = void>
    void object(RawValue v, const FieldPath& path) const {
        if (v.empty()) ctx_.missing(path);
        if (v.front() != '{') expected(path, "an object", v);
    }

    // The string a raw value holds (it is a string); `scratch` holds it when it has escapes.
    template <class = void>
    static std::string_view text_of(RawValue v, std::string& scratch) {
        std::string_view out;
        JsonScanner::string_value(v, scratch, out);
        return out;
    }

    template <class = void>
    void block(RawValue v, const FieldPath& path) const {
        if (v.front() != '{') expected(path, "an object", v);
        std::array<RawValue, 8> s{};
        collect_members(v,
                        std::array<std::string_view, 8>{"type", "text", "data", keys::mime_type(d_),
                                                        "thinking", "id", "name", "arguments"},
                        s, memo_);
        if (s[0].empty()) ctx_.missing(path / "type");
        if (s[0].front() != '"') expected(path / "type", "a string", s[0]);
        std::string scratch;
        const std::string_view type = text_of(s[0], scratch);
        if (type == "text") {
            string(s[1], path / "text");
        } else if (type == "image") {
            string(s[2], path / "data");
            string(s[3], path / keys::mime_type(d_));
        } else if (type == "thinking") {
            string(s[4], path / "thinking");
        } else if (type == block_types::tool_call(d_)) {
            string(s[5], path / "id");
            string(s[6], path / "name");
            object(s[7], path / "arguments");
        }
    }

    template <class = void>
    void blocks(RawValue v, const FieldPath& path) const {
        if (v.empty()) ctx_.missing(path);
        if (v.front() != '[') expected(path, "an array of content blocks", v);
        std::size_t i = 0;
        for_each_element(
            v, [&](RawValue element) { block(element, path[i++]); }, memo_);
    }

    template <class = void>
    void content(RawValue v, const FieldPath& path) const {
        if (v.empty()) ctx_.missing(path);
        if (v.front() == '"') return;
        if (v.front() != '[') expected(path, "a string or an array of content blocks", v);
        blocks(v, path);
    }

    template <class = void>
    void usage(RawValue v, const FieldPath& path) const {
        if (v.front() != '{') expected(path, "an object", v);
        std::array<RawValue, 6> s{};
        collect_members(
            v,
            std::array<std::string_view, 6>{"input", "output", keys::cache_read(d_),
                                            keys::cache_write(d_), keys::total_tokens(d_), "cost"},
            s, memo_);
        integer(s[0], path / "input");
        integer(s[1], path / "output");
        integer(s[2], path / keys::cache_read(d_));
        integer(s[3], path / keys::cache_write(d_));
        integer(s[4], path / keys::total_tokens(d_));
        if (s[5].empty()) ctx_.missing(path / "cost");
        const FieldPath cost = path / "cost";
        if (s[5].front() != '{') expected(cost, "an object", s[5]);
        std::array<RawValue, 5> c{};
        collect_members(s[5],
                        std::array<std::string_view, 5>{"input", "output", keys::cache_read(d_),
                                                        keys::cache_write(d_), "total"},
                        c, memo_);
        number(c[0], cost / "input");
        number(c[1], cost / "output");
        number(c[2], cost / keys::cache_read(d_));
        number(c[3], cost / keys::cache_write(d_));
        number(c[4], cost / "total");
    }

    template <class = void>
    void message(RawValue v, const FieldPath& path) const {
        if (v.front() != '{') expected(path, "an object", v);
        enum : std::size_t {
            role,
            content_key,
            timestamp,
            api,
            provider,
            model,
            usage_key,
            stop_reason,
            error_message,
            tool_call_id,
            tool_name,
            is_error,
            command,
            output,
            exit_code,
            cancelled,
            truncated,
            full_output_path,
            exclude_from_context,
            custom_type,
            display,
            summary,
            from_id,
            tokens_before,
            count
        };
        std::array<RawValue, count> s{};
        collect_members(v,
                        std::array<std::string_view, count>{"role",
                                                            "content",
                                                            "timestamp",
                                                            "api",
                                                            "provider",
                                                            "model",
                                                            "usage",
                                                            keys::stop_reason(d_),
                                                            keys::error_message(d_),
                                                            keys::tool_call_id(d_),
                                                            keys::tool_name(d_),
                                                            keys::is_error(d_),
                                                            "command",
                                                            "output",
                                                            keys::exit_code(d_),
                                                            "cancelled",
                                                            "truncated",
                                                            keys::full_output_path(d_),
                                                            keys::exclude_from_context(d_),
                                                            keys::custom_type(d_),
                                                            "display",
                                                            "summary",
                                                            keys::from_id(d_),
                                                            keys::tokens_before(d_)},
                        s, memo_);
        if (s[role].empty()) ctx_.missing(path / "role");
        if (s[role].front() != '"') expected(path / "role", "a string", s[role]);
        std::string scratch;
        const std::string_view r = text_of(s[role], scratch);
        if (r == "user") {
            content(s[content_key], path / "content");
            integer(s[timestamp], path / "timestamp");
        } else if (r == "assistant") {
            blocks(s[content_key], path / "content");
            optional_string(s[api], path / "api");
            string(s[provider], path / "provider");
            string(s[model], path / "model");
            if (s[usage_key].empty()) ctx_.missing(path / "usage");
            usage(s[usage_key], path / "usage");
            string(s[stop_reason], path / keys::stop_reason(d_));
            if (stop_reason_from_wire(std::string(text_of(s[stop_reason], scratch)), d_).empty())
                ctx_.fail(path / keys::stop_reason(d_),
                          "not one of " + std::string(stop_reasons_spelled(d_)));
            optional_string(s[error_message], path / keys::error_message(d_));
            integer(s[timestamp], path / "timestamp");
        } else if (r == roles::tool_result(d_)) {
            string(s[tool_call_id], path / keys::tool_call_id(d_));
            string(s[tool_name], path / keys::tool_name(d_));
            blocks(s[content_key], path / "content");
            optional_boolean(s[is_error], path / keys::is_error(d_));
            integer(s[timestamp], path / "timestamp");
        } else if (r == roles::bash_execution(d_)) {
            string(s[command], path / "command");
            string(s[output], path / "output");
            optional_integer(s[exit_code], path / keys::exit_code(d_));
            boolean(s[cancelled], path / "cancelled");
            boolean(s[truncated], path / "truncated");
            optional_string(s[full_output_path], path / keys::full_output_path(d_));
            optional_boolean(s[exclude_from_context], path / keys::exclude_from_context(d_));
            integer(s[timestamp], path / "timestamp");
        } else if (r == "custom") {
            string(s[custom_type], path / keys::custom_type(d_));
            content(s[content_key], path / "content");
            optional_boolean(s[display], path / "display");
            integer(s[timestamp], path / "timestamp");
        } else if (r == roles::branch_summary(d_)) {
            string(s[summary], path / "summary");
            string(s[from_id], path / keys::from_id(d_));
            integer(s[timestamp], path / "timestamp");
        } else if (r == roles::compaction_summary(d_)) {
            string(s[summary], path / "summary");
            integer(s[tokens_before], path / keys::tokens_before(d_));
            integer(s[timestamp], path / "timestamp");
        }
    }

    /// Calls `visit(raw_element)` for each element of a valid JSON array.
    template <class Visit>
    static void for_each_element(RawValue array, Visit&& visit, SkipMemo* memo = nullptr) {
        for_each_raw_element(array, std::forward<Visit>(visit), memo);
    }

private:
    Dialect d_;
    ReadContext& ctx_;
    SkipMemo* memo_;
};

/// What check_entry_fields found out about the entry besides its validity.
struct CheckedEntry {
    /// The raw parent the codec reads for an entry of an unknown type: its dialect's parent key,
    /// else the other dialect's (kept as read by UnknownEntry). Empty for known types.
    RawValue unknown_parent;
};

/// Applies the codec's rules (read_entry) to the raw text of an entry line already validated by
/// the scanner, whose `type` is `type`. Label, session_info and leaf entries are not checked
/// here (the open path decodes them). Throws SessionError(invalid_entry) as read_entry would.
///
/// `scanned`: the memo scan_entry filled for this same line (SkipMemo), when the caller kept
/// it; the check then reads none of the line's long values again. A memo of another text is
/// ignored.
template <class = void>
CheckedEntry check_entry_fields(std::string_view line, std::string_view type, Dialect d,
                                SkipMemo* scanned = nullptr) {
    ReadContext ctx;
    ctx.subject = "entry";
    const FieldPath root{};
    // The walks below share one memo: the line's, the message's and each block's members are
    // read once, whatever the depth they are checked at.
    SkipMemo local;
    const bool use_scanned = scanned != nullptr && scanned->covers(line);
    if (!use_scanned) local.reset(line);
    SkipMemo& memo = use_scanned ? *scanned : local;
    FieldCheck check(d, ctx, &memo);
    enum : std::size_t {
        id,
        parent,
        timestamp,
        message,
        thinking_level,
        provider,
        model_id,
        active_tool_names,
        summary,
        first_kept_entry_id,
        tokens_before,
        retained_tail,
        details,
        usage,
        from_hook,
        from_id,
        custom_type,
        content,
        display,
        other_parent,
        count
    };
    std::array<RawValue, count> s{};
    collect_members(line,
                    std::array<std::string_view, count>{
                        "id",
                        keys::parent_id(d),
                        "timestamp",
                        "message",
                        keys::thinking_level(d),
                        "provider",
                        keys::model_id(d),
                        keys::active_tool_names(d),
                        "summary",
                        keys::first_kept_entry_id(d),
                        keys::tokens_before(d),
                        keys::retained_tail(d),
                        "details",
                        "usage",
                        keys::from_hook(d),
                        keys::from_id(d),
                        keys::custom_type(d),
                        "content",
                        "display",
                        keys::parent_id(d == Dialect::pi ? Dialect::native : Dialect::pi)},
                    s, &memo);
    CheckedEntry out;
    check.string(s[id], root / "id");
    std::string id_text;
    std::string_view id_view = FieldCheck::text_of(s[id], id_text);
    std::string id_owned(id_view);
    ctx.entry_id = &id_owned;

    const bool known = type == MessageEntry::type || type == ThinkingLevelChangeEntry::type ||
                       type == ModelChangeEntry::type || type == ActiveToolsChangeEntry::type ||
                       type == CompactionEntry::type || type == BranchSummaryEntry::type ||
                       type == CustomEntry::type || type == CustomMessageEntry::type ||
                       type == LabelEntry::type || type == SessionInfoEntry::type ||
                       type == LeafEntry::type;
    if (!known) {
        RawValue p = s[parent];
        std::string_view key = keys::parent_id(d);
        if (p.empty()) {
            p = s[other_parent];
            key = keys::parent_id(d == Dialect::pi ? Dialect::native : Dialect::pi);
        }
        if (!FieldCheck::absent(p) && p.front() != '"')
            check.expected(root / key, "a string or null", p);
        out.unknown_parent = p;
        if (!FieldCheck::absent(s[timestamp]) && s[timestamp].front() != '"')
            check.expected(root / "timestamp", "a string", s[timestamp]);
        return out;
    }
    check.optional_string(s[parent], root / keys::parent_id(d));
    check.string(s[timestamp], root / "timestamp");
    if (type == MessageEntry::type) {
        if (s[message].empty()) ctx.missing(root / "message");
        check.message(s[message], root / "message");
    } else if (type == ThinkingLevelChangeEntry::type) {
        check.string(s[thinking_level], root / keys::thinking_level(d));
    } else if (type == ModelChangeEntry::type) {
        check.string(s[provider], root / "provider");
        check.string(s[model_id], root / keys::model_id(d));
    } else if (type == ActiveToolsChangeEntry::type) {
        const FieldPath path = root / keys::active_tool_names(d);
        const RawValue v = s[active_tool_names];
        if (v.empty()) ctx.missing(path);
        if (v.front() != '[') check.expected(path, "an array of strings", v);
        std::size_t i = 0;
        FieldCheck::for_each_element(
            v, [&](RawValue e) { check.string(e, path[i++]); }, &memo);
    } else if (type == CompactionEntry::type) {
        check.string(s[summary], root / "summary");
        check.optional_string(s[first_kept_entry_id], root / keys::first_kept_entry_id(d));
        check.integer(s[tokens_before], root / keys::tokens_before(d));
        if (!FieldCheck::absent(s[retained_tail])) {
            const FieldPath path = root / keys::retained_tail(d);
            if (s[retained_tail].front() != '[')
                check.expected(path, "an array of messages or null", s[retained_tail]);
            std::size_t i = 0;
            FieldCheck::for_each_element(
                s[retained_tail], [&](RawValue m) { check.message(m, path[i++]); }, &memo);
        }
        if (!FieldCheck::absent(s[usage])) check.usage(s[usage], root / "usage");
        check.optional_boolean(s[from_hook], root / keys::from_hook(d));
    } else if (type == BranchSummaryEntry::type) {
        check.string(s[from_id], root / keys::from_id(d));
        check.string(s[summary], root / "summary");
        if (!FieldCheck::absent(s[usage])) check.usage(s[usage], root / "usage");
        check.optional_boolean(s[from_hook], root / keys::from_hook(d));
    } else if (type == CustomEntry::type) {
        check.string(s[custom_type], root / keys::custom_type(d));
    } else if (type == CustomMessageEntry::type) {
        check.string(s[custom_type], root / keys::custom_type(d));
        check.content(s[content], root / "content");
        check.optional_boolean(s[display], root / "display");
    }
    return out;
}

}  // namespace agentcore::detail

#pragma once
// The JSON codec: blocks, usage, messages, entries and the session header, in the native and
// the pi dialect (SPEC §3).
//
// Reading keeps every field the model does not know in the struct's `extra`, and unknown block
// types, roles and entry types whole; writing puts the modelled fields in a fixed order per
// dialect (the order pi's own writer uses, for the pi dialect), then the extras. A line written
// by pi therefore reads and writes back byte for byte. Errors are SessionError(invalid_entry)
// (invalid_session for the header) naming the field path and the entry id, never a value.
//
// Every text is parsed with the scanner's rules (json_scan.hpp): the same lines as the JSONL
// storage's open accepts, lone surrogates included (held as WTF-8 in strings), nothing after
// the value (not even a NUL byte), at most max_json_depth levels of nesting. The writers
// refuse values nested deeper (invalid_entry naming the entry and field) before copying them,
// so no input of any depth recurses without bound.

#include <agentcore/detail/codec_entries.hpp>
#include <agentcore/detail/codec_messages.hpp>
#include <agentcore/detail/codec_nesting.hpp>
#include <agentcore/detail/codec_read.hpp>
#include <agentcore/detail/codec_write.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/detail/json_scan.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/json.hpp>
#include <agentcore/messages.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace agentcore {

/// The newest session format version this library reads and writes.
inline constexpr int current_session_version = 3;

/// Compact JSON, written as JavaScript's JSON.stringify writes it: no spaces, numbers in their
/// shortest form, a double with an integral value without a fraction ("0", not "0.0").
///
/// Throws SessionError(invalid_entry) naming the field for a string that is neither valid UTF-8
/// nor a lone surrogate held as WTF-8, and for a value nested deeper than max_json_depth.
/// Complexity: linear in the size of the output.
template <class = void>
std::string dump_json(const Json& value) {
    std::string out;
    detail::append_json(out, value);
    return out;
}

// ---------------------------------------------------------------------------------------------
// Usage, content blocks, messages

/// A usage object (token counts and cost) in the dialect's spelling.
/// Throws SessionError(invalid_entry) for extras nested deeper than max_json_depth.
template <class = void>
Json usage_to_json(const Usage& usage, Dialect dialect) {
    detail::NestingCheck(detail::ReadContext{}).usage(usage, 1, detail::FieldPath{});
    return detail::write_usage(usage, dialect);
}

/// Reads a usage object. Throws SessionError(invalid_entry) naming the field.
template <class = void>
Usage usage_from_json(Json&& json, Dialect dialect) {
    return detail::read_usage(&json, dialect, detail::ReadContext{}, detail::FieldPath{});
}
template <class = void>
Usage usage_from_json(const Json& json, Dialect dialect) {
    return usage_from_json(Json(json), dialect);
}

/// A content block in the dialect's spelling; an opaque block as it was read.
/// Throws SessionError(invalid_entry) for a value nested deeper than max_json_depth.
template <class = void>
Json content_block_to_json(const ContentBlock& block, Dialect dialect) {
    detail::NestingCheck(detail::ReadContext{}).block(block, 1, detail::FieldPath{});
    return detail::write_block(block, dialect);
}

/// Reads a content block; a type the library does not know becomes an OpaqueContent.
template <class = void>
ContentBlock content_block_from_json(Json&& json, Dialect dialect) {
    return detail::read_block(&json, dialect, detail::ReadContext{}, detail::FieldPath{});
}
template <class = void>
ContentBlock content_block_from_json(const Json& json, Dialect dialect) {
    return content_block_from_json(Json(json), dialect);
}

/// A message in the dialect's spelling; an opaque message as it was read.
/// Throws SessionError(invalid_entry) for a value nested deeper than max_json_depth.
template <class = void>
Json message_to_json(const AgentMessage& message, Dialect dialect) {
    detail::NestingCheck(detail::ReadContext{}).message(message, 1, detail::FieldPath{});
    return detail::write_message(message, dialect);
}

/// Reads a message; a role the library does not know becomes an OpaqueMessage.
template <class = void>
AgentMessage message_from_json(Json&& json, Dialect dialect) {
    return detail::read_message(&json, dialect, detail::ReadContext{}, detail::FieldPath{});
}
template <class = void>
AgentMessage message_from_json(const Json& json, Dialect dialect) {
    return message_from_json(Json(json), dialect);
}

// ---------------------------------------------------------------------------------------------
// Entries

/// An entry as a JSON object: type, id, parent (null for a root), timestamp, the payload, the
/// extras. pi's custom and custom_message entries put the payload before id (as pi does).
/// Throws SessionError(invalid_entry) naming the entry and field for a value whose line would
/// nest deeper than max_json_depth.
template <class = void>
Json entry_to_json(const SessionTreeEntry& entry, Dialect dialect) {
    detail::check_entry_nesting(entry);
    return detail::write_entry(entry, dialect);
}

/// Reads an entry, moving strings and free-form values out of `json`. A missing or null
/// parent makes a root; an unknown type becomes an UnknownEntry holding the whole object.
/// Throws SessionError(invalid_entry) naming the entry id and the field path.
template <class T = void>
SessionTreeEntry entry_from_json(detail::dependent<Json, T>&& json, Dialect dialect) {
    return detail::read_entry(&json, dialect);
}
template <class T = void>
SessionTreeEntry entry_from_json(const detail::dependent<Json, T>& json, Dialect dialect) {
    return entry_from_json<T>(detail::dependent<Json, T>(json), dialect);
}

namespace detail {
/// encode_entry for an entry that check_entry_nesting has passed (the indexed storages check
/// every append before they persist it): appends the line to `out` without checking the
/// nesting again. On an error `out` may hold part of the line.
template <class = void>
void encode_checked_entry_to(std::string& out, const SessionTreeEntry& entry, Dialect dialect) {
    ReadContext ctx;
    ctx.subject = "entry";
    ctx.entry_id = &std::visit([](const auto& e) -> const std::string& { return e.id; }, entry);
    const FieldPath root{};
    TextObject o(TextPlace{out, ctx, root, 0});
    put_entry(o, entry, dialect);
    o.close();
}

/// The same, as a new string.
template <class = void>
std::string encode_checked_entry(const SessionTreeEntry& entry, Dialect dialect) {
    std::string out;
    out.reserve(512);  // most lines fit: one allocation instead of a doubling series
    encode_checked_entry_to(out, entry, dialect);
    return out;
}
}  // namespace detail

/// One compact JSON line for the entry, without the trailing newline, written straight from
/// the typed entry (no JSON value is built): the dump of entry_to_json's value, byte for byte.
/// Throws SessionError(invalid_entry) naming the entry and the field: a string that is not
/// valid UTF-8 (nor a lone surrogate, see json_scan.hpp), a value nested too deep.
template <class = void>
std::string encode_entry(const SessionTreeEntry& entry, Dialect dialect) {
    detail::check_entry_nesting(entry);
    return detail::encode_checked_entry(entry, dialect);
}

namespace detail {
/// Parses one line with the scanner's rules (json_scan.hpp); an error names the column and the
/// reason, never the text (it may be conversation text).
template <class = void>
Json parse_line(std::string_view line, ErrorCode code, std::string_view subject) {
    Json out;
    std::string error;
    if (!parse_json(line, out, error))
        throw SessionError(code, std::string(subject) + ": invalid JSON: " + error);
    return out;
}
}  // namespace detail

namespace detail {
/// Reads the entry in a line the scanner has validated, straight from its text: strings and
/// numbers into the typed struct, a JSON value built only for the free-form fields (extras,
/// details, tool arguments, custom data, values of unknown types). Gives what entry_from_json
/// gives for the parsed line, and the same errors.
template <class = void>
SessionTreeEntry decode_validated_entry(std::string_view line, Dialect dialect) {
    constexpr std::string_view blanks = " \t\n\r";
    const std::size_t first = line.find_first_not_of(blanks);
    line = first == std::string_view::npos
               ? std::string_view()
               : line.substr(first, line.find_last_not_of(blanks) + 1 - first);
    SkipMemo memo;
    memo.reset(line);
    return read_entry(RawJson{line, &memo}, dialect);
}
}  // namespace detail

/// Parses one line (with or without its newline) and reads the entry in it.
/// Throws SessionError(invalid_entry): unparseable JSON (naming the column and the reason, e.g.
/// nesting deeper than max_json_depth or text after the object), or an entry that breaks the
/// format (naming the field).
template <class = void>
SessionTreeEntry decode_entry(std::string_view line, Dialect dialect) {
    std::string error;
    if (!detail::JsonScanner::validate(line, error))
        throw SessionError(ErrorCode::invalid_entry, "entry: invalid JSON: " + error);
    return detail::decode_validated_entry(line, dialect);
}

// ---------------------------------------------------------------------------------------------
// The session header

/// The dialect of a file, from its header: native iff the header has the key "parent_session"
/// (a native header always writes it, null when the session was not forked).
template <class = void>
Dialect detect_dialect(const Json& header) {
    return header.is_object() && header.contains("parent_session") ? Dialect::native : Dialect::pi;
}

namespace detail {
template <class O, class T = void>
void put_header(O& o, const dependent<SessionHeader, T>& header, Dialect dialect) {
    o.add_string("type", SessionHeader::type);
    o.add_int("version", header.version);
    o.add_string("id", header.id);
    o.add_string("timestamp", header.timestamp);
    o.add_string("cwd", header.cwd);
    const bool has_metadata = header.metadata.is_object() && !header.metadata.empty();
    if (dialect == Dialect::native) {
        if (header.parent_session)
            o.add_string("parent_session", *header.parent_session);
        else
            o.add_null("parent_session");
        if (has_metadata)
            o.add_json("metadata", header.metadata);
        else
            o.add_object("metadata", [](auto&) {});
    } else {
        if (header.parent_session) o.add_string("parentSession", *header.parent_session);
        if (has_metadata) o.add_json("metadata", header.metadata);
    }
    o.add_extra(header.extra);
}

inline ReadContext header_context() noexcept {
    ReadContext ctx;
    ctx.code = ErrorCode::invalid_session;
    ctx.subject = "session header";
    return ctx;
}
}  // namespace detail

/// The header as a JSON object. Native: type, version, id, timestamp, cwd, parent_session
/// (null when none), metadata ({} when empty), extras. pi: type, version, id, timestamp, cwd,
/// parentSession when set, metadata when not empty, extras.
template <class T = void>
Json header_to_json(const detail::dependent<SessionHeader, T>& header, Dialect dialect) {
    detail::NestingCheck(detail::header_context()).header(header);
    detail::dependent<detail::ObjectBuilder, T> o;
    detail::put_header(o, header, dialect);
    return o.take();
}

/// Reads a header of either dialect (told apart by detect_dialect). A missing version is 1
/// (pi's first format). Throws SessionError(invalid_session) when `type` is not "session",
/// `id` is not a string, a field is ill-typed, or the version is newer than this library.
template <class = void>
SessionHeader header_from_json(Json&& json) {
    detail::ReadContext ctx;
    ctx.code = ErrorCode::invalid_session;
    ctx.subject = "session header";
    const detail::FieldPath root{};
    if (!json.is_object()) ctx.expected(root, "a JSON object", json);
    const Dialect d = detect_dialect(json);
    const std::string_view parent_key = d == Dialect::native ? "parent_session" : "parentSession";
    std::array<Json*, 7> s{};
    Json extra =
        detail::split_fields(json,
                             std::array<std::string_view, 7>{"type", "version", "id", "timestamp",
                                                             "cwd", parent_key, "metadata"},
                             s);
    if (s[0] == nullptr) ctx.missing(root / "type");
    if (!s[0]->is_string() || s[0]->get_ref<const std::string&>() != SessionHeader::type)
        ctx.fail(root / "type", "expected \"session\"");
    SessionHeader h;
    if (s[1] == nullptr) {
        h.version = 1;
    } else {
        const std::int64_t v = detail::read_int(s[1], ctx, root / "version");
        if (v > current_session_version || v < 1)
            throw SessionError(ErrorCode::invalid_session,
                               "unsupported session format version " + std::to_string(v));
        h.version = static_cast<int>(v);
    }
    h.id = detail::take_string(s[2], ctx, root / "id");
    h.timestamp = detail::take_optional_string(s[3], ctx, root / "timestamp").value_or("");
    h.cwd = detail::take_optional_string(s[4], ctx, root / "cwd").value_or("");
    h.parent_session = detail::take_optional_string(s[5], ctx, root / parent_key);
    if (detail::absent(s[6])) {
        h.metadata = Json::object();
    } else {
        h.metadata = detail::take_object(s[6], ctx, root / "metadata");
    }
    h.extra = std::move(extra);
    return h;
}
template <class = void>
SessionHeader header_from_json(const Json& json) {
    return header_from_json(Json(json));
}

/// One compact JSON line for the header, without the trailing newline.
template <class = void>
std::string encode_header(const SessionHeader& header, Dialect dialect) {
    const detail::ReadContext ctx = detail::header_context();
    detail::NestingCheck(ctx).header(header);
    std::string out;
    const detail::FieldPath root{};
    detail::TextObject o(detail::TextPlace{out, ctx, root, 0});
    detail::put_header(o, header, dialect);
    o.close();
    return out;
}

/// Parses a header line; stores the file's dialect in `*detected` when given.
/// Throws SessionError(invalid_session).
template <class = void>
SessionHeader decode_header(std::string_view line, Dialect* detected = nullptr) {
    Json json = detail::parse_line(line, ErrorCode::invalid_session, "session header");
    if (detected != nullptr) *detected = detect_dialect(json);
    return header_from_json(std::move(json));
}

}  // namespace agentcore

#pragma once
// The codec's readers on raw JSON text: the values of a line the scanner has validated, read
// where they lie instead of from a DOM.
//
// The readers of codec_messages.hpp and codec_entries.hpp are written once against a value
// type V: `Json*` (entry_from_json and the other *_from_json functions, which move values out
// of a DOM) or RawJson (decode_entry, which reads the line's text and builds a JSON value only
// for the fields that are free-form by nature: extras, details, tool arguments, custom data and
// values of unknown types). The operations below are the RawJson side of those in
// codec_read.hpp and give the same results and the same errors: the last of repeated keys wins,
// an extra keeps the place of its first occurrence, keys written with escapes are decoded,
// numbers are read as nlohmann's parser reads them (json_number).

#include <agentcore/detail/codec_read.hpp>
#include <agentcore/detail/json_scan.hpp>
#include <agentcore/error.hpp>
#include <agentcore/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace agentcore::detail {

/// The raw text of one JSON value the scanner has validated; empty when the value is absent.
/// `memo` (SkipMemo), when set, is shared by every walk of the same line.
struct RawJson {
    std::string_view text{};
    SkipMemo* memo = nullptr;
};

/// The JSON type name of a raw value, as nlohmann's type_name() spells it.
template <class = void>
const char* raw_type_name(std::string_view v) noexcept {
    switch (v.front()) {
        case '{': return "object";
        case '[': return "array";
        case '"': return "string";
        case 't':
        case 'f': return "boolean";
        case 'n': return "null";
        default: return "number";
    }
}

/// Fills `values` with the raw values of `keys` in `object` (a valid JSON object): the last
/// member of each name wins, as in the DOM parser; a key with escapes is decoded first. `memo`,
/// when given, is shared by the walks of one line (SkipMemo).
template <std::size_t N>
void collect_members(std::string_view object, const std::array<std::string_view, N>& keys,
                     std::array<std::string_view, N>& values, SkipMemo* memo = nullptr) {
    values.fill({});
    std::string decoded;
    JsonScanner::for_each_member(
        object,
        [&](std::string_view raw_key, std::string_view value) {
            std::string_view key = raw_key;
            if (raw_key.find('\\') != std::string_view::npos) {
                JsonScanner::unescape(raw_key, decoded);
                key = decoded;
            }
            for (std::size_t i = 0; i < N; ++i) {
                if (keys[i] == key) {
                    values[i] = value;
                    return;
                }
            }
        },
        memo);
}

/// Calls `visit(raw_element)` for each element of a valid JSON array.
template <class Visit>
void for_each_raw_element(std::string_view array, Visit&& visit, SkipMemo* memo = nullptr) {
    const char* p = array.data() + 1;
    const char* end = array.data() + array.size() - 1;  // the closing ']'
    auto ws = [&] {
        while (p != end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
    };
    ws();
    while (p != end) {
        const char* begin = p;
        p = JsonScanner::value_end(p, end, memo);
        visit(std::string_view(begin, static_cast<std::size_t>(p - begin)));
        ws();
        if (p != end) ++p;  // ','
        ws();
    }
}

// ---------------------------------------------------------------------------------------------
// The value operations the readers use, for both value types.

template <class = void>
bool is_missing(const Json* v) noexcept {
    return v == nullptr;
}
template <class = void>
bool is_missing(RawJson v) noexcept {
    return v.text.empty();
}

template <class = void>
bool absent(RawJson v) noexcept {
    return v.text.empty() || v.text.front() == 'n';
}

template <class = void>
bool is_object(const Json* v) noexcept {
    return v->is_object();
}
template <class = void>
bool is_object(RawJson v) noexcept {
    return v.text.front() == '{';
}
template <class = void>
bool is_array(const Json* v) noexcept {
    return v->is_array();
}
template <class = void>
bool is_array(RawJson v) noexcept {
    return v.text.front() == '[';
}
template <class = void>
bool is_string(const Json* v) noexcept {
    return v->is_string();
}
template <class = void>
bool is_string(RawJson v) noexcept {
    return v.text.front() == '"';
}

template <class = void>
[[noreturn]] void expected(const ReadContext& ctx, const FieldPath& path, std::string_view what,
                           const Json* got) {
    ctx.expected(path, what, *got);
}
template <class = void>
[[noreturn]] void expected(const ReadContext& ctx, const FieldPath& path, std::string_view what,
                           RawJson got) {
    ctx.expected(path, what, raw_type_name(got.text));
}

/// The text of a string value (is_string); `scratch` holds it when it has escapes.
template <class = void>
std::string_view string_view_of(const Json* v, std::string&) {
    return v->get_ref<const std::string&>();
}
template <class = void>
std::string_view string_view_of(RawJson v, std::string& scratch) {
    std::string_view out;
    JsonScanner::string_value(v.text, scratch, out);
    return out;
}

/// The member `key` of an object value; missing when there is none (the last one when repeated).
template <class = void>
Json* find_field(Json* object, std::string_view key) {
    auto it = object->find(key);
    return it == object->end() ? nullptr : &*it;
}
template <class = void>
RawJson find_field(RawJson object, std::string_view key) {
    std::array<std::string_view, 1> value{};
    collect_members(object.text, std::array<std::string_view, 1>{key}, value, object.memo);
    return RawJson{value[0], object.memo};
}

/// Calls `visit(element, index)` for each element of an array value.
template <class Visit>
void for_each_item(Json* array, Visit&& visit) {
    auto& items = array->get_ref<Json::array_t&>();
    for (std::size_t i = 0; i < items.size(); ++i) visit(&items[i], i);
}
template <class Visit>
void for_each_item(RawJson array, Visit&& visit) {
    std::size_t i = 0;
    for_each_raw_element(
        array.text,
        [&](std::string_view element) {
            visit(RawJson{element, array.memo}, i++);
        },
        array.memo);
}

/// A whole value as JSON: moved out of the DOM, or built from the text.
template <class = void>
Json whole_json(Json* v) {
    return std::move(*v);
}
template <class = void>
Json whole_json(RawJson v) {
    Json out;
    build_json(v.text, out);
    return out;
}

// The field readers of codec_read.hpp, on raw values.

template <class = void>
std::string take_string(RawJson v, const ReadContext& ctx, const FieldPath& path) {
    if (v.text.empty()) ctx.missing(path);
    if (!is_string(v)) expected(ctx, path, "a string", v);
    const std::string_view inner = v.text.substr(1, v.text.size() - 2);
    if (inner.find('\\') == std::string_view::npos) return std::string(inner);
    std::string out;
    JsonScanner::unescape(inner, out);
    return out;
}

template <class = void>
std::optional<std::string> take_optional_string(RawJson v, const ReadContext& ctx,
                                                const FieldPath& path) {
    if (absent(v)) return std::nullopt;
    if (!is_string(v)) expected(ctx, path, "a string or null", v);
    return take_string(v, ctx, path);
}

// True when `v` is a number that reads as a 64-bit integer (json_to_int64's rule).
template <class = void>
bool raw_to_int64(RawJson v, std::int64_t& out) {
    if (raw_type_name(v.text)[0] != 'n' || v.text.front() == 'n') return false;  // "number"
    return json_to_int64(json_number(v.text), out);
}

template <class = void>
std::int64_t read_int(RawJson v, const ReadContext& ctx, const FieldPath& path) {
    if (v.text.empty()) ctx.missing(path);
    std::int64_t out = 0;
    if (!raw_to_int64(v, out)) expected(ctx, path, "an integer", v);
    return out;
}

template <class = void>
std::optional<std::int64_t> read_optional_int(RawJson v, const ReadContext& ctx,
                                              const FieldPath& path) {
    if (absent(v)) return std::nullopt;
    std::int64_t out = 0;
    if (!raw_to_int64(v, out)) expected(ctx, path, "an integer or null", v);
    return out;
}

template <class = void>
double read_number(RawJson v, const ReadContext& ctx, const FieldPath& path) {
    if (v.text.empty()) ctx.missing(path);
    if (raw_type_name(v.text)[0] != 'n' || v.text.front() == 'n')
        expected(ctx, path, "a number", v);
    return json_number(v.text).template get<double>();
}

template <class = void>
bool read_bool(RawJson v, const ReadContext& ctx, const FieldPath& path) {
    if (v.text.empty()) ctx.missing(path);
    if (v.text.front() != 't' && v.text.front() != 'f') expected(ctx, path, "a boolean", v);
    return v.text.front() == 't';
}

template <class = void>
std::optional<bool> read_optional_bool(RawJson v, const ReadContext& ctx, const FieldPath& path) {
    if (absent(v)) return std::nullopt;
    if (v.text.front() != 't' && v.text.front() != 'f') expected(ctx, path, "a boolean or null", v);
    return v.text.front() == 't';
}

template <class = void>
Json take_json(RawJson v) {
    return absent(v) ? Json() : whole_json(v);
}

template <class = void>
Json take_object(RawJson v, const ReadContext& ctx, const FieldPath& path) {
    if (v.text.empty()) ctx.missing(path);
    if (!is_object(v)) expected(ctx, path, "an object", v);
    return whole_json(v);
}

/// split_fields (codec_read.hpp) on a DOM object given by pointer.
template <std::size_t N>
Json split_fields(Json* object, const std::array<std::string_view, N>& keys,
                  std::array<Json*, N>& slots) {
    return split_fields(*object, keys, slots);
}

/// split_fields on a raw object: the values of `keys` (last of repeated keys) and the other
/// members as a JSON object in the order of their first occurrence (null when there are none).
template <std::size_t N>
Json split_fields(RawJson object, const std::array<std::string_view, N>& keys,
                  std::array<RawJson, N>& slots) {
    slots.fill(RawJson{{}, object.memo});
    dependent<Json, std::array<RawJson, N>> extra;
    std::string decoded;
    JsonScanner::for_each_member(
        object.text,
        [&](std::string_view raw_key, std::string_view value) {
            std::string_view key = raw_key;
            if (raw_key.find('\\') != std::string_view::npos) {
                JsonScanner::unescape(raw_key, decoded);
                key = decoded;
            }
            for (std::size_t i = 0; i < N; ++i) {
                if (keys[i] == key) {
                    slots[i].text = value;
                    return;
                }
            }
            if (extra.is_null()) extra = Json::object();
            auto& fields = extra.template get_ref<Json::object_t&>();
            // A repeated key keeps its first place and takes the last value, as in the parser.
            build_json(value, fields.emplace(std::string(key), Json()).first->second);
        },
        object.memo);
    return extra;
}

}  // namespace agentcore::detail

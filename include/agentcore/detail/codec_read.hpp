#pragma once
// Reading modelled fields out of parsed JSON, with errors that name the field path.
//
// Paths are a chain of stack frames formatted only when an error is raised, so that the
// successful path allocates nothing for them. Error messages name fields, ids and JSON types,
// never values: a value may be conversation text.

#include <agentcore/detail/dependent.hpp>
#include <agentcore/error.hpp>
#include <agentcore/json.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace agentcore::detail {

/// One step of a field path: a key, or an index into an array.
struct FieldPath {
    static constexpr std::size_t no_index = std::numeric_limits<std::size_t>::max();

    const FieldPath* parent = nullptr;
    std::string_view key;
    std::size_t index = no_index;

    [[nodiscard]] FieldPath operator/(std::string_view child) const {
        return {this, child, no_index};
    }
    [[nodiscard]] FieldPath operator[](std::size_t i) const { return {this, {}, i}; }
};

template <class = void>
void append_path(std::string& out, const FieldPath& path) {
    if (path.parent != nullptr) append_path(out, *path.parent);
    if (path.index != FieldPath::no_index) {
        out += '[';
        out += std::to_string(path.index);
        out += ']';
    } else if (!path.key.empty()) {
        if (!out.empty()) out += '.';
        out += path.key;
    }
}

/// Shows an id (read from a file) safely in a message: printable ASCII only, at most 64 chars.
template <class = void>
std::string printable_id(std::string_view id) {
    std::string shown;
    for (char c : id.substr(0, 64)) shown += (c >= 0x20 && c < 0x7f && c != '\'') ? c : '?';
    if (id.size() > 64) shown += "...";
    return shown;
}

/// What a reader is reading: sets the error code and the prefix of its messages.
struct ReadContext {
    ErrorCode code = ErrorCode::invalid_entry;
    std::string_view subject;               ///< e.g. "session header"; empty for entries
    const std::string* entry_id = nullptr;  ///< set once the entry's id is known

    [[noreturn]] void fail(const FieldPath& path, std::string_view problem) const {
        std::string msg;
        if (entry_id != nullptr) {
            msg += "entry '";
            msg += printable_id(*entry_id);
            msg += "': ";
        } else if (!subject.empty()) {
            msg += subject;
            msg += ": ";
        }
        std::string p;
        append_path(p, path);
        if (!p.empty()) {
            msg += "field '";
            msg += p;
            msg += "': ";
        }
        msg += problem;
        ErrorLocation where;
        if (entry_id != nullptr) where.entry_id = *entry_id;
        throw SessionError(code, msg, std::move(where));
    }

    [[noreturn]] void expected(const FieldPath& path, std::string_view what,
                               const Json& got) const {
        expected(path, what, got.type_name());
    }

    /// `got_type`: the JSON type name of the value found, as Json::type_name() spells it.
    [[noreturn]] void expected(const FieldPath& path, std::string_view what,
                               const char* got_type) const {
        std::string problem = "expected ";
        problem += what;
        problem += ", got ";
        problem += got_type;
        fail(path, problem);
    }

    [[noreturn]] void missing(const FieldPath& path) const {
        fail(path, "required field is missing");
    }
};

/// True when a slot holds no value or JSON null: an absent optional.
template <class = void>
bool absent(const Json* v) noexcept {
    return v == nullptr || v->is_null();
}

/// Splits `obj` (an object) into the values of `keys` (pointers into `obj`, null when missing)
/// and the remaining fields, moved out in their original order into the returned `extra`
/// (null when there are none).
template <std::size_t N>
Json split_fields(Json& obj, const std::array<std::string_view, N>& keys,
                  std::array<Json*, N>& slots) {
    slots.fill(nullptr);
    dependent<Json, std::array<Json*, N>> extra;
    for (auto& field : obj.get_ref<Json::object_t&>()) {
        const std::string& key = field.first;
        bool known = false;
        for (std::size_t i = 0; i < N; ++i) {
            if (keys[i] == key) {
                slots[i] = &field.second;
                known = true;
                break;
            }
        }
        if (!known) {
            if (extra.is_null()) extra = Json::object();
            extra.template get_ref<Json::object_t&>().emplace_back(key, std::move(field.second));
        }
    }
    return extra;
}

template <class = void>
std::string take_string(Json* v, const ReadContext& ctx, const FieldPath& path) {
    if (v == nullptr) ctx.missing(path);
    if (!v->is_string()) ctx.expected(path, "a string", *v);
    return std::move(v->get_ref<std::string&>());
}

template <class = void>
std::optional<std::string> take_optional_string(Json* v, const ReadContext& ctx,
                                                const FieldPath& path) {
    if (absent(v)) return std::nullopt;
    if (!v->is_string()) ctx.expected(path, "a string or null", *v);
    return std::move(v->get_ref<std::string&>());
}

/// An integer; a float with an integral value in range is accepted too ("1e3").
template <class T = void>
bool json_to_int64(const dependent<Json, T>& v, std::int64_t& out) noexcept {
    if (v.is_number_unsigned()) {
        const auto u = v.template get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
        out = static_cast<std::int64_t>(u);
        return true;
    }
    if (v.is_number_integer()) {
        out = v.template get<std::int64_t>();
        return true;
    }
    if (v.is_number_float()) {
        const double d = v.template get<double>();
        // 2^63 is exactly representable; every double below it in magnitude converts safely.
        if (!std::isfinite(d) || std::trunc(d) != d || d < -9223372036854775808.0 ||
            d >= 9223372036854775808.0)
            return false;
        out = static_cast<std::int64_t>(d);
        return true;
    }
    return false;
}

template <class = void>
std::int64_t read_int(const Json* v, const ReadContext& ctx, const FieldPath& path) {
    if (v == nullptr) ctx.missing(path);
    std::int64_t out = 0;
    if (!json_to_int64(*v, out)) ctx.expected(path, "an integer", *v);
    return out;
}

template <class = void>
std::optional<std::int64_t> read_optional_int(const Json* v, const ReadContext& ctx,
                                              const FieldPath& path) {
    if (absent(v)) return std::nullopt;
    std::int64_t out = 0;
    if (!json_to_int64(*v, out)) ctx.expected(path, "an integer or null", *v);
    return out;
}

template <class T = void>
double read_number(const dependent<Json, T>* v, const ReadContext& ctx, const FieldPath& path) {
    if (v == nullptr) ctx.missing(path);
    if (!v->is_number()) ctx.expected(path, "a number", *v);
    return v->template get<double>();
}

template <class T = void>
bool read_bool(const dependent<Json, T>* v, const ReadContext& ctx, const FieldPath& path) {
    if (v == nullptr) ctx.missing(path);
    if (!v->is_boolean()) ctx.expected(path, "a boolean", *v);
    return v->template get<bool>();
}

template <class T = void>
std::optional<bool> read_optional_bool(const dependent<Json, T>* v, const ReadContext& ctx,
                                       const FieldPath& path) {
    if (absent(v)) return std::nullopt;
    if (!v->is_boolean()) ctx.expected(path, "a boolean or null", *v);
    return v->template get<bool>();
}

/// Any JSON value; null when absent.
template <class = void>
Json take_json(Json* v) {
    return absent(v) ? Json() : std::move(*v);
}

/// A required JSON object, moved out.
template <class = void>
Json take_object(Json* v, const ReadContext& ctx, const FieldPath& path) {
    if (v == nullptr) ctx.missing(path);
    if (!v->is_object()) ctx.expected(path, "an object", *v);
    return std::move(*v);
}

}  // namespace agentcore::detail

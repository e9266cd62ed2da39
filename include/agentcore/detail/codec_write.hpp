#pragma once
// Compact JSON output that matches JavaScript's JSON.stringify byte for byte.
//
// Written by hand rather than with nlohmann's dump() because the two disagree on numbers:
// nlohmann writes 0.0 and 1.5e-05 where JavaScript writes 0 and 0.000015, and pi's files are
// written by JavaScript. Strings are escaped as both do (", \, \b \f \n \r \t, other control
// characters as \u00xx) and must be valid UTF-8, or the line could not be read back. A lone
// surrogate held as WTF-8 (see json_scan.hpp) is written as the `\udXXX` escape it was read from.
// Values nested deeper than max_json_depth are refused, so that every line written reads back.

#include <agentcore/detail/codec_read.hpp>
#include <agentcore/detail/json_scan.hpp>
#include <agentcore/error.hpp>
#include <agentcore/json.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace agentcore::detail {

/// Appends `value` as JavaScript's Number.prototype.toString writes it: the shortest digits
/// that read back to the same double, in plain notation for 1e-7 < |value| < 1e21, in
/// exponent notation (1e-7, 1.5e+21) outside. Integral values have no fraction ("0", "3").
/// NaN and infinities become null, as in JSON.stringify.
template <class = void>
void append_js_number(std::string& out, double value) {
    if (!std::isfinite(value)) {
        out += "null";
        return;
    }
    if (value == 0) {  // also -0, which JSON.stringify writes as 0
        out += '0';
        return;
    }
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
    std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));  // [-]d[.ddd]e(+|-)xx
    if (sci.front() == '-') {
        out += '-';
        sci.remove_prefix(1);
    }
    const std::size_t e_pos = sci.find('e');
    char digits[32];
    std::size_t k = 0;
    for (std::size_t i = 0; i < e_pos; ++i)
        if (sci[i] != '.') digits[k++] = sci[i];
    int exponent = 0;
    std::size_t exp_start = e_pos + 1;
    const bool exp_negative = sci[exp_start] == '-';
    if (sci[exp_start] == '-' || sci[exp_start] == '+') ++exp_start;
    std::from_chars(sci.data() + exp_start, sci.data() + sci.size(), exponent);
    if (exp_negative) exponent = -exponent;

    // ECMAScript Number::toString: value = 0.d1d2...dk * 10^n.
    const long n = exponent + 1;
    const auto kl = static_cast<long>(k);
    if (kl <= n && n <= 21) {
        out.append(digits, k);
        out.append(static_cast<std::size_t>(n - kl), '0');
    } else if (0 < n && n <= 21) {
        out.append(digits, static_cast<std::size_t>(n));
        out += '.';
        out.append(digits + n, static_cast<std::size_t>(kl - n));
    } else if (-6 < n && n <= 0) {
        out += "0.";
        out.append(static_cast<std::size_t>(-n), '0');
        out.append(digits, k);
    } else {
        out += digits[0];
        if (k > 1) {
            out += '.';
            out.append(digits + 1, k - 1);
        }
        out += 'e';
        out += exponent < 0 ? '-' : '+';
        out += std::to_string(exponent < 0 ? -exponent : exponent);
    }
}

/// Length of the valid UTF-8 sequence starting at s[i] (a byte >= 0x80), or 0 when invalid.
template <class = void>
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
    const auto byte = [&](std::size_t j) { return static_cast<unsigned char>(s[j]); };
    const auto cont = [&](std::size_t j, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
        return j < s.size() && byte(j) >= lo && byte(j) <= hi;
    };
    const unsigned char c = byte(i);
    if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
    if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
    if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
        return cont(i + 1) && cont(i + 2) ? 3 : 0;
    if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;  // no surrogates
    if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    return 0;
}

/// The code point of a lone surrogate held as WTF-8 at s[i] (ED A0..BF 80..BF), or 0 when
/// there is none there.
template <class = void>
unsigned wtf8_surrogate_at(std::string_view s, std::size_t i) noexcept {
    if (i + 2 >= s.size() || static_cast<unsigned char>(s[i]) != 0xED) return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    const auto b2 = static_cast<unsigned char>(s[i + 2]);
    if (b1 < 0xA0 || b1 > 0xBF || (b2 & 0xC0U) != 0x80U) return 0;
    return 0xD000U | ((b1 & 0x3FU) << 6) | (b2 & 0x3FU);
}

/// Appends `s` as a JSON string. Throws invalid_entry (naming `path`) when `s` is neither valid
/// UTF-8 nor WTF-8: a surrogate pair must be one four-byte sequence, never two halves.
template <class = void>
void append_json_string(std::string& out, std::string_view s, const ReadContext& ctx = {},
                        const FieldPath& path = {}, bool key = false) {
    static constexpr char hex[] = "0123456789abcdef";
    out.reserve(out.size() + s.size() + 2);
    out += '"';
    std::size_t run = 0;  // start of the pending run of bytes copied as they are
    std::size_t i = 0;
    const char* const end = s.data() + s.size();
    while (i < s.size()) {
        // Printable ASCII other than a quote or a backslash is copied as it is: skip it 16
        // bytes a step, as the scanner does.
        i = static_cast<std::size_t>(JsonScanner::skip_plain(s.data() + i, end) - s.data());
        if (i == s.size()) break;
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            const std::size_t len = utf8_sequence_length(s, i);
            if (len != 0) {
                i += len;
                continue;
            }
            const unsigned surrogate = wtf8_surrogate_at(s, i);
            const bool pair_in_halves =
                surrogate >= 0xD800 && surrogate <= 0xDBFF && wtf8_surrogate_at(s, i + 3) >= 0xDC00;
            if (surrogate == 0 || pair_in_halves)
                ctx.fail(path, std::string(key ? "a key" : "a string") +
                                   " is not valid UTF-8 (byte " + std::to_string(i) + " of the " +
                                   (key ? "key" : "string") + ")");
            out.append(s.data() + run, i - run);
            out += "\\u";
            for (int shift = 12; shift >= 0; shift -= 4) out += hex[(surrogate >> shift) & 0xFU];
            i += 3;
            run = i;
            continue;
        }
        out.append(s.data() + run, i - run);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default: {
                out += "\\u00";
                out += hex[c >> 4];
                out += hex[c & 0xF];
            }
        }
        run = ++i;
    }
    out.append(s.data() + run, s.size() - run);
    out += '"';
}

/// Appends `value` as compact JSON. `level` is how many containers enclose it; a container
/// deeper than max_json_depth is refused (invalid_entry naming `path`).
template <class T = void>
void append_json(std::string& out, const dependent<Json, T>& value, int level = 0,
                 const ReadContext& ctx = {}, const FieldPath& path = {}) {
    if ((value.is_object() || value.is_array()) && level + 1 > max_json_depth)
        ctx.fail(path, "JSON nested deeper than " + std::to_string(max_json_depth) + " levels");
    char buf[32];
    switch (value.type()) {
        case Json::value_t::null: out += "null"; return;
        case Json::value_t::boolean: out += value.template get<bool>() ? "true" : "false"; return;
        case Json::value_t::number_integer: {
            const auto res =
                std::to_chars(buf, buf + sizeof buf, value.template get<std::int64_t>());
            out.append(buf, res.ptr);
            return;
        }
        case Json::value_t::number_unsigned: {
            const auto res =
                std::to_chars(buf, buf + sizeof buf, value.template get<std::uint64_t>());
            out.append(buf, res.ptr);
            return;
        }
        case Json::value_t::number_float:
            append_js_number(out, value.template get<double>());
            return;
        case Json::value_t::string:
            append_json_string(out, value.template get_ref<const std::string&>(), ctx, path);
            return;
        case Json::value_t::array: {
            out += '[';
            const auto& items = value.template get_ref<const Json::array_t&>();
            for (std::size_t i = 0; i < items.size(); ++i) {
                if (i != 0) out += ',';
                append_json<T>(out, items[i], level + 1, ctx, path[i]);
            }
            out += ']';
            return;
        }
        case Json::value_t::object: {
            out += '{';
            bool first = true;
            for (const auto& field : value.template get_ref<const Json::object_t&>()) {
                if (!first) out += ',';
                first = false;
                const FieldPath child = path / field.first;
                append_json_string(out, field.first, ctx, child, true);
                out += ':';
                append_json<T>(out, field.second, level + 1, ctx, child);
            }
            out += '}';
            return;
        }
        case Json::value_t::binary:
        case Json::value_t::discarded: break;
    }
    throw SessionError(
        ErrorCode::invalid_entry,
        "a JSON value of type " + std::string(value.type_name()) + " cannot be written");
}

}  // namespace agentcore::detail

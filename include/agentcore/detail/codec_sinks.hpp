#pragma once
// Where the codec's writers put an object: into a JSON value (ObjectBuilder, for entry_to_json
// and the other *_to_json functions) or straight into a line of text (TextObject, for
// encode_entry and encode_header).
//
// The writers (codec_messages.hpp, codec_entries.hpp, codec.hpp) are written once against the
// calls below, so both outputs get the same fields in the same order: the text a TextObject
// writes is the compact dump (append_json) of the value an ObjectBuilder builds from the same
// calls, byte for byte, without building it. Strings and keys are checked as append_json
// checks them, and an error names the same field path.

#include <agentcore/detail/codec_read.hpp>
#include <agentcore/detail/codec_write.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/error.hpp>
#include <agentcore/json.hpp>

#include <array>
#include <cassert>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace agentcore::detail {

template <class = void>
[[noreturn]] void extra_not_object(const Json& extra) {
    throw SessionError(
        ErrorCode::invalid_entry,
        std::string("'extra' must be a JSON object or null, not ") + extra.type_name());
}

class ArrayBuilder;

/// Builds a JSON object field by field, in order.
class ObjectBuilder {
public:
    using Array = ArrayBuilder;

    ObjectBuilder() : json_(Json::value_t::object) {}

    /// Appends a modelled field (its key is not yet present).
    template <class T = void>
    void add(std::string_view key, dependent<Json, T> value) {
        dependent<Json::object_t, T>& out = fields();
        out.emplace_back(std::string(key), std::move(value));
    }
    template <class T = void>
    void add_string(std::string_view key, std::string_view value) {
        add<T>(key, dependent<Json, T>(value));
    }
    template <class T = void>
    void add_int(std::string_view key, std::int64_t value) {
        add<T>(key, dependent<Json, T>(value));
    }
    template <class T = void>
    void add_number(std::string_view key, double value) {
        add<T>(key, dependent<Json, T>(value));
    }
    template <class T = void>
    void add_bool(std::string_view key, bool value) {
        add<T>(key, dependent<Json, T>(value));
    }
    template <class T = void>
    void add_null(std::string_view key) {
        add<T>(key, dependent<Json, T>());
    }
    /// A free-form value, copied.
    template <class T = void>
    void add_json(std::string_view key, dependent<Json, T> value) {
        add<T>(key, std::move(value));
    }
    /// A nested object, filled by `fill(ObjectBuilder&)`.
    template <class F>
    void add_object(std::string_view key, F&& fill);
    /// A nested array, filled by `fill(ArrayBuilder&)`.
    template <class F>
    void add_array(std::string_view key, F&& fill);

    /// Appends every field of `object` (an object value written whole, e.g. an opaque block).
    template <class T = void>
    void add_fields(dependent<Json, T> object) {
        dependent<Json::object_t, T>& out = fields();
        for (auto& field : object.template get_ref<dependent<Json::object_t, T>&>())
            out.emplace_back(field.first, std::move(field.second));
    }

    /// Appends the fields of `extra` (an object or null); a key already written is skipped, so
    /// that an extra can never shadow a modelled field.
    template <class T = void>
    void add_extra(const dependent<Json, T>& extra) {
        if (extra.is_null()) return;
        if (!extra.is_object()) extra_not_object(extra);
        dependent<Json::object_t, T>& out = fields();
        for (const auto& field : extra.template get_ref<const Json::object_t&>()) {
            bool taken = false;
            for (const auto& existing : out) {
                if (existing.first == field.first) {
                    taken = true;
                    break;
                }
            }
            if (!taken) out.emplace_back(field.first, field.second);
        }
    }

    [[nodiscard]] Json take() { return std::move(json_); }

private:
    Json::object_t& fields() { return json_.get_ref<Json::object_t&>(); }
    Json json_;
};

/// Builds a JSON array element by element.
class ArrayBuilder {
public:
    ArrayBuilder() : json_(Json::value_t::array) {}

    template <class T = void>
    void add_string(std::string_view value) {
        json_.push_back(dependent<Json, T>(value));
    }
    template <class T = void>
    void add_json(dependent<Json, T> value) {
        json_.push_back(std::move(value));
    }
    template <class F>
    void add_object(F&& fill) {
        ObjectBuilder o;
        fill(o);
        json_.push_back(o.take());
    }

    [[nodiscard]] Json take() { return std::move(json_); }

private:
    Json json_;
};

template <class F>
void ObjectBuilder::add_object(std::string_view key, F&& fill) {
    ObjectBuilder o;
    fill(o);
    add(key, o.take());
}

template <class F>
void ObjectBuilder::add_array(std::string_view key, F&& fill) {
    ArrayBuilder a;
    fill(a);
    add(key, a.take());
}

/// Where a TextObject or TextArray writes: the line, what an error names, and how many
/// containers enclose the one being written (for append_json's depth rule).
struct TextPlace {
    std::string& out;
    const ReadContext& ctx;
    const FieldPath& path;
    int level;
};

template <class = void>
class BasicTextArray;

/// Writes a JSON object as compact text: '{' when made, '}' by close().
template <class = void>
class BasicTextObject {
public:
    using Array = BasicTextArray<>;

    explicit BasicTextObject(const TextPlace& place)
        : out_(place.out), ctx_(place.ctx), path_(place.path), level_(place.level) {
        out_ += '{';
    }
    BasicTextObject(const BasicTextObject&) = delete;
    BasicTextObject& operator=(const BasicTextObject&) = delete;
    ~BasicTextObject() = default;

    void close() { out_ += '}'; }

    void add_string(std::string_view key, std::string_view value) {
        append_json_string(out_, value, ctx_, put_key(key));
    }
    void add_int(std::string_view key, std::int64_t value) {
        put_key(key);
        char buf[24];
        const auto res = std::to_chars(buf, buf + sizeof buf, value);
        out_.append(buf, res.ptr);
    }
    void add_number(std::string_view key, double value) {
        put_key(key);
        append_js_number(out_, value);
    }
    void add_bool(std::string_view key, bool value) {
        put_key(key);
        out_ += value ? "true" : "false";
    }
    void add_null(std::string_view key) {
        put_key(key);
        out_ += "null";
    }
    void add_json(std::string_view key, const Json& value) {
        append_json(out_, value, level_ + 1, ctx_, put_key(key));
    }
    template <class F>
    void add_object(std::string_view key, F&& fill) {
        BasicTextObject o(TextPlace{out_, ctx_, put_key(key), level_ + 1});
        fill(o);
        o.close();
    }
    template <class F>
    void add_array(std::string_view key, F&& fill);

    void add_fields(const Json& object) {
        for (const auto& field : object.get_ref<const Json::object_t&>())
            append_json(out_, field.second, level_ + 1, ctx_, put_key(field.first, false));
    }

    void add_extra(const Json& extra) {
        if (extra.is_null()) return;
        if (!extra.is_object()) extra_not_object(extra);
        for (const auto& field : extra.get_ref<const Json::object_t&>()) {
            if (written(field.first)) continue;
            append_json(out_, field.second, level_ + 1, ctx_, put_key(field.first, false));
        }
    }

private:
    // Writes the separator and `key`, and returns the path of its value (valid until the next
    // call). Modelled keys are remembered for add_extra's rule.
    const FieldPath& put_key(std::string_view key, bool modelled = true) {
        if (any_) out_ += ',';
        any_ = true;
        child_ = path_ / key;
        append_json_string(out_, key, ctx_, child_, true);
        out_ += ':';
        if (modelled) {
            assert(count_ < written_.size());
            if (count_ < written_.size()) written_[count_++] = key;
        }
        return child_;
    }
    [[nodiscard]] bool written(std::string_view key) const noexcept {
        for (std::size_t i = 0; i < count_; ++i)
            if (written_[i] == key) return true;
        return false;
    }

    std::string& out_;
    const ReadContext& ctx_;
    const FieldPath& path_;
    int level_;
    FieldPath child_{};
    std::array<std::string_view, 16> written_{};  // the most modelled keys of an object is 11
    std::size_t count_ = 0;
    bool any_ = false;
};

/// Writes a JSON array as compact text: '[' when made, ']' by close().
template <class>
class BasicTextArray {
public:
    explicit BasicTextArray(const TextPlace& place)
        : out_(place.out), ctx_(place.ctx), path_(place.path), level_(place.level) {
        out_ += '[';
    }
    BasicTextArray(const BasicTextArray&) = delete;
    BasicTextArray& operator=(const BasicTextArray&) = delete;
    ~BasicTextArray() = default;

    void close() { out_ += ']'; }

    void add_string(std::string_view value) { append_json_string(out_, value, ctx_, next()); }
    void add_json(const Json& value) { append_json(out_, value, level_ + 1, ctx_, next()); }
    template <class F>
    void add_object(F&& fill) {
        BasicTextObject<> o(TextPlace{out_, ctx_, next(), level_ + 1});
        fill(o);
        o.close();
    }

private:
    const FieldPath& next() {
        if (size_ != 0) out_ += ',';
        child_ = path_[size_++];
        return child_;
    }

    std::string& out_;
    const ReadContext& ctx_;
    const FieldPath& path_;
    int level_;
    FieldPath child_{};
    std::size_t size_ = 0;
};

template <class T>
template <class F>
void BasicTextObject<T>::add_array(std::string_view key, F&& fill) {
    BasicTextArray<> a(TextPlace{out_, ctx_, put_key(key), level_ + 1});
    fill(a);
    a.close();
}

using TextObject = BasicTextObject<>;
using TextArray = BasicTextArray<>;

}  // namespace agentcore::detail

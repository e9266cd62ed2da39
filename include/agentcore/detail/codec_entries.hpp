#pragma once
// The JSON codec of session tree entries, in both dialects (SPEC §2.3, §3).

#include <agentcore/detail/codec_messages.hpp>
#include <agentcore/detail/codec_read.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/json.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace agentcore::detail {

namespace keys {
inline constexpr Key parent_id{"parent_id", "parentId"};
inline constexpr Key thinking_level{"thinking_level", "thinkingLevel"};
inline constexpr Key model_id{"model_id", "modelId"};
inline constexpr Key active_tool_names{"active_tool_names", "activeToolNames"};
inline constexpr Key first_kept_entry_id{"first_kept_entry_id", "firstKeptEntryId"};
inline constexpr Key retained_tail{"retained_tail", "retainedTail"};
inline constexpr Key from_hook{"from_hook", "fromHook"};
inline constexpr Key target_id{"target_id", "targetId"};
}  // namespace keys

/// The four base keys followed by the payload keys of an entry type.
template <std::size_t N>
std::array<std::string_view, N + 4> entry_keys(Dialect d,
                                               const std::array<std::string_view, N>& payload) {
    std::array<std::string_view, N + 4> all{"type", "id", keys::parent_id(d), "timestamp"};
    for (std::size_t i = 0; i < N; ++i) all[i + 4] = payload[i];
    return all;
}

/// Reads the base fields from the first four slots (type, id, parent, timestamp). Sets the
/// context's entry id as soon as it is known, so that later errors name the entry.
template <class V, std::size_t M>
void read_base(EntryBase& base, std::array<V, M>& s, Json&& extra, Dialect d, ReadContext& ctx,
               const FieldPath& root) {
    base.id = take_string(s[1], ctx, root / "id");
    ctx.entry_id = &base.id;
    base.parent_id = take_optional_string(s[2], ctx, root / keys::parent_id(d));
    base.timestamp = take_string(s[3], ctx, root / "timestamp");
    base.extra = std::move(extra);
}

/// Splits `j` by the keys of an entry type and reads its base; returns the payload slots.
template <class V, std::size_t N>
std::array<V, N + 4> open_entry(EntryBase& base, V j, Dialect d,
                                const std::array<std::string_view, N>& payload, ReadContext& ctx,
                                const FieldPath& root) {
    std::array<V, N + 4> s{};
    Json extra = split_fields(j, entry_keys(d, payload), s);
    read_base(base, s, std::move(extra), d, ctx, root);
    return s;
}

template <class V>
std::optional<Usage> read_optional_usage(V v, Dialect d, const ReadContext& ctx,
                                         const FieldPath& path) {
    if (absent(v)) return std::nullopt;
    return read_usage(v, d, ctx, path);
}

template <class V>
std::vector<std::string> read_string_list(V v, const ReadContext& ctx, const FieldPath& path) {
    if (is_missing(v)) ctx.missing(path);
    if (!is_array(v)) expected(ctx, path, "an array of strings", v);
    std::vector<std::string> out;
    for_each_item(v,
                  [&](V item, std::size_t i) { out.push_back(take_string(item, ctx, path[i])); });
    return out;
}

template <class V>
std::optional<std::vector<AgentMessage>> read_optional_messages(V v, Dialect d,
                                                                const ReadContext& ctx,
                                                                const FieldPath& path) {
    if (absent(v)) return std::nullopt;
    if (!is_array(v)) expected(ctx, path, "an array of messages or null", v);
    std::vector<AgentMessage> out;
    for_each_item(
        v, [&](V item, std::size_t i) { out.push_back(read_message(item, d, ctx, path[i])); });
    return out;
}

/// Reads an entry from a JSON object (a Json* into a DOM, whose values it moves out, or a RawJson
/// of a validated line).
template <class V>
SessionTreeEntry read_entry(V j, Dialect d) {
    ReadContext ctx;
    ctx.subject = "entry";
    const FieldPath root{};
    if (!is_object(j)) expected(ctx, root, "a JSON object", j);
    const V type_value = find_field(j, "type");
    if (is_missing(type_value)) ctx.missing(root / "type");
    if (!is_string(type_value)) expected(ctx, root / "type", "a string", type_value);
    std::string type_scratch;
    const std::string_view type = string_view_of(type_value, type_scratch);
    using P = std::string_view;

    if (type == MessageEntry::type) {
        MessageEntry e;
        auto s = open_entry(e, j, d, std::array<P, 1>{"message"}, ctx, root);
        if (is_missing(s[4])) ctx.missing(root / "message");
        e.message = read_message(s[4], d, ctx, root / "message");
        return e;
    }
    if (type == ThinkingLevelChangeEntry::type) {
        ThinkingLevelChangeEntry e;
        auto s = open_entry(e, j, d, std::array<P, 1>{keys::thinking_level(d)}, ctx, root);
        e.thinking_level = take_string(s[4], ctx, root / keys::thinking_level(d));
        return e;
    }
    if (type == ModelChangeEntry::type) {
        ModelChangeEntry e;
        auto s = open_entry(e, j, d, std::array<P, 2>{"provider", keys::model_id(d)}, ctx, root);
        e.provider = take_string(s[4], ctx, root / "provider");
        e.model_id = take_string(s[5], ctx, root / keys::model_id(d));
        return e;
    }
    if (type == ActiveToolsChangeEntry::type) {
        ActiveToolsChangeEntry e;
        auto s = open_entry(e, j, d, std::array<P, 1>{keys::active_tool_names(d)}, ctx, root);
        e.active_tool_names = read_string_list(s[4], ctx, root / keys::active_tool_names(d));
        return e;
    }
    if (type == CompactionEntry::type) {
        CompactionEntry e;
        auto s = open_entry(
            e, j, d,
            std::array<P, 7>{"summary", keys::first_kept_entry_id(d), keys::tokens_before(d),
                             keys::retained_tail(d), "details", "usage", keys::from_hook(d)},
            ctx, root);
        e.summary = take_string(s[4], ctx, root / "summary");
        e.first_kept_entry_id =
            take_optional_string(s[5], ctx, root / keys::first_kept_entry_id(d));
        e.tokens_before = read_int(s[6], ctx, root / keys::tokens_before(d));
        e.retained_tail = read_optional_messages(s[7], d, ctx, root / keys::retained_tail(d));
        e.details = take_json(s[8]);
        e.usage = read_optional_usage(s[9], d, ctx, root / "usage");
        e.from_hook_omitted = absent(s[10]);
        e.from_hook = read_optional_bool(s[10], ctx, root / keys::from_hook(d)).value_or(false);
        return e;
    }
    if (type == BranchSummaryEntry::type) {
        BranchSummaryEntry e;
        auto s = open_entry(
            e, j, d,
            std::array<P, 5>{keys::from_id(d), "summary", "details", "usage", keys::from_hook(d)},
            ctx, root);
        e.from_id = take_string(s[4], ctx, root / keys::from_id(d));
        e.summary = take_string(s[5], ctx, root / "summary");
        e.details = take_json(s[6]);
        e.usage = read_optional_usage(s[7], d, ctx, root / "usage");
        e.from_hook_omitted = absent(s[8]);
        e.from_hook = read_optional_bool(s[8], ctx, root / keys::from_hook(d)).value_or(false);
        return e;
    }
    if (type == CustomEntry::type) {
        CustomEntry e;
        auto s = open_entry(e, j, d, std::array<P, 2>{keys::custom_type(d), "data"}, ctx, root);
        e.custom_type = take_string(s[4], ctx, root / keys::custom_type(d));
        e.data = take_json(s[5]);
        return e;
    }
    if (type == CustomMessageEntry::type) {
        CustomMessageEntry e;
        auto s = open_entry(e, j, d,
                            std::array<P, 4>{keys::custom_type(d), "content", "details", "display"},
                            ctx, root);
        e.custom_type = take_string(s[4], ctx, root / keys::custom_type(d));
        e.content = read_content(s[5], d, ctx, root / "content");
        e.details = take_json(s[6]);
        e.display_omitted = absent(s[7]);
        e.display = read_optional_bool(s[7], ctx, root / "display").value_or(false);
        return e;
    }
    if (type == LabelEntry::type) {
        LabelEntry e;
        auto s = open_entry(e, j, d, std::array<P, 2>{keys::target_id(d), "label"}, ctx, root);
        e.target_id = take_string(s[4], ctx, root / keys::target_id(d));
        e.label = take_optional_string(s[5], ctx, root / "label");
        return e;
    }
    if (type == SessionInfoEntry::type) {
        SessionInfoEntry e;
        auto s = open_entry(e, j, d, std::array<P, 1>{"name"}, ctx, root);
        e.name = take_optional_string(s[4], ctx, root / "name");
        return e;
    }
    if (type == LeafEntry::type) {
        LeafEntry e;
        auto s = open_entry(e, j, d, std::array<P, 1>{keys::target_id(d)}, ctx, root);
        e.target_id = take_optional_string(s[4], ctx, root / keys::target_id(d));
        return e;
    }

    // A type of a newer writer: extract the base (copies), keep the whole object as read.
    UnknownEntry e;
    e.type = type;
    auto field = [&j](std::string_view key) { return find_field(j, key); };
    std::string scratch;
    const V id = field("id");
    if (is_missing(id)) ctx.missing(root / "id");
    if (!is_string(id)) expected(ctx, root / "id", "a string", id);
    e.id = string_view_of(id, scratch);
    ctx.entry_id = &e.id;
    // The other dialect's spelling too: an unknown entry is written back as read, so a file
    // converted to the other dialect still carries its original parent key.
    const std::string_view other_parent_key =
        keys::parent_id(d == Dialect::pi ? Dialect::native : Dialect::pi);
    V parent = field(keys::parent_id(d));
    std::string_view parent_key = keys::parent_id(d);
    if (is_missing(parent)) {
        parent = field(other_parent_key);
        parent_key = other_parent_key;
    }
    if (!absent(parent)) {
        if (!is_string(parent)) expected(ctx, root / parent_key, "a string or null", parent);
        e.parent_id = std::string(string_view_of(parent, scratch));
    }
    if (const V ts = field("timestamp"); !absent(ts)) {
        if (!is_string(ts)) expected(ctx, root / "timestamp", "a string", ts);
        e.timestamp = string_view_of(ts, scratch);
    }
    e.raw = whole_json(j);
    return e;
}

// ---------------------------------------------------------------------------------------------
// Writing

template <class O>
void put_base(O& o, const EntryBase& base, Dialect d) {
    o.add_string("id", base.id);
    if (base.parent_id)
        o.add_string(keys::parent_id(d), *base.parent_id);
    else
        o.add_null(keys::parent_id(d));
    o.add_string("timestamp", base.timestamp);
}

/// An unknown entry as read, with its base fields following the struct (a fork may have made
/// it a root). A parent key of either spelling is updated in place.
template <class T = void>
Json write_unknown_entry(const dependent<UnknownEntry, T>& e, Dialect d) {
    if (!e.raw.is_object()) {
        dependent<ObjectBuilder, T> o;
        o.add_string("type", e.type);
        put_base(o, e, d);
        o.add_extra(e.extra);
        return o.take();
    }
    dependent<Json, T> out = e.raw;
    auto sync = [&out](std::string_view key, const Json& value) {
        auto it = out.find(key);
        if (it == out.end())
            out[std::string(key)] = value;
        else if (!json_equal(*it, value))
            *it = value;
    };
    sync("type", e.type);
    sync("id", e.id);
    const dependent<Json, T> parent = e.parent_id ? Json(*e.parent_id) : Json();
    bool parent_written = false;
    for (std::string_view key : {keys::parent_id.native, keys::parent_id.pi}) {
        if (out.contains(key)) {
            sync(key, parent);
            parent_written = true;
        }
    }
    if (!parent_written && e.parent_id) sync(keys::parent_id(d), parent);
    if (!e.timestamp.empty() || out.contains("timestamp")) sync("timestamp", e.timestamp);
    return out;
}

template <class O, class T = void>
void put_entry(O& o, const dependent<SessionTreeEntry, T>& entry, Dialect d) {
    std::visit(
        [&o, d](const auto& e) {
            using E = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<E, UnknownEntry>) {
                o.add_fields(write_unknown_entry<T>(e, d));
                return;
            } else {
                o.add_string("type", E::type);
                if constexpr (std::is_same_v<E, CustomEntry>) {
                    // pi's appendCustomEntry puts the payload before the base fields.
                    if (d == Dialect::native) put_base(o, e, d);
                    o.add_string(keys::custom_type(d), e.custom_type);
                    if (!e.data.is_null()) o.add_json("data", e.data);
                    if (d == Dialect::pi) put_base(o, e, d);
                } else if constexpr (std::is_same_v<E, CustomMessageEntry>) {
                    // pi's appendCustomMessageEntry: customType, content, display, details, base.
                    if (d == Dialect::native) {
                        put_base(o, e, d);
                        o.add_string("custom_type", e.custom_type);
                        put_content(o, "content", e.content, d);
                        if (!e.details.is_null()) o.add_json("details", e.details);
                        if (e.display || !e.display_omitted) o.add_bool("display", e.display);
                    } else {
                        o.add_string("customType", e.custom_type);
                        put_content(o, "content", e.content, d);
                        if (e.display || !e.display_omitted) o.add_bool("display", e.display);
                        if (!e.details.is_null()) o.add_json("details", e.details);
                        put_base(o, e, d);
                    }
                } else {
                    put_base(o, e, d);
                    if constexpr (std::is_same_v<E, MessageEntry>) {
                        o.add_object("message", [&e, d](auto& m) { put_message(m, e.message, d); });
                    } else if constexpr (std::is_same_v<E, ThinkingLevelChangeEntry>) {
                        o.add_string(keys::thinking_level(d), e.thinking_level);
                    } else if constexpr (std::is_same_v<E, ModelChangeEntry>) {
                        o.add_string("provider", e.provider);
                        o.add_string(keys::model_id(d), e.model_id);
                    } else if constexpr (std::is_same_v<E, ActiveToolsChangeEntry>) {
                        o.add_array(keys::active_tool_names(d), [&e](auto& names) {
                            for (const auto& n : e.active_tool_names) names.add_string(n);
                        });
                    } else if constexpr (std::is_same_v<E, CompactionEntry>) {
                        o.add_string("summary", e.summary);
                        if (e.first_kept_entry_id)
                            o.add_string(keys::first_kept_entry_id(d), *e.first_kept_entry_id);
                        o.add_int(keys::tokens_before(d), e.tokens_before);
                        if (e.retained_tail) {
                            o.add_array(keys::retained_tail(d), [&e, d](auto& tail) {
                                for (const auto& m : *e.retained_tail)
                                    tail.add_object([&m, d](auto& om) { put_message(om, m, d); });
                            });
                        }
                        if (!e.details.is_null()) o.add_json("details", e.details);
                        if (e.usage)
                            o.add_object("usage", [&e, d](auto& u) { put_usage(u, *e.usage, d); });
                        if (e.from_hook || !e.from_hook_omitted)
                            o.add_bool(keys::from_hook(d), e.from_hook);
                    } else if constexpr (std::is_same_v<E, BranchSummaryEntry>) {
                        o.add_string(keys::from_id(d), e.from_id);
                        o.add_string("summary", e.summary);
                        if (!e.details.is_null()) o.add_json("details", e.details);
                        if (e.usage)
                            o.add_object("usage", [&e, d](auto& u) { put_usage(u, *e.usage, d); });
                        if (e.from_hook || !e.from_hook_omitted)
                            o.add_bool(keys::from_hook(d), e.from_hook);
                    } else if constexpr (std::is_same_v<E, LabelEntry>) {
                        o.add_string(keys::target_id(d), e.target_id);
                        if (e.label) o.add_string("label", *e.label);
                    } else if constexpr (std::is_same_v<E, SessionInfoEntry>) {
                        if (e.name) o.add_string("name", *e.name);
                    } else {
                        static_assert(std::is_same_v<E, LeafEntry>);
                        if (e.target_id)
                            o.add_string(keys::target_id(d), *e.target_id);
                        else
                            o.add_null(keys::target_id(d));
                    }
                }
                o.add_extra(e.extra);
            }
        },
        entry);
}

template <class T = void>
Json write_entry(const dependent<SessionTreeEntry, T>& entry, Dialect d) {
    dependent<ObjectBuilder, T> o;
    put_entry(o, entry, d);
    return o.take();
}

}  // namespace agentcore::detail

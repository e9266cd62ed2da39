#pragma once
// The nesting limit of the model's free-form JSON values (details, tool arguments, data,
// metadata, extras, opaque blocks, messages and entries), checked without recursion.
//
// nlohmann/json parses iteratively and destroys iteratively, but copies, compares and dumps
// recursively: a value nested 100,000 levels deep, built by a caller, would overflow the stack
// in the first copy the writer makes. These checks run before anything recursive touches a
// value, and measure each free-form value at the level it takes in the written line (the
// entry's object is level 1), so that they refuse exactly what the writer refuses and the
// scanner would refuse on reading (max_json_depth, json_scan.hpp).

#include <agentcore/detail/codec_read.hpp>
#include <agentcore/detail/json_scan.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/json.hpp>
#include <agentcore/messages.hpp>

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace agentcore::detail {

/// True when `value` holds at most `levels` levels of containers (a scalar holds none).
/// Iterative; stops at the first container too deep.
inline bool nests_within(const Json& value, int levels) {
    if (!value.is_structured()) return true;
    if (levels < 1) return false;
    struct Frame {
        const Json* value;
        int level;
    };
    std::vector<Frame> stack{{&value, 1}};
    while (!stack.empty()) {
        const Frame f = stack.back();
        stack.pop_back();
        auto visit = [&](const Json& child) {
            if (child.is_structured()) stack.push_back({&child, f.level + 1});
        };
        if (f.value->is_array()) {
            if (f.level >= levels && !f.value->empty()) {
                for (const auto& child : f.value->get_ref<const Json::array_t&>())
                    if (child.is_structured()) return false;
                continue;
            }
            for (const auto& child : f.value->get_ref<const Json::array_t&>()) visit(child);
        } else {
            if (f.level >= levels && !f.value->empty()) {
                for (const auto& field : f.value->get_ref<const Json::object_t&>())
                    if (field.second.is_structured()) return false;
                continue;
            }
            for (const auto& field : f.value->get_ref<const Json::object_t&>()) visit(field.second);
        }
    }
    return true;
}

/// Checks the model's free-form values against the nesting limit; `level` arguments are the
/// level of the object that holds the value (the entry's object: 1).
class NestingCheck {
public:
    explicit NestingCheck(const ReadContext& ctx) noexcept : ctx_(ctx) {}

    /// A value written as a member of an object (or an element of an array) at `level`.
    template <class = void>
    void member(const Json& value, int level, const FieldPath& path) const {
        if (!nests_within(value, max_json_depth - level)) too_deep(path);
    }

    /// An `extra` object whose members are written into an object at `level`.
    template <class = void>
    void extra(const Json& extra, int level, const FieldPath& path) const {
        if (!extra.is_object()) return;  // null, or refused by the writer as it is
        for (const auto& field : extra.get_ref<const Json::object_t&>())
            member(field.second, level, path / field.first);
    }

    /// A value written as the object at `level` itself (opaque blocks, messages, entries).
    template <class = void>
    void whole(const Json& raw, int level, const FieldPath& path) const {
        if (!nests_within(raw, max_json_depth - level + 1)) too_deep(path);
    }

    template <class = void>
    void usage(const Usage& u, int level, const FieldPath& path) const {
        extra(u.extra, level, path);
        extra(u.cost.extra, level + 1, path / "cost");
    }

    template <class = void>
    void block(const ContentBlock& block, int level, const FieldPath& path) const {
        std::visit(
            [&](const auto& b) {
                using T = std::decay_t<decltype(b)>;
                if constexpr (std::is_same_v<T, OpaqueContent>) {
                    whole(b.raw, level, path);
                } else {
                    if constexpr (std::is_same_v<T, ToolCallContent>)
                        member(b.arguments, level, path / "arguments");
                    extra(b.extra, level, path);
                }
            },
            block);
    }

    template <class = void>
    void blocks(const std::vector<ContentBlock>& list, int level, const FieldPath& path) const {
        for (std::size_t i = 0; i < list.size(); ++i) block(list[i], level + 2, path[i]);
    }

    template <class = void>
    void content(const Content& c, int level, const FieldPath& path) const {
        if (const auto* list = std::get_if<std::vector<ContentBlock>>(&c))
            blocks(*list, level, path);
    }

    template <class = void>
    void message(const AgentMessage& message, int level, const FieldPath& path) const {
        std::visit(
            [&](const auto& m) {
                using T = std::decay_t<decltype(m)>;
                if constexpr (std::is_same_v<T, OpaqueMessage>) {
                    whole(m.raw, level, path);
                } else {
                    if constexpr (std::is_same_v<T, UserMessage> ||
                                  std::is_same_v<T, CustomMessage>)
                        content(m.content, level, path / "content");
                    if constexpr (std::is_same_v<T, AssistantMessage> ||
                                  std::is_same_v<T, ToolResultMessage>)
                        blocks(m.content, level, path / "content");
                    if constexpr (std::is_same_v<T, AssistantMessage>)
                        usage(m.usage, level + 1, path / "usage");
                    if constexpr (std::is_same_v<T, ToolResultMessage> ||
                                  std::is_same_v<T, CustomMessage>)
                        member(m.details, level, path / "details");
                    extra(m.extra, level, path);
                }
            },
            message);
    }

    template <class = void>
    void entry(const SessionTreeEntry& entry) const {
        const FieldPath root{};
        std::visit(
            [&](const auto& e) {
                using T = std::decay_t<decltype(e)>;
                if constexpr (std::is_same_v<T, UnknownEntry>) {
                    if (e.raw.is_object()) whole(e.raw, 1, root);
                } else if constexpr (std::is_same_v<T, MessageEntry>) {
                    message(e.message, 2, root / "message");
                } else if constexpr (std::is_same_v<T, CompactionEntry>) {
                    if (e.retained_tail)
                        for (std::size_t i = 0; i < e.retained_tail->size(); ++i)
                            message((*e.retained_tail)[i], 3, (root / "retained_tail")[i]);
                    member(e.details, 1, root / "details");
                    if (e.usage) usage(*e.usage, 2, root / "usage");
                } else if constexpr (std::is_same_v<T, BranchSummaryEntry>) {
                    member(e.details, 1, root / "details");
                    if (e.usage) usage(*e.usage, 2, root / "usage");
                } else if constexpr (std::is_same_v<T, CustomEntry>) {
                    member(e.data, 1, root / "data");
                } else if constexpr (std::is_same_v<T, CustomMessageEntry>) {
                    content(e.content, 1, root / "content");
                    member(e.details, 1, root / "details");
                }
                extra(e.extra, 1, root);
            },
            entry);
    }

    template <class = void>
    void header(const SessionHeader& h) const {
        member(h.metadata, 1, FieldPath{} / "metadata");
        extra(h.extra, 1, FieldPath{});
    }

private:
    template <class = void>
    [[noreturn]] void too_deep(const FieldPath& path) const {
        ctx_.fail(path, "JSON nested deeper than " + std::to_string(max_json_depth) + " levels");
    }

    const ReadContext& ctx_;
};

/// Refuses an entry whose line would nest deeper than max_json_depth: invalid_entry naming the
/// entry and the field.
template <class = void>
void check_entry_nesting(const SessionTreeEntry& entry) {
    ReadContext ctx;
    ctx.subject = "entry";
    const std::string& id =
        std::visit([](const auto& e) -> const std::string& { return e.id; }, entry);
    ctx.entry_id = &id;
    NestingCheck(ctx).entry(entry);
}

/// Refuses a session header whose line would nest deeper than max_json_depth: invalid_session.
template <class = void>
void check_header_nesting(const SessionHeader& header) {
    ReadContext ctx;
    ctx.code = ErrorCode::invalid_session;
    ctx.subject = "session header";
    NestingCheck(ctx).header(header);
}

/// The same for header metadata about to be copied into a new header (a fork's).
template <class = void>
void check_metadata_nesting(const Json& metadata) {
    ReadContext ctx;
    ctx.code = ErrorCode::invalid_session;
    ctx.subject = "session header";
    NestingCheck(ctx).member(metadata, 1, FieldPath{} / "metadata");
}

}  // namespace agentcore::detail

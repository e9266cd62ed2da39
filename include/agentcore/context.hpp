#pragma once
// Building the context an application sends to its LLM from a path of entries (SPEC §4.5).

#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/messages.hpp>
#include <agentcore/storage.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentcore {

/// A transform of the context entries (after the default compaction transform).
using EntryTransform = std::function<std::vector<EntryHandle>(std::vector<EntryHandle>)>;

/// Turns a `custom` entry of one custom_type into context messages. Receives the entry, its
/// index in the context entries, and all context entries.
using EntryProjector = std::function<std::vector<AgentMessage>(
    const CustomEntry& entry, std::size_t index, const std::vector<EntryHandle>& entries)>;

/// How a context is built: extra entry transforms (applied in order), projectors for custom
/// entries by custom_type, and whether the list must be ready to send as it is.
struct ContextBuildOptions {
    std::vector<EntryTransform> entry_transforms{};
    std::map<std::string, EntryProjector, std::less<>> entry_projectors{};
    /// Also drop the tool calls of the trailing assistant message that have no result (a tool
    /// still running, or a crash while it ran): providers reject a request whose tool calls are
    /// unanswered. Only the end of the list is touched; see build_session_context.
    bool provider_ready = false;
};

/// The model in use: `{provider, model_id}`.
struct ModelRef {
    std::string provider;
    std::string model_id;
    friend bool operator==(const ModelRef&, const ModelRef&) = default;
};

/// Why build_context left a message (or part of one) out.
enum class DropReason {
    orphan_tool_result,  ///< a tool result whose tool call is not earlier in the context
    dangling_tool_call,  ///< provider_ready: a trailing tool call that has no result
};

/// The stable spelling of a drop reason ("orphan_tool_result", ...).
constexpr std::string_view to_string(DropReason reason) noexcept {
    switch (reason) {
        case DropReason::orphan_tool_result: return "orphan_tool_result";
        case DropReason::dangling_tool_call: return "dangling_tool_call";
    }
    return "unknown";
}

/// A message, or one tool call of a message, that build_context left out.
struct DroppedMessage {
    DropReason reason = DropReason::orphan_tool_result;
    std::string tool_call_id;
    /// The message as it was before dropping (for a dangling call, the whole assistant message).
    MessageHandle message;
    /// True when the message is gone from the context; false when only the tool call block was
    /// removed and the rest of the assistant message was kept (as a copy).
    bool whole_message = true;
};

/// What build_context returns.
struct SessionContext {
    std::vector<MessageHandle> messages;  ///< shared with the entries: building copies no payload
    std::string thinking_level = "off";
    std::optional<ModelRef> model;
    std::optional<std::vector<std::string>> active_tool_names;
    std::vector<DroppedMessage>
        dropped;  ///< what was left out to keep tool calls and results paired
};

/// Combines two option sets: transforms of `first` then of `second`; projectors merged, with
/// `second` winning for the same custom_type.
template <class T = void>
ContextBuildOptions merge_context_build_options(const ContextBuildOptions& first,
                                                const ContextBuildOptions& second) {
    detail::dependent<ContextBuildOptions, T> merged = first;
    merged.entry_transforms.insert(merged.entry_transforms.end(), second.entry_transforms.begin(),
                                   second.entry_transforms.end());
    for (const auto& [type, projector] : second.entry_projectors)
        merged.entry_projectors.insert_or_assign(type, projector);
    merged.provider_ready = first.provider_ready || second.provider_ready;
    return merged;
}

/// The default transform: with no compaction on the path, the path as is; otherwise the
/// newest compaction, then — if it has a retained tail — the entries after it; else, if it has
/// a first kept entry, the entries before it from that entry on, then the entries after it;
/// else just the entries after it. Older compactions among the kept entries are left out: the
/// newest summary supersedes theirs (SPEC §4.5, as pi's buildSessionContext).
template <class T = void>
std::vector<EntryHandle> default_context_entry_transform(
    const detail::dependent<std::vector<EntryHandle>, T>& path) {
    std::size_t compaction_index = path.size();
    for (std::size_t i = path.size(); i-- > 0;) {
        if (std::holds_alternative<CompactionEntry>(*path[i])) {
            compaction_index = i;
            break;
        }
    }
    if (compaction_index == path.size()) return path;

    const auto& compaction = std::get<CompactionEntry>(*path[compaction_index]);
    detail::dependent<std::vector<EntryHandle>, T> out;
    out.reserve(path.size());
    out.push_back(path[compaction_index]);
    if (!compaction.retained_tail && compaction.first_kept_entry_id) {
        bool kept = false;
        for (std::size_t i = 0; i < compaction_index; ++i) {
            kept = kept || id_of(*path[i]) == *compaction.first_kept_entry_id;
            if (kept && !std::holds_alternative<CompactionEntry>(*path[i])) out.push_back(path[i]);
        }
    }
    out.insert(out.end(), path.begin() + static_cast<std::ptrdiff_t>(compaction_index) + 1,
               path.end());
    return out;
}

/// The context entries: the default transform, then the caller's transforms in order.
template <class T = void>
std::vector<EntryHandle> build_context_entries(
    const detail::dependent<std::vector<EntryHandle>, T>& path,
    const ContextBuildOptions& options = {}) {
    auto entries = default_context_entry_transform(path);
    for (const auto& transform : options.entry_transforms) entries = transform(std::move(entries));
    return entries;
}

namespace detail {

template <class = void>
std::int64_t entry_time_ms(const EntryBase& base) {
    std::int64_t ms = 0;
    return parse_timestamp(base.timestamp, ms) ? ms : 0;
}

// A handle to a message that lives inside an entry: shares the entry's ownership.
template <class = void>
MessageHandle alias_message(const EntryHandle& owner, const AgentMessage& message) {
    return MessageHandle(owner, &message);
}

}  // namespace detail

/// The messages one context entry contributes (SPEC §4.5): a message entry its message; a
/// custom_message entry a `custom` message; a compaction its summary message and retained tail;
/// a branch summary with a non-empty summary its summary message; a custom entry what its
/// projector returns; anything else nothing.
template <class = void>
std::vector<MessageHandle> session_entry_to_context_messages(
    const EntryHandle& entry, std::size_t index, const std::vector<EntryHandle>& entries,
    const ContextBuildOptions& options = {});

namespace detail {

// session_entry_to_context_messages, appending to `out` (no vector per entry on the hot path).
template <class T = void>
void append_context_messages(const dependent<EntryHandle, T>& entry, std::size_t index,
                             const std::vector<EntryHandle>& entries,
                             const ContextBuildOptions& options,
                             dependent<std::vector<MessageHandle>, T>& out) {
    std::visit(
        [&](const auto& e) {
            using E = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<E, MessageEntry>) {
                out.push_back(alias_message(entry, e.message));
            } else if constexpr (std::is_same_v<E, CustomMessageEntry>) {
                out.push_back(std::make_shared<const AgentMessage>(CustomMessage{
                    e.custom_type, e.content, e.display, e.details, entry_time_ms(e), {}}));
            } else if constexpr (std::is_same_v<E, CompactionEntry>) {
                out.push_back(std::make_shared<const AgentMessage>(
                    CompactionSummaryMessage{e.summary, e.tokens_before, entry_time_ms(e), {}}));
                if (e.retained_tail)
                    for (const auto& m : *e.retained_tail) out.push_back(alias_message(entry, m));
            } else if constexpr (std::is_same_v<E, BranchSummaryEntry>) {
                if (!e.summary.empty())
                    out.push_back(std::make_shared<const AgentMessage>(
                        BranchSummaryMessage{e.summary, e.from_id, entry_time_ms(e), {}}));
            } else if constexpr (std::is_same_v<E, CustomEntry>) {
                auto it = options.entry_projectors.find(e.custom_type);
                if (it != options.entry_projectors.end() && it->second) {
                    for (auto& m : it->second(e, index, entries))
                        out.push_back(std::make_shared<const AgentMessage>(std::move(m)));
                }
            }
        },
        *entry);
}

}  // namespace detail

template <class>
std::vector<MessageHandle> session_entry_to_context_messages(
    const EntryHandle& entry, std::size_t index, const std::vector<EntryHandle>& entries,
    const ContextBuildOptions& options) {
    std::vector<MessageHandle> out;
    detail::append_context_messages(entry, index, entries, options, out);
    return out;
}

namespace detail {

// Removes every tool result whose tool call is not earlier in the list. One pass over the
// handles with a set of the call ids seen so far; kept handles are moved, never copied, and the
// vector is compacted in place only from the first dropped message on.
template <class T = void>
void drop_orphan_tool_results(dependent<std::vector<MessageHandle>, T>& messages,
                              dependent<std::vector<DroppedMessage>, T>& dropped) {
    std::unordered_set<std::string_view> calls;  // views into assistant messages that are kept
    std::size_t kept = 0;
    for (std::size_t i = 0; i < messages.size(); ++i) {
        const auto& m = *messages[i];
        if (const auto* a = std::get_if<AssistantMessage>(&m)) {
            for (const auto& block : a->content)
                if (const auto* call = std::get_if<ToolCallContent>(&block)) calls.insert(call->id);
        } else if (const auto* r = std::get_if<ToolResultMessage>(&m)) {
            if (calls.count(r->tool_call_id) == 0) {
                dropped.push_back(DroppedMessage{DropReason::orphan_tool_result, r->tool_call_id,
                                                 std::move(messages[i]), true});
                continue;
            }
        }
        if (kept != i) messages[kept] = std::move(messages[i]);
        ++kept;
    }
    messages.resize(kept);
}

// provider_ready: the trailing assistant message (followed by nothing but tool results) loses
// the tool calls that no following result answers; when nothing but thinking remains of it, the
// whole message goes (a reply of thinking alone is not a valid turn for providers). Returns true
// when the whole message went: the one before may now trail with unanswered calls of its own.
template <class T = void>
bool drop_trailing_dangling_tool_calls(dependent<std::vector<MessageHandle>, T>& messages,
                                       dependent<std::vector<DroppedMessage>, T>& dropped) {
    std::size_t last = messages.size();
    for (std::size_t i = messages.size(); i-- > 0;) {
        if (std::holds_alternative<ToolResultMessage>(*messages[i])) continue;
        if (std::holds_alternative<AssistantMessage>(*messages[i])) last = i;
        break;
    }
    if (last == messages.size()) return false;
    const auto& assistant = std::get<AssistantMessage>(*messages[last]);
    std::unordered_set<std::string_view> answered;
    for (std::size_t i = last + 1; i < messages.size(); ++i)
        answered.insert(std::get<ToolResultMessage>(*messages[i]).tool_call_id);

    std::vector<std::string> dangling;
    bool substance_left = false;
    for (const auto& block : assistant.content) {
        if (const auto* call = std::get_if<ToolCallContent>(&block)) {
            if (answered.count(call->id) == 0)
                dangling.push_back(call->id);
            else
                substance_left = true;
        } else if (!std::holds_alternative<ThinkingContent>(block)) {
            substance_left = true;
        }
    }
    if (dangling.empty()) return false;

    dependent<MessageHandle, T> original = messages[last];
    if (!substance_left) {
        for (auto& id : dangling)
            dropped.push_back(
                DroppedMessage{DropReason::dangling_tool_call, std::move(id), original, true});
        messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(last));
        return true;
    }
    dependent<AssistantMessage, T> trimmed = assistant;
    std::erase_if(trimmed.content, [&](const ContentBlock& block) {
        const auto* call = std::get_if<ToolCallContent>(&block);
        return call && answered.count(call->id) == 0;
    });
    for (auto& id : dangling)
        dropped.push_back(
            DroppedMessage{DropReason::dangling_tool_call, std::move(id), original, false});
    messages[last] = std::make_shared<const AgentMessage>(std::move(trimmed));
    return false;
}

}  // namespace detail

/// Makes a message list keep the pairing invariant (SPEC §8): removes every tool result whose
/// tool call (an assistant ToolCallContent with that id) is not earlier in the list, and, with
/// `provider_ready`, the dangling tool calls of the trailing assistant message — repeatedly, as
/// long as dropping a whole message leaves another assistant message trailing. What is removed
/// is appended to `dropped`. build_session_context calls this; it is public for applications
/// that assemble message lists of their own.
///
/// Complexity: one pass, O(n) with a hash set of the call ids; kept messages are not copied
/// (a trimmed trailing assistant message is the one copy).
template <class = void>
void enforce_tool_pairing(std::vector<MessageHandle>& messages,
                          std::vector<DroppedMessage>& dropped, bool provider_ready = false) {
    detail::drop_orphan_tool_results(messages, dropped);
    if (provider_ready)
        while (detail::drop_trailing_dangling_tool_calls(messages, dropped)) {
        }
}

namespace detail {

// The messages of a context built from a path (SPEC §4.5), with the pairing enforced.
template <class T = void>
void build_context_messages(const dependent<std::vector<EntryHandle>, T>& path,
                            const ContextBuildOptions& options, SessionContext& context) {
    const auto entries = build_context_entries(path, options);
    context.messages.reserve(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i)
        detail::append_context_messages(entries[i], i, entries, options, context.messages);
    enforce_tool_pairing(context.messages, context.dropped, options.provider_ready);
}

}  // namespace detail

/// Sets a context's state (thinking level, model, tools) from the entries it comes from, as a
/// storage's get_state_entries finds them on the leaf's whole ancestry (SPEC §4.5): a
/// thinking_level_change sets the level, a model_change or an assistant message the model, an
/// active_tools_change the tool list; a null entry leaves the default (off, none, none).
template <class T = void>
void set_context_state(detail::dependent<SessionContext, T>& context, const StateEntries& state) {
    context.thinking_level = "off";
    context.model.reset();
    context.active_tool_names.reset();
    if (state.thinking_level)
        if (const auto* t = std::get_if<ThinkingLevelChangeEntry>(state.thinking_level.get()))
            context.thinking_level = t->thinking_level;
    if (state.model) {
        if (const auto* m = std::get_if<ModelChangeEntry>(state.model.get())) {
            context.model = ModelRef{m->provider, m->model_id};
        } else if (const auto* msg = std::get_if<MessageEntry>(state.model.get())) {
            if (const auto* a = std::get_if<AssistantMessage>(&msg->message))
                context.model = ModelRef{a->provider, a->model};
        }
    }
    if (state.active_tools)
        if (const auto* tools = std::get_if<ActiveToolsChangeEntry>(state.active_tools.get()))
            context.active_tool_names = tools->active_tool_names;
}

/// Builds the context from a path (oldest first, as get_path_to_root_or_compaction returns it).
/// The state (thinking level, model, tools) comes from the entries of the untransformed path,
/// oldest to newest; the messages from the transformed entries. A path that starts at a
/// compaction's first kept entry lacks the settings chosen before it: build_context and
/// build_context_at take the state from the leaf's whole ancestry instead (SPEC §4.5).
///
/// The result never holds a tool result whose tool call is not earlier in it (SPEC §8): such
/// results (left behind by a compaction or a transform, or written by a buggy program) are
/// dropped and listed in `dropped`. With `options.provider_ready`, the trailing assistant
/// message's unanswered tool calls are dropped too (see enforce_tool_pairing). Dangling tool
/// calls earlier in the list (an interrupted turn the conversation moved on from) are kept:
/// they are history, and provider adapters answer them with a synthetic result.
template <class T = void>
SessionContext build_session_context(const detail::dependent<std::vector<EntryHandle>, T>& path,
                                     const ContextBuildOptions& options = {}) {
    detail::dependent<SessionContext, T> context;
    StateEntries state;
    for (const auto& handle : path) {
        const detail::StateSets sets = detail::state_sets_of(*handle);
        if (sets.thinking_level) state.thinking_level = handle;
        if (sets.model) state.model = handle;
        if (sets.active_tools) state.active_tools = handle;
    }
    set_context_state(context, state);
    detail::build_context_messages(path, options, context);
    return context;
}

}  // namespace agentcore

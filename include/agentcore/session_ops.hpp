#pragma once
// Session<S> and the operations on it, named after the design document (SPEC §4).

#include <agentcore/context.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/storage.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore {

/// A session: a storage plus the context options that apply to every build of its context.
///
/// The storage is shared: copies of a Session (and sessions opened again from an in-memory
/// repository) work on the same entries.
template <SessionStorage S>
class Session {
public:
    using storage_type = S;

    /// A session over a storage it takes ownership of.
    explicit Session(S storage, ContextBuildOptions options = {})
        : storage_(std::make_shared<S>(std::move(storage))), options_(std::move(options)) {}

    /// A session over a shared storage.
    explicit Session(std::shared_ptr<S> storage, ContextBuildOptions options = {})
        : storage_(std::move(storage)), options_(std::move(options)) {
        if (!storage_) throw SessionError(ErrorCode::invalid_session, "session without a storage");
    }

    [[nodiscard]] S& storage() noexcept { return *storage_; }
    [[nodiscard]] const S& storage() const noexcept { return *storage_; }
    [[nodiscard]] const std::shared_ptr<S>& shared_storage() const noexcept { return storage_; }

    /// Context options applied to every build_context of this session (before the call's).
    [[nodiscard]] ContextBuildOptions& context_build_options() noexcept { return options_; }
    [[nodiscard]] const ContextBuildOptions& context_build_options() const noexcept {
        return options_;
    }

private:
    std::shared_ptr<S> storage_;
    ContextBuildOptions options_;
};

/// The inputs of a branch summary written by move_to.
struct BranchSummaryInput {
    std::string summary{};
    Json details{};  ///< null when absent
    std::optional<Usage> usage{};
    bool from_hook = false;
};

namespace detail {

// A new entry of type E: a fresh id, the leaf as parent, the storage's clock.
template <class E, SessionStorage S>
E new_entry(Session<S>& session) {
    auto& storage = session.storage();
    E entry;
    entry.id = storage.create_entry_id();
    entry.parent_id = storage.get_leaf_id();
    entry.timestamp = format_timestamp(storage.environment().now_ms());
    return entry;
}

template <SessionStorage S, class E>
std::string append_typed(Session<S>& session, E entry) {
    std::string id = entry.id;
    session.storage().append_entry(SessionTreeEntry(std::move(entry)));
    return id;
}

template <SessionStorage S>
void require_entry(const Session<S>& session, std::string_view id) {
    if (!session.storage().get_entry(id))
        throw SessionError(ErrorCode::not_found, "entry '" + std::string(id) + "' not found",
                           ErrorLocation{.entry_id = std::string(id)});
}

}  // namespace detail

/// The current leaf (none for an empty session or after moving before the first entry).
template <SessionStorage S>
std::optional<std::string> get_leaf_id(const Session<S>& session) {
    return session.storage().get_leaf_id();
}

/// The entry with that id, or null.
template <SessionStorage S>
EntryHandle get_entry(const Session<S>& session, std::string_view id) {
    return session.storage().get_entry(id);
}

/// The newest label of an entry (all branches), or none.
template <SessionStorage S>
std::optional<std::string> get_label(const Session<S>& session, std::string_view id) {
    return session.storage().get_label(id);
}

/// The newest session name, trimmed; none when never set or cleared.
template <SessionStorage S>
std::optional<std::string> get_session_name(const Session<S>& session) {
    return session.storage().get_session_name();
}

/// Totals over all entries (SPEC §4.7). O(1).
template <SessionStorage S>
SessionStats get_session_stats(const Session<S>& session) {
    return session.storage().get_session_stats();
}

/// Appends an entry as it is (its id and parent are the caller's). Throws already_exists,
/// invalid_entry.
template <SessionStorage S>
void append_entry(Session<S>& session, SessionTreeEntry entry) {
    session.storage().append_entry(std::move(entry));
}

/// Appends a message as a child of the leaf; returns the new entry's id. A message whose
/// timestamp is 0 (the builders' default: user_text, assistant_reply, tool_result) gets the
/// session's clock, the same time as its entry.
template <SessionStorage S>
std::string append_message(Session<S>& session, AgentMessage message) {
    auto& storage = session.storage();
    detail::dependent<MessageEntry, S> e;
    e.id = storage.create_entry_id();
    e.parent_id = storage.get_leaf_id();
    const std::int64_t now = storage.environment().now_ms();
    e.timestamp = format_timestamp(now);
    std::visit(
        [now](auto& m) {
            if constexpr (requires { m.timestamp = now; })
                if (m.timestamp == 0) m.timestamp = now;
        },
        message);
    e.message = std::move(message);
    return detail::append_typed(session, std::move(e));
}

/// Records a change of the thinking level.
template <SessionStorage S>
std::string append_thinking_level_change(Session<S>& session, std::string thinking_level) {
    ThinkingLevelChangeEntry e = detail::new_entry<ThinkingLevelChangeEntry>(session);
    e.thinking_level = std::move(thinking_level);
    return detail::append_typed(session, std::move(e));
}

/// Records a change of the model.
template <SessionStorage S>
std::string append_model_change(Session<S>& session, std::string provider, std::string model_id) {
    ModelChangeEntry e = detail::new_entry<ModelChangeEntry>(session);
    e.provider = std::move(provider);
    e.model_id = std::move(model_id);
    return detail::append_typed(session, std::move(e));
}

/// Records a change of the active tools.
template <SessionStorage S>
std::string append_active_tools_change(Session<S>& session,
                                       std::vector<std::string> active_tool_names) {
    ActiveToolsChangeEntry e = detail::new_entry<ActiveToolsChangeEntry>(session);
    e.active_tool_names = std::move(active_tool_names);
    return detail::append_typed(session, std::move(e));
}

/// Appends a compaction. `first_kept_entry_id`, when given, must name an existing entry
/// (not_found otherwise). A present `retained_tail` (even empty) ends every path walk here.
template <SessionStorage S>
std::string append_compaction(
    Session<S>& session, std::string summary, std::optional<std::string> first_kept_entry_id,
    std::int64_t tokens_before, Json details = {}, bool from_hook = false,
    std::optional<Usage> usage = std::nullopt,
    std::optional<std::vector<AgentMessage>> retained_tail = std::nullopt) {
    if (first_kept_entry_id) detail::require_entry(session, *first_kept_entry_id);
    CompactionEntry e = detail::new_entry<CompactionEntry>(session);
    e.summary = std::move(summary);
    e.first_kept_entry_id = std::move(first_kept_entry_id);
    e.tokens_before = tokens_before;
    e.retained_tail = std::move(retained_tail);
    e.details = std::move(details);
    e.usage = std::move(usage);
    e.from_hook = from_hook;
    return detail::append_typed(session, std::move(e));
}

/// Appends application data that takes no part in the context unless projected.
template <SessionStorage S>
std::string append_custom_entry(Session<S>& session, std::string custom_type, Json data = {}) {
    CustomEntry e = detail::new_entry<CustomEntry>(session);
    e.custom_type = std::move(custom_type);
    e.data = std::move(data);
    return detail::append_typed(session, std::move(e));
}

/// Appends a message of the application that becomes a `custom` message in the context.
template <SessionStorage S>
std::string append_custom_message_entry(Session<S>& session, std::string custom_type,
                                        Content content, bool display = true, Json details = {}) {
    CustomMessageEntry e = detail::new_entry<CustomMessageEntry>(session);
    e.custom_type = std::move(custom_type);
    e.content = std::move(content);
    e.details = std::move(details);
    e.display = display;
    return detail::append_typed(session, std::move(e));
}

/// Labels an entry (SPEC §4.6). The label is trimmed; none or empty clears it. Unknown target:
/// not_found. Returns the label entry's id.
template <SessionStorage S>
std::string append_label(Session<S>& session, std::string_view target_id,
                         std::optional<std::string> label) {
    detail::require_entry(session, target_id);
    LabelEntry e = detail::new_entry<LabelEntry>(session);
    e.target_id = std::string(target_id);
    if (label) {
        std::string_view trimmed = detail::trim(*label);
        if (!trimmed.empty()) e.label = std::string(trimmed);
    }
    return detail::append_typed(session, std::move(e));
}

/// Names the session (SPEC §4.6): every run of CR/LF becomes one space, then the name is
/// trimmed. An empty result clears the name.
template <SessionStorage S>
std::string append_session_name(Session<S>& session, std::string_view name) {
    std::string flat;
    flat.reserve(name.size());
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '\r' || name[i] == '\n') {
            while (i + 1 < name.size() && (name[i + 1] == '\r' || name[i + 1] == '\n')) ++i;
            flat.push_back(' ');
        } else {
            flat.push_back(name[i]);
        }
    }
    SessionInfoEntry e = detail::new_entry<SessionInfoEntry>(session);
    e.name = std::string(detail::trim(flat));
    return detail::append_typed(session, std::move(e));
}

/// Moves the leaf (SPEC §4.2): appends a `leaf` entry even when the leaf does not change.
/// Unknown id: not_found.
template <SessionStorage S>
void set_leaf_id(Session<S>& session, std::optional<std::string> id) {
    session.storage().set_leaf_id(std::move(id));
}

/// Moves to an entry (none: before the first entry), SPEC §4.3. With a summary, then appends a
/// branch summary as a child of the target (`from_id` = the target or "root") and returns its
/// id; the leaf moves to it. Unknown id: not_found, nothing written.
template <SessionStorage S>
std::optional<std::string> move_to(Session<S>& session, std::optional<std::string> id,
                                   std::optional<BranchSummaryInput> summary = std::nullopt) {
    if (id) detail::require_entry(session, *id);
    session.storage().set_leaf_id(id);
    if (!summary) return std::nullopt;
    BranchSummaryEntry e = detail::new_entry<BranchSummaryEntry>(session);
    e.parent_id = id;
    e.from_id = id ? *id : std::string("root");
    e.summary = std::move(summary->summary);
    e.details = std::move(summary->details);
    e.usage = std::move(summary->usage);
    e.from_hook = summary->from_hook;
    return detail::append_typed(session, std::move(e));
}

/// The path from `start` back to the root or the governing compaction, oldest first (SPEC
/// §4.4). Unknown start: not_found; no start: empty.
template <SessionStorage S>
std::vector<EntryHandle> get_path_to_root_or_compaction(const Session<S>& session,
                                                        std::optional<std::string_view> start) {
    return session.storage().get_path_to_root_or_compaction(start);
}

/// The current branch: the path from the leaf.
template <SessionStorage S>
std::vector<EntryHandle> get_branch(const Session<S>& session) {
    auto leaf = session.storage().get_leaf_id();
    return session.storage().get_path_to_root_or_compaction(
        leaf ? std::optional<std::string_view>(*leaf) : std::nullopt);
}

/// The branch that ends at `from`.
template <SessionStorage S>
std::vector<EntryHandle> get_branch(const Session<S>& session, std::string_view from) {
    return session.storage().get_path_to_root_or_compaction(from);
}

/// The session's options followed by the call's (the call's projectors win).
template <SessionStorage S>
ContextBuildOptions merge_context_build_options(const Session<S>& session,
                                                const ContextBuildOptions& options) {
    return merge_context_build_options(session.context_build_options(), options);
}

/// The context entries of the current branch after all transforms.
template <SessionStorage S>
std::vector<EntryHandle> build_context_entries(const Session<S>& session,
                                               const ContextBuildOptions& options = {}) {
    return build_context_entries(get_branch(session),
                                 merge_context_build_options(session, options));
}

/// The entries the state of a context built at `leaf` comes from: on the leaf's whole ancestry,
/// the newest thinking_level_change, model setter (model_change or assistant message) and
/// active_tools_change (SPEC §4.5). O(1) on a storage that keeps them (has_state_entries: the
/// built-in ones do), else a walk of the ancestry. No leaf: all null.
template <SessionStorage S>
StateEntries get_state_entries(const Session<S>& session, std::optional<std::string_view> leaf) {
    const S& storage = session.storage();
    if constexpr (has_state_entries<S>) {
        return storage.get_state_entries(leaf);
    } else {
        return detail::walk_state_entries(
            leaf, storage.entry_count(),
            [&storage](std::string_view id) { return storage.get_entry(id); });
    }
}

namespace detail {

template <SessionStorage S>
SessionContext build_context_from(const Session<S>& session, std::optional<std::string_view> leaf,
                                  const ContextBuildOptions& options) {
    SessionContext context;
    const std::vector<EntryHandle> path = session.storage().get_path_to_root_or_compaction(leaf);
    set_context_state(context, get_state_entries(session, leaf));
    build_context_messages(path, options, context);
    return context;
}

}  // namespace detail

/// The context of the current branch (SPEC §4.5): messages from the path, the state from the
/// leaf's whole ancestry, so that a compaction does not reset the settings chosen before it.
template <SessionStorage S>
SessionContext build_context(const Session<S>& session, const ContextBuildOptions& options = {}) {
    const auto leaf = session.storage().get_leaf_id();
    const auto start = leaf ? std::optional<std::string_view>(*leaf) : std::nullopt;
    if (options.entry_transforms.empty() && options.entry_projectors.empty() &&
        (!options.provider_ready || session.context_build_options().provider_ready))
        return detail::build_context_from(session, start, session.context_build_options());
    return detail::build_context_from(session, start,
                                      merge_context_build_options(session, options));
}

/// The context of the branch that ends at `leaf` (none: empty context), as build_context.
/// Unknown leaf: not_found.
template <SessionStorage S>
SessionContext build_context_at(const Session<S>& session, std::optional<std::string_view> leaf,
                                const ContextBuildOptions& options = {}) {
    return detail::build_context_from(session, leaf, merge_context_build_options(session, options));
}

/// The context of the branch that ends at `leaf`, as get_leaf_id returns it (none: empty context).
template <SessionStorage S>
SessionContext build_context_at(const Session<S>& session, const std::optional<std::string>& leaf,
                                const ContextBuildOptions& options = {}) {
    return build_context_at(session, leaf ? std::optional<std::string_view>(*leaf) : std::nullopt,
                            options);
}

/// The context of the branch that ends at the entry `leaf`.
template <SessionStorage S>
SessionContext build_context_at(const Session<S>& session, const std::string& leaf,
                                const ContextBuildOptions& options = {}) {
    return build_context_at(session, std::optional<std::string_view>(leaf), options);
}

/// No leaf: the empty context.
template <SessionStorage S>
SessionContext build_context_at(const Session<S>& session, std::nullopt_t,
                                const ContextBuildOptions& options = {}) {
    return build_context_at(session, std::optional<std::string_view>(), options);
}

/// The context of the branch that ends at the entry `leaf`.
template <SessionStorage S>
SessionContext build_context_at(const Session<S>& session, const char* leaf,
                                const ContextBuildOptions& options = {}) {
    return build_context_at(session, std::optional<std::string_view>(leaf), options);
}

}  // namespace agentcore

#pragma once
// The SessionStorage concept: what a storage provides (SPEC §5), and the pieces every storage
// shares (stats accumulation, the path walk).

#include <agentcore/detail/dependent.hpp>
#include <agentcore/detail/saturate.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentcore {

/// Totals over all entries of all branches (SPEC §4.7).
struct SessionStats {
    std::size_t message_count = 0;     ///< number of `message` entries
    std::int64_t cached_tokens = 0;    ///< sum of cache_read
    std::int64_t uncached_tokens = 0;  ///< sum of input + cache_write
    std::int64_t total_tokens = 0;     ///< sum of input + output + cache_read + cache_write
    double cost_total = 0;             ///< sum of cost.total

    /// Adds one usage record. Token sums saturate at INT64_MAX (INT64_MIN for the negative
    /// counts a damaged file may hold) instead of wrapping: a sum at the bound means "at least".
    template <class = void>
    void add_usage(const Usage& u) noexcept {
        using detail::saturating_add;
        cached_tokens = saturating_add(cached_tokens, u.cache_read);
        uncached_tokens = saturating_add(uncached_tokens, saturating_add(u.input, u.cache_write));
        total_tokens = saturating_add(total_tokens,
                                      saturating_add(saturating_add(u.input, u.output),
                                                     saturating_add(u.cache_read, u.cache_write)));
        cost_total += u.cost.total;
    }

    /// Adds what one entry contributes: a message count, and the usage of assistant messages,
    /// compactions and branch summaries.
    template <class T = void>
    void add(const detail::dependent<SessionTreeEntry, T>& entry) noexcept {
        if (const auto* m = std::get_if<MessageEntry>(&entry)) {
            ++message_count;
            if (const auto* a = std::get_if<AssistantMessage>(&m->message)) add_usage(a->usage);
        } else if (const auto* c = std::get_if<CompactionEntry>(&entry)) {
            if (c->usage) add_usage(*c->usage);
        } else if (const auto* b = std::get_if<BranchSummaryEntry>(&entry)) {
            if (b->usage) add_usage(*b->usage);
        }
    }
};

/// Paging of get_entries: skip `after` entries (append order), return at most `limit`.
struct EntriesQuery {
    std::size_t after = 0;
    std::size_t limit = std::numeric_limits<std::size_t>::max();
};

/// The entries a context's state comes from (SPEC §4.5): on the whole ancestry of a leaf (root
/// to leaf, through every compaction), the newest entry that sets the thinking level (a
/// `thinking_level_change`), the model (a `model_change` or an assistant message) and the tool
/// set (an `active_tools_change`). Null where no entry of the ancestry sets it.
struct StateEntries {
    EntryHandle thinking_level;
    EntryHandle model;
    EntryHandle active_tools;
};

/// What a session storage provides. Every built-in storage models it; an application can model
/// it with its own type (a database) and use Session<S> and every free function unchanged.
///
/// Required expressions (s: S&, cs: const S&, id: std::string_view):
/// - cs.metadata() -> const SessionHeader&             the header
/// - cs.environment() -> const Environment&            clock and randomness of this storage
/// - cs.get_leaf_id() -> std::optional<std::string>     the current leaf
/// - s.set_leaf_id(std::optional<std::string>)          appends a `leaf` entry; unknown id:
/// not_found
/// - s.create_entry_id() -> std::string                 a fresh id, unique in this session
/// - s.append_entry(SessionTreeEntry)                   child of any existing entry; moves the leaf
/// - cs.get_entry(id) -> EntryHandle                    null when unknown
/// - cs.find_entries(type) -> std::vector<EntryHandle>  append order, all branches
/// - cs.get_label(id) -> std::optional<std::string>     newest label of that entry
/// - cs.get_session_name() -> std::optional<std::string>
/// - cs.get_path_to_root_or_compaction(std::optional<std::string_view>) -> std::vector<EntryHandle>
/// - cs.get_entries(EntriesQuery) -> std::vector<EntryHandle>
/// - cs.get_session_stats() -> SessionStats             O(1): kept up to date on append
/// - cs.entry_count() -> std::size_t
///
/// Optional (has_state_entries): cs.get_state_entries(std::optional<std::string_view> leaf) ->
/// StateEntries, kept by the storage so that the state of a context costs no walk of the whole
/// ancestry; without it, build_context walks the ancestry through get_entry.
///
/// Optional (has_dialect): cs.dialect() -> Dialect, the JSONL dialect the storage keeps its
/// session's lines in; read through dialect_of.
///
/// Handles point to immutable entries: a storage may create them on demand (nothing requires
/// every entry to live in memory), but must never hand out an entry that later changes.
template <class S>
concept SessionStorage = requires(S& s, const S& cs, std::string_view id,
                                  std::optional<std::string> leaf,
                                  std::optional<std::string_view> start, SessionTreeEntry entry,
                                  EntriesQuery query) {
    { cs.metadata() } -> std::convertible_to<const SessionHeader&>;
    { cs.environment() } -> std::convertible_to<const Environment&>;
    { cs.get_leaf_id() } -> std::same_as<std::optional<std::string>>;
    s.set_leaf_id(leaf);
    { s.create_entry_id() } -> std::same_as<std::string>;
    s.append_entry(std::move(entry));
    { cs.get_entry(id) } -> std::same_as<EntryHandle>;
    { cs.find_entries(id) } -> std::same_as<std::vector<EntryHandle>>;
    { cs.get_label(id) } -> std::same_as<std::optional<std::string>>;
    { cs.get_session_name() } -> std::same_as<std::optional<std::string>>;
    { cs.get_path_to_root_or_compaction(start) } -> std::same_as<std::vector<EntryHandle>>;
    { cs.get_entries(query) } -> std::same_as<std::vector<EntryHandle>>;
    { cs.get_session_stats() } -> std::same_as<SessionStats>;
    { cs.entry_count() } -> std::convertible_to<std::size_t>;
};

/// A storage that finds the entries of a context's state itself (see StateEntries).
template <class S>
concept has_state_entries = requires(const S& cs, std::optional<std::string_view> leaf) {
    { cs.get_state_entries(leaf) } -> std::same_as<StateEntries>;
};

/// A storage that keeps its session's lines in one JSONL dialect (see dialect_of).
template <class S>
concept has_dialect = requires(const S& cs) {
    { cs.dialect() } -> std::same_as<Dialect>;
};

/// The dialect a storage keeps its session in: its own for the JSONL and database storages
/// (has_dialect), native for a storage that keeps no lines (memory). A copy of the session
/// (copy_session) is written in it.
template <SessionStorage S>
[[nodiscard]] Dialect dialect_of(const S& storage) {
    if constexpr (has_dialect<S>) {
        return storage.dialect();
    } else {
        (void)storage;
        return Dialect::native;
    }
}

namespace detail {

/// What an entry sets of a context's state.
struct StateSets {
    bool thinking_level = false;
    bool model = false;
    bool active_tools = false;
};

/// What an entry sets, from its type and (for a message) whether it is an assistant message.
template <class = void>
StateSets state_sets_of(std::string_view type, bool assistant_message) noexcept {
    StateSets sets;
    sets.thinking_level = type == ThinkingLevelChangeEntry::type;
    sets.model =
        type == ModelChangeEntry::type || (type == MessageEntry::type && assistant_message);
    sets.active_tools = type == ActiveToolsChangeEntry::type;
    return sets;
}

template <class T = void>
StateSets state_sets_of(const dependent<SessionTreeEntry, T>& entry) noexcept {
    const auto* m = std::get_if<MessageEntry>(&entry);
    return state_sets_of(type_of(entry),
                         m != nullptr && std::holds_alternative<AssistantMessage>(m->message));
}

/// StateEntries by walking the ancestry of `leaf` through any id → entry lookup, newest first,
/// until all three are found or the root is reached: O(ancestry). For storages that do not keep
/// them (has_state_entries). `bound` limits the walk as in walk_to_root_or_compaction.
template <class Lookup>
StateEntries walk_state_entries(std::optional<std::string_view> leaf, std::size_t bound,
                                Lookup&& lookup) {
    StateEntries out;
    if (!leaf) return out;
    dependent<EntryHandle, Lookup> current = lookup(*leaf);
    for (std::size_t steps = 0; current && steps < bound; ++steps) {
        const StateSets sets = state_sets_of(*current);
        if (sets.thinking_level && !out.thinking_level) out.thinking_level = current;
        if (sets.model && !out.model) out.model = current;
        if (sets.active_tools && !out.active_tools) out.active_tools = current;
        if (out.thinking_level && out.model && out.active_tools) break;
        const auto& parent = parent_id_of(*current);
        current = parent ? lookup(*parent) : nullptr;
    }
    return out;
}

/// The path walk of SPEC §4.4 over any id → entry lookup. Oldest first. The first compaction
/// met on the way (the newest on the path) decides where the path starts: the walk stops after
/// including it when it has a retained tail, else after including the entry its
/// first_kept_entry_id names; compactions met after it (older ones, inside its kept range) change
/// nothing. Otherwise the walk ends at a root. `bound` (the number of entries) limits the walk so
/// that no parent cycle can hang it.
template <class Lookup>
std::vector<EntryHandle> walk_to_root_or_compaction(std::optional<std::string_view> start,
                                                    std::size_t bound, Lookup&& lookup) {
    std::vector<dependent<EntryHandle, Lookup>> path;
    if (!start) return path;
    dependent<EntryHandle, Lookup> current = lookup(*start);
    if (!current)
        throw SessionError(ErrorCode::not_found, "entry '" + std::string(*start) + "' not found",
                           ErrorLocation{.entry_id = std::string(*start)});
    bool governed = false;  // the newest compaction has been met
    std::optional<std::string> stop_at;
    while (current) {
        if (path.size() >= bound)
            throw SessionError(ErrorCode::invalid_session,
                               "parent chain from entry '" + std::string(*start) +
                                   "' is longer than the session (cycle at '" + id_of(*current) +
                                   "')");
        path.push_back(current);
        const auto& e = *current;
        if (!governed) {
            if (const auto* c = std::get_if<CompactionEntry>(&e)) {
                governed = true;
                if (c->retained_tail) break;
                stop_at = c->first_kept_entry_id;
            }
        }
        if (stop_at && *stop_at == id_of(e)) break;
        const auto& parent = parent_id_of(e);
        if (!parent) break;
        dependent<EntryHandle, Lookup> next = lookup(*parent);
        if (!next)
            throw SessionError(
                ErrorCode::invalid_session,
                "entry '" + id_of(e) + "' names parent '" + *parent + "', which does not exist");
        current = std::move(next);
    }
    return {path.rbegin(), path.rend()};
}

/// Trims ASCII whitespace at both ends.
template <class = void>
std::string_view trim(std::string_view s) noexcept {
    auto ws = [](char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    };
    while (!s.empty() && ws(s.front())) s.remove_prefix(1);
    while (!s.empty() && ws(s.back())) s.remove_suffix(1);
    return s;
}

}  // namespace detail

}  // namespace agentcore

#pragma once
// Bookkeeping every storage keeps beside its entries: id → position, the leaf, labels, the name,
// entries by type, the stats and, per entry, where its context's state comes from. Updated on
// append, so that each of these reads is O(1).
//
// Public: a storage of an application's own (see indexed_storage.hpp) builds on it. The types
// live in agentcore::detail for 0.1's sake and are named in agentcore at the end of this file.

#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/storage.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace agentcore::detail {

/// Transparent hash so that maps keyed by std::string can be searched with a string_view.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
        return std::hash<std::string_view>{}(s);
    }
};

template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

/// The bookkeeping of one session (see above). A class template only so that its code compiles
/// in the programs that use it; it is always used as TreeIndex.
template <class T = void>
class BasicTreeIndex {
    // The members' types are named through T, so that what is done with them compiles only
    // where the index is used (see detail/dependent.hpp).
    template <class V>
    using Map = dependent<StringMap<V>, T>;

public:
    /// Position (append order) of an entry, or none.
    [[nodiscard]] std::optional<std::size_t> position(std::string_view id) const {
        auto it = positions_.find(id);
        if (it == positions_.end()) return std::nullopt;
        return it->second;
    }

    [[nodiscard]] bool contains(std::string_view id) const {
        return positions_.find(id) != positions_.end();
    }
    [[nodiscard]] std::size_t size() const noexcept { return positions_.size(); }

    /// Throws unless `entry` may be appended: a non-empty id not yet taken (already_exists), a
    /// parent that exists (invalid_entry), a leaf target that exists (invalid_entry).
    void check_append(const dependent<SessionTreeEntry, T>& entry) const {
        const EntryBase& base = base_of(entry);
        if (base.id.empty())
            throw SessionError(
                ErrorCode::invalid_entry,
                "entry of type '" + std::string(type_of(entry)) + "' has an empty id");
        if (contains(base.id))
            throw SessionError(ErrorCode::already_exists,
                               "entry id '" + base.id + "' already exists in the session",
                               ErrorLocation{.entry_id = base.id});
        if (base.parent_id && !contains(*base.parent_id))
            throw SessionError(ErrorCode::invalid_entry,
                               "entry '" + base.id + "' names parent '" + *base.parent_id +
                                   "', which does not exist",
                               ErrorLocation{.entry_id = base.id});
        if (const auto* leaf = std::get_if<LeafEntry>(&entry)) {
            if (leaf->target_id && !contains(*leaf->target_id))
                throw SessionError(ErrorCode::invalid_entry,
                                   "leaf entry '" + base.id + "' targets '" + *leaf->target_id +
                                       "', which does not exist",
                                   ErrorLocation{.entry_id = base.id});
        }
    }

    /// Records an appended entry at the next position and moves the leaf (SPEC §4.2).
    void record(const dependent<SessionTreeEntry, T>& entry) {
        const std::size_t pos = positions_.size();
        const auto inserted = positions_.emplace(id_of(entry), pos).first;
        try {
            const auto& parent = parent_id_of(entry);
            push_state(pos, parent ? std::optional<std::string_view>(*parent) : std::nullopt,
                       state_sets_of(entry));
        } catch (...) {
            positions_.erase(inserted);
            throw;
        }
        by_type_[std::string(type_of(entry))].push_back(pos);
        stats_.add(entry);
        if (const auto* leaf = std::get_if<LeafEntry>(&entry)) {
            leaf_ = leaf->target_id;
            return;
        }
        leaf_ = id_of(entry);
        if (const auto* label = std::get_if<LabelEntry>(&entry)) {
            std::string_view text = label->label ? trim(*label->label) : std::string_view{};
            if (text.empty())
                labels_.erase(label->target_id);
            else
                labels_.insert_or_assign(label->target_id, std::string(text));
        } else if (const auto* info = std::get_if<SessionInfoEntry>(&entry)) {
            std::string_view text = info->name ? trim(*info->name) : std::string_view{};
            name_ = text.empty() ? std::nullopt : std::optional<std::string>(text);
        }
    }

    /// Records an entry the storage has not decoded (it decodes entries on demand): its id, its
    /// type, its parent, whether it is an assistant message (which sets the model) and the usage
    /// it adds to the stats, if any. Label, session_info and leaf entries change more than that
    /// and go through record(entry). Returns false, changing nothing, when the id is already
    /// taken.
    bool record_undecoded(std::string_view id, std::string_view type,
                          std::optional<std::string_view> parent, bool assistant_message,
                          const Usage* usage) {
        const std::size_t pos = positions_.size();
        const auto [inserted, fresh] = positions_.try_emplace(std::string(id), pos);
        if (!fresh) return false;
        try {
            push_state(pos, parent, state_sets_of(type, assistant_message));
        } catch (...) {
            positions_.erase(inserted);
            throw;
        }
        auto it = by_type_.find(type);
        if (it == by_type_.end())
            it = by_type_.emplace(std::string(type), std::vector<std::size_t>{}).first;
        it->second.push_back(pos);
        if (type == MessageEntry::type) ++stats_.message_count;
        if (usage != nullptr) stats_.add_usage(*usage);
        leaf_ = std::string(id);
        return true;
    }

    [[nodiscard]] const std::optional<std::string>& leaf() const noexcept { return leaf_; }

    [[nodiscard]] std::optional<std::string> label(std::string_view id) const {
        auto it = labels_.find(id);
        if (it == labels_.end()) return std::nullopt;
        return it->second;
    }

    [[nodiscard]] const std::optional<std::string>& name() const noexcept { return name_; }
    [[nodiscard]] const SessionStats& stats() const noexcept { return stats_; }

    /// Positions of the entries of one type, in append order.
    [[nodiscard]] const std::vector<std::size_t>& positions_of_type(std::string_view type) const {
        static const std::vector<std::size_t> none;
        auto it = by_type_.find(type);
        return it == by_type_.end() ? none : it->second;
    }

    /// Position of "no entry" in StatePositions.
    static constexpr std::size_t no_position = std::numeric_limits<std::size_t>::max();

    /// Where the state of a context built at an entry comes from: the positions of the newest
    /// entries of its ancestry (the entry included) that set the thinking level, the model, the
    /// tool set; no_position where none does.
    struct StatePositions {
        std::size_t thinking_level = no_position;
        std::size_t model = no_position;
        std::size_t active_tools = no_position;
    };

    /// The state positions of the entry with that id (all no_position for none or an unknown id).
    /// O(1): each entry's are derived from its parent's when it is recorded.
    [[nodiscard]] StatePositions state_positions(std::optional<std::string_view> id) const {
        if (!id) return {};
        auto it = positions_.find(*id);
        return it == positions_.end() ? StatePositions{} : state_[it->second];
    }

    /// StateEntries of the entry with that id, the entries fetched by position with `at`.
    template <class EntryAt>
    [[nodiscard]] StateEntries state_entries(std::optional<std::string_view> id,
                                             EntryAt&& at) const {
        const StatePositions p = state_positions(id);
        StateEntries out;
        if (p.thinking_level != no_position) out.thinking_level = at(p.thinking_level);
        if (p.model != no_position) out.model = at(p.model);
        if (p.active_tools != no_position) out.active_tools = at(p.active_tools);
        return out;
    }

    void reserve(std::size_t n) {
        positions_.reserve(n);
        state_.reserve(n);
    }

private:
    // Appends the state positions of the entry at `pos`: its parent's, overridden by what it sets.
    void push_state(std::size_t pos, std::optional<std::string_view> parent, StateSets sets) {
        StatePositions p;
        if (parent) {
            auto it = positions_.find(*parent);
            if (it != positions_.end()) p = state_[it->second];
        }
        if (sets.thinking_level) p.thinking_level = pos;
        if (sets.model) p.model = pos;
        if (sets.active_tools) p.active_tools = pos;
        state_.push_back(p);
    }

    Map<std::size_t> positions_;
    Map<std::vector<std::size_t>> by_type_;
    Map<std::string> labels_;
    std::optional<std::string> name_;
    std::optional<std::string> leaf_;
    SessionStats stats_;
    dependent<std::vector<StatePositions>, T> state_;  // by position
};

using TreeIndex = BasicTreeIndex<>;

}  // namespace agentcore::detail

namespace agentcore {

using detail::StringHash;
using detail::StringMap;
using detail::TreeIndex;

/// True for the entry types that change the bookkeeping beyond id, type and usage (label,
/// session_info, leaf): a storage that indexes entries without decoding them (TreeIndex::
/// record_undecoded) must decode these and pass them to TreeIndex::record.
template <class = void>
[[nodiscard]] bool needs_decoding(std::string_view type) noexcept {
    return type == LabelEntry::type || type == SessionInfoEntry::type || type == LeafEntry::type;
}

/// The path walk of SPEC §4.4 (detail::walk_to_root_or_compaction) over ancestors a storage has
/// fetched itself, for instance with one query: `fetched` holds the start entry and some of its
/// ancestors, in any order. When the walk needs an entry that is not among them, `fetch_more(id)`
/// is asked for that entry and the ancestors after it (an empty result: it does not exist).
/// The stop rule is the walk's own, so every storage shares one statement of it.
///
/// Complexity: O(path) lookups plus what fetch_more costs.
template <class FetchMore>
std::vector<EntryHandle> walk_fetched_ancestors(std::optional<std::string_view> start,
                                                std::size_t bound, std::vector<EntryHandle> fetched,
                                                FetchMore&& fetch_more) {
    detail::dependent<StringMap<EntryHandle>, FetchMore> by_id;
    auto add = [&](std::vector<EntryHandle>&& batch) {
        for (auto& e : batch)
            if (e) by_id.emplace(id_of(*e), std::move(e));
    };
    add(std::move(fetched));
    return detail::walk_to_root_or_compaction(start, bound,
                                              [&](std::string_view id) -> EntryHandle {
                                                  auto it = by_id.find(id);
                                                  if (it != by_id.end()) return it->second;
                                                  add(fetch_more(id));
                                                  it = by_id.find(id);
                                                  return it == by_id.end() ? nullptr : it->second;
                                              });
}

}  // namespace agentcore

#pragma once
// Bookkeeping every storage keeps beside its entries: id → position, the leaf, labels, the name,
// entries by type, the stats and, per entry, where its context's state comes from. Updated on
// append, so that each of these reads is O(1).
//
// Public: a storage of an application's own (see indexed_storage.hpp) builds on it. The types
// live in agentcore::detail for 0.1's sake and are named in agentcore at the end of this file.

#include <agentcore/detail/bytes.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/storage.hpp>

#include <cstddef>
#include <cstdint>
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

/// Entry ids and their positions: the ids in a vector by position, found through an
/// open-addressing table of (hash, position) words, so that indexing an entry costs no node
/// allocation and a look-up at most a few probes into one array. Ids are only added in
/// position order, and only the newest can be taken away again.
template <class T = void>
class IdTable {
public:
    [[nodiscard]] std::size_t size() const noexcept { return ids_.size(); }
    [[nodiscard]] const std::string& id_at(std::size_t pos) const { return ids_[pos]; }

    [[nodiscard]] std::optional<std::size_t> find(std::string_view id) const noexcept {
        if (table_.empty()) return std::nullopt;
        const std::uint64_t h = hash(id);
        for (std::size_t i = h & mask(); table_[i] != 0; i = (i + 1) & mask())
            if ((table_[i] >> 32) == (h >> 32) && ids_[(table_[i] & low) - 1] == id)
                return static_cast<std::size_t>((table_[i] & low) - 1);
        return std::nullopt;
    }

    /// Adds `id` at position size(); false (nothing changed) when it is there already.
    bool push_back(std::string_view id) {
        if (ids_.size() + 1 >= low) throw SessionError(ErrorCode::storage, "too many entries");
        if ((ids_.size() + 1) * 2 > table_.size()) grow((ids_.size() + 1) * 2);
        return place(id, hash(id));
    }

    /// Adds each of `ids` in turn as push_back does; false at the first one already there (the
    /// ones before it stay added). For many ids at once (a restored index): the table word of
    /// each is fetched from memory a few ids before it is placed, so that a table larger than
    /// the caches costs one miss at a time less than one per id.
    bool push_back_all(const std::vector<std::string_view>& ids) {
        if (ids_.size() + ids.size() >= low)
            throw SessionError(ErrorCode::storage, "too many entries");
        reserve(ids_.size() + ids.size());
        constexpr std::size_t ahead = 16;
        std::uint64_t hashes[ahead] = {};
        auto fetch = [&](std::size_t k) {
            hashes[k % ahead] = hash(ids[k]);
            __builtin_prefetch(&table_[hashes[k % ahead] & mask()]);
        };
        for (std::size_t k = 0; k < ids.size() && k < ahead; ++k) fetch(k);
        for (std::size_t k = 0; k < ids.size(); ++k) {
            const std::uint64_t h = hashes[k % ahead];
            if (k + ahead < ids.size()) fetch(k + ahead);
            if (!place(ids[k], h)) return false;
        }
        return true;
    }

    /// Takes the newest id away again. It was the last one placed (grow() places them in
    /// position order too), so no other id's probe run passes its word: emptying it is enough.
    void pop_back() noexcept {
        std::size_t i = hash(ids_.back()) & mask();
        while ((table_[i] & low) != ids_.size()) i = (i + 1) & mask();
        table_[i] = 0;
        ids_.pop_back();
    }

    void reserve(std::size_t n) {
        ids_.reserve(n);
        if (n * 2 > table_.size()) grow(n * 2);
    }

private:
    static constexpr std::uint64_t low = 0xFFFFFFFFULL;  // position + 1 in the low 32 bits

    static std::uint64_t hash(std::string_view id) noexcept {
        const std::uint64_t h = std::hash<std::string_view>{}(id);
        return (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
    }
    [[nodiscard]] std::size_t mask() const noexcept { return table_.size() - 1; }

    // Places `id` (hash `h`) at position size() in a table with room for it.
    bool place(std::string_view id, std::uint64_t h) {
        std::size_t i = h & mask();
        for (; table_[i] != 0; i = (i + 1) & mask())
            if ((table_[i] >> 32) == (h >> 32) && ids_[(table_[i] & low) - 1] == id) return false;
        ids_.emplace_back(id);
        table_[i] = (h & ~low) | ids_.size();
        return true;
    }

    void grow(std::size_t at_least) {
        std::size_t capacity = 16;
        while (capacity < at_least) capacity *= 2;
        dependent<std::vector<std::uint64_t>, T> table(capacity, 0);
        for (std::size_t pos = 0; pos < ids_.size(); ++pos) {
            const std::uint64_t h = hash(ids_[pos]);
            std::size_t i = h & (capacity - 1);
            while (table[i] != 0) i = (i + 1) & (capacity - 1);
            table[i] = (h & ~low) | (pos + 1);
        }
        table_ = std::move(table);
    }

    dependent<std::vector<std::string>, T> ids_;      // by position
    dependent<std::vector<std::uint64_t>, T> table_;  // 0: empty; else hash bits | position + 1
};

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
        return positions_.find(id);
    }

    [[nodiscard]] bool contains(std::string_view id) const {
        return positions_.find(id).has_value();
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
        if (!positions_.push_back(id_of(entry)))
            throw SessionError(ErrorCode::already_exists,
                               "entry id '" + id_of(entry) + "' already exists in the session",
                               ErrorLocation{.entry_id = id_of(entry)});
        try {
            const auto& parent = parent_id_of(entry);
            push_state(pos, parent ? std::optional<std::string_view>(*parent) : std::nullopt,
                       state_sets_of(entry));
        } catch (...) {
            positions_.pop_back();
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
        if (!positions_.push_back(id)) return false;
        try {
            push_state(pos, parent, state_sets_of(type, assistant_message));
        } catch (...) {
            positions_.pop_back();
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
    /// The same in what save() writes (positions are written in 32 bits).
    static constexpr std::uint32_t no_saved_position = std::numeric_limits<std::uint32_t>::max();

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
        const auto pos = positions_.find(*id);
        return pos ? state_[*pos] : StatePositions{};
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

    /// Appends the whole index to `out` (ByteWriter records: ids by position, state positions,
    /// entries by type, labels, name, leaf, stats), so that restore() can rebuild it without
    /// the entries. An index of 2^32 entries or more is not written (returns false).
    bool save(std::string& out) const {
        const std::size_t n = positions_.size();
        if (n >= no_saved_position) return false;
        ByteWriter w(out);
        w.put(static_cast<std::uint64_t>(n));
        for (std::size_t pos = 0; pos < n; ++pos) w.put_string(positions_.id_at(pos));
        auto saved = [](std::size_t pos) {
            return pos == no_position ? no_saved_position : static_cast<std::uint32_t>(pos);
        };
        for (const StatePositions& p : state_) {
            w.put(saved(p.thinking_level));
            w.put(saved(p.model));
            w.put(saved(p.active_tools));
        }
        w.put(static_cast<std::uint32_t>(by_type_.size()));
        for (const auto& [type, positions] : by_type_) {
            w.put_string(type);
            w.put(static_cast<std::uint32_t>(positions.size()));
            for (std::size_t pos : positions) w.put(static_cast<std::uint32_t>(pos));
        }
        w.put(static_cast<std::uint32_t>(labels_.size()));
        for (const auto& [id, label] : labels_) {
            w.put_string(id);
            w.put_string(label);
        }
        for (const auto* o : {&name_, &leaf_}) {
            w.put(static_cast<std::uint8_t>(o->has_value() ? 1 : 0));
            if (*o) w.put_string(**o);
        }
        w.put(static_cast<std::uint64_t>(stats_.message_count));
        w.put(stats_.cached_tokens);
        w.put(stats_.uncached_tokens);
        w.put(stats_.total_tokens);
        w.put(stats_.cost_total);
        return true;
    }

    /// Rebuilds an index from what save() wrote, reading from `in` (advanced past it); none
    /// when the record is malformed: short, a position out of range, an id twice or empty.
    static std::optional<BasicTreeIndex> restore(ByteReader& in) {
        std::uint64_t n = 0;
        if (!in.get(n) || n >= no_saved_position || n > in.left()) return std::nullopt;
        BasicTreeIndex index;
        index.reserve(static_cast<std::size_t>(n));
        dependent<std::vector<std::string_view>, T> ids;
        ids.reserve(static_cast<std::size_t>(n));
        std::string_view text;
        for (std::size_t pos = 0; pos < n; ++pos) {
            if (!in.get_string(text) || text.empty()) return std::nullopt;
            ids.push_back(text);
        }
        if (!index.positions_.push_back_all(ids)) return std::nullopt;
        auto position = [n](std::uint32_t saved, std::size_t& out) {
            if (saved == no_saved_position) {
                out = no_position;
                return true;
            }
            out = saved;
            return saved < n;
        };
        for (std::size_t pos = 0; pos < n; ++pos) {
            std::uint32_t t = 0, m = 0, a = 0;
            StatePositions p;
            if (!in.get(t) || !in.get(m) || !in.get(a) || !position(t, p.thinking_level) ||
                !position(m, p.model) || !position(a, p.active_tools))
                return std::nullopt;
            index.state_.push_back(p);
        }
        std::uint32_t count = 0;
        if (!in.get(count)) return std::nullopt;
        for (std::uint32_t i = 0; i < count; ++i) {
            std::uint32_t k = 0;
            if (!in.get_string(text) || !in.get(k) || k > n) return std::nullopt;
            auto& positions = index.by_type_[std::string(text)];
            positions.reserve(k);
            for (std::uint32_t j = 0; j < k; ++j) {
                std::uint32_t pos = 0;
                if (!in.get(pos) || pos >= n) return std::nullopt;
                positions.push_back(pos);
            }
        }
        if (!in.get(count)) return std::nullopt;
        for (std::uint32_t i = 0; i < count; ++i) {
            std::string_view label;
            if (!in.get_string(text) || !in.get_string(label)) return std::nullopt;
            index.labels_.insert_or_assign(std::string(text), std::string(label));
        }
        for (auto* o : {&index.name_, &index.leaf_}) {
            std::uint8_t has = 0;
            if (!in.get(has) || has > 1) return std::nullopt;
            if (has == 1) {
                if (!in.get_string(text)) return std::nullopt;
                *o = std::string(text);
            }
        }
        if (index.leaf_ && !index.contains(*index.leaf_)) return std::nullopt;
        std::uint64_t messages = 0;
        if (!in.get(messages) || !in.get(index.stats_.cached_tokens) ||
            !in.get(index.stats_.uncached_tokens) || !in.get(index.stats_.total_tokens) ||
            !in.get(index.stats_.cost_total))
            return std::nullopt;
        index.stats_.message_count = static_cast<std::size_t>(messages);
        return index;
    }

private:
    // Appends the state positions of the entry at `pos`: its parent's, overridden by what it sets.
    void push_state(std::size_t pos, std::optional<std::string_view> parent, StateSets sets) {
        StatePositions p;
        if (parent) {
            if (const auto at = positions_.find(*parent)) p = state_[*at];
        }
        if (sets.thinking_level) p.thinking_level = pos;
        if (sets.model) p.model = pos;
        if (sets.active_tools) p.active_tools = pos;
        state_.push_back(p);
    }

    IdTable<T> positions_;
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

#pragma once
// IndexedStorage: the backend-neutral half of a session storage. It keeps the header, the
// environment and a TreeIndex, and implements every SessionStorage expression over two hooks of
// the derived class, so that a new storage is its persistence and nothing else.

#include <agentcore/detail/codec_nesting.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/storage.hpp>
#include <agentcore/tree_index.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore {

/// A CRTP base that models SessionStorage over the persistence of `Derived`.
///
/// `Derived` provides (it may make them private and befriend IndexedStorage):
/// - `void persist(const EntryHandle& entry)`: stores the entry (durably, when the storage
///   promises that) before it returns; throws (`storage`, `locked`) and changes nothing on failure.
///   Called after the tree rules were checked; the entry gets the next append position.
/// - `EntryHandle load(std::size_t position) const`: the entry at that append position (it may
///   decode it, and cache it: entries are immutable).
/// - optionally `std::vector<EntryHandle> load_range(std::size_t first, std::size_t n) const`:
///   the entries at positions first .. first + n - 1 (all of them exist), as load would give
///   them one by one; for a storage that reads or decodes many at once faster (get_entries).
/// - optionally `void unpersist_last() noexcept`: undoes the newest persist, called when the
///   index could not record it (out of memory); a storage that cannot undo leaves it out.
/// - optionally `void check_writable() const`: throws (`storage`) when the storage takes no
///   appends (read-only, closed); called before anything else an append does.
/// - optionally `std::optional<std::string> leaf_parent(const std::optional<std::string>& target)
///   const`: the parent of the `leaf` entry set_leaf_id appends; without it, the current leaf.
///
/// Derived storages fill the index when they open stored entries (`mutable_index().record(...)`, or
/// `record_undecoded` for entries decoded on demand).
///
/// Complexity: leaf, labels, name, stats and lookups by id O(1); the path O(depth) loads.
template <class Derived, class Metadata = SessionHeader>
class IndexedStorage {
public:
    [[nodiscard]] const Metadata& metadata() const noexcept { return metadata_; }
    [[nodiscard]] const Environment& environment() const noexcept { return environment_; }

    [[nodiscard]] std::optional<std::string> get_leaf_id() const { return index_.leaf(); }

    /// Appends a `leaf` entry that moves the leaf to `target` (none: before the first entry).
    /// Throws not_found for an unknown target.
    template <class = void>
    void set_leaf_id(std::optional<std::string> target) {
        if (target && !index_.contains(*target))
            throw SessionError(ErrorCode::not_found, "entry '" + *target + "' not found",
                               ErrorLocation{.entry_id = *target});
        LeafEntry leaf;
        leaf.id = create_entry_id();
        if constexpr (requires(const Derived& d) { d.leaf_parent(target); })
            leaf.parent_id = self().leaf_parent(target);
        else
            leaf.parent_id = index_.leaf();
        leaf.timestamp = format_timestamp(environment_.now_ms());
        leaf.target_id = std::move(target);
        append_entry(std::move(leaf));
    }

    /// A fresh entry id, unique within this session.
    template <class = void>
    [[nodiscard]] std::string create_entry_id() const {
        return make_entry_id(environment_,
                             [this](const std::string& id) { return index_.contains(id); });
    }

    /// Appends an entry: the tree rules first (already_exists for a taken id, invalid_entry for a
    /// parent or leaf target that does not exist), then the derived storage persists it, then the
    /// index records it. Nothing changes when any step fails.
    template <class = void>
    void append_entry(SessionTreeEntry entry) {
        if constexpr (requires(const Derived& d) { d.check_writable(); }) self().check_writable();
        index_.check_append(entry);
        // A value nested deeper than max_json_depth is refused by every storage: its line could
        // not be read back.
        detail::check_entry_nesting(entry);
        auto handle = std::make_shared<const SessionTreeEntry>(std::move(entry));
        self().persist(handle);
        try {
            index_.record(*handle);
        } catch (...) {
            if constexpr (requires(Derived & d) { d.unpersist_last(); }) self().unpersist_last();
            throw;
        }
    }

    template <class = void>
    [[nodiscard]] EntryHandle get_entry(std::string_view id) const {
        auto pos = index_.position(id);
        return pos ? self().load(*pos) : nullptr;
    }

    template <class = void>
    [[nodiscard]] std::vector<EntryHandle> find_entries(std::string_view type) const {
        const auto& positions = index_.positions_of_type(type);
        detail::dependent<std::vector<EntryHandle>, Derived> out;
        out.reserve(positions.size());
        for (std::size_t p : positions) out.push_back(self().load(p));
        return out;
    }

    template <class = void>
    [[nodiscard]] std::optional<std::string> get_label(std::string_view id) const {
        return index_.label(id);
    }
    [[nodiscard]] std::optional<std::string> get_session_name() const { return index_.name(); }

    template <class = void>
    [[nodiscard]] std::vector<EntryHandle> get_path_to_root_or_compaction(
        std::optional<std::string_view> start) const {
        return detail::walk_to_root_or_compaction(
            start, index_.size(), [this](std::string_view id) { return get_entry(id); });
    }

    template <class = void>
    [[nodiscard]] std::vector<EntryHandle> get_entries(EntriesQuery query = {}) const {
        const std::size_t count = index_.size();
        if (query.after >= count) return {};
        const std::size_t n = std::min(query.limit, count - query.after);
        if constexpr (requires(const Derived& d) { d.load_range(query.after, n); }) {
            return self().load_range(query.after, n);
        } else {
            detail::dependent<std::vector<EntryHandle>, Derived> out;
            out.reserve(n);
            for (std::size_t i = query.after; i < query.after + n; ++i)
                out.push_back(self().load(i));
            return out;
        }
    }

    [[nodiscard]] SessionStats get_session_stats() const noexcept { return index_.stats(); }

    /// The entries the state of a context built at `leaf` comes from (SPEC §4.5). O(1).
    template <class = void>
    [[nodiscard]] StateEntries get_state_entries(std::optional<std::string_view> leaf) const {
        return index_.state_entries(leaf, [this](std::size_t pos) { return self().load(pos); });
    }
    [[nodiscard]] std::size_t entry_count() const noexcept { return index_.size(); }

    /// The bookkeeping of this session.
    [[nodiscard]] const TreeIndex& index() const noexcept { return index_; }

protected:
    explicit IndexedStorage(Metadata metadata = {}, Environment environment = Environment::system())
        : metadata_(std::move(metadata)), environment_(std::move(environment)) {}

    [[nodiscard]] TreeIndex& mutable_index() noexcept { return index_; }
    [[nodiscard]] Metadata& mutable_metadata() noexcept { return metadata_; }

private:
    [[nodiscard]] Derived& self() noexcept { return static_cast<Derived&>(*this); }
    template <class = void>
    [[nodiscard]] const Derived& self() const noexcept {
        return static_cast<const Derived&>(*this);
    }

    Metadata metadata_;
    Environment environment_;
    // Named through Derived: what is done with the index compiles only where a storage is used
    // (see detail/dependent.hpp).
    detail::dependent<TreeIndex, Derived> index_;
};

}  // namespace agentcore

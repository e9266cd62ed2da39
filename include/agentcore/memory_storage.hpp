#pragma once
// InMemorySessionStorage: a session kept in memory only — for tests, fixtures and short-lived
// sessions (SPEC §5).

#include <agentcore/detail/tree_index.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/storage.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace agentcore {

/// A session storage that keeps its entries in memory.
///
/// `Metadata` is the header type; an application may derive its own from SessionHeader.
/// Complexity: append amortised O(1), lookup by id O(1), path O(depth), stats O(1).
template <class Metadata = SessionHeader>
class InMemorySessionStorage {
public:
    /// An empty session with the given header, clock and randomness.
    explicit InMemorySessionStorage(Metadata metadata = {},
                                    Environment environment = Environment::system())
        : metadata_(std::move(metadata)), environment_(std::move(environment)) {}

    [[nodiscard]] const Metadata& metadata() const noexcept { return metadata_; }
    [[nodiscard]] const Environment& environment() const noexcept { return environment_; }

    [[nodiscard]] std::optional<std::string> get_leaf_id() const { return index_.leaf(); }

    /// Appends a `leaf` entry that moves the leaf to `target` (none: before the first entry).
    /// Throws not_found for an unknown target.
    void set_leaf_id(std::optional<std::string> target) {
        if (target && !index_.contains(*target))
            throw SessionError(ErrorCode::not_found, "entry '" + *target + "' not found");
        LeafEntry leaf;
        leaf.id = create_entry_id();
        leaf.parent_id = index_.leaf();
        leaf.timestamp = format_timestamp(environment_.now_ms());
        leaf.target_id = std::move(target);
        append_entry(std::move(leaf));
    }

    /// A fresh entry id, unique within this session.
    [[nodiscard]] std::string create_entry_id() const {
        return make_entry_id(environment_, [this](const std::string& id) { return index_.contains(id); });
    }

    /// Appends an entry. Throws already_exists for a taken id and invalid_entry for a parent (or
    /// leaf target) that does not exist; nothing changes then.
    void append_entry(SessionTreeEntry entry) {
        index_.check_append(entry);
        entries_.push_back(std::make_shared<const SessionTreeEntry>(std::move(entry)));
        try {
            index_.record(*entries_.back());
        } catch (...) {
            entries_.pop_back();  // all-or-nothing: an index that could not grow keeps no entry
            throw;
        }
    }

    [[nodiscard]] EntryHandle get_entry(std::string_view id) const {
        auto pos = index_.position(id);
        return pos ? entries_[*pos] : nullptr;
    }

    [[nodiscard]] std::vector<EntryHandle> find_entries(std::string_view type) const {
        const auto& positions = index_.positions_of_type(type);
        std::vector<EntryHandle> out;
        out.reserve(positions.size());
        for (std::size_t p : positions) out.push_back(entries_[p]);
        return out;
    }

    [[nodiscard]] std::optional<std::string> get_label(std::string_view id) const { return index_.label(id); }
    [[nodiscard]] std::optional<std::string> get_session_name() const { return index_.name(); }

    /// The entries the state of a context built at `leaf` comes from (SPEC §4.5). O(1).
    [[nodiscard]] StateEntries get_state_entries(std::optional<std::string_view> leaf) const {
        return index_.state_entries(leaf, [this](std::size_t pos) { return entries_[pos]; });
    }

    [[nodiscard]] std::vector<EntryHandle> get_path_to_root_or_compaction(
        std::optional<std::string_view> start) const {
        return detail::walk_to_root_or_compaction(start, entries_.size(),
                                                  [this](std::string_view id) { return get_entry(id); });
    }

    [[nodiscard]] std::vector<EntryHandle> get_entries(EntriesQuery query = {}) const {
        if (query.after >= entries_.size()) return {};
        const std::size_t n = std::min(query.limit, entries_.size() - query.after);
        const auto first = entries_.begin() + static_cast<std::ptrdiff_t>(query.after);
        return {first, first + static_cast<std::ptrdiff_t>(n)};
    }

    [[nodiscard]] SessionStats get_session_stats() const noexcept { return index_.stats(); }
    [[nodiscard]] std::size_t entry_count() const noexcept { return entries_.size(); }

    /// Every entry, in append order.
    [[nodiscard]] const std::vector<EntryHandle>& entries() const noexcept { return entries_; }

private:
    Metadata metadata_;
    Environment environment_;
    std::vector<EntryHandle> entries_;
    detail::TreeIndex index_;
};

static_assert(SessionStorage<InMemorySessionStorage<>>);
static_assert(has_state_entries<InMemorySessionStorage<>>);

}  // namespace agentcore

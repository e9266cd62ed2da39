#pragma once
// InMemorySessionStorage: a session kept in memory only — for tests, fixtures and short-lived
// sessions (SPEC §5).

#include <agentcore/detail/codec_nesting.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/indexed_storage.hpp>
#include <agentcore/storage.hpp>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace agentcore {

/// A session storage that keeps its entries in memory: IndexedStorage over a vector of handles.
///
/// `Metadata` is the header type; an application may derive its own from SessionHeader.
/// Complexity: append amortised O(1), lookup by id O(1), path O(depth), stats O(1).
template <class Metadata = SessionHeader>
class InMemorySessionStorage : public IndexedStorage<InMemorySessionStorage<Metadata>, Metadata> {
    using Base = IndexedStorage<InMemorySessionStorage<Metadata>, Metadata>;
    friend Base;

public:
    /// An empty session with the given header, clock and randomness.
    explicit InMemorySessionStorage(Metadata metadata = {},
                                    Environment environment = Environment::system())
        : Base(std::move(metadata), std::move(environment)) {
        if constexpr (std::is_same_v<Metadata, SessionHeader>)
            detail::check_header_nesting(this->metadata());
    }

    /// A copy of this session as it is now that refuses appends (`storage`); it shares the
    /// (immutable) entries. Complexity: O(entries) handle copies.
    [[nodiscard]] InMemorySessionStorage read_only_copy() const {
        InMemorySessionStorage copy = *this;
        copy.read_only_ = true;
        return copy;
    }

    [[nodiscard]] bool read_only() const noexcept { return read_only_; }

    /// Every entry, in append order.
    [[nodiscard]] const std::vector<EntryHandle>& entries() const noexcept { return entries_; }

private:
    void persist(const EntryHandle& entry) {
        if (read_only_)
            throw SessionError(ErrorCode::storage,
                               "session '" + this->metadata().id + "' is open read-only");
        entries_.push_back(entry);
    }
    void unpersist_last() noexcept { entries_.pop_back(); }
    [[nodiscard]] EntryHandle load(std::size_t position) const { return entries_[position]; }

    std::vector<EntryHandle> entries_;
    bool read_only_ = false;
};

static_assert(SessionStorage<InMemorySessionStorage<>>);
static_assert(has_state_entries<InMemorySessionStorage<>>);

}  // namespace agentcore

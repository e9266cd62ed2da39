#pragma once
// What a fork copies (SPEC §4.9), shared by every repository.

#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/storage.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace agentcore {

/// Where a fork ends relative to its target entry.
enum class ForkPosition {
    before,  ///< up to the target's parent; the target must be a user message
    at,      ///< up to and including the target
};

/// What to fork and how to describe the new session.
struct ForkOptions {
    std::optional<std::string> entry_id{};  ///< none or empty: the whole tree
    ForkPosition position = ForkPosition::before;
    std::optional<std::string> session_id{};  ///< the new session's id (default: a UUIDv7)
    std::optional<std::string> cwd{};         ///< default: the source's
    std::optional<Json> metadata{};           ///< default: the source's
};

/// The entries a fork copies (SPEC §4.9): every entry when no target is given; otherwise the
/// path (SPEC §4.4) that ends at the target (`at`) or at its parent (`before`, which requires a
/// user message). Unknown target, or `before` on anything but a user message:
/// invalid_fork_target.
template <SessionStorage S>
std::vector<EntryHandle> get_entries_to_fork(const S& storage, const ForkOptions& options) {
    if (!options.entry_id || options.entry_id->empty()) return storage.get_entries(EntriesQuery{});
    EntryHandle target = storage.get_entry(*options.entry_id);
    if (!target)
        throw SessionError(ErrorCode::invalid_fork_target,
                           "fork target '" + *options.entry_id + "' not found");
    if (options.position == ForkPosition::at)
        return storage.get_path_to_root_or_compaction(std::string_view(*options.entry_id));
    const AgentMessage* message = message_of(*target);
    if (!message || !std::holds_alternative<UserMessage>(*message))
        throw SessionError(ErrorCode::invalid_fork_target,
                           "fork target '" + *options.entry_id + "' is a " +
                               std::string(message ? role_of(*message) : type_of(*target)) +
                               ", not a user message; only a user message can be forked before");
    const auto& parent = parent_id_of(*target);
    return storage.get_path_to_root_or_compaction(parent ? std::optional<std::string_view>(*parent)
                                                         : std::nullopt);
}

/// The copies a new session receives: the same ids; an entry whose parent was not copied becomes
/// a root, and a copied `leaf` entry whose target was not copied points before the first entry.
/// A `label` entry whose target was not copied is left out (it would label nothing); an entry
/// whose parent was such a label takes the label's parent instead. An older compaction inside the
/// copied kept range whose first kept entry was not copied loses that pointer (as pi's v1 upgrade
/// drops a pointer to nothing): its summary then stands for what came before it, and the copy
/// names no entry it does not hold.
template <class Entry = SessionTreeEntry>
std::vector<Entry> prepare_fork_entries(const std::vector<EntryHandle>& entries) {
    detail::dependent<std::unordered_set<std::string_view>, Entry> copied;
    // id → its parent
    detail::dependent<std::unordered_map<std::string_view, std::optional<std::string>>, Entry>
        left_out;
    std::vector<Entry> out;
    out.reserve(entries.size());
    for (const auto& handle : entries) {
        Entry copy = *handle;
        EntryBase& base = base_of(copy);
        if (base.parent_id) {
            if (auto it = left_out.find(*base.parent_id); it != left_out.end())
                base.parent_id = it->second;
        }
        if (const auto* label = std::get_if<LabelEntry>(&copy);
            label && copied.count(label->target_id) == 0) {
            left_out.emplace(id_of(*handle), base.parent_id);
            continue;
        }
        if (base.parent_id && copied.count(*base.parent_id) == 0) base.parent_id.reset();
        if (auto* leaf = std::get_if<LeafEntry>(&copy))
            if (leaf->target_id && copied.count(*leaf->target_id) == 0) leaf->target_id.reset();
        if (auto* compaction = std::get_if<CompactionEntry>(&copy))
            if (compaction->first_kept_entry_id &&
                copied.count(*compaction->first_kept_entry_id) == 0)
                compaction->first_kept_entry_id.reset();
        copied.insert(id_of(*handle));
        out.push_back(std::move(copy));
    }
    return out;
}

}  // namespace agentcore

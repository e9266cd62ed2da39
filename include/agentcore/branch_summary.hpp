#pragma once
// Branch summaries (SPEC §8): when the conversation moves to another point of the tree, what the
// abandoned branch did can be summarised by the application's callback and recorded with the
// move, so that the model keeps what it learned there.
//
// Decisions:
// - The abandoned branch is every entry from the old leaf back to the common ancestor with the
//   target (exclusive), walking parents to the root — compactions do not stop it: their summaries
//   are part of what the branch did.
// - Tool results are left out of the messages to summarise (the tool call says what was done;
//   results are long). Files are collected from every entry of the branch, budget or not.
// - move_to_with_summary moves nothing when the summariser cancels (returns none) or throws: the
//   caller asked for a move *with* a summary and can retry or move without one. When there is
//   nothing to summarise, or the summary comes back empty, it moves without a summary entry.

#include <agentcore/compaction.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/session_ops.hpp>
#include <agentcore/storage.hpp>
#include <agentcore/tokens.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentcore {

namespace detail {

// The entry and all its ancestors up to the root, newest first (not stopping at compactions).
// Unknown start: not_found; a missing parent or a chain longer than the session: invalid_session.
template <SessionStorage S>
std::vector<EntryHandle> ancestry(const Session<S>& session, std::string_view start) {
    const auto& storage = session.storage();
    std::vector<EntryHandle> chain;
    EntryHandle current = storage.get_entry(start);
    if (!current)
        throw SessionError(ErrorCode::not_found, "entry '" + std::string(start) + "' not found");
    const std::size_t bound = storage.entry_count();
    while (current) {
        if (chain.size() >= bound)
            throw SessionError(
                ErrorCode::invalid_session,
                "parent chain from entry '" + std::string(start) + "' is longer than the session");
        chain.push_back(current);
        const auto& parent = parent_id_of(*current);
        if (!parent) break;
        EntryHandle next = storage.get_entry(*parent);
        if (!next)
            throw SessionError(ErrorCode::invalid_session, "entry '" + id_of(*current) +
                                                               "' names parent '" + *parent +
                                                               "', which does not exist");
        current = std::move(next);
    }
    return chain;
}

}  // namespace detail

/// The entries of the branch abandoned by moving from `old_leaf` to `target`: from the old leaf
/// back to the newest entry that is also an ancestor of the target (or the target itself),
/// exclusive, oldest first. No old leaf, or moving forward along the branch: empty. No target
/// (before the first entry): the whole branch of the old leaf.
///
/// Throws not_found for an unknown old leaf or target.
/// Complexity: O(depth of both).
/// Example: a → b → c and a → d; from c to d: [b, c].
template <SessionStorage S>
std::vector<EntryHandle> collect_entries_for_branch_summary(
    const Session<S>& session, std::optional<std::string_view> old_leaf,
    std::optional<std::string_view> target) {
    detail::dependent<std::unordered_set<std::string_view>, S> target_side;
    detail::dependent<std::vector<EntryHandle>, S> target_chain;
    if (target) {
        target_chain = detail::ancestry(session, *target);
        for (const auto& e : target_chain) target_side.insert(id_of(*e));
    }
    if (!old_leaf) return {};
    detail::dependent<std::vector<EntryHandle>, S> abandoned;
    for (auto& e : detail::ancestry(session, *old_leaf)) {
        if (target_side.count(id_of(*e)) != 0) break;
        abandoned.push_back(std::move(e));
    }
    return {abandoned.rbegin(), abandoned.rend()};
}

/// What a branch summary is made from.
struct BranchSummaryPreparation {
    std::vector<MessageHandle> messages;  ///< oldest first
    FileLists files;
    std::int64_t total_tokens = 0;  ///< estimate_tokens of `messages`
};

/// The messages of abandoned entries (oldest first) that fit a token budget, and the files the
/// branch touched.
///
/// Messages are taken newest first while their estimates fit `token_budget` (0: no limit); the
/// first that does not fit ends the walk, except that a summary (of a compaction or an earlier
/// branch summary) is still taken when less than 90% of the budget is used, as it stands for
/// much more. Entries give: a message entry its message (tool results are left out), a custom
/// message entry a custom message, a compaction its summary, a branch summary its summary when
/// not empty. Files: the read/write/edit tool calls of every entry, and the details of branch
/// summaries and compactions not written by a hook.
///
/// Complexity: O(entries).
template <class T = void>
BranchSummaryPreparation prepare_branch_summary(
    const detail::dependent<std::vector<EntryHandle>, T>& entries, std::int64_t token_budget = 0) {
    detail::dependent<BranchSummaryPreparation, T> out;
    detail::dependent<FileTracker, T> files;
    for (const auto& handle : entries) {
        const detail::dependent<SessionTreeEntry, T>& e = *handle;
        if (const auto* m = message_of(e))
            files.add_message(*m);
        else if (const auto* b = std::get_if<BranchSummaryEntry>(&e); b && !b->from_hook)
            files.add_details(b->details);
        else if (const auto* c = std::get_if<CompactionEntry>(&e); c && !c->from_hook)
            files.add_details(c->details);
    }
    out.files = files.lists();

    std::vector<detail::dependent<MessageHandle, T>> newest_first;
    for (std::size_t i = entries.size(); i-- > 0;) {
        const EntryHandle& handle = entries[i];
        const detail::dependent<SessionTreeEntry, T>& e = *handle;
        detail::dependent<MessageHandle, T> message;
        bool is_summary = false;
        if (const auto* m = message_of(e)) {
            if (!std::holds_alternative<ToolResultMessage>(*m))
                message = detail::alias_message(handle, *m);
        } else if (const auto* c = std::get_if<CustomMessageEntry>(&e)) {
            message = std::make_shared<const detail::dependent<AgentMessage, T>>(CustomMessage{
                c->custom_type, c->content, c->display, c->details, detail::entry_time_ms(*c), {}});
        } else if (const auto* b = std::get_if<BranchSummaryEntry>(&e)) {
            if (!b->summary.empty())
                message = std::make_shared<const detail::dependent<AgentMessage, T>>(
                    BranchSummaryMessage{b->summary, b->from_id, detail::entry_time_ms(*b), {}});
            is_summary = true;
        } else if (const auto* k = std::get_if<CompactionEntry>(&e)) {
            message =
                std::make_shared<const detail::dependent<AgentMessage, T>>(CompactionSummaryMessage{
                    k->summary, k->tokens_before, detail::entry_time_ms(*k), {}});
            is_summary = true;
        }
        if (!message) continue;
        const std::int64_t tokens = estimate_tokens(*message);
        if (token_budget > 0 && out.total_tokens + tokens > token_budget) {
            if (is_summary && out.total_tokens * 10 < token_budget * 9) {
                newest_first.push_back(std::move(message));
                out.total_tokens += tokens;
            }
            break;
        }
        newest_first.push_back(std::move(message));
        out.total_tokens += tokens;
    }
    out.messages.assign(newest_first.rbegin(), newest_first.rend());
    return out;
}

/// What the application's branch summariser receives.
struct BranchSummaryRequest {
    std::vector<EntryHandle> entries;     ///< the abandoned branch, oldest first
    std::vector<MessageHandle> messages;  ///< prepare_branch_summary's messages
    std::string conversation_text;        ///< serialize_conversation(messages)
    FileLists files;
    std::optional<std::string> from_leaf;  ///< the leaf being left
    std::optional<std::string> target;     ///< where the conversation goes
};

/// What move_to_with_summary did.
struct BranchMoveResult {
    bool moved = false;  ///< false: the summariser cancelled
    std::optional<std::string>
        summary_entry_id;  ///< the branch summary entry, when one was written
};

/// Options of move_to_with_summary.
struct BranchSummaryOptions {
    std::int64_t token_budget = 0;  ///< for prepare_branch_summary; 0: no limit
    std::size_t max_tool_result_chars = 2000;
};

/// Moves to `target` (none: before the first entry) with a summary of the branch being left
/// (SPEC §4.3, §8): collects the abandoned entries, prepares them within the budget, calls the
/// summariser, then move_to with a BranchSummaryInput (the summary, the summariser's usage,
/// details `{"read_files":[...],"modified_files":[...]}`).
///
/// Unknown target: not_found, the summariser is not called. Nothing to summarise (no messages in
/// the abandoned branch) or an empty summary: a plain move_to, no summary entry. A summariser
/// that returns none (cancelled): nothing is written and `moved` is false; one that throws:
/// nothing is written and the exception propagates.
template <SessionStorage S, class Summarizer>
requires summarizer_like<Summarizer, BranchSummaryRequest> BranchMoveResult
move_to_with_summary(Session<S>& session, std::optional<std::string> target,
                     Summarizer&& summarizer, const BranchSummaryOptions& options = {}) {
    if (target) detail::require_entry(session, *target);
    const std::optional<std::string> old_leaf = get_leaf_id(session);
    BranchSummaryRequest request;
    request.entries = collect_entries_for_branch_summary(
        session, old_leaf ? std::optional<std::string_view>(*old_leaf) : std::nullopt,
        target ? std::optional<std::string_view>(*target) : std::nullopt);
    BranchSummaryPreparation prep = prepare_branch_summary(request.entries, options.token_budget);
    if (prep.messages.empty()) {
        move_to(session, std::move(target));
        return {true, std::nullopt};
    }
    request.messages = std::move(prep.messages);
    request.conversation_text =
        serialize_conversation(request.messages, options.max_tool_result_chars);
    request.files = prep.files;
    request.from_leaf = old_leaf;
    request.target = target;
    std::optional<SummaryResult> result = std::invoke(summarizer, std::as_const(request));
    if (!result) return {false, std::nullopt};
    if (result->summary.empty()) {
        move_to(session, std::move(target));
        return {true, std::nullopt};
    }
    auto id = move_to(session, std::move(target),
                      BranchSummaryInput{std::move(result->summary), file_details(prep.files),
                                         std::move(result->usage), false});
    return {true, std::move(id)};
}

}  // namespace agentcore

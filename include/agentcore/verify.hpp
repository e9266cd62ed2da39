#pragma once
// Checking a whole session: the tree's integrity and the tool-call pairing (SPEC §2.3, §4, §8).
//
// A storage built by this library cannot produce most of these issues; a storage over a file
// that was edited by hand, written by another program or opened leniently can. verify reads
// everything and changes nothing.

#include <agentcore/context.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/session_ops.hpp>
#include <agentcore/storage.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentcore {

/// What verify found wrong.
enum class IssueKind {
    duplicate_id,          ///< a second entry with an id already taken
    dangling_parent,       ///< parent_id names no entry
    parent_after_child,    ///< the parent comes later in append order (or is the entry itself): a
                           ///< cycle is possible
    label_target_missing,  ///< a label on an entry that does not exist
    leaf_target_missing,   ///< a leaf entry that moves to an entry that does not exist
    first_kept_not_ancestor,     ///< a compaction whose first kept entry is missing or not its
                                 ///< ancestor
    orphan_tool_result,          ///< a tool result none of whose ancestors made its tool call
    context_orphan_tool_result,  ///< a tool result that a branch's context drops (its call was
                                 ///< compacted away)
};

/// The stable spelling of an issue kind ("duplicate_id", ...).
constexpr std::string_view to_string(IssueKind kind) noexcept {
    switch (kind) {
        case IssueKind::duplicate_id: return "duplicate_id";
        case IssueKind::dangling_parent: return "dangling_parent";
        case IssueKind::parent_after_child: return "parent_after_child";
        case IssueKind::label_target_missing: return "label_target_missing";
        case IssueKind::leaf_target_missing: return "leaf_target_missing";
        case IssueKind::first_kept_not_ancestor: return "first_kept_not_ancestor";
        case IssueKind::orphan_tool_result: return "orphan_tool_result";
        case IssueKind::context_orphan_tool_result: return "context_orphan_tool_result";
    }
    return "unknown";
}

/// One issue: its kind, the entry it concerns, and a detail naming the other ids involved (never
/// the conversation's text).
struct VerifyIssue {
    IssueKind kind = IssueKind::duplicate_id;
    std::string entry_id;
    std::string detail;
};

/// What verify returns.
struct VerifyReport {
    std::vector<VerifyIssue> issues;  ///< in append order of the entries concerned, by check
    std::size_t entries_checked = 0;

    [[nodiscard]] bool ok() const noexcept { return issues.empty(); }

    /// How many issues of one kind.
    template <class = void>
    [[nodiscard]] std::size_t count(IssueKind kind) const noexcept {
        std::size_t n = 0;
        for (const auto& i : issues) n += i.kind == kind ? 1 : 0;
        return n;
    }
};

/// Checks a list of entries in append order (as a storage's get_entries returns them):
/// - every id is unique (duplicate_id names each later copy);
/// - every parent exists (dangling_parent) and comes earlier (parent_after_child);
/// - labels and leaf entries name existing entries;
/// - a compaction's first kept entry is one of its ancestors;
/// - per entry's ancestry: a tool result has an ancestor assistant message with its tool call
///   (orphan_tool_result), whatever compactions lie between;
/// - per branch: the context built from each tip of the tree (an entry with no children but
///   leaf entries) with `options` keeps every tool result on it; one it drops because a
///   compaction or retained tail cut its call away is context_orphan_tool_result (once per entry,
///   and not for entries that are already orphan_tool_result; a result inside a retained tail is
///   reported on its compaction).
/// Structure issues make an entry count as a root for the later checks.
///
/// Complexity: O(n) for the tree checks and, without entry transforms in `options`, for the
/// context check too — one walk over the tree that visits each entry once, plus one path walk
/// and context build per compaction (from the compaction to its first kept entry, or to the
/// root when it keeps none). With entry transforms (which may rewrite a whole path) it builds
/// the context of every tip: O(tips × depth).
template <class T = void>
VerifyReport verify_entries(const detail::dependent<std::vector<EntryHandle>, T>& entries,
                            const ContextBuildOptions& options = {}) {
    detail::dependent<VerifyReport, T> report;
    report.entries_checked = entries.size();
    const std::size_t n = entries.size();
    auto issue = [&](IssueKind kind, const std::string& id, std::string detail) {
        report.issues.push_back(VerifyIssue{kind, id, std::move(detail)});
    };

    detail::dependent<std::unordered_map<std::string_view, std::size_t>, T> position;
    position.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string& id = id_of(*entries[i]);
        auto [it, inserted] = position.emplace(id, i);
        if (!inserted)
            issue(IssueKind::duplicate_id, id,
                  "entries " + std::to_string(it->second + 1) + " and " + std::to_string(i + 1) +
                      " share the id");
    }
    auto find = [&](std::string_view id) -> std::optional<std::size_t> {
        auto it = position.find(id);
        return it == position.end() ? std::nullopt : std::optional<std::size_t>(it->second);
    };

    // The tree as positions: parent[i] only when it exists and comes earlier.
    std::vector<detail::dependent<std::optional<std::size_t>, T>> parent(n);
    for (std::size_t i = 0; i < n; ++i) {
        const SessionTreeEntry& e = *entries[i];
        const std::string& id = id_of(e);
        if (const auto& p = parent_id_of(e)) {
            auto pos = find(*p);
            if (!pos)
                issue(IssueKind::dangling_parent, id, "parent '" + *p + "' does not exist");
            else if (*pos >= i)
                issue(IssueKind::parent_after_child, id, "parent '" + *p + "' is not earlier");
            else
                parent[i] = pos;
        }
        if (const auto* l = std::get_if<LabelEntry>(&e); l && !find(l->target_id))
            issue(IssueKind::label_target_missing, id,
                  "labels '" + l->target_id + "', which does not exist");
        if (const auto* l = std::get_if<LeafEntry>(&e); l && l->target_id && !find(*l->target_id))
            issue(IssueKind::leaf_target_missing, id,
                  "moves to '" + *l->target_id + "', which does not exist");
    }

    for (std::size_t i = 0; i < n; ++i) {
        const auto* c = std::get_if<CompactionEntry>(entries[i].get());
        if (!c || !c->first_kept_entry_id) continue;
        auto target = find(*c->first_kept_entry_id);
        bool ancestor = false;
        for (auto p = parent[i]; p && target && !ancestor; p = parent[*p]) ancestor = *p == *target;
        if (!ancestor)
            issue(IssueKind::first_kept_not_ancestor, id_of(*c),
                  "first kept entry '" + *c->first_kept_entry_id +
                      (target ? "' is not an ancestor" : "' does not exist"));
    }

    // Orphans by ancestry: a depth-first walk that keeps the tool call ids of the current chain.
    detail::dependent<std::vector<std::vector<std::size_t>>, T> children(n);
    detail::dependent<std::vector<std::size_t>, T> roots;
    for (std::size_t i = 0; i < n; ++i) {
        if (parent[i])
            children[*parent[i]].push_back(i);
        else
            roots.push_back(i);
    }
    detail::dependent<std::unordered_set<std::size_t>, T> orphans;
    detail::dependent<std::unordered_map<std::string_view, std::size_t>, T> open_calls;
    auto calls_of = [&](std::size_t i) -> const AssistantMessage* {
        const AgentMessage* m = message_of(*entries[i]);
        return m ? std::get_if<AssistantMessage>(m) : nullptr;
    };
    auto change_calls = [&](std::size_t i, bool add) {
        if (const auto* a = calls_of(i))
            for (const auto& block : a->content)
                if (const auto* call = std::get_if<ToolCallContent>(&block)) {
                    if (add)
                        ++open_calls[call->id];
                    else if (--open_calls[call->id] == 0)
                        open_calls.erase(call->id);
                }
    };
    for (std::size_t root : roots) {
        detail::dependent<std::vector<std::pair<std::size_t, std::size_t>>, T> stack{{root, 0}};
        if (const AgentMessage* m = message_of(*entries[root]))
            if (const auto* r = std::get_if<ToolResultMessage>(m);
                r && open_calls.count(r->tool_call_id) == 0)
                orphans.insert(root);
        change_calls(root, true);
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            if (next == children[node].size()) {
                change_calls(node, false);
                stack.pop_back();
                continue;
            }
            const std::size_t child = children[node][next++];
            if (const AgentMessage* m = message_of(*entries[child]))
                if (const auto* r = std::get_if<ToolResultMessage>(m);
                    r && open_calls.count(r->tool_call_id) == 0)
                    orphans.insert(child);
            change_calls(child, true);
            stack.emplace_back(child, 0);
        }
    }
    for (std::size_t i = 0; i < n; ++i)
        if (orphans.count(i) != 0)
            issue(IssueKind::orphan_tool_result, id_of(*entries[i]),
                  "no ancestor made tool call '" +
                      std::get<ToolResultMessage>(*message_of(*entries[i])).tool_call_id + "'");

    // Orphans by context: what the context of each tip (an entry with no children but leaf
    // entries) drops, mapped back to the entries that hold the dropped results.
    detail::dependent<std::unordered_map<const AgentMessage*, std::size_t>, T> owner;
    for (std::size_t i = 0; i < n; ++i) {
        if (const AgentMessage* m = message_of(*entries[i]))
            owner.emplace(m, i);
        else if (const auto* c = std::get_if<CompactionEntry>(entries[i].get());
                 c && c->retained_tail)
            for (const auto& tail_message : *c->retained_tail) owner.emplace(&tail_message, i);
    }
    detail::dependent<std::vector<bool>, T> has_child(n, false);
    for (std::size_t i = 0; i < n; ++i)
        if (parent[i] && !std::holds_alternative<LeafEntry>(*entries[i]))
            has_child[*parent[i]] = true;
    auto is_tip = [&](std::size_t i) {
        return !has_child[i] && !std::holds_alternative<LeafEntry>(*entries[i]) &&
               position.at(id_of(*entries[i])) == i;
    };
    auto lookup = [&](std::string_view id) -> EntryHandle {
        auto pos = find(id);
        return pos ? entries[*pos] : nullptr;
    };
    // The first tip (in append order) whose context drops each result, and the call it lacks.
    detail::dependent<std::unordered_map<std::size_t, std::pair<std::size_t, std::string>>, T>
        context_orphans;
    auto dropped_in = [&](std::size_t tip, const std::vector<DroppedMessage>& dropped) {
        for (const auto& d : dropped) {
            if (d.reason != DropReason::orphan_tool_result) continue;
            auto it = owner.find(d.message.get());
            if (it == owner.end() || orphans.count(it->second) != 0) continue;
            auto [at, inserted] =
                context_orphans.emplace(it->second, std::make_pair(tip, d.tool_call_id));
            if (!inserted && tip < at->second.first) at->second = {tip, d.tool_call_id};
        }
    };

    if (!options.entry_transforms.empty()) {
        // A transform may rewrite a whole path: one context build per tip, O(tips x depth).
        for (std::size_t i = 0; i < n; ++i) {
            if (!is_tip(i)) continue;
            detail::dependent<std::vector<EntryHandle>, T> path;
            try {
                path = detail::walk_to_root_or_compaction(std::string_view(id_of(*entries[i])), n,
                                                          lookup);
            } catch (const SessionError&) {
                continue;  // a broken chain, reported above
            }
            dropped_in(i, build_session_context(path, options).dropped);
        }
    } else {
        // Without transforms a tip's context is its newest compaction's own context (summary,
        // kept entries or retained tail) followed by the entries after that compaction, or, with no
        // compaction, its path from the root; whether a result keeps its place depends only on
        // what comes before it. So one depth-first walk checks every entry once against the tool
        // calls of the context so far, and builds each compaction's context once:
        // O(n + the compactions' contexts).
        //
        // first_tip[i]: the first tip whose context holds entry i after its newest compaction (a
        // tip below i with no compaction between them), none when no context does.
        detail::dependent<std::vector<std::optional<std::size_t>>, T> first_tip(n);
        for (std::size_t i = n; i-- > 0;) {
            if (is_tip(i)) first_tip[i] = i;
            if (!first_tip[i] || !parent[i] || std::holds_alternative<CompactionEntry>(*entries[i]))
                continue;
            auto& up = first_tip[*parent[i]];
            if (!up || *first_tip[i] < *up) up = first_tip[i];
        }
        ContextBuildOptions pairing_only = options;
        pairing_only.provider_ready = false;  // trailing calls are trimmed only at a tip's end

        // The context so far: its entries (projectors see them), the tool calls made in it, and
        // whether it could be built at all (a compaction on a broken chain has no context).
        detail::dependent<std::vector<EntryHandle>, T> context_entries;
        detail::dependent<std::unordered_map<std::string_view, std::size_t>, T> calls;
        bool broken = false;
        struct Frame {
            std::size_t node = 0;
            std::size_t next = 0;
            std::vector<MessageHandle>
                messages;  ///< what the node added (keeps `calls`' views alive)
            // A compaction replaces the context; what it replaced comes back when its subtree ends.
            std::vector<EntryHandle> saved_entries;
            std::unordered_map<std::string_view, std::size_t> saved_calls;
            bool saved_broken = false;
        };
        auto add_calls = [&](const AgentMessage& m, int delta) {
            if (const auto* a = std::get_if<AssistantMessage>(&m))
                for (const auto& block : a->content)
                    if (const auto* call = std::get_if<ToolCallContent>(&block)) {
                        if (delta > 0)
                            ++calls[call->id];
                        else if (--calls[call->id] == 0)
                            calls.erase(call->id);
                    }
        };
        auto enter = [&](std::size_t i) {
            Frame frame;
            frame.node = i;
            if (std::holds_alternative<CompactionEntry>(*entries[i])) {
                frame.saved_entries = std::move(context_entries);
                frame.saved_calls = std::move(calls);
                frame.saved_broken = broken;
                context_entries.clear();
                calls.clear();
                broken = false;
                try {
                    context_entries =
                        build_context_entries(detail::walk_to_root_or_compaction(
                                                  std::string_view(id_of(*entries[i])), n, lookup),
                                              options);
                } catch (const SessionError&) {
                    broken = true;  // a broken chain, reported above
                }
                for (std::size_t k = 0; k < context_entries.size(); ++k)
                    detail::append_context_messages(context_entries[k], k, context_entries,
                                                    pairing_only, frame.messages);
                std::vector<DroppedMessage> dropped;
                enforce_tool_pairing(frame.messages, dropped);
                if (first_tip[i]) dropped_in(*first_tip[i], dropped);
                for (const auto& m : frame.messages) add_calls(*m, 1);
                return frame;
            }
            context_entries.push_back(entries[i]);
            detail::append_context_messages(entries[i], context_entries.size() - 1, context_entries,
                                            pairing_only, frame.messages);
            for (const auto& m : frame.messages) {
                const auto* r = std::get_if<ToolResultMessage>(m.get());
                if (r && calls.count(r->tool_call_id) == 0 && !broken && first_tip[i])
                    dropped_in(*first_tip[i], {DroppedMessage{DropReason::orphan_tool_result,
                                                              r->tool_call_id, m, true}});
                add_calls(*m, 1);
            }
            return frame;
        };
        auto leave = [&](Frame& frame) {
            if (std::holds_alternative<CompactionEntry>(*entries[frame.node])) {
                context_entries = std::move(frame.saved_entries);
                calls = std::move(frame.saved_calls);
                broken = frame.saved_broken;
                return;
            }
            for (const auto& m : frame.messages) add_calls(*m, -1);
            context_entries.pop_back();
        };
        std::vector<Frame> stack;
        for (std::size_t root : roots) {
            if (position.at(id_of(*entries[root])) != root) continue;
            // An entry whose parent is missing or later has no context of its own.
            broken = parent_id_of(*entries[root]).has_value();
            stack.push_back(enter(root));
            while (!stack.empty()) {
                Frame& top = stack.back();
                if (top.next == children[top.node].size()) {
                    leave(top);
                    stack.pop_back();
                    continue;
                }
                const std::size_t child = children[top.node][top.next++];
                if (position.at(id_of(*entries[child])) != child)
                    continue;  // a duplicate: never reached by id
                stack.push_back(enter(child));
            }
            context_entries.clear();
            calls.clear();
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        auto it = context_orphans.find(i);
        if (it == context_orphans.end()) continue;
        const bool in_tail = std::holds_alternative<CompactionEntry>(*entries[i]);
        issue(IssueKind::context_orphan_tool_result, id_of(*entries[i]),
              std::string(in_tail ? "a tool result of the retained tail: " : "") +
                  "the context of branch '" + id_of(*entries[it->second.first]) +
                  "' lacks tool call '" + it->second.second + "'");
    }
    return report;
}

/// Checks every entry of a session (see verify_entries), building contexts with the session's
/// options.
template <SessionStorage S>
VerifyReport verify(const Session<S>& session) {
    return verify_entries(session.storage().get_entries(EntriesQuery{}),
                          session.context_build_options());
}

}  // namespace agentcore

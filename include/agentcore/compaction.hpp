#pragma once
// Compaction helpers (SPEC §8): when to compact, where to cut, what to summarise, and appending
// the compaction once the application's callback has written the summary.
//
// The flow of an agent loop:
//
//     auto ctx = build_context(session);
//     if (should_compact(estimate_context_tokens(ctx.messages).tokens, window, settings))
//         if (auto prep = prepare_compaction(session, settings))
//             compact(session, *prep, [&](const SummaryRequest& r) { return my_llm_summary(r); });
//
// Decisions (where pi's coding agent, which implements the same design, was the reference):
// - The compaction records `first_kept_entry_id` and, by default, no retained tail: the kept
//   entries stay entries, so the settings changes, labels and projected custom entries among them
//   keep working, a file stores no second copy of recent messages, and pi reads the file as its
//   own. `CompactOptions::retain_tail` also writes the kept messages as the retained tail: the
//   compaction is then self-contained (the path walk stops at it, SPEC §4.4, and a fork that
//   copies the path from it on drops its pointer to the first kept entry, which it did not
//   copy). It still names the first kept entry, which readers of retained tails pass over: pi
//   0.73 does not read retained tails, and through that pointer it builds the same context from
//   a pi file. The preparation always computes both.
// - The cut never falls before the previous compaction: its summary goes into the new summary
//   (`previous_summary`) and what it kept — first kept entries or retained tail — is summarised
//   again, so a context holds at most one compaction summary, at its start.
// - The cut never falls between a tool call and its result (SPEC §8), so a compaction never
//   leaves an orphan tool result behind.

#include <agentcore/context.hpp>
#include <agentcore/detail/dependent.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/messages.hpp>
#include <agentcore/session_ops.hpp>
#include <agentcore/storage.hpp>
#include <agentcore/tokens.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace agentcore {

// ---------------------------------------------------------------------------------------------
// When

/// When to compact and how much to keep.
struct CompactionSettings {
    bool enabled = true;
    std::int64_t reserve_tokens = 16384;      ///< room left for the next prompt and reply
    std::int64_t keep_recent_tokens = 20000;  ///< about this much of the newest history is kept
};

/// True when compaction is enabled and the context no longer leaves `reserve_tokens` free:
/// `context_tokens > context_window - reserve_tokens`.
/// Example: window 200000, reserve 16384 → false at 183616, true at 183617.
constexpr bool should_compact(std::int64_t context_tokens, std::int64_t context_window,
                              const CompactionSettings& settings = {}) noexcept {
    return settings.enabled && context_tokens > context_window - settings.reserve_tokens;
}

// ---------------------------------------------------------------------------------------------
// Files the conversation touched

/// Files read and modified, sorted, each once; a file both read and modified is only modified.
struct FileLists {
    std::vector<std::string> read_files;
    std::vector<std::string> modified_files;
    friend bool operator==(const FileLists&, const FileLists&) = default;
};

/// Collects the files of `read`, `write` and `edit` tool calls (their string `path` argument)
/// and of earlier summaries' details.
class FileTracker {
public:
    /// Adds the files of an assistant message's tool calls; other messages add nothing.
    template <class T = void>
    void add_message(const detail::dependent<AgentMessage, T>& message) {
        const auto* a = std::get_if<AssistantMessage>(&message);
        if (!a) return;
        for (const auto& block : a->content) {
            const auto* call = std::get_if<ToolCallContent>(&block);
            if (!call || !call->arguments.is_object()) continue;
            auto path = call->arguments.find("path");
            if (path == call->arguments.end() || !path->is_string()) continue;
            const auto& name = call->name;
            if (name == "read")
                read_.insert(path->template get<std::string>());
            else if (name == "write" || name == "edit")
                modified_.insert(path->template get<std::string>());
        }
    }

    /// Adds `read_files` / `modified_files` of a summary's details (pi's `readFiles` /
    /// `modifiedFiles` too); anything else in the details is ignored.
    template <class T = void>
    void add_details(const detail::dependent<Json, T>& details) {
        if (!details.is_object()) return;
        auto add = [&](const char* key, std::set<std::string>& into) {
            auto it = details.find(key);
            if (it == details.end() || !it->is_array()) return;
            for (const auto& f : *it)
                if (f.is_string()) into.insert(f.template get<std::string>());
        };
        add("read_files", read_);
        add("readFiles", read_);
        add("modified_files", modified_);
        add("modifiedFiles", modified_);
    }

    template <class T = void>
    void add_read(detail::dependent<std::string, T> path) {
        detail::dependent<std::set<std::string>, T>& read = read_;
        read.insert(std::move(path));
    }
    template <class T = void>
    void add_modified(detail::dependent<std::string, T> path) {
        detail::dependent<std::set<std::string>, T>& modified = modified_;
        modified.insert(std::move(path));
    }

    /// The sorted lists; files that were modified are not listed as read.
    template <class T = void>
    [[nodiscard]] FileLists lists() const {
        detail::dependent<FileLists, T> out;
        const detail::dependent<std::set<std::string>, T>& read = read_;
        const detail::dependent<std::set<std::string>, T>& modified = modified_;
        for (const auto& f : read)
            if (modified.count(f) == 0) out.read_files.push_back(f);
        out.modified_files.assign(modified.begin(), modified.end());
        return out;
    }

private:
    std::set<std::string> read_;
    std::set<std::string> modified_;
};

/// The details a compaction or branch summary records: {"read_files":[...],"modified_files":[...]}.
template <class T = void>
Json file_details(const detail::dependent<FileLists, T>& files) {
    detail::dependent<Json, T> details = Json::object();
    details["read_files"] = files.read_files;
    details["modified_files"] = files.modified_files;
    return details;
}

/// The file lists as text to append to a summary (empty when both lists are):
/// "\n\nFiles read:\n- a\n\nFiles modified:\n- b". The library does not append it by itself;
/// a summariser that wants the model to remember the files does.
template <class = void>
std::string format_file_lists(const FileLists& files) {
    std::string out;
    auto section = [&](const char* title, const std::vector<std::string>& list) {
        if (list.empty()) return;
        out += "\n\n";
        out += title;
        for (const auto& f : list) out += "\n- " + f;
    };
    section("Files read:", files.read_files);
    section("Files modified:", files.modified_files);
    return out;
}

// ---------------------------------------------------------------------------------------------
// Serialising messages for a summariser prompt

namespace detail {

// The first `max_chars` characters (code points) of `text`, and how many were cut off.
template <class = void>
std::pair<std::string_view, std::int64_t> head_chars(std::string_view text, std::size_t max_chars) {
    std::size_t chars = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0U) == 0x80U) continue;
        if (chars == max_chars) return {text.substr(0, i), count_chars(text.substr(i))};
        ++chars;
    }
    return {text, 0};
}

template <class = void>
std::string truncate_chars(std::string_view text, std::size_t max_chars) {
    auto [head, cut] = head_chars(text, max_chars);
    std::string out(head);
    if (cut > 0) out += "\n[... " + std::to_string(cut) + " more characters truncated]";
    return out;
}

template <class = void>
std::string blocks_text(const std::vector<ContentBlock>& blocks) {
    std::string out;
    for (const auto& block : blocks) {
        const std::string* piece = nullptr;
        static const std::string image = "[image]";
        if (const auto* t = std::get_if<TextContent>(&block))
            piece = &t->text;
        else if (std::holds_alternative<ImageContent>(block))
            piece = &image;
        if (!piece) continue;
        if (!out.empty()) out += '\n';
        out += *piece;
    }
    return out;
}

template <class = void>
std::string content_text(const Content& content) {
    if (const auto* s = std::get_if<std::string>(&content)) return *s;
    return blocks_text(std::get<std::vector<ContentBlock>>(content));
}

template <class = void>
std::string tool_call_text(const ToolCallContent& call) {
    std::string out = call.name + "(";
    if (call.arguments.is_object()) {
        bool first = true;
        for (const auto& [key, value] : call.arguments.items()) {
            if (!first) out += ", ";
            first = false;
            out += key + "=" + dump_json(value);
        }
    } else if (!call.arguments.is_null()) {
        out += dump_json(call.arguments);
    }
    return out + ")";
}

template <class = void>
void serialize_message(const AgentMessage& message, std::size_t max_tool_chars,
                       std::vector<std::string>& parts) {
    auto add = [&](std::string_view label, const std::string& text) {
        if (!text.empty()) parts.push_back("[" + std::string(label) + "]: " + text);
    };
    std::visit(
        [&](const auto& m) {
            using T = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<T, UserMessage>) {
                add("User", content_text(m.content));
            } else if constexpr (std::is_same_v<T, AssistantMessage>) {
                std::string thinking, text, calls;
                for (const auto& block : m.content) {
                    if (const auto* th = std::get_if<ThinkingContent>(&block)) {
                        if (!thinking.empty()) thinking += '\n';
                        thinking += th->thinking;
                    } else if (const auto* t = std::get_if<TextContent>(&block)) {
                        if (!text.empty()) text += '\n';
                        text += t->text;
                    } else if (const auto* c = std::get_if<ToolCallContent>(&block)) {
                        if (!calls.empty()) calls += "; ";
                        calls += tool_call_text(*c);
                    }
                }
                add("Assistant thinking", thinking);
                add("Assistant", text);
                add("Assistant tool calls", calls);
            } else if constexpr (std::is_same_v<T, ToolResultMessage>) {
                std::string text = truncate_chars(blocks_text(m.content), max_tool_chars);
                add("Tool result", m.is_error ? "(error) " + text : text);
            } else if constexpr (std::is_same_v<T, BashExecutionMessage>) {
                if (m.exclude_from_context.value_or(false)) return;
                std::string text = "$ " + m.command;
                if (!m.output.empty()) text += "\n" + truncate_chars(m.output, max_tool_chars);
                if (m.exit_code && *m.exit_code != 0)
                    text += "\n(exit code " + std::to_string(*m.exit_code) + ")";
                if (m.cancelled) text += "\n(cancelled)";
                add("User ran", text);
            } else if constexpr (std::is_same_v<T, CustomMessage>) {
                add("Custom: " + m.custom_type, content_text(m.content));
            } else if constexpr (std::is_same_v<T, BranchSummaryMessage>) {
                add("Branch summary", m.summary);
            } else if constexpr (std::is_same_v<T, CompactionSummaryMessage>) {
                add("Compaction summary", m.summary);
            }
            // Messages of unknown roles are left out: their meaning is unknown.
        },
        message);
}

}  // namespace detail

/// The messages as plain text for a summariser prompt — as text, so that the model summarises
/// the conversation instead of continuing it. One paragraph per part, separated by a blank line:
/// `[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`, `[Assistant tool calls]:
/// read(path="a.txt"); bash(command="ls")`, `[Tool result]: …` (an error result starts with
/// "(error) "), `[User ran]: $ command\noutput`, `[Custom: type]: …`, `[Branch summary]: …`,
/// `[Compaction summary]: …`. Images appear as "[image]". Tool results and bash output longer than
/// `max_tool_result_chars` characters keep their head and end with
/// "\n[... N more characters truncated]". Empty parts, bash executions excluded from the context
/// and messages of unknown roles are left out.
template <class Messages>
requires std::is_same_v<typename Messages::value_type, MessageHandle> ||
    std::is_same_v<typename Messages::value_type, AgentMessage>
        std::string serialize_conversation(const Messages& messages,
                                           std::size_t max_tool_result_chars = 2000) {
    std::vector<std::string> parts;
    for (const auto& m : messages)
        detail::serialize_message(detail::deref(m), max_tool_result_chars, parts);
    std::string out;
    for (const auto& p : parts) {
        if (!out.empty()) out += "\n\n";
        out += p;
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Where to cut

/// Where find_cut_point cuts.
struct CutPoint {
    /// The first entry kept; the range's end when nothing can be kept (everything is summarised).
    std::size_t first_kept_index = 0;
    /// When the cut splits a turn: the index of the message that started it (user message, bash
    /// execution, custom message entry or branch summary).
    std::optional<std::size_t> turn_start_index;
    bool split_turn = false;
    friend bool operator==(const CutPoint&, const CutPoint&) = default;
};

namespace detail {

// Entries that may start the kept part: messages a conversation can resume from. Never a tool
// result (it must follow its call) nor a message of an unknown role.
template <class = void>
bool is_cut_point_entry(const SessionTreeEntry& entry) noexcept {
    if (const auto* m = message_of(entry)) {
        return !std::holds_alternative<ToolResultMessage>(*m) &&
               !std::holds_alternative<OpaqueMessage>(*m);
    }
    return std::holds_alternative<BranchSummaryEntry>(entry) ||
           std::holds_alternative<CustomMessageEntry>(entry);
}

// Entries that begin a turn: what the user (or the application on the user's side) says.
template <class = void>
bool is_turn_start_entry(const SessionTreeEntry& entry) noexcept {
    if (const auto* m = message_of(entry))
        return std::holds_alternative<UserMessage>(*m) ||
               std::holds_alternative<BashExecutionMessage>(*m);
    return std::holds_alternative<BranchSummaryEntry>(entry) ||
           std::holds_alternative<CustomMessageEntry>(entry);
}

// Entries without messages that belong with what follows them: a cut just after them pulls them
// into the kept part, so that the kept history starts with the settings it was made under.
template <class = void>
bool travels_with_next(const SessionTreeEntry& entry) noexcept {
    return std::holds_alternative<ThinkingLevelChangeEntry>(entry) ||
           std::holds_alternative<ModelChangeEntry>(entry) ||
           std::holds_alternative<ActiveToolsChangeEntry>(entry) ||
           std::holds_alternative<LabelEntry>(entry) ||
           std::holds_alternative<CustomEntry>(entry) ||
           std::holds_alternative<SessionInfoEntry>(entry) ||
           std::holds_alternative<LeafEntry>(entry) || std::holds_alternative<UnknownEntry>(entry);
}

// The estimated tokens an entry adds to a context (custom entries, whose messages depend on the
// application's projectors, count nothing).
template <class T = void>
std::int64_t entry_tokens(const SessionTreeEntry& entry) {
    if (const auto* m = message_of(entry)) return estimate_tokens(*m);
    if (const auto* c = std::get_if<CustomMessageEntry>(&entry))
        return estimate_tokens(
            detail::dependent<CustomMessage, T>{c->custom_type, c->content, c->display, {}, 0, {}});
    if (const auto* b = std::get_if<BranchSummaryEntry>(&entry))
        return b->summary.empty() ? 0
                                  : estimate_tokens(detail::dependent<BranchSummaryMessage, T>{
                                        b->summary, {}, 0, {}});
    if (const auto* k = std::get_if<CompactionEntry>(&entry)) {
        std::int64_t n =
            estimate_tokens(detail::dependent<CompactionSummaryMessage, T>{k->summary, 0, 0, {}});
        if (k->retained_tail)
            for (const auto& m : *k->retained_tail) n += estimate_tokens(m);
        return n;
    }
    return 0;
}

// For each index of [0, end]: true when a cut there would separate a tool call (before it) from
// its result (at or after it). The calls of a compaction's retained tail count as made at the
// compaction: a result after it answers a call the context holds.
template <class T = void>
std::vector<bool> cuts_inside_tool_pairs(const dependent<std::vector<EntryHandle>, T>& path,
                                         std::size_t end) {
    dependent<std::vector<int>, T> delta(end + 2, 0);
    dependent<std::unordered_map<std::string_view, std::size_t>, T> call_at;
    auto add = [&](const AgentMessage& m, std::size_t i) {
        if (const auto* a = std::get_if<AssistantMessage>(&m)) {
            for (const auto& block : a->content)
                if (const auto* call = std::get_if<ToolCallContent>(&block)) call_at[call->id] = i;
        } else if (const auto* r = std::get_if<ToolResultMessage>(&m)) {
            auto it = call_at.find(r->tool_call_id);
            if (it == call_at.end() || it->second == i) return;
            ++delta[it->second + 1];
            --delta[i + 1];
        }
    };
    for (std::size_t i = 0; i < end; ++i) {
        if (const AgentMessage* m = message_of(*path[i])) {
            add(*m, i);
        } else if (const auto* c = std::get_if<CompactionEntry>(path[i].get());
                   c && c->retained_tail) {
            for (const auto& tail_message : *c->retained_tail) add(tail_message, i);
        }
    }
    dependent<std::vector<bool>, T> inside(end + 1, false);
    int depth = 0;
    for (std::size_t i = 0; i <= end; ++i) {
        depth += delta[i];
        inside[i] = depth > 0;
    }
    return inside;
}

}  // namespace detail

/// Where to cut the path entries `[start, end)` so that about `keep_recent_tokens` of the newest
/// history is kept.
///
/// Walks back from the newest entry adding estimate_tokens of what each entry shows in a context
/// until the sum reaches `keep_recent_tokens`; then cuts at the nearest valid cut point at or
/// after that entry (if there is none, the nearest before it). Never reaching the sum keeps
/// everything from the first valid cut point. Valid cut points are entries before which the
/// conversation can resume: user, assistant, bash-execution, custom and summary messages, branch
/// summary and custom message entries — never a tool result, and never a point between a tool
/// call and its result. Settings changes (thinking level, model, tools), labels, custom entries,
/// session info just before the cut move into the kept part. No valid cut point at all: the
/// cut is at `end` (nothing kept).
///
/// The cut splits a turn when the first kept message is not one that begins a turn (a user
/// message, bash execution, custom message entry, branch summary) and such a message lies in
/// `[start, cut)`: `turn_start_index` names it.
///
/// `end` beyond the path is clamped to its size, `start` beyond `end` to `end`.
/// Complexity: O(end) time and memory.
/// Example: user "a"×400 (100 tokens), assistant "b"×400, user "c"×400, assistant "d"×400 with
/// keep_recent_tokens 150 → first kept index 2, no split.
template <class T = void>
CutPoint find_cut_point(const detail::dependent<std::vector<EntryHandle>, T>& path,
                        std::size_t start, std::size_t end, std::int64_t keep_recent_tokens) {
    end = std::min(end, path.size());
    start = std::min(start, end);
    const detail::dependent<std::vector<bool>, T> inside =
        detail::cuts_inside_tool_pairs(path, end);
    auto valid = [&](std::size_t i) { return detail::is_cut_point_entry(*path[i]) && !inside[i]; };

    std::optional<std::size_t> cut;
    std::int64_t kept = 0;
    for (std::size_t i = end; i-- > start;) {
        kept += detail::entry_tokens(*path[i]);
        if (kept < keep_recent_tokens) continue;
        for (std::size_t c = i; c < end && !cut; ++c)
            if (valid(c)) cut = c;
        for (std::size_t c = i; c-- > start && !cut;)
            if (valid(c)) cut = c;
        break;
    }
    if (!cut)
        for (std::size_t c = start; c < end && !cut; ++c)
            if (valid(c)) cut = c;

    CutPoint out;
    if (!cut) {
        out.first_kept_index = end;
        return out;
    }
    std::size_t first_kept = *cut;
    while (first_kept > start && detail::travels_with_next(*path[first_kept - 1])) --first_kept;
    out.first_kept_index = first_kept;
    if (detail::is_turn_start_entry(*path[*cut])) return out;
    for (std::size_t i = first_kept; i-- > start;) {
        if (detail::is_turn_start_entry(*path[i])) {
            out.turn_start_index = i;
            out.split_turn = true;
            break;
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// What to summarise

/// Everything a compaction needs, computed from a path before the summariser runs.
struct CompactionPreparation {
    std::string leaf_id;  ///< the path's last entry: compact() appends after it
    /// What the summary replaces: the previous compaction's retained tail, then the context
    /// messages of the entries from the previous boundary up to the cut (or the split turn).
    std::vector<MessageHandle> messages_to_summarize;
    /// When the cut splits a turn: the turn's messages before the cut.
    std::vector<MessageHandle> turn_prefix_messages;
    bool split_turn = false;
    std::optional<std::string> first_kept_entry_id;  ///< none when nothing is kept
    std::vector<MessageHandle> retained_tail;        ///< the kept messages, shared
    std::int64_t tokens_before = 0;                  ///< estimate_context_tokens of the context
    std::optional<std::string> previous_summary;     ///< of the compaction being superseded
    FileLists files;  ///< from the summarised messages and the previous compaction's details
    CompactionSettings settings;
};

namespace detail {

template <class T = void>
void append_entry_messages(const dependent<std::vector<EntryHandle>, T>& path, std::size_t from,
                           std::size_t to, std::optional<std::size_t> skip,
                           const ContextBuildOptions& options,
                           dependent<std::vector<MessageHandle>, T>& out) {
    for (std::size_t i = from; i < to; ++i)
        if (!skip || i != *skip) append_context_messages(path[i], i, path, options, out);
}

}  // namespace detail

/// Prepares the compaction of a path (oldest first, as get_branch returns it).
///
/// Returns none when the path is empty, ends with a compaction, or nothing lies before the cut
/// (there is nothing to summarise). Otherwise the cut is find_cut_point over the entries after
/// the newest compaction on the path, and the summary covers what the context shows before it:
/// that compaction's retained tail or its first kept entries (its summary is
/// `previous_summary`), then the entries up to the cut — or, when the cut splits a turn, up to the
/// turn's start, the rest of the turn being `turn_prefix_messages`. Messages are what the entries
/// show in a context (SPEC §4.5, with `options`' projectors). Files come from the `read`, `write`,
/// `edit` tool calls of the summarised messages and turn prefix, and from the previous
/// compaction's details unless a hook wrote it. `tokens_before` estimates the path's context.
///
/// Complexity: O(path) plus building its context once.
template <class T = void>
std::optional<CompactionPreparation> prepare_compaction(
    const detail::dependent<std::vector<EntryHandle>, T>& path,
    const CompactionSettings& settings = {}, const ContextBuildOptions& options = {}) {
    if (path.empty() || std::holds_alternative<CompactionEntry>(*path.back())) return std::nullopt;

    std::optional<std::size_t> previous;
    for (std::size_t i = path.size(); i-- > 0;) {
        if (std::holds_alternative<CompactionEntry>(*path[i])) {
            previous = i;
            break;
        }
    }
    detail::dependent<CompactionPreparation, T> prep;
    prep.leaf_id = id_of(*path.back());
    prep.settings = settings;
    detail::dependent<FileTracker, T> files;
    std::size_t boundary = 0;
    std::size_t cut_start = 0;
    if (previous) {
        const auto& c = std::get<CompactionEntry>(*path[*previous]);
        prep.previous_summary = c.summary;
        if (!c.from_hook) files.add_details(c.details);
        cut_start = *previous + 1;
        boundary = cut_start;
        if (c.retained_tail) {
            for (const auto& m : *c.retained_tail)
                prep.messages_to_summarize.push_back(detail::alias_message(path[*previous], m));
        } else if (c.first_kept_entry_id) {
            for (std::size_t i = 0; i < *previous; ++i) {
                if (id_of(*path[i]) == *c.first_kept_entry_id) {
                    boundary = i;
                    break;
                }
            }
        }
    }

    const detail::dependent<CutPoint, T> cut =
        find_cut_point(path, cut_start, path.size(), settings.keep_recent_tokens);
    const std::size_t history_end = cut.split_turn ? *cut.turn_start_index : cut.first_kept_index;
    detail::append_entry_messages(path, boundary, history_end, previous, options,
                                  prep.messages_to_summarize);
    if (cut.split_turn) {
        prep.split_turn = true;
        detail::append_entry_messages(path, *cut.turn_start_index, cut.first_kept_index,
                                      std::nullopt, options, prep.turn_prefix_messages);
    }
    if (prep.messages_to_summarize.empty() && prep.turn_prefix_messages.empty())
        return std::nullopt;

    if (cut.first_kept_index < path.size())
        prep.first_kept_entry_id = id_of(*path[cut.first_kept_index]);
    detail::append_entry_messages(path, cut.first_kept_index, path.size(), std::nullopt, options,
                                  prep.retained_tail);
    prep.tokens_before =
        estimate_context_tokens(build_session_context(path, options).messages).tokens;
    for (const auto& m : prep.messages_to_summarize) files.add_message(*m);
    for (const auto& m : prep.turn_prefix_messages) files.add_message(*m);
    prep.files = files.lists();
    return prep;
}

/// Prepares the compaction of the session's current branch, with the session's context options.
template <SessionStorage S>
std::optional<CompactionPreparation> prepare_compaction(const Session<S>& session,
                                                        const CompactionSettings& settings = {}) {
    return prepare_compaction(get_branch(session), settings, session.context_build_options());
}

/// Prepares the compaction of the branch that ends at `leaf`. Unknown entry: not_found.
template <SessionStorage S>
std::optional<CompactionPreparation> prepare_compaction_at(
    const Session<S>& session, std::string_view leaf, const CompactionSettings& settings = {}) {
    return prepare_compaction(get_branch(session, leaf), settings, session.context_build_options());
}

// ---------------------------------------------------------------------------------------------
// Applying the summary

/// What the application's summariser receives.
struct SummaryRequest {
    std::vector<MessageHandle> messages;          ///< to summarise (the preparation's)
    std::vector<MessageHandle> turn_prefix;       ///< the split turn's start, or empty
    std::optional<std::string> previous_summary;  ///< to fold into the new summary
    std::string conversation_text;                ///< serialize_conversation(messages)
    std::string turn_prefix_text;                 ///< serialize_conversation(turn_prefix)
    FileLists files;
    std::int64_t tokens_before = 0;
};

/// What the application's summariser returns.
struct SummaryResult {
    std::string summary{};
    std::optional<Usage> usage{};  ///< the summarising call's usage, counted in the session's stats
};

/// A callable that summarises: takes the request and returns a SummaryResult, or a
/// std::optional<SummaryResult> where none means cancelled. It may throw.
template <class F, class Request>
concept summarizer_like = std::invocable<F&, const Request&> &&
    std::convertible_to<std::invoke_result_t<F&, const Request&>, std::optional<SummaryResult>>;

/// How compact() writes the compaction.
struct CompactOptions {
    /// Also store the kept messages as the compaction's retained tail (SPEC §4.4: the path walk
    /// then ends at the compaction, and the tail, not the first kept entry, gives the kept
    /// messages). `first_kept_entry_id` is written either way, for readers that know no retained
    /// tails, such as pi 0.73. Default: only `first_kept_entry_id`.
    bool retain_tail = false;
    std::size_t max_tool_result_chars = 2000;  ///< for the serialised text of the request
};

namespace detail {

template <SessionStorage S>
void require_leaf(const Session<S>& session, const std::string& expected) {
    auto leaf = session.storage().get_leaf_id();
    if (leaf != expected)
        throw SessionError(ErrorCode::invalid_entry, "the compaction was prepared at entry '" +
                                                         expected + "' but the leaf is now '" +
                                                         leaf.value_or("none") +
                                                         "'; prepare it again");
}

}  // namespace detail

/// Summarises with the application's callback and appends the compaction entry (summary, the
/// first kept entry — with `options.retain_tail` also the retained tail —, tokens before,
/// the summariser's usage, details `{"read_files":[...],"modified_files":[...]}`). Returns the new
/// entry's id, which becomes the leaf.
///
/// The leaf must still be the preparation's `leaf_id`, before and after the summariser runs;
/// otherwise invalid_entry and nothing is appended (prepare again). A summariser that returns
/// none (cancelled) appends nothing and compact returns none; one that throws appends nothing
/// and the exception propagates.
template <SessionStorage S, class Summarizer>
requires summarizer_like<Summarizer, SummaryRequest> std::optional<std::string> compact(
    Session<S>& session, const CompactionPreparation& preparation, Summarizer&& summarizer,
    const CompactOptions& options = {}) {
    detail::require_leaf(session, preparation.leaf_id);
    SummaryRequest request{
        preparation.messages_to_summarize,
        preparation.turn_prefix_messages,
        preparation.previous_summary,
        serialize_conversation(preparation.messages_to_summarize, options.max_tool_result_chars),
        serialize_conversation(preparation.turn_prefix_messages, options.max_tool_result_chars),
        preparation.files,
        preparation.tokens_before};
    std::optional<SummaryResult> result = std::invoke(summarizer, std::as_const(request));
    if (!result) return std::nullopt;
    detail::require_leaf(session, preparation.leaf_id);

    std::optional<std::vector<detail::dependent<AgentMessage, S>>> tail;
    if (options.retain_tail) {
        tail.emplace();
        tail->reserve(preparation.retained_tail.size());
        for (const auto& m : preparation.retained_tail) tail->push_back(*m);
    }
    return append_compaction(session, std::move(result->summary), preparation.first_kept_entry_id,
                             preparation.tokens_before, file_details(preparation.files), false,
                             std::move(result->usage), std::move(tail));
}

}  // namespace agentcore

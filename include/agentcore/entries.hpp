#pragma once
// The entries of the session tree and the session header (SPEC §2.3).

#include <agentcore/detail/dependent.hpp>
#include <agentcore/json.hpp>
#include <agentcore/messages.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace agentcore {

/// What every entry has. The entry's type follows from its C++ type (see type_of).
struct EntryBase {
    std::string id;
    std::optional<std::string> parent_id;  ///< none for a root
    std::string timestamp;                 ///< ISO 8601 UTC with milliseconds
    Json extra;                            ///< top-level fields the model does not know
};

/// A message of the conversation.
struct MessageEntry : EntryBase {
    static constexpr std::string_view type = "message";
    AgentMessage message;
};

/// The model's thinking level changed.
struct ThinkingLevelChangeEntry : EntryBase {
    static constexpr std::string_view type = "thinking_level_change";
    std::string thinking_level;
};

/// The model changed.
struct ModelChangeEntry : EntryBase {
    static constexpr std::string_view type = "model_change";
    std::string provider;
    std::string model_id;
};

/// The set of active tools changed.
struct ActiveToolsChangeEntry : EntryBase {
    static constexpr std::string_view type = "active_tools_change";
    std::vector<std::string> active_tool_names;
};

/// Older history was replaced by a summary.
struct CompactionEntry : EntryBase {
    static constexpr std::string_view type = "compaction";
    std::string summary;
    std::optional<std::string> first_kept_entry_id;
    std::int64_t tokens_before = 0;
    /// Messages kept verbatim after the summary. Absent and empty are different: a present tail
    /// (even empty) ends every path walk at this compaction.
    std::optional<std::vector<AgentMessage>> retained_tail;
    Json details;  ///< null when absent
    std::optional<Usage> usage;
    bool from_hook = false;
    /// True when this was read from a line without `from_hook` (pi's SessionManager leaves it
    /// out unless its caller passes it): it is then left out when written, unless `from_hook`
    /// is true, so the line round-trips. New entries write it, as pi's agent does.
    bool from_hook_omitted = false;
};

/// The conversation came back from a branch; `from_id` is an entry id or "root".
struct BranchSummaryEntry : EntryBase {
    static constexpr std::string_view type = "branch_summary";
    std::string from_id;
    std::string summary;
    Json details;  ///< null when absent
    std::optional<Usage> usage;
    bool from_hook = false;
    /// True when this was read from a line without `from_hook` (pi's SessionManager leaves it
    /// out unless its caller passes it): it is then left out when written, unless `from_hook`
    /// is true, so the line round-trips. New entries write it, as pi's agent does.
    bool from_hook_omitted = false;
};

/// Application data that is not part of the context unless a projector makes it so.
struct CustomEntry : EntryBase {
    static constexpr std::string_view type = "custom";
    std::string custom_type;
    Json data;  ///< null when absent
};

/// A message injected by the application; it becomes a `custom` message in the context.
struct CustomMessageEntry : EntryBase {
    static constexpr std::string_view type = "custom_message";
    std::string custom_type;
    Content content;
    Json details;  ///< null when absent
    bool display = false;
    /// True when this was read from a line without `display` (pi reads that as false): it is
    /// then left out when written, unless `display` is true, so the line round-trips.
    bool display_omitted = false;
};

/// A label on an entry; an absent label clears it.
struct LabelEntry : EntryBase {
    static constexpr std::string_view type = "label";
    std::string target_id;
    std::optional<std::string> label;
};

/// Session information (the display name).
struct SessionInfoEntry : EntryBase {
    static constexpr std::string_view type = "session_info";
    std::optional<std::string> name;
};

/// The current leaf moved; no target means "before the first entry".
struct LeafEntry : EntryBase {
    static constexpr std::string_view type = "leaf";
    std::optional<std::string> target_id;
};

/// An entry of a type this library does not know (written by a newer program). It is a node of
/// the tree like any other, adds nothing to the context, and is written back unchanged.
struct UnknownEntry : EntryBase {
    std::string type;
    Json raw;  ///< the whole line as read
};

/// Any entry of the session tree.
using SessionTreeEntry =
    std::variant<MessageEntry, ThinkingLevelChangeEntry, ModelChangeEntry, ActiveToolsChangeEntry,
                 CompactionEntry, BranchSummaryEntry, CustomEntry, CustomMessageEntry, LabelEntry,
                 SessionInfoEntry, LeafEntry, UnknownEntry>;

/// A shared handle to an immutable entry. Storages hand these out so that reads never copy
/// message payloads; an entry lives as long as any handle to it.
using EntryHandle = std::shared_ptr<const SessionTreeEntry>;

/// A shared handle to an immutable message (often pointing into an entry).
using MessageHandle = std::shared_ptr<const AgentMessage>;

/// The base fields of any entry.
template <class T = void>
const EntryBase& base_of(const detail::dependent<SessionTreeEntry, T>& entry) noexcept {
    return std::visit([](const auto& e) -> const EntryBase& { return e; }, entry);
}

/// Mutable access to the base fields (for code that builds entries).
template <class T = void>
EntryBase& base_of(detail::dependent<SessionTreeEntry, T>& entry) noexcept {
    return std::visit([](auto& e) -> EntryBase& { return e; }, entry);
}

/// The entry's type as written in files ("message", "compaction", ... or the unknown type).
template <class T = void>
std::string_view type_of(const detail::dependent<SessionTreeEntry, T>& entry) noexcept {
    return std::visit([](const auto& e) -> std::string_view { return e.type; }, entry);
}

/// The entry's id.
template <class T = void>
const std::string& id_of(const detail::dependent<SessionTreeEntry, T>& entry) noexcept {
    return base_of(entry).id;
}

/// The entry's parent id (none for a root).
template <class T = void>
const std::optional<std::string>& parent_id_of(
    const detail::dependent<SessionTreeEntry, T>& entry) noexcept {
    return base_of(entry).parent_id;
}

/// True when `type` names one of the eleven entry types of the format.
template <class = void>
bool is_known_entry_type(std::string_view type) noexcept {
    for (std::string_view known :
         {MessageEntry::type, ThinkingLevelChangeEntry::type, ModelChangeEntry::type,
          ActiveToolsChangeEntry::type, CompactionEntry::type, BranchSummaryEntry::type,
          CustomEntry::type, CustomMessageEntry::type, LabelEntry::type, SessionInfoEntry::type,
          LeafEntry::type}) {
        if (known == type) return true;
    }
    return false;
}

/// The message of a message entry, or null for other entries.
template <class T = void>
const AgentMessage* message_of(const detail::dependent<SessionTreeEntry, T>& entry) noexcept {
    const auto* m = std::get_if<MessageEntry>(&entry);
    return m ? &m->message : nullptr;
}

/// An entry as one of the entry types, or the message of a message entry as one of the message
/// types; null when it is not one. Example: `if (auto* c = entry_as<CompactionEntry>(*e))`,
/// `if (auto* reply = entry_as<AssistantMessage>(*e))`.
template <class T>
const T* entry_as(const SessionTreeEntry& entry) noexcept {
    if constexpr (std::is_constructible_v<AgentMessage, T> && !std::is_base_of_v<EntryBase, T>) {
        const AgentMessage* m = message_of(entry);
        return m ? std::get_if<T>(m) : nullptr;
    } else {
        return std::get_if<T>(&entry);
    }
}

/// entry_as over a handle; null for a null handle.
template <class T>
const T* entry_as(const EntryHandle& entry) noexcept {
    return entry ? entry_as<T>(*entry) : nullptr;
}

/// The first line of a session file; describes the session (its metadata).
struct SessionHeader {
    static constexpr std::string_view type = "session";
    int version = 3;                              ///< format version (pi v1 files carry none: 1)
    std::string id{};                             ///< the session id
    std::string timestamp{};                      ///< creation time, ISO 8601 UTC
    std::string cwd{};                            ///< the working directory of the agent
    std::optional<std::string> parent_session{};  ///< what it was forked from
    Json metadata = Json(Json::value_t::object);  ///< application metadata (an object)
    Json extra{};                                 ///< header fields the model does not know
};

/// The design document calls the header the session's metadata.
using SessionMetadata = SessionHeader;

}  // namespace agentcore

#pragma once
// Small builders for test sessions: messages with usage, a deterministic in-memory session.

#include <agentcore/detail/saturate.hpp>
#include <agentcore/session.hpp>

#include <string>
#include <vector>

namespace agentcore::testing {

inline Usage usage(std::int64_t input, std::int64_t output, std::int64_t cache_read,
                   std::int64_t cache_write, double cost_total) {
    Usage u;
    u.input = input;
    u.output = output;
    u.cache_read = cache_read;
    u.cache_write = cache_write;
    // Saturating, as the library's sums are: tests pass counts at INT64_MAX.
    u.total_tokens = agentcore::detail::saturating_add(
        agentcore::detail::saturating_add(input, output),
        agentcore::detail::saturating_add(cache_read, cache_write));
    u.cost.total = cost_total;
    return u;
}

/// A text of `n` copies of `c` (4 characters make one estimated token).
inline std::string repeated(std::size_t n, char c) { return std::string(n, c); }

inline AgentMessage user(std::string text, std::int64_t ts = 1000) {
    return UserMessage{std::move(text), ts, {}};
}

inline AgentMessage assistant(std::string text, std::string provider = "anthropic",
                              std::string model = "claude", Usage u = {}) {
    AssistantMessage m;
    m.content.push_back(TextContent{std::move(text), {}});
    m.api = "messages";
    m.provider = std::move(provider);
    m.model = std::move(model);
    m.usage = u;
    m.timestamp = 2000;
    return m;
}

inline AgentMessage assistant_tool_call(std::string call_id, std::string tool) {
    AssistantMessage m;
    m.content.push_back(
        ToolCallContent{std::move(call_id), std::move(tool), Json{{"path", "a.txt"}}, {}});
    m.api = "messages";
    m.provider = "anthropic";
    m.model = "claude";
    m.stop_reason = "tool_use";
    m.timestamp = 2000;
    return m;
}

inline AgentMessage tool_result(std::string call_id, std::string tool, std::string text) {
    ToolResultMessage m;
    m.tool_call_id = std::move(call_id);
    m.tool_name = std::move(tool);
    m.content.push_back(TextContent{std::move(text), {}});
    m.timestamp = 3000;
    return m;
}

using MemorySession = Session<InMemorySessionStorage<>>;

/// An empty in-memory session with a deterministic clock (2026-12-02T07:43:23.123Z, +1 ms a call).
inline MemorySession memory_session(std::uint64_t seed = 1) {
    SessionHeader header;
    header.id = "test-session";
    header.timestamp = "2026-12-02T07:43:23.123Z";
    header.cwd = "/work";
    return MemorySession(
        InMemorySessionStorage<>(header, Environment::deterministic(1796197403123, seed)));
}

/// `n` user messages in a chain (ids e1000, e1001, ...), each "message number i" followed by
/// `filler` bytes of text: a session to import or create in one step.
inline std::vector<SessionTreeEntry> chain_entries(int n, std::size_t filler = 0) {
    std::vector<SessionTreeEntry> out;
    out.reserve(static_cast<std::size_t>(n));
    std::optional<std::string> parent;
    for (int i = 0; i < n; ++i) {
        MessageEntry e;
        e.id = "e" + std::to_string(1000 + i);
        e.parent_id = parent;
        e.timestamp = "2026-12-02T07:43:23.123Z";
        e.message = user("message number " + std::to_string(i) + std::string(filler, 'x'));
        parent = e.id;
        out.emplace_back(std::move(e));
    }
    return out;
}

/// A custom entry whose data no line can hold (a binary JSON value): encoding it is
/// invalid_entry.
inline SessionTreeEntry unwritable_entry(std::string id, std::optional<std::string> parent) {
    CustomEntry e;
    e.id = std::move(id);
    e.parent_id = std::move(parent);
    e.timestamp = "2026-12-02T07:43:23.123Z";
    e.custom_type = "blob";
    e.data = Json::binary({1, 2, 3});
    return e;
}

/// The text of a message, for compact assertions (the library's text_of).
using agentcore::text_of;

/// "role:text" of every message of a context, for one-line assertions.
inline std::vector<std::string> describe(const SessionContext& context) {
    std::vector<std::string> out;
    for (const auto& m : context.messages)
        out.push_back(std::string(role_of(*m)) + ":" + text_of(*m));
    return out;
}

/// The ids of a list of entries.
inline std::vector<std::string> ids(const std::vector<EntryHandle>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(id_of(*e));
    return out;
}

}  // namespace agentcore::testing

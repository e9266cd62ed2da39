#pragma once
// Text of entries and messages for the terminal: full text (context) and one-line previews
// (tree), with control characters escaped so that a conversation cannot drive the terminal.

#include <agentcore/entries.hpp>
#include <agentcore/messages.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace agentcore::tool {

/// The text of content: strings and text blocks as they are, images as "[image]".
std::string content_text(const Content& content);
std::string blocks_text(const std::vector<ContentBlock>& blocks);

/// The readable text of a message (several lines possible): text, "[thinking]", tool calls as
/// "→ name {arguments}", tool results, commands and their output, summaries.
std::string message_text(const AgentMessage& message);

/// What the entry is, for a tree line: the role of a message, else the entry type.
std::string entry_kind(const SessionTreeEntry& entry);

/// What the entry says, before shortening (message text, summary, setting, label...).
std::string entry_text(const SessionTreeEntry& entry);

/// Every string the tool prints comes from a file and may hold what drives a terminal: control
/// characters (C0 — newline, tab and ESC among them —, DEL, C1), the line and paragraph
/// separators and the bidirectional controls, and bytes that are not UTF-8. These functions show
/// them as visible escapes instead: \n, \t, \r, \x1b, \u0085, \u202e, and \xNN for a byte.

/// Conversation text on one line (tree previews): whitespace runs become one space, everything
/// else above is escaped; at most `max_chars` characters ("…" marks a cut).
std::string one_line(std::string_view text, std::size_t max_chars);

/// Conversation text on several lines (context): newline and tab kept, everything else escaped.
std::string printable(std::string_view text);

/// An id, name, label, type, timestamp, path or message on one line: everything above escaped,
/// newline and tab included; at most `max_chars` characters ("…" marks a cut).
std::string escaped(std::string_view text, std::size_t max_chars = std::string_view::npos);

}  // namespace agentcore::tool

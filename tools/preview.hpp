#pragma once
// Text of entries and messages for the terminal: full text (context) and one-line previews
// (tree), with control characters removed so that a conversation cannot drive the terminal.

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

/// `text` on one line: whitespace runs become one space, control characters (C0, DEL, C1,
/// hence ESC) are dropped, and at most `max_chars` code points are kept ("…" marks a cut).
std::string one_line(std::string_view text, std::size_t max_chars);

/// `text` with control characters other than newline and tab dropped (for multi-line output).
std::string printable(std::string_view text);

}  // namespace agentcore::tool

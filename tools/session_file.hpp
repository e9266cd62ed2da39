#pragma once
// Opening a session file of either dialect for the tool's commands, read-only.

#include <agentcore/entries.hpp>
#include <agentcore/jsonl_storage.hpp>
#include <agentcore/session_ops.hpp>

#include <optional>
#include <string>
#include <vector>

namespace agentcore::tool {

using Storage = JsonlSessionStorage;
using OpenedSession = Session<JsonlSessionStorage>;

/// Opens `path` read-only (no lock, the file is never changed). Strict: a bad line fails the
/// open with a ToolError naming the file and line. Lenient: bad entry lines are skipped and
/// reported by storage().problems() (a bad header still fails).
OpenedSession open_session(const std::string& path, bool lenient = false);

/// The dialect's name as the tool prints it ("native", "pi").
const char* dialect_name(Dialect dialect) noexcept;

/// Every id from the root to `id` (inclusive), oldest first, following parents without the
/// compaction cut of get_path_to_root_or_compaction; empty for none.
std::vector<std::string> ancestry(const Storage& storage, const std::optional<std::string>& id);

}  // namespace agentcore::tool

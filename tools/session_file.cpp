#include "session_file.hpp"

#include "cli_common.hpp"

namespace agentcore::tool {

const char* dialect_name(Dialect dialect) noexcept { return dialect == Dialect::native ? "native" : "pi"; }

OpenedSession open_session(const std::string& path, bool lenient) {
    JsonlStorageOptions options;
    options.lenient = lenient;
    try {
        return OpenedSession(JsonlSessionStorage::open_read_only(path, options));
    } catch (const SessionError& e) {
        // The library's message names the file and the line.
        throw ToolError(e.what());
    }
}

std::vector<std::string> ancestry(const Storage& storage, const std::optional<std::string>& id) {
    std::vector<std::string> ids;
    std::optional<std::string> current = id;
    while (current && ids.size() <= storage.entry_count()) {
        EntryHandle entry = storage.get_entry(*current);
        if (!entry) break;
        ids.push_back(*current);
        current = parent_id_of(*entry);
    }
    return {ids.rbegin(), ids.rend()};
}

}  // namespace agentcore::tool

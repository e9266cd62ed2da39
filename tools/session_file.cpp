#include "session_file.hpp"

#include <fstream>

namespace agentcore::tool {

const char* dialect_name(Dialect dialect) noexcept { return dialect == Dialect::native ? "native" : "pi"; }

std::optional<int> header_version(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    try {
        return decode_header(line).version;
    } catch (const SessionError&) {
        return std::nullopt;
    }
}

}  // namespace agentcore::tool

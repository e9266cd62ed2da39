#include "cli_common.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace agentcore::tool {

bool stdout_is_terminal() noexcept { return ::isatty(STDOUT_FILENO) == 1; }
bool stderr_is_terminal() noexcept { return ::isatty(STDERR_FILENO) == 1; }

bool colours_wanted() noexcept {
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color != nullptr && *no_color != '\0') return false;
    return stdout_is_terminal();
}

std::string Style::paint(std::string_view sgr, std::string_view text) const {
    if (!enabled_ || text.empty()) return std::string(text);
    std::string out;
    out.reserve(text.size() + sgr.size() + 8);
    out.append("\x1b[").append(sgr).append("m").append(text).append("\x1b[0m");
    return out;
}

std::string pretty_json(const Json& value) {
    // The dump escapes C0 controls; C1 controls, the line and paragraph separators and the
    // bidirectional controls stay raw in UTF-8, so they are escaped here. Their bytes occur only
    // inside strings, where \uXXXX means the same character.
    const std::string json = value.dump(2, ' ', false, Json::error_handler_t::replace);
    std::string out;
    out.reserve(json.size() + 1);
    for (std::size_t i = 0; i < json.size(); ++i) {
        const auto b0 = static_cast<unsigned char>(json[i]);
        const auto b1 = i + 1 < json.size() ? static_cast<unsigned char>(json[i + 1]) : 0u;
        const auto b2 = i + 2 < json.size() ? static_cast<unsigned char>(json[i + 2]) : 0u;
        unsigned code = 0;
        std::size_t length = 0;
        if (b0 == 0xC2 && b1 >= 0x80 && b1 <= 0x9F)
            code = b1, length = 2;
        else if (b0 == 0xE2 && (b1 == 0x80 || b1 == 0x81) && b2 >= 0x80 && b2 <= 0xBF) {
            const unsigned c = 0x2000u + ((b1 & 0x3Fu) << 6) + (b2 & 0x3Fu);
            if (c == 0x200E || c == 0x200F || (c >= 0x2028 && c <= 0x202E) ||
                (c >= 0x2066 && c <= 0x2069))
                code = c, length = 3;
        }
        if (length == 0) {
            out += json[i];
            continue;
        }
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", code);
        out += buf;
        i += length - 1;
    }
    out += "\n";
    return out;
}

std::string format_cost(double dollars) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "$%.4f", dollars);
    return buf;
}

std::string format_size(std::uint64_t bytes) {
    if (bytes < 1024) return std::to_string(bytes) + " B";
    const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes) / 1024.0;
    std::size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < sizeof units / sizeof units[0]) {
        value /= 1024.0;
        ++unit;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f %s", value, units[unit]);
    return buf;
}

}  // namespace agentcore::tool

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
    return value.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
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

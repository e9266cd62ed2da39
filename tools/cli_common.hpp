#pragma once
// What every command of the `agentcore` tool shares: exit codes, the error type, terminal
// detection and colours, JSON output.

#include <agentcore/error.hpp>
#include <agentcore/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace agentcore::tool {

/// The tool's exit codes.
enum ExitCode : int {
    exit_ok = 0,        ///< done, nothing wrong
    exit_problems = 1,  ///< the command ran and found problems (verify, ls with bad headers)
    exit_failure = 2,   ///< usage or I/O error, or a file that cannot be read as a session
};

/// An error that ends a command; what() is printed on stderr as is ("FILE:LINE: reason").
class ToolError : public std::runtime_error {
public:
    explicit ToolError(const std::string& message, int exit_code = exit_failure,
                       std::optional<ErrorCode> library_code = std::nullopt)
        : std::runtime_error(message), exit_code_(exit_code), library_code_(library_code) {}
    [[nodiscard]] int exit_code() const noexcept { return exit_code_; }
    /// The library's error code when a SessionError caused this one.
    [[nodiscard]] std::optional<ErrorCode> library_code() const noexcept { return library_code_; }

private:
    int exit_code_;
    std::optional<ErrorCode> library_code_;
};

/// True when standard output (fd 1) or standard error (fd 2) is a terminal.
bool stdout_is_terminal() noexcept;
bool stderr_is_terminal() noexcept;

/// Colours are used only on a terminal, and never when NO_COLOR is set to a non-empty value
/// (https://no-color.org).
bool colours_wanted() noexcept;

/// SGR colouring that is a no-op when disabled.
class Style {
public:
    explicit Style(bool enabled) : enabled_(enabled) {}
    [[nodiscard]] bool enabled() const noexcept { return enabled_; }
    /// `text` wrapped in ESC[<sgr>m ... ESC[0m when enabled.
    [[nodiscard]] std::string paint(std::string_view sgr, std::string_view text) const;

private:
    bool enabled_;
};

/// Pretty JSON (two-space indent, UTF-8 kept) and a trailing newline; invalid UTF-8 replaced.
std::string pretty_json(const Json& value);

/// Dollars with four decimals: "$1.3600".
std::string format_cost(double dollars);

/// A byte count for humans: "812 B", "12.4 KiB", "3.1 MiB".
std::string format_size(std::uint64_t bytes);

}  // namespace agentcore::tool

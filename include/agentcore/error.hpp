#pragma once
// The one exception type of the library and its codes (SPEC §7).

#include <stdexcept>
#include <string>
#include <string_view>

namespace agentcore {

/// What went wrong; stable, meant to be switched on.
enum class ErrorCode {
    not_found,            ///< an entry, session or file that does not exist
    already_exists,       ///< an id that is already taken
    invalid_session,      ///< a session (header, tree, id) that breaks the format
    invalid_entry,        ///< an entry or line that breaks the format
    invalid_fork_target,  ///< a fork target that is unknown or not allowed
    locked,               ///< another writer holds the session
    storage,              ///< the storage failed (I/O, poisoned)
};

/// The stable spelling of a code, as it appears in messages ("not_found", ...).
constexpr std::string_view to_string(ErrorCode code) noexcept {
    switch (code) {
        case ErrorCode::not_found: return "not_found";
        case ErrorCode::already_exists: return "already_exists";
        case ErrorCode::invalid_session: return "invalid_session";
        case ErrorCode::invalid_entry: return "invalid_entry";
        case ErrorCode::invalid_fork_target: return "invalid_fork_target";
        case ErrorCode::locked: return "locked";
        case ErrorCode::storage: return "storage";
    }
    return "unknown";
}

/// Thrown by every operation of the library.
///
/// what() reads "[agentcore.<code>] <detail>"; the detail names the entry id, session, file and
/// line involved, never the conversation's text.
class SessionError : public std::runtime_error {
public:
    SessionError(ErrorCode code, const std::string& detail)
        : std::runtime_error("[agentcore." + std::string(to_string(code)) + "] " + detail),
          code_(code) {}

    /// The error's code.
    [[nodiscard]] ErrorCode code() const noexcept { return code_; }

private:
    ErrorCode code_;
};

}  // namespace agentcore

#pragma once
// The one exception type of the library and its codes (SPEC §7).

#include <cstdint>
#include <memory>
#include <optional>
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
    invalid_query,        ///< a search query that is empty, too long or malformed
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
        case ErrorCode::invalid_query: return "invalid_query";
    }
    return "unknown";
}

/// Where an error happened: each part is set when the thrower knows it. A program reads these
/// instead of parsing what().
struct ErrorLocation {
    std::optional<std::string> file{};      ///< the file involved
    std::optional<std::uint64_t> line{};    ///< 1-based line of that file
    std::optional<std::string> session{};   ///< the session id
    std::optional<std::string> entry_id{};  ///< the entry id
    std::optional<std::uint64_t> seq{};     ///< the entry's position in a database storage

    /// This location with the parts of `outer` it lacks filled in (its own parts win).
    [[nodiscard]] ErrorLocation merged(const ErrorLocation& outer) const {
        ErrorLocation out = *this;
        if (!out.file) out.file = outer.file;
        if (!out.line) out.line = outer.line;
        if (!out.session) out.session = outer.session;
        if (!out.entry_id) out.entry_id = outer.entry_id;
        if (!out.seq) out.seq = outer.seq;
        return out;
    }
};

/// Thrown by every operation of the library.
///
/// what() reads "[agentcore.<code>] <detail>"; the detail names the entry id, session, file and
/// line involved, never the conversation's text. The same parts are readable one by one:
/// code(), detail(), file(), line(), session(), entry_id(), seq().
class SessionError : public std::runtime_error {
public:
    SessionError(ErrorCode code, const std::string& detail)
        : SessionError(code, detail, ErrorLocation{}) {}

    /// An error whose location parts are known; `detail` is the text after the prefix.
    SessionError(ErrorCode code, const std::string& detail, ErrorLocation location)
        : std::runtime_error(std::string(prefix(code)) + detail),
          code_(code),
          location_(std::make_shared<const ErrorLocation>(std::move(location))) {}

    /// The same error seen from further out: `context` goes before the detail ("file.jsonl:3: "
    /// ...) and `outer`'s parts fill those this error lacks. The prefix is written once.
    ///
    /// Example: `catch (const SessionError& e) { throw e.wrapped(path + ":3: ", {.file = path,
    /// .line = 3}); }`
    [[nodiscard]] SessionError wrapped(std::string_view context,
                                       const ErrorLocation& outer = {}) const {
        return SessionError(code_, std::string(context) + std::string(detail()),
                            location_->merged(outer));
    }

    /// The error's code.
    [[nodiscard]] ErrorCode code() const noexcept { return code_; }
    /// what() without its "[agentcore.<code>] " prefix.
    [[nodiscard]] std::string_view detail() const noexcept {
        return std::string_view(what()).substr(prefix(code_).size());
    }
    /// All location parts at once.
    [[nodiscard]] const ErrorLocation& location() const noexcept { return *location_; }
    [[nodiscard]] const std::optional<std::string>& file() const noexcept {
        return location_->file;
    }
    [[nodiscard]] std::optional<std::uint64_t> line() const noexcept { return location_->line; }
    [[nodiscard]] const std::optional<std::string>& session() const noexcept {
        return location_->session;
    }
    [[nodiscard]] const std::optional<std::string>& entry_id() const noexcept {
        return location_->entry_id;
    }
    [[nodiscard]] std::optional<std::uint64_t> seq() const noexcept { return location_->seq; }

private:
    static std::string_view prefix(ErrorCode code) noexcept {
        switch (code) {
            case ErrorCode::not_found: return "[agentcore.not_found] ";
            case ErrorCode::already_exists: return "[agentcore.already_exists] ";
            case ErrorCode::invalid_session: return "[agentcore.invalid_session] ";
            case ErrorCode::invalid_entry: return "[agentcore.invalid_entry] ";
            case ErrorCode::invalid_fork_target: return "[agentcore.invalid_fork_target] ";
            case ErrorCode::locked: return "[agentcore.locked] ";
            case ErrorCode::storage: return "[agentcore.storage] ";
            case ErrorCode::invalid_query: return "[agentcore.invalid_query] ";
        }
        return "[agentcore.unknown] ";
    }

    ErrorCode code_;
    std::shared_ptr<const ErrorLocation> location_;  // shared: copying an exception never throws
};

}  // namespace agentcore

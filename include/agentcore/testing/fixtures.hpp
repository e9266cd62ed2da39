#pragma once
// Fixtures for the test suites of agent applications:
//   - deterministic sessions: a clock that steps by a fixed amount per call and seeded ids, so
//     that two runs write byte-identical files (deterministic_session, temp_jsonl_session);
//   - sessions from a compact description, text or builder chain (session_from, build_session,
//     SessionBuilder): turns, tool calls paired by name, branches, labels, compactions;
//   - readable text of messages, entries and contexts, as `agentcore tree` shows them
//     (describe_message, describe_entry, describe_context), and the predicates behind the
//     matchers of the Catch2 and GoogleTest adapters (roles_of, tool_pairs_of, passes_through);
//   - golden files: a stable rendering of a context and of a session tree (render_context,
//     render_tree) and check_golden, which writes the expected file when AGENTCORE_UPDATE_GOLDEN
//     asks and otherwise reports a line diff.
//
// Depends on the core library only. The adapters are agentcore/testing/catch2.hpp (StringMaker,
// matchers) and agentcore/testing/gtest.hpp (PrintTo, matchers).
//
// The namespace is agentcore::fixtures, not agentcore::testing: a test that says
// `using namespace agentcore;` can then still write GoogleTest's `testing::` unambiguously.
//
// The description language, one item per line (leading whitespace, blank lines and lines starting
// with `#` are ignored, so branches may be indented as the test likes):
//
//     [@name] user: TEXT                      a user message
//     [@name] assistant: TEXT                 an assistant reply (TEXT may be empty)
//             -> TOOL {JSON}                  a tool call of the assistant line above; the
//             -> TOOL#ID {JSON}               arguments (a JSON object) are optional; ids are
//                                             call_1, call_2, ... unless given
//     [@name] tool TOOL: TEXT                 the result of the oldest unanswered call of TOOL on
//                                             the branch (an error when there is none)
//     [@name] tool TOOL#ID: TEXT              the result for call ID, answered or not (orphans)
//     [@name] tool TOOL (error): TEXT         a result with is_error set (either form)
//     [@name] compaction [keep @a] [tokens N]: SUMMARY
//                                             a compaction; `keep @a`: first kept entry @a
//     from @a        /  from root             continue from @a / before the first entry (move_to)
//     [@name] from @a: SUMMARY                the same with a branch summary (entry @name)
//     [@name] label @a: TEXT                  a label on @a (empty TEXT clears it)
//     [@name] model: PROVIDER/MODEL           a model change; later assistant replies carry it
//     [@name] thinking: LEVEL                 a thinking level change
//     [@name] tools: NAME, NAME               the active tools
//     [@name] name: TEXT                      the session name
//     [@name] custom TYPE[: JSON]             a custom entry
//     [@name] custom_message TYPE: TEXT       a custom message
//     [@name] leaf @a   /  leaf none          a leaf entry (set_leaf_id)
//
// `@name` names the entry the line appends; a test reads its id with `id("name")`. In TEXT, `\n`
// is a line break and `\\` a backslash. An error names the description's line and column:
// "[agentcore.invalid_entry] session description line 4, column 7: ...".
//
// Example:
//
//     auto fx = agentcore::fixtures::session_from(R"(
//         @q user: Which files are there?
//            assistant: Let me look.
//              -> ls {"path": "."}
//            tool ls: main.cpp
//            assistant: One file.
//         from @q: The user asked about files.
//            user: And the tests?
//     )");
//     auto context = build_context(fx.session);  // user, branch_summary, user

#include <agentcore/context.hpp>
#include <agentcore/detail/terminal_text.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/ids.hpp>
#include <agentcore/json.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/memory/memory_storage.hpp>
#include <agentcore/messages.hpp>
#include <agentcore/session_ops.hpp>
#include <agentcore/storage.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace agentcore::fixtures {

// ---------------------------------------------------------------------------------------------
// Deterministic sessions

/// How a deterministic session starts: the clock, the seed of its ids, its header.
struct FixtureOptions {
    std::uint64_t seed = 1;                 ///< seeds the entry ids
    std::int64_t start_ms = 1767225600000;  ///< 2026-01-01T00:00:00.000Z
    std::int64_t step_ms = 1000;            ///< the clock advances this much per call
    std::string session_id = "test-session";
    std::string cwd = "/work/project";
};

/// An Environment whose clock starts at `options.start_ms` and advances `options.step_ms` per
/// call, and whose randomness is a std::mt19937_64 seeded with `options.seed` (the standard fixes
/// its sequence, so ids are the same on every platform).
inline Environment deterministic_environment(const FixtureOptions& options = {}) {
    return Environment::deterministic(options.start_ms, options.seed, options.step_ms);
}

/// The header of a deterministic session: its id, cwd, and the start time as creation time.
inline SessionHeader deterministic_header(const FixtureOptions& options = {}) {
    SessionHeader header;
    header.id = options.session_id;
    header.timestamp = format_timestamp(options.start_ms);
    header.cwd = options.cwd;
    return header;
}

using InMemorySession = Session<InMemorySessionStorage<>>;
using JsonlSession = Session<JsonlSessionStorage>;

/// An empty in-memory session on a deterministic environment.
/// Example: `auto session = agentcore::fixtures::deterministic_session({.seed = 7});`
inline InMemorySession deterministic_session(const FixtureOptions& options = {}) {
    return InMemorySession(InMemorySessionStorage<>(deterministic_header(options),
                                                    deterministic_environment(options)));
}

/// A folder of its own for one test, removed with everything in it when the object goes.
///
/// It is made under $AGENTCORE_TEST_TMP, else $TMPDIR, else /tmp, and named with the process id
/// and a counter, so that tests run in parallel (`ctest -j`) never share one.
/// Throws: SessionError(storage) when the folder cannot be made.
class TempFolder {
public:
    explicit TempFolder(std::string_view prefix = "agentcore-test") {
        static std::atomic<unsigned> counter{0};
        std::filesystem::path root = "/tmp";
        for (const char* variable : {"AGENTCORE_TEST_TMP", "TMPDIR"}) {
            const char* value = std::getenv(variable);
            if (value != nullptr && *value != '\0') {
                root = value;
                break;
            }
        }
        const std::filesystem::path path =
            root / (std::string(prefix) + "-" + std::to_string(::getpid()) + "-" +
                    std::to_string(counter++));
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
        std::filesystem::create_directories(path, ec);
        if (ec)
            throw SessionError(ErrorCode::storage,
                               "cannot make the folder '" + path.string() + "': " + ec.message());
        path_ = path.string();
    }
    TempFolder(const TempFolder&) = delete;
    TempFolder& operator=(const TempFolder&) = delete;
    TempFolder(TempFolder&& other) noexcept : path_(std::exchange(other.path_, std::string())) {}
    TempFolder& operator=(TempFolder&& other) noexcept {
        if (this != &other) {
            remove();
            path_ = std::exchange(other.path_, std::string());
        }
        return *this;
    }
    ~TempFolder() { remove(); }

    /// The folder's path.
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    /// The path of a file in the folder.
    [[nodiscard]] std::string file(std::string_view name) const {
        return path_ + "/" + std::string(name);
    }

private:
    void remove() noexcept {
        if (path_.empty()) return;
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
        path_.clear();
    }

    std::string path_;
};

/// A JSONL session in a folder of its own; the folder goes when the object does (after the
/// session, which is declared after it).
struct TempJsonlSession {
    TempFolder folder;
    std::string path;  ///< the session file: <folder>/<session id>.jsonl
    JsonlSession session;
};

/// A new JSONL session file on a deterministic environment, in a TempFolder. Appends are left to
/// the OS (Durability::os_buffered): tests need no fdatasync.
/// Example: `auto fx = agentcore::fixtures::temp_jsonl_session(); append_message(fx.session, ...);`
inline TempJsonlSession temp_jsonl_session(const FixtureOptions& options = {},
                                           Dialect dialect = Dialect::native) {
    TempFolder folder;
    std::string path = folder.file(options.session_id + ".jsonl");
    JsonlStorageOptions storage_options;
    storage_options.durability = Durability::os_buffered;
    storage_options.dialect = dialect;
    storage_options.environment = deterministic_environment(options);
    auto storage = JsonlSessionStorage::create(path, deterministic_header(options),
                                               std::move(storage_options));
    return TempJsonlSession{std::move(folder), std::move(path), JsonlSession(std::move(storage))};
}

// ---------------------------------------------------------------------------------------------
// Sessions from a description: the builder chain

/// Entry ids by the names a description gave them.
class Anchors {
public:
    /// The id of the entry named `name` (without the `@`). Unknown name: not_found, naming the
    /// names there are.
    [[nodiscard]] const std::string& operator[](std::string_view name) const {
        auto it = ids_.find(name);
        if (it == ids_.end()) {
            std::string known;
            for (const auto& [n, id] : ids_) known += (known.empty() ? "@" : ", @") + n;
            throw SessionError(ErrorCode::not_found,
                               "no entry is named '@" + std::string(name) +
                                   "' (named: " + (known.empty() ? "none" : known) + ")");
        }
        return it->second;
    }
    [[nodiscard]] bool contains(std::string_view name) const {
        return ids_.find(name) != ids_.end();
    }
    [[nodiscard]] const std::map<std::string, std::string, std::less<>>& all() const noexcept {
        return ids_;
    }
    /// Names an entry. A name given twice: already_exists.
    void add(std::string name, std::string id) {
        if (contains(name))
            throw SessionError(ErrorCode::already_exists, "the name '@" + name +
                                                              "' is already given to entry '" +
                                                              ids_.find(name)->second + "'");
        ids_.emplace(std::move(name), std::move(id));
    }

private:
    std::map<std::string, std::string, std::less<>> ids_;
};

/// A tool call of an assistant reply built by SessionBuilder; an empty id becomes call_N.
struct ToolCall {
    std::string name;
    Json arguments = Json::object();
    std::string id;
};

/// What the messages a SessionBuilder makes carry.
struct BuilderOptions {
    std::string api = "test";
    std::string provider = "test";  ///< until a model change says otherwise
    std::string model = "scripted";
};

/// Builds a session tree with the library's own operations, one call per entry, on the session's
/// clock. Every method returns the builder, so a test chains them:
///
///     SessionBuilder b(session);
///     b.user("Which files?").as("q")
///      .assistant("Let me look.", {{"ls", {{"path", "."}}}})
///      .tool("ls", "main.cpp")
///      .from("q", "The user asked about files.")
///      .user("And the tests?");
///
/// Errors are SessionErrors: an unknown name is not_found, a name given twice already_exists, a
/// tool result that answers no call invalid_entry; the session's own errors pass through.
template <SessionStorage S>
class SessionBuilder {
public:
    explicit SessionBuilder(Session<S>& session, BuilderOptions options = {})
        : session_(session), options_(std::move(options)) {}

    /// A user message with plain string content.
    SessionBuilder& user(std::string text) {
        UserMessage m;
        m.content = std::move(text);
        m.timestamp = now();
        return appended(append_message(session_, AgentMessage(std::move(m))));
    }

    /// An assistant reply: a text block (none when `text` is empty), then the tool calls; its
    /// stop reason is tool_use when it calls tools, else stop.
    SessionBuilder& assistant(std::string text, std::vector<ToolCall> calls = {}) {
        AssistantMessage m;
        if (!text.empty()) m.content.emplace_back(TextContent{std::move(text), {}});
        for (auto& call : calls) {
            if (call.id.empty()) call.id = "call_" + std::to_string(++calls_made_);
            if (!call.arguments.is_object())
                throw SessionError(
                    ErrorCode::invalid_entry,
                    "the arguments of tool call '" + call.name + "' are not a JSON object");
            m.content.emplace_back(ToolCallContent{
                std::move(call.id), std::move(call.name), std::move(call.arguments), {}});
        }
        m.api = options_.api;
        m.provider = options_.provider;
        m.model = options_.model;
        m.stop_reason = calls.empty() ? "stop" : "tool_use";
        m.timestamp = now();
        return appended(append_message(session_, AgentMessage(std::move(m))));
    }

    /// The result of the oldest call of tool `name` on the current branch that has no result yet.
    /// None: invalid_entry, naming the calls that are unanswered.
    SessionBuilder& tool(std::string_view name, std::string text, bool is_error = false) {
        const auto open = unanswered_calls();
        for (const auto& [call_id, tool_name] : open)
            if (tool_name == name)
                return tool_result_for(call_id, std::string(name), std::move(text), is_error);
        std::string listed;
        for (const auto& [call_id, tool_name] : open) {
            if (!listed.empty()) listed += ", ";
            listed += tool_name;
            listed += '#';
            listed += call_id;
        }
        throw SessionError(
            ErrorCode::invalid_entry,
            "no unanswered call of tool '" + std::string(name) +
                "' on the branch (unanswered: " + (listed.empty() ? "none" : listed) + ")");
    }

    /// A tool result for `call_id`, whether or not such a call is on the branch (an orphan
    /// result when it is not).
    SessionBuilder& tool_result_for(std::string call_id, std::string name, std::string text,
                                    bool is_error = false) {
        ToolResultMessage m;
        m.tool_call_id = std::move(call_id);
        m.tool_name = std::move(name);
        m.content.emplace_back(TextContent{std::move(text), {}});
        m.is_error = is_error;
        m.timestamp = now();
        return appended(append_message(session_, AgentMessage(std::move(m))));
    }

    /// A compaction: its summary, the first kept entry (by name; none: only what follows is
    /// kept) and the tokens before it.
    SessionBuilder& compaction(std::string summary, std::optional<std::string> keep = std::nullopt,
                               std::int64_t tokens_before = 0) {
        std::optional<std::string> first_kept;
        if (keep) first_kept = id(*keep);
        return appended(
            append_compaction(session_, std::move(summary), std::move(first_kept), tokens_before));
    }

    /// Continues from the entry named `name` (move_to); with a summary, a branch summary entry
    /// is appended there and may be named with as().
    SessionBuilder& from(std::string_view name, std::optional<std::string> summary = std::nullopt) {
        return move(std::optional<std::string>(id(name)), std::move(summary));
    }

    /// Continues before the first entry: the next entry is a new root.
    SessionBuilder& from_root(std::optional<std::string> summary = std::nullopt) {
        return move(std::nullopt, std::move(summary));
    }

    /// Labels the entry named `name`; an empty label clears it.
    SessionBuilder& label(std::string_view name, std::string text) {
        const std::string& target = id(name);
        return appended(
            append_label(session_, target, std::optional<std::string>(std::move(text))));
    }

    /// A model change; later assistant replies carry this provider and model.
    SessionBuilder& model(std::string provider, std::string model_id) {
        options_.provider = provider;
        options_.model = model_id;
        return appended(append_model_change(session_, std::move(provider), std::move(model_id)));
    }

    SessionBuilder& thinking_level(std::string level) {
        return appended(append_thinking_level_change(session_, std::move(level)));
    }

    SessionBuilder& tools(std::vector<std::string> names) {
        return appended(append_active_tools_change(session_, std::move(names)));
    }

    SessionBuilder& session_name(std::string name) {
        return appended(append_session_name(session_, name));
    }

    SessionBuilder& custom(std::string type, Json data = {}) {
        return appended(append_custom_entry(session_, std::move(type), std::move(data)));
    }

    SessionBuilder& custom_message(std::string type, std::string text) {
        return appended(
            append_custom_message_entry(session_, std::move(type), Content(std::move(text))));
    }

    /// Moves the leaf to the entry named `name` (a leaf entry, set_leaf_id).
    SessionBuilder& leaf(std::string_view name) {
        set_leaf_id(session_, std::optional<std::string>(id(name)));
        return appended(newest_entry_id());
    }

    /// Moves the leaf before the first entry (a leaf entry without target).
    SessionBuilder& leaf_none() {
        set_leaf_id(session_, std::nullopt);
        return appended(newest_entry_id());
    }

    /// Names the entry the previous call appended. Nothing appended yet (or a move without a
    /// summary, which appends no entry of its own): invalid_entry; a name given twice:
    /// already_exists.
    SessionBuilder& as(std::string name) {
        if (!last_)
            throw SessionError(
                ErrorCode::invalid_entry,
                "'@" + name + "' names nothing: the step before it appended no entry to name");
        anchors_.add(std::move(name), *last_);
        return *this;
    }

    /// The id of the entry named `name`. Unknown: not_found.
    [[nodiscard]] const std::string& id(std::string_view name) const { return anchors_[name]; }
    [[nodiscard]] const Anchors& anchors() const noexcept { return anchors_; }
    /// The id of the entry the previous call appended, if any.
    [[nodiscard]] const std::optional<std::string>& last() const noexcept { return last_; }
    [[nodiscard]] Session<S>& session() noexcept { return session_; }

private:
    std::int64_t now() const { return session_.storage().environment().now_ms(); }

    SessionBuilder& appended(std::optional<std::string> id) {
        last_ = std::move(id);
        return *this;
    }

    std::optional<std::string> newest_entry_id() const {
        const auto& storage = session_.storage();
        const std::size_t count = storage.entry_count();
        if (count == 0) return std::nullopt;
        auto entries = storage.get_entries({count - 1, 1});
        return entries.empty() ? std::nullopt : std::optional<std::string>(id_of(*entries.front()));
    }

    SessionBuilder& move(std::optional<std::string> target, std::optional<std::string> summary) {
        if (!summary) {
            move_to(session_, std::move(target));
            return appended(std::nullopt);
        }
        return appended(move_to(session_, std::move(target),
                                BranchSummaryInput{std::move(*summary), {}, std::nullopt, false}));
    }

    // The calls on the current branch that no later tool result answers, oldest first.
    std::vector<std::pair<std::string, std::string>> unanswered_calls() const {
        std::vector<std::pair<std::string, std::string>> open;
        auto visit = [&open](const AgentMessage& message) {
            if (const auto* a = std::get_if<AssistantMessage>(&message)) {
                for (const auto& block : a->content)
                    if (const auto* call = std::get_if<ToolCallContent>(&block))
                        open.emplace_back(call->id, call->name);
            } else if (const auto* r = std::get_if<ToolResultMessage>(&message)) {
                std::erase_if(open, [r](const auto& c) { return c.first == r->tool_call_id; });
            }
        };
        for (const auto& entry : get_branch(session_)) {
            if (const auto* m = message_of(*entry))
                visit(*m);
            else if (const auto* c = std::get_if<CompactionEntry>(entry.get());
                     c && c->retained_tail)
                for (const auto& m2 : *c->retained_tail) visit(m2);
        }
        return open;
    }

    Session<S>& session_;
    BuilderOptions options_;
    Anchors anchors_;
    std::optional<std::string> last_;
    std::size_t calls_made_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Sessions from a description: the text form

namespace detail {

inline bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }
inline bool is_name_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}

// One line of a description being read; positions are 0-based, columns in errors 1-based.
class DescriptionLine {
public:
    DescriptionLine(std::string_view text, std::size_t number) : text_(text), number_(number) {}

    [[noreturn]] void fail(std::size_t pos, const std::string& message) const {
        throw SessionError(ErrorCode::invalid_entry, "session description line " +
                                                         std::to_string(number_) + ", column " +
                                                         std::to_string(pos + 1) + ": " + message);
    }
    [[nodiscard]] std::size_t number() const noexcept { return number_; }
    [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
    [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }
    [[nodiscard]] char peek() const noexcept { return at_end() ? '\0' : text_[pos_]; }
    [[nodiscard]] bool starts_with(std::string_view s) const noexcept {
        return text_.substr(pos_).substr(0, s.size()) == s;
    }
    void skip(std::size_t n) noexcept { pos_ = std::min(text_.size(), pos_ + n); }
    void skip_blanks() noexcept {
        while (!at_end() && is_blank(text_[pos_])) ++pos_;
    }
    // A run of name characters (possibly empty).
    std::string_view word() noexcept {
        const std::size_t start = pos_;
        while (!at_end() && is_name_char(text_[pos_])) ++pos_;
        return text_.substr(start, pos_ - start);
    }
    // Everything up to (not including) one of `stops`, or to the end.
    std::string_view until_any(std::string_view stops) noexcept {
        const std::size_t start = pos_;
        while (!at_end() && stops.find(text_[pos_]) == std::string_view::npos) ++pos_;
        return text_.substr(start, pos_ - start);
    }
    // `@name`: the name; fails at the position when there is none.
    std::string anchor(std::string_view what) {
        if (peek() != '@') fail(pos_, "expected @name of " + std::string(what));
        skip(1);
        const std::size_t start = pos_;
        const std::string_view name = word();
        if (name.empty()) fail(start, "expected a name after '@' (letters, digits, '_', '.', '-')");
        return std::string(name);
    }
    // `:` then the rest of the line, trimmed, with \n and \\ unescaped.
    std::string text_after_colon(std::string_view item) {
        skip_blanks();
        if (peek() != ':') fail(pos_, "expected ':' after " + std::string(item));
        skip(1);
        skip_blanks();
        text_pos_ = pos_;
        return rest_text();
    }
    // Where the text that text_after_colon returned starts.
    [[nodiscard]] std::size_t text_pos() const noexcept { return text_pos_; }
    std::string rest_text() {
        std::string_view rest = agentcore::detail::trim(text_.substr(std::min(pos_, text_.size())));
        pos_ = text_.size();
        std::string out;
        out.reserve(rest.size());
        for (std::size_t i = 0; i < rest.size(); ++i) {
            if (rest[i] == '\\' && i + 1 < rest.size() &&
                (rest[i + 1] == 'n' || rest[i + 1] == '\\')) {
                out.push_back(rest[i + 1] == 'n' ? '\n' : '\\');
                ++i;
            } else {
                out.push_back(rest[i]);
            }
        }
        return out;
    }
    // A JSON value from here to the end of the line; an error names the column where it broke.
    Json json_rest(std::string_view what) {
        skip_blanks();
        const std::size_t start = pos_;
        const std::string_view rest = text_.substr(start);
        pos_ = text_.size();
        try {
            return Json::parse(rest);
        } catch (const Json::parse_error& e) {
            const std::size_t at = e.byte == 0 ? 0 : static_cast<std::size_t>(e.byte) - 1;
            fail(start + std::min(at, rest.size()),
                 "the " + std::string(what) + " is not valid JSON");
        }
    }
    void expect_end(std::string_view after) const {
        if (!at_end()) fail(pos_, "unexpected text after " + std::string(after));
    }

private:
    std::string_view text_;
    std::size_t number_;
    std::size_t pos_ = 0;
    std::size_t text_pos_ = 0;
};

// An assistant line waiting for its `->` lines.
struct PendingAssistant {
    std::size_t line = 0;
    std::size_t column = 0;
    std::optional<std::string> name;
    std::string text;
    std::vector<ToolCall> calls;
};

template <SessionStorage S>
class DescriptionReader {
public:
    explicit DescriptionReader(SessionBuilder<S>& builder) : builder_(builder) {}

    void read(std::string_view description) {
        std::size_t number = 0;
        std::size_t begin = 0;
        while (begin <= description.size()) {
            std::size_t end = description.find('\n', begin);
            if (end == std::string_view::npos) end = description.size();
            std::string_view text = description.substr(begin, end - begin);
            if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
            read_line(DescriptionLine(text, ++number));
            begin = end + 1;
        }
        flush();
    }

private:
    // Runs one builder step; its SessionError gains the line and column of the item.
    template <class Step>
    void run(std::size_t number, std::size_t pos, Step&& step) {
        try {
            step();
        } catch (const SessionError& e) {
            throw e.wrapped("session description line " + std::to_string(number) + ", column " +
                            std::to_string(pos + 1) + ": ");
        }
    }

    void name_it(std::size_t number, std::size_t pos, const std::optional<std::string>& name) {
        if (name) run(number, pos, [&] { builder_.as(*name); });
    }

    void flush() {
        if (!pending_) return;
        PendingAssistant p = std::move(*pending_);
        pending_.reset();
        run(p.line, p.column, [&] { builder_.assistant(std::move(p.text), std::move(p.calls)); });
        name_it(p.line, p.column, p.name);
    }

    void read_call(DescriptionLine& line) {
        const std::size_t arrow = line.pos();
        if (!pending_)
            line.fail(arrow,
                      "a tool call ('->') must follow an assistant line or another tool call");
        line.skip(2);
        line.skip_blanks();
        ToolCall call;
        const std::size_t name_pos = line.pos();
        call.name = std::string(line.until_any(" \t#{"));
        if (call.name.empty()) line.fail(name_pos, "expected the tool's name after '->'");
        if (line.peek() == '#') {
            line.skip(1);
            const std::size_t id_pos = line.pos();
            call.id = std::string(line.until_any(" \t{"));
            if (call.id.empty()) line.fail(id_pos, "expected a call id after '#'");
        }
        line.skip_blanks();
        if (!line.at_end()) {
            const std::size_t args_pos = line.pos();
            call.arguments = line.json_rest("tool call's arguments");
            if (!call.arguments.is_object())
                line.fail(args_pos, "the tool call's arguments must be a JSON object");
        }
        for (const auto& other : pending_->calls)
            if (!call.id.empty() && other.id == call.id)
                line.fail(name_pos, "the call id '" + call.id + "' is used twice in this reply");
        pending_->calls.push_back(std::move(call));
    }

    void read_line(DescriptionLine line) {
        line.skip_blanks();
        if (line.at_end() || line.peek() == '#') return;
        if (line.starts_with("->")) return read_call(line);
        flush();

        const std::size_t start = line.pos();
        std::optional<std::string> name;
        if (line.peek() == '@') {
            name = line.anchor("the entry");
            if (!is_blank(line.peek()))
                line.fail(line.pos(), "expected a space after the entry's name");
            line.skip_blanks();
        }
        const std::size_t item_pos = line.pos();
        const std::string item(line.word());
        const std::size_t n = line.number();
        if (item.empty())
            line.fail(item_pos, "expected an item (user, assistant, tool, compaction, from, ...)");

        if (item == "user") {
            std::string text = line.text_after_colon("user");
            run(n, item_pos, [&] { builder_.user(std::move(text)); });
        } else if (item == "assistant") {
            pending_ = PendingAssistant{n, item_pos, name, line.text_after_colon("assistant"), {}};
            return;  // named when flushed
        } else if (item == "tool") {
            read_tool(line, item_pos);
        } else if (item == "compaction") {
            read_compaction(line, item_pos);
        } else if (item == "from") {
            read_from(line, name, start);
            return;
        } else if (item == "label") {
            line.skip_blanks();
            const std::size_t target_pos = line.pos();
            const std::string target = line.anchor("the labelled entry");
            std::string text = line.text_after_colon("the label's target");
            run(n, target_pos, [&] { builder_.label(target, std::move(text)); });
        } else if (item == "model") {
            const std::string value = line.text_after_colon("model");
            const auto slash = value.find('/');
            if (slash == std::string::npos || slash == 0 || slash + 1 == value.size())
                line.fail(line.text_pos(), "expected PROVIDER/MODEL after 'model:'");
            run(n, item_pos,
                [&] { builder_.model(value.substr(0, slash), value.substr(slash + 1)); });
        } else if (item == "thinking") {
            std::string level = line.text_after_colon("thinking");
            if (level.empty())
                line.fail(line.text_pos(), "expected a thinking level after 'thinking:'");
            run(n, item_pos, [&] { builder_.thinking_level(std::move(level)); });
        } else if (item == "tools") {
            const std::string list = line.text_after_colon("tools");
            std::vector<std::string> names;
            std::size_t from = 0;
            while (!list.empty() && from <= list.size()) {
                std::size_t comma = list.find(',', from);
                if (comma == std::string::npos) comma = list.size();
                std::string_view one =
                    agentcore::detail::trim(std::string_view(list).substr(from, comma - from));
                if (one.empty()) line.fail(item_pos, "an empty tool name in 'tools:'");
                names.emplace_back(one);
                from = comma + 1;
            }
            run(n, item_pos, [&] { builder_.tools(std::move(names)); });
        } else if (item == "name") {
            std::string text = line.text_after_colon("name");
            run(n, item_pos, [&] { builder_.session_name(std::move(text)); });
        } else if (item == "custom") {
            line.skip_blanks();
            const std::size_t type_pos = line.pos();
            std::string type(line.until_any(" \t:"));
            if (type.empty()) line.fail(type_pos, "expected the custom entry's type");
            line.skip_blanks();
            Json data;
            if (line.peek() == ':') {
                line.skip(1);
                data = line.json_rest("custom entry's data");
            }
            line.expect_end("the custom entry's type");
            run(n, item_pos, [&] { builder_.custom(std::move(type), std::move(data)); });
        } else if (item == "custom_message") {
            line.skip_blanks();
            const std::size_t type_pos = line.pos();
            std::string type(line.until_any(" \t:"));
            if (type.empty()) line.fail(type_pos, "expected the custom message's type");
            std::string text = line.text_after_colon("the custom message's type");
            run(n, item_pos, [&] { builder_.custom_message(std::move(type), std::move(text)); });
        } else if (item == "leaf") {
            line.skip_blanks();
            const std::size_t target_pos = line.pos();
            if (line.peek() == '@') {
                const std::string target = line.anchor("the leaf");
                line.expect_end("the leaf's target");
                run(n, target_pos, [&] { builder_.leaf(target); });
            } else if (line.word() == "none") {
                line.expect_end("'leaf none'");
                run(n, target_pos, [&] { builder_.leaf_none(); });
            } else {
                line.fail(target_pos, "expected @name or 'none' after 'leaf'");
            }
        } else {
            line.fail(item_pos,
                      "unknown item '" + item +
                          "' (expected user, assistant, tool, compaction, from, label, model, "
                          "thinking, tools, name, custom, custom_message or leaf)");
        }
        name_it(n, start, name);
    }

    void read_tool(DescriptionLine& line, std::size_t item_pos) {
        line.skip_blanks();
        const std::size_t name_pos = line.pos();
        std::string tool(line.until_any(" \t#(:"));
        if (tool.empty()) line.fail(name_pos, "expected the tool's name after 'tool'");
        std::optional<std::string> call_id;
        if (line.peek() == '#') {
            line.skip(1);
            const std::size_t id_pos = line.pos();
            call_id = std::string(line.until_any(" \t(:"));
            if (call_id->empty()) line.fail(id_pos, "expected a call id after '#'");
        }
        line.skip_blanks();
        bool is_error = false;
        if (line.peek() == '(') {
            if (!line.starts_with("(error)")) line.fail(line.pos(), "expected '(error)' or ':'");
            line.skip(7);
            is_error = true;
        }
        std::string text = line.text_after_colon("the tool result's name");
        run(line.number(), call_id ? item_pos : name_pos, [&] {
            if (call_id)
                builder_.tool_result_for(*call_id, std::move(tool), std::move(text), is_error);
            else
                builder_.tool(tool, std::move(text), is_error);
        });
    }

    void read_compaction(DescriptionLine& line, std::size_t item_pos) {
        std::optional<std::string> keep;
        std::size_t keep_pos = item_pos;
        std::int64_t tokens = 0;
        for (;;) {
            line.skip_blanks();
            if (line.peek() == ':' || line.at_end()) break;
            const std::size_t option_pos = line.pos();
            const std::string_view option = line.word();
            line.skip_blanks();
            if (option == "keep") {
                keep_pos = line.pos();
                keep = line.anchor("the first kept entry");
            } else if (option == "tokens") {
                const std::size_t number_pos = line.pos();
                const std::string_view digits = line.word();
                if (digits.empty() ||
                    !std::all_of(digits.begin(), digits.end(),
                                 [](char c) { return c >= '0' && c <= '9'; }) ||
                    digits.size() > 18)
                    line.fail(number_pos, "expected a number of tokens after 'tokens'");
                tokens = std::stoll(std::string(digits));
            } else {
                line.fail(option_pos, "expected 'keep @name', 'tokens N' or ':' in a compaction");
            }
        }
        std::string summary = line.text_after_colon("compaction");
        run(line.number(), keep ? keep_pos : item_pos,
            [&] { builder_.compaction(std::move(summary), keep, tokens); });
    }

    void read_from(DescriptionLine& line, const std::optional<std::string>& name,
                   std::size_t start) {
        line.skip_blanks();
        const std::size_t target_pos = line.pos();
        std::optional<std::string> target;
        if (line.peek() == '@')
            target = line.anchor("the entry to continue from");
        else if (line.word() != "root")
            line.fail(target_pos, "expected @name or 'root' after 'from'");
        line.skip_blanks();
        std::optional<std::string> summary;
        if (line.peek() == ':') summary = line.text_after_colon("from");
        line.expect_end("the entry to continue from");
        if (name && !summary)
            line.fail(start,
                      "'@" + *name +
                          "' names nothing: 'from' without a summary appends no entry to name");
        run(line.number(), target_pos, [&] {
            if (target)
                builder_.from(*target, std::move(summary));
            else
                builder_.from_root(std::move(summary));
        });
        name_it(line.number(), start, name);
    }

    SessionBuilder<S>& builder_;
    std::optional<PendingAssistant> pending_;
};

}  // namespace detail

/// Appends the entries a description (see the top of this header) states to `session` and
/// returns the names it gave. Throws SessionError naming the description's line and column; what
/// was appended before the bad line stays.
template <SessionStorage S>
Anchors build_session(Session<S>& session, std::string_view description,
                      BuilderOptions options = {}) {
    SessionBuilder<S> builder(session, std::move(options));
    detail::DescriptionReader<S>(builder).read(description);
    return builder.anchors();
}

/// A deterministic in-memory session built from a description, and the names it gave.
struct DescribedSession {
    InMemorySession session;
    Anchors anchors;
    /// The id of the entry named `name`. Unknown: not_found.
    [[nodiscard]] const std::string& id(std::string_view name) const { return anchors[name]; }
};

/// A deterministic in-memory session holding what `description` states.
/// Example: `auto fx = session_from("@q user: Hi\nassistant: Hello"); fx.id("q");`
inline DescribedSession session_from(std::string_view description,
                                     const FixtureOptions& options = {},
                                     BuilderOptions builder_options = {}) {
    InMemorySession session = deterministic_session(options);
    Anchors anchors = build_session(session, description, std::move(builder_options));
    return DescribedSession{std::move(session), std::move(anchors)};
}

// ---------------------------------------------------------------------------------------------
// Readable text of messages, entries and contexts

namespace detail {

inline std::string compact_json(const Json& value) {
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

inline std::string blocks_text(const std::vector<ContentBlock>& blocks) {
    std::string out;
    auto add = [&out](std::string_view piece) {
        if (!out.empty() && !piece.empty()) out += "\n";
        out += piece;
    };
    for (const auto& block : blocks) {
        std::visit(
            [&](const auto& b) {
                using T = std::decay_t<decltype(b)>;
                if constexpr (std::is_same_v<T, TextContent>)
                    add(b.text);
                else if constexpr (std::is_same_v<T, ImageContent>)
                    add("[image " + b.mime_type + "]");
                else if constexpr (std::is_same_v<T, ThinkingContent>)
                    add("[thinking] " + b.thinking);
                else if constexpr (std::is_same_v<T, ToolCallContent>)
                    add("→ " + b.name + "#" + b.id + " " + compact_json(b.arguments));
                else
                    add("[" + b.type + "]");
            },
            block);
    }
    return out;
}

inline std::string content_text(const Content& content) {
    if (const auto* s = std::get_if<std::string>(&content)) return *s;
    return blocks_text(std::get<std::vector<ContentBlock>>(content));
}

}  // namespace detail

/// The readable text of a message, possibly several lines: text; thinking as "[thinking] ...";
/// tool calls as "→ NAME#ID {arguments}"; a tool result as "NAME#ID: text" ("NAME#ID (error): ");
/// a command and its output; a summary. The forms follow the description language.
inline std::string message_text(const AgentMessage& message) {
    return std::visit(
        [](const auto& m) -> std::string {
            using T = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<T, UserMessage>) {
                return detail::content_text(m.content);
            } else if constexpr (std::is_same_v<T, CustomMessage>) {
                return m.custom_type + ": " + detail::content_text(m.content);
            } else if constexpr (std::is_same_v<T, AssistantMessage>) {
                std::string text = detail::blocks_text(m.content);
                if (m.error_message)
                    text += (text.empty() ? "error: " : "\nerror: ") + *m.error_message;
                return text;
            } else if constexpr (std::is_same_v<T, ToolResultMessage>) {
                return m.tool_name + "#" + m.tool_call_id + (m.is_error ? " (error): " : ": ") +
                       detail::blocks_text(m.content);
            } else if constexpr (std::is_same_v<T, BashExecutionMessage>) {
                return "$ " + m.command + "\n" + m.output;
            } else if constexpr (std::is_same_v<T, BranchSummaryMessage> ||
                                 std::is_same_v<T, CompactionSummaryMessage>) {
                return m.summary;
            } else {
                return "[" + m.role + "]";
            }
        },
        message);
}

/// What an entry is, for a tree line: the role of a message, else the entry type.
inline std::string entry_kind(const SessionTreeEntry& entry) {
    if (const auto* m = message_of(entry)) return std::string(role_of(*m));
    return std::string(type_of(entry));
}

/// What an entry says (message text, summary, setting, label, ...), before shortening.
inline std::string entry_text(const SessionTreeEntry& entry) {
    return std::visit(
        [](const auto& e) -> std::string {
            using T = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<T, MessageEntry>) {
                return message_text(e.message);
            } else if constexpr (std::is_same_v<T, ThinkingLevelChangeEntry>) {
                return e.thinking_level;
            } else if constexpr (std::is_same_v<T, ModelChangeEntry>) {
                return e.provider + "/" + e.model_id;
            } else if constexpr (std::is_same_v<T, ActiveToolsChangeEntry>) {
                std::string out;
                for (const auto& name : e.active_tool_names)
                    out += (out.empty() ? "" : ", ") + name;
                return out;
            } else if constexpr (std::is_same_v<T, CompactionEntry> ||
                                 std::is_same_v<T, BranchSummaryEntry>) {
                return e.summary;
            } else if constexpr (std::is_same_v<T, CustomEntry>) {
                return e.data.is_null() ? e.custom_type
                                        : e.custom_type + " " + detail::compact_json(e.data);
            } else if constexpr (std::is_same_v<T, CustomMessageEntry>) {
                return e.custom_type + ": " + detail::content_text(e.content);
            } else if constexpr (std::is_same_v<T, LabelEntry>) {
                return e.target_id + (e.label ? " = " + *e.label : std::string(" cleared"));
            } else if constexpr (std::is_same_v<T, SessionInfoEntry>) {
                return e.name.value_or("");
            } else if constexpr (std::is_same_v<T, LeafEntry>) {
                return "→ " + e.target_id.value_or("(before the first entry)");
            } else {
                return std::string();
            }
        },
        entry);
}

/// `text` on one line: whitespace runs become one space, control characters (C0, DEL, C1) are
/// shown as escapes (\x1b), and at most `max_chars` characters are kept ("…" marks a cut).
inline std::string one_line(std::string_view text, std::size_t max_chars) {
    return agentcore::detail::one_line_text(text, max_chars);
}

/// `text` with control characters other than newline and tab escaped (for multi-line output).
inline std::string printable(std::string_view text) {
    return agentcore::detail::printable_text(text);
}

/// How long the one-line texts of the printers are, in code points (as `agentcore tree`).
inline constexpr std::size_t preview_chars = 72;

/// A message on one line: "assistant: Let me look. → ls#call_1 {"path":"."}".
inline std::string describe_message(const AgentMessage& message,
                                    std::size_t max_chars = preview_chars) {
    const std::string text = one_line(message_text(message), max_chars);
    return std::string(role_of(message)) + (text.empty() ? "" : ": " + text);
}

/// An entry on one line, as `agentcore tree` shows it: "8a1ad34e assistant: Let me look.".
inline std::string describe_entry(const SessionTreeEntry& entry,
                                  std::size_t max_chars = preview_chars) {
    const std::string text = one_line(entry_text(entry), max_chars);
    return one_line(id_of(entry), 64) + " " + entry_kind(entry) + (text.empty() ? "" : ": " + text);
}

/// A context: a summary line, then one line per message, then what was dropped.
///
///     3 messages (thinking off, model test/scripted):
///       [1] user: Which files are there?
///       [2] assistant: Let me look. → ls#call_1 {"path":"."}
///       [3] tool_result: ls#call_1: main.cpp
inline std::string describe_context(const SessionContext& context,
                                    std::size_t max_chars = preview_chars) {
    std::string out =
        std::to_string(context.messages.size()) +
        (context.messages.size() == 1 ? " message" : " messages") + " (thinking " +
        one_line(context.thinking_level, 40) + ", model " +
        (context.model ? one_line(context.model->provider + "/" + context.model->model_id, 80)
                       : std::string("none")) +
        ")" + (context.messages.empty() ? "" : ":");
    for (std::size_t i = 0; i < context.messages.size(); ++i)
        out += "\n  [" + std::to_string(i + 1) + "] " +
               (context.messages[i] ? describe_message(*context.messages[i], max_chars) : "(null)");
    for (const auto& d : context.dropped)
        out += "\n  dropped " + std::string(to_string(d.reason)) + " " +
               one_line(d.tool_call_id, 64) + (d.whole_message ? "" : " (the call only)");
    return out;
}

// ---------------------------------------------------------------------------------------------
// What the matchers check

/// The roles of a context's messages, in order ("user", "assistant", "tool_result", ...).
inline std::vector<std::string> roles_of(const SessionContext& context) {
    std::vector<std::string> out;
    out.reserve(context.messages.size());
    for (const auto& m : context.messages) out.emplace_back(m ? role_of(*m) : "(null)");
    return out;
}

/// A tool call of a context and the later tool result that answers it (0-based indexes).
struct ToolPair {
    std::string call_id;
    std::string name;
    std::size_t call_index = 0;
    std::size_t result_index = 0;
};

/// Every tool call of the context that a later tool result (same call id) answers, in the
/// order of the results.
inline std::vector<ToolPair> tool_pairs_of(const SessionContext& context) {
    std::unordered_map<std::string, std::pair<std::string, std::size_t>> calls;  // id → name, index
    std::vector<ToolPair> pairs;
    for (std::size_t i = 0; i < context.messages.size(); ++i) {
        if (!context.messages[i]) continue;
        const AgentMessage& m = *context.messages[i];
        if (const auto* a = std::get_if<AssistantMessage>(&m)) {
            for (const auto& block : a->content)
                if (const auto* call = std::get_if<ToolCallContent>(&block))
                    calls.insert_or_assign(call->id, std::make_pair(call->name, i));
        } else if (const auto* r = std::get_if<ToolResultMessage>(&m)) {
            auto it = calls.find(r->tool_call_id);
            if (it != calls.end()) {
                pairs.push_back(ToolPair{r->tool_call_id, it->second.first, it->second.second, i});
                calls.erase(it);
            }
        }
    }
    return pairs;
}

/// True when the context holds a call of tool `name` and, later, its result.
inline bool holds_tool_pair(const SessionContext& context, std::string_view name) {
    const auto pairs = tool_pairs_of(context);
    return std::any_of(pairs.begin(), pairs.end(),
                       [name](const ToolPair& p) { return p.name == name; });
}

/// The pairs as "NAME#ID", for messages.
inline std::vector<std::string> tool_pair_names(const SessionContext& context) {
    std::vector<std::string> out;
    for (const auto& p : tool_pairs_of(context)) out.push_back(p.name + "#" + p.call_id);
    return out;
}

/// The ids of a list of entries (a path, a branch).
inline std::vector<std::string> ids_of(const std::vector<EntryHandle>& entries) {
    std::vector<std::string> out;
    out.reserve(entries.size());
    for (const auto& e : entries) out.push_back(e ? id_of(*e) : "(null)");
    return out;
}

/// True when the path (or any list of entries) holds the entry with id `id`.
inline bool passes_through(const std::vector<EntryHandle>& path, std::string_view id) {
    return std::any_of(path.begin(), path.end(),
                       [id](const EntryHandle& e) { return e && id_of(*e) == id; });
}

/// "[a, b, c]", for messages.
inline std::string bracketed(const std::vector<std::string>& items) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
    return out + "]";
}

// ---------------------------------------------------------------------------------------------
// Golden text: stable renderings for snapshot tests

/// A context as stable text, every message in full (its lines indented by four spaces, control
/// characters escaped); no timestamps, so that only what the LLM would see is compared.
///
///     thinking level: off
///     model: test/scripted
///     active tools: (not set)
///     messages: 2
///     [1] user
///         Which files are there?
///     [2] assistant
///         Let me look.
///         → ls#call_1 {"path":"."}
///     dropped: none
inline std::string render_context(const SessionContext& context) {
    std::string out = "thinking level: " + printable(context.thinking_level) + "\n";
    out += "model: " +
           (context.model ? printable(context.model->provider + "/" + context.model->model_id)
                          : std::string("(none)")) +
           "\n";
    out += "active tools: ";
    if (!context.active_tool_names)
        out += "(not set)";
    else if (context.active_tool_names->empty())
        out += "(none)";
    else
        for (std::size_t i = 0; i < context.active_tool_names->size(); ++i)
            out += (i ? ", " : "") + printable((*context.active_tool_names)[i]);
    out += "\nmessages: " + std::to_string(context.messages.size()) + "\n";
    for (std::size_t i = 0; i < context.messages.size(); ++i) {
        if (!context.messages[i]) continue;
        const AgentMessage& m = *context.messages[i];
        out += "[" + std::to_string(i + 1) + "] " + printable(role_of(m)) + "\n";
        const std::string text = printable(message_text(m));
        std::size_t begin = 0;
        while (!text.empty() && begin <= text.size()) {
            std::size_t end = text.find('\n', begin);
            if (end == std::string::npos) end = text.size();
            out += "    " + text.substr(begin, end - begin) + "\n";
            begin = end + 1;
        }
    }
    if (context.dropped.empty()) out += "dropped: none\n";
    for (const auto& d : context.dropped)
        out += "dropped: " + std::string(to_string(d.reason)) + " " + printable(d.tool_call_id) +
               (d.whole_message ? "" : " (the call only)") + "\n";
    return out;
}

/// Which entries render_tree shows.
struct TreeRenderOptions {
    /// Also the bookkeeping `label` and `leaf` entries (as `agentcore tree --all`).
    bool all = false;
    bool timestamps = false;                ///< a column of entry timestamps
    std::size_t max_chars = preview_chars;  ///< of each entry's text
};

/// The session tree as `agentcore tree --no-fold` draws it, without colours: one line per
/// entry, a linear run in one column, a branch point's children drawn with ├─ / └─, the path from
/// the root to the leaf marked ●, labels in brackets and "← leaf". With seeded ids (a
/// deterministic session) the text is the same on every run. A hidden entry's children hang from
/// its nearest shown ancestor.
///
/// Complexity: O(entries) plus one label look-up per entry.
template <SessionStorage S>
std::string render_tree(const S& storage, const TreeRenderOptions& options = {}) {
    struct Node {
        EntryHandle entry;
        std::vector<std::size_t> children;
        std::optional<std::string> label;
        bool on_path = false;
    };
    std::vector<Node> nodes;
    std::vector<std::size_t> roots;
    std::optional<std::size_t> leaf;

    const auto leaf_id = storage.get_leaf_id();
    std::unordered_set<std::string> on_path;
    for (auto id = leaf_id; id && on_path.size() <= storage.entry_count();) {
        const EntryHandle e = storage.get_entry(*id);
        if (!e || !on_path.insert(*id).second) break;
        id = parent_id_of(*e);
    }
    std::unordered_map<std::string, std::optional<std::size_t>> shown_as;  // id → nearest shown
    for (const auto& entry : storage.get_entries({})) {
        const std::string& id = id_of(*entry);
        std::optional<std::size_t> anchor;
        if (const auto& parent = parent_id_of(*entry)) {
            auto it = shown_as.find(*parent);
            if (it != shown_as.end()) anchor = it->second;
        }
        const bool bookkeeping =
            std::holds_alternative<LabelEntry>(*entry) || std::holds_alternative<LeafEntry>(*entry);
        if (bookkeeping && !options.all) {
            shown_as[id] = anchor;
            continue;
        }
        const std::size_t index = nodes.size();
        nodes.push_back(Node{entry, {}, storage.get_label(id), on_path.count(id) != 0});
        (anchor ? nodes[*anchor].children : roots).push_back(index);
        shown_as[id] = index;
    }
    if (leaf_id) {
        auto it = shown_as.find(*leaf_id);
        if (it != shown_as.end()) leaf = it->second;
    }
    if (nodes.empty()) return "(no entries)\n";

    std::string out;
    auto print_node = [&](std::size_t index, const std::string& graphics) {
        const Node& node = nodes[index];
        std::string id = one_line(id_of(*node.entry), 64);
        if (id.size() < 8) id.resize(8, ' ');
        out += (node.on_path ? "●" : " ") + std::string(" ") + id + " ";
        if (options.timestamps) {
            std::string ts = one_line(base_of(*node.entry).timestamp, 40);
            if (ts.size() < 24) ts.resize(24, ' ');
            out += ts + " ";
        }
        out += graphics + entry_kind(*node.entry);
        const std::string text = one_line(entry_text(*node.entry), options.max_chars);
        if (!text.empty()) out += ": " + text;
        if (node.label) out += "  [" + one_line(*node.label, 40) + "]";
        if (leaf == index) out += "  ← leaf";
        out += "\n";
    };
    // An explicit stack instead of recursion: a session may nest deeply.
    struct Frame {
        std::size_t node;
        std::string prefix;     // graphics before every line of this subtree
        std::string connector;  // "├─ ", "└─ " or "" for the subtree's first line
    };
    std::vector<Frame> stack;
    auto push_children = [&stack](const std::vector<std::size_t>& children,
                                  const std::string& prefix) {
        if (children.size() == 1) {
            stack.push_back({children[0], prefix, ""});
            return;
        }
        for (std::size_t i = children.size(); i-- > 0;)
            stack.push_back({children[i], prefix, i + 1 == children.size() ? "└─ " : "├─ "});
    };
    push_children(roots, "");
    while (!stack.empty()) {
        Frame frame = std::move(stack.back());
        stack.pop_back();
        const std::string continued = frame.prefix + (frame.connector == "├─ "   ? "│  "
                                                      : frame.connector == "└─ " ? "   "
                                                                                 : "");
        std::size_t current = frame.node;
        print_node(current, frame.prefix + frame.connector);
        while (nodes[current].children.size() == 1) {
            current = nodes[current].children[0];
            print_node(current, continued);
        }
        push_children(nodes[current].children, continued);
    }
    return out;
}

/// The tree of a session's storage.
template <SessionStorage S>
std::string render_tree(const Session<S>& session, const TreeRenderOptions& options = {}) {
    return render_tree(session.storage(), options);
}

namespace detail {

inline std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t begin = 0;
    while (begin < text.size()) {
        std::size_t end = text.find('\n', begin);
        if (end == std::string_view::npos) end = text.size();
        lines.push_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    return lines;
}

inline bool env_flag(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

}  // namespace detail

/// The differences between two texts, line by line: hunks headed "@@ expected line E, actual
/// line A @@", lines only in `expected` as "-", only in `actual` as "+", `context` unchanged lines
/// around each as " ". Empty when the texts are equal. A difference in the final newline alone
/// is said in words.
///
/// Complexity: O(n·m) in the line counts up to 4,000 lines each; beyond, the first differing line
/// and the line counts only.
inline std::string line_diff(std::string_view expected, std::string_view actual,
                             std::size_t context = 3) {
    if (expected == actual) return {};
    const auto a = detail::split_lines(expected);
    const auto b = detail::split_lines(actual);
    if (a == b) {
        const bool expected_nl = !expected.empty() && expected.back() == '\n';
        return expected_nl
                   ? "the actual text lacks the final newline of the expected text\n"
                   : "the actual text ends with a newline the expected text does not have\n";
    }
    constexpr std::size_t limit = 4000;
    if (a.size() > limit || b.size() > limit) {
        std::size_t i = 0;
        while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
        std::string out = "@@ line " + std::to_string(i + 1) + " @@ (the texts have " +
                          std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                          " lines)\n";
        if (i < a.size()) out += "-" + std::string(a[i]) + "\n";
        if (i < b.size()) out += "+" + std::string(b[i]) + "\n";
        return out;
    }
    // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::size_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return lcs[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    struct Op {
        char kind;  // ' ', '-', '+'
        std::string_view line;
        std::size_t ai, bi;  // 0-based positions before the op
    };
    std::vector<Op> ops;
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[i] == b[j]) {
            ops.push_back({' ', a[i], i, j});
            ++i;
            ++j;
        } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
            ops.push_back({'-', a[i], i, j});
            ++i;
        } else {
            ops.push_back({'+', b[j], i, j});
            ++j;
        }
    }
    std::vector<bool> shown(ops.size(), false);
    for (std::size_t k = 0; k < ops.size(); ++k) {
        if (ops[k].kind == ' ') continue;
        const std::size_t from = k >= context ? k - context : 0;
        const std::size_t to = std::min(ops.size(), k + context + 1);
        for (std::size_t x = from; x < to; ++x) shown[x] = true;
    }
    std::string out;
    for (std::size_t k = 0; k < ops.size(); ++k) {
        if (!shown[k]) continue;
        if (k == 0 || !shown[k - 1])
            out += "@@ expected line " + std::to_string(ops[k].ai + 1) + ", actual line " +
                   std::to_string(ops[k].bi + 1) + " @@\n";
        out += ops[k].kind;
        out += ops[k].line;
        out += "\n";
    }
    return out;
}

/// The path a golden file name stands for: an absolute path as it is; a relative one under
/// $AGENTCORE_GOLDEN_DIR when that is set, else under the working directory.
inline std::string golden_path(const std::string& name) {
    const std::filesystem::path path(name);
    const char* dir = std::getenv("AGENTCORE_GOLDEN_DIR");
    if (path.is_absolute() || dir == nullptr || *dir == '\0') return name;
    return (std::filesystem::path(dir) / path).string();
}

/// What check_golden found.
struct GoldenResult {
    bool matched = false;  ///< the file holds exactly the actual text (or was just written)
    bool updated = false;  ///< the file was written because AGENTCORE_UPDATE_GOLDEN asked
    std::string path;      ///< the file, resolved by golden_path
    std::string message;   ///< why it did not match: a missing file, or the diff
    explicit operator bool() const noexcept { return matched; }
};

/// Compares `actual` with the golden file `name` (see golden_path).
///
/// With AGENTCORE_UPDATE_GOLDEN set (to anything but "" or "0"), writes `actual` to the file
/// instead (making its folders) when it is missing or different, and reports a match. Otherwise a
/// missing file or a different text is a mismatch whose message names the file, holds the
/// line_diff (- expected, + actual) and says how to accept the actual text.
/// Throws: SessionError(storage) when the file cannot be read or written.
inline GoldenResult check_golden(std::string_view actual, const std::string& name) {
    GoldenResult result;
    result.path = golden_path(name);
    std::error_code ec;
    const bool exists = std::filesystem::exists(result.path, ec);
    std::string expected;
    if (exists) {
        std::ifstream in(result.path, std::ios::binary);
        if (!in)
            throw SessionError(ErrorCode::storage,
                               "cannot read the golden file '" + result.path + "'");
        expected.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (exists && expected == actual) {
        result.matched = true;
        return result;
    }
    if (detail::env_flag("AGENTCORE_UPDATE_GOLDEN")) {
        const std::filesystem::path path(result.path);
        if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
        std::ofstream out(result.path, std::ios::binary | std::ios::trunc);
        out.write(actual.data(), static_cast<std::streamsize>(actual.size()));
        out.close();
        if (!out)
            throw SessionError(ErrorCode::storage,
                               "cannot write the golden file '" + result.path + "'");
        result.matched = true;
        result.updated = true;
        return result;
    }
    const std::string how = "(run with AGENTCORE_UPDATE_GOLDEN=1 to accept the actual text)";
    if (!exists) {
        result.message = "the golden file '" + result.path + "' does not exist " + how;
        return result;
    }
    result.message = "the text differs from the golden file '" + result.path +
                     "' (- expected, + actual) " + how + ":\n" + line_diff(expected, actual);
    return result;
}

}  // namespace agentcore::fixtures

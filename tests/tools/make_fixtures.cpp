// Writes the deterministic session files the CLI and browser tests read: the same branched,
// compacted session in the native and the pi dialect, a small repository for `ls`, repositories
// for `copy` (both dialects, entry types and fields the library does not model), a repository
// whose text exercises search's folding and query language, and damaged files for the error
// paths. Usage: agentcore_tools_fixtures OUT_DIR
#include <agentcore/jsonl/jsonl_repo.hpp>
#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/session.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace agentcore;

namespace {

constexpr std::int64_t start_ms = 1767225600000;  // 2026-01-01T00:00:00.000Z

// One clock for entries and messages, so that message timestamps follow entry timestamps.
struct Script {
    Environment env = Environment::deterministic(start_ms, 42, 1000);
    std::int64_t turn = 0;

    std::int64_t now() { return start_ms + 1000 * ++turn; }

    AgentMessage user(std::string text) { return UserMessage{std::move(text), now(), {}}; }

    AgentMessage assistant(std::string text, std::vector<ContentBlock> extra = {}) {
        AssistantMessage m;
        for (auto& block : extra)
            if (std::holds_alternative<ThinkingContent>(block)) m.content.push_back(block);
        m.content.push_back(TextContent{std::move(text), {}});
        for (auto& block : extra)
            if (!std::holds_alternative<ThinkingContent>(block))
                m.content.push_back(std::move(block));
        m.api = "scripted";
        m.provider = "demo";
        m.model = "scripted-1";
        m.stop_reason =
            m.content.size() > 1 && std::holds_alternative<ToolCallContent>(m.content.back())
                ? "tool_use"
                : "stop";
        m.usage.input = 1000;
        m.usage.output = 50;
        m.usage.cache_read = 200;
        m.usage.cache_write = 10;
        m.usage.total_tokens = 1260;
        m.usage.cost.total = 0.0125;
        m.timestamp = now();
        return m;
    }
};

// A 1x1 PNG.
const char* pixel_png =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg"
    "==";

Session<InMemorySessionStorage<>> tour_session(Script& s, std::string id) {
    SessionHeader header;
    header.id = std::move(id);
    header.timestamp = format_timestamp(start_ms);
    header.cwd = "/home/dev/project";
    header.metadata = Json{{"app", "fixtures"}};
    Session<InMemorySessionStorage<>> session(InMemorySessionStorage<>(header, s.env));

    append_model_change(session, "demo", "scripted-1");
    append_thinking_level_change(session, "medium");
    append_message(session, s.user("Which files are in the project?"));
    append_message(session,
                   s.assistant("Let me look.",
                               {ThinkingContent{"The user wants a file list.", {}},
                                ToolCallContent{"call_1", "bash", Json{{"command", "ls"}}, {}}}));
    ToolResultMessage result;
    result.tool_call_id = "call_1";
    result.tool_name = "bash";
    result.content.push_back(TextContent{"main.cpp\nCMakeLists.txt\n", {}});
    result.timestamp = s.now();
    append_message(session, result);
    const auto answer =
        append_message(session, s.assistant("There are two files: main.cpp and CMakeLists.txt."));
    append_label(session, answer, std::string("file list"));
    append_session_name(session, "Project tour");

    // An abandoned branch: the user changes their mind and comes back with a summary.
    append_message(session, s.user("Rewrite main.cpp in Rust."));
    append_message(session, s.assistant("Sure, here is a sketch: <b>fn main()</b> & friends"));
    move_to(
        session, answer,
        BranchSummaryInput{"The user asked for a Rust rewrite, then dropped it.", {}, {}, false});

    append_message(session, s.user("</script><img src=x onerror=alert(1)>"));
    append_message(session, s.assistant("That is just text; nothing runs."));
    UserMessage picture;
    picture.content = std::vector<ContentBlock>{TextContent{"What is in this picture?", {}},
                                                ImageContent{pixel_png, "image/png", {}}};
    picture.timestamp = s.now();
    append_message(session, picture);
    append_message(session, s.assistant("A single pixel."));
    BashExecutionMessage bash;
    bash.command = "git status";
    bash.output = "On branch main\nnothing to commit, working tree clean\n";
    bash.exit_code = 0;
    bash.timestamp = s.now();
    append_message(session, bash);
    append_custom_message_entry(session, "note",
                                Content(std::string("Remember to run the tests.")));

    // A long linear run (folded by `tree`), then a compaction that keeps its last steps.
    std::string kept;
    for (int step = 1; step <= 20; ++step) {
        auto ask = append_message(session, s.user("Step " + std::to_string(step) + "?"));
        if (step == 18) kept = ask;
        append_message(session, s.assistant("Done with step " + std::to_string(step) + "."));
    }
    Usage summary_usage;
    summary_usage.input = 5000;
    summary_usage.output = 300;
    summary_usage.total_tokens = 5300;
    summary_usage.cost.total = 0.05;
    append_compaction(session, "The user toured the project and went through steps 1 to 17.", kept,
                      5400, {}, false, summary_usage);
    append_message(session, s.user("Thanks!"));
    const auto welcome = append_message(session, s.assistant("You're welcome."));

    // A second idea, dropped without a summary; the leaf goes back to "You're welcome.".
    append_message(session, s.user("Another idea?"));
    append_message(session, s.assistant("Maybe later."));
    set_leaf_id(session, welcome);
    return session;
}

void write_session(const Session<InMemorySessionStorage<>>& session, const std::string& path,
                   Dialect dialect, const Environment& env) {
    std::vector<SessionTreeEntry> entries;
    for (const auto& e : session.storage().get_entries({})) entries.push_back(*e);
    JsonlStorageOptions options;
    options.dialect = dialect;
    options.durability = Durability::os_buffered;
    options.environment = env;
    std::filesystem::remove(path);
    JsonlSessionStorage::create(path, session.storage().metadata(), options, std::move(entries));
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& content) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// A small session for the repository listing.
void write_small(const std::string& root, const std::string& id, const std::string& cwd,
                 std::int64_t created, const char* name, Dialect dialect) {
    Script s;
    SessionHeader header;
    header.id = id;
    header.timestamp = format_timestamp(created);
    header.cwd = cwd;
    Session<InMemorySessionStorage<>> session(InMemorySessionStorage<>(header, s.env));
    append_message(session, s.user("Hello"));
    append_message(session, s.assistant("Hi."));
    if (name != nullptr) append_session_name(session, name);
    const std::string folder = root + "/" + JsonlSessionRepo::folder_name(cwd);
    std::filesystem::create_directories(folder);
    write_session(session, folder + "/" + JsonlSessionRepo::file_name(header.timestamp, id),
                  dialect, s.env);
}

// Writes a session into a JSONL repository folder, where JsonlSessionRepo keeps it.
void write_in_repository(const Session<InMemorySessionStorage<>>& session, const std::string& root,
                         Dialect dialect, const Environment& env) {
    const SessionHeader& header = session.storage().metadata();
    const std::string folder = root + "/" + JsonlSessionRepo::folder_name(header.cwd);
    std::filesystem::create_directories(folder);
    write_session(session, folder + "/" + JsonlSessionRepo::file_name(header.timestamp, header.id),
                  dialect, env);
}

// A short session with an entry type and fields the library does not model: a copy keeps them.
Session<InMemorySessionStorage<>> extras_session(Script& s, std::string id,
                                                 const std::string& greeting) {
    SessionHeader header;
    header.id = std::move(id);
    header.timestamp = format_timestamp(start_ms + 600000);
    header.cwd = "/home/dev/extras";
    Session<InMemorySessionStorage<>> session(InMemorySessionStorage<>(header, s.env));
    const std::string hello = append_message(session, s.user(greeting));
    const std::string hi = append_message(session, s.assistant("Hi."));
    session.storage().append_entry(
        entry_from_json(Json{{"type", "future_thing"},
                             {"id", "f0000001"},
                             {"parent_id", hi},
                             {"timestamp", "2026-01-01T00:10:09.000Z"},
                             {"payload", {{"x", {1, 2}}, {"note", "kept"}}}},
                        Dialect::native));
    session.storage().append_entry(entry_from_json(Json{{"type", "message"},
                                                        {"id", "f0000002"},
                                                        {"parent_id", "f0000001"},
                                                        {"timestamp", "2026-01-01T00:10:10.000Z"},
                                                        {"x_entry_note", "kept too"},
                                                        {"message",
                                                         {{"role", "user"},
                                                          {"content", "And this?"},
                                                          {"timestamp", 1767226210000},
                                                          {"x_vendor", {{"a", 1}}}}}},
                                                   Dialect::native));
    append_label(session, hello, std::string("start"));
    append_session_name(session, "Extras");
    return session;
}

// Text for search in the viewer and on the command line alike: letters the folding changes
// (Latin-1, Latin Extended-A, Greek, Cyrillic, combining accents, ideographs), phrases,
// identifiers and paths, thinking, a long tool output and a branch.
Session<InMemorySessionStorage<>> folding_session(Script& s) {
    SessionHeader header;
    header.id = "folding-0011";
    header.timestamp = format_timestamp(start_ms + 900000);
    header.cwd = "/home/dev/folding";
    Session<InMemorySessionStorage<>> session(InMemorySessionStorage<>(header, s.env));
    const auto first = append_message(session, s.user("Crème brûlée at the Café in Köln"));
    append_message(session,
                   s.assistant("Die Straße nach Ærøskøbing; Œuvre complète; Łódź, İstanbul"));
    append_message(session, s.user("ΑΘΉΝΑ και ёлка, Ĳssel and cafe\u0301 written with an accent"));
    append_message(
        session, s.assistant("東京都に行く: the login-bug is fixed",
                             {ThinkingContent{"Flamingos think about the login bug.", {}},
                              ToolCallContent{
                                  "call_9",
                                  "grep",
                                  Json{{"pattern", "getUserById"}, {"path", "src/auth/login.cpp"}},
                                  {}}}));
    ToolResultMessage result;
    result.tool_call_id = "call_9";
    result.tool_name = "grep";
    // The library searches the first 4096 bytes of a tool's output: a word after them is not found.
    result.content.push_back(TextContent{
        "src/auth/login.cpp: User getUserById(int id)\n" + std::string(5000, '.') + " zanzibar",
        {}});
    result.timestamp = s.now();
    append_message(session, result);
    const auto fixed = append_message(session, s.user("Is the login bug fixed for good?"));
    append_label(session, fixed, std::string("checkpoint"));
    append_message(session, s.assistant("Yes: fixed, with a test."));
    // A branch from the first question: its hits are on another path than the leaf's.
    move_to(session, first);
    append_message(session, s.user("Back to the café: which login page?"));
    const auto answer = append_message(session, s.assistant("The login page of the CAFÉ's site."));
    set_leaf_id(session, answer);
    return session;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: agentcore_tools_fixtures OUT_DIR\n";
        return 2;
    }
    const std::string out = argv[1];
    std::filesystem::remove_all(out);
    std::filesystem::create_directories(out);

    Script s;
    auto tour = tour_session(s, "tour-0001");
    write_session(tour, out + "/native.jsonl", Dialect::native, s.env);
    write_session(tour, out + "/pi.jsonl", Dialect::pi, s.env);

    // Damaged copies of the native file.
    const std::string native = read_file(out + "/native.jsonl");
    std::size_t third_line = native.find('\n', native.find('\n') + 1) + 1;
    write_file(out + "/bad-middle.jsonl",
               native.substr(0, third_line) + "{not json\n" + native.substr(third_line));
    write_file(out + "/torn.jsonl", native + R"({"type":"message","id":"torn00)");
    write_file(out + "/garbage.jsonl", "this is not a session\n");
    write_file(out + "/header-only.jsonl", native.substr(0, native.find('\n') + 1));
    // A tool result whose call is nowhere on its path.
    write_file(
        out + "/orphan.jsonl",
        native.substr(0, native.find('\n') + 1) +
            R"({"type":"message","id":"aaaa0001","parent_id":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"tool_result","tool_call_id":"call_x","tool_name":"bash","content":[{"type":"text","text":"x"}],"is_error":false,"timestamp":1}})"
            "\n");
    // pi's first format: no version, no ids, a linear list.
    write_file(
        out + "/pi-v1.jsonl",
        R"({"type":"session","id":"old-pi","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/work/project"})"
        "\n"
        R"({"type":"message","timestamp":"2025-06-01T10:00:01.000Z","message":{"role":"user","content":"Linear question one","timestamp":1748772001000}})"
        "\n"
        R"({"type":"message","timestamp":"2025-06-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Linear answer one"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":20,"cacheRead":5,"cacheWrite":3,"totalTokens":128,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.0125}},"stopReason":"stop","timestamp":1748772002000}})"
        "\n");

    // A repository: two working directories, both dialects, one unnamed session.
    const std::string root = out + "/sessions";
    write_small(root, "alpha-0001", "/home/dev/project", start_ms + 3600000, "Alpha",
                Dialect::native);
    write_small(root, "beta-0002", "/home/dev/project", start_ms + 7200000, "Beta (pi)",
                Dialect::pi);
    write_small(root, "gamma-0003", "/tmp/other", start_ms + 1800000, nullptr, Dialect::native);
    const std::string broken_root = out + "/sessions-broken";
    write_small(broken_root, "delta-0004", "/home/dev/project", start_ms, "Delta", Dialect::native);
    write_file(broken_root + "/" + JsonlSessionRepo::folder_name("/home/dev/project") + "/" +
                   JsonlSessionRepo::file_name("2026-01-02T00:00:00.000Z", "broken-0005"),
               "{\"type\":\"session\",\"id\":42}\n");

    // Repositories for `copy`: the tour and a short session in each dialect, and a repository
    // whose extras-0003 differs from the first one's, beside a session the first one lacks.
    {
        const std::string repository = out + "/repository";
        Script a;
        write_in_repository(tour_session(a, "tour-0001"), repository, Dialect::native, a.env);
        Script b;
        write_in_repository(tour_session(b, "tour-pi-0002"), repository, Dialect::pi, b.env);
        Script c;
        write_in_repository(extras_session(c, "extras-0003", "Hello"), repository, Dialect::native,
                            c.env);
        Script d;
        write_in_repository(extras_session(d, "extras-pi-0004", "Hello"), repository, Dialect::pi,
                            d.env);
        const std::string clash = out + "/repository-clash";
        Script e;
        write_in_repository(extras_session(e, "extras-0003", "Hello again"), clash, Dialect::native,
                            e.env);
        write_small(clash, "new-0005", "/home/dev/project", start_ms, "New", Dialect::native);
    }

    {
        Script f;
        write_in_repository(folding_session(f), out + "/search-repository", Dialect::native, f.env);
    }

    // Every entry of the main line has a side branch, appended after the main line goes on: each
    // branch point nests the rest of the session one level deeper. 40 entries on the main line
    // (118 entries), and 300 and 3,000 for the size of `tree`'s output.
    for (const int main_line : {40, 300, 3000}) {
        Script b;
        SessionHeader header;
        header.id = "branchy-0009";
        header.timestamp = format_timestamp(start_ms);
        header.cwd = "/home/dev/project";
        Session<InMemorySessionStorage<>> branchy(InMemorySessionStorage<>(header, b.env));
        std::string previous;
        for (int i = 0; i < main_line; ++i) {
            const std::string main_id =
                append_message(branchy, b.user("Main " + std::to_string(i)));
            if (!previous.empty()) {
                move_to(branchy, previous);
                append_message(branchy, b.assistant("Side " + std::to_string(i - 1)));
                move_to(branchy, main_id);
            }
            previous = main_id;
        }
        write_session(branchy,
                      out + (main_line == 40 ? "/branchy.jsonl"
                                             : "/branchy-" + std::to_string(main_line) + ".jsonl"),
                      Dialect::native, b.env);
    }

    // A value nested 100,000 levels deep (an entry's data; a header's metadata): on a line in the
    // middle, as the last line, in the header.
    {
        const std::string deep = std::string(100000, '[') + std::string(100000, ']');
        const std::string header_line = native.substr(0, native.find('\n') + 1);
        const std::string first =
            R"({"type":"message","id":"aaaa0001","parent_id":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Before","timestamp":1767225601000}})"
            "\n";
        const std::string deep_entry =
            R"({"type":"custom","id":"aaaa0002","parent_id":"aaaa0001","timestamp":"2026-01-01T00:00:02.000Z","custom_type":"deep","data":)" +
            deep + "}\n";
        const std::string after =
            R"({"type":"message","id":"aaaa0003","parent_id":"aaaa0001","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"After","timestamp":1767225603000}})"
            "\n";
        write_file(out + "/deep-middle.jsonl", header_line + first + deep_entry + after);
        write_file(out + "/deep-last.jsonl", header_line + first + deep_entry);
        write_file(
            out + "/deep-header.jsonl",
            R"({"type":"session","version":3,"id":"deep-0011","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/dev/project","parent_session":null,"metadata":{"x":)" +
                deep + "}}\n" + first);
    }

    // Ids, a name, a label, a custom type and text that would drive a terminal (a colour, a
    // window title, a line break, a right-to-left override, a C1 CSI),
    // and ids that are names of Object.prototype's members, one of them labeled.
    write_file(
        out + "/hostile.jsonl",
        R"({"type":"session","version":3,"id":"hostile-0010","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/\u001b]0;pwned\u0007dev","parent_session":null,"metadata":{}})"
        "\n"
        R"({"type":"message","id":"\u001b[31mred\u001b[0m","parent_id":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Hello \u001b[2Jthere","timestamp":1767225601000}})"
        "\n"
        R"({"type":"message","id":"line\nbreak","parent_id":"\u001b[31mred\u001b[0m","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"Second","timestamp":1767225602000}})"
        "\n"
        R"({"type":"custom_message","id":"rtl\u202eevil","parent_id":"line\nbreak","timestamp":"2026-01-01T00:00:03.000Z","custom_type":"t\u001b[5mype\u009b","content":"Third","display":true})"
        "\n"
        R"({"type":"message","id":"__proto__","parent_id":"rtl\u202eevil","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"Proto entry","timestamp":1767225604000}})"
        "\n"
        R"({"type":"message","id":"constructor","parent_id":"__proto__","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"Constructor entry","timestamp":1767225605000}})"
        "\n"
        R"({"type":"message","id":"hasOwnProperty","parent_id":"constructor","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":"Own property entry","timestamp":1767225606000}})"
        "\n"
        R"({"type":"label","id":"lab1","parent_id":"hasOwnProperty","timestamp":"2026-01-01T00:00:07.000Z","target_id":"constructor","label":"built \u001b[1mhere\nnow"})"
        "\n"
        R"({"type":"session_info","id":"toString","parent_id":"lab1","timestamp":"2026-01-01T00:00:08.000Z","name":"Name\u001b]0;title\u0007 \u202eevil"})"
        "\n");

    // Special files where sessions are expected: a FIFO (no writer ever comes), and a folder and
    // a FIFO with session names beside a real session.
    auto make_fifo = [](const std::string& path) {
        if (::mkfifo(path.c_str(), 0600) != 0)
            throw std::runtime_error("mkfifo " + path + " failed");
    };
    make_fifo(out + "/fifo.jsonl");
    const std::string special_root = out + "/sessions-special";
    write_small(special_root, "epsilon-0006", "/home/dev/project", start_ms, "Epsilon",
                Dialect::native);
    const std::string special_folder =
        special_root + "/" + JsonlSessionRepo::folder_name("/home/dev/project") + "/";
    make_fifo(special_folder +
              JsonlSessionRepo::file_name("2026-01-03T00:00:00.000Z", "fifo-0007"));
    std::filesystem::create_directory(
        special_folder + JsonlSessionRepo::file_name("2026-01-04T00:00:00.000Z", "folder-0008"));
    std::cout << "fixtures written to " << out << "\n";
    return 0;
}

// Sessions where every entry of the main line has a side branch, beside a linear session of the
// same size: `verify` (the library) and the `agentcore` tool's `tree` and `verify` on both shapes.
// Both must stay linear in the entries: the branchy shape within a small factor of the linear one.
//
//   bench_branchy [--entries N] [--tool PATH] [--dir DIR] [--keep] [--json]
//
// N entries in each session (default 100,000). The linear one: a chain of tool calls, results and
// answers with a compaction at 90 %. The branchy one: N/2 such entries on the main line, each with
// a side branch of one message (N/2 tips), and the same compaction. --tool names the agentcore
// binary (default: ../tools/agentcore beside this program, when it is there); the tool's figures
// are skipped without it.
#include "bench_util.hpp"

#include <agentcore/jsonl/jsonl_storage.hpp>
#include <agentcore/session.hpp>
#include <agentcore/verify.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore_bench;
namespace fs = std::filesystem;

namespace {

int usage(int code) {
    std::cerr << "usage: bench_branchy [--entries N] [--tool PATH] [--dir DIR] [--keep] [--json]\n";
    return code;
}

template <class E>
SessionTreeEntry entry(E e, std::size_t index, std::optional<std::string> parent) {
    e.id = "e" + std::to_string(index);
    e.parent_id = std::move(parent);
    e.timestamp = format_timestamp(1767225600000 + static_cast<std::int64_t>(index));
    return e;
}

// The main line's message at position `i`: a tool call, its result, an answer, in turn.
AgentMessage main_message(std::size_t i) {
    const std::string call = "call_" + std::to_string(i - i % 3);
    if (i % 3 == 0) {
        AssistantMessage m;
        m.content.push_back(ToolCallContent{call, "read", Json{{"path", "src/file.cpp"}}, {}});
        m.provider = "demo";
        m.model = "demo-1";
        m.stop_reason = "tool_use";
        return m;
    }
    if (i % 3 == 1) {
        ToolResultMessage r;
        r.tool_call_id = call;
        r.tool_name = "read";
        r.content.push_back(TextContent{"int main() { return 0; }", {}});
        return r;
    }
    return UserMessage{"Step " + std::to_string(i) + ": go on.", 0, {}};
}

// `n` entries; with `branchy`, every main-line entry gets a side branch (half the entries each).
std::vector<SessionTreeEntry> make_entries(std::size_t n, bool branchy) {
    std::vector<SessionTreeEntry> out;
    out.reserve(n);
    const std::size_t main_count = branchy ? n / 2 : n;
    const std::size_t compaction_at = main_count * 9 / 10;
    std::optional<std::string> previous;
    std::optional<std::string> kept;
    for (std::size_t i = 0; out.size() < n; ++i) {
        if (i == compaction_at && previous) {
            CompactionEntry c;
            c.summary = "Everything up to here, summarised.";
            c.first_kept_entry_id = kept;
            c.tokens_before = 100000;
            out.push_back(entry(std::move(c), out.size(), previous));
        } else {
            MessageEntry m;
            m.message = main_message(i);
            out.push_back(entry(std::move(m), out.size(), previous));
        }
        const std::string main_id = id_of(out.back());
        if (i + 20 == compaction_at) kept = main_id;
        if (branchy && out.size() < n) {
            MessageEntry side;
            side.message = UserMessage{"A side question at " + std::to_string(i) + ".", 0, {}};
            out.push_back(entry(std::move(side), out.size(), main_id));
        }
        previous = main_id;
    }
    return out;
}

std::size_t write_file(const std::string& path, std::vector<SessionTreeEntry> entries) {
    SessionHeader header;
    header.id = fs::path(path).stem().string();
    header.timestamp = format_timestamp(1767225600000);
    header.cwd = "/bench";
    JsonlStorageOptions options;
    options.durability = Durability::os_buffered;
    fs::remove(path);
    JsonlSessionStorage::create(path, header, options, std::move(entries));
    return fs::file_size(path);
}

struct Run {
    double seconds = 0;
    std::uint64_t output_bytes = 0;
    double peak_rss_bytes = 0;
    int status = 0;
};

// Runs `tool args...` with its output counted (not kept) and its stderr discarded.
Run run_tool(const std::string& tool, std::vector<std::string> args) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
    const auto start = Clock::now();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::dup2(pipe_fds[1], STDOUT_FILENO);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDERR_FILENO);
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        std::vector<char*> argv;
        std::string self = tool;
        argv.push_back(self.data());
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(self.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(pipe_fds[1]);
    Run run;
    std::vector<char> buffer(std::size_t{1} << 16);
    for (;;) {
        const ssize_t got = ::read(pipe_fds[0], buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        run.output_bytes += static_cast<std::uint64_t>(got);
    }
    ::close(pipe_fds[0]);
    struct rusage usage {};
    while (::wait4(pid, &run.status, 0, &usage) < 0 && errno == EINTR) {
    }
    run.seconds = seconds_since(start);
    run.peak_rss_bytes = static_cast<double>(usage.ru_maxrss) * 1024.0;
    return run;
}

}  // namespace

int main(int argc, char** argv) try {
    const Args args(argc, argv);
    if (args.flag("--help") || args.flag("-h")) return usage(0);
    const std::size_t n = args.number("--entries", 100000);
    if (n < 100) return usage(2);
    const bool json = args.flag("--json");
    std::string tool = args.text("--tool");
    if (tool.empty()) {
        const fs::path beside = fs::path(argv[0]).parent_path() / ".." / "tools" / "agentcore";
        if (fs::exists(beside)) tool = beside.string();
    }
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir =
        args.text("--dir", std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                               "/agentcore-bench-branchy-" + std::to_string(::getpid()));
    fs::create_directories(dir);

    Report report("agentcore on branchy trees");
    report.param("entries", n);
    report.param("tool", tool.empty() ? Json() : Json(tool));
    report.param("dir", dir);

    struct Shape {
        const char* name = "";
        bool branchy = false;
        std::string path;
        double verify_seconds = 0;
        std::size_t issues = 0;
        Run tree, tool_verify;
    };
    std::vector<Shape> shapes(2);
    shapes[0].name = "linear";
    shapes[0].path = dir + "/linear.jsonl";
    shapes[1].name = "branchy";
    shapes[1].branchy = true;
    shapes[1].path = dir + "/branchy.jsonl";
    for (auto& shape : shapes) {
        const std::size_t bytes = write_file(shape.path, make_entries(n, shape.branchy));
        report.param(std::string(shape.name) + "_file_bytes", bytes);
        const Session<JsonlSessionStorage> session(JsonlSessionStorage::open_read_only(shape.path));
        const auto start = Clock::now();
        const VerifyReport checked = verify(session);
        shape.verify_seconds = seconds_since(start);
        shape.issues = checked.issues.size();
        if (!tool.empty()) {
            shape.tree = run_tool(tool, {"tree", "--no-fold", shape.path});
            shape.tool_verify = run_tool(tool, {"verify", shape.path});
        }
    }
    const Shape& linear = shapes[0];
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    for (const auto& shape : shapes) {
        const std::string name = shape.name;
        report.add_keyed(
            "verify_" + name, "verify (library), " + name, shape.verify_seconds * 1000.0, "ms",
            std::to_string(shape.issues) + " issues" +
                (shape.branchy
                     ? "; target: within 3x of linear, got " +
                           fixed1(ratio(shape.verify_seconds, linear.verify_seconds)) + "x"
                     : std::string()));
    }
    if (!tool.empty()) {
        for (const auto& shape : shapes) {
            const std::string name = shape.name;
            const double per_entry =
                static_cast<double>(shape.tree.output_bytes) / static_cast<double>(n);
            report.add_keyed(
                "tree_" + name, "agentcore tree --no-fold, " + name, shape.tree.seconds * 1000.0,
                "ms",
                human_bytes(static_cast<double>(shape.tree.output_bytes)) + " written (" +
                    fixed1(per_entry) + " B/entry), peak RSS " +
                    human_bytes(shape.tree.peak_rss_bytes) + ", exit " +
                    std::to_string(WEXITSTATUS(shape.tree.status)) +
                    (shape.branchy
                         ? "; target: output and time within 3x of linear, got " +
                               fixed1(ratio(static_cast<double>(shape.tree.output_bytes),
                                            static_cast<double>(linear.tree.output_bytes))) +
                               "x and " + fixed1(ratio(shape.tree.seconds, linear.tree.seconds)) +
                               "x"
                         : std::string()));
        }
        for (const auto& shape : shapes) {
            const std::string name = shape.name;
            report.add_keyed("tool_verify_" + name, "agentcore verify, " + name,
                             shape.tool_verify.seconds * 1000.0, "ms",
                             "peak RSS " + human_bytes(shape.tool_verify.peak_rss_bytes) +
                                 ", exit " + std::to_string(WEXITSTATUS(shape.tool_verify.status)) +
                                 (shape.branchy ? "; target: within 3x of linear, got " +
                                                      fixed1(ratio(shape.tool_verify.seconds,
                                                                   linear.tool_verify.seconds)) +
                                                      "x"
                                                : std::string()));
        }
    }
    report.print(json);
    if (!args.flag("--keep")) fs::remove_all(dir);
    return 0;
} catch (const std::exception& e) {
    std::cerr << "bench_branchy: " << e.what() << "\n";
    return 1;
}

// The PostgreSQL storage's figures, each beside its target, against a throwaway server this
// program starts (as the test suite does: initdb in a temporary folder, a Unix socket, fsync on)
// or the server of a connection string given:
//   - a durable append against a bare single-row INSERT + COMMIT on the same server, same run;
//   - appends per second of 16 writer processes on 16 sessions against one writer process, and
//     the latency of their appends (group commit);
//   - open + build_context of a leaf ~1,000 deep in sessions of 1,000, 10,000 and 100,000
//     entries; list of one cwd's 1,000 newest among 100,000 sessions; fork of a 1,000-entry path;
//   - a 1,000-turn conversation (user message, assistant message with a tool call, tool result;
//     each turn persisted and its context read back) against LangGraph's PostgresSaver on the
//     same server (bench/langgraph/, run with node as a child process): time and table size at
//     250, 500 and 1,000 turns.
//
// Usage: bench_postgres [--quick] [--peer DIR] [--no-peer] [--require-peer] [--turns N]
//                       [--writers N] [--seconds S] [conninfo]
//   (build with the release preset). --quick: small sizes, for a smoke run in seconds; the peer
//   runs only where its node_modules are installed (bench/langgraph/install.sh). --peer: the
//   folder of bench_langgraph.mjs (default: this source tree's bench/langgraph).
//   --require-peer: exit 1 when the peer cannot run. The exit status is 0 when every figure ran,
//   whether its target was met or not. A writer process is this program run as
//   `bench_postgres --writer CONNINFO SESSION SECONDS`.

#include "postgres/pg_server.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#include <agentcore/session.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#ifndef AGENTCORE_BENCH_LANGGRAPH_DIR
#define AGENTCORE_BENCH_LANGGRAPH_DIR "bench/langgraph"
#endif

using namespace agentcore;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median_ms(int runs, const std::function<void()>& f) {
    std::vector<double> v;
    for (int i = 0; i < runs; ++i) {
        const auto t = Clock::now();
        f();
        v.push_back(ms_since(t));
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void figure(const char* what, double value, const char* unit, const std::string& target, bool met) {
    std::printf("%-62s %12.3f %-6s target %-22s %s\n", what, value, unit, target.c_str(),
                target.empty() ? "" : (met ? "met" : "NOT MET"));
}

AgentMessage user(int i) {
    return UserMessage{"question number " + std::to_string(i) + " about the code base", i, {}};
}

AgentMessage assistant(int i) {
    AssistantMessage m;
    m.content.push_back(TextContent{"an answer of moderate length, number " + std::to_string(i) +
                                        ", explaining what the function does and why",
                                    {}});
    m.provider = "anthropic";
    m.model = "claude";
    m.usage.input = 100;
    m.usage.output = 20;
    m.usage.cost.total = 0.001;
    return m;
}

// `count` independent chains of `depth` messages: the last chain's leaf is `depth` deep.
std::vector<SessionTreeEntry> chains(int count, int depth) {
    std::vector<SessionTreeEntry> out;
    out.reserve(static_cast<std::size_t>(count * depth));
    char id[16];
    for (int c = 0; c < count; ++c) {
        for (int d = 0; d < depth; ++d) {
            MessageEntry e;
            std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(c * depth + d + 1));
            e.id = id;
            if (d > 0) {
                std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(c * depth + d));
                e.parent_id = std::string(id);
            }
            e.timestamp = "2026-12-02T07:43:23.123Z";
            e.message = d % 2 == 0 ? user(d) : assistant(d);
            out.emplace_back(std::move(e));
        }
    }
    return out;
}

SessionHeader header(std::string id, std::string cwd = "/bench") {
    SessionHeader h;
    h.id = std::move(id);
    h.timestamp = "2026-12-02T07:43:23.123Z";
    h.cwd = std::move(cwd);
    h.metadata = Json::object();
    return h;
}

// The bare transaction the append is compared with: one row of the same shape, one INSERT
// committed on its own (autocommit), synchronous_commit on, on a connection of its own.
class BareInsert {
public:
    explicit BareInsert(const std::string& conninfo) : c_(conninfo) {
        c_.exec("SET synchronous_commit = on", "bench");
        c_.exec(
            "CREATE TABLE IF NOT EXISTS bare (session_id text, seq bigint, id text, parent_seq "
            "bigint, type text, line text, PRIMARY KEY (session_id, seq))",
            "bench");
        MessageEntry e;
        e.id = "abcdef01";
        e.parent_id = std::string("abcdef00");
        e.timestamp = "2026-12-02T07:43:23.123Z";
        e.message = UserMessage{"hello", 1, {}};
        line_ = encode_entry(e, Dialect::native);
    }
    void insert() {
        ++n_;
        char id[16];
        std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(n_));
        detail::pg::Params p;
        p.int64(n_).text(id).int64(n_ - 1).text(line_);
        c_.exec("INSERT INTO bare VALUES ('bare', $1, $2, $3, 'message', $4)", p, "bench");
    }

private:
    detail::pg::Connection c_;
    std::string line_;
    std::int64_t n_ = 0;
};

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size()));
    return v[std::min(i, v.size() - 1)];
}

// -- Writers: processes appending to sessions of their own at once ------------------------------

// A writer process (`--writer CONNINFO SESSION SECONDS`): its own repository (connection),
// creates its session, appends a few, says "ready", waits for a line on stdin, then appends
// durably for SECONDS and prints "<appends> <elapsed ms> <latency ms>...".
int writer_main(const std::string& conninfo, const std::string& id, double seconds) {
    try {
        PostgresSessionRepo repo(conninfo);
        auto s = create(repo, CreateOptions{id, "/writers", Json::object(), std::nullopt});
        for (int i = 0; i < 3; ++i) append_message(s, UserMessage{"warm", 1, {}});
        std::printf("ready\n");
        std::fflush(stdout);
        char go[16];
        if (std::fgets(go, sizeof go, stdin) == nullptr) return 1;
        std::vector<double> latencies;
        latencies.reserve(100000);
        const auto start = Clock::now();
        const auto end = start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(seconds));
        while (Clock::now() < end) {
            const auto t = Clock::now();
            append_message(s, UserMessage{"hello from a writer", 1, {}});
            latencies.push_back(ms_since(t));
        }
        const double elapsed = ms_since(start);
        std::printf("%zu %.3f", latencies.size(), elapsed);
        for (const double l : latencies) std::printf(" %.4f", l);
        std::printf("\n");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %s: %s\n", id.c_str(), e.what());
        return 1;
    }
}

struct WriterRun {
    bool ok = false;
    std::size_t appends = 0;
    double per_second = 0;  // the sum of each writer's appends per second
    double p50 = 0;
    double p99 = 0;
};

// Runs `count` writer processes (this program, --writer) on sessions of their own, started
// together once each is connected and has appended; their appends per second, summed.
WriterRun run_writers(const std::string& conninfo, int count, double seconds,
                      const std::string& tag) {
    struct Child {
        pid_t pid;
        FILE* from;
        FILE* to;
    };
    char self[4096];
    const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return {};
    self[len] = '\0';
    std::vector<Child> children;
    const std::string secs = std::to_string(seconds);
    for (int i = 0; i < count; ++i) {
        int to[2];
        int from[2];
        if (::pipe(to) != 0 || ::pipe(from) != 0) return {};
        const std::string id = tag + "-" + std::to_string(i);
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        if (pid < 0) return {};
        if (pid == 0) {
            ::dup2(to[0], 0);
            ::dup2(from[1], 1);
            ::close(to[0]);
            ::close(to[1]);
            ::close(from[0]);
            ::close(from[1]);
            ::execl(self, self, "--writer", conninfo.c_str(), id.c_str(), secs.c_str(), nullptr);
            ::_exit(127);
        }
        ::close(to[0]);
        ::close(from[1]);
        children.push_back(Child{pid, ::fdopen(from[0], "r"), ::fdopen(to[1], "w")});
    }
    WriterRun run;
    run.ok = true;
    char* line = nullptr;
    std::size_t cap = 0;
    for (auto& c : children)
        if (::getline(&line, &cap, c.from) <= 0 || std::strncmp(line, "ready", 5) != 0)
            run.ok = false;
    for (auto& c : children) {
        std::fputs(run.ok ? "go\n" : "stop\n", c.to);
        std::fclose(c.to);
    }
    std::vector<double> all;
    for (auto& c : children) {
        if (run.ok && ::getline(&line, &cap, c.from) > 0) {
            std::istringstream in(line);
            std::size_t n = 0;
            double elapsed = 0;
            in >> n >> elapsed;
            double l = 0;
            while (in >> l) all.push_back(l);
            run.appends += n;
            if (elapsed > 0) run.per_second += static_cast<double>(n) / (elapsed / 1000);
        } else {
            run.ok = false;
        }
        std::fclose(c.from);
        int status = 0;
        while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) run.ok = false;
    }
    std::free(line);
    run.p50 = percentile(all, 0.50);
    run.p99 = percentile(all, 0.99);
    return run;
}

// -- The conversation, beside LangGraph's PostgresSaver -----------------------------------------

// One turn as bench/langgraph/bench_langgraph.mjs writes it: the same text on both sides.
std::string turn_user_text(int i) {
    return "question number " + std::to_string(i) + " about the code base: what does line " +
           std::to_string(i) + " of src/main.cpp do?";
}
std::string turn_assistant_text(int i) {
    return "Let me read src/main.cpp around line " + std::to_string(i) + " before answering.";
}
std::string turn_tool_result_text(int i) {
    std::string out = "src/main.cpp from line " + std::to_string(i) + ":\n";
    for (int k = 0; k < 16; ++k)
        out += "int twice(int x) { return x * 2; }  // doubles its input\n";
    return out;
}

// A turn: the user's message, the assistant's with one tool call, the tool's result, each a
// durable append; then the context is read back. The messages in that context.
std::size_t conversation_turn(PostgresSessionRepo::session_type& s, int i) {
    const std::int64_t now = 1'780'000'000'000 + i;
    append_message(s, UserMessage{turn_user_text(i), now, {}});
    AssistantMessage a;
    a.content.push_back(TextContent{turn_assistant_text(i), {}});
    a.content.push_back(
        ToolCallContent{"call_" + std::to_string(i),
                        "read",
                        Json{{"path", "src/main.cpp"}, {"offset", i}, {"limit", 40}},
                        {}});
    a.provider = "bench";
    a.model = "canned";
    a.stop_reason = "tool_use";
    a.timestamp = now;
    append_message(s, std::move(a));
    ToolResultMessage r;
    r.tool_call_id = "call_" + std::to_string(i);
    r.tool_name = "read";
    r.content.push_back(TextContent{turn_tool_result_text(i), {}});
    r.timestamp = now;
    append_message(s, std::move(r));
    return build_context(s).messages.size();
}

struct Mark {
    int turns = 0;
    double ms = 0;  // spent in the turns so far
    std::size_t messages = 0;
    std::int64_t bytes = 0;  // the tables, indexes and TOAST included, after VACUUM ANALYZE
};

std::int64_t table_bytes(const std::string& conninfo, const std::vector<std::string>& tables) {
    detail::pg::Connection c(conninfo);
    std::string in;
    for (const auto& t : tables) {
        c.exec(("VACUUM ANALYZE " + t).c_str(), "bench");
        in += (in.empty() ? "'" : ", '") + t + "'";
    }
    const std::string sql =
        "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c JOIN "
        "pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname IN (" +
        in + ")";
    const auto r = c.exec(sql.c_str(), "bench");
    return r.int64(0, 0);
}

std::vector<Mark> agentcore_conversation(const std::string& conninfo,
                                         const std::vector<int>& marks) {
    PostgresSessionRepo repo(conninfo);
    auto s = create(
        repo, CreateOptions{std::string("conversation"), "/bench", Json::object(), std::nullopt});
    std::vector<Mark> out;
    int turn = 0;
    double spent = 0;
    std::size_t messages = 0;
    for (const int mark : marks) {
        const auto t = Clock::now();
        while (turn < mark) messages = conversation_turn(s, ++turn);
        spent += ms_since(t);
        out.push_back(
            Mark{mark, spent, messages,
                 table_bytes(conninfo, {"sessions", "entries", "agentcore_schema_migrations"})});
        std::printf("  agentcore: %d turns in %.1f ms, %lld bytes\n", mark, spent,
                    static_cast<long long>(out.back().bytes));
    }
    return out;
}

// The peer: bench_langgraph.mjs run by node against the database `database` of `server`. An
// empty result and a reason when it cannot run.
std::vector<Mark> peer_conversation(const std::string& dir,
                                    const agentcore::testing::pg::Server& server,
                                    const std::string& database, const std::vector<int>& marks,
                                    std::string& why) {
    if (::access((dir + "/bench_langgraph.mjs").c_str(), R_OK) != 0) {
        why = dir + "/bench_langgraph.mjs not found (--peer DIR names its folder)";
        return {};
    }
    if (::access(
            (dir + "/node_modules/@langchain/langgraph-checkpoint-postgres/package.json").c_str(),
            R_OK) != 0) {
        why = "its packages are not installed: run " + dir + "/install.sh (npm ci, node 20)";
        return {};
    }
    if (std::system("command -v node >/dev/null 2>&1") != 0) {
        why = "node is not on PATH";
        return {};
    }
    std::string list;
    for (const int m : marks) list += (list.empty() ? "" : ",") + std::to_string(m);
    const std::string cmd = "cd '" + dir + "' && node bench_langgraph.mjs --host '" + server.dir +
                            "' --port " + std::to_string(server.port) + " --user agentcore --db " +
                            database + " --turns " + std::to_string(marks.back()) + " --marks " +
                            list;
    std::fflush(nullptr);
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) {
        why = "could not run node";
        return {};
    }
    std::vector<Mark> out;
    char* line = nullptr;
    std::size_t cap = 0;
    while (::getline(&line, &cap, p) > 0) {
        try {
            const Json j = Json::parse(line);
            out.push_back(Mark{j.at("turns").get<int>(), j.at("ms").get<double>(),
                               j.at("messages").get<std::size_t>(),
                               j.at("bytes").get<std::int64_t>()});
            std::printf("  LangGraph: %d turns in %.1f ms, %lld bytes\n", out.back().turns,
                        out.back().ms, static_cast<long long>(out.back().bytes));
        } catch (const std::exception&) {
            std::fputs(line, stderr);
        }
    }
    std::free(line);
    const int status = ::pclose(p);
    if (status != 0 || out.size() != marks.size()) {
        why = "node bench_langgraph.mjs failed (exit status " + std::to_string(status) + ")";
        return {};
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 5 && std::string(argv[1]) == "--writer")
        return writer_main(argv[2], argv[3], std::atof(argv[4]));
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured
    bool quick = false;
    bool peer_wanted = true;
    bool peer_required = false;
    std::string peer_dir = AGENTCORE_BENCH_LANGGRAPH_DIR;
    int turns = 0;
    int writers = 16;
    double seconds = 0;
    std::optional<std::string> given;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--quick") {
            quick = true;
        } else if (a == "--no-peer") {
            peer_wanted = false;
        } else if (a == "--require-peer") {
            peer_required = true;
        } else if (a == "--peer" && has_value) {
            peer_dir = argv[++i];
        } else if (a == "--turns" && has_value) {
            turns = std::atoi(argv[++i]);
        } else if (a == "--writers" && has_value) {
            writers = std::atoi(argv[++i]);
        } else if (a == "--seconds" && has_value) {
            seconds = std::atof(argv[++i]);
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr,
                         "usage: bench_postgres [--quick] [--peer DIR] [--no-peer] [--require-peer]"
                         " [--turns N] [--writers N] [--seconds S] [conninfo]\n");
            return 2;
        } else {
            given = a;
        }
    }
    if (turns <= 0) turns = quick ? 40 : 1000;
    if (seconds <= 0) seconds = quick ? 1 : 5;
    if (writers < 2) writers = 2;
    std::optional<agentcore::testing::pg::Server> server;
    std::string conninfo;
    try {
        if (given) {
            conninfo = *given;
        } else {
            server = agentcore::testing::pg::start_server(true);  // fsync on: durable means durable
            detail::pg::Connection admin(server->conninfo("postgres"));
            admin.exec("CREATE DATABASE bench", "bench");
            admin.exec("CREATE DATABASE conversation", "bench");
            admin.exec("CREATE DATABASE langgraph", "bench");
            conninfo = server->conninfo("bench");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_postgres: %s\n", e.what());
        return 1;
    }
    struct Stop {
        std::optional<agentcore::testing::pg::Server>& s;
        ~Stop() {
            if (s) agentcore::testing::pg::stop_server(*s);
        }
    } stop{server};
    {
        detail::pg::Connection c(conninfo);
        const auto v = c.exec("SHOW server_version", "bench");
        std::printf("PostgreSQL %s; %s sizes%s\n\n", std::string(v.text(0, 0)).c_str(),
                    quick ? "quick" : "full", given ? "" : "; a throwaway server, fsync on");
    }
    PostgresStorageOptions durable;
    PostgresStorageOptions fast;
    fast.durability = Durability::os_buffered;
    PostgresSessionRepo repo(conninfo, durable);

    // A durable append (create_entry_id included) against the bare INSERT + COMMIT, alternately.
    {
        const int n = quick ? 50 : 500;
        auto s =
            create(repo, CreateOptions{std::string("append"), "/", Json::object(), std::nullopt});
        append_message(s, UserMessage{"warm", 1, {}});
        BareInsert bare_insert(conninfo);
        bare_insert.insert();
        // Alternately, so that both see the same load on a shared machine.
        double ours_total = 0;
        double bare_total = 0;
        for (int i = 0; i < n; ++i) {
            auto t = Clock::now();
            append_message(s, UserMessage{"hello", 1, {}});
            ours_total += ms_since(t);
            t = Clock::now();
            bare_insert.insert();
            bare_total += ms_since(t);
        }
        const double ours = ours_total / n;
        const double bare = bare_total / n;
        figure("append, durable (ms per append)", ours, "ms", "", true);
        figure("  bare single-row INSERT + COMMIT, durable (ms)", bare, "ms", "", true);
        figure("  append / bare", ours / bare, "x", "<= 1.2x", ours / bare <= 1.2);
    }

    // Appends per second of `writers` processes on sessions of their own against one process.
    {
        const WriterRun one = run_writers(conninfo, 1, seconds, "one");
        const WriterRun many = run_writers(conninfo, writers, seconds, "many");
        if (!one.ok || !many.ok) {
            std::printf("writer processes: a writer failed (see above); no figure\n");
        } else {
            char what[96];
            figure("1 writer process: durable appends per second", one.per_second, "/s", "", true);
            figure("  its latency p50 (ms)", one.p50, "ms", "", true);
            figure("  its latency p99 (ms)", one.p99, "ms", "", true);
            std::snprintf(what, sizeof what, "%d writer processes, %d sessions: appends per second",
                          writers, writers);
            figure(what, many.per_second, "/s", "", true);
            figure("  their latency p50 (ms)", many.p50, "ms", "", true);
            figure("  their latency p99 (ms)", many.p99, "ms", "", true);
            std::snprintf(what, sizeof what, "  %d writers / 1 writer, appends per second",
                          writers);
            const double ratio = many.per_second / one.per_second;
            figure(what, ratio, "x", ">= 3x", ratio >= 3);
        }
    }

    // Open + build_context of a leaf ~1,000 deep at three session sizes (the last chain's leaf).
    const int depth = 1000;
    std::vector<std::pair<int, std::string>> sizes = {
        {1'000, "1k"}, {10'000, "10k"}, {100'000, "100k"}};
    if (quick) sizes = {{1'000, "1k"}, {5'000, "5k"}};
    for (const auto& [entries, label] : sizes) {
        const std::string id = "deep-" + label;
        const auto t = Clock::now();
        (void)PostgresSessionStorage::create(repo.pool(), header(id), fast,
                                             chains(entries / depth, depth));
        const double import_ms = ms_since(t);
        std::size_t messages = 0;
        const double open_ms = median_ms(9, [&] {
            auto s = open_read_only(repo, id);
            messages = build_context(s).messages.size();
        });
        char what[96];
        std::snprintf(what, sizeof what, "open + build_context, %d deep, %s entries (ms)", depth,
                      label.c_str());
        figure(what, open_ms, "ms", "<= 30 ms",
               open_ms <= 30 && messages == static_cast<std::size_t>(depth));
        std::snprintf(what, sizeof what, "  import of %s entries in one batch (entries/s)",
                      label.c_str());
        figure(what, entries / (import_ms / 1000), "/s", "", true);
    }

    // list: one cwd's 1,000 newest among many sessions (rows made by SQL: this measures the read).
    {
        const int sessions = quick ? 10'000 : 100'000;
        detail::pg::Connection c(conninfo);
        c.exec(
            "INSERT INTO sessions (id, created, cwd, dialect, header)"
            " SELECT 'l' || g, to_char(timestamp '2026-01-01' + g * interval '1 second',"
            " 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), '/cwd' || (g % 50), 0,"
            " '{\"type\":\"session\",\"version\":3,\"id\":\"l' || g || '\",\"timestamp\":\"' ||"
            " to_char(timestamp '2026-01-01' + g * interval '1 second', "
            "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') ||"
            " '\",\"cwd\":\"/cwd' || (g % 50) || '\"}' FROM generate_series(1, $1) g",
            detail::pg::Params().int64(sessions), "bench");
        c.exec("ANALYZE sessions", "bench");
        ListOptions o;
        o.cwd = "/cwd7";
        o.limit = 1000;
        std::size_t listed = 0;
        const double list_ms = median_ms(9, [&] { listed = list(repo, o).sessions.size(); });
        char what[96];
        std::snprintf(what, sizeof what, "list one cwd's %zu newest among %d sessions (ms)", listed,
                      sessions);
        figure(what, list_ms, "ms", "<= 10 ms", list_ms <= 10);
    }

    // fork of a 1,000-entry path, on the server.
    {
        ForkOptions at;
        at.entry_id = "000003e8";  // entry 1,000: the leaf of the first (1,000-deep) chain
        at.position = ForkPosition::at;
        int n = 0;
        const double fork_ms = median_ms(9, [&] {
            at.session_id = "fork-" + std::to_string(n++);
            auto f = fork(repo, "deep-1k", at);
            if (f.storage().entry_count() != 1000)
                std::fprintf(stderr, "fork copied %zu\n", f.storage().entry_count());
        });
        figure("fork of a 1,000-entry path, durable (ms)", fork_ms, "ms", "<= 30 ms",
               fork_ms <= 30);
    }

    // The conversation, agentcore then LangGraph's PostgresSaver, in databases of their own.
    const std::vector<int> marks = {turns / 4, turns / 2, turns};
    const std::vector<Mark> ours =
        agentcore_conversation(given ? conninfo : server->conninfo("conversation"), marks);
    std::vector<Mark> peer;
    std::string why;
    if (!peer_wanted)
        why = "--no-peer";
    else if (given)
        why = "it runs only against the server this program starts (no conninfo given)";
    else
        peer = peer_conversation(peer_dir, *server, "langgraph", marks, why);
    std::printf(
        "\nconversation: per turn a user message, an assistant message with a tool call and"
        " the tool's result,\neach turn persisted and its context read back (agentcore:"
        " 3 durable appends + build_context;\nLangGraph: invoke() of a 2-node StateGraph"
        " with PostgresSaver + getState())\n");
    std::printf("%8s %14s %14s %10s %14s %14s %10s\n", "turns", "agentcore ms", "LangGraph ms",
                "time x", "agentcore B", "LangGraph B", "size x");
    for (std::size_t i = 0; i < ours.size(); ++i) {
        if (peer.empty()) {
            std::printf("%8d %14.1f %14s %10s %14lld %14s %10s\n", ours[i].turns, ours[i].ms, "-",
                        "-", static_cast<long long>(ours[i].bytes), "-", "-");
        } else {
            std::printf("%8d %14.1f %14.1f %9.1fx %14lld %14lld %9.1fx\n", ours[i].turns,
                        ours[i].ms, peer[i].ms, peer[i].ms / ours[i].ms,
                        static_cast<long long>(ours[i].bytes),
                        static_cast<long long>(peer[i].bytes),
                        static_cast<double>(peer[i].bytes) / static_cast<double>(ours[i].bytes));
        }
    }
    // How each side grows: time per turn and bytes per turn within each stretch of turns.
    for (std::size_t i = 0; i < ours.size(); ++i) {
        const int from = i == 0 ? 0 : ours[i - 1].turns;
        const double n = ours[i].turns - from;
        const auto per = [&](const std::vector<Mark>& m) {
            const double ms = m[i].ms - (i == 0 ? 0 : m[i - 1].ms);
            const double b =
                static_cast<double>(m[i].bytes - (i == 0 ? std::int64_t{0} : m[i - 1].bytes));
            return std::pair<double, double>(ms / n, b / n);
        };
        const auto [oms, ob] = per(ours);
        std::printf("  turns %5d-%-5d per turn: agentcore %8.2f ms %9.0f B", from + 1,
                    ours[i].turns, oms, ob);
        if (!peer.empty()) {
            const auto [pms, pb] = per(peer);
            std::printf("; LangGraph %8.2f ms %11.0f B", pms, pb);
        }
        std::printf("\n");
    }
    const std::size_t expected = static_cast<std::size_t>(3 * turns);
    if (ours.back().messages != expected)
        std::printf("agentcore read back %zu messages, expected %zu\n", ours.back().messages,
                    expected);
    if (peer.empty()) {
        std::printf("conversation beside LangGraph's PostgresSaver: skipped: %s\n", why.c_str());
        return peer_required ? 1 : 0;
    }
    if (peer.back().messages != expected)
        std::printf("LangGraph read back %zu messages, expected %zu\n", peer.back().messages,
                    expected);
    char what[96];
    std::snprintf(what, sizeof what, "conversation of %d turns: LangGraph time / agentcore", turns);
    const double time_ratio = peer.back().ms / ours.back().ms;
    figure(what, time_ratio, "x", ">= 10x", time_ratio >= 10);
    std::snprintf(what, sizeof what, "conversation of %d turns: LangGraph size / agentcore", turns);
    const double size_ratio =
        static_cast<double>(peer.back().bytes) / static_cast<double>(ours.back().bytes);
    figure(what, size_ratio, "x", ">= 5x", size_ratio >= 5);
    return 0;
}

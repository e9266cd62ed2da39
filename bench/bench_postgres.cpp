// The PostgreSQL storage's figures, each beside its target, against a throwaway server this
// program starts (as the test suite does: initdb in a temporary folder, a Unix socket, fsync on)
// or the server of a connection string given: a durable append against a bare single-row
// INSERT + COMMIT on the same server; open + build_context of a leaf ~1,000 deep in sessions of
// 1,000, 10,000 and 100,000 entries; list of one cwd's 1,000 newest among many sessions; fork
// of a 1,000-entry path.
//
// Usage: bench_postgres [--quick] [conninfo]   (build with the release preset; --quick: small
// sizes)

#include "postgres/pg_server.hpp"

#include <agentcore/postgres/postgres_repo.hpp>
#include <agentcore/session.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
// committed on its own (autocommit), synchronous_commit on.
double bare_insert_ms(const std::string& conninfo, int n) {
    detail::pg::Connection c(conninfo);
    c.exec("SET synchronous_commit = on", "bench");
    c.exec(
        "CREATE TABLE IF NOT EXISTS bare (session_id text, seq bigint, id text, parent_seq bigint, "
        "type text,"
        " line text, PRIMARY KEY (session_id, seq))",
        "bench");
    const MessageEntry sample = [] {
        MessageEntry e;
        e.id = "abcdef01";
        e.parent_id = std::string("abcdef00");
        e.timestamp = "2026-12-02T07:43:23.123Z";
        e.message = UserMessage{"hello", 1, {}};
        return e;
    }();
    const std::string line = encode_entry(sample, Dialect::native);
    const auto t = Clock::now();
    for (int i = 1; i <= n; ++i) {
        char id[16];
        std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(i));
        detail::pg::Params p;
        p.int64(i).text(id).int64(i - 1).text(line);
        c.exec("INSERT INTO bare VALUES ('bare', $1, $2, $3, 'message', $4)", p, "bench");
    }
    return ms_since(t) / n;
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::optional<std::string> given;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick")
            quick = true;
        else
            given = a;
    }
    std::optional<agentcore::testing::pg::Server> server;
    std::string conninfo;
    try {
        if (given) {
            conninfo = *given;
        } else {
            server = agentcore::testing::pg::start_server(true);  // fsync on: durable means durable
            detail::pg::Connection admin(server->conninfo("postgres"));
            admin.exec("CREATE DATABASE bench", "bench");
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

    // A durable append (create_entry_id included) against the bare INSERT + COMMIT, same run.
    {
        const int n = quick ? 50 : 500;
        auto s =
            create(repo, CreateOptions{std::string("append"), "/", Json::object(), std::nullopt});
        append_message(s, UserMessage{"warm", 1, {}});
        auto t = Clock::now();
        for (int i = 0; i < n; ++i) append_message(s, UserMessage{"hello", 1, {}});
        const double ours = ms_since(t) / n;
        const double bare = bare_insert_ms(conninfo, n);
        figure("append, durable (ms per append)", ours, "ms", "", true);
        figure("  bare single-row INSERT + COMMIT, durable (ms)", bare, "ms", "", true);
        figure("  append / bare", ours / bare, "x", "<= 1.2x", ours / bare <= 1.2);
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
    return 0;
}

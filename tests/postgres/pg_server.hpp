#pragma once
// Throwaway PostgreSQL servers for the tests: a cluster made with initdb in a short temporary
// folder (as the `postgres` user when the tests run as root), listening on a Unix socket in that
// folder only, stopped by the pid in its postmaster.pid and removed.
//
// One server serves a whole ctest run: the fixture test "postgres: start the server" starts it
// and writes where it is to a file in the build tree (or AGENTCORE_PG_SERVER_FILE), which every
// test reads;
// "postgres: stop the server" stops it. A test program run by hand starts a server of its own
// and stops it when it exits. Each test case gets a database of its own (fresh_database), and
// each repository of the conformance kit a schema of its own (fresh_schema).

#include <agentcore/postgres/detail/pg.hpp>

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace agentcore::testing::pg {

inline constexpr int skip_code = 77;  // ctest's SKIP_RETURN_CODE for these tests

inline const char* missing_message() {
    return "PostgreSQL's server programs (initdb, pg_ctl, postgres) were not found, so the "
           "PostgreSQL tests are "
           "skipped: install them (Debian: apt-get install postgresql libpq-dev) or name their "
           "folder in "
           "AGENTCORE_PG_BINDIR; AGENTCORE_REQUIRE_PG=1 makes this a failure";
}

inline bool required() {
    const char* v = std::getenv("AGENTCORE_REQUIRE_PG");
    return v != nullptr && std::string(v) == "1";
}

/// The folder of initdb and pg_ctl: AGENTCORE_PG_BINDIR, `pg_config --bindir`, or Debian's
/// /usr/lib/postgresql/<version>/bin (newest first).
inline std::optional<std::string> bindir() {
    auto has = [](const std::string& d) {
        return ::access((d + "/initdb").c_str(), X_OK) == 0 &&
               ::access((d + "/pg_ctl").c_str(), X_OK) == 0;
    };
    if (const char* v = std::getenv("AGENTCORE_PG_BINDIR"); v != nullptr && *v != '\0')
        return has(v) ? std::optional<std::string>(v) : std::nullopt;
    if (FILE* p = ::popen("pg_config --bindir 2>/dev/null", "r")) {
        char buf[512] = {};
        const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
        ::pclose(p);
        std::string d = got ? buf : "";
        while (!d.empty() && (d.back() == '\n' || d.back() == ' ')) d.pop_back();
        if (!d.empty() && has(d)) return d;
    }
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec))
        if (has(e.path().string() + "/bin")) found.push_back(e.path().string() + "/bin");
    if (found.empty()) return std::nullopt;
    std::sort(found.begin(), found.end());
    return found.back();
}

/// Runs a program (as the postgres user when we are root), its output to `log`; its exit status.
inline int run(const std::vector<std::string>& argv, const std::string& cwd,
               const std::string& log) {
    std::vector<std::string> full;
    if (::geteuid() == 0) full = {"runuser", "-u", "postgres", "--"};
    full.insert(full.end(), argv.begin(), argv.end());
    std::vector<char*> args;
    for (auto& a : full) args.push_back(a.data());
    args.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t child = ::fork();
    if (child < 0) return -1;
    if (child == 0) {
        if (::chdir(cwd.c_str()) != 0) ::_exit(126);
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            ::dup2(fd, 1);
            ::dup2(fd, 2);
        }
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/// A running server.
struct Server {
    std::string dir;  ///< its folder: the socket, data/ and server.log
    int port = 0;
    bool owned = false;  ///< started by this process, which stops it at exit
    pid_t owner_pid = 0;

    /// A libpq connection string for a database of this server.
    [[nodiscard]] std::string conninfo(const std::string& database) const {
        return "host=" + dir + " port=" + std::to_string(port) +
               " user=agentcore dbname=" + database;
    }
    /// The same as a URI.
    [[nodiscard]] std::string uri(const std::string& database) const {
        return "postgresql:///" + database + "?host=" + dir + "&port=" + std::to_string(port) +
               "&user=agentcore";
    }
    [[nodiscard]] std::optional<pid_t> postmaster_pid() const {
        std::ifstream in(dir + "/data/postmaster.pid");
        long pid = 0;
        if (!(in >> pid) || pid <= 0) return std::nullopt;
        return static_cast<pid_t>(pid);
    }
    [[nodiscard]] bool running() const {
        const auto pid = postmaster_pid();
        return pid && ::kill(*pid, 0) == 0;
    }
};

/// A new temporary folder for a server, owned by the user that runs it, and a random port.
inline Server new_server_folder() {
    char tmpl[] = "/tmp/agpg.XXXXXX";  // short: the socket path must fit in 107 bytes
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    Server s;
    s.dir = tmpl;
    std::random_device rd;
    s.port = 20000 + static_cast<int>(rd() % 30000);
    if (::geteuid() == 0) {
        const passwd* pw = ::getpwnam("postgres");
        if (pw == nullptr || ::chown(s.dir.c_str(), pw->pw_uid, pw->pw_gid) != 0)
            throw std::runtime_error("running as root, the tests need the `postgres` user to own " +
                                     s.dir);
    }
    ::chmod(s.dir.c_str(), 0700);
    return s;
}

/// The options every server of the tests is started with: its socket only, `fsync` as asked.
inline std::string server_options(const Server& s, bool fsync) {
    return "-c listen_addresses='' -k " + s.dir + " -p " + std::to_string(s.port) +
           " -c fsync=" + (fsync ? "on" : "off") + " -c max_connections=200";
}

/// Starts the cluster in `s.dir`/data with `options` (pg_ctl's -o, read by a shell).
inline void start_cluster(const std::string& bin, const Server& s, const std::string& options) {
    if (run({bin + "/pg_ctl", "-D", s.dir + "/data", "-l", s.dir + "/server.log", "-w", "-t", "60",
             "-o", options, "start"},
            s.dir, s.dir + "/setup.log") != 0)
        throw std::runtime_error("pg_ctl start failed; see " + s.dir + "/setup.log and " + s.dir +
                                 "/server.log");
}

/// Makes a cluster with initdb in `s.dir`/data.
inline void make_cluster(const std::string& bin, const Server& s) {
    const std::string log = s.dir + "/setup.log";
    if (run({bin + "/initdb", "-D", s.dir + "/data", "-A", "trust", "-U", "agentcore", "-E", "UTF8",
             "--locale=C.UTF-8", "--no-sync"},
            s.dir, log) != 0)
        throw std::runtime_error("initdb failed; see " + log);
}

/// Makes a cluster in a new temporary folder and starts it. `fsync` off unless a test needs
/// durability across a crash of the machine (a stop with -m immediate needs none: the data
/// reached the kernel). Throws std::runtime_error with the log's path when it cannot.
inline Server start_server(bool fsync = false) {
    const auto bin = bindir();
    if (!bin) throw std::runtime_error(missing_message());
    Server s = new_server_folder();
    make_cluster(*bin, s);
    start_cluster(*bin, s, server_options(s, fsync));
    s.owned = true;
    s.owner_pid = ::getpid();
    return s;
}

/// Starts a stopped server's cluster again (after a crash test).
inline void restart_server(const Server& s) {
    const auto bin = bindir();
    start_cluster(*bin, s, server_options(s, false));
}

/// A primary for streaming replication (fsync on, synchronous_commit on), with a replication
/// entry for the tests' user in pg_hba.conf. Its commits wait for no standby until
/// start_standby makes one synchronous.
inline Server start_primary() {
    const auto bin = bindir();
    if (!bin) throw std::runtime_error(missing_message());
    Server s = new_server_folder();
    make_cluster(*bin, s);
    std::ofstream(s.dir + "/data/pg_hba.conf", std::ios::app)
        << "local replication agentcore trust\n";
    start_cluster(*bin, s,
                  server_options(s, true) +
                      " -c wal_level=replica -c max_wal_senders=4 -c synchronous_commit=on");
    s.owned = true;
    s.owner_pid = ::getpid();
    return s;
}

/// A hot standby of `primary` in a folder of its own: a copy made with pg_basebackup -R, whose
/// primary_conninfo names the primary's socket; started, streaming from it. Then each commit
/// of the primary waits until the standby has flushed it (synchronous_standby_names = '*', set
/// after the copy: a promoted standby must not wait for a standby of its own).
inline Server start_standby(const Server& primary) {
    const auto bin = bindir();
    if (!bin) throw std::runtime_error(missing_message());
    Server s = new_server_folder();
    const std::string log = s.dir + "/setup.log";
    if (run({*bin + "/pg_basebackup", "-D", s.dir + "/data", "-h", primary.dir, "-p",
             std::to_string(primary.port), "-U", "agentcore", "-R", "-X", "stream", "-c", "fast",
             "--no-sync"},
            s.dir, log) != 0)
        throw std::runtime_error("pg_basebackup failed; see " + log);
    start_cluster(*bin, s, server_options(s, true) + " -c hot_standby=on");
    s.owned = true;
    s.owner_pid = ::getpid();
    detail::pg::Connection admin(primary.conninfo("postgres"));
    admin.exec("ALTER SYSTEM SET synchronous_standby_names = '*'", detail::pg::Params{},
               "making the standby synchronous on");
    admin.exec("SELECT pg_reload_conf()", detail::pg::Params{},
               "making the standby synchronous on");
    return s;
}

/// Promotes a standby to a primary and waits until it accepts writes.
inline void promote_server(const Server& s) {
    const auto bin = bindir();
    if (run({*bin + "/pg_ctl", "-D", s.dir + "/data", "-w", "-t", "60", "promote"}, s.dir,
            s.dir + "/setup.log") != 0)
        throw std::runtime_error("pg_ctl promote failed; see " + s.dir + "/server.log");
}

/// The parent's pid in /proc/<pid>/stat ("pid (name) state ppid ..."), if it can be read.
inline std::optional<pid_t> parent_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld", &state, &ppid) != 2 || state == 'Z')
        return std::nullopt;
    return static_cast<pid_t>(ppid);
}

/// Sends `sig` to the server's postmaster and waits until it is gone (SIGINT: a fast shutdown;
/// SIGQUIT: an immediate one, as a crash). A postmaster that has exited but was not yet reaped
/// (a zombie, whose pid still answers kill(pid, 0)) counts as gone.
inline void signal_server(const Server& s, int sig) {
    const auto pid = s.postmaster_pid();
    if (!pid) return;
    ::kill(*pid, sig);
    for (int i = 0; i < 600 && parent_of(*pid); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (parent_of(*pid)) ::kill(*pid, SIGKILL);
    for (int i = 0; i < 100 && parent_of(*pid); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

/// Kills the server as a machine's crash would: SIGKILL to its postmaster and then to every
/// process of it (backends, WAL senders), none of them left to shut down in order. Its
/// postmaster.pid is removed, so the server is never signalled again by a stale pid.
inline void kill_server(const Server& s) {
    const auto pid = s.postmaster_pid();
    if (!pid) return;
    std::vector<pid_t> children;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const auto child = static_cast<pid_t>(std::stol(name));
        if (parent_of(child) == *pid) children.push_back(child);
    }
    ::kill(*pid, SIGKILL);
    for (const pid_t child : children) ::kill(child, SIGKILL);
    for (int i = 0; i < 500 && parent_of(*pid); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::filesystem::remove(s.dir + "/data/postmaster.pid", ec);
}

/// Stops a server by its pid and removes its folder. An immediate shutdown: nothing of it is
/// kept, so it need not write a checkpoint.
inline void stop_server(const Server& s) {
    signal_server(s, SIGQUIT);
    std::error_code ec;
    std::filesystem::remove_all(s.dir, ec);
}

/// Where the shared server of a ctest run is described ("<folder> <port>"), if anywhere:
/// AGENTCORE_PG_SERVER_FILE, else the file the build's fixture writes.
inline std::optional<std::string> server_file() {
    const char* v = std::getenv("AGENTCORE_PG_SERVER_FILE");
    if (v != nullptr && *v != '\0') return std::string(v);
#ifdef AGENTCORE_PG_SERVER_FILE_DEFAULT
    return std::string(AGENTCORE_PG_SERVER_FILE_DEFAULT);
#else
    return std::nullopt;
#endif
}

/// The server of this test process: the ctest run's shared one when it is running, else one
/// started now and stopped when the process exits.
inline Server& shared_server() {
    static std::mutex mutex;
    static std::unique_ptr<Server> server;
    std::lock_guard<std::mutex> lock(mutex);
    if (server) return *server;
    if (const auto file = server_file()) {
        std::ifstream in(*file);
        Server s;
        if (in >> s.dir >> s.port && s.running()) {
            server = std::make_unique<Server>(s);
            return *server;
        }
    }
    server = std::make_unique<Server>(start_server());
    static const bool registered = [] {
        std::atexit([] {
            // Only the process that started it (a forked child exits through _exit anyway).
            if (server && server->owned && server->owner_pid == ::getpid()) stop_server(*server);
        });
        return true;
    }();
    (void)registered;
    return *server;
}

/// A fresh, empty database on the shared server; its connection string.
inline std::string fresh_database() {
    static std::atomic<unsigned> counter{0};
    Server& s = shared_server();
    std::random_device rd;
    const std::string name = "t_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) +
                             "_" + std::to_string(rd() % 100000);
    detail::pg::Connection admin(s.conninfo("postgres"));
    admin.exec("CREATE DATABASE " + name + " TEMPLATE template0", detail::pg::Params{},
               "creating a test database on");
    return s.conninfo(name);
}

/// A fresh, empty schema in the database of `conninfo`; a connection string whose search_path
/// is that schema (so the repository's tables go there).
inline std::string fresh_schema(const std::string& conninfo) {
    static std::atomic<unsigned> counter{0};
    const std::string name = "s_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    detail::pg::Connection admin(conninfo);
    admin.exec("CREATE SCHEMA " + name, detail::pg::Params{}, "creating a test schema in");
    return conninfo + " options='-c search_path=" + name + "'";
}

}  // namespace agentcore::testing::pg

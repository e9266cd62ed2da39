#pragma once
// A small RAII layer over libpq: a connection (from a libpq connection string or URI), a result,
// a transaction guard, parameters that are always bound (PQexecParams, text format: never
// spliced into SQL), a pool of idle connections, and the mapping of SQLSTATEs to SessionError
// codes. Messages name the database and what was being done, never a value from a row.
//
// Written against libpq directly rather than libpqxx: the library is header-only and cannot pin
// libpqxx's changing C++ API for its users, and this layer is all the storage needs.

#include <agentcore/error.hpp>

#include <libpq-fe.h>
#include <sys/socket.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace agentcore::detail::pg {

/// True for the SQLSTATEs after which the connection is gone: class 08 (connection exception)
/// and 57P01..57P03 (the server terminated the backend or is shutting down).
inline bool connection_lost_state(std::string_view state) noexcept {
    return state.substr(0, 2) == "08" || state == "57P01" || state == "57P02" || state == "57P03";
}

/// True for the SQLSTATEs of a transaction the server aborted so that it may be run again:
/// serialization failure (40001) and deadlock (40P01).
inline bool retryable_state(std::string_view state) noexcept {
    return state == "40001" || state == "40P01";
}

/// The SessionError code of a SQLSTATE: a unique violation → already_exists; serialization
/// failure, deadlock, lock not available → locked; bad text (invalid UTF-8, a NUL) →
/// invalid_entry; everything else (connection loss, a full disk, ...) → storage.
inline ErrorCode code_of(std::string_view state) noexcept {
    if (state == "23505") return ErrorCode::already_exists;
    if (retryable_state(state) || state == "55P03") return ErrorCode::locked;
    if (state == "22021" || state == "22P05") return ErrorCode::invalid_entry;
    return ErrorCode::storage;
}

/// A SessionError from the server or the connection, with its SQLSTATE ("" when libpq gave
/// none) and whether the connection was lost with it.
class Error : public SessionError {
public:
    Error(ErrorCode code, const std::string& message, std::string sqlstate, bool connection_lost)
        : SessionError(code, message),
          sqlstate_(std::move(sqlstate)),
          connection_lost_(connection_lost) {}
    [[nodiscard]] const std::string& sqlstate() const noexcept { return sqlstate_; }
    [[nodiscard]] bool connection_lost() const noexcept { return connection_lost_; }

private:
    std::string sqlstate_;
    bool connection_lost_;
};

/// Bound parameters, in text format; a null is an absent value. Text holding a NUL byte cannot
/// be a PostgreSQL text value: the storages refuse it before binding (see has_nul).
class Params {
public:
    Params& text(std::string_view v) {
        values_.emplace_back(v);
        nulls_.push_back(false);
        return *this;
    }
    Params& text(const std::string& v) { return text(std::string_view(v)); }
    Params& text(const char* v) { return text(std::string_view(v)); }
    Params& int64(std::int64_t v) { return text(std::to_string(v)); }
    Params& real(double v) {
        char buf[64];
        const auto r =
            std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exactly
        return text(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
    }
    Params& boolean(bool v) { return text(v ? "true" : "false"); }
    Params& null() {
        values_.emplace_back();
        nulls_.push_back(true);
        return *this;
    }
    Params& text(const std::optional<std::string>& v) {
        return v ? text(std::string_view(*v)) : null();
    }
    Params& int64(const std::optional<std::int64_t>& v) { return v ? int64(*v) : null(); }

    [[nodiscard]] int size() const noexcept { return static_cast<int>(values_.size()); }
    // The pointers libpq reads; valid until the next change.
    [[nodiscard]] std::vector<const char*> pointers() const {
        std::vector<const char*> out(values_.size());
        for (std::size_t i = 0; i < values_.size(); ++i)
            out[i] = nulls_[i] ? nullptr : values_[i].c_str();
        return out;
    }
    [[nodiscard]] std::vector<int> lengths() const {
        std::vector<int> out(values_.size());
        for (std::size_t i = 0; i < values_.size(); ++i)
            out[i] = static_cast<int>(values_[i].size());
        return out;
    }

private:
    std::vector<std::string> values_;
    std::vector<bool> nulls_;
};

/// True when `s` holds a NUL byte, which a PostgreSQL text value cannot.
inline bool has_nul(std::string_view s) noexcept { return s.find('\0') != std::string_view::npos; }

/// A bigint[] literal ("{1,NULL,3}") for a parameter: numbers only, so nothing needs quoting.
inline std::string int_array(const std::vector<std::optional<std::int64_t>>& values) {
    std::string out = "{";
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) out.push_back(',');
        out += values[i] ? std::to_string(*values[i]) : std::string("NULL");
    }
    out.push_back('}');
    return out;
}

/// One result, freed with it. Rows and columns are read as text (the text format).
class Result {
public:
    Result() = default;
    explicit Result(PGresult* r) noexcept : r_(r) {}

    [[nodiscard]] int rows() const noexcept { return r_ ? PQntuples(r_.get()) : 0; }
    [[nodiscard]] bool is_null(int row, int col) const noexcept {
        return PQgetisnull(r_.get(), row, col) != 0;
    }
    [[nodiscard]] std::string_view text(int row, int col) const noexcept {
        return std::string_view(PQgetvalue(r_.get(), row, col),
                                static_cast<std::size_t>(PQgetlength(r_.get(), row, col)));
    }
    [[nodiscard]] std::optional<std::string> optional_text(int row, int col) const {
        if (is_null(row, col)) return std::nullopt;
        return std::string(text(row, col));
    }
    [[nodiscard]] std::int64_t int64(int row, int col) const noexcept {
        const std::string_view t = text(row, col);
        std::int64_t v = 0;
        std::from_chars(t.data(), t.data() + t.size(), v);
        return v;
    }
    [[nodiscard]] std::optional<std::int64_t> optional_int64(int row, int col) const noexcept {
        if (is_null(row, col)) return std::nullopt;
        return int64(row, col);
    }
    [[nodiscard]] double real(int row, int col) const noexcept {
        return std::strtod(PQgetvalue(r_.get(), row, col), nullptr);  // also reads Infinity and NaN
    }
    [[nodiscard]] bool boolean(int row, int col) const noexcept { return text(row, col) == "t"; }
    [[nodiscard]] const PGresult* native() const noexcept { return r_.get(); }
    /// Rows a command changed (INSERT, UPDATE, DELETE without RETURNING).
    [[nodiscard]] std::int64_t affected() const noexcept {
        const char* n = r_ ? PQcmdTuples(r_.get()) : "";
        return *n ? std::strtoll(n, nullptr, 10) : 0;
    }

private:
    struct Clear {
        void operator()(PGresult* r) const noexcept { PQclear(r); }
    };
    std::unique_ptr<PGresult, Clear> r_;
};

/// A fault a test makes the next statement meet, once.
enum class Fault {
    none,
    drop_before_send,  ///< the connection is cut before the statement is sent: it never runs
    drop_after_send,   ///< the connection is cut after the statement is sent: it may commit unseen
};

/// One connection. Not thread-safe: one user at a time (a storage, or the pool that keeps it).
class Connection {
public:
    /// Connects with a libpq connection string ("host=... dbname=...") or URI
    /// ("postgresql://..."). Failure: storage, naming the database when libpq knows it.
    explicit Connection(std::string conninfo) : conninfo_(std::move(conninfo)) { connect(); }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    /// The database's name, for messages.
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] PGconn* handle() const noexcept { return conn_.get(); }
    /// True when the connection is gone (a lost server, a terminated backend).
    [[nodiscard]] bool broken() const noexcept {
        return !conn_ || PQstatus(conn_.get()) == CONNECTION_BAD;
    }
    /// True when no transaction is open.
    [[nodiscard]] bool idle() const noexcept {
        return conn_ && PQtransactionStatus(conn_.get()) == PQTRANS_IDLE;
    }

    /// Replaces a lost connection with a new one to the same database (the settings made with
    /// set() are made again). Failure: storage.
    void reconnect() {
        conn_.reset();
        prepared_.clear();
        connect();
        for (const auto& [setting, value] : settings_) apply(setting, value);
    }

    /// A session setting kept across reconnects (SET <setting> = <value>); both are the
    /// library's own constants, never an application's string.
    void set(const char* setting, const char* value) {
        for (auto& s : settings_) {
            if (s.first == setting) {
                if (s.second == value) return;
                apply(setting, value);
                s.second = value;
                return;
            }
        }
        apply(setting, value);
        settings_.emplace_back(setting, value);
    }

    /// Runs one statement with bound parameters and returns its rows. Failure: the mapped
    /// Error (its connection_lost() says whether the connection went with it).
    Result exec(const char* sql, const Params& params, std::string_view what) {
        return run(sql, nullptr, params, what);
    }
    /// As exec, for a statement the storage runs again and again (an append, a path read): it is
    /// parsed and planned once per connection (a named prepared statement, made again after a
    /// reconnect) and then only executed.
    Result exec_prepared(const std::string& sql, const Params& params, std::string_view what) {
        if (broken()) throw lost(what, "");
        auto it = prepared_.find(sql);
        if (it == prepared_.end()) {
            std::string name = "agentcore_" + std::to_string(prepared_.size());
            Result r(PQprepare(conn_.get(), name.c_str(), sql.c_str(), params.size(), nullptr));
            check(r, what);
            it = prepared_.emplace(sql, std::move(name)).first;
        }
        return run(nullptr, it->second.c_str(), params, what);
    }
    Result exec(const char* sql, std::string_view what) { return exec(sql, Params{}, what); }
    Result exec(const std::string& sql, const Params& params, std::string_view what) {
        return exec(sql.c_str(), params, what);
    }

    /// Runs SQL text of several statements without parameters (schema migrations only).
    void exec_script(const char* sql, std::string_view what) {
        if (broken()) throw lost(what, "");
        Result r(PQexec(conn_.get(), sql));
        check(r, what);
    }

    /// The next statement meets `fault` (tests only).
    void inject(Fault fault) noexcept { fault_ = fault; }

private:
    // Runs the statement `sql`, or the prepared statement `prepared` when sql is null.
    Result run(const char* sql, const char* prepared, const Params& params, std::string_view what) {
        if (broken()) throw lost(what, "");
        const auto values = params.pointers();
        const auto lengths = params.lengths();
        const int n = params.size();
        const Fault fault = std::exchange(fault_, Fault::none);
        if (fault == Fault::drop_before_send) cut();
        if (fault == Fault::none) {
            Result r(sql ? PQexecParams(conn_.get(), sql, n, nullptr, values.data(), lengths.data(),
                                        nullptr, 0)
                         : PQexecPrepared(conn_.get(), prepared, n, values.data(), lengths.data(),
                                          nullptr, 0));
            check(r, what);
            return r;
        }
        // The fault path: send, maybe cut, then read what comes back. A cut after the send
        // loses the outcome even when the reply was already in the socket's buffer: the caller
        // sees a lost connection either way, as a client does when the network fails there.
        const int sent = sql ? PQsendQueryParams(conn_.get(), sql, n, nullptr, values.data(),
                                                 lengths.data(), nullptr, 0)
                             : PQsendQueryPrepared(conn_.get(), prepared, n, values.data(),
                                                   lengths.data(), nullptr, 0);
        if (sent == 1) {
            PQflush(conn_.get());
            if (fault == Fault::drop_after_send) {
                cut();
                while (PGresult* r = PQgetResult(conn_.get())) PQclear(r);
                throw lost(what, "");
            }
        }
        Result last;
        while (PGresult* r = PQgetResult(conn_.get())) last = Result(r);
        check(last, what);
        return last;
    }

    struct Finish {
        void operator()(PGconn* c) const noexcept { PQfinish(c); }
    };

    void connect() {
        conn_.reset(PQconnectdb(conninfo_.c_str()));
        if (!conn_)
            throw Error(ErrorCode::storage, "connecting to PostgreSQL: out of memory", "", true);
        const char* db = PQdb(conn_.get());
        name_ = db ? db : "";
        if (PQstatus(conn_.get()) != CONNECTION_OK) {
            std::string message = PQerrorMessage(conn_.get());
            while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
                message.pop_back();
            conn_.reset();
            throw Error(ErrorCode::storage,
                        "connecting to PostgreSQL database '" + name_ + "': " + message, "", true);
        }
        // Notices (such as "already exists, skipping") are not for the application's stderr.
        PQsetNoticeProcessor(
            conn_.get(), [](void*, const char*) {}, nullptr);
    }

    void apply(const std::string& setting, const std::string& value) {
        exec(("SET " + setting + " = " + value).c_str(), "configuring the connection to");
    }

    // Cuts the connection's socket as a lost network would.
    void cut() noexcept {
        const int fd = PQsocket(conn_.get());
        if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    }

    Error lost(std::string_view what, std::string sqlstate) const {
        return Error(ErrorCode::storage,
                     std::string(what) + " database '" + name_ + "': the connection was lost" +
                         (sqlstate.empty() ? std::string() : " (SQLSTATE " + sqlstate + ")"),
                     std::move(sqlstate), true);
    }

    void check(const Result& r, std::string_view what) {
        const PGresult* res = r.native();
        const ExecStatusType status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
        if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY)
            return;
        const char* state_field = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
        std::string state = state_field ? state_field : "";
        if (broken() || connection_lost_state(state)) throw lost(what, std::move(state));
        // The primary message of a data exception (class 22) may quote a value: leave it out.
        std::string detail;
        if (state.substr(0, 2) != "22") {
            const char* primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
            detail = primary ? primary : PQerrorMessage(conn_.get());
            while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' '))
                detail.pop_back();
        } else {
            detail = "the server refused a value";
        }
        throw Error(code_of(state),
                    std::string(what) + " database '" + name_ + "': " + detail +
                        (state.empty() ? std::string() : " (SQLSTATE " + state + ")"),
                    std::move(state), false);
    }

    std::string conninfo_;
    std::string name_;
    std::unique_ptr<PGconn, Finish> conn_;
    std::vector<std::pair<std::string, std::string>> settings_;
    Fault fault_ = Fault::none;
    std::unordered_map<std::string, std::string> prepared_;  // statement text -> its name
};

/// BEGIN ... COMMIT on a connection; rolled back unless committed.
class Transaction {
public:
    explicit Transaction(Connection& c) : c_(c) { c_.exec("BEGIN", "starting a transaction on"); }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction() {
        if (!done_ && !c_.broken()) PQclear(PQexec(c_.handle(), "ROLLBACK"));
    }
    void commit() {
        done_ = true;
        c_.exec("COMMIT", "committing to");
    }

private:
    Connection& c_;
    bool done_ = false;
};

/// Runs `f` again while it fails with a serialization failure or a deadlock (the server aborted
/// the transaction, so nothing of it was written), at most `attempts` times in all, with a short
/// growing pause; the last failure is thrown (locked).
template <class F>
auto retrying(int attempts, F&& f) -> decltype(f()) {
    for (int attempt = 1;; ++attempt) {
        try {
            return f();
        } catch (const Error& e) {
            if (!retryable_state(e.sqlstate()) || attempt >= attempts) throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2 * attempt * attempt));
    }
}

/// Idle connections to one database, shared by a repository and the storages it opened; a
/// storage takes one for its lifetime and gives it back (when healthy and outside a
/// transaction) when it is destroyed. Thread-safe.
class Pool {
public:
    explicit Pool(std::string conninfo, std::size_t max_idle = 8)
        : conninfo_(std::move(conninfo)), max_idle_(max_idle) {}

    [[nodiscard]] const std::string& conninfo() const noexcept { return conninfo_; }

    /// An idle connection, or a new one.
    std::unique_ptr<Connection> take() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            while (!idle_.empty()) {
                auto c = std::move(idle_.back());
                idle_.pop_back();
                if (!c->broken()) return c;
            }
        }
        return std::make_unique<Connection>(conninfo_);
    }

    /// Keeps a connection for later, unless it is broken, inside a transaction, or the pool is
    /// full.
    void give_back(std::unique_ptr<Connection> c) noexcept {
        if (!c || c->broken() || !c->idle()) return;
        std::lock_guard<std::mutex> lock(mutex_);
        if (idle_.size() < max_idle_) idle_.push_back(std::move(c));
    }

    /// Runs `prepare` once for this pool (the schema check), under the pool's lock.
    template <class F>
    void once(F&& prepare) {
        std::lock_guard<std::mutex> lock(once_mutex_);
        if (prepared_) return;
        prepare();
        prepared_ = true;
    }

private:
    std::string conninfo_;
    std::size_t max_idle_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<Connection>> idle_;
    std::mutex once_mutex_;
    bool prepared_ = false;
};

}  // namespace agentcore::detail::pg

#pragma once
// A small RAII layer over the sqlite3 C API: a connection, prepared statements (kept and reused
// per connection), an IMMEDIATE transaction, and the mapping of SQLite's result codes to
// SessionError codes. Messages name the database file and what was being done, never a value.

#include <agentcore/error.hpp>

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace agentcore::detail::sqlite {

/// The SessionError code for an SQLite result code: BUSY/LOCKED → locked, NOTADB/CORRUPT →
/// invalid_session, a UNIQUE or PRIMARY KEY conflict → already_exists, everything else → storage.
inline ErrorCode code_of(int rc) noexcept {
    switch (rc & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED: return ErrorCode::locked;
        case SQLITE_NOTADB:
        case SQLITE_CORRUPT: return ErrorCode::invalid_session;
        case SQLITE_CONSTRAINT:
            return rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY
                       ? ErrorCode::already_exists
                       : ErrorCode::storage;
        default: return ErrorCode::storage;
    }
}

/// One prepared statement; reset (bindings cleared) before each use by Database::statement.
class Statement {
public:
    Statement() = default;
    Statement(sqlite3_stmt* stmt, std::string_view path) : stmt_(stmt), path_(path) {}
    Statement(Statement&& o) noexcept : stmt_(std::exchange(o.stmt_, nullptr)), path_(o.path_) {}
    Statement& operator=(Statement&& o) noexcept {
        if (this != &o) {
            sqlite3_finalize(stmt_);
            stmt_ = std::exchange(o.stmt_, nullptr);
            path_ = o.path_;
        }
        return *this;
    }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement() { sqlite3_finalize(stmt_); }

    Statement& bind(int i, std::string_view text) {
        check(
            sqlite3_bind_text64(stmt_, i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
            "binding");
        return *this;
    }
    Statement& bind(int i, std::int64_t value) {
        check(sqlite3_bind_int64(stmt_, i, value), "binding");
        return *this;
    }
    Statement& bind(int i, double value) {
        check(sqlite3_bind_double(stmt_, i, value), "binding");
        return *this;
    }
    Statement& bind_null(int i) {
        check(sqlite3_bind_null(stmt_, i), "binding");
        return *this;
    }
    template <class T>
    Statement& bind_optional(int i, const std::optional<T>& value) {
        return value ? bind(i, *value) : bind_null(i);
    }

    /// Runs the statement to its next row: true for a row, false when done. Throws the mapped
    /// SessionError on failure.
    bool step() {
        const int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        const int ext = sqlite3_extended_errcode(sqlite3_db_handle(stmt_));
        sqlite3_reset(stmt_);
        fail(ext, "running a statement on");
    }
    /// Runs a statement that returns no rows.
    void run() {
        while (step()) {
        }
    }
    /// Runs a statement that returns no rows; a failure's message says `what` was being done.
    void run(std::string_view what) {
        int rc = SQLITE_ROW;
        while (rc == SQLITE_ROW) rc = sqlite3_step(stmt_);
        if (rc == SQLITE_DONE) return;
        const int ext = sqlite3_extended_errcode(sqlite3_db_handle(stmt_));
        sqlite3_reset(stmt_);
        fail(ext, what);
    }

    [[nodiscard]] bool is_null(int col) const {
        return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
    }
    [[nodiscard]] std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
    [[nodiscard]] double real(int col) const { return sqlite3_column_double(stmt_, col); }
    [[nodiscard]] std::string_view text(int col) const {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
        return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
                 : std::string_view{};
    }
    [[nodiscard]] std::optional<std::string> optional_text(int col) const {
        if (is_null(col)) return std::nullopt;
        return std::string(text(col));
    }

    void reset() noexcept {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }

    [[noreturn]] void fail(int rc, std::string_view what) const {
        throw SessionError(code_of(rc), std::string(what) + " '" + std::string(path_) +
                                            "': " + sqlite3_errstr(rc) + " (SQLite code " +
                                            std::to_string(rc) + ")");
    }

private:
    void check(int rc, std::string_view what) const {
        if (rc != SQLITE_OK) fail(rc, what);
    }

    sqlite3_stmt* stmt_ = nullptr;
    std::string_view path_;
};

/// Resets a statement when the scope that uses it ends, so that no half-read statement keeps a
/// read snapshot of the database open.
class Reset {
public:
    explicit Reset(Statement& statement) noexcept : statement_(statement) {}
    Reset(const Reset&) = delete;
    Reset& operator=(const Reset&) = delete;
    ~Reset() { statement_.reset(); }

private:
    Statement& statement_;
};

/// One connection. Not thread-safe (opened with SQLITE_OPEN_NOMUTEX): one storage, one thread.
class Database {
public:
    /// Opens (and, with `create`, creates) the database file. Symbolic links are refused
    /// (SQLITE_OPEN_NOFOLLOW). `busy_wait` bounds every wait for another connection's lock;
    /// beyond it the operation fails with `locked`.
    Database(std::string path, bool create, bool read_only, std::chrono::milliseconds busy_wait)
        : path_(std::move(path)) {
        int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE;
        flags |= read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
        if (create && !read_only) flags |= SQLITE_OPEN_CREATE;
        sqlite3* db = nullptr;
        const int rc = sqlite3_open_v2(path_.c_str(), &db, flags, nullptr);
        db_.reset(db);
        if (rc != SQLITE_OK) {
            const ErrorCode code =
                rc == SQLITE_CANTOPEN && !create ? ErrorCode::not_found : code_of(rc);
            throw SessionError(code, "opening database '" + path_ + "': " + sqlite3_errstr(rc) +
                                         " (SQLite code " + std::to_string(rc) + ")");
        }
        sqlite3_busy_timeout(db_.get(), static_cast<int>(busy_wait.count()));
    }
    // Statements keep a view of path_: a connection stays where it was made.
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] sqlite3* handle() const noexcept { return db_.get(); }

    /// Runs SQL text without parameters (schema, pragmas, transaction control).
    void exec(const char* sql, std::string_view what) {
        char* message = nullptr;
        const int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, &message);
        sqlite3_free(message);
        if (rc != SQLITE_OK) {
            const int ext = sqlite3_extended_errcode(db_.get());
            throw SessionError(code_of(ext), std::string(what) + " '" + path_ +
                                                 "': " + sqlite3_errstr(ext) + " (SQLite code " +
                                                 std::to_string(ext) + ")");
        }
    }

    /// The prepared statement for `sql`, prepared once per connection and reset for this use.
    Statement& statement(const char* sql) {
        auto it = statements_.find(sql);
        if (it == statements_.end()) {
            sqlite3_stmt* stmt = nullptr;
            const int rc =
                sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
            if (rc != SQLITE_OK) {
                sqlite3_finalize(stmt);
                const int ext = sqlite3_extended_errcode(db_.get());
                throw SessionError(code_of(ext), "preparing a statement on '" + path_ +
                                                     "': " + sqlite3_errstr(ext) +
                                                     " (SQLite code " + std::to_string(ext) + ")");
            }
            it = statements_.emplace(sql, Statement(stmt, path_)).first;
        }
        it->second.reset();
        return it->second;
    }

    /// Drops every prepared statement (before closing, or after the schema changed).
    void forget_statements() noexcept { statements_.clear(); }

private:
    struct Close {
        void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
    };
    std::string path_;
    std::unique_ptr<sqlite3, Close> db_;
    // Keyed by the SQL literal's address; declared after db_, so finalised before it closes.
    std::unordered_map<const char*, Statement> statements_;
};

/// BEGIN IMMEDIATE ... COMMIT; rolled back unless committed. IMMEDIATE takes the write lock at
/// the start, so a transaction never fails half-way to upgrade a read lock. Both are prepared
/// once per connection, as every statement.
class Transaction {
public:
    explicit Transaction(Database& db) : db_(db) {
        db_.statement("BEGIN IMMEDIATE").run("starting a write transaction on");
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction() {
        if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
    void commit() {
        db_.statement("COMMIT").run("committing to");
        done_ = true;
    }

private:
    Database& db_;
    bool done_ = false;
};

/// BEGIN ... COMMIT around reads: every statement in it reads the same snapshot of the database,
/// and the connection takes its read lock once rather than once per statement. Nothing when the
/// connection is already in a transaction (it reads that one's snapshot).
class ReadTransaction {
public:
    explicit ReadTransaction(Database& db) : db_(db) {
        if (sqlite3_get_autocommit(db_.handle()) == 0) return;
        db_.statement("BEGIN").run("starting a read transaction on");
        begun_ = true;
    }
    ReadTransaction(const ReadTransaction&) = delete;
    ReadTransaction& operator=(const ReadTransaction&) = delete;
    ~ReadTransaction() {
        if (begun_) sqlite3_exec(db_.handle(), "COMMIT", nullptr, nullptr, nullptr);
    }

private:
    Database& db_;
    bool begun_ = false;
};

}  // namespace agentcore::detail::sqlite

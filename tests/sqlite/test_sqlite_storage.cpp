// The SQLite storage and repository (SPEC §9): the conformance kit, the schema and its
// versions, files and modes, losslessness, single writer, and bad input.

#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/scratch.hpp"

#include <agentcore/session.hpp>
#include <agentcore/sqlite/sqlite_repo.hpp>
#include <agentcore/testing/conformance.hpp>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

using namespace agentcore;
using agentcore::testing::chain_entries;
using agentcore::testing::error_of;
using agentcore::testing::message_of_error;
using agentcore::testing::read_file;
using agentcore::testing::ScratchDir;
using agentcore::testing::unwritable_entry;
using agentcore::testing::write_file;

namespace {

static_assert(SessionRepository<SqliteSessionRepo>);

SqliteStorageOptions fast() {
    SqliteStorageOptions o;
    o.durability = Durability::os_buffered;
    return o;
}

SessionHeader header_of(std::string id) {
    SessionHeader h;
    h.id = std::move(id);
    h.timestamp = "2026-12-02T07:43:23.123Z";
    h.cwd = "/w";
    h.metadata = Json::object();
    return h;
}

CreateOptions named(std::string id, std::string cwd = "/w") {
    CreateOptions o;
    o.id = std::move(id);
    o.cwd = std::move(cwd);
    return o;
}

// A second, raw connection, as another program (or a careless one) would open the database.
struct Raw {
    sqlite3* db = nullptr;
    explicit Raw(const std::string& path, bool create = false) {
        const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
        REQUIRE(sqlite3_open_v2(path.c_str(), &db, flags, nullptr) == SQLITE_OK);
    }
    ~Raw() { sqlite3_close_v2(db); }
    Raw(const Raw&) = delete;
    Raw& operator=(const Raw&) = delete;
    int exec(const std::string& sql) {
        return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
    }
    std::string text(const std::string& sql) {
        sqlite3_stmt* s = nullptr;
        REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
        std::string out;
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) != nullptr)
            out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
        sqlite3_finalize(s);
        return out;
    }
};

unsigned mode_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode & 0777u;
}

}  // namespace

TEST_CASE("the SQLite repository passes the conformance kit, reopened from its database",
          "[sqlite][conformance]") {
    std::vector<std::unique_ptr<ScratchDir>> dirs;
    agentcore::testing::ConformanceTarget<SqliteSessionRepo> target;
    target.fresh = [&] {
        dirs.push_back(std::make_unique<ScratchDir>());
        return SqliteSessionRepo(dirs.back()->file("sessions.db"), fast());
    };
    target.reopen = [](SqliteSessionRepo& r) { return SqliteSessionRepo(r.path(), r.options()); };
    target.exclusive_writers = true;
    const auto report = agentcore::testing::run_conformance(target);
    INFO(report.summary());
    CHECK(report.ok());
}

TEST_CASE("the database is in WAL mode with synchronous FULL by default and NORMAL on request",
          "[sqlite]") {
    ScratchDir dir;
    auto pragma = [](sqlite3* db, const char* sql) {
        sqlite3_stmt* s = nullptr;
        REQUIRE(sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK);
        REQUIRE(sqlite3_step(s) == SQLITE_ROW);
        std::string v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
        sqlite3_finalize(s);
        return v;
    };
    SqliteSessionRepo repo(dir.file("a.db"));
    auto s = create(repo, named("durable"));
    CHECK(pragma(s.storage().native_handle(), "PRAGMA journal_mode") == "wal");
    CHECK(pragma(s.storage().native_handle(), "PRAGMA synchronous") == "2");
    CHECK(pragma(s.storage().native_handle(), "PRAGMA foreign_keys") == "1");
    SqliteStorageOptions normal;
    normal.durability = Durability::os_buffered;
    SqliteSessionRepo fast_repo(dir.file("a.db"), normal);
    auto f = create(fast_repo, named("fast"));
    CHECK(pragma(f.storage().native_handle(), "PRAGMA synchronous") == "1");
}

TEST_CASE("a writer's appends checkpoint the WAL: it stays near SQLite's 1,000 pages", "[sqlite]") {
    ScratchDir dir;
    const std::string db = dir.file("wal.db");
    SqliteSessionRepo repo(db, fast());
    auto s = create(repo, named("long"));
    // Each append writes about six pages; without checkpoints 600 appends leave some 3,600
    // frames (15 MB) in the WAL.
    for (int i = 0; i < 600; ++i)
        append_message(s, UserMessage{"entry " + std::to_string(i), i, {}});
    CHECK(std::filesystem::file_size(db + "-wal") < 6'000'000);
    CHECK(std::filesystem::file_size(db) > 100'000);  // the checkpoints wrote the pages back
}

TEST_CASE(
    "database, WAL and lock files are 0600 in 0700 folders, descriptors close-on-exec, symlinks "
    "refused",
    "[sqlite][security]") {
    ScratchDir dir;
    const std::string db = dir.path() + "/new/folder/s.db";
    SqliteSessionRepo repo(db);
    auto s = create(repo, named("private"));
    append_message(s, UserMessage{"secret", 1, {}});
    CHECK(mode_of(db) == 0600);
    CHECK(mode_of(db + "-wal") == 0600);
    CHECK(mode_of(db + "-shm") == 0600);
    CHECK(mode_of(dir.path() + "/new/folder") == 0700);
    CHECK(mode_of(dir.path() + "/new") == 0700);
    CHECK(mode_of(db + ".locks") == 0700);
    CHECK(mode_of(db + ".locks/private.lock") == 0600);
    int seen = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const auto target = std::filesystem::read_symlink(e.path(), ec);
        if (ec || target.string().rfind(dir.path(), 0) != 0) continue;
        const int fd = std::stoi(e.path().filename().string());
        const int flags = ::fcntl(fd, F_GETFD);
        if (flags < 0) continue;
        ++seen;
        INFO(target.string());
        CHECK((flags & FD_CLOEXEC) != 0);
    }
    CHECK(seen >= 3);  // the database, its WAL and the session lock

    const std::string link = dir.file("link.db");
    REQUIRE(::symlink(db.c_str(), link.c_str()) == 0);
    CHECK(error_of([&] { SqliteSessionRepo bad(link); }) == ErrorCode::storage);
    CHECK(error_of([&] { (void)SqliteSessionStorage::open_read_only(link, "private"); }) ==
          ErrorCode::storage);
}

TEST_CASE("a session copied into SQLite exports the bytes of a JSONL round trip, in both dialects",
          "[sqlite][lossless]") {
    for (const Dialect dialect : {Dialect::native, Dialect::pi}) {
        ScratchDir dir;
        JsonlStorageOptions jo;
        jo.dialect = dialect;
        jo.durability = Durability::os_buffered;
        JsonlSessionRepo jsonl(dir.file("jsonl"), jo);
        std::string path;
        {
            auto s = create(jsonl, named("lossless"));
            const std::string a =
                append_message(s, UserMessage{"héllo \"quoted\" ; DROP TABLE entries;", 1, {}});
            AssistantMessage m;
            m.content.push_back(ThinkingContent{"hmm", Json{{"signature", "sig"}}});
            m.content.push_back(ToolCallContent{"call_1", "read", Json{{"path", "/x"}}, {}});
            m.provider = "anthropic";
            m.model = "claude";
            m.usage.input = 3;
            m.usage.cost.total = 0.125;
            m.stop_reason = "tool_use";
            m.extra = Json{{"responseId", "r1"}};
            append_message(s, std::move(m));
            append_compaction(s, "sum", a, 10, Json{{"files", {"a"}}}, false, std::nullopt,
                              std::vector<AgentMessage>{});
            append_label(s, a, std::string("mark"));
            append_session_name(s, "name");
            s.storage().append_entry(entry_from_json(Json{{"type", "future"},
                                                          {"id", "f1234567"},
                                                          {"parent_id", a},
                                                          {"timestamp", "2026-01-01T00:00:00.000Z"},
                                                          {"x", {1}}},
                                                     Dialect::native));
            set_leaf_id(s, a);
            path = s.storage().path();
        }
        const std::string file_bytes = read_file(path);
        const auto source = JsonlSessionStorage::open_read_only(path);
        std::vector<SessionTreeEntry> entries;
        for (const auto& e : source.get_entries(EntriesQuery{})) entries.push_back(*e);
        SqliteStorageOptions so = fast();
        so.dialect = source.dialect();
        {
            auto copy =
                SqliteSessionStorage::create(dir.file("s.db"), source.metadata(), so, entries);
            CHECK(copy.export_jsonl() == file_bytes);
        }
        const auto reopened =
            SqliteSessionStorage::open_read_only(dir.file("s.db"), "lossless", so);
        CHECK(reopened.export_jsonl() == file_bytes);
        CHECK(reopened.dialect() == dialect);
        CHECK(reopened.get_leaf_id() == source.get_leaf_id());
        CHECK(reopened.get_session_name() == source.get_session_name());
    }
}

TEST_CASE(
    "a fork keeps the stored lines of the entries it copies as they are and encodes those whose "
    "links change, in both dialects",
    "[sqlite][fork][lossless]") {
    for (const Dialect dialect : {Dialect::native, Dialect::pi}) {
        ScratchDir dir;
        const std::string db = dir.file("f.db");
        SqliteStorageOptions o = fast();
        o.dialect = dialect;
        SqliteSessionRepo repo(db, o);
        auto entry = [](const char* id, std::optional<std::string> parent, const char* text) {
            MessageEntry e;
            e.id = id;
            e.parent_id = std::move(parent);
            e.timestamp = "2026-12-02T07:43:23.123Z";
            e.message = UserMessage{text, 1, {}};
            return e;
        };
        {
            auto s = create(repo, named("source"));
            s.storage().append_entry(entry("e1000001", std::nullopt, "one"));
            s.storage().append_entry(entry("e1000002", "e1000001", "two"));
            s.storage().append_entry(entry("x1000003", "e1000001", "off the path"));
            LabelEntry label;
            label.id = "l1000004";
            label.parent_id = "e1000002";
            label.timestamp = "2026-12-02T07:43:23.123Z";
            label.target_id = "x1000003";
            label.label = "side";
            s.storage().append_entry(label);
            s.storage().append_entry(entry("e1000005", "l1000004", "five"));
        }
        // A line stored in another layout than the codec's (as another program might have
        // written it): a fork that keeps the entry copies it as it is.
        Raw raw(db);
        const std::string stored = raw.text("SELECT line FROM entries WHERE id = 'e1000001'");
        REQUIRE(
            raw.exec("UPDATE entries SET line = '{ ' || substr(line, 2) WHERE id = 'e1000001'") ==
            SQLITE_OK);
        const std::string spaced = raw.text("SELECT line FROM entries WHERE id = 'e1000001'");
        REQUIRE(spaced != stored);
        ForkOptions at;
        at.entry_id = std::string("e1000005");
        at.position = ForkPosition::at;
        at.session_id = std::string("forked");
        auto f = fork(repo, "source", at);
        CHECK(f.storage().dialect() == dialect);
        // The label (its target not copied) is left out, so the last entry's parent changes: it
        // alone is encoded again.
        const auto source = open_read_only(repo, "source");
        const auto expected = prepare_fork_entries(get_entries_to_fork(source.storage(), at));
        REQUIRE(expected.size() == 3);
        std::string lines = spaced + "\n";
        for (std::size_t i = 1; i < expected.size(); ++i)
            lines += encode_entry(expected[i], dialect) + "\n";
        const std::string exported = f.storage().export_jsonl();
        CHECK(exported.substr(exported.find('\n') + 1) == lines);
        CHECK(*parent_id_of(*f.storage().get_entry("e1000005")) == "e1000002");
        const auto reopened = open_read_only(repo, "forked");
        CHECK(reopened.storage().export_jsonl() == exported);
        CHECK(reopened.storage().entry_count() == 3);
    }
}

TEST_CASE("a fork whose source lost an entry meanwhile is not_found and writes nothing",
          "[sqlite][fork]") {
    ScratchDir dir;
    const std::string db = dir.file("g.db");
    SqliteSessionRepo repo(db, fast());
    {
        auto s = create(repo, named("source"));
        append_message(s, UserMessage{"one", 1, {}});
    }
    const auto source = open_read_only(repo, "source");
    std::vector<SessionTreeEntry> entries;
    for (const auto& e : source.storage().get_entries()) entries.push_back(*e);
    Raw(db).exec("DELETE FROM entries WHERE session_id = 'source'");
    SessionHeader header = source.storage().metadata();
    header.id = "copy";
    const auto write = [&] {
        (void)detail::sqlite::write_session(repo.database(), header, Dialect::native, entries,
                                            "source", {true});
    };
    CHECK(error_of(write) == ErrorCode::not_found);
    CHECK(message_of_error(write).find("session 'source' in database '" + db + "'") !=
          std::string::npos);
    Raw raw(db);
    CHECK(raw.text("SELECT count(*) FROM sessions WHERE id = 'copy'") == "0");
    CHECK(raw.text("SELECT count(*) FROM entries") == "0");
}

TEST_CASE(
    "the path of a leaf is the same whether its entries are consecutive or interleaved with other "
    "branches",
    "[sqlite][context]") {
    ScratchDir dir;
    SqliteSessionRepo repo(dir.file("p.db"), fast());
    auto s = create(repo, named("paths"));
    InMemorySessionRepo memory;
    auto m = create(memory, named("paths"));
    auto both = [&](const SessionTreeEntry& e) {
        s.storage().append_entry(e);
        m.storage().append_entry(e);
    };
    auto message = [](std::string id, std::optional<std::string> parent) {
        MessageEntry e;
        e.id = std::move(id);
        e.parent_id = std::move(parent);
        e.timestamp = "2026-12-02T07:43:23.123Z";
        e.message = UserMessage{"text", 1, {}};
        return SessionTreeEntry(std::move(e));
    };
    auto id = [](char branch, int i) {
        return std::string(1, branch) + std::to_string(1000000 + i);
    };
    // A run of 700 consecutive entries, then three branches from its end whose entries alternate,
    // then a run again on branch a.
    for (int i = 0; i < 700; ++i)
        both(message(id('r', i), i == 0 ? std::nullopt : std::optional(id('r', i - 1))));
    for (int i = 0; i < 400; ++i)
        for (const char b : {'a', 'b', 'c'})
            both(message(id(b, i), i == 0 ? id('r', 699) : id(b, i - 1)));
    for (int i = 400; i < 500; ++i) both(message(id('a', i), id('a', i - 1)));
    auto ids = [](const std::vector<EntryHandle>& path) {
        std::vector<std::string> out;
        for (const auto& e : path) out.push_back(id_of(*e));
        return out;
    };
    for (const std::string& leaf : {id('a', 499), id('b', 399), id('c', 200), id('r', 650)}) {
        INFO(leaf);
        const auto reopened = SqliteSessionStorage::open_read_only(dir.file("p.db"), "paths");
        const auto path = ids(reopened.get_path_to_root_or_compaction(std::string_view(leaf)));
        CHECK(path == ids(m.storage().get_path_to_root_or_compaction(std::string_view(leaf))));
        CHECK(path.size() == (leaf[0] == 'r' ? 651u : 700u + std::stoul(leaf.substr(1)) - 999999u));
    }
    CHECK(error_of([&] {
              (void)s.storage().get_path_to_root_or_compaction(std::string_view("nope"));
          }) == ErrorCode::not_found);
}

TEST_CASE("an older schema is migrated in one transaction, a newer one is refused, untouched",
          "[sqlite][schema]") {
    ScratchDir dir;
    const std::string db = dir.file("old.db");
    {
        Raw raw(db, true);
        REQUIRE(raw.exec("PRAGMA journal_mode=WAL") == SQLITE_OK);
        REQUIRE(raw.exec("CREATE TABLE agentcore_schema_migrations (version INTEGER PRIMARY KEY, "
                         "applied_at TEXT NOT NULL) STRICT") == SQLITE_OK);
        REQUIRE(raw.exec(detail::sqlite::migrations[0]) == SQLITE_OK);
        REQUIRE(raw.exec("INSERT INTO agentcore_schema_migrations VALUES (1, 'then')") ==
                SQLITE_OK);
    }
    CHECK(error_of([&] { (void)SqliteSessionStorage::open_read_only(db, "x"); }) ==
          ErrorCode::invalid_session);
    {
        SqliteSessionRepo repo(db);
        auto s = create(repo, named("after-migration"));
        append_message(s, UserMessage{"a", 1, {}});
    }
    Raw raw(db);
    CHECK(raw.text("SELECT max(version) FROM agentcore_schema_migrations") ==
          std::to_string(detail::sqlite::schema_version));
    CHECK(raw.text("SELECT name FROM sqlite_master WHERE name = 'entries_labels'") ==
          "entries_labels");

    REQUIRE(raw.exec("INSERT INTO agentcore_schema_migrations VALUES (99, 'future')") == SQLITE_OK);
    REQUIRE(raw.exec("PRAGMA wal_checkpoint(TRUNCATE)") == SQLITE_OK);
    const std::string before = read_file(db);
    const std::string message = message_of_error([&] { SqliteSessionRepo newer(db); });
    CHECK(message.find("[agentcore.invalid_session]") == 0);
    CHECK(message.find("99") != std::string::npos);
    CHECK(error_of([&] { (void)SqliteSessionStorage::open(db, "after-migration"); }) ==
          ErrorCode::invalid_session);
    CHECK(read_file(db) == before);
}

TEST_CASE(
    "a file that is not a database, or a truncated one, is invalid_session and stays untouched",
    "[sqlite][damage]") {
    ScratchDir dir;
    const std::string text = dir.file("notes.db");
    write_file(text, "this is a text file, not a database\n");
    CHECK(error_of([&] { SqliteSessionRepo repo(text); }) == ErrorCode::invalid_session);
    CHECK(read_file(text) == "this is a text file, not a database\n");
    CHECK_FALSE(std::filesystem::exists(text + "-wal"));

    const std::string db = dir.file("full.db");
    {
        SqliteSessionRepo repo(db, fast());
        auto s = create(repo, named("t"));
        for (int i = 0; i < 300; ++i) append_message(s, UserMessage{std::string(200, 'x'), i, {}});
    }
    REQUIRE_FALSE(std::filesystem::exists(db + "-wal"));  // the last connection checkpointed it
    const auto size = std::filesystem::file_size(db);
    std::filesystem::resize_file(db, size / 3);
    const std::string cut = read_file(db);
    const ErrorCode code = error_of([&] {
        SqliteSessionRepo repo(db, fast());
        auto s = open_read_only(repo, "t");
        (void)build_context(s);
        (void)s.storage().get_entries(EntriesQuery{});
    });
    CHECK(code == ErrorCode::invalid_session);
    CHECK(read_file(db) == cut);
}

TEST_CASE(
    "a payload row damaged by hand is invalid_entry naming session and position, never the text",
    "[sqlite][damage]") {
    ScratchDir dir;
    const std::string db = dir.file("d.db");
    std::string a;
    {
        SqliteSessionRepo repo(db, fast());
        auto s = create(repo, named("damaged"));
        a = append_message(s, UserMessage{"one", 1, {}});
        append_message(s, UserMessage{"two", 2, {}});
    }
    {
        Raw raw(db);
        REQUIRE(
            raw.exec("UPDATE entries SET line = "
                     "'{\"type\":\"message\",\"id\":\"zz\",\"message\":SECRET' WHERE seq = 2") ==
            SQLITE_OK);
    }
    SqliteSessionRepo repo(db, fast());
    auto s = open(repo, "damaged");
    const std::string message = message_of_error([&] { (void)build_context(s); });
    CHECK(message.find("[agentcore.invalid_entry]") == 0);
    CHECK(message.find("'damaged'") != std::string::npos);
    CHECK(message.find("entry 2") != std::string::npos);
    CHECK(message.find("SECRET") == std::string::npos);
    CHECK(get_entry(s, a) != nullptr);  // the intact entries still read
    // A listing with summaries still lists it (its row is intact), without a summary: its
    // newest entry, the damaged one, gives the last activity.
    ListOptions with_summaries;
    with_summaries.summaries = true;
    const SessionList listed = list(repo, with_summaries);
    REQUIRE(listed.sessions.size() == 1);
    CHECK_FALSE(listed.sessions[0].summary);
}

TEST_CASE("a large page of entries is decoded together, of two damaged rows the first is reported",
          "[sqlite][damage]") {
    ScratchDir dir;
    const std::string db = dir.file("p.db");
    // 600 entries of 1 KB: a page large enough to be decoded on several threads.
    const auto entries = chain_entries(600, 1000);
    SqliteSessionRepo repo(db, fast());
    (void)import_session(repo, header_of("pages"), entries);
    {
        const auto s = open_read_only(repo, "pages");
        const auto all = s.storage().get_entries();
        REQUIRE(all.size() == 600);
        for (std::size_t i = 0; i < all.size(); ++i)
            CHECK(encode_entry(*all[i], Dialect::native) ==
                  encode_entry(entries[i], Dialect::native));
        const auto page = s.storage().get_entries({100, 50});
        REQUIRE(page.size() == 50);
        CHECK(id_of(*page.front()) == "e1100");
        CHECK(id_of(*page.back()) == "e1149");
    }
    REQUIRE(Raw(db).exec("UPDATE entries SET line = '[' || substr(line, 2) WHERE session_id = "
                         "'pages' AND seq IN (451, 151)") == SQLITE_OK);
    const auto s = open_read_only(repo, "pages");
    const auto read = [&] { (void)s.storage().get_entries(); };
    CHECK(error_of(read) == ErrorCode::invalid_entry);
    const std::string message = message_of_error(read);
    CHECK(message.find("session 'pages'") != std::string::npos);
    CHECK(message.find("entry 151:") != std::string::npos);
    CHECK(s.storage().get_entries({0, 150}).size() == 150);  // the rows before still read
}

TEST_CASE(
    "a session written in batches reports the first bad entry in order and writes nothing, its "
    "last batch is searchable",
    "[sqlite][import]") {
    ScratchDir dir;
    const std::string db = dir.file("b.db");
    SqliteSessionRepo repo(db, fast());
    // Three batches and a bit (write_session prepares 1024 entries at a time, ahead).
    auto entries = chain_entries(3300);
    SECTION("an entry no line can hold, before a taken id") {
        entries[1500] = unwritable_entry("e2500", "e2499");
        std::get<MessageEntry>(entries[2200]).id = "e1000";  // a later fault, in a later batch
        const auto write = [&] { (void)import_session(repo, header_of("batches"), entries); };
        CHECK(error_of(write) == ErrorCode::invalid_entry);
        CHECK(message_of_error(write).find("cannot be written") != std::string::npos);
        Raw raw(db);
        CHECK(raw.text("SELECT count(*) FROM sessions") == "0");
        CHECK(raw.text("SELECT count(*) FROM entries") == "0");
        CHECK(raw.text("SELECT count(*) FROM search_rows") == "0");
    }
    SECTION("a taken id in the last batch") {
        std::get<MessageEntry>(entries[3200]).id = "e1000";
        const auto write = [&] { (void)import_session(repo, header_of("batches"), entries); };
        CHECK(error_of(write) == ErrorCode::already_exists);
        CHECK(Raw(db).text("SELECT count(*) FROM entries") == "0");
    }
    SECTION("every batch is written, its words indexed") {
        std::get<MessageEntry>(entries[3299]).message = agentcore::testing::user("quetzalcoatl");
        const auto s = import_session(repo, header_of("batches"), entries);
        CHECK(s.storage().entry_count() == 3300);
        const auto all = s.storage().get_entries();
        REQUIRE(all.size() == 3300);
        for (std::size_t i = 0; i < all.size(); i += 97)
            CHECK(encode_entry(*all[i], Dialect::native) ==
                  encode_entry(entries[i], Dialect::native));
        const SearchResult found = search(repo, "quetzalcoatl");
        REQUIRE(found.hits.size() == 1);
        CHECK(found.hits[0].entry_id == "e4299");
        CHECK(search(repo, "\"message number 2048\"").hits.size() == 1);
    }
}

TEST_CASE(
    "one writer per session: a second open is locked, a writer that bypassed the lock is caught",
    "[sqlite][locks]") {
    ScratchDir dir;
    const std::string db = dir.file("l.db");
    SqliteSessionRepo repo(db, fast());
    auto s = create(repo, named("one"));
    append_message(s, UserMessage{"a", 1, {}});
    CHECK(error_of([&] { open(repo, "one"); }) == ErrorCode::locked);
    SqliteStorageOptions waiting = fast();
    waiting.lock_wait = std::chrono::milliseconds(50);
    const auto start = std::chrono::steady_clock::now();
    CHECK(error_of([&] { (void)SqliteSessionStorage::open(db, "one", waiting); }) ==
          ErrorCode::locked);
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(50));
    auto other = create(repo, named("two"));  // other sessions of the database are not locked
    append_message(other, UserMessage{"b", 1, {}});
    {
        Raw raw(db);  // writes behind the storage's back: the next position is taken
        REQUIRE(raw.exec("INSERT INTO entries (session_id, seq, id, type, line) VALUES ('one', 2, "
                         "'intruder', 'custom', '{}')") == SQLITE_OK);
    }
    CHECK(error_of([&] { append_message(s, UserMessage{"c", 2, {}}); }) == ErrorCode::locked);
    CHECK(s.storage().entry_count() == 1);
    Raw raw(db);
    CHECK(raw.text("SELECT count(*) FROM entries WHERE session_id = 'one'") == "2");
    CHECK(raw.text("SELECT count(*) FROM entries WHERE session_id = 'one' AND id = 'intruder'") ==
          "1");
}

TEST_CASE("a busy database is waited for within busy_wait, then locked, and the next append works",
          "[sqlite][locks]") {
    ScratchDir dir;
    const std::string db = dir.file("b.db");
    SqliteStorageOptions o = fast();
    o.busy_wait = std::chrono::milliseconds(100);
    SqliteSessionRepo repo(db, o);
    auto s = create(repo, named("busy"));
    Raw raw(db);
    REQUIRE(raw.exec("BEGIN IMMEDIATE") == SQLITE_OK);
    const auto start = std::chrono::steady_clock::now();
    CHECK(error_of([&] { append_message(s, UserMessage{"a", 1, {}}); }) == ErrorCode::locked);
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(90));
    CHECK(s.storage().entry_count() == 0);
    REQUIRE(raw.exec("COMMIT") == SQLITE_OK);
    append_message(s, UserMessage{"a", 1, {}});
    CHECK(s.storage().entry_count() == 1);
}

TEST_CASE("hostile ids are refused and hostile strings stored verbatim, never executed",
          "[sqlite][security]") {
    ScratchDir dir;
    const std::string db = dir.file("h.db");
    SqliteSessionRepo repo(db, fast());
    CHECK(error_of([&] { create(repo, named("x'; DROP TABLE sessions; --")); }) ==
          ErrorCode::invalid_session);
    CHECK(error_of([&] { open(repo, "a\"b"); }) == ErrorCode::invalid_session);
    CHECK(error_of([&] { remove(repo, std::string("a\0b", 3)); }) == ErrorCode::invalid_session);
    const std::string cwd = std::string("/it's \"here\"; DROP TABLE entries; --\0tail", 41);
    const std::string big(1 << 20, 'q');
    std::string a;
    {
        auto s = create(repo, named("hostile", cwd));
        a = append_message(s, UserMessage{"'); DELETE FROM entries; --" + big, 1, {}});
        append_label(s, a, std::string("label'\"; --"));
        append_session_name(s, "name'); DROP TABLE sessions; --");
        append_custom_entry(s, "type'); --", Json{{"k", "v'\""}});
    }
    ListOptions by_cwd;
    by_cwd.cwd = cwd;
    const SessionList l = list(repo, by_cwd);
    REQUIRE(l.sessions.size() == 1);
    CHECK(l.sessions[0].header.cwd == cwd);
    auto s = open_read_only(repo, "hostile");
    CHECK(s.storage().get_label(a) == std::optional<std::string>("label'\"; --"));
    CHECK(s.storage().get_session_name() ==
          std::optional<std::string>("name'); DROP TABLE sessions; --"));
    const auto* m = std::get_if<MessageEntry>(&*get_entry(s, a));
    REQUIRE(m != nullptr);
    CHECK(std::get<std::string>(std::get<UserMessage>(m->message).content) ==
          "'); DELETE FROM entries; --" + big);
    CHECK(s.storage().find_entries(CustomEntry::type).size() == 1);
}

TEST_CASE("a 5 MB image entry is stored and read back whole", "[sqlite][data]") {
    ScratchDir dir;
    SqliteSessionRepo repo(dir.file("i.db"), fast());
    std::string data(5 << 20, 'A');
    for (std::size_t i = 0; i < data.size(); i += 7) data[i] = 'z';
    std::string id;
    {
        auto s = create(repo, named("image"));
        UserMessage u;
        u.content =
            std::vector<ContentBlock>{TextContent{"look", {}}, ImageContent{data, "image/png", {}}};
        u.timestamp = 1;
        id = append_message(s, std::move(u));
    }
    auto s = open_read_only(repo, "image");
    const auto* m = std::get_if<MessageEntry>(&*get_entry(s, id));
    REQUIRE(m != nullptr);
    const auto& blocks =
        std::get<std::vector<ContentBlock>>(std::get<UserMessage>(m->message).content);
    REQUIRE(blocks.size() == 2);
    CHECK(std::get<ImageContent>(blocks[1]).data == data);
}

TEST_CASE("list pages by keyset through every session of one cwd", "[sqlite][list]") {
    ScratchDir dir;
    SqliteStorageOptions o = fast();
    o.environment =
        Environment::deterministic(1'700'000'000'000, 7, 0);  // equal times: the id decides
    SqliteSessionRepo repo(dir.file("p.db"), o);
    for (int i = 0; i < 30; ++i)
        create(repo, named("s" + std::to_string(100 + i), i % 3 == 0 ? "/a" : "/b"));
    for (const bool newest : {true, false}) {
        ListOptions page;
        page.cwd = "/b";
        page.limit = 7;
        page.newest_first = newest;
        std::vector<std::string> paged;
        for (;;) {
            const SessionList l = list(repo, page);
            for (const auto& s : l.sessions) paged.push_back(s.header.id);
            if (!l.next) break;
            page.after = l.next;
        }
        ListOptions all;
        all.cwd = "/b";
        all.newest_first = newest;
        std::vector<std::string> whole;
        for (const auto& s : list(repo, all).sessions) whole.push_back(s.header.id);
        CHECK(whole.size() == 20);
        CHECK(paged == whole);
        CHECK(std::is_sorted(whole.begin(), whole.end()) == !newest);
    }
}

TEST_CASE("a removed session refuses the appends of a writer that still has it open",
          "[sqlite][repo]") {
    ScratchDir dir;
    SqliteSessionRepo repo(dir.file("r.db"), fast());
    auto s = create(repo, named("gone"));
    append_message(s, UserMessage{"a", 1, {}});
    remove(repo, "gone");
    CHECK(error_of([&] { append_message(s, UserMessage{"b", 2, {}}); }) == ErrorCode::storage);
    CHECK(error_of([&] { open_read_only(repo, "gone"); }) == ErrorCode::not_found);
    Raw raw(dir.file("r.db"));
    CHECK(raw.text("SELECT count(*) FROM entries") == "0");
}

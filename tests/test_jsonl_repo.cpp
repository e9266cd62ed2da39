// JsonlSessionRepo: layout, create, open, list, remove, fork (SPEC §4.9, §4.10, §6).
#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/jsonl_fixtures.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

CreateOptions in_cwd(std::string id, std::string cwd = "/home/ann/project") {
    CreateOptions o;
    o.id = std::move(id);
    o.cwd = std::move(cwd);
    return o;
}

std::vector<std::string> listed_ids(const SessionList& l) {
    std::vector<std::string> out;
    for (const auto& s : l.sessions) out.push_back(s.header.id);
    return out;
}

std::vector<std::string> all_files(const std::string& root) {
    std::vector<std::string> out;
    if (!std::filesystem::exists(root)) return out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root))
        if (e.is_regular_file()) out.push_back(e.path().filename().string());
    return out;
}

mode_t mode_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("sessions live in one folder per cwd, named by creation time and id", "[jsonl][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("root"), jsonl_options());
    auto s = create(repo, in_cwd("abc", "/home/ann/my:proj\\x"));
    const std::string expected =
        dir.file("root") + "/--home-ann-my-proj-x--/2026-12-02T07-43-23-123Z_abc.jsonl";
    CHECK(s.storage().path() == expected);
    CHECK(std::filesystem::exists(expected));
    CHECK(JsonlSessionRepo::folder_name("/") == "----");
    CHECK(mode_of(expected) == 0600);
    CHECK(mode_of(dir.file("root")) == 0700);
    CHECK(mode_of(dir.file("root") + "/--home-ann-my-proj-x--") == 0700);
}

TEST_CASE("creating an existing id is already_exists and an invalid id touches no path",
          "[jsonl][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("root"), jsonl_options());
    for (const std::string& bad :
         std::vector<std::string>{"../x", "", "a/b", ".hidden", std::string(200, 'a'), "x\ny"}) {
        CHECK(error_of([&] { create(repo, in_cwd(bad)); }) == ErrorCode::invalid_session);
        CHECK(error_of([&] { open(repo, bad); }) == ErrorCode::invalid_session);
        CHECK(error_of([&] { remove(repo, bad); }) == ErrorCode::invalid_session);
    }
    CHECK_FALSE(std::filesystem::exists(dir.file("root")));
    create(repo, in_cwd("one"));
    CHECK(error_of([&] { create(repo, in_cwd("one", "/elsewhere")); }) ==
          ErrorCode::already_exists);
    CHECK(list(repo).sessions.size() == 1);
}

TEST_CASE("open finds a session by id for writing, open_read_only takes no lock", "[jsonl][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("root"), jsonl_options());
    {
        auto s = create(repo, in_cwd("one"));
        append_message(s, user("hello"));
        CHECK(error_of([&] { open(repo, "one"); }) == ErrorCode::locked);
        auto r = open_read_only(repo, "one");
        CHECK(r.storage().entry_count() == 1);
    }
    auto s = open(repo, "one");
    CHECK(describe(build_context(s)) == std::vector<std::string>{"user:hello"});
    CHECK(error_of([&] { open(repo, "two"); }) == ErrorCode::not_found);
    CHECK(error_of([&] { open_read_only(repo, "two"); }) == ErrorCode::not_found);
}

TEST_CASE(
    "list reads headers newest first, filters by cwd, and reports bad headers without deleting",
    "[jsonl][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("root"), jsonl_options());
    create(repo, in_cwd("old"));
    create(repo, in_cwd("other", "/tmp/other"));
    create(repo, in_cwd("new"));
    const std::string bad =
        dir.file("root") + "/--home-ann-project--/2026-01-01T00-00-00-000Z_bad.jsonl";
    write_file(bad, "{\"type\":\"nonsense\"}\n");
    const std::string empty =
        dir.file("root") + "/--home-ann-project--/2026-01-01T00-00-00-000Z_empty.jsonl";
    write_file(empty, "");

    const auto all = list(repo);
    CHECK(listed_ids(all) == std::vector<std::string>{"new", "other", "old"});
    CHECK(all.sessions[0].dialect == Dialect::native);
    CHECK(all.sessions[0].file_size > 0);
    CHECK(all.problems.size() == 2);
    for (const auto& p : all.problems) CHECK(p.reason.find("invalid_session") != std::string::npos);
    CHECK(std::filesystem::exists(bad));
    CHECK(std::filesystem::exists(empty));

    ListOptions only;
    only.cwd = "/home/ann/project";
    CHECK(listed_ids(list(repo, only)) == std::vector<std::string>{"new", "old"});
    only.cwd = "/nowhere";
    CHECK(list(repo, only).sessions.empty());
}

TEST_CASE("list reads only the first line of each file", "[jsonl][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("root"), jsonl_options());
    {
        auto s = create(repo, in_cwd("big"));
        for (int i = 0; i < 50; ++i) append_message(s, user(std::string(10000, 'z')));
    }
    // A damaged body does not matter to list: it never reads it.
    const auto path = *repo.find_path("big");
    write_file(path, read_file(path) + "garbage\n{\"type\":");
    const auto l = list(repo);
    CHECK(listed_ids(l) == std::vector<std::string>{"big"});
    CHECK(l.problems.empty());
}

TEST_CASE("remove deletes a session and is idempotent", "[jsonl][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("root"), jsonl_options());
    { create(repo, in_cwd("gone")); }
    remove(repo, "gone");
    CHECK(list(repo).sessions.empty());
    CHECK_NOTHROW(remove(repo, "gone"));
    CHECK_NOTHROW(remove(repo, "never-existed"));
    CHECK(error_of([&] { open(repo, "gone"); }) == ErrorCode::not_found);
}

TEST_CASE("fork copies the entries with the same ids and names the source file as parent",
          "[jsonl][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("root"), jsonl_options());
    std::string source_path;
    std::vector<std::string> source_ids;
    std::string second_user;
    {
        auto s = create(repo, in_cwd("src"));
        append_message(s, user("first"));
        append_message(s, assistant("reply"));
        second_user = append_message(s, user("second"));
        append_message(s, assistant("reply 2"));
        source_path = s.storage().path();
        source_ids = ids(s.storage().get_entries());
    }
    const std::string source_bytes = read_file(source_path);

    ForkOptions whole;
    whole.session_id = "copy";
    auto copy = fork(repo, "src", whole);
    CHECK(ids(copy.storage().get_entries()) == source_ids);
    CHECK(copy.storage().metadata().parent_session == source_path);
    CHECK(copy.storage().metadata().cwd == "/home/ann/project");
    CHECK(read_file(source_path) == source_bytes);
    append_message(copy, user("the copy goes on"));  // the fork is open for writing

    ForkOptions before;
    before.session_id = "before";
    before.entry_id = second_user;
    before.cwd = "/other";
    auto b = fork(repo, "src", before);
    CHECK(describe(build_context(b)) == std::vector<std::string>{"user:first", "assistant:reply"});
    CHECK(b.storage().metadata().cwd == "/other");

    auto reopened = open_read_only(repo, "before");
    CHECK(ids(reopened.storage().get_entries()) ==
          std::vector<std::string>(source_ids.begin(), source_ids.begin() + 2));

    ForkOptions taken;
    taken.session_id = "copy";
    CHECK(error_of([&] { fork(repo, "src", taken); }) == ErrorCode::already_exists);
    CHECK(error_of([&] { fork(repo, "nope", {}); }) == ErrorCode::not_found);
    ForkOptions bad_target;
    bad_target.entry_id = "unknown";
    CHECK(error_of([&] { fork(repo, "src", bad_target); }) == ErrorCode::invalid_fork_target);
}

TEST_CASE("a fork that fails midway leaves nothing that list shows and no temporary file",
          "[jsonl][repo][faults]") {
    ScratchDir dir;
    auto options = faulty_options(1, Durability::os_buffered);
    JsonlSessionRepo repo(dir.file("root"), options);
    {
        auto s = create(repo, in_cwd("src"));
        for (int i = 0; i < 20; ++i) append_message(s, user("entry " + std::to_string(i)));
    }
    const auto files_before = all_files(dir.file("root"));
    Faults::reset();
    SECTION("the write fails") { Faults::get().fail_pwrite_at = 1; }
    SECTION("the sync fails") { Faults::get().fail_fsync_at = 1; }
    SECTION("the publication fails") { Faults::get().fail_link_at = 1; }
    ForkOptions o;
    o.session_id = "copy";
    CHECK(error_of([&] { fork(repo, "src", o); }) == ErrorCode::storage);
    CHECK(listed_ids(list(repo)) == std::vector<std::string>{"src"});
    CHECK(all_files(dir.file("root")) == files_before);
}

TEST_CASE("temporary files never end in .jsonl", "[jsonl][repo]") {
    ScratchDir dir;
    const auto path = dir.file("s.jsonl");
    agentcore::detail::TempFile temp(agentcore::detail::FileOps::real(), path);
    CHECK(temp.path().size() > 6);
    CHECK(temp.path().substr(temp.path().size() - 6) != ".jsonl");
    CHECK(agentcore::detail::file_name(temp.path()).front() == '.');
}

TEST_CASE("a fork of a pi-dialect session stays in the pi dialect", "[jsonl][repo]") {
    ScratchDir dir;
    auto options = jsonl_options();
    options.dialect = Dialect::pi;
    JsonlSessionRepo repo(dir.file("root"), options);
    {
        auto s = create(repo, in_cwd("pi"));
        append_message(s, user("hi"));
    }
    repo.options().dialect = Dialect::native;
    ForkOptions o;
    o.session_id = "pi-fork";
    auto f = fork(repo, "pi", o);
    CHECK(f.storage().dialect() == Dialect::pi);
    CHECK(file_lines(f.storage().path())[1].find("parentId") != std::string::npos);
}

TEST_CASE("a symbolic link in place of a session file is refused by open", "[jsonl][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("root"), jsonl_options());
    std::string path;
    { path = create(repo, in_cwd("real")).storage().path(); }
    const std::string elsewhere = dir.file("elsewhere.jsonl");
    std::filesystem::rename(path, elsewhere);
    REQUIRE(::symlink(elsewhere.c_str(), path.c_str()) == 0);
    CHECK(error_of([&] { open(repo, "real"); }) == ErrorCode::storage);
    CHECK(error_of([&] { open_read_only(repo, "real"); }) == ErrorCode::storage);
}

TEST_CASE(
    "remove refuses a session open for writing with locked, and removes it once its writer is gone",
    "[jsonl][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("root"), jsonl_options());
    {
        auto s = create(repo, in_cwd("busy"));
        append_message(s, user("before"));
        CHECK(error_of([&] { remove(repo, "busy"); }) == ErrorCode::locked);
        append_message(s, user("still stored"));  // the writer goes on: its file is still there
        CHECK(open_read_only(repo, "busy").storage().entry_count() == 2);
    }
    CHECK_NOTHROW(remove(repo, "busy"));
    CHECK(list(repo).sessions.empty());
    CHECK(error_of([&] { open(repo, "busy"); }) == ErrorCode::not_found);
}

TEST_CASE("remove waits up to lock_wait for a writer to let go", "[jsonl][repo]") {
    ScratchDir dir;
    JsonlStorageOptions o = jsonl_options();
    o.lock_wait = std::chrono::milliseconds(5000);
    JsonlSessionRepo repo(dir.file("root"), o);
    auto s = std::make_optional(create(repo, in_cwd("busy")));
    std::thread closer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        s.reset();
    });
    CHECK_NOTHROW(remove(repo, "busy"));
    closer.join();
    CHECK(list(repo).sessions.empty());
}

TEST_CASE("an append to a session file unlinked while open throws storage and is not acknowledged",
          "[jsonl][repo]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.file("root"), jsonl_options());
    auto s = create(repo, in_cwd("doomed"));
    append_message(s, user("stored"));
    const std::string path = s.storage().path();
    REQUIRE(::unlink(path.c_str()) == 0);  // not by remove, which would wait for the lock
    CHECK(error_of([&] { append_message(s, user("lost")); }) == ErrorCode::storage);
    const std::string message = message_of_error([&] { append_message(s, user("lost")); });
    CHECK(message.find("was removed") != std::string::npos);
    CHECK(message.find(path) != std::string::npos);
    CHECK(error_of([&] { append_message(s, user("lost too")); }) == ErrorCode::storage);
    CHECK(s.storage().entry_count() == 1);
}

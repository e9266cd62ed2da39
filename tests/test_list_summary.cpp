// list with summaries on a JSONL repository: each cwd folder's summary file is used while a
// session file is unchanged, and the file is read again when it grew, was cut, rewritten in
// place or replaced; a damaged summary file is ignored and written anew.
#include "support/catch.hpp"
#include "support/jsonl_fixtures.hpp"

#include <agentcore/jsonl/jsonl_repo.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

CreateOptions summary_session(std::string id, std::string cwd = "/home/ann/project") {
    CreateOptions o;
    o.id = std::move(id);
    o.cwd = std::move(cwd);
    return o;
}

ListOptions with_summaries() {
    ListOptions o;
    o.summaries = true;
    return o;
}

// The summary list gives the session `id` (fails the test when it is not listed).
std::optional<SessionSummary> listed_summary(const JsonlSessionRepo& repo, const std::string& id) {
    for (const auto& l : list(repo, with_summaries()).sessions)
        if (l.header.id == id) return l.summary;
    FAIL("session '" << id << "' not listed");
    return std::nullopt;
}

std::string summary_file_of(const JsonlSessionRepo& repo, const std::string& cwd) {
    return repo.root() + "/" + JsonlSessionRepo::folder_name(cwd) + "/" +
           std::string(agentcore::detail::SummaryCache::file_name);
}

std::string session_path(const JsonlSessionRepo& repo, const std::string& id) {
    auto path = repo.find_path(id);
    REQUIRE(path);
    return *path;
}

// Replaces `from` by `to` (same length) where it first occurs in the file, in place, and gives
// the file back its modification time: only the bytes changed.
void summary_edit_in_place(const std::string& path, const std::string& from, const std::string& to,
                           bool keep_mtime = true) {
    REQUIRE(from.size() == to.size());
    struct stat before {};
    REQUIRE(::stat(path.c_str(), &before) == 0);
    const std::string text = read_file(path);
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    const int fd = ::open(path.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, to.data(), to.size(), static_cast<off_t>(at)) ==
            static_cast<ssize_t>(to.size()));
    ::close(fd);
    if (keep_mtime) {
        const struct timespec times[2] = {before.st_atim, before.st_mtim};
        REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    }
}

}  // namespace

TEST_CASE("list gives summaries only when asked, equal to what an open says", "[jsonl][list]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.path(), jsonl_options());
    {
        auto s = create(repo, summary_session("sum-full"));
        fill_session(s);
        auto empty = create(repo, summary_session("sum-empty", "/elsewhere"));
    }
    for (const auto& l : list(repo).sessions) CHECK_FALSE(l.summary);
    CHECK_FALSE(std::filesystem::exists(summary_file_of(repo, "/home/ann/project")));

    const SessionList listed = list(repo, with_summaries());
    REQUIRE(listed.sessions.size() == 2);
    for (const auto& l : listed.sessions) {
        REQUIRE(l.summary);
        const auto open = open_read_only(repo, l.header.id);
        const SessionSummary want = summarize(open.storage());
        CHECK(l.summary->entry_count == want.entry_count);
        CHECK(l.summary->stats.message_count == want.stats.message_count);
        CHECK(l.summary->stats.total_tokens == want.stats.total_tokens);
        CHECK(l.summary->stats.cost_total == want.stats.cost_total);
        CHECK(l.summary->name == want.name);
        CHECK(l.summary->last_activity == want.last_activity);
    }
    const auto full = listed_summary(repo, "sum-full");
    REQUIRE(full);
    CHECK(full->entry_count == open_read_only(repo, "sum-full").storage().entry_count());
    CHECK(full->name == std::optional<std::string>("My session"));
    CHECK(full->stats.message_count > 0);

    // One summary file per folder, 0600, never listed as a session.
    for (const std::string cwd : {"/home/ann/project", "/elsewhere"}) {
        struct stat st {};
        REQUIRE(::stat(summary_file_of(repo, cwd).c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0600);
        CHECK(agentcore::detail::SummaryCache::load(
                  agentcore::detail::ops_or_real(nullptr),
                  repo.root() + "/" + JsonlSessionRepo::folder_name(cwd))
                  .size() == 1);
    }
    CHECK(list(repo).sessions.size() == 2);
    CHECK(list(repo).problems.empty());
    CHECK(sweep_temporary_files(repo, std::chrono::seconds(0)) == 0);
    CHECK(std::filesystem::exists(summary_file_of(repo, "/elsewhere")));
}

TEST_CASE("a summary is used while its file is unchanged, and made again when it changed",
          "[jsonl][list]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.path(), jsonl_options());
    {
        auto s = create(repo, summary_session("sum-a"));
        append_message(s, user("question"));
        append_session_name(s, "Alpha");
        append_message(s, user("tail text that fills the last line"));
    }
    const std::string path = session_path(repo, "sum-a");
    REQUIRE(listed_summary(repo, "sum-a")->name == std::optional<std::string>("Alpha"));

    SECTION("bytes changed before its last 4 KiB, mtime kept: the recorded summary stands") {
        // Proof that the listing took the summary file and did not read the session again.
        std::string padding(5000, 'x');
        {
            auto s = open(repo, "sum-a");
            append_message(s, user(padding));
        }
        REQUIRE(listed_summary(repo, "sum-a")->name == std::optional<std::string>("Alpha"));
        summary_edit_in_place(path, "\"Alpha\"", "\"Alpho\"");
        CHECK(listed_summary(repo, "sum-a")->name == std::optional<std::string>("Alpha"));
        SECTION("a new modification time: read again") {
            summary_edit_in_place(path, "\"Alpho\"", "\"Alphi\"", false);
            struct timespec later[2] = {{0, UTIME_OMIT}, {0, 0}};
            later[1].tv_sec = ::time(nullptr) + 100;
            REQUIRE(::utimensat(AT_FDCWD, path.c_str(), later, 0) == 0);
            CHECK(listed_summary(repo, "sum-a")->name == std::optional<std::string>("Alphi"));
        }
    }
    SECTION("a change in its last 4 KiB, mtime kept: read again") {
        summary_edit_in_place(path, "\"Alpha\"", "\"Omega\"");
        CHECK(listed_summary(repo, "sum-a")->name == std::optional<std::string>("Omega"));
    }
    SECTION("grown by another writer: read again") {
        const auto before = *listed_summary(repo, "sum-a");
        {
            auto s = open(repo, "sum-a");
            append_session_name(s, "Beta");
            append_message(s, assistant("reply", "p", "m", usage(1, 2, 3, 4, 0.5)));
        }
        const auto after = listed_summary(repo, "sum-a");
        REQUIRE(after);
        CHECK(after->entry_count == before.entry_count + 2);
        CHECK(after->stats.message_count == before.stats.message_count + 1);
        CHECK(after->stats.total_tokens == before.stats.total_tokens + 10);
        CHECK(after->name == std::optional<std::string>("Beta"));
        CHECK(after->last_activity >= before.last_activity);
    }
    SECTION("cut to fewer lines: read again") {
        const std::string text = read_file(path);
        const auto last = text.rfind('\n', text.size() - 2);
        REQUIRE(::truncate(path.c_str(), static_cast<off_t>(last + 1)) == 0);
        CHECK(listed_summary(repo, "sum-a")->entry_count == 2);
    }
    SECTION("replaced by another file (a new inode): read again") {
        std::string text = read_file(path);
        text.replace(text.find("\"Alpha\""), 7, "\"Gamma\"");
        const std::string copy = path + ".new";
        write_file(copy, text);
        ::chmod(copy.c_str(), 0600);
        REQUIRE(::rename(copy.c_str(), path.c_str()) == 0);
        CHECK(listed_summary(repo, "sum-a")->name == std::optional<std::string>("Gamma"));
    }
    SECTION("a damaged summary file is ignored and written anew") {
        const std::string file = summary_file_of(repo, "/home/ann/project");
        std::string bytes = read_file(file);
        REQUIRE(bytes.size() > 40);
        for (const std::size_t at :
             {std::size_t{0}, std::size_t{12}, bytes.size() / 2, bytes.size() - 1}) {
            std::string damaged = bytes;
            damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
            write_file(file, damaged);
            const auto s = listed_summary(repo, "sum-a");
            REQUIRE(s);
            CHECK(s->name == std::optional<std::string>("Alpha"));
            CHECK(s->entry_count == 3);
            CHECK(read_file(file) == bytes);  // the same records written again
        }
        write_file(file, bytes.substr(0, bytes.size() / 2));
        CHECK(listed_summary(repo, "sum-a")->entry_count == 3);
        write_file(file, "");
        CHECK(listed_summary(repo, "sum-a")->entry_count == 3);
        std::filesystem::remove(file);
        std::filesystem::create_directory(file);  // not a file: ignored, the listing works
        CHECK(listed_summary(repo, "sum-a")->entry_count == 3);
    }
}

TEST_CASE("summaries: removed sessions are dropped, unreadable ones have none", "[jsonl][list]") {
    ScratchDir dir;
    JsonlSessionRepo repo(dir.path(), jsonl_options());
    for (const std::string id : {"sum-1", "sum-2", "sum-3"}) {
        auto s = create(repo, summary_session(id));
        append_message(s, user("hello " + id));
    }
    const std::string folder =
        repo.root() + "/" + JsonlSessionRepo::folder_name("/home/ann/project");
    const auto& ops = agentcore::detail::ops_or_real(nullptr);
    REQUIRE(list(repo, with_summaries()).sessions.size() == 3);
    CHECK(agentcore::detail::SummaryCache::load(ops, folder).size() == 3);

    remove(repo, "sum-2");
    CHECK(list(repo, with_summaries()).sessions.size() == 2);
    CHECK(agentcore::detail::SummaryCache::load(ops, folder).size() == 2);

    // A damaged line in the middle: still listed (its header is valid), without a summary, and
    // not reported as a problem; the others keep theirs.
    const std::string path = session_path(repo, "sum-3");
    {
        auto s = open(repo, "sum-3");
        append_message(s, user("after"));
    }
    summary_edit_in_place(path, "\"hello sum-3\"", "\"hello sum-3\x01", false);
    const SessionList listed = list(repo, with_summaries());
    CHECK(listed.problems.empty());
    REQUIRE(listed.sessions.size() == 2);
    for (const auto& l : listed.sessions) {
        if (l.header.id == "sum-3")
            CHECK_FALSE(l.summary);
        else
            CHECK(l.summary);
    }
    CHECK_THROWS(open_read_only(repo, "sum-3"));

    // A page of one asks only for the summary of the session it holds.
    ListOptions page = with_summaries();
    page.limit = 1;
    page.cwd = "/home/ann/project";
    const SessionList first = list(repo, page);
    REQUIRE(first.sessions.size() == 1);
    CHECK(first.next);
}

TEST_CASE("summaries of pi's files, and of a repository keeping resume indexes", "[jsonl][list]") {
    ScratchDir dir;
    JsonlStorageOptions options = jsonl_options();
    options.resume_index = true;
    JsonlSessionRepo repo(dir.path(), options);
    {
        auto s = create(repo, summary_session("sum-native"));
        fill_session(s);
    }
    // A pi file in the same folder: the copy of a session through pi's dialect.
    {
        const auto source = open_read_only(repo, "sum-native");
        std::vector<SessionTreeEntry> entries;
        for (const auto& h : source.storage().get_entries(EntriesQuery{})) entries.push_back(*h);
        SessionHeader header = source.storage().metadata();
        header.id = "sum-pi";
        import_session(repo, std::move(header), std::move(entries), Dialect::pi);
    }
    const SessionList listed = list(repo, with_summaries());
    REQUIRE(listed.sessions.size() == 2);
    REQUIRE(listed.sessions[0].summary);
    REQUIRE(listed.sessions[1].summary);
    CHECK(listed.sessions[0].summary->entry_count == listed.sessions[1].summary->entry_count);
    CHECK(listed.sessions[0].summary->stats.total_tokens ==
          listed.sessions[1].summary->stats.total_tokens);
    CHECK(listed.sessions[0].summary->name == listed.sessions[1].summary->name);
    CHECK(listed.sessions[0].summary->last_activity == listed.sessions[1].summary->last_activity);
    // Grown: the open that summarises it again takes the resume index and reads only the new line.
    {
        auto s = open(repo, "sum-native");
        append_session_name(s, "Renamed");
    }
    CHECK(listed_summary(repo, "sum-native")->name == std::optional<std::string>("Renamed"));
    CHECK(listed_summary(repo, "sum-pi")->name == std::optional<std::string>("My session"));
}

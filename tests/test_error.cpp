// SessionError's parts (SPEC §7): code, detail, file, line, session, entry id and seq are
// readable one by one, and an error wrapped on its way out keeps one prefix.
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/scratch.hpp"

#include <type_traits>

using namespace agentcore;
using namespace agentcore::testing;

namespace {

template <class F>
SessionError caught(F&& f) {
    try {
        f();
    } catch (const SessionError& e) {
        return e;
    }
    FAIL("expected a SessionError");
    return SessionError(ErrorCode::storage, "none");
}

const char* dup_header_line =
    R"({"type":"session","version":3,"id":"dup-session","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","parent_session":null,"metadata":{}})";

std::string message_line(std::string_view id) {
    return R"({"type":"message","id":")" + std::string(id) +
           R"(","parent_id":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}})";
}

}  // namespace

static_assert(std::is_nothrow_copy_constructible_v<SessionError>);

TEST_CASE("an error made from a code and a detail reads as before and has no location", "[error]") {
    const SessionError e(ErrorCode::not_found, "entry 'x' not found");
    CHECK(std::string(e.what()) == "[agentcore.not_found] entry 'x' not found");
    CHECK(e.code() == ErrorCode::not_found);
    CHECK(e.detail() == "entry 'x' not found");
    CHECK_FALSE(e.file());
    CHECK_FALSE(e.line());
    CHECK_FALSE(e.session());
    CHECK_FALSE(e.entry_id());
    CHECK_FALSE(e.seq());
}

TEST_CASE("an error carries its parts and a wrapped one writes its prefix once", "[error]") {
    const SessionError inner(ErrorCode::already_exists, "entry id 'e1' already exists",
                             ErrorLocation{.entry_id = "e1", .seq = 7});
    const SessionError outer =
        inner.wrapped("dup.jsonl:3: ", {.file = "dup.jsonl", .line = 3, .entry_id = "other"});
    CHECK(std::string(outer.what()) ==
          "[agentcore.already_exists] dup.jsonl:3: entry id 'e1' already exists");
    CHECK(outer.code() == ErrorCode::already_exists);
    CHECK(outer.file() == "dup.jsonl");
    CHECK(outer.line() == 3u);
    CHECK(outer.entry_id() == "e1");  // the inner part wins
    CHECK(outer.seq() == 7u);
    CHECK(outer.location().file == "dup.jsonl");
}

TEST_CASE("a duplicate id in a file names file, line and entry once, by load and by convert",
          "[error][pi]") {
    ScratchDir dir;
    const std::string path = dir.file("dup.jsonl");
    write_file(path, std::string(dup_header_line) + "\n" + message_line("e1") + "\n" +
                         message_line("e1") + "\n");
    for (const SessionError& e : {caught([&] { load_session_file(path); }), caught([&] {
                                      convert(path, Dialect::pi, dir.file("out.jsonl"));
                                  })}) {
        CHECK(e.code() == ErrorCode::already_exists);
        CHECK(std::string(e.what()) == "[agentcore.already_exists] " + path +
                                           ":3: entry id 'e1' already exists in the session");
        CHECK(e.file() == path);
        CHECK(e.line() == 3u);
        CHECK(e.entry_id() == "e1");
    }
}

TEST_CASE("a bad line of a JSONL file names the file, the line and the entry as parts",
          "[error][jsonl]") {
    ScratchDir dir;
    const std::string path = dir.file("bad.jsonl");
    write_file(
        path,
        std::string(dup_header_line) + "\n" + message_line("e1") + "\n" +
            R"({"type":"message","id":"e2","parent_id":"e1","timestamp":"t","message":{"role":"user","content":5,"timestamp":1}})" +
            "\n" + message_line("e3") + "\n");
    // The open checks every line's fields (a line it accepts always decodes): it fails there.
    const SessionError e = caught([&] { (void)JsonlSessionStorage::open_read_only(path); });
    CHECK(e.code() == ErrorCode::invalid_entry);
    CHECK(e.file() == path);
    CHECK(e.line() == 3u);
    // The open's field check names the entry in the detail; the part is filled where an entry is
    // decoded (get_entry), not yet by the check on the raw line.
    CHECK(std::string(e.detail()).find("entry 'e2'") != std::string::npos);
    CHECK(std::string(e.what()).rfind("[agentcore.invalid_entry] ", 0) == 0);
    CHECK(std::string(e.detail()).find("[agentcore.") == std::string::npos);
}

TEST_CASE("session and entry errors name the session or the entry as a part", "[error]") {
    InMemorySessionRepo repo;
    auto s = create(repo, {.id = "taken", .cwd = "/w"});
    CHECK(caught([&] { create(repo, {.id = "taken"}); }).session() == "taken");
    CHECK(caught([&] { open(repo, "missing"); }).session() == "missing");
    const SessionError moved = caught([&] { move_to(s, std::string("nope")); });
    CHECK(moved.code() == ErrorCode::not_found);
    CHECK(moved.entry_id() == "nope");
    CHECK(caught([&] { get_branch(s, "gone"); }).entry_id() == "gone");
    CHECK(caught([&] { set_leaf_id(s, std::string("nowhere")); }).entry_id() == "nowhere");
}

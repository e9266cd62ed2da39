// Forks and the in-memory repository (SPEC §4.9, §4.10).
#include "support/builders.hpp"
#include "support/catch.hpp"
#include "support/errors.hpp"

#include <agentcore/verify.hpp>

using namespace agentcore;
using namespace agentcore::testing;
using Strings = std::vector<std::string>;

namespace {
InMemorySessionRepo test_repo() {
    return InMemorySessionRepo(Environment::deterministic(1796197403123, 3, 1000));
}
}  // namespace

TEST_CASE("get_entries_to_fork without a target copies every entry [SPEC 4.9]", "[fork]") {
    auto s = memory_session();
    auto a = append_message(s, user("a"));
    append_message(s, assistant("b"));
    move_to(s, a);
    append_message(s, user("c"));
    CHECK(get_entries_to_fork(s.storage(), {}).size() == 4);
    ForkOptions empty;
    empty.entry_id = "";
    CHECK(get_entries_to_fork(s.storage(), empty).size() == 4);
}

TEST_CASE("forking before a user message copies the path to its parent [SPEC 4.9]", "[fork]") {
    auto s = memory_session();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    auto c = append_message(s, user("c"));
    ForkOptions o;
    o.entry_id = c;
    CHECK(ids(get_entries_to_fork(s.storage(), o)) == Strings{a, b});
    o.entry_id = a;  // before the first message: nothing
    CHECK(get_entries_to_fork(s.storage(), o).empty());
}

TEST_CASE("forking at an entry copies the path including it [SPEC 4.9]", "[fork]") {
    auto s = memory_session();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    append_message(s, user("c"));
    ForkOptions o;
    o.entry_id = b;
    o.position = ForkPosition::at;
    CHECK(ids(get_entries_to_fork(s.storage(), o)) == Strings{a, b});
}

TEST_CASE(
    "forking before anything but a user message, or at an unknown entry, is invalid_fork_target "
    "[SPEC 4.9]",
    "[fork][errors]") {
    auto s = memory_session();
    append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    auto t = append_thinking_level_change(s, "low");
    ForkOptions o;
    o.entry_id = b;
    CHECK(error_of([&] { get_entries_to_fork(s.storage(), o); }) == ErrorCode::invalid_fork_target);
    o.entry_id = t;
    CHECK(error_of([&] { get_entries_to_fork(s.storage(), o); }) == ErrorCode::invalid_fork_target);
    o.entry_id = "unknown0";
    CHECK(error_of([&] { get_entries_to_fork(s.storage(), o); }) == ErrorCode::invalid_fork_target);
    o.position = ForkPosition::at;
    CHECK(error_of([&] { get_entries_to_fork(s.storage(), o); }) == ErrorCode::invalid_fork_target);
}

TEST_CASE("the repository creates, opens, lists newest first, and removes idempotently [SPEC 4.10]",
          "[repo]") {
    auto repo = test_repo();
    auto s1 = create(repo, {std::string("one"), "/a", Json::object(), std::nullopt});
    auto s2 = create(repo, {std::string("two"), "/b", Json{{"k", 1}}, std::nullopt});
    append_message(s1, user("hello"));
    auto again = open(repo, "one");
    CHECK(again.storage().entry_count() == 1);  // the same storage
    auto all = list(repo).sessions;
    REQUIRE(all.size() == 2);
    CHECK(all[0].header.id == "two");
    CHECK(all[1].header.id == "one");
    auto only_a = list(repo, ListOptions{std::string("/a")}).sessions;
    REQUIRE(only_a.size() == 1);
    CHECK(only_a[0].header.id == "one");
    CHECK(s2.storage().metadata().metadata == Json{{"k", 1}});
    remove(repo, "one");
    remove(repo, "one");
    CHECK(list(repo).sessions.size() == 1);
    CHECK(error_of([&] { open(repo, "one"); }) == ErrorCode::not_found);
}

TEST_CASE("a generated session id is a UUIDv7 [SPEC 4.1]", "[repo]") {
    auto repo = test_repo();
    auto s = create(repo);
    const auto& id = s.storage().metadata().id;
    REQUIRE(id.size() == 36);
    CHECK(id[14] == '7');
    CHECK(is_valid_session_id(id));
}

TEST_CASE("creating a taken id is already_exists, an invalid id is invalid_session [SPEC 4.10]",
          "[repo][errors]") {
    auto repo = test_repo();
    create(repo, {std::string("one"), "", Json::object(), std::nullopt});
    CHECK(error_of([&] {
              create(repo, {std::string("one"), "", Json::object(), std::nullopt});
          }) == ErrorCode::already_exists);
    CHECK(error_of([&] {
              create(repo, {std::string("../x"), "", Json::object(), std::nullopt});
          }) == ErrorCode::invalid_session);
    CHECK(list(repo).sessions.size() == 1);
}

TEST_CASE(
    "fork copies the entries with the same ids into a new session and leaves the source alone "
    "[SPEC 4.9]",
    "[fork][repo]") {
    auto repo = test_repo();
    auto src = create(repo, {std::string("src"), "/w", Json{{"team", "x"}}, std::nullopt});
    auto a = append_message(src, user("a"));
    auto b = append_message(src, assistant("b"));
    auto c = append_message(src, user("c"));
    append_message(src, assistant("d"));
    auto before = src.storage().entry_count();

    ForkOptions o;
    o.entry_id = c;
    o.session_id = "copy";
    auto f = fork(repo, "src", o);
    CHECK(f.storage().metadata().parent_session == "src");
    CHECK(f.storage().metadata().metadata == Json{{"team", "x"}});
    CHECK(f.storage().metadata().cwd == "/w");
    CHECK(ids(f.storage().get_entries({})) == Strings{a, b});
    CHECK(get_leaf_id(f) == b);
    CHECK(describe(build_context(f)) == Strings{"user:a", "assistant:b"});
    CHECK(src.storage().entry_count() == before);

    append_message(f, user("diverge"));
    CHECK(src.storage().entry_count() == before);
}

TEST_CASE(
    "fork metadata can be given, a copied entry whose parent was not copied becomes a root [SPEC "
    "4.9]",
    "[fork][repo]") {
    auto repo = test_repo();
    auto src = create(repo, {std::string("src"), "/w", Json{{"team", "x"}}, std::nullopt});
    append_message(src, user("a"));
    append_message(src, assistant("b"));
    auto k = append_compaction(src, "sum", std::nullopt, 10, {}, false, std::nullopt,
                               std::vector<AgentMessage>{});
    auto d = append_message(src, user("d"));
    ForkOptions o;
    o.entry_id = d;
    o.position = ForkPosition::at;
    o.metadata = Json{{"team", "y"}};
    auto f = fork(repo, "src", o);
    CHECK(f.storage().metadata().metadata == Json{{"team", "y"}});
    auto copied = f.storage().get_entries({});
    CHECK(ids(copied) == Strings{k, d});
    CHECK_FALSE(parent_id_of(*copied[0]));
    CHECK(get_leaf_id(f) == d);
}

TEST_CASE(
    "fork of an unknown source is not_found, of a bad target invalid_fork_target, creating nothing "
    "[SPEC 4.9]",
    "[fork][repo][errors]") {
    auto repo = test_repo();
    auto src = create(repo, {std::string("src"), "", Json::object(), std::nullopt});
    auto b = append_message(src, assistant("b"));
    CHECK(error_of([&] { fork(repo, "nope", {}); }) == ErrorCode::not_found);
    ForkOptions o;
    o.entry_id = b;
    CHECK(error_of([&] { fork(repo, "src", o); }) == ErrorCode::invalid_fork_target);
    CHECK(list(repo).sessions.size() == 1);
}

TEST_CASE("a whole-tree fork keeps branches, leaf entries and the source's leaf [SPEC 4.9]",
          "[fork][repo]") {
    auto repo = test_repo();
    auto src = create(repo, {std::string("src"), "", Json::object(), std::nullopt});
    auto a = append_message(src, user("a"));
    append_message(src, assistant("b"));
    move_to(src, a);
    auto leaf_before = get_leaf_id(src);
    auto f = fork(repo, "src", ForkOptions{});
    CHECK(f.storage().entry_count() == src.storage().entry_count());
    CHECK(get_leaf_id(f) == leaf_before);
    CHECK(describe(build_context(f)) == describe(build_context(src)));
}

TEST_CASE(
    "forking at a leaf entry whose target is not copied points the copy before the first entry",
    "[fork]") {
    auto s = memory_session();
    auto a = append_message(s, user("a"));
    auto b = append_message(s, assistant("b"));
    move_to(s, a);
    (void)b;
    auto leaf_entry = s.storage().find_entries("leaf").back();
    ForkOptions o;
    o.entry_id = id_of(*leaf_entry);
    o.position = ForkPosition::at;
    auto copied = prepare_fork_entries(get_entries_to_fork(s.storage(), o));
    // path: a, b, leaf(target a) — a is copied, so the target stays.
    REQUIRE(copied.size() == 3);
    CHECK(std::get<LeafEntry>(copied.back()).target_id == a);
}

TEST_CASE(
    "a fork leaves out label entries whose target it did not copy, and keeps the chain around them",
    "[fork][repo]") {
    auto repo = test_repo();
    auto s = create(repo, {std::string("src"), "/a", Json::object(), std::nullopt});
    const auto u1 = append_message(s, user("first"));
    const auto a1 = append_message(s, assistant("answer"));
    const auto side = append_message(s, user("a side branch"));
    move_to(s, a1);
    const auto kept_label = append_label(s, u1, std::string("start"));
    const auto side_label =
        append_label(s, side, std::string("elsewhere"));  // on this path, labels the side branch
    const auto u2 = append_message(s, user("second"));
    ForkOptions o;
    o.entry_id = u2;
    o.position = ForkPosition::at;
    o.session_id = "copy";
    auto copy = fork(repo, "src", o);
    CHECK(ids(copy.storage().get_entries()) == Strings{u1, a1, kept_label, u2});
    CHECK(!copy.storage().get_entry(side_label));
    CHECK(parent_id_of(*copy.storage().get_entry(u2)) == kept_label);
    CHECK(copy.storage().get_label(u1) == std::optional<std::string>("start"));
    CHECK(verify(copy).ok());
    CHECK(describe(build_context(copy)) == describe(build_context_at(s, u2)));
}

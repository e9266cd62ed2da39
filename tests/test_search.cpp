// Search across sessions (search.hpp): the query language and its errors, the normaliser, the
// text each entry offers, snippets and scores, filters, ordering, paging, and the same answers
// from the memory, JSONL and run-time chosen repositories.

#include "support/catch.hpp"
#include "support/errors.hpp"
#include "support/scratch.hpp"
#include "support/search_corpus.hpp"

#include <agentcore/any_repo.hpp>
#include <agentcore/detail/search_bound.hpp>
#include <agentcore/detail/search_line.hpp>
#include <agentcore/search.hpp>
#include <agentcore/session.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace agentcore;
using agentcore::testing::error_of;
using agentcore::testing::message_of_error;

namespace search_tests {

using HitKey = std::pair<std::string, std::string>;  // session id, entry id

template <class Repo>
std::set<HitKey> hit_keys(const Repo& repo, std::string_view q, SearchOptions o = {}) {
    o.limit = 1000000;
    std::set<HitKey> out;
    for (const auto& h : search(repo, q, o).hits) out.emplace(h.session_id, h.entry_id);
    return out;
}

inline InMemorySessionRepo small_repo() {
    InMemorySessionRepo repo(Environment::deterministic(1796197403123, 7, 1000));
    auto a = create(repo, CreateOptions{std::string("s-login"), "/work/app", Json{{"team", "core"}},
                                        std::nullopt});
    const std::string u = append_message(a, UserMessage{"The login bug is back on Safari", 1, {}});
    AssistantMessage reply;
    reply.content.push_back(ThinkingContent{"secret musing about caching", {}});
    reply.content.push_back(TextContent{"I fixed the Login-Bug in getUserById.", {}});
    reply.content.push_back(
        ToolCallContent{"c1", "read_file", Json{{"path", "src/auth/login.cpp"}}, {}});
    append_message(a, reply);
    ToolResultMessage result;
    result.tool_call_id = "c1";
    result.tool_name = "read_file";
    result.content.push_back(TextContent{"int main() { return login_check(); }", {}});
    result.content.push_back(ImageContent{"bG9naW4gYnVn", "image/png", {}});
    append_message(a, result);
    append_label(a, u, std::string("crème brûlée milestone"));
    append_session_name(a, "Fixing the login");
    auto b = create(repo, CreateOptions{std::string("s-greek"), "/work/lib", Json{{"team", "web"}},
                                        std::nullopt});
    append_message(b, UserMessage{"Καλημέρα ΑΘΉΝΑ, ёлка в Москве", 1, {}});
    append_message(b, UserMessage{"naïve café login", 1, {}});
    append_compaction(b, "Summary: the login works now", std::nullopt, 10);
    return repo;
}

}  // namespace search_tests

using search_tests::hit_keys;
using search_tests::HitKey;

TEST_CASE("the normaliser folds case and removes diacritics of Latin, Greek and Cyrillic",
          "[search]") {
    CHECK(normalize_for_search("Ça va, Ölçer!") == "ca va olcer");
    CHECK(normalize_for_search("CRÈME Brûlée Straße ÆON Œuvre Łódź") ==
          "creme brulee strasse aeon oeuvre lodz");
    CHECK(normalize_for_search("ΑΘΉΝΑ Σοφίας ὁδός") == normalize_for_search("αθηνα σοφιας ὁδος"));
    CHECK(normalize_for_search("ΣΟΦΟΣ") == "σοφοσ");
    CHECK(normalize_for_search("Ёлка МОСКВА") == "елка москва");
    CHECK(normalize_for_search("cafe\xCC\x81") == "cafe");  // a combining accent
    CHECK(normalize_for_search("get_user-by.id") == "get user by id");
    CHECK(normalize_for_search("東京タワー") == "東 京 タ ワ ー");
    CHECK(normalize_for_search("a\xFF\xFE"
                               "b") == "a b");      // invalid bytes separate words
    CHECK(normalize_for_search("\xC0\xAF") == "");  // an overlong '/'
    CHECK(fold_for_substring("Crème.Brûlée/GetUser") == "creme.brulee/getuser");
}

TEST_CASE("the query language: words, phrases, prefixes, exclusions and substrings", "[search]") {
    const SearchQuery q = parse_search_query(R"(login "Bug fixed" deplo* -Flaky get_user)");
    REQUIRE(q.terms.size() == 5);
    CHECK(q.terms[0].tokens == std::vector<std::string>{"login"});
    CHECK(q.terms[1].tokens == std::vector<std::string>{"bug", "fixed"});
    CHECK(q.terms[2].prefix);
    CHECK(q.terms[2].tokens == std::vector<std::string>{"deplo"});
    CHECK(q.terms[3].excluded);
    CHECK(q.terms[3].tokens == std::vector<std::string>{"flaky"});
    CHECK(q.terms[4].tokens == std::vector<std::string>{"get", "user"});
    const SearchQuery s =
        parse_search_query(R"(getUserById "a b c" -*.tmp)", SearchMode::substring);
    REQUIRE(s.terms.size() == 3);
    CHECK(s.terms[0].tokens == std::vector<std::string>{"getuserbyid"});
    CHECK(s.terms[1].tokens == std::vector<std::string>{"a b c"});
    CHECK(s.terms[2].excluded);
    CHECK(s.terms[2].tokens == std::vector<std::string>{"*.tmp"});
}

TEST_CASE("empty, blank, negative-only, oversized and malformed queries are invalid_query",
          "[search]") {
    const auto code = [](std::string_view q, SearchMode m = SearchMode::words) {
        return error_of([&] { parse_search_query(q, m); });
    };
    CHECK(code("") == ErrorCode::invalid_query);
    CHECK(code("   \t\n") == ErrorCode::invalid_query);
    CHECK(code("-flaky -bug") == ErrorCode::invalid_query);
    CHECK(code(std::string(max_query_bytes + 1, 'a')) == ErrorCode::invalid_query);
    CHECK(code(std::string(std::string_view("a\0b", 3))) == ErrorCode::invalid_query);
    CHECK(code("a\x01") == ErrorCode::invalid_query);
    CHECK(code("caf\xC3") == ErrorCode::invalid_query);
    CHECK(code("\"unterminated phrase") == ErrorCode::invalid_query);
    CHECK(code("*") == ErrorCode::invalid_query);
    CHECK(code("-") == ErrorCode::invalid_query);
    CHECK(code("\"\"") == ErrorCode::invalid_query);
    CHECK(code("... -- &&") == ErrorCode::invalid_query);
    CHECK(parse_search_query("login ... *").terms.size() == 1);
    CHECK(code("ab", SearchMode::substring) == ErrorCode::invalid_query);
    CHECK(code("login -ab", SearchMode::substring) == ErrorCode::invalid_query);
    std::string many;
    for (std::size_t i = 0; i <= max_query_terms; ++i) many += "w" + std::to_string(i) + " ";
    CHECK(code(many) == ErrorCode::invalid_query);
    CHECK_NOTHROW(parse_search_query(std::string(max_query_bytes, 'a')));
    CHECK(message_of_error([] { parse_search_query(""); }) ==
          "[agentcore.invalid_query] search query: empty");
    CHECK(message_of_error([] { parse_search_query("-a"); }).find("only excluded terms") !=
          std::string::npos);
    CHECK(message_of_error([] {
              parse_search_query("*");
          }).find("no term has a letter or digit ('*' is punctuation only)") != std::string::npos);
    CHECK(message_of_error([] {
              parse_search_query("xy", SearchMode::substring);
          }).find("shorter than 3") != std::string::npos);
    CHECK(message_of_error([] { parse_search_query("\"x"); }).find("no closing") !=
          std::string::npos);
    CHECK(to_string(ErrorCode::invalid_query) == "invalid_query");
}

TEST_CASE("hostile queries are text: operators of FTS5 and SQL match only as words", "[search]") {
    InMemorySessionRepo repo;
    auto s = create(repo, CreateOptions{std::string("hostile"), "/w", {}, std::nullopt});
    const std::string plain = append_message(s, UserMessage{"login bug", 1, {}});
    const std::string ops =
        append_message(s, UserMessage{"NEAR(login bug) AND x OR y; DROP TABLE entries", 1, {}});
    const std::string quote =
        append_message(s, UserMessage{"it's O'Brien's \"quoted\" 50%", 1, {}});
    CHECK(hit_keys(repo, "login bug") == std::set<HitKey>{{"hostile", plain}, {"hostile", ops}});
    CHECK(hit_keys(repo, "NEAR(login bug)") == std::set<HitKey>{{"hostile", ops}});
    CHECK(hit_keys(repo, "login AND bug") == std::set<HitKey>{{"hostile", ops}});
    CHECK(hit_keys(repo, "login OR nothing").empty());
    CHECK(hit_keys(repo, "entries; DROP TABLE entries --") == std::set<HitKey>{{"hostile", ops}});
    CHECK(hit_keys(repo, "entries; DROP TABLE sessions --").empty());
    CHECK(hit_keys(repo, "x' OR '1'='1").empty());
    CHECK(hit_keys(repo, "O'Brien") == std::set<HitKey>{{"hostile", quote}});
    CHECK(hit_keys(repo, "\"quoted\" 50%") == std::set<HitKey>{{"hostile", quote}});
    CHECK(hit_keys(repo, "column:login").empty());
    CHECK(
        hit_keys(repo, "\"'; DROP TABLE\"", SearchOptions{.mode = SearchMode::substring}).empty());
    CHECK(hit_keys(repo, "\"; DROP TABLE\"", SearchOptions{.mode = SearchMode::substring}) ==
          std::set<HitKey>{{"hostile", ops}});
    CHECK(error_of([&] {
              hit_keys(repo, "'; DROP", SearchOptions{.mode = SearchMode::substring});
          }) == ErrorCode::invalid_query);
    CHECK(hit_keys(repo, "TABLE entries", SearchOptions{.mode = SearchMode::substring}) ==
          std::set<HitKey>{{"hostile", ops}});
    CHECK(error_of([&] {
              hit_keys(repo, "O'Brien's \"", SearchOptions{.mode = SearchMode::substring});
          }) == ErrorCode::invalid_query);
    CHECK(hit_keys(repo, "\"O'Brien's \"", SearchOptions{.mode = SearchMode::substring}) ==
          std::set<HitKey>{{"hostile", quote}});
}

TEST_CASE("what an entry offers to search: text, tools, summaries, labels and names, never images",
          "[search]") {
    AssistantMessage a;
    a.content.push_back(ThinkingContent{"pondering", {}});
    a.content.push_back(TextContent{"answer", {}});
    a.content.push_back(ToolCallContent{"c", "bash", Json{{"cmd", "ls -l"}, {"n", 42}}, {}});
    MessageEntry e;
    e.message = a;
    CHECK(search_text_of(e) == "answer\nbash\nls -l");
    CHECK(search_text_of(e, SearchTextOptions{.thinking = true}) ==
          "pondering\nanswer\nbash\nls -l");
    ToolResultMessage r;
    r.tool_name = "read_file";
    r.content.push_back(TextContent{"héllo wörld", {}});
    r.content.push_back(ImageContent{"aGVsbG8=", "image/png", {}});
    e.message = r;
    CHECK(search_text_of(e) == "read_file\nhéllo wörld");
    CHECK(search_text_of(e, SearchTextOptions{.tool_results = false}) == "read_file");
    // The cap cuts between words: a cap inside "héllo" (even inside its é) leaves it out.
    CHECK(search_text_of(e, SearchTextOptions{.tool_result_cap = 2}) == "read_file");
    CHECK(search_text_of(e, SearchTextOptions{.tool_result_cap = 7}) == "read_file\nhéllo ");
    e.message = BashExecutionMessage{"make test", "all passed", 0, false, false, {}, {}, 1, {}};
    CHECK(search_text_of(e) == "make test\nall passed");
    CompactionEntry c;
    c.summary = "compacted";
    CHECK(search_text_of(c) == "compacted");
    BranchSummaryEntry b;
    b.summary = "abandoned";
    CHECK(search_text_of(b) == "abandoned");
    LabelEntry l;
    l.label = "milestone";
    CHECK(search_text_of(l) == "milestone");
    SessionInfoEntry n;
    n.name = "my session";
    CHECK(search_text_of(n) == "my session");
    CustomEntry custom;
    custom.data = Json{{"text", "hidden"}};
    CHECK(search_text_of(custom).empty());
    CustomMessageEntry cm;
    cm.content = std::vector<ContentBlock>{TextContent{"note", {}}, ImageContent{"eA==", "x", {}}};
    CHECK(search_text_of(cm) == "note");
}

TEST_CASE("a text's words are matched against the terms in one walk as on the list of its words",
          "[search]") {
    using agentcore::detail::Span;
    // Few distinct words, so that phrases repeat and overlap ("a a b" in "a a a b"); accents,
    // a combining mark, ideographs, a Greek letter, an invalid byte, digits and punctuation
    // between them. A quarter of the texts are long, with stretches of ASCII words that the
    // walk passes over 16 bytes a step; a query's first word may be one that is not ASCII.
    const std::vector<std::string> pieces = {
        "a",  "A", "b",   "ab",  "\xC3\xA9", " ",  " ", " ",    "-",        "\xCC\x81",
        "\n", "B", "abc", "xab", "ba",       "7a", "_", "\xFF", "\xCE\xB1", "\xE4\xB8\xAD"};
    std::mt19937 random(5);
    for (int round = 0; round < 4000; ++round) {
        std::string text;
        const std::size_t most = round % 4 == 0 ? 300 : 40;
        for (std::size_t i = random() % most; i > 0; --i) text += pieces[random() % pieces.size()];
        std::string query_text;
        for (std::size_t t = 1 + random() % 3; t > 0; --t) {
            std::string term;
            for (std::size_t w = 1 + random() % 3; w > 0; --w)
                term += std::string(term.empty() ? "" : " ") + pieces[random() % 5];
            if (random() % 3 == 0) term = "\"" + term + "\"";
            if (random() % 4 == 0) term += "*";
            query_text += (query_text.empty() ? "" : " ") + term;
        }
        const SearchQuery query = parse_search_query(query_text);
        const auto tokens = agentcore::detail::tokenize_for_search(text);
        std::vector<std::vector<Span>> streamed;
        std::size_t words = 0;
        INFO(text << " / " << query_text);
        REQUIRE(agentcore::detail::stream_word_terms(query, text, streamed, words));
        CHECK(words == tokens.size());
        CHECK(words == agentcore::detail::count_search_words(text));
        REQUIRE(streamed.size() == query.terms.size());
        for (std::size_t j = 0; j < query.terms.size(); ++j) {
            const auto listed = agentcore::detail::word_term_spans(query.terms[j], tokens);
            REQUIRE(streamed[j].size() == listed.size());
            for (std::size_t k = 0; k < listed.size(); ++k) {
                CHECK(streamed[j][k].begin == listed[k].begin);
                CHECK(streamed[j][k].end == listed[k].end);
            }
        }
    }
    // A phrase of 64 words or more is matched on the list of words.
    std::string phrase;
    for (int i = 0; i < 70; ++i) phrase += i == 0 ? "w" : " w";
    const SearchQuery long_query = parse_search_query("\"" + phrase + "\"");
    std::vector<std::vector<Span>> streamed;
    std::size_t words = 0;
    CHECK_FALSE(agentcore::detail::stream_word_terms(long_query, phrase, streamed, words));
    CHECK(match_text(long_query, "x " + phrase + " y").matched);
    CHECK_FALSE(match_text(long_query, phrase.substr(2)).matched);
}

TEST_CASE("snippets mark every occurrence around the first, scores favour more occurrences",
          "[search]") {
    const TextMatch m =
        match_text(parse_search_query("login bug"), "The LOGIN bug: login failed\nagain");
    REQUIRE(m.matched);
    CHECK(m.snippet == "The LOGIN bug: login failed again");
    CHECK(marked_snippet(m.snippet, m.marks, "[", "]") ==
          "The [LOGIN] [bug]: [login] failed again");
    const std::string long_text = std::string(400, 'x') + " café " + std::string(400, 'y');
    const TextMatch far = match_text(parse_search_query("CAFE"), long_text);
    REQUIRE(far.matched);
    CHECK(far.snippet.rfind("…", 0) == 0);
    CHECK(marked_snippet(far.snippet, far.marks, "<", ">").find("<café>") != std::string::npos);
    CHECK(far.snippet.size() < 260);
    const TextMatch once = match_text(parse_search_query("bug"), "a bug here and there");
    const TextMatch twice = match_text(parse_search_query("bug"), "a bug here and a bug there");
    CHECK(twice.score > once.score);
    CHECK_FALSE(match_text(parse_search_query("bug -here"), "a bug here").matched);
    CHECK_FALSE(match_text(parse_search_query("\"bug there\""), "bug here there").matched);
    CHECK(match_text(parse_search_query("her*"), "a bug here").matched);
    CHECK_FALSE(match_text(parse_search_query("her"), "a bug here").matched);
    const TextMatch sub =
        match_text(parse_search_query("UserBy", SearchMode::substring), "call getUserById(7)");
    REQUIRE(sub.matched);
    CHECK(marked_snippet(sub.snippet, sub.marks, "[", "]") == "call get[UserBy]Id(7)");
}

TEST_CASE("search finds entries of every kind across sessions, with their places", "[search]") {
    const InMemorySessionRepo repo = search_tests::small_repo();
    const SearchResult r = search(repo, "login");
    std::set<std::string> kinds;
    for (const auto& h : r.hits) kinds.insert(h.entry_type + "/" + h.role);
    CHECK(kinds == std::set<std::string>{"compaction/", "message/assistant", "message/tool_result",
                                         "message/user", "session_info/"});
    for (const auto& h : r.hits) {
        CHECK(!h.entry_id.empty());
        CHECK(!h.timestamp.empty());
        CHECK(h.score > 0);
        CHECK(!h.marks.empty());
    }
    const auto it = std::find_if(r.hits.begin(), r.hits.end(),
                                 [](const SearchHit& h) { return h.role == "user"; });
    REQUIRE(it != r.hits.end());
    CHECK(it->session_name.empty() == (it->session_id != "s-login"));
    // Words are whole: "login" in login.cpp is a word of the path, login_check of the tool result.
    CHECK(hit_keys(repo, "login.cpp").size() == 1);
    CHECK(hit_keys(repo, "musing").empty());
    CHECK(hit_keys(repo, "musing", SearchOptions{.text = {.thinking = true}}).size() == 1);
    CHECK(hit_keys(repo, "login_check").size() == 1);
    CHECK(hit_keys(repo, "login_check", SearchOptions{.text = {.tool_results = false}}).empty());
    CHECK(hit_keys(repo, "bG9naW4gYnVn").empty());
    CHECK(hit_keys(repo, "CREME BRULEE").size() == 1);
    CHECK(hit_keys(repo, "αθηνα елка").size() == 1);
    CHECK(hit_keys(repo, "\"login bug\"").size() == 2);  // "Login-Bug" is the phrase too
    CHECK(hit_keys(repo, "getuserbyid").size() == 1);
    CHECK(hit_keys(repo, "UserBy", SearchOptions{.mode = SearchMode::substring}).size() == 1);
    CHECK(hit_keys(repo, "auth/LOGIN", SearchOptions{.mode = SearchMode::substring}).size() == 1);
    CHECK(hit_keys(repo, "naive cafe").size() == 1);
    CHECK(hit_keys(repo, "log* -safari").size() == 5);
}

TEST_CASE("search filters by cwd, time, roles, types, session name and metadata", "[search]") {
    const InMemorySessionRepo repo = search_tests::small_repo();
    const auto count = [&](SearchOptions o) {
        return hit_keys(repo, "login", std::move(o)).size();
    };
    CHECK(count({}) == 6);
    CHECK(count({.cwd = "/work/lib"}) == 2);
    CHECK(count({.cwd = "/nowhere"}) == 0);
    CHECK(count({.roles = {"user"}}) == 2);
    CHECK(count({.exclude_roles = {"tool_result"}}) == 5);
    CHECK(count({.types = {"compaction", "session_info"}}) == 2);
    CHECK(count({.exclude_types = {"message"}}) == 2);
    CHECK(count({.session_name = "FIXING"}) == 4);
    CHECK(count({.metadata = Json{{"team", "web"}}}) == 2);
    CHECK(count({.metadata = Json{{"team", "none"}}}) == 0);
    const SearchResult all = search(repo, "login", SearchOptions{.order = SearchOrder::newest});
    REQUIRE(all.hits.size() == 6);
    const std::string middle = all.hits[3].timestamp;
    CHECK(count({.since = middle}) == 4);
    CHECK(count({.until = middle}) == 2);
    CHECK(count({.since = "2026", .until = "2099-01-01"}) == 6);
    CHECK(count({.until = "2000"}) == 0);
    for (std::size_t i = 1; i < all.hits.size(); ++i)
        CHECK(all.hits[i - 1].timestamp >= all.hits[i].timestamp);
    const SearchResult ranked = search(repo, "login");
    for (std::size_t i = 1; i < ranked.hits.size(); ++i)
        CHECK(ranked.hits[i - 1].score >= ranked.hits[i].score);
}

TEST_CASE("options that cannot be met are invalid_query", "[search]") {
    const InMemorySessionRepo repo = search_tests::small_repo();
    CHECK(error_of([&] { search(repo, "login", SearchOptions{.limit = 0}); }) ==
          ErrorCode::invalid_query);
    CHECK(error_of([&] { search(repo, "login", SearchOptions{.since = "yesterday"}); }) ==
          ErrorCode::invalid_query);
    CHECK(error_of([&] { search(repo, "login", SearchOptions{.until = ""}); }) ==
          ErrorCode::invalid_query);
    CHECK(error_of([&] { search(repo, "login", SearchOptions{.metadata = Json::array()}); }) ==
          ErrorCode::invalid_query);
    CHECK(error_of([&] {
              search(repo, "login",
                     SearchOptions{.text = {.tool_result_cap = max_tool_result_cap + 1}});
          }) == ErrorCode::invalid_query);
    CHECK(message_of_error([&] {
              search(repo, "login", SearchOptions{.since = "2026-1"});
          }).find("since '2026-1' is not an ISO 8601") != std::string::npos);
}

TEST_CASE("what an index of words can check: whole words, prefixes and parts of words",
          "[search]") {
    using agentcore::detail::fts5_literal;
    using agentcore::detail::index_words;
    using W = agentcore::detail::IndexWord;
    using K = W::Kind;
    CHECK(index_words(parse_search_query("Login \"fix the bug\" ab* -flaky login a*")) ==
          std::vector<W>{{"login", K::whole},
                         {"fix", K::whole},
                         {"the", K::whole},
                         {"bug", K::whole},
                         {"ab", K::prefix}});
    CHECK(index_words(parse_search_query("a*")).empty());
    // Substring terms: bounded words are whole, the last one a prefix, the first one a part.
    CHECK(index_words(parse_search_query("auth/Login.cp", SearchMode::substring)) ==
          std::vector<W>{{"auth", K::part}, {"login", K::whole}, {"cp", K::prefix}});
    CHECK(index_words(parse_search_query("UserBy", SearchMode::substring)) ==
          std::vector<W>{{"userby", K::part}});
    CHECK(index_words(parse_search_query("/src/ -abc", SearchMode::substring)) ==
          std::vector<W>{{"src", K::whole}});
    CHECK(index_words(parse_search_query("x.y Ölç", SearchMode::substring)) ==
          std::vector<W>{{"olc", K::part}});
    CHECK(index_words(parse_search_query("東京タワー", SearchMode::substring)) ==
          std::vector<W>{{"東", K::whole},
                         {"京", K::whole},
                         {"タ", K::whole},
                         {"ワ", K::whole},
                         {"ー", K::whole}});
    CHECK(fts5_literal("x\" near") == "\"x\"\" near\"");
    // The same conditions checked on an index text (words and single spaces).
    using agentcore::detail::index_text_holds;
    const std::string text = "fix the login bug in getuserbyid";
    CHECK(index_text_holds({{"login", K::whole}, {"bug", K::whole}}, text));
    CHECK_FALSE(index_text_holds({{"logi", K::whole}}, text));
    CHECK_FALSE(index_text_holds({{"in", K::prefix}, {"zzz", K::part}}, text));
    CHECK(index_text_holds({{"in", K::whole}, {"getuser", K::prefix}}, text));
    CHECK_FALSE(index_text_holds({{"etuser", K::prefix}}, text));
    CHECK(index_text_holds({{"etuser", K::part}, {"ix", K::part}}, text));
    CHECK(index_text_holds({{"getuserbyid", K::whole}, {"fix", K::whole}}, text));
    CHECK(index_text_holds({}, text));
    // The quick check of raw JSON bytes: folded as the matcher folds, `\u` escapes never ruled
    // out.
    using agentcore::detail::raw_may_hold;
    const std::string raw = R"({"text":"Fix the LOGIN bug at the Café in Straße\n"})";
    CHECK(raw_may_hold({{"login", K::whole}, {"cafe", K::whole}, {"strasse", K::whole}}, raw));
    CHECK(raw_may_hold({{"ogi", K::part}, {"bug", K::prefix}}, raw));
    CHECK_FALSE(raw_may_hold({{"login", K::whole}, {"zurich", K::whole}}, raw));
    CHECK(raw_may_hold({{"zurich", K::whole}}, R"({"text":"Z\u00fcrich"})"));
    CHECK(raw_may_hold({}, raw));
    // The index text holds every part any search options can match, folded.
    AssistantMessage a;
    a.content.push_back(ThinkingContent{"Pondering", {}});
    a.content.push_back(TextContent{"Answer", {}});
    MessageEntry e;
    e.message = a;
    CHECK(search_index_text(e) == "pondering answer");
}

TEST_CASE("a cap cuts a text between words, repeated words get marks of their counts", "[search]") {
    using agentcore::detail::capped;
    const std::string text = "alpha beta gamma";
    CHECK(capped(text, 100) == text);
    CHECK(capped(text, 8) == "alpha ");  // inside "beta": left out whole
    CHECK(capped(text, 6) == "alpha ");  // at its start
    CHECK(capped(text, 5) == "alpha");   // at a space
    CHECK(capped(text, 3).empty());      // inside the first word
    // A combining mark belongs to the word before it; an ideograph is a word of its own; a
    // letter of several bytes is never split.
    CHECK(capped("x café y", 6) == "x ");
    CHECK(capped("日本語", 4) == "日");
    CHECK(capped("ab ḁxy", 4) == "ab ");
    CHECK(capped("ab ḁxy", 7) == "ab ");
    // Of a longer text capped larger, the words of the shorter cut are the first words.
    const std::string long_text = "one two three four five six seven";
    for (std::size_t cap = 0; cap < long_text.size(); ++cap) {
        const std::string shorter = normalize_for_search(capped(long_text, cap));
        const std::string longer = normalize_for_search(capped(long_text, cap + 3));
        INFO(cap);
        CHECK(longer.substr(0, shorter.size()) == shorter);
        CHECK(
            (shorter.size() == longer.size() || shorter.empty() || longer[shorter.size()] == ' '));
    }
    using agentcore::detail::most_repeats;
    using agentcore::detail::word_repeat_marks;
    CHECK(word_repeat_marks("").empty());
    CHECK(word_repeat_marks("one two three").empty());
    CHECK(word_repeat_marks("b a b a b b a b b b c") == "a~2 a~3 b~2 b~3 b~4");
    CHECK(word_repeat_marks("x x x x x x x x y y z z z") == "x~2 x~3 x~4 x~8 y~2 z~2 z~3");
    CHECK(most_repeats(-1) == 1);
    CHECK(most_repeats(0) == 2);
    CHECK(most_repeats(1) == 3);
    CHECK(most_repeats(2) == 7);
    CHECK(std::isinf(most_repeats(3)));
    // Each word count has one length class, whose floor is at most the count and whose next
    // floor is above it.
    using agentcore::detail::length_class;
    using agentcore::detail::length_class_floors;
    using agentcore::detail::length_mark;
    constexpr std::size_t classes = std::size(length_class_floors);
    CHECK(length_class(0) == 0);
    CHECK(length_class(1) == 0);
    CHECK(length_class(2) == 1);
    CHECK(length_class(7) == 3);
    CHECK(length_class(8191) == classes - 2);
    CHECK(length_class(8192) == classes - 1);
    CHECK(length_class(std::numeric_limits<std::int64_t>::max()) == classes - 1);
    bool floors_hold = true;
    for (std::int64_t words = 0; words < 20000; ++words) {
        const std::size_t k = length_class(words);
        floors_hold = floors_hold && length_class_floors[k] <= words &&
                      (k + 1 == classes || words < length_class_floors[k + 1]);
    }
    CHECK(floors_hold);
    CHECK(length_mark(3) == "~n3");
}

namespace search_tests {

// folded_may_hold against the whole folded copy, for words and an escape placed across the first
// cut between blocks of `filler` (32 KiB), at every offset.
void check_blocks(const std::string& filler) {
    using agentcore::detail::fold_bytes;
    using agentcore::detail::folded_holds;
    using agentcore::detail::folded_may_hold;
    using W = agentcore::detail::IndexWord;
    std::string scratch;
    for (std::size_t at = 32750; at < 32780; ++at) {
        // "ÖLÇER"; "O" and a combining diaeresis, "LCER"; "Zebra"; an escape.
        for (const std::string& inserted :
             {std::string("\xC3\x96L\xC3\x87"
                          "ER"),
              std::string("O\xCC\x88LCER"), std::string("Zebra"), std::string("\\u00e9")}) {
            std::string doc = filler;
            doc.insert(at, " " + inserted + " ");
            std::string folded;
            fold_bytes(doc, folded);
            INFO(at << " " << inserted);
            for (const std::vector<W>& words :
                 {std::vector<W>{{"olcer", W::Kind::whole}},
                  std::vector<W>{{"zebra", W::Kind::whole}},
                  std::vector<W>{{"zebra", W::Kind::whole}, {"def", W::Kind::whole}},
                  std::vector<W>{{"zebro", W::Kind::whole}}}) {
                const bool escape = inserted.front() == '\\';
                CHECK(folded_may_hold(words, doc, scratch) ==
                      (escape || folded_holds(words, folded)));
            }
        }
    }
    CHECK_FALSE(folded_may_hold({{"zebra", W::Kind::whole}}, filler, scratch));
    CHECK(folded_may_hold({{"def", W::Kind::whole}}, filler, scratch));
    CHECK(folded_may_hold({}, filler, scratch));
}

}  // namespace search_tests

TEST_CASE("repeat marks and distinct words come in the words' byte order, as a plain sort gives",
          "[search]") {
    // The sort compares the first 8 bytes as a number first: words that share them, words of 7,
    // 8 and 9 bytes, bytes above 0x7f and a NUL byte must still come out in byte order, each
    // counted once per occurrence.
    using agentcore::detail::repeat_levels;
    using agentcore::detail::word_repeat_marks;
    std::mt19937 random(29);
    const std::vector<std::string> heads{
        "", "abcdefg", "abcdefgh", "abcdefgh\x80", "zz", std::string("ab\0", 3)};
    const std::string tails("ab\x7f\x80\xff_9");
    for (int round = 0; round < 3000; ++round) {
        std::vector<std::string> words;
        const auto count = std::uniform_int_distribution<int>(0, 40)(random);
        for (int i = 0; i < count; ++i) {
            std::string w = heads[random() % heads.size()];
            const auto extra = std::uniform_int_distribution<int>(w.empty() ? 1 : 0, 3)(random);
            for (int k = 0; k < extra; ++k) w.push_back(tails[random() % tails.size()]);
            words.push_back(w);
        }
        std::string text;
        for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
        std::map<std::string, std::size_t> counts;  // std::string orders bytes as unsigned
        for (const auto& w : words) ++counts[w];
        std::string marks;
        std::string distinct;
        for (const auto& [word, n] : counts) {
            distinct += (distinct.empty() ? "" : " ") + word;
            if (n < 2) continue;
            for (const std::size_t level : repeat_levels)
                if (n >= level)
                    marks += (marks.empty() ? "" : " ") + word + "~" + std::to_string(level);
        }
        INFO(round);
        std::string got_distinct;
        CHECK(word_repeat_marks(text, &got_distinct) == marks);
        CHECK(got_distinct == distinct);
    }
}

TEST_CASE("a document searched without its folded copy holds the words the copy holds",
          "[search]") {
    const auto repeated = [](const std::string& piece, std::size_t size) {
        std::string out;
        while (out.size() < size) out += piece;
        return out;
    };
    const std::string accented =
        "abc d\xC3\xA9"
        "f ";  // "déf": a character of two bytes
    // Blocks of ASCII only are searched without a folded copy: every block, none, and the
    // first block or only the ones after it.
    for (const std::string& filler : {repeated(accented, 70000), repeated("abc DeF ", 70000),
                                      repeated("abc DeF ", 33000) + repeated(accented, 37000),
                                      repeated(accented, 32700) + repeated("abc DeF ", 37000)})
        search_tests::check_blocks(filler);
}

TEST_CASE("documents of mixed scripts hold the words their folded copies hold", "[search]") {
    using agentcore::detail::fold_bytes;
    using agentcore::detail::folded_holds;
    using agentcore::detail::folded_may_hold;
    using W = agentcore::detail::IndexWord;
    // ASCII letters and spaces, letters that fold to ASCII (É, ö, ß), a combining accent that
    // folds to nothing, a Greek and a CJK letter, and a backslash (a `\u` escape now and then).
    const std::vector<std::string> pieces = {"a",
                                             "b",
                                             "c",
                                             "A",
                                             "B",
                                             " ",
                                             " ",
                                             "\xC3\x89",
                                             "\xC3\xB6",
                                             "\xC3\x9F",
                                             "\xCC\x81",
                                             "\xCE\xB1",
                                             "\xE4\xB8\xAD",
                                             "\\",
                                             "u",
                                             "x"};
    std::mt19937 random(11);
    std::string scratch;
    for (int round = 0; round < 4000; ++round) {
        // Short documents, and long ones where the characters that are not ASCII letters are
        // rare (the stretches about those that fold toward ASCII are then apart).
        std::string doc;
        const bool long_doc = round % 2 == 1;
        const std::size_t size = random() % (long_doc ? 400 : 60);
        for (std::size_t i = 0; i < size; ++i)
            doc += pieces[long_doc && random() % 10 != 0 ? random() % 7 : random() % pieces.size()];
        std::string folded;
        fold_bytes(doc, folded);
        std::vector<W> words;
        for (std::size_t k = 1 + random() % 2; k > 0; --k) {
            std::string word;
            if (!folded.empty() && random() % 2 == 0) {
                // A stretch of the folded copy (one cut inside a character is left out below).
                const std::size_t from = random() % folded.size();
                word = folded.substr(from, 1 + random() % 6);
            } else {
                for (std::size_t i = 1 + random() % 5; i > 0; --i) word += pieces[random() % 5];
                std::string w;
                fold_bytes(word, w);
                word = w;
            }
            if (!word.empty() && agentcore::detail::is_valid_utf8(word))
                words.push_back(W{word, W::Kind::part});
        }
        const bool escape = doc.find("\\u") != std::string::npos;
        INFO(doc);
        CHECK(folded_may_hold(words, doc, scratch) == (escape || folded_holds(words, folded)));
    }
}

TEST_CASE("only the characters named by folds_toward_ascii fold to ASCII letters or to nothing",
          "[search]") {
    using agentcore::detail::fold_bytes;
    using agentcore::detail::folds_toward_ascii;
    std::size_t named = 0;
    for (char32_t cp = 0x80; cp <= 0x10FFFF; ++cp) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        std::string utf8;
        agentcore::detail::append_utf8(utf8, cp);
        std::string folded;
        fold_bytes(utf8, folded);
        const bool toward_ascii =
            folded.empty() || std::any_of(folded.begin(), folded.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) != 0;
            });
        if (!toward_ascii) continue;
        ++named;
        INFO(static_cast<std::uint32_t>(cp));
        CHECK(folds_toward_ascii(static_cast<unsigned char>(utf8.front())));
    }
    CHECK(named > 200);  // U+00C0..U+017F and the combining marks
    // The walk over a text names the bytes folds_toward_ascii names, 16 at a time or one by one,
    // and stops at an escape.
    for (unsigned byte = 0; byte < 256; ++byte) {
        for (const std::size_t at : {std::size_t{3}, std::size_t{20}, std::size_t{40}}) {
            std::string text(41, 'x');
            text[at] = static_cast<char>(byte);
            std::vector<std::size_t> named_at;
            const bool escape =
                agentcore::detail::escape_or_each_toward_ascii(text, [&](std::size_t i) {
                    named_at.push_back(i);
                    return true;
                });
            INFO(byte << " at " << at);
            CHECK_FALSE(escape);
            CHECK(named_at == (folds_toward_ascii(static_cast<unsigned char>(byte))
                                   ? std::vector<std::size_t>{at}
                                   : std::vector<std::size_t>{}));
        }
    }
    for (const std::size_t at : {std::size_t{3}, std::size_t{15}, std::size_t{39}}) {
        std::string text(41, 'x');
        text.replace(at, 2, "\\u");
        CHECK(
            agentcore::detail::escape_or_each_toward_ascii(text, [](std::size_t) { return true; }));
    }
    // Bytes that are not characters fold to spaces, which no word holds.
    std::string folded;
    fold_bytes("a\xC3(\x80\xFF", folded);
    CHECK(folded == "a (  ");
}

TEST_CASE("an ASCII text is searched for a folded word as its folded copy would be", "[search]") {
    using agentcore::detail::find_ascii_folded;
    using agentcore::detail::find_bytes;
    using agentcore::detail::fold_bytes;
    std::mt19937 random(7);
    const std::string letters = "aAbB-_zZ.09";
    for (int round = 0; round < 3000; ++round) {
        std::string text;
        const std::size_t size = random() % 80;
        for (std::size_t i = 0; i < size; ++i) text += letters[random() % letters.size()];
        std::string word;
        const std::size_t length = 1 + random() % 4;
        for (std::size_t i = 0; i < length; ++i) word += letters[random() % letters.size()];
        std::string folded_word;
        fold_bytes(word, folded_word);
        std::string folded_text;
        fold_bytes(text, folded_text);
        INFO(text << " / " << folded_word);
        CHECK(find_ascii_folded(text, folded_word) == find_bytes(folded_text, folded_word));
    }
    CHECK(find_ascii_folded("xx LOGIN", "login") == 3);
    CHECK(find_ascii_folded("xx LOGIN", "logins") == std::string_view::npos);
    CHECK(find_ascii_folded("abc", "") == 0);
    CHECK(find_ascii_folded("olcer OLCER", "\xC3\xB6lcer") == std::string_view::npos);
}

TEST_CASE("one pass finds the first of two needles where two finds would", "[search]") {
    using agentcore::detail::find_bytes;
    using agentcore::detail::find_either;
    std::mt19937 random(11);
    const std::string letters = "ab\\u_";
    const auto draw = [&](std::size_t size) {
        std::string out;
        for (std::size_t i = 0; i < size; ++i) out += letters[random() % letters.size()];
        return out;
    };
    for (int round = 0; round < 3000; ++round) {
        // Haystacks of up to 100 bytes (16-byte steps and the bytes after them), needles of 1
        // to 20 (longer than some haystacks).
        const std::string text = draw(random() % 100);
        const std::string a = draw(1 + random() % (round % 3 == 0 ? 20 : 3));
        const std::string b = draw(1 + random() % 3);
        const std::size_t expected = std::min(find_bytes(text, a), find_bytes(text, b));
        INFO(text << " / " << a << " / " << b);
        CHECK(find_either(text, a, b) == expected);
        CHECK(find_either(text, b, a) == expected);
    }
    CHECK(find_either("", "a", "b") == std::string_view::npos);
    CHECK(find_either(std::string(40, 'x') + "\\u", "session_info", "\\u") == 40);
}

TEST_CASE("a session file's name is its last session_info's, also where types are escaped",
          "[search][jsonl]") {
    using agentcore::detail::session_file_name;
    const std::string header = "{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n";
    const auto entry = [](int n, const std::string& type, const std::string& rest) {
        return "{\"type\":\"" + type + "\",\"id\":\"e" + std::to_string(n) +
               "\",\"parent_id\":null,\"timestamp\":\"2026-02-03T04:05:06.789Z\"" + rest + "}\n";
    };
    const auto info = [&](int n, const std::string& name, bool escaped) {
        return entry(n, escaped ? "session\\u005finfo" : "session_info",
                     ",\"name\":\"" + name + "\"");
    };
    const std::string message =
        entry(9, "message", ",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}");
    const std::string escaped_message = entry(
        8, "message", ",\"message\":{\"role\":\"user\",\"content\":\"h\\u00ef\",\"timestamp\":1}");
    const std::string filler = std::string(100, ' ') + "\n";  // a long blank line: 16-byte steps
    const auto name = [](const std::string& text) {
        return session_file_name(text, Dialect::native).value_or("(none)");
    };
    CHECK(name(header + message) == "(none)");
    CHECK(name(header + info(1, "one", false) + message + info(2, " two ", false) + message) ==
          "two");
    CHECK(name(header + info(1, "one", false) + message + info(2, "", false)) == "(none)");
    // A type spelled with an escape is found: after a plain one, before one, and where the
    // first `\u` of the file is in a line of its own before it.
    CHECK(name(header + info(1, "one", false) + filler + info(2, "two", true)) == "two");
    CHECK(name(header + info(1, "one", true) + message + info(2, "two", false)) == "two");
    CHECK(name(header + escaped_message + message + info(1, "one", true) + message) == "one");
    CHECK(name(header + info(1, "one", false) + escaped_message + message) == "one");
    CHECK(name(header + message + filler + escaped_message) == "(none)");
}

TEST_CASE("paging by cursor is stable: pages join to the whole result, also across appends",
          "[search]") {
    InMemorySessionRepo repo(Environment::deterministic(1796197403123, 3));
    agentcore::testing::write_search_corpus(repo, 11, 30);
    for (const SearchOrder order : {SearchOrder::relevance, SearchOrder::newest}) {
        INFO(static_cast<int>(order));
        SearchOptions o{.order = order, .limit = 1000000};
        const SearchResult whole = search(repo, "login", o);
        REQUIRE(whole.hits.size() > 20);
        CHECK_FALSE(whole.next);
        o.limit = 7;
        std::vector<SearchCursor> seen;
        bool appended = false;
        while (true) {
            const SearchResult page = search(repo, "login", o);
            for (const auto& h : page.hits) seen.push_back(h.cursor());
            if (!page.next) break;
            CHECK(page.hits.size() == 7);
            CHECK(*page.next == page.hits.back().cursor());
            o.after = page.next;
            if (!appended) {
                // A new hit that sorts before the cursor must not shift later pages.
                auto s = open(repo, whole.hits.front().session_id);
                append_message(s, UserMessage{"login login login", 1, {}});
                appended = true;
            }
        }
        // Hits added after the first page sort before the cursor (newer, and scored higher):
        // the later pages are exactly the rest of the whole result.
        std::vector<SearchCursor> expected;
        for (const auto& h : whole.hits) expected.push_back(h.cursor());
        CHECK(seen == expected);
        CHECK(search(repo, "login", SearchOptions{.order = order, .limit = 1000000}).hits.size() ==
              whole.hits.size() + 1);
    }
}

TEST_CASE("a sink that returns false stops the search", "[search]") {
    InMemorySessionRepo repo(Environment::deterministic(1796197403123, 3));
    agentcore::testing::write_search_corpus(repo, 5, 10);
    std::size_t calls = 0;
    search_each(repo, parse_search_query("login"), {}, [&](SearchHit&&) { return ++calls < 3; });
    CHECK(calls == 3);
}

TEST_CASE("memory, JSONL and run-time chosen repositories give the same hits in the same order",
          "[search][jsonl][any]") {
    agentcore::testing::ScratchDir dir;
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 9, 997));
    agentcore::testing::write_search_corpus(memory, 21, 40);
    JsonlSessionRepo jsonl(dir.path() + "/sessions");
    for (const auto& l : list(memory).sessions) copy_session(memory, jsonl, l.header.id);
    AnyRepository any_jsonl = open_repository("jsonl:" + dir.path() + "/sessions");
    AnyRepository any_memory(memory);
    const std::vector<std::pair<std::string, SearchOptions>> queries{
        {"login", {}},
        {"\"login bug\"", {}},
        {"caf* -timeout", {}},
        {"ΑΘΗΝΑ", {}},
        {"ёлка москва", {}},
        {"strasse", {}},
        {"rare_zebra_word", {}},
        {"getUserById", {.mode = SearchMode::substring}},
        {"auth/login", {.mode = SearchMode::substring}},
        {"session", {.order = SearchOrder::newest, .limit = 5}},
        {"token", {.cwd = "/work/lib", .exclude_roles = {"tool_result"}}},
        {"retry", {.text = {.thinking = true}, .roles = {"assistant"}}},
        {"cache", {.metadata = Json{{"team", "web"}}}},
        {"deploy", {.types = {"compaction", "branch_summary", "label", "session_info"}}},
    };
    // More queries, some of which find nothing: JSONL reads only the lines that may hold them.
    const std::vector<std::pair<std::string, SearchOptions>> more{
        {"σοφια", {}},
        {"東京", {}},
        {"user.name", {}},
        {"o'brien", {}},
        {"zzzq", {}},
        {"etUserB", {.mode = SearchMode::substring}},
        {"\"e br\"", {.mode = SearchMode::substring}},
        {"ogin -bug", {.mode = SearchMode::substring}},
    };
    for (const auto& [q, o] : more) {
        INFO(q);
        const SearchResult expected = search(memory, q, o);
        const SearchResult got = search(jsonl, q, o);
        REQUIRE(got.hits.size() == expected.hits.size());
        for (std::size_t i = 0; i < got.hits.size(); ++i)
            CHECK(got.hits[i].cursor() == expected.hits[i].cursor());
    }
    // What JSONL looks at before it decodes: the lines of the file as written.
    const std::string first = list(jsonl).sessions.front().header.id;
    {
        auto writer = open(jsonl, first);
        const auto& storage = writer.storage();
        const std::string id = id_of(*storage.get_entries(EntriesQuery{0, 1}).front());
        const std::optional<std::string> line = storage.entry_line(0);
        REQUIRE(line);
        CHECK(line->find("\"" + id + "\"") != std::string::npos);
        append_message(writer, UserMessage{"appended now", 1, {}});
        CHECK_FALSE(storage.entry_line(storage.entry_count() - 1));
        CHECK_FALSE(storage.entry_line(storage.entry_count()));
    }
    for (const auto& [q, o] : queries) {
        INFO(q);
        const SearchResult expected = search(memory, q, o);
        CHECK(!search(memory, q, SearchOptions{.mode = o.mode}).hits.empty());
        for (const SearchResult& got :
             {search(jsonl, q, o), search(any_jsonl, q, o), search(any_memory, q, o)}) {
            REQUIRE(got.hits.size() == expected.hits.size());
            for (std::size_t i = 0; i < got.hits.size(); ++i) {
                CHECK(got.hits[i].cursor() == expected.hits[i].cursor());
                CHECK(got.hits[i].entry_id == expected.hits[i].entry_id);
                CHECK(got.hits[i].snippet == expected.hits[i].snippet);
                CHECK(got.hits[i].marks == expected.hits[i].marks);
            }
            CHECK(got.next == expected.next);
        }
    }
}

TEST_CASE(
    "a damaged JSONL line that may hold a hit ends the search with its error, other damage is "
    "passed over, a torn last line ignored, a removed session skipped",
    "[search][jsonl]") {
    agentcore::testing::ScratchDir dir;
    JsonlSessionRepo repo(dir.path() + "/sessions");
    agentcore::testing::write_search_corpus(repo, 4, 6);
    const std::size_t all = hit_keys(repo, "login").size();
    CHECK(all > 0);
    const auto sessions = list(repo).sessions;
    const std::string original = agentcore::testing::read_file(sessions[0].path);
    const auto second = original.find('\n', original.find('\n') + 1);
    // A damaged line whose bytes cannot hold the query's words is never read by the scan.
    std::string text = original;
    text.insert(second + 1, "{not json}\n");
    agentcore::testing::write_file(sessions[0].path, text);
    CHECK(hit_keys(repo, "login").size() == all);
    // One that may hold them is read, and the error names the file and the line.
    text = original;
    text.insert(second + 1, "{not json: login}\n");
    agentcore::testing::write_file(sessions[0].path, text);
    CHECK(error_of([&] { search(repo, "login"); }) == ErrorCode::invalid_entry);
    CHECK(message_of_error([&] { search(repo, "login"); }).find(sessions[0].path + "' line 3") !=
          std::string::npos);
    CHECK(search(repo, "qqqzzz").hits.empty());
    // Valid JSON that breaks the codec's rules: a hit in it is an error too.
    text = original;
    text.insert(second + 1,
                "{\"type\":\"message\",\"id\":\"bad1\",\"parent_id\":null,\"timestamp\":"
                "\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":"
                "\"login\",\"timestamp\":\"soon\"}}\n");
    agentcore::testing::write_file(sessions[0].path, text);
    CHECK(error_of([&] { search(repo, "login"); }) == ErrorCode::invalid_entry);
    // A torn last line (an append cut short) is ignored, as every reader ignores it.
    agentcore::testing::write_file(sessions[0].path,
                                   original + "{\"type\":\"message\",\"id\":\"lo");
    CHECK(hit_keys(repo, "login").size() == all);
    agentcore::testing::write_file(sessions[0].path, original + "{\"type\":\"message\",\"login\":");
    CHECK(hit_keys(repo, "login").size() == all);
    // A damaged header of a file that may hold a hit.
    agentcore::testing::write_file(
        sessions[0].path, "{\"type\":\"session\"\n" + original.substr(original.find('\n') + 1));
    CHECK(error_of([&] { search(repo, "login"); }) == ErrorCode::invalid_session);
    agentcore::testing::write_file(sessions[0].path, original);
    remove(repo, sessions[0].header.id);
    CHECK(!search(repo, "login").hits.empty());
}

namespace search_tests {

// Entry lines of odd shapes, each `{"type":..., "id":"x<n>", "parent_id":..., ...}` without its
// parent, which line_file() adds. Native dialect unless said.
inline std::vector<std::string> odd_lines() {
    const std::string t = "\"timestamp\":\"2026-02-03T04:05:06.789Z\"";
    const auto msg = [&](const std::string& message) {
        return "{\"type\":\"message\",\"id\":\"ID\",\"parent_id\":PARENT," + t +
               ",\"message\":" + message + "}";
    };
    const std::string usage =
        "\"usage\":{\"input\":1,\"output\":2,\"cache_read\":0,\"cache_write\":0,"
        "\"total_tokens\":3,\"cost\":{\"input\":0,\"output\":0,\"cache_read\":0,"
        "\"cache_write\":0,\"total\":0}}";
    const auto assistant = [&](const std::string& blocks) {
        return msg("{\"role\":\"assistant\",\"content\":" + blocks +
                   ",\"api\":\"messages\",\"provider\":\"p\",\"model\":\"m\"," + usage +
                   ",\"stop_reason\":\"stop\",\"timestamp\":5}");
    };
    return {
        // Escapes of every kind, \u sequences (a pair, a lone surrogate, an escaped word).
        msg("{\"role\":\"user\",\"content\":\"caf\\u00e9 \\\"login\\\"\\nbug\\t\\\\ "
            "\\/path \\ud83d\\ude00 lone \\ud83d \\u006cogin \\u0043R\\u00c8ME\",\"timestamp\":1}"),
        // An escaped key, repeated keys (the last one counts), members in an unusual order.
        msg("{\"timestamp\":1,\"con\\u0074ent\":\"first login\",\"role\":\"user\","
            "\"content\":\"second bug login\"}"),
        "{\"message\":{\"role\":\"user\",\"content\":\"an older login\",\"timestamp\":1},"
        "\"type\":\"message\",\"id\":\"ID\",\"parent_id\":PARENT," +
            t + ",\"message\":{\"role\":\"user\",\"content\":\"the newer bug\",\"timestamp\":2}}",
        // Blocks: text, thinking, a tool call with nested arguments, an image, an unknown type.
        assistant("[{\"type\":\"thinking\",\"thinking\":\"secret login musing\"},"
                  "{\"type\":\"text\",\"text\":\"Fixed the bug\"},"
                  "{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"read_file\",\"arguments\":"
                  "{\"path\":\"src/auth/login.cpp\",\"opts\":{\"n\":3,\"tags\":[\"login\","
                  "{\"deep\":\"bug\"},true,null,1.5e3]},\"empty\":\"\"}},"
                  "{\"type\":\"image\",\"data\":\"bG9naW4gbG9naW4=\",\"mime_type\":\"image/png\"},"
                  "{\"type\":\"video\",\"text\":\"login in an unknown block\"}]"),
        // Repeated keys inside tool arguments: the DOM keeps the first place, the last value.
        assistant("[{\"type\":\"tool_call\",\"id\":\"c2\",\"name\":\"bash\",\"arguments\":"
                  "{\"a\":\"login one\",\"b\":\"bug\",\"a\":\"login two\"}}]"),
        // Tool results and shell output, longer than a small cap.
        msg("{\"role\":\"tool_result\",\"tool_call_id\":\"c1\",\"tool_name\":\"read_file\","
            "\"content\":[{\"type\":\"text\",\"text\":\"login bug fixed in \\u00e9t\\u00e9\"},"
            "{\"type\":\"image\",\"data\":\"bG9naW4=\",\"mime_type\":\"image/png\"},"
            "{\"type\":\"text\",\"text\":\"second login part\"}],\"is_error\":false,"
            "\"timestamp\":3}"),
        msg("{\"role\":\"bash_execution\",\"command\":\"grep login\",\"output\":\"login.cpp:1: "
            "bug\\nlogin.cpp:2: fixed\",\"exit_code\":0,\"cancelled\":false,\"truncated\":false,"
            "\"timestamp\":4}"),
        // Roles and types of a newer writer: kept opaque, never searched.
        msg("{\"role\":\"system_note\",\"content\":\"login bug\",\"timestamp\":1}"),
        "{\"type\":\"future_thing\",\"id\":\"ID\",\"parent_id\":PARENT," + t +
            ",\"text\":\"login bug\"}",
        // Summaries, custom messages, labels with and without text, names.
        "{\"type\":\"compaction\",\"id\":\"ID\",\"parent_id\":PARENT," + t +
            ",\"summary\":\"login \\\"bug\\\" summary\",\"first_kept_entry_id\":null,"
            "\"tokens_before\":10}",
        "{\"type\":\"custom_message\",\"id\":\"ID\",\"parent_id\":PARENT," + t +
            ",\"custom_type\":\"note\",\"content\":[{\"type\":\"text\",\"text\":\"a login "
            "note\"}],\"display\":true}",
        "{\"type\":\"custom\",\"id\":\"ID\",\"parent_id\":PARENT," + t +
            ",\"custom_type\":\"app\",\"data\":{\"text\":\"login bug\"}}",
        "{\"type\":\"label\",\"id\":\"ID\",\"parent_id\":PARENT," + t +
            ",\"target_id\":\"x1\",\"label\":\"login milestone\"}",
        "{\"type\":\"label\",\"id\":\"ID\",\"parent_id\":PARENT," + t +
            ",\"target_id\":\"x1\",\"label\":null}",
        "{\"type\":\"session_info\",\"id\":\"ID\",\"parent_id\":PARENT," + t +
            ",\"name\":\"  the login session  \"}",
    };
}

// The odd lines with ids x1, x2, ... each the child of the one before.
inline std::vector<std::string> odd_entry_lines() {
    std::vector<std::string> out;
    std::size_t n = 0;
    for (std::string line : odd_lines()) {
        ++n;
        const std::string id = "x" + std::to_string(n);
        const std::string parent = n == 1 ? "null" : "\"x" + std::to_string(n - 1) + "\"";
        line.replace(line.find("\"ID\""), 4, "\"" + id + "\"");
        line.replace(line.find("PARENT"), 6, parent);
        out.push_back(std::move(line));
    }
    return out;
}

// Checks what SearchLineReader reads of `line` against search_text_of of the decoded entry.
inline void check_line_reader(const std::string& line, Dialect d, const SearchTextOptions& o,
                              std::size_t& read_count) {
    INFO(line);
    const SessionTreeEntry entry = decode_entry(line, d);
    detail::SearchLineReader reader(d, o);
    detail::SearchLineFields f;
    const detail::SearchLineRead r = reader.read(line, f);
    // Read again stepping over the values the scanner's walk recorded: the same fields.
    detail::SkipMemo memo;
    detail::ScannedEntry scanned;
    std::string reason;
    REQUIRE(detail::JsonScanner::scan_entry(line, d, scanned, reason, &memo));
    detail::SearchLineFields g;
    CHECK(reader.read(line, g, &memo) == r);
    CHECK(g.text == f.text);
    CHECK(g.type == f.type);
    CHECK(g.id == f.id);
    CHECK(g.timestamp == f.timestamp);
    CHECK(g.role == f.role);
    const std::string expected = search_text_of(entry, o);
    if (r == detail::SearchLineRead::nothing) {
        CHECK(expected.empty());
        return;
    }
    if (r == detail::SearchLineRead::decode) return;
    ++read_count;
    CHECK(f.text == expected);
    CHECK(f.type == type_of(entry));
    CHECK(f.id == id_of(entry));
    CHECK(f.timestamp == base_of(entry).timestamp);
    CHECK(f.role == search_role_of(entry));
}

}  // namespace search_tests

TEST_CASE("the JSONL scan reads an entry line's text as search_text_of reads the decoded entry",
          "[search][jsonl]") {
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 5, 997));
    agentcore::testing::write_search_corpus(memory, 77, 25);
    const std::vector<SearchTextOptions> texts{
        {},
        {.thinking = true},
        {.tool_results = false},
        {.thinking = true, .tool_result_cap = 7},
        {.tool_result_cap = 0},
    };
    std::size_t read = 0;
    for (const Dialect d : {Dialect::native, Dialect::pi}) {
        for (const auto& l : list(memory).sessions) {
            auto session = open_read_only(memory, l.header.id);
            const auto& storage = session.storage();
            for (const auto& h : storage.get_entries(EntriesQuery{0, 100000}))
                for (const auto& o : texts)
                    search_tests::check_line_reader(encode_entry(*h, d), d, o, read);
        }
    }
    std::size_t odd_read = 0;
    for (const std::string& line : search_tests::odd_entry_lines())
        for (const auto& o : texts)
            search_tests::check_line_reader(line, Dialect::native, o, odd_read);
    CHECK(read > 1000);
    CHECK(odd_read > 50);
    // What is left to the codec: repeated keys in tool arguments, fields of unexpected types.
    detail::SearchLineFields f;
    const SearchTextOptions o;
    detail::SearchLineReader reader(Dialect::native, o);
    CHECK(reader.read(search_tests::odd_entry_lines()[4], f) == detail::SearchLineRead::decode);
    CHECK(reader.read(R"({"type":"message","id":"a","message":{"role":"user","content":5}})", f) ==
          detail::SearchLineRead::decode);
    // pi's spellings are not native ones: a native file's "toolResult" is a role of its own.
    CHECK(reader.read(R"({"type":"message","id":"a","timestamp":"t","message":{"role":)"
                      R"("toolResult","toolName":"bash","content":[]}})",
                      f) == detail::SearchLineRead::nothing);
    detail::SearchLineReader pi_reader(Dialect::pi, o);
    CHECK(
        pi_reader.read(R"({"type":"message","id":"a","timestamp":"t","message":{"role":)"
                       R"("toolResult","toolName":"bash","content":[{"type":"text","text":"x"}]}})",
                       f) == detail::SearchLineRead::text);
    CHECK(f.role == "tool_result");
    CHECK(f.text == "bash\nx");
}

TEST_CASE("JSONL files of odd lines and of pi's dialect give the hits of memory",
          "[search][jsonl]") {
    agentcore::testing::ScratchDir dir;
    JsonlSessionRepo jsonl(dir.path() + "/sessions");
    auto session =
        create(jsonl, CreateOptions{std::string("odd"), "/work/odd", Json::object(), std::nullopt});
    const std::string path = list(jsonl).sessions.front().path;
    std::string text = agentcore::testing::read_file(path);
    for (const std::string& line : search_tests::odd_entry_lines()) text += line + "\n\n";
    agentcore::testing::write_file(path, text);
    InMemorySessionRepo memory(Environment::deterministic(1796197403123, 5, 997));
    copy_session(jsonl, memory, "odd");
    // The same sessions in pi's dialect.
    JsonlSessionRepo pi(dir.path() + "/pi");
    agentcore::testing::write_search_corpus(memory, 13, 12);
    for (const auto& l : list(memory).sessions) {
        if (l.header.id == "odd") continue;
        auto source = open_read_only(memory, l.header.id);
        std::vector<SessionTreeEntry> entries;
        for (const auto& h : source.storage().get_entries(EntriesQuery{0, 100000}))
            entries.push_back(*h);
        import_session(pi, source.storage().metadata(), std::move(entries), Dialect::pi);
    }
    REQUIRE(agentcore::testing::read_file(list(pi).sessions.front().path).find("\"parentId\"") !=
            std::string::npos);
    const std::vector<std::pair<std::string, SearchOptions>> queries{
        {"login", {}},
        {"login", {.text = {.thinking = true}}},
        {"login", {.text = {.tool_results = false}}},
        {"login", {.text = {.tool_result_cap = 12}}},
        {"bug", {.order = SearchOrder::newest}},
        {"creme", {}},
        {"café", {}},
        {"\"login bug\"", {}},
        {"musing", {.text = {.thinking = true}}},
        {"bG9naW4", {.mode = SearchMode::substring}},
        {"ogin.cp", {.mode = SearchMode::substring}},
        {"ogin -fixed", {.mode = SearchMode::substring}},
        {"milestone", {}},
        {"newer", {}},
        {"older", {}},
        {"second", {}},
        {"one", {}},
        {"two", {}},
        {"deep", {}},
        {"note", {.roles = {"custom"}}},
        {"login", {.exclude_roles = {"tool_result", "user"}}},
        {"login", {.session_name = "login session"}},
        {"rare_zebra_word", {}},
        {"ΑΘΗΝΑ", {}},
        {"timeout", {.roles = {"tool_result"}, .types = {"message"}}},
    };
    for (const auto& [q, o] : queries) {
        INFO(q);
        // The odd session is in one folder, the corpus in pi's dialect in the other.
        SearchOptions all = o;
        all.limit = 1000000;
        std::vector<SearchHit> merged = search(jsonl, q, all).hits;
        for (auto& h : search(pi, q, all).hits) merged.push_back(std::move(h));
        const SearchResult whole = search(memory, q, all);
        REQUIRE(merged.size() == whole.hits.size());
        std::sort(merged.begin(), merged.end(), [&](const SearchHit& a, const SearchHit& b) {
            return detail::hit_before(a.cursor(), b.cursor(), all.order);
        });
        for (std::size_t i = 0; i < merged.size(); ++i) {
            CHECK(merged[i].cursor() == whole.hits[i].cursor());
            CHECK(merged[i].entry_id == whole.hits[i].entry_id);
            CHECK(merged[i].entry_type == whole.hits[i].entry_type);
            CHECK(merged[i].role == whole.hits[i].role);
            CHECK(merged[i].session_name == whole.hits[i].session_name);
            CHECK(merged[i].cwd == whole.hits[i].cwd);
            CHECK(merged[i].snippet == whole.hits[i].snippet);
            CHECK(merged[i].marks == whole.hits[i].marks);
        }
    }
    // The odd session's own hits: an escaped word is found, images and opaque entries are not.
    CHECK(hit_keys(jsonl, "login").count({"odd", "x1"}) == 1);
    CHECK(hit_keys(jsonl, "crème").count({"odd", "x1"}) == 1);
    CHECK(hit_keys(jsonl, "bG9naW4gbG9naW4", SearchOptions{.mode = SearchMode::substring}).empty());
    CHECK(hit_keys(jsonl, "unknown").empty());
    CHECK(hit_keys(jsonl, "\"login bug\"").count({"odd", "x8"}) == 0);
    CHECK(hit_keys(jsonl, "\"login bug\"").count({"odd", "x9"}) == 0);
}

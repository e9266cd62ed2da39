#pragma once
// The PostgreSQL search index (schema version 4). Each entry's row keeps the words of its
// search_index_text (search.hpp) in `entries.words`, a tsvector made with array_to_tsvector from
// the words the library has cut and normalised itself: PostgreSQL's parsers and dictionaries
// never decide what a word is, so the index's words are exactly the words the matcher compares.
// A GIN index over that column gives the entries holding words and prefixes. `search_words`
// lists every word written to the index, for substring terms that are parts of words (their
// words are looked up there, through a pg_trgm GIN index when the extension could be created,
// else by reading the list). The words are written by the statement that writes the entry
// (append, import, fork), and go with their rows when a session is removed; the list of words
// only grows (a word no entry holds any more asks the index for nothing).
//
// Since schema version 6 the tsvector also holds the marks of the words the entry repeats
// (word_repeat_marks: `word~2`, `word~4`, `word~8`, and since version 8 `word~3`; `~` is never
// part of a word, and the marks never go into search_words), and `entries.word_count` /
// `base_word_count` keep the entry's word counts (search_word_counts): with them a page by
// relevance bounds each candidate's score from the index and the row alone
// (detail/search_bound.hpp), and reads only the lines of the candidates that can reach the page.
//
// Since schema version 7 the tsvector also holds the entry's length class (`~n` and the class of
// its word count, length_class in detail/search_bound.hpp): a page by relevance asks the index
// for the candidates of one length class and repeat level at a time, best bound first, and never
// visits the rows of the classes that cannot reach the page.
//
// Nothing here passes a query's text as SQL: words reach the server as bound parameters, and
// the tsquery is made of quoted lexemes (tsquery_literal) in a bound parameter, so no term can
// be an operator.

#include <agentcore/codec.hpp>
#include <agentcore/detail/search_bound.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/postgres/detail/pg.hpp>
#include <agentcore/search.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentcore::detail::pg {

/// The longest lexeme a tsvector holds (bytes).
inline constexpr std::size_t max_lexeme_bytes = 2047;
/// The most bytes of words one entry's tsvector is given (a tsvector holds at most 1 MiB).
inline constexpr std::size_t max_entry_word_bytes = std::size_t{512} * 1024;
/// The lexeme of an entry whose words a tsvector cannot hold (a word longer than
/// max_lexeme_bytes, or more than max_entry_word_bytes of words): not a word (`*` is never part
/// of one), and asked for by every search, so such an entry is always a candidate.
inline constexpr std::string_view unindexed_lexeme = "*";

/// The SQL expression that makes an entry's tsvector from the SQL expressions of its words and
/// its marks (SearchColumns; text); NULL when the words are NULL.
inline std::string tsvector_of(const std::string& words, const std::string& marks) {
    return "array_to_tsvector(string_to_array(" + words + " || coalesce(' ' || " + marks +
           ", ''), ' '))";
}

/// The expression of an entry's tsvector from its words parameter `$n` and its marks parameter
/// `$n+1`.
inline std::string words_expression(int n) {
    return tsvector_of("$" + std::to_string(n) + "::text", "$" + std::to_string(n + 1) + "::text");
}

/// Whether a tsvector holds `words` (distinct words, one space between): no word longer than
/// max_lexeme_bytes, and at most max_entry_word_bytes in all.
inline bool tsvector_holds(std::string_view words) {
    if (words.size() + 1 > max_entry_word_bytes) return false;
    for (std::size_t at = 0; at < words.size();) {
        std::size_t end = words.find(' ', at);
        if (end == std::string_view::npos) end = words.size();
        if (end - at > max_lexeme_bytes) return false;
        at = end + 1;
    }
    return true;
}

/// What an entry's row keeps for the search index: its words (the distinct words of its
/// search_index_text, sorted, one space between; none when it has none), its marks (the words it
/// repeats, and its length class: length_mark of its word count), and its word counts. Marks and
/// counts are none when the entry has none to bound its score by: no words, or more than a tsvector
/// holds (unindexed_lexeme), which every search reads.
struct SearchColumns {
    std::optional<std::string> words;
    std::optional<std::string> marks;
    std::optional<std::int64_t> word_count;
    std::optional<std::int64_t> base_word_count;
};

inline SearchColumns search_columns_of(const SessionTreeEntry& entry) {
    SearchColumns out;
    const std::string text = search_index_text(entry);
    if (text.empty()) return out;
    // One sort gives the distinct words and the marks of the repeated ones.
    std::string words;
    std::string marks = word_repeat_marks(text, &words);
    if (!tsvector_holds(words)) {
        out.words = std::string(unindexed_lexeme);
        return out;
    }
    out.words = std::move(words);
    const SearchWordCounts counts = search_word_counts(entry);
    if (!marks.empty()) marks.push_back(' ');
    marks += length_mark(length_class(counts.words));
    if (out.words->size() + marks.size() + 1 > max_entry_word_bytes) {
        out.words = std::string(unindexed_lexeme);
        return out;
    }
    out.marks = std::move(marks);
    out.word_count = counts.words;
    out.base_word_count = counts.base;
    return out;
}

/// `text` as a quoted tsquery lexeme: in single quotes, its quotes and backslashes doubled. A
/// quoted lexeme is a lexeme whatever it holds: no operator, weight or prefix mark of its own.
inline std::string tsquery_literal(std::string_view text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'' || c == '\\') out.push_back(c);
        out.push_back(c);
    }
    out.push_back('\'');
    return out;
}

/// A text[] literal for a parameter: each element in double quotes, its quotes and backslashes
/// escaped (a NULL element as NULL).
inline std::string text_array(const std::vector<std::optional<std::string>>& values) {
    std::string out = "{";
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i) out.push_back(',');
        if (!values[i]) {
            out += "NULL";
            continue;
        }
        out.push_back('"');
        for (char c : *values[i]) {
            if (c == '"' || c == '\\') out.push_back('\\');
            out.push_back(c);
        }
        out.push_back('"');
    }
    out.push_back('}');
    return out;
}

/// The statement that adds the words of a words parameter `$n` (or several, joined by spaces)
/// to search_words, in the words' order: two writers adding the same new words take their locks
/// in the same order, so they wait for each other but never deadlock.
inline std::string insert_words_sql(int n) {
    return "INSERT INTO search_words (word) SELECT DISTINCT w FROM unnest(string_to_array($" +
           std::to_string(n) + "::text, ' ')) AS w ORDER BY w ON CONFLICT (word) DO NOTHING";
}

/// Adds the words of `words` (words parameters) to search_words, in one statement.
inline void insert_words(Connection& c, const std::vector<const std::string*>& words) {
    std::vector<std::string_view> all;
    for (const std::string* w : words) {
        if (!w || *w == unindexed_lexeme) continue;
        std::string_view text = *w;
        for (std::size_t at = 0; at <= text.size();) {
            std::size_t end = text.find(' ', at);
            if (end == std::string_view::npos) end = text.size();
            if (end > at) all.push_back(text.substr(at, end - at));
            at = end + 1;
        }
    }
    if (all.empty()) return;
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    std::string joined;
    for (const auto w : all) {
        if (!joined.empty()) joined.push_back(' ');
        joined.append(w);
    }
    c.exec(insert_words_sql(1), Params().text(joined), "indexing the words of");
}

/// Writes the search columns (search_columns_of) of every stored entry (the migrations to the
/// search index's schema versions), in pages of entries in key order. A line the codec cannot
/// read gets none (what its columns held is cleared): a search cannot show it either.
inline void index_stored_entries(Connection& c) {
    std::string after_session;
    std::int64_t after_seq = 0;
    constexpr int page = 500;
    for (;;) {
        const Result r = c.exec(
            "SELECT e.session_id, e.seq, e.line, s.dialect FROM entries e JOIN sessions s ON s.id "
            "= e.session_id WHERE (e.session_id, e.seq) > ($1, $2) ORDER BY e.session_id, e.seq "
            "LIMIT $3",
            Params().text(after_session).int64(after_seq).int64(page), "indexing the entries of");
        if (r.rows() == 0) return;
        std::vector<std::optional<std::string>> sessions, words, marks;
        std::vector<std::optional<std::int64_t>> seqs, counts, base_counts;
        for (int i = 0; i < r.rows(); ++i) {
            const Dialect dialect = r.int64(i, 3) == static_cast<std::int64_t>(Dialect::pi)
                                        ? Dialect::pi
                                        : Dialect::native;
            SearchColumns columns;
            bool damaged = false;
            try {
                columns = search_columns_of(decode_entry(r.text(i, 2), dialect));
            } catch (const SessionError&) {
                damaged = true;  // its search columns are cleared: what they held is stale
            }
            if (!columns.words && !damaged) continue;
            sessions.emplace_back(std::string(r.text(i, 0)));
            seqs.emplace_back(r.int64(i, 1));
            words.push_back(std::move(columns.words));
            marks.push_back(std::move(columns.marks));
            counts.push_back(columns.word_count);
            base_counts.push_back(columns.base_word_count);
        }
        after_session = std::string(r.text(r.rows() - 1, 0));
        after_seq = r.int64(r.rows() - 1, 1);
        if (words.empty()) continue;
        c.exec("UPDATE entries e SET words = " + tsvector_of("m.w", "m.marks") +
                   ", word_count = m.word_count, base_word_count = m.base_word_count FROM "
                   "unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], "
                   "$6::bigint[]) AS m(session_id, seq, w, marks, word_count, base_word_count) "
                   "WHERE e.session_id = m.session_id AND e.seq = m.seq",
               Params()
                   .text(text_array(sessions))
                   .text(int_array(seqs))
                   .text(text_array(words))
                   .text(text_array(marks))
                   .text(int_array(counts))
                   .text(int_array(base_counts)),
               "indexing the entries of");
        std::vector<const std::string*> lists;
        lists.reserve(words.size());
        for (const auto& w : words)
            if (w) lists.push_back(&*w);
        insert_words(c, lists);
    }
}

/// Runs `sql` in a savepoint of the current transaction; false (and the transaction as before)
/// when the server refused it. A lost connection is thrown.
inline bool try_in_savepoint(Connection& c, const char* sql, std::string_view what) {
    c.exec("SAVEPOINT agentcore_optional", what);
    try {
        c.exec(sql, what);
    } catch (const Error& e) {
        if (e.connection_lost()) throw;
        c.exec("ROLLBACK TO SAVEPOINT agentcore_optional", what);
        c.exec("RELEASE SAVEPOINT agentcore_optional", what);
        return false;
    }
    c.exec("RELEASE SAVEPOINT agentcore_optional", what);
    return true;
}

/// The trigram index of search_words, when the pg_trgm extension is there or can be created
/// (PostgreSQL 13 and later let a user with CREATE on the database create it); true when made.
/// Without it, parts of words are looked up by reading the list of words. Run in the migrating
/// transaction, each step in a savepoint, so that a refusal changes nothing else.
inline bool create_trigram_index(Connection& c) {
    const char* what = "creating the trigram index of";
    (void)try_in_savepoint(c, "CREATE EXTENSION IF NOT EXISTS pg_trgm", what);
    // The extension may live in a schema of its own (made by another schema's migration, or by
    // an operator): its operator class is named with that schema, quoted by the server.
    const Result schema = c.exec(
        "SELECT quote_ident(n.nspname) FROM pg_extension x JOIN pg_namespace n ON n.oid = "
        "x.extnamespace WHERE x.extname = 'pg_trgm'",
        what);
    if (schema.rows() == 0) return false;
    const std::string sql = "CREATE INDEX search_words_trgm ON search_words USING gin (word " +
                            std::string(schema.text(0, 0)) + ".gin_trgm_ops)";
    return try_in_savepoint(c, sql.c_str(), what);
}

/// The most words of search_words a part of a word may stand for; a part found in more (`ing`)
/// narrows down too little and is left to the matcher.
inline constexpr std::size_t max_part_words = 128;

/// `text` as a LIKE pattern that matches it anywhere: `%`, `_` and `\` escaped.
inline std::string contains_pattern(std::string_view text) {
    std::string out = "%";
    for (char ch : text) {
        if (ch == '%' || ch == '_' || ch == '\\') out.push_back('\\');
        out.push_back(ch);
    }
    out.push_back('%');
    return out;
}

/// The tsquery condition of a whole word or a prefix of index_words.
inline std::string lexeme_condition(const IndexWord& w) {
    std::string out = tsquery_literal(w.text);
    if (w.kind == IndexWord::Kind::prefix) out += ":*";
    return out;
}

/// The tsquery of the whole words and prefixes of `words` (index_words of a words query, which
/// has no parts of words), joined by `&`, without the entries the index could not hold: what
/// the entries of a length class and repeat level are asked for beside their marks. Empty when
/// there are none.
inline std::string words_conditions(const std::vector<IndexWord>& words) {
    std::string out;
    for (const IndexWord& w : words) {
        if (w.kind == IndexWord::Kind::part) continue;
        if (!out.empty()) out += " & ";
        out += lexeme_condition(w);
    }
    return out;
}

/// The tsquery that gives the entries meeting every condition of `words` (index_words): whole
/// words and prefixes as quoted lexemes, a part of a word as the words of search_words that
/// contain it, joined by `&`, and the entries the index could not hold (unindexed_lexeme) beside
/// them. Empty when the index cannot narrow the search down (no condition, or only parts that
/// too many words contain).
inline std::string tsquery_of(Connection& c, const std::vector<IndexWord>& words) {
    std::string conditions;
    bool none = false;  // a part that no word holds: only unindexed entries can match
    for (const IndexWord& w : words) {
        std::string condition;
        if (w.kind == IndexWord::Kind::part) {
            const Result r = c.exec("SELECT word FROM search_words WHERE word LIKE $1 LIMIT $2",
                                    Params()
                                        .text(contains_pattern(w.text))
                                        .int64(static_cast<std::int64_t>(max_part_words) + 1),
                                    "searching the words of");
            if (r.rows() == 0) {
                none = true;
                break;
            }
            if (static_cast<std::size_t>(r.rows()) > max_part_words) continue;
            for (int i = 0; i < r.rows(); ++i) {
                condition += i == 0 ? "(" : " | ";
                condition += tsquery_literal(r.text(i, 0));
            }
            condition += ")";
        } else {
            condition = lexeme_condition(w);
        }
        if (!conditions.empty()) conditions += " & ";
        conditions += condition;
    }
    std::string unindexed = tsquery_literal(unindexed_lexeme);
    if (none) return unindexed;
    if (conditions.empty()) return {};
    return "(" + conditions + ") | " + unindexed;
}

}  // namespace agentcore::detail::pg

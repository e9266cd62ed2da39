#pragma once
// What the PostgreSQL storage keeps of an entry beside its line: the columns derived from the
// entry itself (type, label and leaf target, name, compaction bounds, usage) and its place in
// the tree (parent, root, where its path starts, which ancestors set the context's state),
// derived from its parent's place. One derivation serves appends, imports and forks.

#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/postgres/detail/pg.hpp>
#include <agentcore/postgres/detail/search_index.hpp>
#include <agentcore/storage.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace agentcore::detail::pg {

/// Bits of entries.sets: which part of a context's state an entry sets (SPEC §4.5).
inline constexpr int sets_thinking = 1;
inline constexpr int sets_model = 2;
inline constexpr int sets_tools = 4;

inline int sets_bits(const StateSets& s) noexcept {
    return (s.thinking_level ? sets_thinking : 0) | (s.model ? sets_model : 0) |
           (s.active_tools ? sets_tools : 0);
}

/// The columns that come from the entry alone.
struct EntryColumns {
    std::string type;
    std::optional<std::string> target_id;  ///< label and leaf entries
    std::optional<std::string> label;  ///< label entries: the trimmed label, none when it clears
    std::optional<std::string>
        name;  ///< session_info entries: the trimmed name, none when it clears
    std::optional<std::string> first_kept_id;  ///< compactions
    std::optional<bool> retained_tail;  ///< compactions: whether they keep a tail of their own
    int sets = 0;
    std::optional<Usage> usage;  ///< what the stats count, when the entry has any
    /// What the search index keeps of the entry (search_columns_of).
    SearchColumns search;
};

inline EntryColumns columns_of(const SessionTreeEntry& entry) {
    EntryColumns c;
    c.type = std::string(type_of(entry));
    c.sets = sets_bits(state_sets_of(entry));
    c.search = search_columns_of(entry);
    if (const auto* l = std::get_if<LabelEntry>(&entry)) {
        c.target_id = l->target_id;
        const std::string_view text = l->label ? trim(*l->label) : std::string_view{};
        if (!text.empty()) c.label = std::string(text);
    } else if (const auto* leaf = std::get_if<LeafEntry>(&entry)) {
        c.target_id = leaf->target_id;
    } else if (const auto* info = std::get_if<SessionInfoEntry>(&entry)) {
        const std::string_view text = info->name ? trim(*info->name) : std::string_view{};
        if (!text.empty()) c.name = std::string(text);
    } else if (const auto* comp = std::get_if<CompactionEntry>(&entry)) {
        c.first_kept_id = comp->first_kept_entry_id;
        c.retained_tail = comp->retained_tail.has_value();
        if (comp->usage) c.usage = *comp->usage;
    } else if (const auto* m = std::get_if<MessageEntry>(&entry)) {
        if (const auto* a = std::get_if<AssistantMessage>(&m->message)) c.usage = a->usage;
    } else if (const auto* b = std::get_if<BranchSummaryEntry>(&entry)) {
        if (b->usage) c.usage = *b->usage;
    }
    return c;
}

/// Throws unless every text column of the entry can be a PostgreSQL text value (no NUL byte);
/// the line itself never holds one (JSON escapes it).
inline void check_storable(const EntryColumns& c, const std::string& entry_id) {
    auto bad = [](const std::optional<std::string>& s) { return s && has_nul(*s); };
    if (has_nul(entry_id) || has_nul(c.type) || bad(c.target_id) || bad(c.label) || bad(c.name) ||
        bad(c.first_kept_id))
        throw SessionError(
            ErrorCode::invalid_entry,
            "an entry's id, type, label, name or target holds a NUL byte, which PostgreSQL "
            "text cannot store");
}

/// An entry's place in the tree. Positions (seq) count from 1 in append order.
struct Node {
    std::int64_t seq = 0;
    std::optional<std::int64_t> parent_seq;
    std::int64_t root_seq = 0;
    std::int64_t path_start_seq = 0;  ///< the oldest entry of get_path_to_root_or_compaction(this)
    std::int64_t depth = 0;           ///< ancestors above it (a root: 0)
    std::optional<std::int64_t> state_thinking, state_model, state_tools;
};

/// The place of a new entry at `seq` under `parent` (none: a root). For a compaction,
/// `kept_ancestor` is the position of its first kept entry when that entry is the compaction's
/// parent or an ancestor of it (none otherwise).
///
/// Where its path starts, as the walk of SPEC §4.4 finds it: a compaction is the newest on the
/// path of everything under it until the next one, so it decides — at itself when it keeps a
/// tail of its own (or names itself as first kept), at its first kept entry when that is an
/// ancestor, else at the root. Any other entry's path starts where its parent's does.
inline Node place(std::int64_t seq, const Node* parent, int sets, const EntryColumns& c,
                  std::string_view own_id, std::optional<std::int64_t> kept_ancestor) {
    Node n;
    n.seq = seq;
    if (parent) {
        n.parent_seq = parent->seq;
        n.root_seq = parent->root_seq;
        n.depth = parent->depth + 1;
        n.state_thinking = parent->state_thinking;
        n.state_model = parent->state_model;
        n.state_tools = parent->state_tools;
    } else {
        n.root_seq = seq;
    }
    if (sets & sets_thinking) n.state_thinking = seq;
    if (sets & sets_model) n.state_model = seq;
    if (sets & sets_tools) n.state_tools = seq;
    if (c.retained_tail) {  // a compaction
        if (*c.retained_tail || (c.first_kept_id && *c.first_kept_id == own_id))
            n.path_start_seq = seq;
        else if (c.first_kept_id && kept_ancestor)
            n.path_start_seq = *kept_ancestor;
        else
            n.path_start_seq = n.root_seq;
    } else {
        n.path_start_seq = parent ? parent->path_start_seq : seq;
    }
    return n;
}

/// The columns of an entries row, in the order of insert_columns: session, seq, id, parent_seq,
/// type, target_id, label, name, first_kept_id, retained_tail, root_seq, path_start_seq,
/// state_thinking, state_model, state_tools, sets, u_input, u_output, u_cache_read,
/// u_cache_write, u_cost, line, depth, words, word_count, base_word_count (words given as its
/// words and marks parameters: words_expression).
inline constexpr int insert_column_count = 26;
/// The parameters of one row (words takes two).
inline constexpr int insert_parameter_count = insert_column_count + 1;
inline constexpr const char* insert_columns =
    "session_id, seq, id, parent_seq, type, target_id, label, name, first_kept_id, retained_tail, "
    "root_seq,"
    " path_start_seq, state_thinking, state_model, state_tools, sets, u_input, u_output, "
    "u_cache_read,"
    " u_cache_write, u_cost, line, depth, words, word_count, base_word_count";

inline void bind_row(Params& p, std::string_view session, const Node& n, std::string_view id,
                     const EntryColumns& c, std::string_view line) {
    p.text(session)
        .int64(n.seq)
        .text(id)
        .int64(n.parent_seq)
        .text(c.type)
        .text(c.target_id)
        .text(c.label)
        .text(c.name)
        .text(c.first_kept_id);
    if (c.retained_tail)
        p.boolean(*c.retained_tail);
    else
        p.null();
    p.int64(n.root_seq)
        .int64(n.path_start_seq)
        .int64(n.state_thinking)
        .int64(n.state_model)
        .int64(n.state_tools)
        .int64(c.sets);
    if (c.usage)
        p.int64(c.usage->input)
            .int64(c.usage->output)
            .int64(c.usage->cache_read)
            .int64(c.usage->cache_write)
            .real(c.usage->cost.total);
    else
        p.null().null().null().null().null();
    p.text(line)
        .int64(n.depth)
        .text(c.search.words)
        .text(c.search.marks)
        .int64(c.search.word_count)
        .int64(c.search.base_word_count);
}

/// The columns a reader selects to know an entry's place (after seq): parent_seq, root_seq,
/// path_start_seq, state_thinking, state_model, state_tools, depth.
inline constexpr const char* node_columns =
    "e.parent_seq, e.root_seq, e.path_start_seq, e.state_thinking, e.state_model, e.state_tools, "
    "e.depth";
/// The number of columns node_of reads: seq and node_columns.
inline constexpr int node_column_count = 8;

/// A Node from a row whose column `first` is seq, followed by node_columns.
inline Node node_of(const Result& r, int row, int first) {
    Node n;
    n.seq = r.int64(row, first);
    n.parent_seq = r.optional_int64(row, first + 1);
    n.root_seq = r.int64(row, first + 2);
    n.path_start_seq = r.int64(row, first + 3);
    n.state_thinking = r.optional_int64(row, first + 4);
    n.state_model = r.optional_int64(row, first + 5);
    n.state_tools = r.optional_int64(row, first + 6);
    n.depth = r.int64(row, first + 7);
    return n;
}

/// The query of a path (SPEC §4.4): the entry with id $2 in session $1 (position below $3) and
/// its ancestors down to where its path starts, as `columns` of `entries e` (the first two
/// must be e.seq and e.parent_seq), in position order. When the positions from the path's start
/// to the entry hold at most 4 times the path's length (as depths tell), they are read as one
/// range and the rows of other branches among them are dropped by path_rows; otherwise the
/// path is walked by a recursive query, one index look-up per entry.
inline std::string path_query(std::string_view columns) {
    std::string sql =
        "WITH RECURSIVE s AS (SELECT x.seq, x.path_start_seq AS lo,"
        " x.seq - x.path_start_seq + 1 <= 4 * (x.depth - p.depth + 1) AS ranged"
        " FROM entries x JOIN entries p ON p.session_id = $1 AND p.seq = x.path_start_seq"
        " WHERE x.session_id = $1 AND x.id = $2 AND x.seq < $3),"
        " up(seq) AS (SELECT seq FROM s WHERE NOT ranged"
        " UNION ALL SELECT p.seq FROM up, s, LATERAL (SELECT e.parent_seq AS seq FROM entries e"
        " WHERE e.session_id = $1 AND e.seq = up.seq LIMIT 1) p WHERE p.seq >= s.lo)"
        " SELECT ";
    sql += columns;
    sql +=
        " FROM s JOIN entries e ON e.session_id = $1 AND e.seq BETWEEN s.lo AND s.seq"
        " WHERE s.ranged UNION ALL SELECT ";
    sql += columns;
    sql +=
        " FROM up, LATERAL (SELECT * FROM entries x WHERE x.session_id = $1 AND x.seq = up.seq"
        " LIMIT 1) e ORDER BY 1";
    return sql;
}

/// The rows of a path_query result that are on the path, in position order: from the last row
/// (the entry the path was asked for) through parent positions among the rows.
inline std::vector<int> path_rows(const Result& r) {
    std::vector<int> out;
    if (r.rows() == 0) return out;
    std::unordered_map<std::int64_t, int> row_of;
    row_of.reserve(static_cast<std::size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) row_of.emplace(r.int64(i, 0), i);
    for (int i = r.rows() - 1;;) {
        out.push_back(i);
        const std::optional<std::int64_t> parent = r.optional_int64(i, 1);
        if (!parent) break;
        const auto it = row_of.find(*parent);
        if (it == row_of.end()) break;
        i = it->second;
    }
    std::reverse(out.begin(), out.end());
    return out;
}

/// What a session's row says, besides its header.
struct SessionState {
    std::int64_t next_seq = 1;
    std::optional<std::string> leaf;
    std::optional<std::string> name;
    SessionStats stats;
};

/// Moves `s` past one appended entry, as TreeIndex::record does (SPEC §4.2, §4.6, §4.7).
inline void advance(SessionState& s, const SessionTreeEntry& entry) {
    ++s.next_seq;
    s.stats.add(entry);
    if (const auto* leaf = std::get_if<LeafEntry>(&entry)) {
        s.leaf = leaf->target_id;
        return;
    }
    s.leaf = id_of(entry);
    if (const auto* info = std::get_if<SessionInfoEntry>(&entry)) {
        const std::string_view text = info->name ? trim(*info->name) : std::string_view{};
        s.name = text.empty() ? std::nullopt : std::optional<std::string>(text);
    }
}

/// The state columns of sessions, in this order: next_seq, leaf_id, name, message_count,
/// cached_tokens, uncached_tokens, total_tokens, cost_total.
inline constexpr const char* state_columns =
    "next_seq, leaf_id, name, message_count, cached_tokens, uncached_tokens, total_tokens, "
    "cost_total";

inline SessionState state_of(const Result& r, int row, int first) {
    SessionState s;
    s.next_seq = r.int64(row, first);
    s.leaf = r.optional_text(row, first + 1);
    s.name = r.optional_text(row, first + 2);
    s.stats.message_count = static_cast<std::size_t>(r.int64(row, first + 3));
    s.stats.cached_tokens = r.int64(row, first + 4);
    s.stats.uncached_tokens = r.int64(row, first + 5);
    s.stats.total_tokens = r.int64(row, first + 6);
    s.stats.cost_total = r.real(row, first + 7);
    return s;
}

inline void bind_state(Params& p, const SessionState& s) {
    p.int64(s.next_seq)
        .text(s.leaf)
        .text(s.name)
        .int64(static_cast<std::int64_t>(s.stats.message_count))
        .int64(s.stats.cached_tokens)
        .int64(s.stats.uncached_tokens)
        .int64(s.stats.total_tokens)
        .real(s.stats.cost_total);
}

}  // namespace agentcore::detail::pg

#pragma once
// The server-side fork of a PostgreSQL session (SPEC §4.9): one transaction that reads the
// places of the copied entries (positions, parents, types, targets — no lines), replays
// prepare_fork_entries over them, and copies the lines with INSERT ... SELECT under new
// positions. Only the lines a fork changes (a new root, an entry whose parent was a left-out
// label, a leaf or compaction pointing at an entry left behind) pass through the client, to be
// rewritten by the codec exactly as a fork in memory writes them.

#include <agentcore/codec.hpp>
#include <agentcore/entries.hpp>
#include <agentcore/error.hpp>
#include <agentcore/fork.hpp>
#include <agentcore/postgres/detail/pg.hpp>
#include <agentcore/postgres/detail/rows.hpp>
#include <agentcore/postgres/postgres_storage.hpp>
#include <agentcore/repo.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace agentcore::detail::pg {

struct ForkAccess {
    // One source row's place and columns.
    struct Source {
        std::int64_t seq = 0;
        std::optional<std::int64_t> parent_seq;
        std::string id;
        EntryColumns columns;
    };
    // One copied row.
    struct Copy {
        const Source* source = nullptr;
        std::optional<std::int64_t> parent_seq;  // the source position of its new parent
        EntryColumns columns;                    // with a reset leaf target or first kept entry
        bool changed = false;
        Node node;  // its place in the fork
    };

    static constexpr const char* source_columns =
        "e.seq, e.parent_seq, e.id, e.type, e.target_id, e.label, e.name, e.first_kept_id, "
        "e.retained_tail, e.sets,"
        " e.u_input, e.u_output, e.u_cache_read, e.u_cache_write, e.u_cost";

    static std::vector<Source> sources_of(const Result& r) {
        std::vector<Source> out(static_cast<std::size_t>(r.rows()));
        for (int i = 0; i < r.rows(); ++i) {
            Source& s = out[static_cast<std::size_t>(i)];
            s.seq = r.int64(i, 0);
            s.parent_seq = r.optional_int64(i, 1);
            s.id = std::string(r.text(i, 2));
            s.columns.type = std::string(r.text(i, 3));
            s.columns.target_id = r.optional_text(i, 4);
            s.columns.label = r.optional_text(i, 5);
            s.columns.name = r.optional_text(i, 6);
            s.columns.first_kept_id = r.optional_text(i, 7);
            if (!r.is_null(i, 8)) s.columns.retained_tail = r.boolean(i, 8);
            s.columns.sets = static_cast<int>(r.int64(i, 9));
            if (!r.is_null(i, 10)) {
                Usage u;
                u.input = r.int64(i, 10);
                u.output = r.int64(i, 11);
                u.cache_read = r.int64(i, 12);
                u.cache_write = r.int64(i, 13);
                u.cost.total = r.real(i, 14);
                s.columns.usage = u;
            }
        }
        return out;
    }

    // prepare_fork_entries over places: which rows are copied, under which parent, and which
    // of them change.
    static std::vector<Copy> replay(const std::vector<Source>& sources) {
        std::unordered_set<std::string_view> copied_ids;
        std::unordered_set<std::int64_t> copied;
        std::unordered_map<std::int64_t, std::optional<std::int64_t>>
            left_out;  // label → its parent
        std::vector<Copy> out;
        out.reserve(sources.size());
        for (const auto& s : sources) {
            Copy c;
            c.source = &s;
            c.columns = s.columns;
            c.parent_seq = s.parent_seq;
            if (c.parent_seq) {
                if (auto it = left_out.find(*c.parent_seq); it != left_out.end())
                    c.parent_seq = it->second;
            }
            if (s.columns.type == LabelEntry::type &&
                copied_ids.count(s.columns.target_id.value_or("")) == 0) {
                left_out.emplace(s.seq, c.parent_seq);
                continue;
            }
            if (c.parent_seq && copied.count(*c.parent_seq) == 0) c.parent_seq.reset();
            c.changed = c.parent_seq != s.parent_seq;
            if (s.columns.type == LeafEntry::type && c.columns.target_id &&
                copied_ids.count(*c.columns.target_id) == 0) {
                c.columns.target_id.reset();
                c.changed = true;
            }
            if (s.columns.type == CompactionEntry::type && c.columns.first_kept_id &&
                copied_ids.count(*c.columns.first_kept_id) == 0) {
                c.columns.first_kept_id.reset();
                c.changed = true;
            }
            copied_ids.insert(s.id);
            copied.insert(s.seq);
            out.push_back(std::move(c));
        }
        return out;
    }

    static PostgresSessionStorage fork(std::shared_ptr<Pool> pool, std::string_view source_id,
                                       const ForkOptions& fork_options,
                                       PostgresStorageOptions options) {
        check_session_id(source_id);
        if (fork_options.session_id) check_session_id(*fork_options.session_id);
        PostgresSessionStorage s(std::move(options));
        s.link_ = connect(pool, std::string(), true, s.options_);
        auto& c = *s.link_->conn;
        const std::string source(source_id);
        retrying(s.options_.attempts, [&] {
            Transaction tx(c);
            // The source as it is now: its header, dialect and length bound every read.
            const Result head =
                c.exec("SELECT header, dialect, next_seq FROM sessions WHERE id = $1",
                       Params().text(source), "forking a session in");
            if (head.rows() == 0)
                throw SessionError(
                    ErrorCode::not_found,
                    "session '" + source + "' not found in database '" + c.name() + "'");
            SessionHeader source_header;
            try {
                source_header = decode_header(head.text(0, 0));
            } catch (const SessionError& e) {
                throw SessionError(ErrorCode::invalid_session,
                                   "session '" + source + "' in database '" + c.name() +
                                       "': header: " + std::string(e.detail()));
            }
            const Dialect dialect = head.int64(0, 1) == static_cast<std::int64_t>(Dialect::pi)
                                        ? Dialect::pi
                                        : Dialect::native;
            const std::int64_t source_next = head.int64(0, 2);
            const std::vector<Source> sources =
                read_sources(c, source, source_next, dialect, fork_options);
            std::vector<Copy> copies = replay(sources);

            // Places in the fork, and the fork's state, from the copies in order.
            std::unordered_map<std::int64_t, std::int64_t>
                new_seq;  // source position → fork position
            std::unordered_map<std::string_view, std::int64_t> seq_of_id;
            SessionState state;
            for (auto& copy : copies) {
                const std::int64_t seq = state.next_seq;
                const Node* parent =
                    copy.parent_seq
                        ? &copies[static_cast<std::size_t>(new_seq.at(*copy.parent_seq) - 1)].node
                        : nullptr;
                std::optional<std::int64_t> kept;
                if (copy.columns.first_kept_id && parent) {
                    if (auto k = seq_of_id.find(*copy.columns.first_kept_id); k != seq_of_id.end())
                        kept = ancestor(copies, *parent, k->second);
                }
                copy.node =
                    place(seq, parent, copy.columns.sets, copy.columns, copy.source->id, kept);
                new_seq.emplace(copy.source->seq, seq);
                seq_of_id.emplace(copy.source->id, seq);
                ++state.next_seq;
                if (copy.columns.type == MessageEntry::type) ++state.stats.message_count;
                if (copy.columns.usage) state.stats.add_usage(*copy.columns.usage);
                if (copy.columns.type == LeafEntry::type) {
                    state.leaf = copy.columns.target_id;
                } else {
                    state.leaf = copy.source->id;
                    if (copy.columns.type == SessionInfoEntry::type) state.name = copy.columns.name;
                }
            }

            // The lines that change, rewritten by the codec.
            std::vector<PendingRow> rewritten;
            std::vector<std::optional<std::int64_t>> changed_seqs;
            for (const auto& copy : copies)
                if (copy.changed) changed_seqs.emplace_back(copy.source->seq);
            if (!changed_seqs.empty()) {
                const Result lines = c.exec(
                    "SELECT seq, line FROM entries WHERE session_id = $1 AND seq = "
                    "ANY($2::bigint[])",
                    Params().text(source).text(int_array(changed_seqs)), "forking a session in");
                std::unordered_map<std::int64_t, std::string_view> line_of;
                for (int i = 0; i < lines.rows(); ++i)
                    line_of.emplace(lines.int64(i, 0), lines.text(i, 1));
                for (const auto& copy : copies) {
                    if (!copy.changed) continue;
                    SessionTreeEntry entry;
                    try {
                        entry = decode_entry(line_of.at(copy.source->seq), dialect);
                    } catch (const SessionError& e) {
                        throw SessionError(ErrorCode::invalid_entry,
                                           "session '" + source + "' in database '" + c.name() +
                                               "' entry " + std::to_string(copy.source->seq) +
                                               ": " + std::string(e.detail()));
                    }
                    base_of(entry).parent_id =
                        copy.parent_seq
                            ? std::optional<std::string>(
                                  copies[static_cast<std::size_t>(new_seq.at(*copy.parent_seq) - 1)]
                                      .source->id)
                            : std::nullopt;
                    if (auto* leaf = std::get_if<LeafEntry>(&entry))
                        leaf->target_id = copy.columns.target_id;
                    if (auto* comp = std::get_if<CompactionEntry>(&entry))
                        comp->first_kept_entry_id = copy.columns.first_kept_id;
                    EntryColumns columns = copy.columns;
                    columns.search = search_columns_of(entry);
                    rewritten.push_back(PendingRow{copy.node, copy.source->id, std::move(columns),
                                                   encode_entry(entry, dialect)});
                }
            }

            // The fork's row, with this writer's lease, then its entries.
            SessionHeader header = agentcore::detail::fork_header(source_header, fork_options,
                                                                  s.options_.environment, source);
            s.link_->session = header.id;
            s.link_->writer = true;
            s.link_->owner = new_owner();
            Params p;
            p.text(header.id)
                .text(header.timestamp)
                .text(header.cwd)
                .int64(static_cast<std::int64_t>(dialect))
                .text(encode_header(header, dialect));
            bind_state(p, state);
            p.text(s.link_->owner).int64(millis(s.options_.lease_ttl));
            if (has_nul(header.cwd))
                throw SessionError(
                    ErrorCode::invalid_session,
                    "the fork's cwd holds a NUL byte, which PostgreSQL text cannot store");
            const Result made = c.exec(
                "INSERT INTO sessions (id, created, cwd, dialect, header, next_seq, leaf_id, name, "
                "message_count,"
                " cached_tokens, uncached_tokens, total_tokens, cost_total, writer_owner, "
                "writer_fence, writer_expires)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 1,"
                " now() + $15::double precision * interval '1 millisecond') ON CONFLICT (id) DO "
                "NOTHING",
                p, "forking a session in");
            if (made.affected() == 0)
                throw SessionError(ErrorCode::already_exists,
                                   "session '" + header.id + "' already exists");
            std::vector<std::optional<std::int64_t>> old_seq, seq, parent, root, start, thinking,
                model, tools, depth;
            for (const auto& copy : copies) {
                if (copy.changed) continue;
                old_seq.emplace_back(copy.source->seq);
                seq.emplace_back(copy.node.seq);
                parent.push_back(copy.node.parent_seq);
                root.emplace_back(copy.node.root_seq);
                start.emplace_back(copy.node.path_start_seq);
                thinking.push_back(copy.node.state_thinking);
                model.push_back(copy.node.state_model);
                tools.push_back(copy.node.state_tools);
                depth.emplace_back(copy.node.depth);
            }
            if (!old_seq.empty())
                c.exec("INSERT INTO entries (" + std::string(insert_columns) +
                           ") SELECT $1, m.seq, e.id, m.parent_seq, e.type, e.target_id, e.label, "
                           "e.name, e.first_kept_id,"
                           " e.retained_tail, m.root_seq, m.path_start_seq, m.state_thinking, "
                           "m.state_model, m.state_tools,"
                           " e.sets, e.u_input, e.u_output, e.u_cache_read, e.u_cache_write, "
                           "e.u_cost, e.line, m.depth, e.words, e.word_count, e.base_word_count"
                           " FROM unnest($3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], "
                           "$7::bigint[],"
                           " $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[]) AS "
                           "m(old_seq, seq, parent_seq, root_seq,"
                           " path_start_seq, state_thinking, state_model, state_tools, depth)"
                           " JOIN entries e ON e.session_id = $2 AND e.seq = m.old_seq",
                       Params()
                           .text(header.id)
                           .text(source)
                           .text(int_array(old_seq))
                           .text(int_array(seq))
                           .text(int_array(parent))
                           .text(int_array(root))
                           .text(int_array(start))
                           .text(int_array(thinking))
                           .text(int_array(model))
                           .text(int_array(tools))
                           .text(int_array(depth)),
                       "forking a session in");
            insert_rows(c, header.id, rewritten);
            tx.commit();
            s.dialect_ = dialect;
            s.header_ = std::move(header);
            s.state_ = state;
            std::unordered_set<std::string> ids;
            for (const auto& copy : copies) {
                ids.insert(copy.source->id);
                s.remember_node(copy.node, copy.source->id);
            }
            s.ids_ = std::move(ids);
        });
        s.link_->fence = 1;
        return s;
    }

private:
    // The source rows a fork copies (get_entries_to_fork): all, or the path at or before a target.
    static std::vector<Source> read_sources(Connection& c, const std::string& source,
                                            std::int64_t next, Dialect dialect,
                                            const ForkOptions& options) {
        if (!options.entry_id || options.entry_id->empty()) {
            const Result r =
                c.exec((std::string("SELECT ") + source_columns +
                        " FROM entries e WHERE e.session_id = $1 AND e.seq < $2 ORDER BY e.seq")
                           .c_str(),
                       Params().text(source).int64(next), "forking a session in");
            return sources_of(r);
        }
        const std::string& target = *options.entry_id;
        const Result t =
            c.exec("SELECT seq, line FROM entries WHERE session_id = $1 AND id = $2 AND seq < $3",
                   Params().text(source).text(target).int64(next), "forking a session in");
        if (t.rows() == 0)
            throw SessionError(ErrorCode::invalid_fork_target,
                               "fork target '" + target + "' not found");
        std::optional<std::string> start = target;
        if (options.position == ForkPosition::before) {
            SessionTreeEntry entry;
            try {
                entry = decode_entry(t.text(0, 1), dialect);
            } catch (const SessionError& e) {
                throw SessionError(ErrorCode::invalid_entry,
                                   "session '" + source + "' in database '" + c.name() +
                                       "' entry " + std::to_string(t.int64(0, 0)) + ": " +
                                       std::string(e.detail()));
            }
            const AgentMessage* message = message_of(entry);
            if (!message || !std::holds_alternative<UserMessage>(*message))
                throw SessionError(
                    ErrorCode::invalid_fork_target,
                    "fork target '" + target + "' is a " +
                        std::string(message ? role_of(*message) : type_of(entry)) +
                        ", not a user message; only a user message can be forked before");
            start = parent_id_of(entry);
        }
        if (!start) return {};
        static const std::string path_sql = path_query(source_columns);
        const Result r = c.exec(path_sql.c_str(), Params().text(source).text(*start).int64(next),
                                "forking a session in");
        std::vector<Source> all = sources_of(r);
        std::vector<Source> out;
        const std::vector<int> rows = path_rows(r);
        out.reserve(rows.size());
        for (const int i : rows) out.push_back(std::move(all[static_cast<std::size_t>(i)]));
        return out;
    }

    // Whether the copy at fork position `kept` is `from` or one of its ancestors.
    static std::optional<std::int64_t> ancestor(const std::vector<Copy>& copies, const Node& from,
                                                std::int64_t kept) {
        const Node* n = &from;
        for (;;) {
            if (n->seq == kept) return kept;
            if (!n->parent_seq || *n->parent_seq < kept) return std::nullopt;
            n = &copies[static_cast<std::size_t>(*n->parent_seq - 1)].node;
        }
    }
};

}  // namespace agentcore::detail::pg

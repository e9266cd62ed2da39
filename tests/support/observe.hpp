#pragma once
// Everything a reader sees of a session, as text: two sessions that give the same text look the
// same to every reader. Used to compare one session kept by different storages.

#include <agentcore/session.hpp>

#include <string>
#include <string_view>

namespace agentcore::testing {

/// The leaf, name, stats, context and every entry with its label; with `paths`, also each
/// entry's path and the context state at it (O(n × path), so not for large sessions).
template <class S>
std::string observe(const Session<S>& s, bool paths = true) {
    const auto& st = s.storage();
    std::string out =
        "leaf=" + st.get_leaf_id().value_or("-") + " name=" + st.get_session_name().value_or("-");
    const SessionStats stats = st.get_session_stats();
    out += " stats=" + std::to_string(stats.message_count) + "," +
           std::to_string(stats.cached_tokens) + "," + std::to_string(stats.uncached_tokens) + "," +
           std::to_string(stats.total_tokens) + "," + dump_json(Json(stats.cost_total)) + "\n";
    const SessionContext ctx = build_context(s);
    out += "thinking=" + ctx.thinking_level +
           " model=" + (ctx.model ? ctx.model->provider + "/" + ctx.model->model_id : "-") + "\n";
    for (const auto& m : ctx.messages)
        out += dump_json(message_to_json(*m, Dialect::native)) + "\n";
    for (const auto& e : st.get_entries(EntriesQuery{})) {
        out += encode_entry(*e, Dialect::native) +
               " label=" + st.get_label(id_of(*e)).value_or("-") + "\n";
        if (!paths) continue;
        for (const auto& p : st.get_path_to_root_or_compaction(std::string_view(id_of(*e))))
            out += id_of(*p) + " ";
        const SessionContext at = build_context_at(s, id_of(*e));
        out += "| " + at.thinking_level + " " + (at.model ? at.model->model_id : "-") + "\n";
    }
    return out;
}

}  // namespace agentcore::testing

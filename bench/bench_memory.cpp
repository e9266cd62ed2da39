// In-memory figures for a realistic session: appends per second, build_context, move_to +
// build_context, stats, lookup by id and peak memory per entry.
//
//   bench_memory [--entries N] [--seed S] [--json]
//
// N defaults to 100,000; `--entries 1000` is the quick smoke run.

#include "bench_util.hpp"
#include "workload.hpp"

#include <agentcore/session.hpp>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore_bench;

namespace {

using MemorySession = Session<InMemorySessionStorage<>>;

// Characters of text an entry carries (message text, thinking, tool arguments, summaries): what
// the memory per entry is compared with.
std::size_t payload_chars(const SessionTreeEntry& entry) {
    auto blocks = [](const std::vector<ContentBlock>& content) {
        std::size_t n = 0;
        for (const auto& b : content) {
            if (const auto* t = std::get_if<TextContent>(&b))
                n += t->text.size();
            else if (const auto* th = std::get_if<ThinkingContent>(&b))
                n += th->thinking.size() + (th->extra.is_null() ? 0 : th->extra.dump().size());
            else if (const auto* c = std::get_if<ToolCallContent>(&b))
                n += c->arguments.dump().size();
        }
        return n;
    };
    if (const auto* m = std::get_if<MessageEntry>(&entry)) {
        if (const auto* u = std::get_if<UserMessage>(&m->message)) {
            if (const auto* s = std::get_if<std::string>(&u->content)) return s->size();
            return blocks(std::get<std::vector<ContentBlock>>(u->content));
        }
        if (const auto* a = std::get_if<AssistantMessage>(&m->message)) return blocks(a->content);
        if (const auto* r = std::get_if<ToolResultMessage>(&m->message)) return blocks(r->content);
        return 0;
    }
    if (const auto* c = std::get_if<CompactionEntry>(&entry)) return c->summary.size();
    if (const auto* b = std::get_if<BranchSummaryEntry>(&entry)) return b->summary.size();
    return 0;
}

// The ancestors of `id`, nearest first (ancestors[0] is `id` itself), at most `count` + 1.
std::vector<std::string> ancestors(const MemorySession& session, std::string id,
                                   std::size_t count) {
    std::vector<std::string> out{id};
    while (out.size() <= count) {
        EntryHandle e = get_entry(session, out.back());
        if (!e || !parent_id_of(*e)) break;
        out.push_back(*parent_id_of(*e));
    }
    return out;
}

struct MoveFigures {
    Samples us;
    std::size_t path = 0;
    std::size_t messages = 0;
    std::size_t back = 0;
};

// move_to one of two neighbouring entries `back` entries up the current branch (alternating, so
// that every run really moves), then build_context.
MoveFigures time_move_and_build(MemorySession& session, std::size_t back) {
    const auto up = ancestors(session, *get_leaf_id(session), back + 1);
    MoveFigures f;
    f.back = std::min(back, up.size() - 1);
    const std::string a = up[f.back];
    const std::string b = up[f.back > 0 ? f.back - 1 : 0];
    f.path = get_path_to_root_or_compaction(session, a).size();
    f.messages = build_context_at(session, a).messages.size();
    std::size_t run = 0;
    f.us = time_runs_us(
        [&] {
            move_to(session, (run++ % 2) ? b : a);
            auto context = build_context(session);
            do_not_optimize(context.messages.data());
        },
        21, 0.5, 4000);
    return f;
}

}  // namespace

int main(int argc, char** argv) {
    const Args args(argc, argv);
    if (args.flag("--help") || args.flag("-h")) {
        std::cout << "usage: bench_memory [--entries N] [--seed S] [--json]\n";
        return 0;
    }
    const std::optional<WorkloadOptions> read = workload_options_from(args);
    if (!read) return 2;
    const WorkloadOptions options = *read;
    const bool json = args.flag("--json");
    const std::size_t n = options.entries;

    Report report("agentcore in-memory storage (times are thread CPU time)");
    report.param("entries", n);
    report.param("seed", options.seed);
    report.param("compact_at_tokens", options.compact_at_tokens);
    report.param("branch_every", options.branch_every);

    // --- Peak memory: build the session one operation at a time (no up-front copy of the
    // workload), and read the peak RSS before and after.
    reset_peak_rss();
    const std::int64_t hwm_before = proc_status_kb("VmHWM");
    auto session = make_memory_session(options);
    const std::int64_t hwm_after = proc_status_kb("VmHWM");
    std::size_t payload = 0;
    std::size_t compactions = 0, branch_summaries = 0;
    for (const auto& e : session.storage().entries()) {
        payload += payload_chars(*e);
        compactions += std::holds_alternative<CompactionEntry>(*e) ? 1U : 0U;
        branch_summaries += std::holds_alternative<BranchSummaryEntry>(*e) ? 1U : 0U;
    }
    const double peak_bytes = static_cast<double>(hwm_after - hwm_before) * 1024.0;
    report.param("compactions", compactions);
    report.param("branch_summaries", branch_summaries);

    // --- Queries on the full session.
    const SessionStats stats = get_session_stats(session);
    do_not_optimize(stats);
    const double stats_ns = time_per_call_ns([&](std::size_t) {
        SessionStats s = get_session_stats(session);
        do_not_optimize(s);
    });

    std::vector<std::string> ids;
    ids.reserve(n);
    for (const auto& e : session.storage().entries()) ids.push_back(id_of(*e));
    constexpr std::size_t probe_mask = 0xFFFF;
    std::vector<std::string> probe(probe_mask + 1);
    {
        Rng rng(options.seed + 7);
        for (auto& p : probe) p = ids[rng.below(ids.size())];
    }
    const double lookup_ns = time_per_call_ns([&](std::size_t i) {
        EntryHandle h = get_entry(session, probe[i & probe_mask]);
        do_not_optimize(h.get());
    });
    const double lookup_miss_ns = time_per_call_ns([&](std::size_t i) {
        std::string missing = probe[i & probe_mask];
        missing[0] = 'x';  // ids are lowercase hex: never taken
        EntryHandle h = get_entry(session, missing);
        do_not_optimize(h.get());
    });

    const auto leaf_path = get_branch(session).size();
    const auto leaf_messages = build_context(session).messages.size();
    const Samples leaf_us = time_runs_us(
        [&] {
            auto context = build_context(session);
            do_not_optimize(context.messages.data());
        },
        51, 0.5);

    const MoveFigures move_far = time_move_and_build(session, 1000);

    // --- A branch ~1,000 entries deep with no compaction on it: the path walk and the context
    // are then as long as the branch.
    WorkloadOptions deep_options = options;
    deep_options.entries = 1110;
    deep_options.compact_at_tokens = 0;
    auto deep = make_memory_session(deep_options);
    const auto deep_path = get_branch(deep).size();
    const auto deep_messages = build_context(deep).messages.size();
    const Samples deep_us = time_runs_us(
        [&] {
            auto context = build_context(deep);
            do_not_optimize(context.messages.data());
        },
        51, 0.5);
    const MoveFigures move_deep = time_move_and_build(deep, 2);
    session = MemorySession(InMemorySessionStorage<>());
    deep = MemorySession(InMemorySessionStorage<>());

    // --- Appends per second: the operations are generated first; only applying them is timed.
    Samples append_s;
    double generate_s = 0;
    for (int run = 0; run < 3; ++run) {
        const auto g0 = Clock::now();
        std::vector<Op> ops = generate_workload(options);
        generate_s = seconds_since(g0);
        MemorySession s(
            InMemorySessionStorage<>(workload_header(options), workload_environment(options)));
        WorkloadRunner<InMemorySessionStorage<>> runner(s);
        const double t0 = thread_cpu_seconds();
        for (auto& op : ops) runner.apply(std::move(op));
        append_s.add(thread_cpu_seconds() - t0);
        if (s.storage().entry_count() != n) {
            std::cerr << "error: the workload made " << s.storage().entry_count()
                      << " entries, not " << n << "\n";
            return 1;
        }
    }

    const double appends_per_s = static_cast<double>(n) / append_s.median();
    report.add("append", appends_per_s, "entries/s",
               fixed1(1e6 * append_s.median() / static_cast<double>(n)) +
                   " us/entry mean; median of 3 runs of " + std::to_string(n) + " (generation " +
                   fixed1(generate_s) + " s, untimed)");
    report.add("build_context, leaf", leaf_us.median(), "us",
               "median of " + std::to_string(leaf_us.size()) + " batches" + "; path " +
                   std::to_string(leaf_path) + " entries -> " + std::to_string(leaf_messages) +
                   " messages (compacted)");
    report.add("build_context, 1,000-deep branch", deep_us.median(), "us",
               "median of " + std::to_string(deep_us.size()) + " batches" + "; path " +
                   std::to_string(deep_path) + " entries -> " + std::to_string(deep_messages) +
                   " messages (no compaction)");
    report.add("move_to ~1,000 deep + build_context", move_deep.us.median(), "us",
               "median of " + std::to_string(move_deep.us.size()) + " batches" + "; target path " +
                   std::to_string(move_deep.path) + " entries -> " +
                   std::to_string(move_deep.messages) + " messages");
    report.add("move_to 1,000 back + build_context", move_far.us.median(), "us",
               "median of " + std::to_string(move_far.us.size()) + " batches" + "; " +
                   std::to_string(move_far.back) + " entries up the " + std::to_string(n) +
                   "-entry session; path " + std::to_string(move_far.path) + " -> " +
                   std::to_string(move_far.messages) + " messages");
    report.add("get_session_stats", stats_ns, "ns", "O(1): kept up to date on append");
    report.add("get_entry (hit)", lookup_ns, "ns",
               "random ids of " + std::to_string(n) + " entries");
    report.add("get_entry (miss)", lookup_miss_ns, "ns", "includes copying the probe id");
    report.add("peak memory per entry", peak_bytes / static_cast<double>(n), "B/entry",
               "peak RSS +" + human_bytes(peak_bytes) + " for " + std::to_string(n) +
                   " entries; text payload " +
                   fixed1(static_cast<double>(payload) / static_cast<double>(n)) + " B/entry");
    report.print(json);
    return 0;
}

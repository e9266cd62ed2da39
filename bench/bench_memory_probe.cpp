// bench_memory_probe: where the in-memory storage's bytes per entry go, and what two other ways of
// holding the same entries would cost. A measured probe, not the library's code.
//
//   bench_memory_probe [--entries N] [--seed S] [--json]
//
// It builds bench_memory's session (N entries, 100,000 by default) and counts the heap it holds:
// this program replaces operator new and delete to keep the sum of the blocks in use (each
// block's usable size, as malloc_usable_size gives it, plus its header). A count of our own,
// because glibc's mallinfo2 counts the blocks of its per-thread cache as in use.
//
// - the profile: the heap the session holds, split by what holds it. Every string and vector of a
//   message entry is measured where it lives (malloc_usable_size of its buffer, plus the block's
//   header); a JSON value (tool arguments, extras, details) by the heap a copy of it takes; the
//   index by building a second one from the same entries; the other entry types by the heap a
//   copy of each takes;
// - probe A, the same typed entries copied into exactly sized buffers (what spare capacity
//   costs);
// - probe B, each entry kept as its encoded line in one buffer, with the library's tree index
//   beside it (what the typed representation costs), and what that costs build_context: the
//   path's lines decoded again on every call, against the library's build_context on its typed
//   entries, for the leaf and for a branch ~1,000 entries deep.
//
// Everything is compared with the text payload (the characters of message text, thinking, tool
// arguments and summaries, as bench_memory counts them); the target is ≤ 1.2× the payload.
// glibc only.
#include "bench_util.hpp"
#include "workload.hpp"

#include <agentcore/session.hpp>

#if !defined(__GLIBC__)
int main() {
    std::fprintf(stderr, "bench_memory_probe: glibc only\n");
    return 0;
}
#else

#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <new>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore_bench;

namespace {

std::size_t live_heap = 0;  // the bytes of every block operator new gave out and delete took back

// The heap block behind `p` (its usable size and its header), 0 for none.
std::size_t block_of(const void* p) {
    return p == nullptr ? 0 : malloc_usable_size(const_cast<void*>(p)) + sizeof(std::size_t);
}

// The block behind a pointer malloc gave out (not through block_of: g++ takes its const
// parameter for a read of the block's bytes, which are not written yet).
std::size_t block_given(void* p) { return malloc_usable_size(p) + sizeof(std::size_t); }

void* allocate(std::size_t size) {
    void* p = std::malloc(size == 0 ? 1 : size);
    if (p == nullptr) throw std::bad_alloc();
    live_heap += block_given(p);
    return p;
}

void release(void* p) noexcept {
    if (p == nullptr) return;
    live_heap -= block_given(p);
    std::free(p);
}

}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }

namespace {

using MemorySession = Session<InMemorySessionStorage<>>;

// Bytes of heap in use through operator new, headers included.
std::size_t heap_in_use() { return live_heap; }

// The heap the value `make()` returns holds: what making it took, measured while it lives.
template <class Make>
std::size_t heap_taken(Make&& make) {
    const std::size_t before = heap_in_use();
    auto value = make();
    const std::size_t taken = heap_in_use() - before;
    do_not_optimize(value);
    return taken;
}

std::string ratio(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", value);
    return text;
}

// libstdc++ keeps strings of up to 15 characters inside the object.
constexpr std::size_t sso_capacity = 15;

std::size_t heap_of(const std::string& s) {
    return s.capacity() > sso_capacity ? block_of(s.data()) : 0;
}

template <class T>
std::size_t heap_of_vector(const std::vector<T>& v) {
    return v.capacity() > 0 ? block_of(v.data()) : 0;
}

// The heap a JSON value holds: measured as the heap a copy of it takes.
std::size_t heap_of(const Json& j) {
    if (!j.is_object() && !j.is_array() && !j.is_string() && !j.is_binary()) return 0;
    return heap_taken([&] { return Json(j); });
}

// What the session's heap is spent on, in bytes over all entries.
struct Profile {
    std::map<std::string, double> bytes;
    double payload = 0;

    void add(const char* what, std::size_t n) { bytes[what] += static_cast<double>(n); }

    // A string of text the payload counts: its characters are payload, the rest of its block
    // (header, rounding, spare capacity) is overhead.
    void text(const std::string& s) {
        payload += static_cast<double>(s.size());
        const std::size_t heap = heap_of(s);
        if (heap > s.size()) add("text blocks beyond their characters", heap - s.size());
    }

    void json(const Json& j) { add("JSON values (tool arguments, extras, details)", heap_of(j)); }
    // A JSON value the payload counts by its encoded size (tool arguments, thinking signatures):
    // that much of its heap is payload, the rest overhead.
    void payload_json(const Json& j) {
        const std::size_t size = j.is_null() ? 0 : j.dump().size();
        const std::size_t heap = heap_of(j);
        payload += static_cast<double>(size);
        if (heap > size) add("JSON values (tool arguments, extras, details)", heap - size);
    }
    void name(const std::string& s) {
        add("short strings (ids, timestamps, model, api, tool ids and names)", heap_of(s));
    }
    void name(const std::optional<std::string>& s) {
        if (s) name(*s);
    }

    void blocks(const std::vector<ContentBlock>& content) {
        add("content block vectors", heap_of_vector(content));
        for (const auto& b : content) {
            if (const auto* t = std::get_if<TextContent>(&b)) {
                text(t->text);
                json(t->extra);
            } else if (const auto* th = std::get_if<ThinkingContent>(&b)) {
                text(th->thinking);
                payload_json(th->extra);
            } else if (const auto* c = std::get_if<ToolCallContent>(&b)) {
                name(c->id);
                name(c->name);
                payload_json(c->arguments);
                json(c->extra);
            } else {
                add("other content blocks", heap_of_copy(b));
            }
        }
    }

    template <class T>
    static std::size_t heap_of_copy(const T& value) {
        return heap_taken([&] { return T(value); });
    }

    void usage(const Usage& u) {
        json(u.extra);
        json(u.cost.extra);
    }

    void entry(const SessionTreeEntry& e) {
        const EntryBase& base = base_of(e);
        const auto* m = std::get_if<MessageEntry>(&e);
        if (m == nullptr) {
            // Compactions, branch summaries, model and thinking changes, labels...: whole.
            if (const auto* c = std::get_if<CompactionEntry>(&e))
                payload += static_cast<double>(c->summary.size());
            if (const auto* b = std::get_if<BranchSummaryEntry>(&e))
                payload += static_cast<double>(b->summary.size());
            add("other entry types, all their heap", heap_of_copy(e));
            return;
        }
        name(base.id);
        name(base.parent_id);
        name(base.timestamp);
        json(base.extra);
        if (const auto* u = std::get_if<UserMessage>(&m->message)) {
            if (const auto* s = std::get_if<std::string>(&u->content))
                text(*s);
            else
                blocks(std::get<std::vector<ContentBlock>>(u->content));
            json(u->extra);
        } else if (const auto* a = std::get_if<AssistantMessage>(&m->message)) {
            blocks(a->content);
            name(a->api);
            name(a->provider);
            name(a->model);
            name(a->stop_reason);
            name(a->error_message);
            usage(a->usage);
            json(a->extra);
        } else if (const auto* r = std::get_if<ToolResultMessage>(&m->message)) {
            name(r->tool_call_id);
            name(r->tool_name);
            blocks(r->content);
            json(r->details);
            json(r->extra);
        } else {
            add("other messages, all their heap", heap_of_copy(m->message));
        }
    }
};

// build_context from lines: the path's positions are walked in the index, their lines decoded.
struct LineStore {
    std::string text;                    // every entry's native line, one after another
    std::vector<std::uint64_t> offsets;  // where line i starts; offsets[n] is text.size()

    [[nodiscard]] EntryHandle decode(std::size_t i) const {
        const std::string_view line(text.data() + offsets[i],
                                    static_cast<std::size_t>(offsets[i + 1] - offsets[i]));
        return std::make_shared<const SessionTreeEntry>(decode_entry(line, Dialect::native));
    }
};

LineStore line_store(const std::vector<EntryHandle>& entries) {
    LineStore store;
    std::string buffer;
    store.offsets.reserve(entries.size() + 1);
    for (const auto& e : entries) {
        store.offsets.push_back(buffer.size());
        buffer += encode_entry(*e, Dialect::native);
    }
    store.offsets.push_back(buffer.size());
    store.text = buffer;  // exactly sized
    return store;
}

}  // namespace

int main(int argc, char** argv) {
    const Args args(argc, argv);
    if (args.flag("--help") || args.flag("-h")) {
        std::cout << "usage: bench_memory_probe [--entries N] [--seed S] [--json]\n";
        return 0;
    }
    const std::optional<WorkloadOptions> read = workload_options_from(args);
    if (!read) return 2;
    const WorkloadOptions options = *read;
    const bool json = args.flag("--json");
    const std::size_t n = options.entries;
    Report report("agentcore in-memory storage: where the bytes per entry go (a probe)");
    report.param("entries", n);
    report.param("seed", options.seed);

    // --- The library's storage, built as bench_memory builds it.
    reset_peak_rss();
    const std::int64_t hwm_before = proc_status_kb("VmHWM");
    const std::size_t heap_before = heap_in_use();
    auto session = make_memory_session(options);
    const std::size_t heap_session = heap_in_use() - heap_before;
    const double peak_rss = static_cast<double>(proc_status_kb("VmHWM") - hwm_before) * 1024.0;
    const auto& entries = session.storage().entries();

    // --- The profile.
    Profile profile;
    const std::size_t entry_block =
        heap_taken([] { return std::make_shared<const SessionTreeEntry>(MessageEntry{}); });
    profile.add("entry blocks (shared_ptr control block + the variant)", entry_block * n);
    profile.add("the storage's vector of handles", block_of(entries.data()));
    for (const auto& e : entries) profile.entry(*e);
    profile.add("the tree index (ids by position, id table, state positions, types)",
                heap_taken([&] {
                    TreeIndex index;
                    for (const auto& e : entries) index.record(*e);
                    return index;
                }));
    double attributed = 0;
    for (const auto& [what, bytes] : profile.bytes) attributed += bytes;
    const double payload = profile.payload;

    report.add("peak RSS of the build", peak_rss / static_cast<double>(n), "B/entry",
               ratio(peak_rss / payload) + " the payload (target <= 1.2x)");
    report.add("heap in use after the build",
               static_cast<double>(heap_session) / static_cast<double>(n), "B/entry",
               ratio(static_cast<double>(heap_session) / payload) + " the payload");
    report.add("text payload", payload / static_cast<double>(n), "B/entry");
    report.param("sizeof(SessionTreeEntry)", sizeof(SessionTreeEntry));
    report.param("sizeof(MessageEntry)", sizeof(MessageEntry));
    report.param("sizeof(AgentMessage)", sizeof(AgentMessage));
    report.param("sizeof(ContentBlock)", sizeof(ContentBlock));
    report.param("entry block", entry_block);
    for (const auto& [what, bytes] : profile.bytes)
        report.add("  " + what, bytes / static_cast<double>(n), "B/entry",
                   fixed1(100.0 * bytes / static_cast<double>(heap_session)) + "% of the heap");
    report.add("  not attributed (the rest of the heap)",
               (static_cast<double>(heap_session) - attributed - payload) / static_cast<double>(n),
               "B/entry");

    // --- What the entry blocks would take if each were sized by its entry and message type
    // rather than by the largest alternative of the two variants: a block of the control
    // block, the entry's fields and its message's, for each entry, allocated and measured.
    {
        double bytes = 0;
        for (const auto& e : entries) {
            std::size_t size = 2 * sizeof(long) + sizeof(std::size_t);  // counts + variant index
            if (const auto* m = std::get_if<MessageEntry>(e.get()))
                size += sizeof(EntryBase) + sizeof(std::size_t) +
                        std::visit([](const auto& message) { return sizeof(message); }, m->message);
            else
                size += std::visit([](const auto& entry) { return sizeof(entry); }, *e);
            void* p = std::malloc(size);
            bytes += static_cast<double>(block_of(p));
            std::free(p);
        }
        report.add(
            "entry blocks sized by their entry and message type (not a layout the types allow)",
            bytes / static_cast<double>(n), "B/entry",
            "the heap would be " +
                ratio((static_cast<double>(heap_session) - static_cast<double>(entry_block * n) +
                       bytes) /
                      payload) +
                " the payload");
    }

    // --- Probe A: the same typed entries, each copied into exactly sized buffers.
    {
        const auto bytes = static_cast<double>(heap_taken([&] {
            std::vector<EntryHandle> copies;
            copies.reserve(n);
            for (const auto& e : entries)
                copies.push_back(std::make_shared<const SessionTreeEntry>(*e));
            return copies;
        }));
        report.add("probe A: typed entries in exactly sized buffers (no index)",
                   bytes / static_cast<double>(n), "B/entry",
                   ratio(bytes / payload) + " the payload");
    }

    // --- Probe B: the encoded lines in one buffer, beside the library's index.
    LineStore lines;  // kept for the timings below: made inside the measure, then moved out
    const auto lines_bytes = static_cast<double>(heap_taken([&] {
        lines = line_store(entries);
        return 0;
    }));
    const double index_bytes =
        profile.bytes["the tree index (ids by position, id table, state positions, types)"];
    report.add("probe B: encoded lines in one buffer", lines_bytes / static_cast<double>(n),
               "B/entry", ratio(lines_bytes / payload) + " the payload");
    report.add("probe B: lines + the tree index",
               (lines_bytes + index_bytes) / static_cast<double>(n), "B/entry",
               ratio((lines_bytes + index_bytes) / payload) + " the payload");

    // build_context: the library's on its typed entries against decoding the same path's lines
    // (the path walked beforehand for both), for the leaf and for a branch ~1,000 entries deep
    // with no compaction on it.
    auto time_both = [&](const MemorySession& s, const LineStore& store, const std::string& what) {
        const auto path = get_path_to_root_or_compaction(s, *get_leaf_id(s));
        std::vector<std::size_t> positions;
        positions.reserve(path.size());
        for (const auto& e : path) positions.push_back(*s.storage().index().position(id_of(*e)));
        const Samples typed = time_runs_us(
            [&] {
                auto context = build_session_context(path);
                do_not_optimize(context.messages.data());
            },
            31, 0.5);
        const Samples decoded = time_runs_us(
            [&] {
                std::vector<EntryHandle> handles;
                handles.reserve(positions.size());
                for (std::size_t pos : positions) handles.push_back(store.decode(pos));
                auto context = build_session_context(handles);
                do_not_optimize(context.messages.data());
            },
            31, 0.5);
        report.add("build_context, " + what + ", typed entries", typed.median(), "us",
                   std::to_string(path.size()) + " entries on the path");
        report.add("build_context, " + what + ", lines decoded", decoded.median(), "us",
                   ratio(decoded.median() / typed.median()) + " the typed entries");
    };
    time_both(session, lines, "leaf");
    WorkloadOptions deep_options = options;
    deep_options.entries = 1110;
    deep_options.compact_at_tokens = 0;
    const auto deep = make_memory_session(deep_options);
    time_both(deep, line_store(deep.storage().entries()), "~1,000-deep branch");
    report.print(json);
    return 0;
}

#endif

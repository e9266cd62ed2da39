// bench_scan_probe: how fast an open could index a JSONL session if its scanner classified a
// whole 64-byte block at once, finding every quote, backslash and line end as bit masks (the
// first stage of simdjson's design), instead of walking each string to its next quote or
// backslash as detail/json_scan.hpp does. A measured probe, not the library's code: it indexes
// each line's id, parent and type, finds every parent in a flat id table, and checks what a
// block-at-a-time pass checks cheaply (escapes, control characters inside and outside strings,
// nesting, one object per line); it leaves out what it would still have to add (the grammar of
// numbers and literals, UTF-8 sequences, the codec's field rules), which the figures must be
// read with.
//
//   bench_scan_probe FILE [--runs N]
//
// Prints, in thread CPU time (median of N runs), the floors (read(); read() + memchr), the
// library's own open_read_only with one thread (the index only, no context), the probe (mmap +
// the block pass + the id table; the same on pages already mapped) with SSE2 and, where the
// processor has it, AVX2, and the pass without its walk over the structural characters; each
// with its ratio to read() + memchr. x86-64 only.
#include "bench_util.hpp"

#if !defined(__x86_64__)
int main() {
    std::fprintf(stderr, "bench_scan_probe: x86-64 only\n");
    return 0;
}
#else

#include <agentcore/jsonl/jsonl_storage.hpp>

#include <fcntl.h>
#include <immintrin.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <functional>
#include <stdexcept>

using namespace agentcore;
using namespace agentcore_bench;

namespace {

// The file mapped read-only, as the library's open maps it.
struct Mapped {
    std::string_view text;
    explicit Mapped(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw std::runtime_error("cannot open " + path);
        const off_t size = ::lseek(fd, 0, SEEK_END);
        void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
        ::close(fd);
        if (p == MAP_FAILED) throw std::runtime_error("cannot map " + path);
        text = std::string_view(static_cast<const char*>(p), static_cast<std::size_t>(size));
    }
    Mapped(const Mapped&) = delete;
    Mapped& operator=(const Mapped&) = delete;
    ~Mapped() { ::munmap(const_cast<char*>(text.data()), text.size()); }
};

// What a pass needs of a 64-byte block, as one bit per byte.
struct BlockMasks {
    std::uint64_t backslash;
    std::uint64_t quote;
    std::uint64_t newline;
    std::uint64_t control;      // bytes below 0x20
    std::uint64_t punctuation;  // { } [ ] : , and the line ends
};

// SSE2 (every x86-64): four 16-byte steps. '{' and '[' differ only in bit 0x20, as do '}' and
// ']', so one comparison of the byte with that bit set finds both.
BlockMasks classify_sse2(const char* p) {
    BlockMasks m{};
    const __m128i bit20 = _mm_set1_epi8(0x20);
    for (int i = 0; i < 4; ++i) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
        const __m128i folded = _mm_or_si128(v, bit20);
        const __m128i newline = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'));
        const __m128i punctuation =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')),
                                      _mm_cmpeq_epi8(folded, _mm_set1_epi8('}'))),
                         _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')),
                                                   _mm_cmpeq_epi8(v, _mm_set1_epi8(','))),
                                      newline));
        const __m128i k1f = _mm_set1_epi8(0x1f);
        auto bits = [](__m128i x) {
            return static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(x)));
        };
        const int shift = 16 * i;
        m.backslash |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))) << shift;
        m.quote |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))) << shift;
        m.newline |= bits(newline) << shift;
        m.control |= bits(_mm_cmpeq_epi8(_mm_max_epu8(v, k1f), k1f)) << shift;
        m.punctuation |= bits(punctuation) << shift;
    }
    return m;
}

// The same with AVX2, two 32-byte steps (used where the processor has it).
__attribute__((target("avx2"))) BlockMasks classify_avx2(const char* p) {
    BlockMasks m{};
    const __m256i bit20 = _mm256_set1_epi8(0x20);
    for (int i = 0; i < 2; ++i) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * i));
        const __m256i folded = _mm256_or_si256(v, bit20);
        const __m256i newline = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\n'));
        const __m256i punctuation = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8('{')),
                            _mm256_cmpeq_epi8(folded, _mm256_set1_epi8('}'))),
            _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(':')),
                                            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(','))),
                            newline));
        const __m256i k1f = _mm256_set1_epi8(0x1f);
        auto bits = [](__m256i x) __attribute__((target("avx2"))) {
            return static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm256_movemask_epi8(x)));
        };
        const int shift = 32 * i;
        m.backslash |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))) << shift;
        m.quote |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'))) << shift;
        m.newline |= bits(newline) << shift;
        m.control |= bits(_mm256_cmpeq_epi8(_mm256_max_epu8(v, k1f), k1f)) << shift;
        m.punctuation |= bits(punctuation) << shift;
    }
    return m;
}

// Every bit set from each set bit of `x` up to (not including) the next: the inside of strings
// from their unescaped quotes.
std::uint64_t prefix_xor(std::uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

// The characters escaped by a backslash (the one after an odd run of backslashes), carrying a
// run that ends a block into the next through `carry`.
std::uint64_t escaped_chars(std::uint64_t backslash, std::uint64_t& carry) {
    constexpr std::uint64_t even = 0x5555555555555555ULL;
    backslash &= ~carry;  // a backslash escaped by the last one of the block before
    const std::uint64_t follows = (backslash << 1) | carry;
    const std::uint64_t odd_starts = backslash & ~even & ~follows;
    std::uint64_t even_runs = 0;
    carry = __builtin_add_overflow(odd_starts, backslash, &even_runs) ? 1 : 0;
    return (even ^ (even_runs << 1)) & follows;
}

struct ProbeIndex {
    std::vector<std::string_view> ids;
    std::vector<std::uint32_t> parents;  // position + 1; 0 for none
    std::vector<std::uint8_t> types;     // 0 message, 1 other
    std::vector<std::uint32_t> table;    // position + 1, open addressing
    std::size_t errors = 0;
    std::size_t structurals = 0;  // counted by a pass without the walk

    static std::uint64_t hash(std::string_view s) {
        std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ s.size();
        std::size_t i = 0;
        for (; i + 8 <= s.size(); i += 8) {
            std::uint64_t w = 0;
            std::memcpy(&w, s.data() + i, 8);
            h = (h ^ w) * 0xff51afd7ed558ccdULL;
        }
        std::uint64_t w = 0;
        std::memcpy(&w, s.data() + i, s.size() - i);
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
        return h ^ (h >> 29);
    }
    std::uint32_t find(std::string_view id) const {
        const std::size_t mask = table.size() - 1;
        for (std::size_t slot = hash(id) & mask;; slot = (slot + 1) & mask) {
            const std::uint32_t at = table[slot];
            if (at == 0 || ids[at - 1] == id) return at;
        }
    }
    void add(std::string_view id, std::string_view parent, bool message) {
        if (ids.size() * 2 >= table.size()) {
            std::vector<std::uint32_t> old(std::max<std::size_t>(1024, table.size() * 2), 0);
            old.swap(table);
            const std::size_t mask = table.size() - 1;
            for (std::uint32_t at : old) {
                if (at == 0) continue;
                std::size_t slot = hash(ids[at - 1]) & mask;
                while (table[slot] != 0) slot = (slot + 1) & mask;
                table[slot] = at;
            }
        }
        std::uint32_t parent_at = 0;
        if (!parent.empty()) {
            parent_at = find(parent);
            if (parent_at == 0) ++errors;  // a parent that does not exist
        }
        const std::size_t mask = table.size() - 1;
        std::size_t slot = hash(id) & mask;
        while (table[slot] != 0) {
            if (ids[table[slot] - 1] == id) {
                ++errors;  // a duplicate id
                return;
            }
            slot = (slot + 1) & mask;
        }
        ids.push_back(id);
        parents.push_back(parent_at);
        types.push_back(message ? 0 : 1);
        table[slot] = static_cast<std::uint32_t>(ids.size());
    }
};

// The block pass over a whole file: each line's top-level "id", "parentId" (or "parent_id") and
// "type" strings, found from the structural characters outside strings and the quotes.
template <BlockMasks (*Classify)(const char*), bool Walk>
[[gnu::always_inline]] inline ProbeIndex probe_pass(std::string_view text,
                                                    std::size_t expected_lines) {
    ProbeIndex index;
    index.ids.reserve(expected_lines);
    index.parents.reserve(expected_lines);
    index.types.reserve(expected_lines);

    static constexpr auto valid_escape = [] {
        std::array<std::uint8_t, 256> t{};
        for (const char c : std::string_view("\"\\/bfnrtu")) t[static_cast<unsigned char>(c)] = 1;
        return t;
    }();

    static constexpr auto depth_change = [] {
        std::array<std::int8_t, 256> t{};
        t['{'] = t['['] = 1;
        t['}'] = t[']'] = -1;
        return t;
    }();

    std::uint64_t escape_carry = 0;
    std::uint64_t in_string_carry = 0;  // all ones while a string goes on into the next block
    std::size_t bad = 0;
    int depth = 0;
    // Per line: the key just read at depth 1 (0 none, 1 id, 2 parent, 3 type, 4 other), whether
    // the next string at depth 1 is a value, and where the string being read started.
    int key = 0;
    bool value_next = false;
    std::size_t string_start = 0;
    std::string_view id, parent, type;
    std::size_t line_start = 0;
    bool header = true;  // the first line is the session's header, not an entry

    const std::size_t n = text.size();
    alignas(16) char tail[64];
    for (std::size_t base = 0; base < n; base += 64) {
        const char* p = text.data() + base;
        if (n - base < 64) {
            std::memset(tail, ' ', sizeof tail);
            std::memcpy(tail, p, n - base);
            p = tail;
        }
        const BlockMasks m = Classify(p);
        const std::uint64_t escaped = escaped_chars(m.backslash, escape_carry);
        const std::uint64_t quotes = m.quote & ~escaped;
        const std::uint64_t in_string = prefix_xor(quotes) ^ in_string_carry;
        in_string_carry = static_cast<std::uint64_t>(static_cast<std::int64_t>(in_string) >> 63);
        // Control characters are wrong inside strings, and outside them only blanks are allowed
        // (rare: each is looked at).
        bad += (m.control & in_string) != 0;
        for (std::uint64_t c = m.control & ~in_string & ~m.newline; c != 0; c &= c - 1)
            bad += p[__builtin_ctzll(c)] != '\t' && p[__builtin_ctzll(c)] != '\r';
        bad += (m.backslash & ~in_string) != 0;
        // Each escaped character must be one JSON allows (\u's hex digits are left out).
        for (std::uint64_t e = escaped; e != 0; e &= e - 1)
            bad += valid_escape[static_cast<unsigned char>(p[__builtin_ctzll(e)])] ^ 1U;
        const std::uint64_t structural = (m.punctuation & ~in_string) | quotes;
        if constexpr (!Walk) {
            index.structurals += static_cast<std::size_t>(__builtin_popcountll(structural));
            continue;
        }
        for (std::uint64_t s = structural; s != 0; s &= s - 1) {
            const unsigned bit = static_cast<unsigned>(__builtin_ctzll(s));
            const std::size_t at = base + bit;
            // Depth and "a value follows" change without a branch; the quotes and line ends
            // branch (a closing quote only at depth 1).
            const unsigned char c = static_cast<unsigned char>(p[bit]);
            depth += depth_change[c];
            if (c == '"') {
                if ((in_string >> bit) & 1U) {
                    string_start = at + 1;
                } else if (depth == 1) {
                    const std::string_view str(text.data() + string_start, at - string_start);
                    if (!value_next) {
                        key = str == "id"                               ? 1
                              : str == "parentId" || str == "parent_id" ? 2
                              : str == "type"                           ? 3
                                                                        : 4;
                    } else {
                        if (key == 1) id = str;
                        if (key == 2) parent = str;
                        if (key == 3) type = str;
                        value_next = false;
                    }
                }
            } else if (c == '\n') {
                if (depth != 0 || text[line_start] != '{' || id.empty() || type.empty()) {
                    ++bad;
                } else if (header) {
                    header = false;
                } else {
                    index.add(id, parent, type == "message");
                }
                depth = 0;
                id = parent = type = {};
                key = 0;
                line_start = at + 1;
            } else {
                value_next = (c == ':' && depth == 1) | (value_next & (c != ',') & (c != '{'));
            }
        }
    }
    index.errors += bad;
    return index;
}

ProbeIndex probe_sse2(std::string_view text, std::size_t lines) {
    return probe_pass<classify_sse2, true>(text, lines);
}
__attribute__((target("avx2"))) ProbeIndex probe_avx2(std::string_view text, std::size_t lines) {
    return probe_pass<classify_avx2, true>(text, lines);
}
// The masks, the escape and control checks, and no walk over the structural characters.
ProbeIndex masks_sse2(std::string_view text, std::size_t lines) {
    return probe_pass<classify_sse2, false>(text, lines);
}
__attribute__((target("avx2"))) ProbeIndex masks_avx2(std::string_view text, std::size_t lines) {
    return probe_pass<classify_avx2, false>(text, lines);
}

double median_ms(std::size_t runs, const std::function<void()>& fn) {
    Samples s;
    for (std::size_t r = 0; r < runs; ++r) {
        const double c0 = thread_cpu_seconds();
        fn();
        s.add((thread_cpu_seconds() - c0) * 1e3);
    }
    return s.median();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::string_view(argv[1]).substr(0, 2) == "--") {
        std::fprintf(stderr, "usage: bench_scan_probe FILE [--runs N]\n");
        return 2;
    }
    const std::string path = argv[1];
    std::size_t runs = 5;
    for (int i = 2; i + 1 < argc; i += 2)
        if (std::string_view(argv[i]) == "--runs") runs = std::stoul(argv[i + 1]);

    std::vector<char> buffer(std::size_t{1} << 20);
    const std::size_t lines = read_file_floor(path, buffer, true);
    std::size_t bytes = 0;
    {
        const Mapped file(path);
        bytes = file.text.size();
    }
    Report report("a block-at-a-time scan (probe) beside the library's open, thread CPU time");
    report.param("file", path);
    report.param("bytes", bytes);
    report.param("lines", lines);
    report.param("runs", runs);

    const double read_ms =
        median_ms(runs, [&] { do_not_optimize(read_file_floor(path, buffer, false)); });
    const double floor_ms =
        median_ms(runs, [&] { do_not_optimize(read_file_floor(path, buffer, true)); });
    JsonlStorageOptions one_thread;
    one_thread.open_threads = 1;
    std::size_t entries = 0;
    const double open_ms = median_ms(runs, [&] {
        auto session = JsonlSessionStorage::open_read_only(path, one_thread);
        entries = session.entry_count();
    });
    auto ratio = [&](double ms) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.1fx read()+memchr", ms / floor_ms);
        return std::string(buf);
    };
    report.add("floor: read() of the whole file", read_ms, "ms", "");
    report.add("floor: read() + memchr of every line end", floor_ms, "ms", "");
    report.add("library: open_read_only, one thread (index only)", open_ms, "ms",
               ratio(open_ms) + "; " + std::to_string(entries) + " entries");

    bool agrees = true;
    const Mapped resident(path);
    auto probe = [&](const char* name, ProbeIndex (*pass)(std::string_view, std::size_t)) {
        std::size_t probe_entries = 0, probe_errors = 0;
        const double mapped_ms = median_ms(runs, [&] {
            const Mapped file(path);
            const ProbeIndex index = pass(file.text, lines);
            probe_entries = index.ids.size();
            probe_errors = index.errors;
        });
        pass(resident.text, lines);  // every page read in once
        const double pass_ms = median_ms(runs, [&] {
            const ProbeIndex index = pass(resident.text, lines);
            do_not_optimize(index.ids.size());
        });
        agrees = agrees && probe_errors == 0 && probe_entries == entries;
        report.add(std::string("probe, ") + name + ": mmap + block pass + id table", mapped_ms,
                   "ms",
                   ratio(mapped_ms) + "; " + std::to_string(probe_entries) + " entries, " +
                       std::to_string(probe_errors) + " errors");
        char speed[64];
        std::snprintf(speed, sizeof speed, "%.0f MB/s",
                      static_cast<double>(bytes) / (pass_ms * 1e3));
        report.add(std::string("probe, ") + name + ": the same, pages already mapped", pass_ms,
                   "ms", ratio(pass_ms) + "; " + speed);
    };
    probe("SSE2", probe_sse2);
    if (__builtin_cpu_supports("avx2")) probe("AVX2", probe_avx2);
    // How much of that the walk over the structural characters costs: the pass without it.
    auto masks_only = [&](const char* name, ProbeIndex (*pass)(std::string_view, std::size_t)) {
        std::size_t structurals = 0;
        const double ms =
            median_ms(runs, [&] { structurals = pass(resident.text, lines).structurals; });
        report.add(std::string("probe, ") + name + ": masks and string checks only, no walk", ms,
                   "ms",
                   ratio(ms) + "; " + std::to_string(structurals) +
                       " structural characters left unwalked");
    };
    masks_only("SSE2", masks_sse2);
    if (__builtin_cpu_supports("avx2")) masks_only("AVX2", masks_avx2);
    report.print(argc > 2 && std::string_view(argv[argc - 1]) == "--json");
    return agrees ? 0 : 1;
}
#endif

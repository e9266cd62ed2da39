#pragma once
// Decoding and encoding many entries at once, on several threads: what a storage's get_entries
// does for a page of entries it has not decoded yet, and what a storage created with many
// entries does to write their lines (a copy or an export reads and writes every entry).

#include <agentcore/codec.hpp>
#include <agentcore/detail/threads.hpp>
#include <agentcore/entries.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentcore::detail {

/// A batch smaller than this many bytes is decoded by the calling thread alone: starting a
/// thread costs about as much as decoding a few kilobytes of lines.
inline constexpr std::size_t min_parallel_decode_bytes = std::size_t{64} << 10;

/// The lines of a batch a thread takes at a time.
inline constexpr std::size_t decode_chunk_lines = 32;

/// Calls `each(i)` for every i in [0, n), on up to `threads` threads (the calling one included),
/// each taking decode_chunk_lines indexes at a time. `each` must not throw.
template <class Each>
void for_each_index(std::size_t n, std::size_t threads, const Each& each) {
    struct Work {
        std::size_t n;
        const Each* each;
        SharedCounter<std::size_t> next{0};

        void operator()() noexcept {
            for (;;) {
                const std::size_t first = next.fetch_add(decode_chunk_lines);
                if (first >= n) return;
                const std::size_t last = std::min(n, first + decode_chunk_lines);
                for (std::size_t i = first; i < last; ++i) (*each)(i);
            }
        }
    };
    Work work{n, &each};
    run_on_threads(std::max<std::size_t>(threads, 1), work);
}

/// The entries of `lines` (each in `dialect`), decoded by up to `threads` threads (the calling
/// one included; one for a batch under min_parallel_decode_bytes). A line the codec refuses, or
/// that memory cannot hold, is left null: the caller decodes it again on its own to report the
/// error as it always does, so that the first bad line in order is the one reported. Never
/// throws but std::bad_alloc from the result's own allocation.
template <class = void>
std::vector<EntryHandle> decode_lines(const std::vector<std::string_view>& lines, Dialect dialect,
                                      std::size_t threads) {
    std::vector<EntryHandle> out(lines.size());
    std::size_t bytes = 0;
    for (const auto line : lines) bytes += line.size();
    for_each_index(
        lines.size(), bytes >= min_parallel_decode_bytes ? threads : 1,
        [&](std::size_t i) noexcept {
            try {
                out[i] = std::make_shared<const SessionTreeEntry>(decode_entry(lines[i], dialect));
            } catch (...) {
                // Left null: the caller reports it.
            }
        });
    return out;
}

/// The lines of `entries` from `first` to before `last` (encode_entry in `dialect`; the line of
/// entry `first + i` at `i`), encoded by up to `threads` threads (the calling one included; one
/// for fewer than decode_chunk_lines * 4 entries). An entry the codec cannot encode is left
/// nullopt: the caller encodes it again on its own, in its order, to report the error as it
/// always does.
template <class = void>
std::vector<std::optional<std::string>> encode_lines(const std::vector<SessionTreeEntry>& entries,
                                                     std::size_t first, std::size_t last,
                                                     Dialect dialect, std::size_t threads) {
    const std::size_t n = last - first;
    std::vector<std::optional<std::string>> out(n);
    for_each_index(n, n >= decode_chunk_lines * 4 ? threads : 1, [&](std::size_t i) noexcept {
        try {
            out[i] = encode_entry(entries[first + i], dialect);
        } catch (...) {
            // Left nullopt: the caller reports it.
        }
    });
    return out;
}

/// The threads a storage decodes a batch of lines with: the machine's, at most 8.
inline std::size_t decode_threads() noexcept { return std::min<std::size_t>(online_cpus(), 8); }

}  // namespace agentcore::detail

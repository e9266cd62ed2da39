#pragma once
// Saturating sums of token counts: a hostile or damaged file may hold counts near INT64_MAX,
// and a sum that overflowed would wrap to a negative (or small) number without a word.

#include <cstdint>
#include <limits>

namespace agentcore::detail {

/// a + b, clamped to [INT64_MIN, INT64_MAX] instead of overflowing.
constexpr std::int64_t saturating_add(std::int64_t a, std::int64_t b) noexcept {
    std::int64_t sum = 0;
    if (!__builtin_add_overflow(a, b, &sum)) return sum;
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
}

}  // namespace agentcore::detail

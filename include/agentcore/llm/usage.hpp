#pragma once
// Token counts and their cost: the price table an application passes, and the checked reading of
// the counts a provider reports.

#include <agentcore/json.hpp>
#include <agentcore/messages.hpp>

#include <cmath>
#include <cstdint>
#include <string_view>

namespace agentcore::llm {

/// What a model costs, in dollars per million tokens (the figures providers publish).
struct Prices {
    double input = 0;
    double output = 0;
    double cache_read = 0;
    double cache_write = 0;
};

/// Fills `usage.cost` from the token counts and a price table (total = the sum of the four).
///
/// Complexity: constant.
/// Example: `apply_prices(message.usage, Prices{3, 15, 0.3, 3.75});`
inline void apply_prices(Usage& usage, const Prices& prices) noexcept {
    usage.cost.input = prices.input / 1e6 * static_cast<double>(usage.input);
    usage.cost.output = prices.output / 1e6 * static_cast<double>(usage.output);
    usage.cost.cache_read = prices.cache_read / 1e6 * static_cast<double>(usage.cache_read);
    usage.cost.cache_write = prices.cache_write / 1e6 * static_cast<double>(usage.cache_write);
    usage.cost.total =
        usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write;
}

/// The largest token count a parser keeps: a reported count above it (or a count that is not a
/// finite number) is clamped, so that sums of counts never overflow.
inline constexpr std::int64_t max_token_count = 1'000'000'000'000'000;  // 10^15

namespace detail {

// A token count from an untrusted JSON value: a missing, negative or non-numeric value is 0, a
// fraction is truncated, a huge value is clamped to max_token_count.
inline std::int64_t token_count(const Json* value) noexcept {
    if (value == nullptr) return 0;
    if (value->is_number_unsigned()) {
        const auto v = value->get<std::uint64_t>();
        return v > static_cast<std::uint64_t>(max_token_count) ? max_token_count
                                                               : static_cast<std::int64_t>(v);
    }
    if (value->is_number_integer()) {
        const auto v = value->get<std::int64_t>();
        return v < 0 ? 0 : (v > max_token_count ? max_token_count : v);
    }
    if (value->is_number_float()) {
        const double v = value->get<double>();
        if (!std::isfinite(v) || v <= 0) return v > 0 ? max_token_count : 0;
        return v >= static_cast<double>(max_token_count) ? max_token_count
                                                         : static_cast<std::int64_t>(v);
    }
    return 0;
}

// The member `key` of an object, or null when `j` is not an object or has no such member.
inline const Json* member(const Json* j, std::string_view key) noexcept {
    if (j == nullptr || !j->is_object()) return nullptr;
    auto it = j->find(key);
    return it == j->end() ? nullptr : &*it;
}
inline const Json* member(const Json& j, std::string_view key) noexcept { return member(&j, key); }

inline std::int64_t count_at(const Json* j, std::string_view key) noexcept {
    return token_count(member(j, key));
}

inline void finish_usage(Usage& usage, const Prices& prices) noexcept {
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write;
    apply_prices(usage, prices);
}

}  // namespace detail
}  // namespace agentcore::llm

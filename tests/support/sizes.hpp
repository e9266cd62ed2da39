#pragma once
// How big the long property, fault and race loops run. Under a sanitizer every process and every
// allocation is several times slower, so those loops run at a quarter of their size there (and
// an exhaustive one visits every fourth case): the sanitizer still sees each kind of case, and
// the plain g++ and clang++ builds run every loop whole. A loop's size may also be set by an
// environment variable (from_env), for longer runs by hand.

#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace agentcore::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool sanitized_build = true;
#else
inline constexpr bool sanitized_build = false;
#endif
#else
inline constexpr bool sanitized_build = false;
#endif

/// The divisor of a loop's size in this build: 4 under a sanitizer, 1 otherwise.
inline constexpr std::size_t size_divisor = sanitized_build ? 4 : 1;

/// A loop's size in this build: `full`, or a quarter of it (at least 1) under a sanitizer.
constexpr std::size_t sized(std::size_t full) {
    return full / size_divisor > 0 ? full / size_divisor : 1;
}

/// The loop size the environment variable `name` sets, or `fallback` when it is unset or empty.
/// A value must be a positive whole number in decimal (`AGENTCORE_KILL_LOOPS=5000`): anything
/// else throws std::invalid_argument naming the variable and its value, so a mistyped size
/// stops the test instead of running it with a size nobody asked for (or none at all).
inline std::size_t from_env(const char* name, std::size_t fallback) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return fallback;
    const std::string text(v);
    const bool digits = text.find_first_not_of("0123456789") == std::string::npos;
    // More than 18 digits could overflow; no loop is that long.
    const unsigned long long n = digits && text.size() <= 18 ? std::strtoull(v, nullptr, 10) : 0;
    if (n == 0)
        throw std::invalid_argument(std::string(name) + "='" + text +
                                    "': a loop size must be a positive whole number");
    return static_cast<std::size_t>(n);
}

}  // namespace agentcore::testing

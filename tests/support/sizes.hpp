#pragma once
// How big the long property, fault and race loops run. Under a sanitizer every process and every
// allocation is several times slower, so those loops run at a quarter of their size there (and
// an exhaustive one visits every fourth case): the sanitizer still sees each kind of case, and
// the plain g++ and clang++ builds run every loop whole.

#include <cstddef>

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

}  // namespace agentcore::testing

#pragma once
// Ids, time and their injection points (SPEC §4.1).

#include <agentcore/error.hpp>

#include <agentcore/detail/chrono.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <sys/random.h>

namespace agentcore {

namespace detail {

/// The 64-bit Mersenne Twister: the numbers of std::mt19937_64, without <random> (a noticeable
/// part of every translation unit's compile time, for one generator).
class Mt19937_64 {
public:
    explicit Mt19937_64(std::uint64_t seed) noexcept {
        state_[0] = seed;
        for (std::size_t i = 1; i < n; ++i)
            state_[i] = 6364136223846793005ULL * (state_[i - 1] ^ (state_[i - 1] >> 62)) + i;
        next_ = n;
    }

    std::uint64_t operator()() noexcept {
        if (next_ >= n) twist();
        std::uint64_t y = state_[next_++];
        y ^= (y >> 29) & 0x5555555555555555ULL;
        y ^= (y << 17) & 0x71d67fffeda60000ULL;
        y ^= (y << 37) & 0xfff7eee000000000ULL;
        y ^= y >> 43;
        return y;
    }

private:
    static constexpr std::size_t n = 312;
    static constexpr std::size_t m = 156;

    void twist() noexcept {
        constexpr std::uint64_t upper = ~std::uint64_t{0} << 31;
        constexpr std::uint64_t lower = ~upper;
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t y = (state_[i] & upper) | (state_[(i + 1) % n] & lower);
            state_[i] =
                state_[(i + m) % n] ^ (y >> 1) ^ ((y & 1U) != 0 ? 0xb5026f5aa96619e9ULL : 0);
        }
        next_ = 0;
    }

    std::array<std::uint64_t, n> state_{};
    std::size_t next_ = n;
};

/// 64 bits from the kernel's random source (getrandom); should that fail, the clock and an
/// address mixed, which still differ between processes.
inline std::uint64_t random_seed() noexcept {
    std::uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) == static_cast<ssize_t>(sizeof seed)) return seed;
    const auto now =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    return now ^ (reinterpret_cast<std::uintptr_t>(&seed) * 0x9e3779b97f4a7c15ULL);
}

}  // namespace detail

/// Where time and randomness come from. Inject both to make ids and timestamps deterministic.
struct Environment {
    std::function<std::int64_t()> now_ms;   ///< current time, Unix ms
    std::function<std::uint64_t()> random;  ///< 64 random bits

    /// The system clock and a random generator seeded from the kernel's randomness.
    static Environment system() {
        auto engine = std::make_shared<detail::Mt19937_64>(detail::random_seed());
        return Environment{[] {
                               return static_cast<std::int64_t>(
                                   std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
                           },
                           [engine] { return (*engine)(); }};
    }

    /// A fixed start time that advances by `step_ms` per call, and a generator seeded with
    /// `seed` (the numbers of std::mt19937_64 seeded alike).
    static Environment deterministic(std::int64_t start_ms, std::uint64_t seed,
                                     std::int64_t step_ms = 1) {
        auto now = std::make_shared<std::int64_t>(start_ms);
        auto engine = std::make_shared<detail::Mt19937_64>(seed);
        return Environment{[now, step_ms] {
                               std::int64_t t = *now;
                               *now += step_ms;
                               return t;
                           },
                           [engine] { return (*engine)(); }};
    }
};

namespace detail {

inline constexpr char hex_digits[] = "0123456789abcdef";

template <class = void>
void append_hex(std::string& out, std::uint64_t value, int digits) {
    for (int i = digits - 1; i >= 0; --i) out.push_back(hex_digits[(value >> (4 * i)) & 0xF]);
}

// Days since 1970-01-01 to civil date (Howard Hinnant's algorithm).
template <class = void>
void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = static_cast<std::int64_t>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2) ++y;
}

template <class = void>
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace detail

/// Formats Unix ms as ISO 8601 UTC with milliseconds: "2026-12-02T07:43:23.123Z".
template <class = void>
std::string format_timestamp(std::int64_t unix_ms) {
    std::int64_t days = unix_ms >= 0 ? unix_ms / 86400000 : -((-unix_ms + 86399999) / 86400000);
    std::int64_t ms_of_day = unix_ms - days * 86400000;
    std::int64_t y = 0;
    unsigned m = 0, d = 0;
    detail::civil_from_days(days, y, m, d);
    if (y >= 0 && y <= 9999) {
        // The common case, digit by digit ("YYYY-MM-DDTHH:MM:SS.fffZ": 24 characters).
        std::string out = "0000-00-00T00:00:00.000Z";
        auto put = [&out](std::size_t at, std::size_t width, std::uint64_t value) {
            for (std::size_t i = width; i-- > 0; value /= 10)
                out[at + i] = static_cast<char>('0' + value % 10);
        };
        const auto ms = static_cast<std::uint64_t>(ms_of_day);
        put(0, 4, static_cast<std::uint64_t>(y));
        put(5, 2, m);
        put(8, 2, d);
        put(11, 2, ms / 3600000);
        put(14, 2, ms / 60000 % 60);
        put(17, 2, ms / 1000 % 60);
        put(20, 3, ms % 1000);
        return out;
    }
    char buf[96];  // room for any int64 year: no truncation is possible
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ",
                  static_cast<long long>(y), m, d, static_cast<long long>(ms_of_day / 3600000),
                  static_cast<long long>(ms_of_day / 60000 % 60),
                  static_cast<long long>(ms_of_day / 1000 % 60),
                  static_cast<long long>(ms_of_day % 1000));
    return buf;
}

/// Parses an ISO 8601 timestamp ("YYYY-MM-DDTHH:MM:SS[.fff...][Z|±HH:MM]") to Unix ms.
/// Returns false for text that is not such a timestamp.
template <class = void>
bool parse_timestamp(std::string_view text, std::int64_t& unix_ms) {
    auto digits = [&](std::size_t pos, std::size_t count, std::int64_t& out) {
        if (pos + count > text.size()) return false;
        out = 0;
        for (std::size_t i = pos; i < pos + count; ++i) {
            if (text[i] < '0' || text[i] > '9') return false;
            out = out * 10 + (text[i] - '0');
        }
        return true;
    };
    std::int64_t y, mo, d, h, mi, s;
    if (!digits(0, 4, y) || text.size() < 19 || text[4] != '-' || !digits(5, 2, mo) ||
        text[7] != '-' || !digits(8, 2, d) ||
        (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !digits(11, 2, h) ||
        text[13] != ':' || !digits(14, 2, mi) || text[16] != ':' || !digits(17, 2, s))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return false;
    std::size_t pos = 19;
    std::int64_t ms = 0;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        int n = 0;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
            if (n < 3) ms = ms * 10 + (text[pos] - '0');
            ++n;
            ++pos;
        }
        if (n == 0) return false;
        for (; n < 3; ++n) ms *= 10;
    }
    std::int64_t offset_min = 0;
    if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
        ++pos;
    } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
        std::int64_t oh, om;
        const bool minus = text[pos] == '-';
        if (!digits(pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
            !digits(pos + 4, 2, om))
            return false;
        offset_min = (minus ? -1 : 1) * (oh * 60 + om);
        pos += 6;
    }
    if (pos != text.size()) return false;
    const std::int64_t days =
        detail::days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
    unix_ms = ((days * 24 + h) * 60 + mi) * 60000 + s * 1000 + ms - offset_min * 60000;
    return true;
}

/// A UUIDv7 string (time-ordered): 48 bits of Unix ms, then random bits.
template <class = void>
std::string make_uuid_v7(const Environment& env) {
    const auto ms = static_cast<std::uint64_t>(env.now_ms());
    const std::uint64_t r1 = env.random();
    const std::uint64_t r2 = env.random();
    std::string out;
    out.reserve(36);
    detail::append_hex(out, ms >> 16, 8);
    out.push_back('-');
    detail::append_hex(out, ms & 0xFFFF, 4);
    out.push_back('-');
    detail::append_hex(out, 0x7000 | (r1 & 0x0FFF), 4);
    out.push_back('-');
    detail::append_hex(out, 0x8000 | ((r1 >> 12) & 0x3FFF), 4);
    out.push_back('-');
    detail::append_hex(out, r2 & 0xFFFFFFFFFFFFULL, 12);
    return out;
}

/// A new entry id: 8 lowercase hex characters for which `taken(id)` is false; after 100
/// collisions, a full UUIDv7 string (SPEC §4.1).
template <class Taken>
std::string make_entry_id(const Environment& env, Taken&& taken) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::string id;
        id.reserve(8);
        detail::append_hex(id, env.random() & 0xFFFFFFFFULL, 8);
        if (!taken(id)) return id;
    }
    return make_uuid_v7(env);
}

/// True when `id` may name a session: [A-Za-z0-9][A-Za-z0-9._-]{0,127}. Such an id is safe to
/// use as part of a file name.
constexpr bool is_valid_session_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > 128) return false;
    auto alnum = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    };
    if (!alnum(id[0])) return false;
    for (char c : id.substr(1))
        if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
    return true;
}

/// Throws invalid_session unless `id` is a valid session id.
template <class = void>
void check_session_id(std::string_view id) {
    if (!is_valid_session_id(id)) {
        std::string shown;
        for (char c : id.substr(0, 64)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
        throw SessionError(
            ErrorCode::invalid_session,
            "invalid session id '" + shown + "': must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    }
}

}  // namespace agentcore

#pragma once
// Fixed-width little binary records: what the JSONL storage's resume index is written in (see
// jsonl/jsonl_storage.hpp). Integers in the machine's byte order (a file written on another
// order fails its magic check and is rebuilt), strings as a 32-bit length and their bytes. A
// reader never reads past its input: every get returns false on a short or malformed record.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace agentcore::detail {

/// Appends fixed-width values to a byte string.
class ByteWriter {
public:
    explicit ByteWriter(std::string& out) noexcept : out_(&out) {}

    template <class T>
    void put(T value) {
        char bytes[sizeof(T)];
        std::memcpy(bytes, &value, sizeof(T));
        out_->append(bytes, sizeof(T));
    }
    void put_string(std::string_view s) {
        put(static_cast<std::uint32_t>(s.size()));
        out_->append(s);
    }

private:
    std::string* out_;
};

/// Reads what ByteWriter wrote; false (and the value untouched) past the end.
class ByteReader {
public:
    explicit ByteReader(std::string_view in) noexcept : in_(in) {}

    template <class T>
    [[nodiscard]] bool get(T& value) noexcept {
        if (in_.size() < sizeof(T)) return false;
        std::memcpy(&value, in_.data(), sizeof(T));
        in_.remove_prefix(sizeof(T));
        return true;
    }
    [[nodiscard]] bool get_string(std::string_view& s) noexcept {
        std::uint32_t n = 0;
        if (!get(n) || in_.size() < n) return false;
        s = in_.substr(0, n);
        in_.remove_prefix(n);
        return true;
    }
    [[nodiscard]] std::size_t left() const noexcept { return in_.size(); }

private:
    std::string_view in_;
};

/// A 64-bit hash of `bytes`, 32 bytes at a time in four independent lanes (not cryptographic:
/// it tells a file that changed from one that did not, and a torn record from a whole one).
inline std::uint64_t hash_bytes(std::string_view bytes) noexcept {
    constexpr std::uint64_t k = 0x9e3779b97f4a7c15ULL;
    auto mix = [](std::uint64_t h, std::uint64_t w) {
        h = (h ^ w) * k;
        return h ^ (h >> 29);
    };
    std::uint64_t lane[4] = {0x243f6a8885a308d3ULL ^ bytes.size(), 0x13198a2e03707344ULL,
                             0xa4093822299f31d0ULL, 0x082efa98ec4e6c89ULL};
    std::size_t i = 0;
    for (; i + 32 <= bytes.size(); i += 32)
        for (std::size_t l = 0; l < 4; ++l) {
            std::uint64_t w = 0;
            std::memcpy(&w, bytes.data() + i + 8 * l, 8);
            lane[l] = mix(lane[l], w);
        }
    std::uint64_t h = mix(mix(lane[0], lane[1]), mix(lane[2], lane[3]));
    for (; i + 8 <= bytes.size(); i += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, bytes.data() + i, 8);
        h = mix(h, w);
    }
    std::uint64_t tail = 0;
    if (i < bytes.size()) std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
    return mix(mix(h, tail), bytes.size());
}

}  // namespace agentcore::detail

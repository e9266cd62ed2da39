#pragma once
// What every benchmark program shares: timing, medians and percentiles, peak memory from /proc,
// the machine's description, a result table printed aligned or as JSON, and argument parsing.
//
// The arguments are a handful of numeric flags, so they are parsed by hand here rather than with
// CLI11: the benchmarks then build wherever the library builds, with nothing else installed.

#include <agentcore/json.hpp>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace agentcore_bench {

using agentcore::Json;
using Clock = std::chrono::steady_clock;

/// Seconds since `start`.
inline double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Keeps the compiler from optimising a value (and the work that made it) away.
template <class T>
inline void do_not_optimize(const T& value) {
    asm volatile("" : : "r,m"(value) : "memory");
}

/// The read floors: reads the whole file with read() into `buffer` (reused; 1 MiB is what the
/// benchmarks use); with `split`, also finds every line end with memchr. Returns the bytes (or
/// the lines) seen.
inline std::size_t read_file_floor(const std::string& path, std::vector<char>& buffer, bool split) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    std::size_t total = 0, lines = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n < 0) {
            ::close(fd);
            throw std::runtime_error("cannot read " + path);
        }
        if (n == 0) break;
        const auto got = static_cast<std::size_t>(n);
        total += got;
        if (split) {
            const char* p = buffer.data();
            const char* end = p + got;
            while (p < end) {
                const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
                if (nl == nullptr) break;
                ++lines;
                p = static_cast<const char*>(nl) + 1;
            }
        }
    }
    ::close(fd);
    return split ? lines : total;
}

/// Summary of repeated timings, in the unit they were recorded in.
struct Samples {
    std::vector<double> values;

    void add(double v) { values.push_back(v); }
    [[nodiscard]] std::size_t size() const noexcept { return values.size(); }

    [[nodiscard]] double percentile(double p) const {
        if (values.empty()) return 0;
        std::vector<double> sorted = values;
        std::sort(sorted.begin(), sorted.end());
        const auto rank =
            static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
        return sorted[std::min(rank, sorted.size() - 1)];
    }
    [[nodiscard]] double median() const { return percentile(50); }
    [[nodiscard]] double mean() const {
        if (values.empty()) return 0;
        return std::accumulate(values.begin(), values.end(), 0.0) /
               static_cast<double>(values.size());
    }
};

/// CPU time of the calling thread, in seconds. The figures of CPU-bound work use it rather than
/// the wall clock: the benchmark machine may be shared, and time the scheduler gives to other
/// processes is not the library's.
inline double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Which clock a timing reads.
enum class TimeSource { thread_cpu, wall };

inline double read_clock(TimeSource source) {
    if (source == TimeSource::thread_cpu) return thread_cpu_seconds();
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

/// Times `fn` repeatedly and returns the time per call in microseconds, one sample per batch.
/// A batch repeats `fn` enough times to last ~200 us (so that reading the clock costs
/// nothing); sampling goes on for at least `min_samples` batches and `min_seconds`, at most
/// `max_calls` calls in all.
template <class Fn>
Samples time_runs_us(Fn&& fn, std::size_t min_samples, double min_seconds,
                     std::size_t max_calls = 1000000, TimeSource source = TimeSource::thread_cpu) {
    double t0 = read_clock(source);
    fn();
    const double once = read_clock(source) - t0;
    const auto batch =
        static_cast<std::size_t>(std::clamp(200e-6 / std::max(once, 1e-9), 1.0, 10000.0));
    Samples s;
    std::size_t calls = 1;
    const auto start = Clock::now();
    while (calls + batch <= max_calls &&
           (s.size() < min_samples || seconds_since(start) < min_seconds)) {
        t0 = read_clock(source);
        for (std::size_t i = 0; i < batch; ++i) fn();
        s.add((read_clock(source) - t0) * 1e6 / static_cast<double>(batch));
        calls += batch;
    }
    return s;
}

/// Nanoseconds per call of `fn(i)` (i = 0, 1, ...): the median over `batches` batches of
/// `per_batch` calls, in thread CPU time.
template <class Fn>
double time_per_call_ns(Fn&& fn, std::size_t per_batch = 20000, std::size_t batches = 51) {
    Samples s;
    std::size_t i = 0;
    for (std::size_t b = 0; b < batches; ++b) {
        const double t0 = thread_cpu_seconds();
        for (std::size_t k = 0; k < per_batch; ++k) fn(i++);
        s.add((thread_cpu_seconds() - t0) * 1e9 / static_cast<double>(per_batch));
    }
    return s.median();
}

/// A field of /proc/self/status in kB ("VmHWM", "VmRSS"), or 0.
inline std::int64_t proc_status_kb(std::string_view field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 &&
            line[field.size()] == ':')
            return std::strtoll(line.c_str() + field.size() + 1, nullptr, 10);
    }
    return 0;
}

/// Resets the peak RSS (VmHWM) to the current RSS, where the kernel allows it (Linux ≥ 4.0).
inline bool reset_peak_rss() {
    std::ofstream out("/proc/self/clear_refs");
    if (!out) return false;
    out << "5";
    return static_cast<bool>(out.flush());
}

/// The machine: CPU model, cores, kernel, compiler.
inline Json machine_description() {
    Json m;
    std::ifstream cpu("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpu, line)) {
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            m["cpu"] = colon == std::string::npos ? line : line.substr(colon + 2);
            break;
        }
    }
    m["nproc"] = std::thread::hardware_concurrency();
    std::ifstream load("/proc/loadavg");
    std::string load_line;
    if (std::getline(load, load_line)) m["loadavg"] = load_line.substr(0, load_line.find(' ', 15));
    std::ifstream ver("/proc/sys/kernel/osrelease");
    std::string kernel;
    if (std::getline(ver, kernel)) m["kernel"] = kernel;
#if defined(__clang__)
    m["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
    m["compiler"] = "gcc " __VERSION__;
#endif
#ifdef NDEBUG
    m["build"] = "release (NDEBUG)";
#else
    m["build"] = "assertions on (not NDEBUG)";
#endif
    return m;
}

/// One printed figure.
struct Figure {
    std::string name;
    double value = 0;
    std::string unit;
    std::string note;  ///< context: sizes, depths, the floor and the ratio to it
    std::string key;   ///< stable name in --json output, shared with bench/pi/bench_pi.mjs
    Json extra;        ///< more fields for --json (clock, wall time, runs, ids), or null
};

/// A benchmark's figures, printed as an aligned table or as JSON.
class Report {
public:
    explicit Report(std::string title) : title_(std::move(title)) {}

    void param(const std::string& key, Json value) { params_[key] = std::move(value); }
    void add(std::string name, double value, std::string unit, std::string note = {}) {
        figures_.push_back(
            Figure{std::move(name), value, std::move(unit), std::move(note), {}, {}});
    }
    /// A figure with a key (and extra fields) for the JSON output that bench/compare.py reads.
    void add_keyed(std::string key, std::string name, double value, std::string unit,
                   std::string note = {}, Json extra = {}) {
        figures_.push_back(Figure{std::move(name), value, std::move(unit), std::move(note),
                                  std::move(key), std::move(extra)});
    }

    void print(bool json, std::ostream& out = std::cout) const {
        if (json) {
            Json j;
            j["benchmark"] = title_;
            j["machine"] = machine_description();
            j["params"] = params_;
            j["results"] = Json::array();
            for (const auto& f : figures_) {
                Json r = {{"name", f.name}, {"value", f.value}, {"unit", f.unit}, {"note", f.note}};
                if (!f.key.empty()) r["key"] = f.key;
                if (f.extra.is_object())
                    for (const auto& [k, v] : f.extra.items()) r[k] = v;
                j["results"].push_back(std::move(r));
            }
            out << j.dump(2) << '\n';
            return;
        }
        const Json m = machine_description();
        out << title_ << "\n";
        out << "machine: " << m.value("cpu", std::string("?")) << ", " << m["nproc"].get<unsigned>()
            << " cpus, load " << m.value("loadavg", std::string("?")) << ", kernel "
            << m.value("kernel", std::string("?")) << ", " << m.value("compiler", std::string("?"))
            << ", " << m.value("build", std::string("?")) << "\nparams: " << params_.dump()
            << "\n\n";
        std::size_t w_name = 6, w_value = 5, w_unit = 4;
        std::vector<std::string> values;
        for (const auto& f : figures_) {
            values.push_back(format_value(f.value));
            w_name = std::max(w_name, f.name.size());
            w_value = std::max(w_value, values.back().size());
            w_unit = std::max(w_unit, f.unit.size());
        }
        auto pad = [](const std::string& s, std::size_t w, bool right) {
            const std::string fill(w > s.size() ? w - s.size() : 0, ' ');
            return right ? fill + s : s + fill;
        };
        out << pad("figure", w_name, false) << "  " << pad("value", w_value, true) << "  "
            << pad("unit", w_unit, false) << "  notes\n";
        out << std::string(w_name + w_value + w_unit + 13, '-') << "\n";
        for (std::size_t i = 0; i < figures_.size(); ++i) {
            const auto& f = figures_[i];
            out << pad(f.name, w_name, false) << "  " << pad(values[i], w_value, true) << "  "
                << pad(f.unit, w_unit, false) << "  " << f.note << "\n";
        }
    }

    static std::string format_value(double v) {
        char buf[64];
        const double a = v < 0 ? -v : v;
        if (a >= 1e6)
            std::snprintf(buf, sizeof buf, "%.0f", v);
        else if (a >= 100)
            std::snprintf(buf, sizeof buf, "%.1f", v);
        else if (a >= 1)
            std::snprintf(buf, sizeof buf, "%.2f", v);
        else
            std::snprintf(buf, sizeof buf, "%.3f", v);
        // Thousands separators on the integer part, for the large figures.
        const std::string_view s = buf;
        const std::size_t first_digit = (!s.empty() && s[0] == '-') ? 1 : 0;
        const std::size_t int_end = std::min(s.find('.'), s.size());
        std::string out(s.substr(0, first_digit));
        for (std::size_t i = first_digit; i < int_end; ++i) {
            out.push_back(s[i]);
            const std::size_t left = int_end - i - 1;
            if (left > 0 && left % 3 == 0) out.push_back(',');
        }
        out.append(s.substr(int_end));
        return out;
    }

private:
    std::string title_;
    Json params_ = Json::object();
    std::vector<Figure> figures_;
};

/// Formats a number with one decimal ("12.3").
inline std::string fixed1(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

/// Formats a byte count ("261.4 MB").
inline std::string human_bytes(double bytes) {
    char buf[64];
    if (bytes >= 1e9)
        std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
    else if (bytes >= 1e6)
        std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
    else if (bytes >= 1e3)
        std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.0f B", bytes);
    return buf;
}

/// The command line: `--name value` pairs and `--flag` switches.
class Args {
public:
    Args(int argc, char** argv) {
        for (int i = 1; i < argc; ++i) args_.emplace_back(argv[i]);
    }

    /// True when `--name` is present (a switch).
    [[nodiscard]] bool flag(std::string_view name) const {
        return std::find(args_.begin(), args_.end(), name) != args_.end();
    }

    /// The value after `--name`, or `fallback`.
    [[nodiscard]] std::string text(std::string_view name, std::string fallback = {}) const {
        for (std::size_t i = 0; i + 1 < args_.size(); ++i)
            if (args_[i] == name) return args_[i + 1];
        return fallback;
    }

    /// The unsigned number after `--name`, or `fallback`; exits with a message on a bad number.
    [[nodiscard]] std::uint64_t number(std::string_view name, std::uint64_t fallback) const {
        const std::string t = text(name);
        if (t.empty()) return fallback;
        char* end = nullptr;
        const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
        if (end == t.c_str() || *end != '\0') {
            std::cerr << "error: " << name << " needs a number, got '" << t << "'\n";
            std::exit(2);
        }
        return v;
    }

private:
    std::vector<std::string> args_;
};

}  // namespace agentcore_bench

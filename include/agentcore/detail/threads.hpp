#pragma once
// Threads, a mutex, a counter and a pause over POSIX directly.
//
// Compile time: <thread>, <mutex> and <atomic> bring C++20's stop tokens, semaphores and timed
// atomic waits into every translation unit that includes the umbrella (about 3% of what
// <nlohmann/json.hpp> costs), for one parallel file scan, a temporary-file counter and two
// polling loops. The library is POSIX-only already (flock, mmap, fdatasync); these few lines
// keep those headers out.

#include <agentcore/detail/chrono.hpp>

#include <pthread.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <vector>

namespace agentcore::detail {

/// Sleeps for `d` (rounded up to whole microseconds), resuming after a signal.
template <class Rep, class Period>
void pause_for(std::chrono::duration<Rep, Period> d) noexcept {
    const auto us = std::chrono::ceil<std::chrono::microseconds>(d).count();
    if (us <= 0) return;
    timespec left{static_cast<time_t>(us / 1000000), static_cast<long>((us % 1000000) * 1000)};
    while (::nanosleep(&left, &left) != 0) {
    }
}

/// How many threads the machine runs at once (at least 1).
inline unsigned online_cpus() noexcept {
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<unsigned>(n) : 1U;
}

/// A counter several threads share (relaxed order is not offered: every operation is
/// sequentially consistent, as std::atomic's defaults).
template <class T>
class SharedCounter {
public:
    constexpr explicit SharedCounter(T value = T{}) noexcept : value_(value) {}
    SharedCounter(const SharedCounter&) = delete;
    SharedCounter& operator=(const SharedCounter&) = delete;

    /// Adds `n`; returns the value before.
    T fetch_add(T n) noexcept { return __atomic_fetch_add(&value_, n, __ATOMIC_SEQ_CST); }
    [[nodiscard]] T load() const noexcept { return __atomic_load_n(&value_, __ATOMIC_SEQ_CST); }
    void store(T v) noexcept { __atomic_store_n(&value_, v, __ATOMIC_SEQ_CST); }

private:
    T value_;
};

/// A mutex (pthread_mutex_t) and its scoped lock.
class Mutex {
public:
    Mutex() noexcept = default;
    Mutex(const Mutex&) = delete;
    Mutex& operator=(const Mutex&) = delete;
    ~Mutex() { ::pthread_mutex_destroy(&m_); }

    class Lock {
    public:
        explicit Lock(Mutex& m) noexcept : m_(m) { ::pthread_mutex_lock(&m_.m_); }
        ~Lock() { ::pthread_mutex_unlock(&m_.m_); }
        Lock(const Lock&) = delete;
        Lock& operator=(const Lock&) = delete;

    private:
        Mutex& m_;
    };

private:
    pthread_mutex_t m_ = PTHREAD_MUTEX_INITIALIZER;
};

/// Threads that run `work()` in the background until join(), which the destructor also calls,
/// so that no thread outlives what its work refers to (an exception unwinding past the owner
/// waits for them). `work` must not throw. A thread that cannot be started is left out: whoever
/// shares the work with them (the owner, typically) must be able to do all of it.
template <class Work>
class BackgroundThreads {
public:
    BackgroundThreads(std::size_t threads, Work& work) {
        started_.reserve(threads);
        const auto start = [](void* w) -> void* {
            (*static_cast<Work*>(w))();
            return nullptr;
        };
        for (std::size_t t = 0; t < threads; ++t) {
            pthread_t id{};
            void* arg = const_cast<void*>(static_cast<const void*>(&work));
            if (::pthread_create(&id, nullptr, start, arg) == 0) started_.push_back(id);
        }
    }
    BackgroundThreads(const BackgroundThreads&) = delete;
    BackgroundThreads& operator=(const BackgroundThreads&) = delete;
    ~BackgroundThreads() { join(); }

    /// Waits for every thread to return.
    void join() noexcept {
        for (pthread_t id : started_) ::pthread_join(id, nullptr);
        started_.clear();
    }

private:
    std::vector<pthread_t> started_;
};

/// Runs `work()` on `threads` threads, the calling one included, and returns once every one
/// has returned. `work` must not throw (an exception leaving a thread ends the process, as
/// with std::thread). A thread that cannot be started leaves its share to the others.
template <class Work>
void run_on_threads(std::size_t threads, Work& work) {
    BackgroundThreads<Work> helpers(threads > 0 ? threads - 1 : 0, work);
    work();
}

}  // namespace agentcore::detail

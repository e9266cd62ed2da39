#pragma once
// A storage's hold on its database: a connection taken from a pool, and, for a writer, the
// session's lease (owner, fencing token). Released when it is destroyed: the lease given up (if
// it is still this writer's) and the connection given back to the pool.

#include <agentcore/postgres/detail/pg.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>

namespace agentcore::detail::pg {

/// A writer's name in sessions.writer_owner: host, process and 64 random bits, so that two
/// storages of one process are two owners.
inline std::string new_owner() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    std::random_device rd;
    const std::uint64_t r = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    static const char* hex = "0123456789abcdef";
    std::string token;
    for (int i = 60; i >= 0; i -= 4) token.push_back(hex[(r >> i) & 0xf]);
    return std::string(host) + ":" + std::to_string(::getpid()) + ":" + token;
}

/// The milliseconds of a duration, as a parameter.
inline std::int64_t millis(std::chrono::milliseconds d) noexcept {
    return static_cast<std::int64_t>(d.count());
}

struct Link {
    std::shared_ptr<Pool> pool;
    std::unique_ptr<Connection> conn;
    std::string session;
    // Writers only: the lease.
    bool writer = false;
    std::string owner;
    std::int64_t fence = 0;
    bool lease_lost = false;     ///< another writer took the session over (or it was removed)
    bool needs_recover = false;  ///< the connection was lost: re-fence and re-read before writing

    Link(std::shared_ptr<Pool> p, std::unique_ptr<Connection> c, std::string id)
        : pool(std::move(p)), conn(std::move(c)), session(std::move(id)) {}
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;
    ~Link() {
        if (!conn) return;
        if (writer && !lease_lost && !conn->broken()) {
            try {
                Params p;
                p.text(session).text(owner).int64(fence);
                conn->exec(
                    "UPDATE sessions SET writer_owner = NULL, writer_expires = NULL"
                    " WHERE id = $1 AND writer_owner = $2 AND writer_fence = $3",
                    p, "releasing the lease on");
            } catch (...) {
                // The lease then runs out after its time-to-live.
            }
        }
        if (pool) pool->give_back(std::move(conn));
    }
};

}  // namespace agentcore::detail::pg

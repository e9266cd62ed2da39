#pragma once
// A progress bar on stderr for long operations; silent unless stderr is a terminal, so that
// piped or captured output never holds carriage returns.

#include <chrono>
#include <cstdint>
#include <string>

namespace agentcore::tool {

class Progress {
public:
    /// A bar for `total` units of work (bytes, entries, files), shown only on a terminal.
    Progress(std::string label, std::uint64_t total);
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    /// Records that `done` of `total` units are complete; redraws at most every 100 ms.
    void update(std::uint64_t done);
    /// Erases the bar (also done by the destructor).
    void finish();

private:
    void draw(std::uint64_t done);

    std::string label_;
    std::uint64_t total_;
    bool enabled_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point started_;
    std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace agentcore::tool

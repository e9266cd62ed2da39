#include "progress.hpp"

#include "cli_common.hpp"

#include <cstdio>

namespace agentcore::tool {

namespace {
// Work that ends sooner than this never shows a bar (no flicker on small files).
constexpr auto show_after = std::chrono::milliseconds(250);
constexpr auto redraw_every = std::chrono::milliseconds(100);
constexpr int bar_width = 30;
}  // namespace

Progress::Progress(std::string label, std::uint64_t total)
    : label_(std::move(label)),
      total_(total),
      enabled_(stderr_is_terminal() && total > 0),
      started_(std::chrono::steady_clock::now()),
      last_draw_(started_) {}

Progress::~Progress() { finish(); }

void Progress::update(std::uint64_t done) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - started_ < show_after || (drawn_ && now - last_draw_ < redraw_every)) return;
    last_draw_ = now;
    draw(done);
}

void Progress::draw(std::uint64_t done) {
    if (done > total_) done = total_;
    const auto filled = static_cast<int>(done * bar_width / total_);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.append(static_cast<std::size_t>(bar_width - filled), '.');
    std::fprintf(stderr, "\r%s [%s] %3d%%", label_.c_str(), bar.c_str(),
                 static_cast<int>(done * 100 / total_));
    std::fflush(stderr);
    drawn_ = true;
}

void Progress::finish() {
    if (!drawn_) return;
    std::fprintf(stderr, "\r\x1b[2K");
    std::fflush(stderr);
    drawn_ = false;
}

}  // namespace agentcore::tool

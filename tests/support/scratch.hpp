#pragma once
// A scratch folder per test: under $AGENTCORE_TEST_TMP (or /tmp), named with the PID and a
// counter so that tests run in parallel (ctest -j) never collide; removed at the end.

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

namespace agentcore::testing {

class ScratchDir {
public:
    ScratchDir() {
        static std::atomic<unsigned> counter{0};
        const char* base = std::getenv("AGENTCORE_TEST_TMP");
        std::filesystem::path root = (base != nullptr && *base != '\0') ? base : "/tmp";
        std::filesystem::create_directories(root);
        path_ =
            (root / ("agentcore-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
                .string();
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ec);
        std::filesystem::remove_all(path_, ec);
    }

    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] std::string file(std::string_view name) const {
        return path_ + "/" + std::string(name);
    }

private:
    std::string path_;
};

/// The whole content of a file ("" when it does not exist).
inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Replaces a file's content.
inline void write_file(const std::string& path, std::string_view content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

}  // namespace agentcore::testing

// bench_text_scan: how fast the validating scanner (detail/json_scan.hpp) checks entry lines whose
// text is in different scripts: ASCII code, Latin text with accents, Cyrillic, Chinese, and
// emoji. Each line is a message entry of ~4 kB of text; the scanner checks its JSON and its
// UTF-8, on its vector path (what every reader uses) and on the portable scalar path, beside
// memchr over the same bytes (the floor every line reader pays).
//
//   bench_text_scan [--kb N] [--json]
//
// N is the text per line in kB (4 by default); the figures are MB/s of thread CPU time, the
// median of 31 batches over 4 MB of lines.
#include "bench_util.hpp"

#include <agentcore/detail/json_scan.hpp>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

using namespace agentcore;
using namespace agentcore_bench;
using agentcore::detail::JsonScanner;
using agentcore::detail::ScanPath;

namespace {

struct Script {
    const char* name;
    std::vector<std::string> words;  // put together with spaces, as prose
};

// A message entry line whose text is `kb` kB of `script`'s words.
std::string line_of(const Script& script, std::size_t kb, std::size_t seed) {
    std::string text;
    std::size_t i = seed;
    while (text.size() < kb * 1000) {
        text += script.words[i % script.words.size()];
        text += (i % 11 == 10) ? ".\\n" : " ";
        i = i * 7 + 3;
    }
    return R"({"type":"message","id":"a1b2c3d4","parent_id":"00ff00ff","timestamp":)"
           R"("2026-01-01T00:00:00.000Z","message":{"role":"user","content":")" +
           text + R"(","timestamp":1767225600000}})";
}

}  // namespace

int main(int argc, char** argv) {
    const Args args(argc, argv);
    if (args.flag("--help") || args.flag("-h")) {
        std::cout << "usage: bench_text_scan [--kb N] [--json]\n";
        return 0;
    }
    const std::size_t kb = args.number("--kb", 4);
    const bool json = args.flag("--json");
    if (kb < 1) {
        std::cerr << "error: --kb must be at least 1\n";
        return 2;
    }
    const std::vector<Script> scripts = {
        {"ASCII code",
         {"return", "value", "const", "auto&", "std::string", "if", "(x", "<", "0)", "{", "}",
          "for", "int", "i", "=", "0;", "'quoted'", "#include"}},
        {"Latin with accents",
         {"été", "naïve", "crème", "brûlée", "Ärger", "über", "straße", "año", "mañana", "le", "de",
          "la", "und", "der", "el", "café"}},
        {"Cyrillic", {"привет", "мир", "сессия", "ветка", "контекст", "история", "и", "в"}},
        {"Chinese", {"会话", "上下文", "分支", "历史记录", "压缩", "模型", "工具", "结果"}},
        {"emoji", {"😀", "🚀", "✨", "👍🏽", "🎉", "ok", "🧪", "📦"}},
    };
    Report report("agentcore: scanning entry lines of text in different scripts");
    report.param("text_per_line_kb", kb);
    for (const Script& script : scripts) {
        std::vector<std::string> lines;
        std::size_t bytes = 0;
        for (std::size_t i = 0; bytes < 4000000; ++i) {
            lines.push_back(line_of(script, kb, i));
            bytes += lines.back().size();
        }
        std::string error;
        for (const auto& line : lines) {
            if (!JsonScanner::validate<ScanPath::vector>(line, error) ||
                !JsonScanner::validate<ScanPath::scalar>(line, error)) {
                std::cerr << "error: a generated line does not validate: " << error << "\n";
                return 1;
            }
        }
        auto mb_per_s = [&](auto&& check) {
            Samples s;
            for (int batch = 0; batch < 31; ++batch) {
                const double t0 = thread_cpu_seconds();
                for (const auto& line : lines) do_not_optimize(check(line));
                s.add(static_cast<double>(bytes) / 1e6 / (thread_cpu_seconds() - t0));
            }
            return s.median();
        };
        std::string e;
        const double vector = mb_per_s(
            [&](const std::string& l) { return JsonScanner::validate<ScanPath::vector>(l, e); });
        const double scalar = mb_per_s(
            [&](const std::string& l) { return JsonScanner::validate<ScanPath::scalar>(l, e); });
        const double floor = mb_per_s(
            [](const std::string& l) { return std::memchr(l.data(), '\n', l.size()) != nullptr; });
        const std::string name = script.name;
        char note[96];
        std::snprintf(note, sizeof note, "%.2fx the scalar path; memchr %.0f MB/s (%.1fx)",
                      vector / scalar, floor, floor / vector);
        report.add(name + ": vector path", vector, "MB/s", note);
        report.add(name + ": scalar path", scalar, "MB/s");
    }
    report.print(json);
    return 0;
}

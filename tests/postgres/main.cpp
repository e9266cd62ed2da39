// The PostgreSQL tests' runner: Catch2's main, behind three checks of its own.
//   --pg-server start FILE | stop FILE   the ctest fixture: start the run's shared server and
//                                        write where it is to FILE, or stop it
//   no PostgreSQL server programs        exit 77 (ctest: skipped) with what to install, unless
//                                        AGENTCORE_REQUIRE_PG=1 (then a failure)

#include "postgres/pg_server.hpp"
#include "support/catch_runner.hpp"

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>

namespace pgt = agentcore::testing::pg;

namespace {

int unavailable() {
    std::fprintf(stderr, "%s\n", pgt::missing_message());
    return pgt::required() ? 1 : pgt::skip_code;
}

int fixture(const std::string& command, const std::string& file) {
    if (command == "start") {
        if (!pgt::bindir()) return unavailable();
        try {
            const pgt::Server s = pgt::start_server();
            std::ofstream(file) << s.dir << ' ' << s.port << '\n';
            std::printf("PostgreSQL test server in %s, port %d\n", s.dir.c_str(), s.port);
            return 0;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "starting the PostgreSQL test server: %s\n", e.what());
            return 1;
        }
    }
    if (command == "stop") {
        std::ifstream in(file);
        pgt::Server s;
        if (in >> s.dir >> s.port) pgt::stop_server(s);
        std::remove(file.c_str());
        return 0;
    }
    std::fprintf(stderr, "--pg-server start|stop FILE\n");
    return 2;
}

}  // namespace

int main(int argc, char* argv[]) {
    if (argc == 4 && std::strcmp(argv[1], "--pg-server") == 0) return fixture(argv[2], argv[3]);
    bool listing = false;
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--list", 6) == 0 || std::strcmp(argv[i], "-l") == 0 ||
            std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0)
            listing = true;
    if (!listing && !pgt::bindir()) {
        // A shared server started elsewhere still serves the tests.
        bool shared = false;
        if (const auto file = pgt::server_file()) {
            std::ifstream in(*file);
            pgt::Server s;
            shared = static_cast<bool>(in >> s.dir >> s.port) && s.running();
        }
        if (!shared) return unavailable();
    }
    return agentcore::testing::run_catch(argc, argv);
}

// The runner's main (Catch2 2; Catch2 3 brings its own).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

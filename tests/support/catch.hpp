#pragma once
// Catch2 compatibility: the suite is written against Catch2 2.13 (Debian's package) and builds
// unchanged with Catch2 3.
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif

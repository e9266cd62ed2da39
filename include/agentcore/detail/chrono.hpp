#pragma once
// std::chrono's durations and clocks. libstdc++ keeps them in <bits/chrono.h>, without the
// calendar, time zone and formatting types <chrono> adds since C++20 (about 3% of what
// <nlohmann/json.hpp> costs a translation unit); the library needs none of those. Other
// standard libraries: <chrono>.

#include <cstddef>  // defines __GLIBCXX__ with libstdc++

#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h>
#else
#include <chrono>
#endif

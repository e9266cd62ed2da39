#pragma once
// detail::dependent<T, Param>: the type T, named through a template parameter.
//
// Compile time: in a function template, an expression whose types are all known is checked, and
// clang instantiates the constexpr functions it names (in C++20 most of std::vector, std::optional
// and std::variant), where the template is defined, in every translation unit, called or not.
// A local declared as dependent<T, Param> is a T all the same, but what is done with it waits
// for the template's instantiation. Param is a parameter of the enclosing template, most often
// the defaulted one of `template <class T = void>` (see session.hpp). As a parameter's type,
// `const dependent<SessionTreeEntry, T>& entry` deduces nothing: T keeps its default, a call
// passes the same arguments with the same conversions, and the whole body that reads `entry`
// waits for the call.

namespace agentcore::detail {

template <class T, class>
struct dependent_type {
    using type = T;
};

template <class T, class Param>
using dependent = typename dependent_type<T, Param>::type;

}  // namespace agentcore::detail

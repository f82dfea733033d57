#pragma once
// A counter-based random source: every value is a pure function of its key, so microbatch j of step k (and
// every initial weight) is the same whatever order, thread or process draws it.
#include <cstdint>
#include <initializer_list>

namespace pipesim::executor {

// SplitMix64's finaliser: a bijective mix of 64 bits.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline std::uint64_t hash_key(std::initializer_list<std::uint64_t> key) {
  std::uint64_t h = 0x243f6a8885a308d3ULL;
  for (std::uint64_t part : key) h = mix64(h ^ part);
  return h;
}

// Uniform in [-1, 1), from the top 53 bits of the key's hash.
inline double symmetric_uniform(std::initializer_list<std::uint64_t> key) {
  return static_cast<double>(hash_key(key) >> 11) * 0x1.0p-52 - 1.0;
}

}  // namespace pipesim::executor

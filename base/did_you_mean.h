#pragma once
// "did you mean" suggestions for names a user mistyped: schedules, keys, columns, subcommands, profiles.
#include <string>
#include <vector>

namespace pipesim {

// Edit distance (insertions, deletions, substitutions; case-insensitive) between two names.
int edit_distance(const std::string& a, const std::string& b);

// The known name closest to `given`, when it is close enough to be a likely typo (at most a third of the
// longer name's characters differ, or one is a prefix of the other); empty otherwise.
std::string closest_name(const std::string& given, const std::vector<std::string>& known);

// "; did you mean 'x'?" for closest_name(given, known), or "" when nothing is close.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& known);

// The first known name other than `given` within `max_edits` edits of it, both at least `min_length` long;
// empty otherwise. Stricter than closest_name: for formats with many keys pipesim does not list (Megatron's
// arguments, torchtitan's keys), where only a near miss of a listed one is surely a typo.
std::string near_miss(const std::string& given, const std::vector<std::string>& known, int max_edits,
                      size_t min_length);

}  // namespace pipesim

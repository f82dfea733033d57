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

}  // namespace pipesim

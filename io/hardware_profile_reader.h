#pragma once
// Reading hardware profiles (spec/hardware_profile.h) from YAML, and finding the shipped ones.
#include <string>

#include "io/yaml_reader.h"
#include "spec/hardware_profile.h"

namespace pipesim {

// Throws InputError with file:line:key for anything malformed (unknown keys, incomplete grid, rates <= 0).
// A `fit:` section (pipesim calibrate --fit) is applied (spec/hardware_profile.h, with_fit) unless
// kIgnore: the measured profile alone, which is what a new fit starts from.
enum class ProfileFitUse { kApply, kIgnore };
HardwareProfile parse_hardware_profile(const std::string& yaml_text, const std::string& source);
HardwareProfile parse_hardware_profile(const std::string& yaml_text, const std::string& source,
                                       ProfileFitUse fit_use);
HardwareProfile load_hardware_profile(const std::string& path);
// A `link` or `inter_node_link` map ({bandwidth_gb_per_s, latency_us, source}); errors name `key`.
LinkSpec read_link(const YamlReader& r, const YAML::Node& link, const std::string& key);
// Some fields of `base` (a profile's link) changed by a map without a source (a scenario's, or
// `--set hardware.link.bandwidth_gb_per_s=100`): the others kept, and the change appended to base's source.
LinkSpec read_link_change(const YamlReader& r, const YAML::Node& link, const std::string& key,
                          const LinkSpec& base);

// A name in share/profiles/ on the data search path (io/data_dirs.h), without .yaml, or a path to a
// profile file. Throws InputError listing the shipped profiles when neither exists.
std::string resolve_profile_path(const std::string& name_or_path);
std::string profiles_directory();

}  // namespace pipesim

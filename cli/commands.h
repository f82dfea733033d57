#pragma once
// Each subcommand registers itself on the CLI11 app; main.cpp lists them.
#include <CLI/CLI.hpp>
#include <string>

namespace pipesim {

void add_run_command(CLI::App& app);
void add_schedules_command(CLI::App& app);
void add_costs_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_extrapolate_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_show_command(CLI::App& app);
void add_sweep_command(CLI::App& app);

// Writes text to a file, or throws InputError naming the file.
void write_file(const std::string& path, const std::string& text);

}  // namespace pipesim

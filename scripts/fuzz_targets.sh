# The libFuzzer targets of fuzz/ (CMakeLists.txt's PIPESIM_FUZZ_TARGETS, plus the study reader, which needs
# the executor): sourced by the scripts that build, replay and run them.
fuzz_targets=(scenario_reader pytorch_csv_reader profile_reader study_reader hf_config_reader megatron_args_reader
              torchtitan_config_reader planner)

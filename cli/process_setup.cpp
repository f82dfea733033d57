#include "cli/process_setup.h"

#include "cli/training.h"

namespace pipesim {

void prepare_process(char** argv) {
  prepare_training_process(argv);
}

}  // namespace pipesim

#include "distributed/mpi_session.h"

#include <fmt/format.h>

#include <exception>

#include "base/errors.h"

#ifdef PIPESIM_HAS_MPI
#include <mpi.h>
#endif

namespace pipesim {

#ifdef PIPESIM_HAS_MPI

bool mpi_built() {
  return true;
}

MpiSession::MpiSession(const char* /*option*/) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
    throw ScheduleError("MPI: MPI_Init_thread failed");
  }
  owns_ = true;
  if (provided < MPI_THREAD_SERIALIZED) {
    throw InputError(
        "MPI: this MPI library does not support calls from a worker thread (MPI_THREAD_SERIALIZED)");
  }
}

MpiSession::~MpiSession() {
  if (!owns_) return;
  if (std::uncaught_exceptions() > 0) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
}

int MpiSession::rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int MpiSession::size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

#else

bool mpi_built() {
  return false;
}

MpiSession::MpiSession(const char* option) {
  throw InputError(
      fmt::format("{}: this pipesim was built without MPI (install mpich and libmpich-dev, then "
                  "build again)",
                  option));
}
MpiSession::~MpiSession() = default;
int MpiSession::rank() {
  return 0;
}
int MpiSession::size() {
  return 1;
}

#endif

}  // namespace pipesim

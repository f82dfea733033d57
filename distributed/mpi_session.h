#pragma once
// MPI for the commands that spread work over processes (sweep --mpi, plan --mpi, execute --transport mpi).
// Built with MPI only when CMake finds it; the header never includes mpi.h, so the layers above compile the
// same either way, and a build without MPI says so when asked for it.
namespace pipesim {

// Whether this build has MPI (mpich, libmpich-dev).
bool mpi_built();

// MPI_Init_thread (MPI_THREAD_SERIALIZED: one thread at a time makes MPI calls) on construction, when not
// yet initialised, and MPI_Finalize on destruction; a destruction during an exception's unwinding calls
// MPI_Abort instead, so that no other rank waits forever. Throws InputError in a build without MPI, naming
// `option`.
class MpiSession {
 public:
  explicit MpiSession(const char* option = "--mpi");
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  static int rank();
  static int size();

 private:
  bool owns_ = false;
};

}  // namespace pipesim

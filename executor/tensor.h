#pragma once
// A row-major matrix of one microbatch's activations or gradients (rows = samples). Plain storage: the
// executor's numerics are hand-written on BLAS, so nothing more is needed.
#include <cstddef>
#include <vector>

namespace pipesim::executor {

template <typename T>
struct Matrix {
  int rows = 0;
  int cols = 0;
  std::vector<T> values;

  Matrix() = default;
  Matrix(int rows_, int cols_) : rows(rows_), cols(cols_), values(static_cast<std::size_t>(rows_) * cols_) {}

  T* data() { return values.data(); }
  const T* data() const { return values.data(); }
  T& at(int row, int col) { return values[static_cast<std::size_t>(row) * cols + col]; }
  const T& at(int row, int col) const { return values[static_cast<std::size_t>(row) * cols + col]; }
  std::size_t bytes() const { return values.size() * sizeof(T); }
};

}  // namespace pipesim::executor

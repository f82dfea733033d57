#pragma once
// Gradient checks of layer units: the hand-written backward (I then W) against central finite differences
// of the same code in double precision.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "executor/layer_units.h"

namespace pipesim::executor::test {

inline Matrix<double> random_matrix(int rows, int cols, std::uint64_t stream) {
  Matrix<double> m(rows, cols);
  for (std::size_t i = 0; i < m.values.size(); ++i) m.values[i] = symmetric_uniform({stream, i});
  return m;
}

// |a - n| / max(|a| + |n|, floor): relative where the gradient is not tiny.
inline double relative_error(double analytic, double numeric) {
  return std::abs(analytic - numeric) / std::max(std::abs(analytic) + std::abs(numeric), 1e-6);
}

// Central difference of f at x[i], with step h.
inline double central_difference(std::vector<double>& x, std::size_t i, const std::function<double()>& f) {
  constexpr double h = 1e-5;
  const double saved = x[i];
  x[i] = saved + h;
  const double up = f();
  x[i] = saved - h;
  const double down = f();
  x[i] = saved;
  return (up - down) / (2 * h);
}

// L = sum(y * R) for a fixed random R, so dL/dy = R. Returns the largest relative error over every
// parameter and (unless the input is token ids, which have no gradient) every input element.
inline double max_gradient_error(const LayerUnit<double>& unit, Matrix<double> x, bool check_input = true) {
  std::vector<double> params(unit.parameter_count());
  unit.initialize(params, 7, 3);
  const Matrix<double> r = random_matrix(unit.output_rows(x.rows), unit.output_width(), 13);
  auto loss = [&] {
    UnitCache<double> cache;
    const Matrix<double> y = unit.forward(params, x, cache);
    double sum = 0;
    for (std::size_t i = 0; i < y.values.size(); ++i) sum += y.values[i] * r.values[i];
    return sum;
  };
  UnitCache<double> cache;
  unit.forward(params, x, cache);
  const Matrix<double> dx = unit.backward_input(params, r, cache);
  std::vector<double> grads(params.size(), 0.0);
  unit.backward_weight(cache, grads);
  double worst = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    worst = std::max(worst, relative_error(grads[i], central_difference(params, i, loss)));
  }
  for (std::size_t i = 0; check_input && i < x.values.size(); ++i) {
    worst = std::max(worst, relative_error(dx.values[i], central_difference(x.values, i, loss)));
  }
  return worst;
}

inline double max_gradient_error(const LayerUnit<double>& unit, int rows) {
  return max_gradient_error(unit, random_matrix(rows, unit.input_width(), 11));
}

}  // namespace pipesim::executor::test

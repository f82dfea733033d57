#pragma once
// Muon's orthogonalisation: G / ||G||_F, then `steps` iterations of X <- a X + (b A + c A^2) X with A = X X^T
// and (a, b, c) = (3.4445, -4.7750, 2.0315), which drive every singular value towards about 1.
#include <span>

namespace pipesim::executor {

inline constexpr double kNewtonSchulzA = 3.4445;
inline constexpr double kNewtonSchulzB = -4.7750;
inline constexpr double kNewtonSchulzC = 2.0315;

// In place on a row-major rows x cols matrix. Works on the transpose when rows > cols (the smaller Gram
// matrix); the iteration commutes with transposition, so the result is the same.
void newton_schulz(std::span<float> matrix, int rows, int cols, int steps);

}  // namespace pipesim::executor

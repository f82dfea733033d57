#pragma once
// Checks a parsed PyTorch CSV schedule before it runs (schedules/pytorch_csv.h), so that every mistake is
// reported in the file's own terms: its row, its column and its 0-based stage and microbatch indices.
#include <string>
#include <vector>

#include "schedules/pytorch_csv.h"

namespace pipesim {

// Where one action of PytorchCsvSchedule::actions came from: columns[rank][k] is the 0-based column of
// actions[rank][k] (row = rank).
using CsvColumns = std::vector<std::vector<int>>;

// Throws InputError naming `source`, the row and the column when:
//   - a (stage, microbatch) lacks an op its backward kind needs (F and B, or F, I and W), or has one twice,
//     or mixes B with I/W;
//   - the rows can never all finish: each rank runs its row in order, F(s,j) needs F(s-1,j), B/I(s,j) needs
//     F(s,j) and B/I(s+1,j), W(s,j) needs I(s,j) (docs: the engine's dependency table); a cycle of waits
//     is a deadlock, reported with each blocked cell and the cell it waits for.
// Expects stages * microbatches <= the number of actions (the parser bounds the indices so).
void check_csv_schedule(const PytorchCsvSchedule& csv, const CsvColumns& columns, const std::string& source);

}  // namespace pipesim

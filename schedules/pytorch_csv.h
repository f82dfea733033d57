#pragma once
// Static schedules in PyTorch's pipelining CSV format (torch.distributed.pipelining,
// _PipelineScheduleRuntime._load_csv / _dump_csv, format "compute_only"):
//   - one row per rank (device), one cell per action, in the order the rank runs them;
//   - a cell is "{stage}{op}{microbatch}", e.g. "2F0", "1I3", "0W1", "3B2", where stage is the GLOBAL stage
//   index
//     (0-based, chunks count as stages), op is F, B (full backward), I (input grad) or W (weight grad), and
//     microbatch is the index within one batch (0..m-1);
//   - an empty cell is an idle slot (PyTorch writes None that way) and is skipped; the sharding actions of
//     PyTorch's "compute_comms" format (UNSHARD, RESHARD, REDUCE_GRAD) are skipped too. Its transfer actions
//     ("1RECV_F0", "0SEND_B3": stage, action, microbatch) run no compute, since the engine models transfers
//     itself, but under blocking comm their places count: a transfer moves only once the sender has ended
//     the op before its SEND and the receiver the op before its RECV (sim/transfer_gates.h).
// Layout: the number of rows is N; stages 0..S-1 (S = max stage + 1) each run on the one row that names them,
// so the placement is read from the file as PyTorch's validator does: s % N for its looped schedules, the V
// (rank r holds r and 2N-1-r) for ZB-V and DualPipeV, or any other. The optimizer step is not part of the
// file: each batch repeats the rows and then steps every stage (StaticSchedule).
#include <memory>
#include <string>

#include "schedules/schedule.h"
#include "schedules/schedule_params.h"
#include "sim/transfer_gates.h"

namespace pipesim {

struct PytorchCsvSchedule {
  int ranks = 0;                   // rows: the number of devices N
  int stages = 0;                  // max stage index + 1
  int microbatches = 0;            // max microbatch index + 1: the m of one batch
  DeviceActionLists actions;       // per rank, one batch, without U
  std::vector<int> rank_of_stage;  // the row that runs each stage
  // Where the file's SEND and RECV actions post each transfer (honoured by blocking comm only).
  std::vector<TransferGate> transfer_gates;
  PipelineLayout layout() const { return PipelineLayout::explicit_placement(ranks, rank_of_stage); }
  int chunks() const { return layout().chunks_per_device; }
};

// Throws InputError naming `source`, the row and the column of a malformed cell, and when the layout cannot
// be inferred (a stage named on two rows, a stage on none, a row with no stage).
PytorchCsvSchedule parse_pytorch_csv(const std::string& text, const std::string& source);
PytorchCsvSchedule read_pytorch_csv(const std::string& path);

// One row per device, cells "{stage}{op}{microbatch}". Throws InputError for U, which the format cannot hold.
std::string format_pytorch_csv(const DeviceActionLists& lists);

// PyTorch's "compute_comms" format: the same rows with SEND_F/RECV_F/SEND_B/RECV_B actions where
// PyTorch's own lowering pass puts them (schedules/pytorch_csv_comms.cpp). Throws InputError for U or lists
// that deadlock.
std::string format_pytorch_csv_with_comms(const DeviceActionLists& lists, const PipelineLayout& layout);

// The `csv:PATH` schedule: reads the file at construction so that the layout and the I/W split are known.
std::unique_ptr<Schedule> make_csv_schedule(const std::string& path, const ScheduleParams& params);

}  // namespace pipesim

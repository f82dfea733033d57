#include "schedules/pytorch_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

#include "base/errors.h"
#include "base/text_file.h"
#include "schedules/pytorch_csv_check.h"

namespace pipesim {
namespace {

// PyTorch's sharding actions: skipped, the engine models none of them. Its transfer actions are read by
// parse_comm_token.
constexpr std::array<std::string_view, 3> kSkippedActions = {"REDUCE_GRAD", "UNSHARD", "RESHARD"};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
  return text;
}

// Reads the leading decimal digits of `text` into `value`; false when there are none or they overflow.
bool take_number(std::string_view& text, int& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || text.front() == '-') return false;
  text.remove_prefix(end - text.data());
  return true;
}

struct Cell {
  bool compute = false;  // false: an empty or skipped cell
  Action action;
};

constexpr std::string_view kOverlap = "OVERLAP_F_B";

// Parses "{stage}{op}{microbatch}"; returns nullopt when the cell is malformed.
std::optional<Cell> parse_action(std::string_view text) {
  if (text.empty()) return Cell{};
  Cell cell;
  if (!take_number(text, cell.action.stage)) return std::nullopt;
  for (std::string_view skipped : kSkippedActions) {
    if (text.substr(0, skipped.size()) == skipped) {
      text.remove_prefix(skipped.size());
      int microbatch = 0;
      if (!text.empty() && (!take_number(text, microbatch) || !text.empty())) return std::nullopt;
      return Cell{};
    }
  }
  if (text.empty() || text.front() == 'U' || !parse_op_letter(text.front(), cell.action.kind))
    return std::nullopt;
  text.remove_prefix(1);
  if (!take_number(text, cell.action.microbatch) || !text.empty()) return std::nullopt;
  cell.compute = true;
  return cell;
}

// A transfer action: "{stage}SEND_F{mb}" (stage sends mb's activation), RECV_F (stage receives it), SEND_B,
// RECV_B (the gradient, of a B or an I), as PyTorch's compute_comms format writes them.
struct CommToken {
  bool send = false;
  bool forward = false;
  int stage = 0;
  int microbatch = 0;
};

std::optional<CommToken> parse_comm_token(std::string_view text) {
  CommToken token;
  if (!take_number(text, token.stage)) return std::nullopt;
  static constexpr std::array<std::string_view, 4> kNames = {"SEND_F", "RECV_F", "SEND_B", "RECV_B"};
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (text.substr(0, kNames[i].size()) != kNames[i]) continue;
    text.remove_prefix(kNames[i].size());
    if (!take_number(text, token.microbatch) || !text.empty()) return std::nullopt;
    token.send = i % 2 == 0;
    token.forward = i < 2;
    return token;
  }
  return std::nullopt;
}

struct PlacedToken {
  CommToken token;
  int row;
  std::string where;
  std::string_view text;
  int compute_before = 0;  // compute actions of the row before it
};

// Each SEND or RECV gates its transfer on the compute action just before it in its row (none when it comes
// first): blocking comm posts the transfer once that action has ended on both devices.
std::vector<TransferGate> transfer_gates_of(const std::vector<PlacedToken>& tokens,
                                            const PytorchCsvSchedule& schedule, const std::string& source) {
  std::vector<TransferGate> gates;
  for (const PlacedToken& placed : tokens) {
    const CommToken& t = placed.token;
    const auto fail = [&](const std::string& why) {
      throw InputError(fmt::format("{}: {}: '{}' {}", source, placed.where, placed.text, why));
    };
    if (t.stage >= schedule.stages || schedule.rank_of_stage[t.stage] != placed.row) {
      fail(t.stage >= schedule.stages
               ? fmt::format("names stage {}, but the file's stages are 0..{}", t.stage, schedule.stages - 1)
               : fmt::format("names stage {}, which row {} (rank {}) runs; a transfer action is written on "
                             "the row of the stage that sends or receives",
                             t.stage, schedule.rank_of_stage[t.stage] + 1, schedule.rank_of_stage[t.stage]));
    }
    if (t.microbatch >= schedule.microbatches) {
      fail(fmt::format("names microbatch {}, but the file's microbatches are 0..{}", t.microbatch,
                       schedule.microbatches - 1));
    }
    // The other end of the transfer: activations flow to stage + 1, gradients to stage - 1.
    const int step = t.forward ? 1 : -1;
    const int producer = t.send ? t.stage : t.stage - step;
    const int consumer = producer + step;
    if (producer < 0 || producer >= schedule.stages || consumer < 0 || consumer >= schedule.stages) {
      fail(fmt::format("moves no data: stage {} {} no {}", t.stage, t.send ? "sends" : "receives",
                       t.forward ? "activation" : "gradient"));
    }
    if (schedule.rank_of_stage[producer] == schedule.rank_of_stage[consumer]) continue;  // a local hand-over
    if (placed.compute_before == 0) continue;  // posted when the batch starts
    gates.push_back(
        {producer, t.forward, t.microbatch, schedule.actions[placed.row][placed.compute_before - 1]});
  }
  return gates;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (size_t begin = 0;;) {
    const size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

// A cell's compute actions: none (empty, or a transfer), one, or a fused pair "(aFx;bBy)OVERLAP_F_B" (either
// order in the file; the F comes first, marked fused with its backward). nullopt when malformed, with `why`.
std::optional<std::vector<Action>> parse_cell(std::string_view text, std::string& why) {
  if (text.empty() || text.front() != '(') {
    const std::optional<Cell> cell = parse_action(text);
    if (!cell) return std::nullopt;
    return cell->compute ? std::vector<Action>{cell->action} : std::vector<Action>{};
  }
  const size_t close = text.find(')');
  if (close == std::string_view::npos || text.substr(close + 1) != kOverlap) {
    why = "a fused cell is (F;B)OVERLAP_F_B, e.g. (0F7;7B3)OVERLAP_F_B";
    return std::nullopt;
  }
  const std::vector<std::string_view> parts = split(text.substr(1, close - 1), ';');
  std::vector<Action> pair;
  for (std::string_view part : parts) {
    const std::optional<Cell> cell = parse_action(trim(part));
    if (!cell || !cell->compute) {
      why = fmt::format("'{}' inside the fused cell is not an F, B or I action", trim(part));
      return std::nullopt;
    }
    pair.push_back(cell->action);
  }
  if (pair.size() == 2 && pair[1].kind == OpKind::F) std::swap(pair[0], pair[1]);
  if (pair.size() != 2 || pair[0].kind != OpKind::F ||
      (pair[1].kind != OpKind::B && pair[1].kind != OpKind::I)) {
    why = "a fused cell overlaps one forward with one backward (B or I) of another microbatch";
    return std::nullopt;
  }
  pair[0].fused_with_next = true;
  return pair;
}

}  // namespace

PytorchCsvSchedule parse_pytorch_csv(const std::string& text, const std::string& source) {
  std::vector<std::string_view> lines = split(text, '\n');
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
  if (lines.empty())
    throw InputError(fmt::format("{}: empty schedule; expected one row of actions per rank", source));

  PytorchCsvSchedule schedule;
  schedule.ranks = static_cast<int>(lines.size());
  schedule.actions.resize(lines.size());
  CsvColumns columns(lines.size());
  // The counts are 64-bit until bounded by the action count below: a cell may name stage 2147483647.
  std::int64_t stages = 0, microbatches = 0;
  // Where the largest stage and microbatch indices were named, to blame them when the file is too short.
  std::string largest_stage_at, largest_microbatch_at;
  std::map<int, int> rank_of_stage;  // stage -> the row that names it
  std::vector<PlacedToken> comm_tokens;
  for (size_t row = 0; row < lines.size(); ++row) {
    const std::vector<std::string_view> cells = split(lines[row], ',');
    for (size_t column = 0; column < cells.size(); ++column) {
      const std::string_view cell_text = trim(cells[column]);
      const std::string where = fmt::format("row {} (rank {}), column {}", row + 1, row, column + 1);
      if (const std::optional<CommToken> token = parse_comm_token(cell_text)) {
        comm_tokens.push_back({*token, static_cast<int>(row), where, cell_text,
                               static_cast<int>(schedule.actions[row].size())});
        continue;
      }
      std::string why;
      const std::optional<std::vector<Action>> cell = parse_cell(cell_text, why);
      if (!cell) {
        throw InputError(fmt::format(
            "{}: {}: '{}' is not an action; {}", source, where, cell_text,
            why.empty() ? "expected {stage}{F|B|I|W}{microbatch} with the global 0-based stage, e.g. 2F0"
                        : why));
      }
      for (const Action& a : *cell) {
        const auto [placed, first] = rank_of_stage.emplace(a.stage, static_cast<int>(row));
        if (!first && placed->second != static_cast<int>(row)) {
          throw InputError(fmt::format(
              "{}: {}: '{}' names stage {}, which row {} (rank {}) runs already; a stage runs on one rank",
              source, where, cell_text, a.stage, placed->second + 1, placed->second));
        }
        if (a.stage >= stages) {
          stages = std::int64_t{a.stage} + 1;
          largest_stage_at = where;
        }
        if (a.microbatch >= microbatches) {
          microbatches = std::int64_t{a.microbatch} + 1;
          largest_microbatch_at = where;
        }
        schedule.actions[row].push_back(a);
        columns[row].push_back(static_cast<int>(column));
      }
    }
  }
  if (stages == 0) throw InputError(fmt::format("{}: no F, B, I or W action in any cell", source));
  // Each (stage, microbatch) needs at least an F: a file naming stage S-1 and microbatch m-1 needs S*m
  // actions (the check below names the missing ones). Checked before anything is sized by S*m, so a huge
  // index cannot allocate or overflow.
  std::int64_t actions = 0;
  for (const ActionList& row : schedule.actions) actions += static_cast<std::int64_t>(row.size());
  if (stages > actions || microbatches > actions || stages * microbatches > actions) {
    throw InputError(fmt::format(
        "{}: {} names stage {} and {} names microbatch {}, so stages 0..{} each need an F (and a B, or "
        "an I and a W) of microbatches 0..{}: more than {} x {} actions, but the file has {}",
        source, largest_stage_at, stages - 1, largest_microbatch_at, microbatches - 1, stages - 1,
        microbatches - 1, stages, microbatches, actions));
  }
  schedule.stages = static_cast<int>(stages);
  schedule.microbatches = static_cast<int>(microbatches);
  // The placement, as PyTorch's validator infers it: each stage on the row that names it.
  std::vector<int> held(schedule.ranks, 0);
  for (int stage = 0; stage < schedule.stages; ++stage) {
    const auto placed = rank_of_stage.find(stage);
    if (placed == rank_of_stage.end()) {
      throw InputError(
          fmt::format("{}: stage {} appears in no row, but stage {} does (stages 0..{} need a rank)", source,
                      stage, stages - 1, stages - 1));
    }
    schedule.rank_of_stage.push_back(placed->second);
    ++held[placed->second];
  }
  for (int rank = 0; rank < schedule.ranks; ++rank) {
    if (held[rank] == 0) {
      throw InputError(
          fmt::format("{}: row {} (rank {}) runs no stage; every rank needs one", source, rank + 1, rank));
    }
  }
  check_csv_schedule(schedule, columns, source);
  schedule.transfer_gates = transfer_gates_of(comm_tokens, schedule, source);
  return schedule;
}

PytorchCsvSchedule read_pytorch_csv(const std::string& path) {
  return parse_pytorch_csv(read_text_file(path, "CSV schedule"), path);
}

std::string format_pytorch_csv(const DeviceActionLists& lists) {
  std::string out;
  for (const ActionList& row : lists) {
    for (size_t i = 0; i < row.size(); ++i) {
      const Action& a = row[i];
      if (a.kind == OpKind::U) {
        throw InputError(
            fmt::format("PyTorch's CSV format has no optimizer step; cannot write {}", describe(a)));
      }
      if (a.fused_with_next && i + 1 < row.size()) {
        const Action& b = row[++i];
        fmt::format_to(std::back_inserter(out), "{}({}{}{};{}{}{}){}",
                       out.empty() || out.back() == '\n' ? "" : ",", a.stage, op_letter(a.kind), a.microbatch,
                       b.stage, op_letter(b.kind), b.microbatch, kOverlap);
        continue;
      }
      fmt::format_to(std::back_inserter(out), "{}{}{}{}", i ? "," : "", a.stage, op_letter(a.kind),
                     a.microbatch);
    }
    out += '\n';
  }
  return out;
}

}  // namespace pipesim

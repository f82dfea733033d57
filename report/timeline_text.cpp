#include "report/timeline_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

namespace pipesim {
namespace {

constexpr int kMaxColumnsPerUnit = 8;
constexpr int kRulerStep = 10;  // columns between ruler labels
constexpr char kIdle = '.';

// Maps time to columns: exact when every boundary is a multiple of `unit_ns`, rounded otherwise.
struct Scale {
  double columns_per_ns = 0;
  int columns = 0;
  int column(TimeNs t) const {
    return static_cast<int>(std::llround(static_cast<double>(t) * columns_per_ns));
  }
};

Scale choose_scale(const RunTrace& trace, int width) {
  TimeNs unit_ns = 0;
  for (const OpRecord& op : trace.ops) unit_ns = std::gcd(unit_ns, std::gcd(op.start_ns, op.end_ns));
  const TimeNs makespan_ns = trace.makespan_ns;
  if (makespan_ns <= 0 || unit_ns <= 0) return {0, 0};
  const TimeNs units = makespan_ns / unit_ns;
  Scale scale;
  if (units <= width) {
    const int per_unit = static_cast<int>(std::min<TimeNs>(kMaxColumnsPerUnit, width / units));
    scale.columns_per_ns = static_cast<double>(per_unit) / static_cast<double>(unit_ns);
    scale.columns = static_cast<int>(units * per_unit);
  } else {
    scale.columns_per_ns = static_cast<double>(width) / static_cast<double>(makespan_ns);
    scale.columns = width;
  }
  return scale;
}

const char* color_of(OpKind kind) {
  switch (kind) {
    case OpKind::F:
      return "\x1b[30;46m";  // black on cyan
    case OpKind::B:
      return "\x1b[30;42m";  // black on green
    case OpKind::I:
      return "\x1b[30;42m";
    case OpKind::W:
      return "\x1b[30;43m";  // black on yellow
    case OpKind::U:
      return "\x1b[30;45m";  // black on magenta
  }
  return "";
}

// One device's row: characters plus, for colour, the op kind owning each column.
struct Row {
  std::string text;
  std::vector<int> kind;  // -1 idle
};

Row draw_device(const RunTrace& trace, int device, const Scale& scale) {
  Row row{std::string(scale.columns, kIdle), std::vector<int>(scale.columns, -1)};
  for (const OpRecord& op : trace.ops) {
    if (op.device != device) continue;
    const int begin = std::clamp(scale.column(op.start_ns), 0, scale.columns);
    const int end = std::clamp(scale.column(op.end_ns), 0, scale.columns);
    if (end <= begin) continue;
    // The letter and microbatch when they fit, else the letter alone (U has no microbatch).
    // Later chunks of an interleaved device in lowercase, so that virtual stages can be told apart.
    const bool later_chunk = trace.layout.chunk_of_stage[op.action.stage] > 0;
    const char letter =
        later_chunk ? static_cast<char>(std::tolower(op_letter(op.action.kind))) : op_letter(op.action.kind);
    const std::string full = fmt::format("{}{}", letter, op.action.microbatch);
    const bool fits = op.action.kind != OpKind::U && static_cast<int>(full.size()) <= end - begin;
    const std::string_view label = fits ? std::string_view(full) : std::string_view(full).substr(0, 1);
    for (int c = begin; c < end; ++c) {
      const size_t i = static_cast<size_t>(c - begin);
      row.text[c] = i < label.size() ? label[i] : ' ';
      row.kind[c] = static_cast<int>(op.action.kind);
    }
  }
  return row;
}

std::string colorize(const Row& row) {
  std::string out;
  int current = -1;
  for (size_t c = 0; c < row.text.size(); ++c) {
    if (row.kind[c] != current) {
      if (current >= 0) out += "\x1b[0m";
      current = row.kind[c];
      if (current >= 0) out += color_of(static_cast<OpKind>(current));
    }
    out += row.text[c];
  }
  if (current >= 0) out += "\x1b[0m";
  return out;
}

// The smallest of 1, 2, 5 times a power of ten that is at least `ms`.
double nice_step_ms(double ms) {
  const double power = std::pow(10.0, std::floor(std::log10(ms)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * power >= ms) return factor * power;
  }
  return 10 * power;
}

// Tick marks at round times, labelled in ms where the labels do not collide.
std::string ruler(const Scale& scale, size_t indent) {
  const double ms_per_column = 1 / scale.columns_per_ns / 1e6;
  const double step_ms = nice_step_ms(kRulerStep * ms_per_column);
  std::string marks(scale.columns + 1, ' ');
  std::string labels(scale.columns + 32, ' ');
  size_t free_from = 0;  // first column a new label may use
  for (int k = 0;; ++k) {
    const double t_ms = k * step_ms;
    const int c = static_cast<int>(std::lround(t_ms / ms_per_column));
    if (c > scale.columns) break;
    marks[c] = '|';
    const std::string text = fmt::format("{:g}", t_ms);
    if (static_cast<size_t>(c) < free_from) continue;
    for (size_t i = 0; i < text.size(); ++i) labels[c + i] = text[i];
    free_from = c + text.size() + 1;
  }
  while (!labels.empty() && labels.back() == ' ') labels.pop_back();
  while (!marks.empty() && marks.back() == ' ') marks.pop_back();
  const std::string pad(indent, ' ');
  return pad + marks + "\n" + pad + labels + " ms\n";
}

}  // namespace

std::string render_timeline(const SimulationResult& result, const TimelineTextOptions& options) {
  const RunTrace& trace = result.trace;
  const Scale scale = choose_scale(trace, std::max(options.width, 1));
  std::string out =
      fmt::format("{}: N={}, m={}, {} batch(es), makespan {:g} ms", result.label, result.spec.devices,
                  result.spec.microbatches, result.spec.batches, ns_to_ms(trace.makespan_ns));
  if (scale.columns > 0) out += fmt::format(", 1 column = {:g} ms", 1 / scale.columns_per_ns / 1e6);
  out += "\n";
  const int devices = trace.layout.devices;
  const std::string name_width = fmt::format("{}", devices);
  std::vector<TimeNs> busy_ns(devices, 0);
  for (const OpRecord& op : trace.ops) busy_ns[op.device] += op.duration_ns();
  size_t indent = 0;
  for (int d = 0; d < devices; ++d) {
    const Row row = draw_device(trace, d, scale);
    const std::string prefix = fmt::format("dev {:>{}} |", d + 1, name_width.size());
    indent = prefix.size();
    const double busy = trace.makespan_ns > 0 ? 100.0 * busy_ns[d] / trace.makespan_ns : 0.0;
    out += prefix + (options.color ? colorize(row) : row.text) + fmt::format("| busy {:.0f}%\n", busy);
  }
  if (scale.columns > 0) out += ruler(scale, indent);
  out +=
      "F3 = forward of microbatch 3; B backward, I backward for inputs, W backward for weights, "
      "U optimizer step; . idle\n";
  if (trace.layout.chunks_per_device > 1) out += "lowercase (f3, b3): the device's later chunks\n";
  return out;
}

}  // namespace pipesim

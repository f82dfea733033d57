#include "sim/comm_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/errors.h"
#include "base/value_ranges.h"

namespace pipesim {

TransferTiming FixedLatencyComm::send(int src_device, int /*dst_device*/, Bytes /*bytes*/, TimeNs send_ns) {
  return {send_ns, add_time_ns(send_ns, latency_ns_[src_device], "a transfer's arrival")};
}

LinkComm::LinkComm(int devices, double bandwidth_bytes_per_ns, TimeNs latency_ns)
    : devices_(devices),
      bandwidth_bytes_per_ns_(bandwidth_bytes_per_ns),
      latency_ns_(latency_ns),
      link_free_ns_(static_cast<size_t>(devices) * devices, 0) {}

TransferTiming LinkComm::send(int src_device, int dst_device, Bytes bytes, TimeNs send_ns) {
  TimeNs& free_ns = link_free_ns_[static_cast<size_t>(src_device) * devices_ + dst_device];
  const TimeNs start = std::max(send_ns, free_ns);
  const double wire_ns = std::ceil(static_cast<double>(bytes) / bandwidth_bytes_per_ns_);
  // Bytes and bandwidth are each in range, but their ratio may not be: one transfer is one time value.
  if (!(wire_ns <= static_cast<double>(kMaxTimeNs))) {
    throw InputError(
        fmt::format("a transfer of {} bytes at {:g} GB/s takes {:.3g} s, more than the {:g} s one "
                    "time value may be (comm.bandwidth_gb_per_s or the transfer bytes)",
                    bytes, bandwidth_bytes_per_ns_, wire_ns / 1e9, kMaxTimeMs / 1e3));
  }
  free_ns = add_time_ns(start, static_cast<TimeNs>(wire_ns), "a transfer's end");
  return {start, add_time_ns(free_ns, latency_ns_, "a transfer's arrival")};
}

}  // namespace pipesim

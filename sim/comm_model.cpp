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

void LinkComm::set_inter_node_link(std::vector<int> node_of_device, double bandwidth_bytes_per_ns,
                                   TimeNs latency_ns) {
  if (static_cast<int>(node_of_device.size()) != devices_ || !(bandwidth_bytes_per_ns > 0)) {
    throw InputError(fmt::format("inter-node link: {} node entries for {} devices at {:g} GB/s",
                                 node_of_device.size(), devices_, bandwidth_bytes_per_ns));
  }
  node_of_device_ = std::move(node_of_device);
  inter_bandwidth_bytes_per_ns_ = bandwidth_bytes_per_ns;
  inter_latency_ns_ = latency_ns;
}

TransferTiming LinkComm::send(int src_device, int dst_device, Bytes bytes, TimeNs send_ns) {
  TimeNs& free_ns = link_free_ns_[static_cast<size_t>(src_device) * devices_ + dst_device];
  const TimeNs start = std::max(send_ns, free_ns);
  const bool across_nodes =
      !node_of_device_.empty() && node_of_device_[src_device] != node_of_device_[dst_device];
  const double bandwidth_bytes_per_ns =
      across_nodes ? inter_bandwidth_bytes_per_ns_ : bandwidth_bytes_per_ns_;
  const TimeNs latency_ns = across_nodes ? inter_latency_ns_ : latency_ns_;
  const double wire_ns = std::ceil(static_cast<double>(bytes) / bandwidth_bytes_per_ns);
  // Bytes and bandwidth are each in range, but their ratio may not be: one transfer is one computed time.
  if (!computed_time_in_range(wire_ns)) {
    throw InputError(fmt::format(
        "a transfer of {} bytes at {:g} GB/s takes {:.3g} s; expected {} (comm.bandwidth_gb_per_s or the "
        "transfer bytes)",
        bytes, bandwidth_bytes_per_ns, wire_ns / 1e9, computed_time_range_text()));
  }
  free_ns = add_time_ns(start, static_cast<TimeNs>(wire_ns), "a transfer's end");
  return {start, add_time_ns(free_ns, latency_ns, "a transfer's arrival")};
}

}  // namespace pipesim

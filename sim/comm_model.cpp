#include "sim/comm_model.h"

#include <algorithm>
#include <cmath>

namespace pipesim {

TransferTiming FixedLatencyComm::send(int src_device, int /*dst_device*/, Bytes /*bytes*/, TimeNs send_ns) {
  return {send_ns, send_ns + latency_ns_[src_device]};
}

LinkComm::LinkComm(int devices, double bandwidth_bytes_per_ns, TimeNs latency_ns)
    : devices_(devices),
      bandwidth_bytes_per_ns_(bandwidth_bytes_per_ns),
      latency_ns_(latency_ns),
      link_free_ns_(static_cast<size_t>(devices) * devices, 0) {}

TransferTiming LinkComm::send(int src_device, int dst_device, Bytes bytes, TimeNs send_ns) {
  TimeNs& free_ns = link_free_ns_[static_cast<size_t>(src_device) * devices_ + dst_device];
  const TimeNs start = std::max(send_ns, free_ns);
  const auto wire_ns = static_cast<TimeNs>(std::ceil(static_cast<double>(bytes) / bandwidth_bytes_per_ns_));
  free_ns = start + wire_ns;
  return {start, start + wire_ns + latency_ns_};
}

}  // namespace pipesim

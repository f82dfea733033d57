#pragma once
// How long a cross-stage transfer takes; the engine asks only when a message sent at a given time arrives.
// Transfers overlap compute unless the model blocks streams (README.md, "Scenario format": comm.blocking).
// Sends on one directed link reach a model in nondecreasing time order.
#include <memory>
#include <vector>

#include "base/units.h"

namespace pipesim {

struct TransferTiming {
  TimeNs start_ns;    // when the transfer began moving (after queueing on its link)
  TimeNs arrival_ns;  // when the receiver can use it
};

class CommModel {
 public:
  virtual ~CommModel() = default;
  virtual TransferTiming send(int src_device, int dst_device, Bytes bytes, TimeNs send_ns) = 0;
  // Blocking transfers hold the compute streams of both devices: the engine starts one (calls send) once the
  // receiver's stream is free, and neither device computes until it arrives.
  virtual bool blocks_streams() const { return false; }
};

// The Zero Bubble papers' model: a fixed latency added to every cross-stage dependency, no queueing.
// latency_ns[d] is the latency of messages sent by device d.
class FixedLatencyComm : public CommModel {
 public:
  explicit FixedLatencyComm(std::vector<TimeNs> latency_ns) : latency_ns_(std::move(latency_ns)) {}
  TransferTiming send(int src_device, int dst_device, Bytes bytes, TimeNs send_ns) override;
  const std::vector<TimeNs>& latency_ns() const { return latency_ns_; }

 private:
  std::vector<TimeNs> latency_ns_;
};

// One FIFO queue per directed link: a message occupies its link for bytes/bandwidth, then arrives after
// the latency. Links are independent of compute.
class LinkComm : public CommModel {
 public:
  LinkComm(int devices, double bandwidth_bytes_per_ns, TimeNs latency_ns);
  // Devices on different nodes (node_of_device, one entry per device) send over this link instead.
  void set_inter_node_link(std::vector<int> node_of_device, double bandwidth_bytes_per_ns, TimeNs latency_ns);
  TransferTiming send(int src_device, int dst_device, Bytes bytes, TimeNs send_ns) override;

 private:
  int devices_;
  double bandwidth_bytes_per_ns_;
  TimeNs latency_ns_;
  std::vector<int> node_of_device_;  // empty: one node
  double inter_bandwidth_bytes_per_ns_ = 0;
  TimeNs inter_latency_ns_ = 0;
  std::vector<TimeNs> link_free_ns_;  // [src * devices + dst]
};

// Another model's timings, as blocking transfers: Megatron's interleaved schedule issues its batched
// isend/irecv and waits on them before the next compute op, on the sender and on the receiver alike.
class BlockingComm final : public CommModel {
 public:
  explicit BlockingComm(std::unique_ptr<CommModel> timing) : timing_(std::move(timing)) {}
  TransferTiming send(int src_device, int dst_device, Bytes bytes, TimeNs send_ns) override {
    return timing_->send(src_device, dst_device, bytes, send_ns);
  }
  bool blocks_streams() const override { return true; }

 private:
  std::unique_ptr<CommModel> timing_;
};

}  // namespace pipesim

#include "cost_models/transformer/collectives.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pipesim {

namespace {

// One step of a ring: α plus a p-th of the buffer over the link.
double ring_step_seconds(double bytes, int ranks, const LinkSpec& link) {
  if (!(link.bandwidth_gb_per_s > 0))
    throw std::invalid_argument("a collective's link needs a bandwidth above 0");
  return link.latency_us * 1e-6 + bytes / ranks / (link.bandwidth_gb_per_s * 1e9);
}

// A ring collective at NCCL's measured bus bandwidth: `passes` (2 for an all-reduce, 1 for an all-gather or a
// reduce-scatter) times (p - 1) / p of the buffer over the bus bandwidth at its size.
double measured_ring_seconds(double bytes, int ranks, const CollectiveCurve& curve, double passes,
                             double share) {
  if (bytes <= 0) return 0;
  const double bus = curve.bus_gb_per_s_at(bytes, ranks) * share;
  return passes * (ranks - 1.0) / ranks * bytes / (bus * 1e9);
}

void check(double bytes, int ranks) {
  if (ranks < 1) throw std::invalid_argument("a collective needs at least one rank");
  if (!(bytes >= 0)) throw std::invalid_argument("a collective moves a non-negative number of bytes");
}

}  // namespace

double all_reduce_seconds(double bytes, int ranks, const LinkSpec& link, CollectiveAlgorithm algorithm) {
  check(bytes, ranks);
  if (ranks == 1) return 0;
  if (algorithm == CollectiveAlgorithm::kTree) {
    const double depth = std::ceil(std::log2(static_cast<double>(ranks)));
    return 2 * depth * link.latency_us * 1e-6 + 2 * bytes / (link.bandwidth_gb_per_s * 1e9);
  }
  if (link.collectives) return measured_ring_seconds(bytes, ranks, *link.collectives, 2, 1);
  return 2.0 * (ranks - 1) * ring_step_seconds(bytes, ranks, link);
}

double reduce_scatter_seconds(double bytes, int ranks, const LinkSpec& link) {
  check(bytes, ranks);
  if (ranks == 1) return 0;
  if (link.collectives) {
    return measured_ring_seconds(bytes, ranks, *link.collectives, 1, link.collectives->gather_scatter_share);
  }
  return (ranks - 1) * ring_step_seconds(bytes, ranks, link);
}

double all_gather_seconds(double bytes, int ranks, const LinkSpec& link) {
  return reduce_scatter_seconds(bytes, ranks, link);
}

double two_level_exchange_seconds(double intra_bytes, double inter_bytes, const LinkSpec* intra,
                                  const LinkSpec* inter) {
  const auto side_s = [](double bytes, const LinkSpec* link) {
    if (!(bytes > 0)) return 0.0;
    if (!link || !(link->bandwidth_gb_per_s > 0))
      throw std::invalid_argument("an all-to-all's link needs a bandwidth above 0");
    return link->latency_us * 1e-6 + bytes / (link->bandwidth_gb_per_s * 1e9);
  };
  return std::max(side_s(intra_bytes, intra), side_s(inter_bytes, inter));
}

double all_to_all_seconds(double bytes, int ranks, int ranks_per_node, const LinkSpec* intra,
                          const LinkSpec* inter) {
  check(bytes, ranks);
  if (ranks == 1 || bytes == 0) return 0;
  const int q = std::clamp(ranks_per_node, 1, ranks);
  return two_level_exchange_seconds(bytes * (q - 1) / ranks, bytes * (ranks - q) / ranks, intra, inter);
}

}  // namespace pipesim

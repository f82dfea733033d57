#pragma once
// Times of the collectives a 3D-parallel job issues, under the latency-bandwidth (α-β) model: a message of n
// bytes over a link takes α + n / β. `bytes` is always the whole buffer (an all-reduce's input, the gathered
// result of an all-gather, the input of a reduce-scatter), p the ranks of the group, all on links like
// `link`.
//   ring all-reduce:      2 (p - 1) (α + n / (p β))      reduce-scatter then all-gather, each p - 1 steps
//   ring reduce-scatter:  (p - 1) (α + n / (p β))        ring all-gather: the same
//   tree all-reduce:      2 ⌈log2 p⌉ α + 2 n / β         reduce to a root and broadcast back, pipelined
// One rank: no time. The α-β figures are a model's, not a measurement: NCCL's achieved bus bandwidth sits
// below a link's (its protocols, the SMs it uses) and climbs with the message over several decades. A link
// that carries a measured curve (LinkSpec::collectives) runs ring collectives at it instead:
//   all-reduce:                    2 (p - 1) / p · n / bus(n)
//   reduce-scatter, all-gather:    (p - 1) / p · n / (bus(n) · gather_scatter_share)
// with bus(n) the curve at the same bytes per rank as the measured group's (CollectiveCurve). Tree
// all-reduces stay on the α-β model.
#include "spec/hardware_profile.h"

namespace pipesim {

enum class CollectiveAlgorithm { kRing, kTree };

double all_reduce_seconds(double bytes, int ranks, const LinkSpec& link,
                          CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing);
double reduce_scatter_seconds(double bytes, int ranks, const LinkSpec& link);
double all_gather_seconds(double bytes, int ranks, const LinkSpec& link);

// An all-to-all in which each of `ranks` ranks sends `bytes` in all, a p-th to each rank (itself included):
// of the group's ranks a node holds (ranks_per_node, q), q - 1 are reached over `intra` and p - q over
// `inter` (the rank's own NIC), both at once: max((q - 1) / p · n / β_intra, (p - q) / p · n / β_inter) plus
// the latency of the slower side. α-β only: NCCL's measured curves are of all-reduces. A side with ranks to
// reach needs its link (std::invalid_argument otherwise).
double all_to_all_seconds(double bytes, int ranks, int ranks_per_node, const LinkSpec* intra,
                          const LinkSpec* inter);
// The same exchange with the bytes each side moves given: `intra_bytes` over `intra`, `inter_bytes` over the
// rank's NIC, at once (0 bytes: that side takes no time).
double two_level_exchange_seconds(double intra_bytes, double inter_bytes, const LinkSpec* intra,
                                  const LinkSpec* inter);

}  // namespace pipesim

#pragma once
// One transformer layer's op times measured on a device (calibrate/gpu/torch_layer_times.py writes them:
// PyTorch, CUDA events), and the same layer predicted from a hardware profile: the check that a measured
// profile predicts what a framework runs on the card it describes.
#include <string>
#include <vector>

#include "spec/hardware_profile.h"
#include "spec/transformer_model.h"

namespace pipesim {

struct MeasuredLayerTimes {
  std::string config;      // "llama3-8b"
  int line = 0;            // in the file
  TransformerModel model;  // one layer: hidden, heads, kv_heads, ffn, mlp, seq_len, recompute, attention
  int micro_batch = 1;
  std::string norm;       // layernorm or rmsnorm (the cost model charges both as one element-wise pass)
  std::string attention;  // as measured: "flash", "flash, native GQA", "flash, GQA by repeat_kv"
  // Medians, in ms. B: backward for the input and every weight; I: for the input only; W: for the weights
  // only, which autograd computes by still running the input-gradient chain inside the layer (all but the
  // layer input's own gradient), so the weight-gradient GEMMs alone are B - I.
  double forward_ms = 0, backward_ms = 0, backward_input_ms = 0, backward_weight_ms = 0;
};

struct LayerTimesFile {
  std::string path;
  std::vector<std::string> provenance;  // the file's comment lines: device, framework versions, method
  std::vector<MeasuredLayerTimes> rows;
};

// Throws InputError naming the file, line and column of a malformed row.
LayerTimesFile load_layer_times(const std::string& path);

// The measured layer predicted by the profile: a middle stage holding that one layer (no embedding, no loss),
// per microbatch, in ms. The profile's per-op host overhead is not included: the measurement times the GPU
// work between CUDA events, which hides the host's dispatch behind the queued kernels.
struct LayerTimesComparison {
  MeasuredLayerTimes measured;
  double forward_ms = 0, backward_input_ms = 0, backward_weight_ms = 0;

  double backward_ms() const { return backward_input_ms + backward_weight_ms; }
  // Relative errors, predicted / measured - 1. W is compared with B - I (see MeasuredLayerTimes).
  double forward_error() const { return forward_ms / measured.forward_ms - 1; }
  double backward_input_error() const { return backward_input_ms / measured.backward_input_ms - 1; }
  double backward_error() const { return backward_ms() / measured.backward_ms - 1; }
  double weight_gradient_error() const {
    return backward_weight_ms / (measured.backward_ms - measured.backward_input_ms) - 1;
  }
};

std::vector<LayerTimesComparison> compare_layer_times(const HardwareProfile& profile,
                                                      const std::vector<MeasuredLayerTimes>& measured);

}  // namespace pipesim

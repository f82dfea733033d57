#include "train/numerics_dump.h"

#include <fmt/format.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/output_path.h"
#include "executor/datasets.h"
#include "executor/dense_ops.h"

namespace pipesim {

namespace {

static_assert(std::endian::native == std::endian::little,
              "the .npy files are written little-endian as stored");

// Bytes to a file, written beside it and renamed over it (a kill never leaves half a file under the name; a
// symlink's target is written, the link kept).
void write_bytes(const std::string& path_as_given, const std::string& bytes) {
  const std::string path = output_target(path_as_given);
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw InputError(fmt::format("{}: cannot write it{}", path, ec ? ": " + ec.message() : ""));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    throw InputError(fmt::format("{}: cannot write it: {}", path, std::strerror(error)));
  }
}

template <typename T>
void write_array(const std::string& path, std::span<const T> values, const std::vector<int>& shape,
                 const char* descr) {
  std::size_t count = 1;
  std::string dims;  // numpy's own spelling: "(5,)", "(3, 4)"
  for (std::size_t i = 0; i < shape.size(); ++i) {
    count *= static_cast<std::size_t>(shape[i]);
    dims += fmt::format("{}{}", i ? ", " : "", shape[i]);
  }
  if (shape.size() == 1) dims += ",";
  if (count != values.size()) {
    throw std::logic_error(fmt::format("{}: {} values for a shape of {}", path, values.size(), count));
  }
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  // Magic (6) + version (2) + header length (2) + header, padded with spaces and a newline to 64 bytes.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  write_bytes(path, bytes);
}

std::string role_name(executor::ParameterRole role) {
  switch (role) {
    case executor::ParameterRole::kMatrix:
      return "matrix";
    case executor::ParameterRole::kVector:
      return "vector";
    case executor::ParameterRole::kEmbedding:
      return "embedding";
    case executor::ParameterRole::kHead:
      return "head";
  }
  return "vector";
}

// A unit's tensors as the manifest lists them, and a callback per tensor with its values.
template <typename Visit>
void for_each_tensor(const executor::StagedModel& model, int stage, std::span<const float> parameters,
                     Visit&& visit) {
  const executor::StageModel<float>& s = model.stages[stage];
  for (int u = 0; u < s.unit_count(); ++u) {
    const int unit = s.first_unit() + u;
    const auto& layer = *model.units[unit];
    const std::span<const float> values = parameters.subspan(s.unit_offset(u), layer.parameter_count());
    for (const executor::ParameterBlock& b : layer.parameter_blocks())
      visit(unit, layer, b, values.subspan(b.offset, b.size()));
  }
}

std::string tensor_file(int unit, const char* name) {
  return fmt::format("unit{:02d}.{}.npy", unit, name);
}

std::vector<int> tensor_shape(const executor::ParameterBlock& b) {
  return b.rows == 1 ? std::vector<int>{b.cols} : std::vector<int>{b.rows, b.cols};
}

}  // namespace

void write_npy(const std::string& path, std::span<const float> values, const std::vector<int>& shape) {
  write_array(path, values, shape, "<f4");
}
void write_npy(const std::string& path, std::span<const int> values, const std::vector<int>& shape) {
  static_assert(sizeof(int) == 4);
  write_array(path, values, shape, "<i4");
}

void write_numerics_init(const std::string& dir, const executor::TrainingSetup& setup,
                         const executor::StagedModel& model, const std::string& schedule_label, int batches,
                         const std::vector<int>& weights_at_steps) {
  const executor::ModelShape& shape = setup.shape;
  nlohmann::json units = nlohmann::json::array();
  for (int stage = 0; stage < static_cast<int>(model.stages.size()); ++stage) {
    std::span<const float> init(model.initial_parameters[stage]);
    int current = -1;
    for_each_tensor(
        model, stage, init,
        [&](int unit, const executor::LayerUnit<float>& layer, const executor::ParameterBlock& b,
            std::span<const float> values) {
          if (unit != current) {
            units.push_back({{"index", unit},
                             {"kind", layer.kind()},
                             {"stage", stage + 1},
                             {"input_width", layer.input_width()},
                             {"output_width", layer.output_width()},
                             {"tensors", nlohmann::json::array()}});
            current = unit;
          }
          const std::string file = tensor_file(unit, b.name);
          units.back()["tensors"].push_back(
              {{"name", b.name}, {"shape", tensor_shape(b)}, {"role", role_name(b.role)}, {"file", file}});
          write_npy(dir + "/init/" + file, values, tensor_shape(b));
        });
  }
  const int m = setup.microbatches_per_batch;
  nlohmann::json rates = nlohmann::json::array();
  for (int k = 1; k <= batches; ++k)
    rates.push_back(setup.lr_schedule.at(setup.learning_rate, static_cast<std::int64_t>(k) * m));
  const executor::OptimizerConfig& o = setup.optimizer;
  nlohmann::json manifest{
      {"format", "pipesim-numerics"},
      {"version", 1},
      {"schedule", schedule_label},
      {"model",
       {{"kind", shape.kind == executor::ModelKind::kGpt ? "gpt" : "residual_mlp"},
        {"input_width", shape.input_width},
        {"width", shape.width},
        {"blocks", shape.blocks},
        {"classes", shape.classes},
        {"heads", shape.heads},
        {"token_input", shape.token_input},
        {"embedding_width", shape.embedding_width}}},
      {"conventions",
       {{"dtype", "float32 little-endian (.npy '<f4'); labels int32 ('<i4')"},
        {"matrix", "rows = fan-in, cols = fan-out: y = x W + b"},
        {"layer_norm",
         fmt::format("(x - mean) / sqrt(var + {:g}) * gamma + beta, biased variance over the row",
                     executor::kLayerNormEpsilon)},
        {"gelu", "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"},
        {"residual_mlp", "y = x + gelu(LN(x) w_in + b_in) w_out + b_out"},
        {"causal_self_attention",
         "y = x + A w_out + b_out with qkv = LN(x) w_in + b_in: q, k, v its column thirds, head h columns "
         "[h d/H, (h+1) d/H) of each; A = softmax(q k^T / sqrt(d/H), causal) v per sequence and head"},
        {"layer_norm_head", "logits = LN(x) weight + bias"},
        {"token_position_embedding", "row (sample, t) = token_table[id] + position_table[t]"},
        {"concatenated_embedding", "row = the context's token_table rows side by side"},
        {"loss", "mean softmax cross-entropy over a microbatch's rows (tokens for the GPT)"},
        {"update",
         "a stage's step takes the mean of the gradients of the microbatches it applies (summed in "
         "microbatch "
         "order), the optimizer's direction u, then W -= lr u (decoupled weight decay on matrices, "
         "embeddings and the head is inside u: u += weight_decay W)"}}},
      {"training",
       {{"seed", setup.seed},
        {"samples_per_microbatch", setup.samples_per_microbatch},
        {"microbatches_per_batch", m},
        {"batches", batches},
        {"peak_learning_rate", setup.learning_rate},
        {"lr_schedule",
         {{"warmup_fraction", setup.lr_schedule.warmup_fraction},
          {"floor_ratio", setup.lr_schedule.floor_ratio},
          {"total_microbatches", setup.lr_schedule.total_microbatches},
          {"rule",
           "linear warm-up to the peak, then cosine to floor_ratio x peak, in microbatches applied; "
           "constant when total_microbatches is 0"}}},
        {"learning_rate_by_step", rates},
        {"optimizer",
         {{"kind", executor::optimizer_kind_name(o.kind)},
          {"momentum", o.momentum},
          {"beta1", o.beta1},
          {"beta2", o.beta2},
          {"beta3", o.beta3},
          {"epsilon", o.epsilon},
          {"weight_decay", o.weight_decay},
          {"adamw_lr_ratio", o.adamw_lr_ratio},
          {"newton_schulz_steps", o.newton_schulz_steps},
          {"shampoo_beta", o.shampoo_beta},
          {"precondition_frequency", o.precondition_frequency}}},
        {"correction", executor::delay_correction_name(setup.correction)}}},
      {"units", units},
      {"weights_at_steps", weights_at_steps},
      {"weights_dir", "weights-step-K/ (a stage's tensors after its K-th optimizer step)"}};
  write_bytes(dir + "/manifest.json", manifest.dump(2) + "\n");
}

void write_numerics_batches(const std::string& dir, const executor::TrainingSetup& setup, int batches) {
  nlohmann::json files = nlohmann::json::array();
  for (int k = 0; k < batches; ++k) {
    for (int j = 0; j < setup.microbatches_per_batch; ++j) {
      const executor::Microbatch<float> mb = executor::training_microbatch(setup, k, j);
      const std::string stem = fmt::format("step{:04d}-mb{:02d}", k, j);
      write_npy(fmt::format("{}/{}-inputs.npy", dir, stem), mb.inputs.values,
                {mb.inputs.rows, mb.inputs.cols});
      write_npy(fmt::format("{}/{}-labels.npy", dir, stem), mb.labels, {static_cast<int>(mb.labels.size())});
      files.push_back({{"step", k},
                       {"microbatch", j},
                       {"inputs", stem + "-inputs.npy"},
                       {"labels", stem + "-labels.npy"}});
    }
  }
  const nlohmann::json index{
      {"format", "pipesim-numerics-batches"},
      {"version", 1},
      {"inputs", "float32 [rows, features]; for token models the character ids as floats (exact below 2^24)"},
      {"labels", "int32, one per row of the loss (per token for the GPT)"},
      {"microbatches", files}};
  write_bytes(dir + "/batches.json", index.dump(2) + "\n");
}

void write_numerics_stage_weights(const std::string& dir, int step, const executor::StagedModel& model,
                                  int stage, std::span<const float> parameters) {
  for_each_tensor(model, stage, parameters,
                  [&](int unit, const executor::LayerUnit<float>&, const executor::ParameterBlock& b,
                      std::span<const float> values) {
                    write_npy(fmt::format("{}/weights-step-{}/{}", dir, step, tensor_file(unit, b.name)),
                              values, tensor_shape(b));
                  });
}

}  // namespace pipesim

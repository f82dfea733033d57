#pragma once
// Megatron-LM's --pipeline-model-parallel-layout string read as layers per virtual stage.
//
// The string lists the virtual stages in model order, separated by '|'; each holds its layers as characters:
// E the embedding, t a transformer (decoder) layer, L the loss (output layer), m a multi-token-prediction
// layer. Commas are cosmetic; "(...)*n" repeats a group n times and "x*n" a character (groups first, as
// Megatron expands them), so "Et*3|(tt|)*29,m|L" is 32 stages. The stage count is a multiple of the pipeline
// size; the quotient is the number of chunks per rank (virtual stage c * stages + r is chunk c of rank r).
#include <string>
#include <vector>

namespace pipesim {

struct MegatronLayout {
  int chunks = 1;                 // virtual stages per pipeline rank
  std::vector<int> stage_layers;  // transformer layers per virtual stage, model order
};

// The string with its repetitions expanded ("(tt|)*2" -> "tt|tt|"), commas dropped. Throws InputError for an
// unbalanced parenthesis, a '*' without a count, or an expansion beyond a million characters.
std::string expand_megatron_layout(const std::string& layout);

// Throws InputError (naming the layout, the stage and what was expected) unless: every character is E, t, L
// or m; E appears once, first, on the first stage, and L once, last, on the last stage (pipesim keeps the
// embedding and output layer at the pipeline's ends); there are `layers` t's; the stage count divides by
// `pipeline_stages`. m (multi-token prediction) is refused: pipesim does not model it.
MegatronLayout read_megatron_layout(const std::string& layout, int pipeline_stages, int layers);

}  // namespace pipesim

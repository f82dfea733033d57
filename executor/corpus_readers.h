#pragma once
// Readers of the real data sets the executor trains on, all from Debian packages installed beforehand
// (scripts/setup.sh), never downloaded at run time: Fashion-MNIST's gzipped IDX files
// (`dataset-fashion-mnist`), Jane Austen's novels in an R package's lazy-load database (`r-cran-janeaustenr`,
// unpacked without R) and the plain-text `fortunes`. A missing corpus is an InputError naming its package.
#include <cstdint>
#include <string>
#include <vector>

namespace pipesim::executor {

// The whole of a gzip (or plain) file. Throws InputError naming `package` when it cannot be read.
std::string read_gzip_file(const std::string& path, const std::string& package);

// An IDX array (big-endian magic 0x0000 0x08 rank, then rank u32 dimensions, then unsigned bytes).
struct IdxArray {
  std::vector<int> dimensions;
  std::vector<std::uint8_t> values;
};
// Throws InputError naming `what` when the bytes are not an unsigned-byte IDX array.
IdxArray parse_idx(const std::string& bytes, const std::string& what);

// Images (rows x cols pixels) and their labels.
struct ImageSet {
  int count = 0;
  int pixels = 0;  // per image
  std::vector<std::uint8_t> images;
  std::vector<std::uint8_t> labels;
};
// `prefix` is "train" or "t10k": {dir}/{prefix}-images-idx3-ubyte.gz and -labels-idx1-ubyte.gz.
ImageSet read_idx_images(const std::string& dir, const std::string& prefix);
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// One text of a corpus.
struct NamedText {
  std::string name;
  std::string text;
};

// The character vectors stored in an R lazy-load database ({base}.rdx, a gzipped serialized index, and
// {base}.rdb, one record per variable: a 4-byte big-endian length, then a zlib stream of the serialized
// value), each joined by newlines, in the order the index lists them. Only what such a database of
// character vectors needs of R's serialization format (version 2 or 3, XDR) is understood; anything else is
// an InputError naming the file.
std::vector<NamedText> read_r_character_vectors(const std::string& base, const std::string& package);
inline constexpr const char* kJaneAustenDataBase = "/usr/local/share/pipesim/janeaustenr/data/Rdata";

// Every fortune file of a directory (files without an extension; the .dat indexes are skipped), as one text
// each, sorted by name.
std::vector<NamedText> read_fortunes(const std::string& dir);
inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";

}  // namespace pipesim::executor

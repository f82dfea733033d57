#include "executor/corpus_readers.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

#include "base/errors.h"

namespace pipesim::executor {
namespace {

[[noreturn]] void missing_corpus(const std::string& path, const std::string& package) {
  throw InputError(
      fmt::format("cannot read {}: install the Debian package {} (scripts/setup.sh does)", path, package));
}

std::uint32_t big_endian_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<std::uint8_t>(bytes[at + i]);
  return value;
}

// What an R lazy-load database holds: character vectors, integer/logical vectors and lists, with names.
struct RObject {
  int type = 0;  // R's SEXPTYPE; 0 for NULL
  std::vector<std::string> strings;
  std::vector<int> integers;
  std::vector<RObject> elements;
  std::vector<std::string> names;
};

// R's serialization format, XDR (big-endian) variant, as far as such databases need it.
class RUnserializer {
 public:
  RUnserializer(const std::string& bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}

  RObject read_document() {
    if (bytes_.compare(0, 2, "X\n") != 0) fail("not R's XDR serialization (no 'X\\n' header)");
    at_ = 2;
    const int version = read_int();
    if (version != 2 && version != 3)
      fail(fmt::format("serialization version {} (2 or 3 understood)", version));
    read_int();  // writer's R version
    read_int();  // oldest R version that reads it
    if (version == 3) at_ += static_cast<std::size_t>(checked_length(read_int()));  // native encoding name
    return read_item();
  }

 private:
  static constexpr int kSymbol = 1, kPairList = 2, kChars = 9, kLogical = 10, kInteger = 13, kString = 16,
                       kList = 19, kReference = 255, kNilValue = 254;

  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(fmt::format("{}: byte {}: {}", what_, at_, why));
  }
  int read_int() {
    if (at_ + 4 > bytes_.size()) fail("truncated");
    const int value = static_cast<int>(big_endian_u32(bytes_, at_));
    at_ += 4;
    return value;
  }
  int checked_length(int length) {
    if (length < 0 || static_cast<std::size_t>(length) > bytes_.size() - at_) fail("bad length");
    return length;
  }
  std::string read_chars() {
    const int length = read_int();
    if (length == -1) return {};  // NA_character_: an empty line
    checked_length(length);
    std::string s = bytes_.substr(at_, static_cast<std::size_t>(length));
    at_ += static_cast<std::size_t>(length);
    return s;
  }
  // Pairlist attributes; only names matter here.
  void read_attributes(RObject& target) {
    const RObject attributes = read_item();
    for (std::size_t i = 0; i < attributes.elements.size(); ++i) {
      if (attributes.names[i] == "names") target.names = attributes.elements[i].strings;
    }
  }
  RObject read_item() {
    const int flags = read_int();
    const int type = flags & 0xFF;
    const bool has_attributes = (flags & (1 << 9)) != 0;
    RObject object;
    object.type = type;
    switch (type) {
      case kNilValue:
        object.type = 0;
        return object;
      case kReference: {
        const int index = (flags >> 8) != 0 ? (flags >> 8) : read_int();
        if (index < 1 || index > static_cast<int>(references_.size())) fail("reference to an unknown symbol");
        return references_[static_cast<std::size_t>(index - 1)];
      }
      case kSymbol: {
        const RObject name = read_item();
        object.strings = name.strings;
        references_.push_back(object);
        return object;
      }
      case kChars:
        object.strings = {read_chars()};
        return object;
      case kPairList: {
        // A chain of (attributes, tag, value, rest) cells, flattened into elements and names.
        RObject list;
        list.type = kPairList;
        int cell_flags = flags;
        while (true) {
          if ((cell_flags & (1 << 9)) != 0) read_item();
          list.names.push_back((cell_flags & (1 << 10)) != 0 ? read_item().strings.at(0) : std::string());
          list.elements.push_back(read_item());
          cell_flags = read_int();
          if ((cell_flags & 0xFF) == kNilValue) return list;
          if ((cell_flags & 0xFF) != kPairList) fail("a pairlist ending in something else than NULL");
        }
      }
      case kLogical:
      case kInteger:
      case kString:
      case kList: {
        const int length = read_int();
        if (length < 0) fail("a long vector (over 2^31 elements)");
        for (int i = 0; i < length; ++i) {
          if (type == kString) {
            const RObject element = read_item();
            if (element.type != kChars) fail("a character vector element that is not a string");
            object.strings.push_back(element.strings[0]);
          } else if (type == kList) {
            object.elements.push_back(read_item());
          } else {
            object.integers.push_back(read_int());
          }
        }
        if (has_attributes) read_attributes(object);
        return object;
      }
      default:
        fail(fmt::format("R object type {} (only character, integer and logical vectors, lists and names)",
                         type));
    }
  }

  const std::string& bytes_;
  std::string what_;
  std::size_t at_ = 0;
  std::vector<RObject> references_;
};

const RObject& named_element(const RObject& list, const std::string& name, const std::string& what) {
  for (std::size_t i = 0; i < list.names.size() && i < list.elements.size(); ++i) {
    if (list.names[i] == name) return list.elements[i];
  }
  throw InputError(fmt::format("{}: no '{}' entry in the index", what, name));
}

std::string read_binary_file(const std::string& path, const std::string& package) {
  std::ifstream in(path, std::ios::binary);
  if (!in) missing_corpus(path, package);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

std::string read_gzip_file(const std::string& path, const std::string& package) {
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) missing_corpus(path, package);
  std::string out;
  char buffer[1 << 16];
  while (true) {
    const int got = gzread(file.get(), buffer, sizeof buffer);
    if (got < 0) throw InputError(fmt::format("{}: not a readable gzip file", path));
    if (got == 0) return out;
    out.append(buffer, static_cast<std::size_t>(got));
  }
}

IdxArray parse_idx(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0 || bytes[2] != 0x08) {
    throw InputError(fmt::format("{}: not an unsigned-byte IDX array (magic 00 00 08 rank)", what));
  }
  IdxArray array;
  const int rank = static_cast<std::uint8_t>(bytes[3]);
  std::size_t count = 1;
  if (bytes.size() < 4 + 4 * static_cast<std::size_t>(rank))
    throw InputError(what + ": truncated IDX header");
  for (int d = 0; d < rank; ++d) {
    const std::uint32_t size = big_endian_u32(bytes, 4 + 4 * static_cast<std::size_t>(d));
    array.dimensions.push_back(static_cast<int>(size));
    count *= size;
  }
  const std::size_t header = 4 + 4 * static_cast<std::size_t>(rank);
  if (bytes.size() - header != count) {
    throw InputError(fmt::format("{}: IDX dimensions say {} values, the file holds {}", what, count,
                                 bytes.size() - header));
  }
  array.values.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return array;
}

ImageSet read_idx_images(const std::string& dir, const std::string& prefix) {
  const std::string package = "dataset-fashion-mnist";
  const std::string images_path = fmt::format("{}/{}-images-idx3-ubyte.gz", dir, prefix);
  const std::string labels_path = fmt::format("{}/{}-labels-idx1-ubyte.gz", dir, prefix);
  IdxArray images = parse_idx(read_gzip_file(images_path, package), images_path);
  IdxArray labels = parse_idx(read_gzip_file(labels_path, package), labels_path);
  if (images.dimensions.size() != 3 || labels.dimensions.size() != 1 ||
      images.dimensions[0] != labels.dimensions[0]) {
    throw InputError(
        fmt::format("{} and {}: expected N x rows x cols images and N labels", images_path, labels_path));
  }
  ImageSet set;
  set.count = images.dimensions[0];
  set.pixels = images.dimensions[1] * images.dimensions[2];
  set.images = std::move(images.values);
  set.labels = std::move(labels.values);
  return set;
}

std::vector<NamedText> read_r_character_vectors(const std::string& base, const std::string& package) {
  const std::string index_path = base + ".rdx";
  const std::string data_path = base + ".rdb";
  const std::string index_bytes = read_gzip_file(index_path, package);
  const RObject index = RUnserializer(index_bytes, index_path).read_document();
  const RObject& variables = named_element(index, "variables", index_path);
  const RObject& compressed = named_element(index, "compressed", index_path);
  if (compressed.integers.size() != 1 || compressed.integers[0] != 1) {
    throw InputError(
        fmt::format("{}: only zlib-compressed databases (compressed = TRUE) are read", index_path));
  }
  const std::string data = read_binary_file(data_path, package);
  std::vector<NamedText> texts;
  for (std::size_t v = 0; v < variables.elements.size(); ++v) {
    const std::vector<int>& where = variables.elements[v].integers;
    const std::string what =
        fmt::format("{} (record '{}')", data_path, v < variables.names.size() ? variables.names[v] : "?");
    if (where.size() != 2 || where[0] < 0 || where[1] < 5 ||
        static_cast<std::size_t>(where[0]) + static_cast<std::size_t>(where[1]) > data.size()) {
      throw InputError(what + ": the index points outside the file");
    }
    const std::size_t offset = static_cast<std::size_t>(where[0]);
    uLongf inflated_size = big_endian_u32(data, offset);
    std::string inflated(inflated_size, '\0');
    if (uncompress(reinterpret_cast<Bytef*>(inflated.data()), &inflated_size,
                   reinterpret_cast<const Bytef*>(data.data() + offset + 4),
                   static_cast<uLong>(where[1] - 4)) != Z_OK ||
        inflated_size != inflated.size()) {
      throw InputError(what + ": not a zlib stream of the length its header gives");
    }
    const RObject value = RUnserializer(inflated, what).read_document();
    if (value.type != 16) throw InputError(what + ": not a character vector");
    NamedText text{variables.names.at(v), {}};
    for (const std::string& line : value.strings) {
      text.text += line;
      text.text += '\n';
    }
    texts.push_back(std::move(text));
  }
  return texts;
}

std::vector<NamedText> read_fortunes(const std::string& dir) {
  std::error_code error;
  std::vector<NamedText> texts;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (!entry.is_regular_file() || entry.path().has_extension()) continue;
    texts.push_back({entry.path().filename().string(), read_binary_file(entry.path().string(), "fortunes")});
  }
  if (error || texts.empty()) missing_corpus(dir, "fortunes");
  std::sort(texts.begin(), texts.end(),
            [](const NamedText& a, const NamedText& b) { return a.name < b.name; });
  return texts;
}

}  // namespace pipesim::executor

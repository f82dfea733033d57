// The data readers on tiny hand-made files (gzipped IDX arrays, an R lazy-load database built here byte by
// byte), the data sets' microbatches (next-character labels, pixel scaling, held-out text), the counter-based
// draw that makes microbatch (k, j) independent of the order it is asked for, and the errors that name a
// missing package. The real corpora are read too when their packages are installed.
#include "executor/datasets.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "base/errors.h"

namespace pipesim::executor {
namespace {

std::string big_endian(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("pipesim_datasets_test_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write_gzip(const std::filesystem::path& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(file);
}

std::string idx(const std::vector<std::uint32_t>& dims, const std::vector<std::uint8_t>& values) {
  std::string bytes{'\0', '\0', '\x08', static_cast<char>(dims.size())};
  for (const std::uint32_t d : dims) bytes += big_endian(d);
  bytes.append(values.begin(), values.end());
  return bytes;
}

TEST(ExecutorDataReaders, IdxArraysParseAndBadOnesAreRefused) {
  const IdxArray a = parse_idx(idx({2, 3}, {1, 2, 3, 4, 5, 6}), "t");
  EXPECT_EQ(a.dimensions, (std::vector<int>{2, 3}));
  EXPECT_EQ(a.values, (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_THROW(parse_idx(idx({2, 3}, {1, 2, 3}), "t"), InputError);  // fewer values than the dimensions say
  std::string wrong_type = idx({1}, {7});
  wrong_type[2] = '\x0d';  // float IDX
  EXPECT_THROW(parse_idx(wrong_type, "t"), InputError);
}

TEST(ExecutorDataReaders, GzippedIdxImagesBecomeAScaledDataset) {
  const auto dir = fresh_dir("idx");
  for (const std::string prefix : {"train", "t10k"}) {
    write_gzip(dir / (prefix + "-images-idx3-ubyte.gz"), idx({2, 1, 2}, {0, 255, 51, 102}));
    write_gzip(dir / (prefix + "-labels-idx1-ubyte.gz"), idx({2}, {3, 1}));
  }
  ImageSet train = read_idx_images(dir.string(), "train");
  EXPECT_EQ(train.count, 2);
  EXPECT_EQ(train.pixels, 2);
  const ImageDataset data("tiny", std::move(train), read_idx_images(dir.string(), "t10k"));
  EXPECT_EQ(data.classes(), 4);
  const Microbatch<float> mb = data.microbatch(1, 0, 0, 16, DataSplit::kTrain);
  for (int r = 0; r < 16; ++r) {
    // Pixel p maps to p / 127.5 - 1: image 0 is (-1, 1), image 1 is (-0.6, -0.2).
    if (mb.labels[r] == 3) {
      EXPECT_EQ(mb.inputs.at(r, 0), -1.0F);
      EXPECT_EQ(mb.inputs.at(r, 1), 1.0F);
    } else {
      EXPECT_EQ(mb.labels[r], 1);
      EXPECT_NEAR(mb.inputs.at(r, 0), -0.6F, 1e-6);
      EXPECT_NEAR(mb.inputs.at(r, 1), -0.2F, 1e-6);
    }
  }
  try {
    read_idx_images((dir / "absent").string(), "train");
    FAIL() << "no error for a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"), std::string::npos) << e.what();
  }
}

// R's XDR serialization of the few things a lazy-load database of character vectors holds.
struct RWriter {
  std::string bytes = std::string("X\n") + big_endian(3) + big_endian(0x040201) + big_endian(0x030500) +
                      big_endian(5) + "UTF-8";
  void flags(std::uint32_t type, bool attributes = false, bool tag = false) {
    bytes += big_endian(type | (attributes ? 1U << 9 : 0) | (tag ? 1U << 10 : 0));
  }
  void chars(const std::string* s) {
    bytes += big_endian(0x00040009);  // CHARSXP, UTF-8 flag
    bytes += s == nullptr ? big_endian(0xFFFFFFFF) : big_endian(static_cast<std::uint32_t>(s->size())) + *s;
  }
  void strings(const std::vector<std::string>& values, const std::string* na_at_end = nullptr) {
    flags(16);
    bytes += big_endian(static_cast<std::uint32_t>(values.size() + (na_at_end != nullptr ? 1 : 0)));
    for (const std::string& v : values) chars(&v);
    if (na_at_end != nullptr) chars(nullptr);
  }
  // attributes: pairlist (names = ...), the symbol written once then referenced.
  void names_attribute(const std::vector<std::string>& names) {
    flags(2, false, true);
    if (!names_symbol_written) {
      flags(1);
      const std::string name = "names";
      chars(&name);
      names_symbol_written = true;
    } else {
      bytes += big_endian((1U << 8) | 255U);  // REFSXP to the first symbol
    }
    strings(names);
    flags(254);
  }
  bool names_symbol_written = false;
};

std::string zlib_compress(const std::string& s) {
  uLongf size = compressBound(s.size());
  std::string out(size, '\0');
  compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(s.data()), s.size(),
            9);
  out.resize(size);
  return out;
}

void write_r_database(const std::filesystem::path& base, const std::vector<NamedText>& records,
                      bool corrupt_second = false) {
  std::string rdb;
  std::vector<std::pair<int, int>> where;
  for (std::size_t i = 0; i < records.size(); ++i) {
    RWriter w;
    std::vector<std::string> lines;
    std::size_t from = 0;
    for (std::size_t nl; (nl = records[i].text.find('\n', from)) != std::string::npos; from = nl + 1) {
      lines.push_back(records[i].text.substr(from, nl - from));
    }
    const std::string na_marker;  // the first record ends in NA_character_, read as an empty line
    w.strings(lines, i == 0 ? &na_marker : nullptr);
    std::string record = big_endian(static_cast<std::uint32_t>(w.bytes.size())) + zlib_compress(w.bytes);
    if (corrupt_second && i == 1) record[8] ^= 0x55;
    where.emplace_back(static_cast<int>(rdb.size()), static_cast<int>(record.size()));
    rdb += record;
  }
  RWriter index;
  index.flags(19, true);  // list(variables = ..., references = list(), compressed = TRUE)
  index.bytes += big_endian(3);
  index.flags(19, true);
  index.bytes += big_endian(static_cast<std::uint32_t>(records.size()));
  for (const auto& [offset, length] : where) {
    index.flags(13);
    index.bytes += big_endian(2) + big_endian(offset) + big_endian(length);
  }
  std::vector<std::string> names;
  for (const NamedText& r : records) names.push_back(r.name);
  index.names_attribute(names);
  index.flags(19);
  index.bytes += big_endian(0);
  index.flags(10);
  index.bytes += big_endian(1) + big_endian(1);
  index.names_attribute({"variables", "references", "compressed"});
  write_gzip(base.string() + ".rdx", index.bytes);
  std::ofstream(base.string() + ".rdb", std::ios::binary) << rdb;
}

TEST(ExecutorDataReaders, RLazyLoadDatabaseYieldsEachCharacterVectorByName) {
  const auto base = fresh_dir("rdb") / "Rdata";
  write_r_database(
      base, {{"emma", "EMMA\n\nBy Jane Austen\n"}, {"persuasion", "Sir Walter Elliot\nof Kellynch\n"}});
  const std::vector<NamedText> texts = read_r_character_vectors(base.string(), "r-cran-janeaustenr");
  ASSERT_EQ(texts.size(), 2U);
  EXPECT_EQ(texts[0].name, "emma");
  EXPECT_EQ(texts[0].text, "EMMA\n\nBy Jane Austen\n\n");
  EXPECT_EQ(texts[1].name, "persuasion");
  EXPECT_EQ(texts[1].text, "Sir Walter Elliot\nof Kellynch\n");
  const TextDataset split = split_corpus("tiny", texts, "persuasion", 4, TextTarget::kEveryPosition);
  EXPECT_THROW(split_corpus("tiny", texts, "sanditon", 4, TextTarget::kEveryPosition), InputError);

  write_r_database(base, {{"emma", "a\n"}, {"persuasion", "b\n"}}, true);
  EXPECT_THROW(read_r_character_vectors(base.string(), "r-cran-janeaustenr"), InputError);
  try {
    read_r_character_vectors((base.parent_path() / "absent").string(), "r-cran-janeaustenr");
    FAIL() << "no error for a missing database";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("r-cran-janeaustenr"), std::string::npos) << e.what();
  }
}

TEST(ExecutorDatasets, TextWindowsPredictTheNextCharacter) {
  const TextDataset data("t", "abcdefghij", "zyxw", 3, TextTarget::kEveryPosition);
  EXPECT_EQ(data.vocabulary(), "abcdefghijwxyz");
  EXPECT_EQ(data.classes(), 14);
  const Microbatch<float> mb = data.microbatch(5, 2, 1, 8, DataSplit::kTrain);
  ASSERT_EQ(mb.labels.size(), 24U);
  for (int r = 0; r < 8; ++r) {
    // Consecutive letters: each label is its input plus one, and the window is contiguous.
    for (int t = 0; t < 3; ++t) EXPECT_EQ(mb.labels[r * 3 + t], static_cast<int>(mb.inputs.at(r, t)) + 1);
    for (int t = 0; t + 1 < 3; ++t) EXPECT_EQ(mb.labels[r * 3 + t], static_cast<int>(mb.inputs.at(r, t + 1)));
  }
  // Validation windows come from the held-out text only (ids of w..z are 10..13).
  const Microbatch<float> held_out = data.microbatch(5, 2, 1, 8, DataSplit::kValidation);
  for (const float id : held_out.inputs.values) EXPECT_GE(id, 10.0F);
  const TextDataset last("t", "abcdefghij", "zyxw", 3, TextTarget::kNextCharacter);
  const Microbatch<float> one = last.microbatch(5, 2, 1, 8, DataSplit::kTrain);
  ASSERT_EQ(one.labels.size(), 8U);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(one.labels[r], static_cast<int>(one.inputs.at(r, 2)) + 1);
  EXPECT_THROW(TextDataset("t", "ab", "xyz", 3, TextTarget::kEveryPosition), InputError);
}

// Microbatch (k, j) is a pure function of (seed, k, j): asked in any order, by any worker, it is the same,
// and different (k, j) draw different samples.
TEST(ExecutorDatasets, MicrobatchesDoNotDependOnTheOrderTheyAreDrawn) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += static_cast<char>('a' + (i * 7919) % 26);
  const TextDataset data("t", text, text, 8, TextTarget::kEveryPosition);
  std::vector<std::vector<float>> forward_order;
  for (int k = 0; k < 3; ++k) {
    for (int j = 0; j < 4; ++j)
      forward_order.push_back(data.microbatch(7, k, j, 4, DataSplit::kTrain).inputs.values);
  }
  for (int k = 2; k >= 0; --k) {
    for (int j = 3; j >= 0; --j) {
      EXPECT_EQ(data.microbatch(7, k, j, 4, DataSplit::kTrain).inputs.values, forward_order[k * 4 + j]);
    }
  }
  for (std::size_t a = 0; a < forward_order.size(); ++a) {
    for (std::size_t b = a + 1; b < forward_order.size(); ++b) EXPECT_NE(forward_order[a], forward_order[b]);
  }
  EXPECT_NE(data.microbatch(8, 0, 0, 4, DataSplit::kTrain).inputs.values, forward_order[0]);  // the seed
  // The same through TrainingSetup, as the workers and the sequential reference draw them.
  TrainingSetup setup;
  setup.seed = 7;
  setup.samples_per_microbatch = 4;
  setup.data = std::make_shared<TextDataset>(data);
  EXPECT_EQ(training_microbatch(setup, 1, 2).inputs.values, forward_order[6]);
}

TEST(ExecutorDatasets, TheSnippetLoadsWithItsLastParagraphHeldOut) {
  const auto data = load_dataset("snippet", 16, TextTarget::kEveryPosition);
  EXPECT_TRUE(data->token_input());
  EXPECT_GT(data->classes(), 40);  // letters of both cases, punctuation
  EXPECT_EQ(data->input_width(), 16);
  EXPECT_THROW(load_dataset("gutenberg", 16, TextTarget::kEveryPosition), InputError);
}

// Only where the packages are installed (scripts/setup.sh): the real files in the real format.
TEST(ExecutorDatasets, InstalledCorporaReadWhenPresent) {
  if (!std::filesystem::exists(std::string(kJaneAustenDataBase) + ".rdb") ||
      !std::filesystem::exists(std::string(kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz")) {
    GTEST_SKIP() << "r-cran-janeaustenr or dataset-fashion-mnist not installed";
  }
  const auto novels = read_r_character_vectors(kJaneAustenDataBase, "r-cran-janeaustenr");
  ASSERT_EQ(novels.size(), 6U);
  EXPECT_EQ(novels[0].name, "emma");
  EXPECT_EQ(novels[0].text.substr(0, 4), "EMMA");
  EXPECT_EQ(novels[3].name, "persuasion");
  for (const NamedText& n : novels) EXPECT_GT(n.text.size(), 300000U) << n.name;
  const ImageSet test_images = read_idx_images(kFashionMnistDir, "t10k");
  EXPECT_EQ(test_images.count, 10000);
  EXPECT_EQ(test_images.pixels, 784);
}

}  // namespace
}  // namespace pipesim::executor

// The weights' fingerprint tells copies apart: any one value changed, in any lane or in the odd tail, or two
// values swapped, gives another fingerprint; equal copies give the same one.
#include <gtest/gtest.h>

#include <vector>

#include "executor/training_setup.h"

namespace pipesim::executor {
namespace {

TEST(Fingerprint, EveryValueAndItsPlaceCount) {
  for (const std::size_t size : {0u, 1u, 2u, 15u, 16u, 17u, 33u, 1000u}) {
    std::vector<float> values(size);
    for (std::size_t i = 0; i < size; ++i) values[i] = static_cast<float>(i) * 0.25F - 3.0F;
    const std::uint64_t base = fingerprint(values);
    EXPECT_EQ(fingerprint(std::vector<float>(values)), base);
    for (std::size_t i = 0; i < size; ++i) {
      std::vector<float> changed = values;
      changed[i] = std::nextafter(changed[i], 1e30F);  // one bit
      EXPECT_NE(fingerprint(changed), base) << "size " << size << ", value " << i;
      if (i + 1 < size) {
        std::vector<float> swapped = values;
        std::swap(swapped[i], swapped[i + 1]);
        EXPECT_NE(fingerprint(swapped), base) << "size " << size << ", swap at " << i;
      }
    }
    // The length counts: a copy with one more zero is another copy.
    std::vector<float> longer = values;
    longer.push_back(0.0F);
    EXPECT_NE(fingerprint(longer), base) << size;
  }
}

}  // namespace
}  // namespace pipesim::executor

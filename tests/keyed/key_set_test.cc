// KeySet and the key encoder: exact membership against std::set oracles for
// every storage, composite-key unambiguity, NULL handling, the collision policy
// and the memory each key costs.
#include "engine/keyed/key_set.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <thread>

#include "engine/keyed/bytes_key_table.h"
#include "engine/keyed/key_encoder.h"

namespace thund::engine::keyed {
namespace {

std::shared_ptr<arrow::Array> Int64s(const std::vector<std::optional<int64_t>>& v) {
  arrow::Int64Builder b;
  for (const auto& x : v) {
    if (x) {
      EXPECT_TRUE(b.Append(*x).ok());
    } else {
      EXPECT_TRUE(b.AppendNull().ok());
    }
  }
  return *b.Finish();
}

std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& v) {
  arrow::StringBuilder b;
  for (const auto& x : v) {
    if (x) {
      EXPECT_TRUE(b.Append(*x).ok());
    } else {
      EXPECT_TRUE(b.AppendNull().ok());
    }
  }
  return *b.Finish();
}

KeySpec SpecFor(const arrow::FieldVector& fields, KeyMatch match = KeyMatch::kExact) {
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f->name());
  auto spec = KeySpec::Make(*arrow::schema(fields), names, match, "test");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

EncodedKeys Encode(const KeySpec& spec, const std::vector<std::shared_ptr<arrow::Array>>& cols) {
  EncodedKeys keys;
  auto st = EncodeKeys(spec, cols, &keys);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return keys;
}

std::vector<uint8_t> Contains(const KeySet& set, const EncodedKeys& keys) {
  std::vector<uint8_t> out(static_cast<size_t>(keys.length));
  set.Contains(keys, out.data());
  return out;
}

// Random keys inserted in halves; every probe answer checked against std::set.
template <typename MakeKey>
void CheckAgainstOracle(const KeySpec& spec, MakeKey make, int64_t buckets) {
  std::mt19937_64 rng(42);
  auto set = KeySet::Make(spec.storage, buckets);
  std::set<std::string> oracle;
  for (int round = 0; round < 4; ++round) {
    std::vector<std::string> text;
    std::vector<std::shared_ptr<arrow::Array>> cols;
    make(rng, 5000, &text, &cols);
    EncodedKeys keys = Encode(spec, cols);
    std::vector<uint8_t> expected(text.size());
    for (size_t i = 0; i < text.size(); ++i) expected[i] = oracle.count(text[i]) > 0;
    EXPECT_EQ(Contains(*set, keys), expected) << "round " << round;
    // Insert the even rows only; the odd ones must stay absent.
    std::vector<uint8_t> mask(text.size());
    int64_t fresh = 0;
    for (size_t i = 0; i < text.size(); i += 2) {
      mask[i] = 1;
      fresh += oracle.insert(text[i]).second ? 1 : 0;
    }
    EXPECT_EQ(set->Insert(keys, mask.data()), fresh);
    EXPECT_EQ(set->size(), static_cast<int64_t>(oracle.size()));
  }
}

TEST(KeySetTest, Fixed64MatchesOracle) {
  KeySpec spec = SpecFor({arrow::field("id", arrow::int64())});
  ASSERT_EQ(spec.storage, KeyStorage::kFixed64);
  CheckAgainstOracle(
      spec,
      [](std::mt19937_64& rng, int n, std::vector<std::string>* text,
         std::vector<std::shared_ptr<arrow::Array>>* cols) {
        std::vector<std::optional<int64_t>> v;
        for (int i = 0; i < n; ++i) {
          // Small range for repeats, plus the all-ones pattern the table uses as "empty".
          int64_t x = i % 97 == 0 ? -1 : static_cast<int64_t>(rng() % 20000) - 10000;
          v.push_back(x);
          text->push_back(std::to_string(x));
        }
        cols->push_back(Int64s(v));
      },
      3);
}

TEST(KeySetTest, Fixed128CompositeMatchesOracle) {
  KeySpec spec = SpecFor({arrow::field("a", arrow::int64()), arrow::field("b", arrow::int32())});
  ASSERT_EQ(spec.storage, KeyStorage::kFixed128);
  CheckAgainstOracle(
      spec,
      [](std::mt19937_64& rng, int n, std::vector<std::string>* text,
         std::vector<std::shared_ptr<arrow::Array>>* cols) {
        arrow::Int64Builder a;
        arrow::Int32Builder b;
        for (int i = 0; i < n; ++i) {
          int64_t x = static_cast<int64_t>(rng() % 300);
          int32_t y = static_cast<int32_t>(rng() % 50);
          EXPECT_TRUE(a.Append(x).ok());
          EXPECT_TRUE(b.Append(y).ok());
          text->push_back(std::to_string(x) + "/" + std::to_string(y));
        }
        cols->push_back(*a.Finish());
        cols->push_back(*b.Finish());
      },
      8);
}

TEST(KeySetTest, BytesMatchesOracleWithVaryingLengths) {
  KeySpec spec = SpecFor({arrow::field("url", arrow::utf8())});
  CheckAgainstOracle(
      spec,
      [](std::mt19937_64& rng, int n, std::vector<std::string>* text,
         std::vector<std::shared_ptr<arrow::Array>>* cols) {
        std::vector<std::optional<std::string>> v;
        for (int i = 0; i < n; ++i) {
          std::string s = "https://h" + std::to_string(rng() % 40) + "/" +
                          std::string(rng() % 300, 'x') + std::to_string(rng() % 30);
          if (i % 500 == 0) s.clear();  // the empty string is a key like any other
          v.push_back(s);
          text->push_back(s);
        }
        cols->push_back(Strings(v));
      },
      16);
}

TEST(KeySetTest, CompositeKeysAreUnambiguous) {
  // ("a", "bc") and ("ab", "c") concatenate to the same text; they must differ.
  KeySpec spec = SpecFor({arrow::field("x", arrow::utf8()), arrow::field("y", arrow::utf8())});
  auto set = KeySet::Make(spec.storage, 4);
  EncodedKeys first = Encode(spec, {Strings({"a"}), Strings({"bc"})});
  set->Insert(first);
  EncodedKeys second = Encode(spec, {Strings({"ab", "a"}), Strings({"c", "bc"})});
  EXPECT_EQ(Contains(*set, second), (std::vector<uint8_t>{0, 1}));
}

TEST(KeySetTest, NullKeysAreNeverInsertedNorFound) {
  KeySpec spec = SpecFor({arrow::field("a", arrow::int64()), arrow::field("b", arrow::utf8())});
  EncodedKeys keys =
      Encode(spec, {Int64s({1, std::nullopt, 3}), Strings({"x", "y", std::nullopt})});
  EXPECT_EQ(keys.null_count, 2);
  EXPECT_EQ(keys.is_null, (std::vector<uint8_t>{0, 1, 1}));
  auto set = KeySet::Make(spec.storage, 2);
  EXPECT_EQ(set->Insert(keys), 1);
  EXPECT_EQ(Contains(*set, keys), (std::vector<uint8_t>{1, 0, 0}));
}

TEST(KeySetTest, InsertIfAbsentMarksFirstOccurrencesInRowOrder) {
  KeySpec spec = SpecFor({arrow::field("k", arrow::utf8())});
  auto set = KeySet::Make(spec.storage, 4);
  EncodedKeys keys = Encode(spec, {Strings({"a", "b", "a", std::nullopt, "c", "b"})});
  std::vector<uint8_t> mask = {1, 1, 1, 1, 0, 1};
  std::vector<uint8_t> first(6);
  set->InsertIfAbsent(keys, mask.data(), first.data());
  EXPECT_EQ(first, (std::vector<uint8_t>{1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(set->size(), 2);
}

TEST(KeySetTest, ConcurrentInsertsLoseNothing) {
  KeySpec spec = SpecFor({arrow::field("id", arrow::int64())});
  auto set = KeySet::Make(spec.storage, 8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int chunk = 0; chunk < 20; ++chunk) {
        std::vector<std::optional<int64_t>> v;
        for (int i = 0; i < 1000; ++i) v.push_back((t * 20 + chunk) * 1000 + i);
        EncodedKeys keys;
        ASSERT_TRUE(EncodeKeys(spec, {Int64s(v)}, &keys).ok());
        set->Insert(keys);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(set->size(), 80000);
}

// The collision policy. Exact storage compares the key bytes, so two different
// keys whose hashes are equal (forced here) are both kept. Under
// KeyMatch::kHash two keys with equal 128-bit hashes are one key: that is the
// documented price of hashing, which only a user's explicit choice turns on.
TEST(KeySetTest, ExactStorageSurvivesForcedHashCollisions) {
  BytesKeyTable table;
  const uint64_t hash = 12345, tag = 0xabcdULL << 48;
  EXPECT_TRUE(table.Insert("first key", hash, tag));
  EXPECT_TRUE(table.Insert("second key", hash, tag));  // same hash and tag, other bytes
  EXPECT_FALSE(table.Insert("first key", hash, tag));
  EXPECT_TRUE(table.Contains("second key", hash, tag));
  EXPECT_FALSE(table.Contains("third key", hash, tag));
  EXPECT_EQ(table.size(), 2);

  KeySpec spec = SpecFor({arrow::field("k", arrow::utf8())});
  auto set = KeySet::Make(spec.storage, 4);
  EncodedKeys old_keys = Encode(spec, {Strings({"alpha"})});
  EncodedKeys new_keys = Encode(spec, {Strings({"beta"})});
  new_keys.hash[0] = old_keys.hash[0];  // a full 128-bit collision, forced
  new_keys.w0[0] = old_keys.w0[0];
  set->Insert(old_keys);
  EXPECT_EQ(Contains(*set, new_keys), (std::vector<uint8_t>{0}));  // the new row is not dropped
}

TEST(KeySetTest, HashStorageTreatsEqualHashesAsOneKeyByDesign) {
  KeySpec spec = SpecFor({arrow::field("k", arrow::utf8())}, KeyMatch::kHash);
  ASSERT_EQ(spec.storage, KeyStorage::kFixed128);
  auto set = KeySet::Make(spec.storage, 4);
  EncodedKeys a = Encode(spec, {Strings({"alpha"})});
  EncodedKeys b = Encode(spec, {Strings({"beta"})});
  set->Insert(a);
  EXPECT_EQ(Contains(*set, b), (std::vector<uint8_t>{0}));  // distinct hashes: distinct keys
  b.w0[0] = a.w0[0];
  b.w1[0] = a.w1[0];
  b.hash[0] = a.hash[0];
  EXPECT_EQ(Contains(*set, b), (std::vector<uint8_t>{1}));  // equal hashes: one key
}

// Bytes per key, measured (docs/keyed-writes.md quotes these bounds).
TEST(KeySetTest, MemoryPerKeyStaysWithinTheDocumentedBounds) {
  const int64_t n = 1 << 18;
  struct Case {
    KeySpec spec;
    std::vector<std::shared_ptr<arrow::Array>> cols;
    double max_bytes_per_key;
  };
  std::vector<std::optional<int64_t>> ids;
  std::vector<std::optional<std::string>> urls;
  for (int64_t i = 0; i < n; ++i) {
    ids.push_back(i * 7919);
    urls.push_back("https://www.site" + std::to_string(i % 9973) + ".example.com/a/" +
                   std::to_string(i));  // ~40 bytes
  }
  std::vector<Case> cases;
  cases.push_back({SpecFor({arrow::field("id", arrow::int64())}), {Int64s(ids)}, 8 / 0.5 + 1});
  cases.push_back({SpecFor({arrow::field("a", arrow::int64()), arrow::field("b", arrow::int64())}),
                   {Int64s(ids), Int64s(ids)},
                   16 / 0.5 + 1});
  cases.push_back(
      {SpecFor({arrow::field("url", arrow::utf8())}), {Strings(urls)}, 40 + 2 + 16 + 8});
  cases.push_back({SpecFor({arrow::field("url", arrow::utf8())}, KeyMatch::kHash),
                   {Strings(urls)},
                   16 / 0.5 + 1});
  for (auto& c : cases) {
    auto set = KeySet::Make(c.spec.storage, 8);
    set->Reserve(n);
    EncodedKeys keys = Encode(c.spec, c.cols);
    ASSERT_EQ(set->Insert(keys), n);
    const double per_key = static_cast<double>(set->MemoryBytes()) / static_cast<double>(n);
    std::cout << "[ bytes/key ] " << c.spec.ToString() << ": " << per_key << "\n";
    EXPECT_LE(per_key, c.max_bytes_per_key) << c.spec.ToString();
  }
}

}  // namespace
}  // namespace thund::engine::keyed

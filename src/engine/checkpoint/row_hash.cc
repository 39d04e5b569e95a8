#include "engine/checkpoint/row_hash.h"

#include <xxhash.h>

#include <arrow/array.h>
#include <arrow/chunked_array.h>
#include <arrow/util/bit_util.h>

namespace thund::engine::checkpoint {
namespace {

constexpr uint64_t kNullMark = 0x9e3779b97f4a7c15ULL;

bool Covered(const arrow::DataType& t) {
  if (t.id() == arrow::Type::BOOL) return true;
  if (t.id() == arrow::Type::STRUCT) {
    for (const auto& f : t.fields()) {
      if (!Covered(*f->type())) return false;
    }
    return true;
  }
  const arrow::Type::type id = t.id();
  if (id == arrow::Type::DICTIONARY || id == arrow::Type::EXTENSION) return false;
  return arrow::is_fixed_width(id) || arrow::is_base_binary_like(id) ||
         arrow::is_binary_view_like(id);
}

// The bytes of element `i` of `a` (a covered, non-boolean type).
std::string_view ValueBytes(const arrow::Array& a, int64_t i) {
  switch (a.type_id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      return static_cast<const arrow::BinaryArray&>(a).GetView(i);
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      return static_cast<const arrow::LargeBinaryArray&>(a).GetView(i);
    case arrow::Type::STRING_VIEW:
    case arrow::Type::BINARY_VIEW:
      return static_cast<const arrow::BinaryViewArray&>(a).GetView(i);
    default: {
      const auto& fw = static_cast<const arrow::FixedWidthType&>(*a.type());
      const int width = fw.byte_width();
      const uint8_t* base = a.data()->buffers[1]->data();
      return std::string_view(reinterpret_cast<const char*>(base) + (a.offset() + i) * width,
                              static_cast<size_t>(width));
    }
  }
}

// A strong 64-bit mix (the finaliser of SplitMix64).
inline uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Folds column `a` (rows [row0, row0 + a.length())) into `lanes`: each
// value's XXH3 hash enters two lanes, mixed with different constants.
void FoldColumn(const arrow::Array& a, int64_t row0, std::vector<RowHash>* lanes) {
  if (a.type_id() == arrow::Type::STRUCT) {
    const auto& s = static_cast<const arrow::StructArray&>(a);
    for (int i = 0; i < s.num_fields(); ++i) {
      // The field with the struct's own NULLs and offset applied.
      auto field = s.GetFlattenedField(i);
      if (field.ok()) FoldColumn(**field, row0, lanes);
    }
  }
  const bool is_bool = a.type_id() == arrow::Type::BOOL;
  const bool is_struct = a.type_id() == arrow::Type::STRUCT;
  for (int64_t i = 0; i < a.length(); ++i) {
    RowHash& h = (*lanes)[static_cast<size_t>(row0 + i)];
    uint64_t v;
    if (a.IsNull(i)) {
      v = kNullMark;
    } else if (is_struct) {
      v = 0x51ed27004ab9f1b3ULL;  // present; its fields were folded above
    } else if (is_bool) {
      v = static_cast<const arrow::BooleanArray&>(a).Value(i) ? 1 : 2;
    } else {
      std::string_view b = ValueBytes(a, i);
      v = XXH3_64bits(b.data(), b.size()) ^ (b.size() << 1);
    }
    h.lo = Mix(h.lo ^ v) + 0x243f6a8885a308d3ULL;
    h.hi = Mix(h.hi + v * 0x9e3779b97f4a7c15ULL) ^ 0x13198a2e03707344ULL;
  }
}

}  // namespace

bool RowsHashable(const arrow::Schema& schema) {
  for (const auto& f : schema.fields()) {
    if (!Covered(*f->type())) return false;
  }
  return true;
}

arrow::Result<std::vector<RowHash>> HashRows(const arrow::Table& table) {
  if (!RowsHashable(*table.schema())) {
    return arrow::Status::NotImplemented("rows of ", table.schema()->ToString(),
                                         " are not hashable");
  }
  std::vector<RowHash> out(static_cast<size_t>(table.num_rows()));
  for (int c = 0; c < table.num_columns(); ++c) {
    int64_t row0 = 0;
    for (const auto& chunk : table.column(c)->chunks()) {
      FoldColumn(*chunk, row0, &out);
      row0 += chunk->length();
    }
  }
  return out;
}

uint64_t HashBytes(const void* data, size_t size) { return XXH3_64bits(data, size); }

}  // namespace thund::engine::checkpoint

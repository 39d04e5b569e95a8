#include "backend/native/partial_merge.h"

#include <cmath>
#include <cstring>
#include <string_view>

#include <arrow/compute/api.h>
#include <arrow/compute/exec.h>
#include <arrow/compute/row/grouper.h>
#include <arrow/util/bit_util.h>

#include "engine/batch/compute_init.h"

namespace thund::native {

int64_t FloorMicros(int64_t value, arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND: return value * 1000000;
    case arrow::TimeUnit::MILLI: return value * 1000;
    case arrow::TimeUnit::MICRO: return value;
    case arrow::TimeUnit::NANO: return value >= 0 ? value / 1000 : (value - 999) / 1000;
  }
  return value;
}

// Named, not anonymous: MergerParts (declared in the header) holds these
// types, and a field whose type has internal linkage is an error in a unity build.
namespace partial_merge_detail {

enum class Fold { kSum, kMin, kMax, kAnd, kOr };

arrow::Result<Fold> FoldOf(const std::string& merge) {
  if (merge == "sum") return Fold::kSum;
  if (merge == "min") return Fold::kMin;
  if (merge == "max") return Fold::kMax;
  if (merge == "bool_and") return Fold::kAnd;
  if (merge == "bool_or") return Fold::kOr;
  return arrow::Status::NotImplemented("merging partials by ", merge);
}

// The validity bitmap of `set` (one byte per group), and its null count.
arrow::Result<std::pair<std::shared_ptr<arrow::Buffer>, int64_t>> Validity(
    const std::vector<uint8_t>& set) {
  const int64_t n = static_cast<int64_t>(set.size());
  ARROW_ASSIGN_OR_RAISE(auto bitmap, arrow::AllocateBitmap(n));
  int64_t nulls = 0;
  for (int64_t i = 0; i < n; ++i) {
    arrow::bit_util::SetBitTo(bitmap->mutable_data(), i, set[i] != 0);
    nulls += set[i] == 0;
  }
  return std::make_pair(std::shared_ptr<arrow::Buffer>(std::move(bitmap)), nulls);
}

// The validity bitmap whose bits are the values of `valid` (no NULLs).
arrow::Result<std::pair<std::shared_ptr<arrow::Buffer>, int64_t>> ValidityOf(
    const arrow::BooleanArray& valid) {
  std::vector<uint8_t> set(valid.length());
  for (int64_t r = 0; r < valid.length(); ++r) set[r] = valid.Value(r);
  return Validity(set);
}

// One partial column's fold, per group id.
class Accumulator {
 public:
  virtual ~Accumulator() = default;
  virtual void Resize(int64_t groups) = 0;
  // Back to no groups, keeping the buffers for the next merge.
  virtual void Clear() = 0;
  virtual arrow::Status Add(const arrow::Array& values, const uint32_t* ids) = 0;
  // The folded values of the groups `order` lists, in that order.
  virtual arrow::Result<std::shared_ptr<arrow::Array>> Finish(
      const std::vector<uint32_t>& order) = 0;
};

// Per group: the folded value and whether any was folded in yet.
template <typename V>
class Slots : public Accumulator {
 public:
  void Resize(int64_t groups) override {
    values_.resize(groups);
    set_.resize(groups, 0);
  }
  void Clear() override {
    values_.clear();
    set_.clear();
  }

 protected:
  std::vector<V> values_;
  std::vector<uint8_t> set_;
};

// SQL orders NaN above every other value; C++'s < does not order it.
template <typename T>
bool Less(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// Fixed-width values: integers, floats, temporal types, decimals (as __int128).
template <typename T>
class FixedAccumulator : public Slots<T> {
  using Slots<T>::values_;
  using Slots<T>::set_;

 public:
  FixedAccumulator(std::shared_ptr<arrow::DataType> type, Fold fold, __int128 decimal_limit = 0)
      : type_(std::move(type)), fold_(fold), decimal_limit_(decimal_limit) {}

  arrow::Status Add(const arrow::Array& values, const uint32_t* ids) override {
    const arrow::ArrayData& d = *values.data();
    const uint8_t* raw = d.buffers[1]->data() + d.offset * sizeof(T);
    for (int64_t i = 0; i < d.length; ++i) {
      if (values.IsNull(i)) continue;
      T v;
      std::memcpy(&v, raw + i * sizeof(T), sizeof(T));
      const uint32_t g = ids[i];
      if (!set_[g]) {
        values_[g] = v;
        set_[g] = 1;
        continue;
      }
      T& acc = values_[g];
      switch (fold_) {
        case Fold::kSum:
          if constexpr (std::is_floating_point_v<T>) {
            acc += v;
          } else {
            T out;
            if (__builtin_add_overflow(acc, v, &out) ||
                (decimal_limit_ != 0 && (out >= decimal_limit_ || out <= -decimal_limit_))) {
              return arrow::Status::Invalid("the sum of a partial aggregate overflows ",
                                            type_->ToString());
            }
            acc = out;
          }
          break;
        case Fold::kMin:
          if (Less(v, acc)) acc = v;
          break;
        case Fold::kMax:
          if (Less(acc, v)) acc = v;
          break;
        default:
          return arrow::Status::NotImplemented("bool_and / bool_or of ", type_->ToString());
      }
    }
    return arrow::Status::OK();
  }

  arrow::Result<std::shared_ptr<arrow::Array>> Finish(
      const std::vector<uint32_t>& order) override {
    const int64_t n = static_cast<int64_t>(order.size());
    ARROW_ASSIGN_OR_RAISE(auto data, arrow::AllocateBuffer(n * sizeof(T)));
    std::vector<uint8_t> set(n);
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(data->mutable_data() + i * sizeof(T), &values_[order[i]], sizeof(T));
      set[i] = set_[order[i]];
    }
    ARROW_ASSIGN_OR_RAISE(auto validity, Validity(set));
    return arrow::MakeArray(arrow::ArrayData::Make(
        type_, n, {validity.first, std::shared_ptr<arrow::Buffer>(std::move(data))},
        validity.second));
  }

 private:
  std::shared_ptr<arrow::DataType> type_;
  Fold fold_;
  __int128 decimal_limit_;  // 10^precision for decimals, else 0
};

class BoolAccumulator : public Slots<uint8_t> {
 public:
  explicit BoolAccumulator(Fold fold) : fold_(fold) {}
  arrow::Status Add(const arrow::Array& values, const uint32_t* ids) override {
    if (fold_ == Fold::kSum) return arrow::Status::NotImplemented("sum of booleans");
    const auto& b = static_cast<const arrow::BooleanArray&>(values);
    const bool conjunction = fold_ == Fold::kAnd || fold_ == Fold::kMin;
    for (int64_t i = 0; i < b.length(); ++i) {
      if (b.IsNull(i)) continue;
      const uint8_t v = b.Value(i);
      const uint32_t g = ids[i];
      if (!set_[g]) {
        values_[g] = v;
        set_[g] = 1;
      } else {
        values_[g] = conjunction ? (values_[g] & v) : (values_[g] | v);
      }
    }
    return arrow::Status::OK();
  }
  arrow::Result<std::shared_ptr<arrow::Array>> Finish(
      const std::vector<uint32_t>& order) override {
    arrow::BooleanBuilder out;
    ARROW_RETURN_NOT_OK(out.Reserve(static_cast<int64_t>(order.size())));
    for (uint32_t i : order) {
      if (set_[i]) {
        out.UnsafeAppend(values_[i] != 0);
      } else {
        out.UnsafeAppendNull();
      }
    }
    return out.Finish();
  }

 private:
  Fold fold_;
};

// Strings and binaries (min / max, compared bytewise as DuckDB does).
template <typename ArrayType, typename BuilderType>
class BinaryAccumulator : public Slots<std::string> {
 public:
  BinaryAccumulator(std::shared_ptr<arrow::DataType> type, Fold fold)
      : type_(std::move(type)), fold_(fold) {}
  arrow::Status Add(const arrow::Array& values, const uint32_t* ids) override {
    if (fold_ != Fold::kMin && fold_ != Fold::kMax) {
      return arrow::Status::NotImplemented("folding ", type_->ToString(), " other than min/max");
    }
    const auto& a = static_cast<const ArrayType&>(values);
    for (int64_t i = 0; i < a.length(); ++i) {
      if (a.IsNull(i)) continue;
      const std::string_view v = a.GetView(i);
      const uint32_t g = ids[i];
      if (!set_[g] || (fold_ == Fold::kMin ? v < values_[g] : values_[g] < v)) {
        values_[g].assign(v.data(), v.size());
        set_[g] = 1;
      }
    }
    return arrow::Status::OK();
  }
  arrow::Result<std::shared_ptr<arrow::Array>> Finish(
      const std::vector<uint32_t>& order) override {
    BuilderType out(type_, arrow::default_memory_pool());
    for (uint32_t i : order) {
      if (set_[i]) {
        ARROW_RETURN_NOT_OK(out.Append(values_[i]));
      } else {
        ARROW_RETURN_NOT_OK(out.AppendNull());
      }
    }
    return out.Finish();
  }

 private:
  std::shared_ptr<arrow::DataType> type_;
  Fold fold_;
};

arrow::Result<std::unique_ptr<Accumulator>> MakeAccumulator(
    const std::shared_ptr<arrow::DataType>& type, Fold fold) {
  using arrow::Type;
  const bool order = fold == Fold::kMin || fold == Fold::kMax;
  const bool sum = fold == Fold::kSum;
  auto refuse = [&]() {
    return arrow::Status::NotImplemented("merging partials of type ", type->ToString());
  };
  switch (type->id()) {
    case Type::BOOL:
      if (sum) return refuse();
      return std::make_unique<BoolAccumulator>(fold);
#define THUND_NUMERIC(ID, CTYPE)                                          \
  case Type::ID:                                                          \
    if (!order && !sum) return refuse();                                  \
    return std::make_unique<FixedAccumulator<CTYPE>>(type, fold);
      THUND_NUMERIC(INT8, int8_t)
      THUND_NUMERIC(INT16, int16_t)
      THUND_NUMERIC(INT32, int32_t)
      THUND_NUMERIC(INT64, int64_t)
      THUND_NUMERIC(UINT8, uint8_t)
      THUND_NUMERIC(UINT16, uint16_t)
      THUND_NUMERIC(UINT32, uint32_t)
      THUND_NUMERIC(UINT64, uint64_t)
      THUND_NUMERIC(FLOAT, float)
      THUND_NUMERIC(DOUBLE, double)
#undef THUND_NUMERIC
#define THUND_TEMPORAL(ID, CTYPE)                                         \
  case Type::ID:                                                          \
    if (!order) return refuse();                                          \
    return std::make_unique<FixedAccumulator<CTYPE>>(type, fold);
      THUND_TEMPORAL(DATE32, int32_t)
      THUND_TEMPORAL(DATE64, int64_t)
      THUND_TEMPORAL(TIME32, int32_t)
      THUND_TEMPORAL(TIME64, int64_t)
      THUND_TEMPORAL(TIMESTAMP, int64_t)
      THUND_TEMPORAL(DURATION, int64_t)
#undef THUND_TEMPORAL
    case Type::DECIMAL128: {
      if (!order && !sum) return refuse();
      const int precision = static_cast<const arrow::Decimal128Type&>(*type).precision();
      __int128 limit = 1;
      for (int i = 0; i < precision; ++i) limit *= 10;
      return std::make_unique<FixedAccumulator<__int128>>(type, fold, limit);
    }
    case Type::STRING:
      if (!order) return refuse();
      return std::make_unique<BinaryAccumulator<arrow::StringArray, arrow::StringBuilder>>(type,
                                                                                          fold);
    case Type::BINARY:
      if (!order) return refuse();
      return std::make_unique<BinaryAccumulator<arrow::BinaryArray, arrow::BinaryBuilder>>(type,
                                                                                          fold);
    case Type::LARGE_STRING:
      if (!order) return refuse();
      return std::make_unique<
          BinaryAccumulator<arrow::LargeStringArray, arrow::LargeStringBuilder>>(type, fold);
    default:
      return refuse();
  }
}

// The grouping keys as the Grouper takes them: a struct key becomes its
// validity and its fields (the Grouper has no struct keys).
struct KeyLayout {
  std::vector<arrow::TypeHolder> types;
  std::vector<std::shared_ptr<arrow::Field>> fields;  // the keys as the result has them
};

bool FloatingOrNested(const arrow::DataType& t) {
  return arrow::is_floating(t.id()) || arrow::is_nested(t.id()) ||
         t.id() == arrow::Type::DICTIONARY || t.id() == arrow::Type::EXTENSION;
}

arrow::Result<KeyLayout> Layout(const arrow::Schema& schema, int groups) {
  KeyLayout out;
  for (int i = 0; i < groups; ++i) {
    const auto& f = schema.field(i);
    if (f->type()->id() == arrow::Type::STRUCT) {
      out.types.push_back(arrow::boolean());
      for (const auto& child : f->type()->fields()) {
        if (FloatingOrNested(*child->type())) {
          return arrow::Status::NotImplemented("a grouping key of type ", f->type()->ToString());
        }
        out.types.push_back(child->type());
      }
    } else if (FloatingOrNested(*f->type())) {
      return arrow::Status::NotImplemented("a grouping key of type ", f->type()->ToString());
    } else {
      out.types.push_back(f->type());
    }
    out.fields.push_back(f->WithNullable(true));
  }
  return out;
}

arrow::Result<std::vector<arrow::Datum>> KeyDatums(const arrow::RecordBatch& batch, int groups) {
  std::vector<arrow::Datum> out;
  for (int i = 0; i < groups; ++i) {
    auto col = batch.column(i);
    if (col->type_id() != arrow::Type::STRUCT) {
      out.emplace_back(col);
      continue;
    }
    const auto& s = static_cast<const arrow::StructArray&>(*col);
    arrow::BooleanBuilder valid;
    ARROW_RETURN_NOT_OK(valid.Reserve(s.length()));
    for (int64_t r = 0; r < s.length(); ++r) valid.UnsafeAppend(s.IsValid(r));
    ARROW_ASSIGN_OR_RAISE(auto v, valid.Finish());
    out.emplace_back(v);
    for (int c = 0; c < s.num_fields(); ++c) {
      ARROW_ASSIGN_OR_RAISE(auto child, s.GetFlattenedField(c));
      out.emplace_back(child);
    }
  }
  return out;
}

// The unique keys back in the result's columns (structs rebuilt).
arrow::Result<std::vector<std::shared_ptr<arrow::Array>>> KeyColumns(
    const arrow::compute::ExecBatch& uniques, const KeyLayout& layout) {
  std::vector<std::shared_ptr<arrow::Array>> out;
  size_t at = 0;
  for (const auto& f : layout.fields) {
    if (f->type()->id() != arrow::Type::STRUCT) {
      out.push_back(uniques.values[at++].make_array());
      continue;
    }
    auto valid = std::static_pointer_cast<arrow::BooleanArray>(uniques.values[at++].make_array());
    ARROW_ASSIGN_OR_RAISE(auto validity, ValidityOf(*valid));
    arrow::ArrayVector children;
    for (int c = 0; c < f->type()->num_fields(); ++c) {
      children.push_back(uniques.values[at++].make_array());
    }
    ARROW_ASSIGN_OR_RAISE(auto s, arrow::StructArray::Make(children, f->type()->fields(),
                                                           validity.first, validity.second));
    out.push_back(s);
  }
  return out;
}

bool SameTypes(const arrow::Schema& a, const arrow::Schema& b) {
  if (a.num_fields() != b.num_fields()) return false;
  for (int i = 0; i < a.num_fields(); ++i) {
    if (!a.field(i)->type()->Equals(*b.field(i)->type())) return false;
  }
  return true;
}

}  // namespace partial_merge_detail
using namespace partial_merge_detail;

// What a PartialMerger holds.
struct MergerParts {
  KeyLayout layout;
  std::unique_ptr<arrow::compute::Grouper> grouper;
  std::vector<std::unique_ptr<Accumulator>> accs;
};

namespace {

// What merging partials of one schema takes: the key layout, a grouper and
// one accumulator per partial. NotImplemented for types outside the fast path.
arrow::Result<MergerParts> Prepare(const arrow::Schema& partial, int groups,
                              const std::vector<std::string>& merge) {
  if (groups < 0 || groups + static_cast<int>(merge.size()) != partial.num_fields()) {
    return arrow::Status::Invalid("partials: ", groups, " keys and ", merge.size(),
                                  " partials do not make the ", partial.num_fields(), " columns");
  }
  MergerParts m;
  ARROW_ASSIGN_OR_RAISE(m.layout, Layout(partial, groups));
  ARROW_ASSIGN_OR_RAISE(m.grouper, arrow::compute::Grouper::Make(m.layout.types));
  for (size_t j = 0; j < merge.size(); ++j) {
    ARROW_ASSIGN_OR_RAISE(Fold fold, FoldOf(merge[j]));
    ARROW_ASSIGN_OR_RAISE(auto acc, MakeAccumulator(partial.field(groups + j)->type(), fold));
    m.accs.push_back(std::move(acc));
  }
  return m;
}

}  // namespace

PartialMerger::PartialMerger() = default;
PartialMerger::~PartialMerger() = default;

arrow::Status CanMergePartials(const arrow::Schema& partial, int groups,
                               const std::vector<std::string>& merge) {
  return Prepare(partial, groups, merge).status();
}

arrow::Result<std::unique_ptr<PartialMerger>> PartialMerger::Make(
    std::shared_ptr<arrow::Schema> partial, int groups, std::vector<std::string> merge) {
  ARROW_ASSIGN_OR_RAISE(MergerParts m, Prepare(*partial, groups, merge));
  std::unique_ptr<PartialMerger> out(new PartialMerger());
  out->m_ = std::make_unique<MergerParts>(std::move(m));
  out->schema_ = std::move(partial);
  out->groups_ = groups;
  return out;
}

arrow::Result<std::shared_ptr<arrow::Table>> MergePartials(
    const std::shared_ptr<arrow::Table>& state, const std::shared_ptr<arrow::Table>& partial,
    int groups, const std::vector<std::string>& merge) {
  ARROW_ASSIGN_OR_RAISE(auto merger, PartialMerger::Make(partial->schema(), groups, merge));
  return merger->Merge(state, partial);
}

arrow::Result<std::shared_ptr<arrow::Table>> PartialMerger::Merge(
    const std::shared_ptr<arrow::Table>& state, const std::shared_ptr<arrow::Table>& partial) {
  const arrow::Schema& schema = *schema_;
  const int groups = groups_;
  if (!SameTypes(*partial->schema(), schema)) {
    return arrow::Status::Invalid("the partials have other types than the merger was made for");
  }
  // The state's own columns (a state this merger produced also carries
  // __touched).
  std::shared_ptr<arrow::Table> own;
  if (state && state->num_rows() > 0) {
    if (state->num_columns() < schema.num_fields()) {
      return arrow::Status::NotImplemented("the state has fewer columns than the partials");
    }
    std::vector<int> cols(schema.num_fields());
    for (int i = 0; i < schema.num_fields(); ++i) cols[i] = i;
    ARROW_ASSIGN_OR_RAISE(own, state->SelectColumns(cols));
    if (!SameTypes(*own->schema(), schema)) {
      return arrow::Status::NotImplemented(
          "the state's partials have other types than the new ones");
    }
  }
  const KeyLayout& layout = m_->layout;
  auto& grouper = m_->grouper;
  auto& accs = m_->accs;
  // The groups of a state this merger produced (and Keep saw) are hashed
  // already; any other state is loaded afresh. So is a kept state whose key
  // columns have gathered many chunks (each kept merge adds one), which also
  // bounds the chunks when no group ever leaves.
  constexpr int kMaxChunks = 32;
  const bool kept = own && state.get() == table_.get() &&
                    (groups == 0 || state->column(0)->num_chunks() <= kMaxChunks);
  bool fresh = !kept;
  std::vector<uint8_t> touched;
  bool touched_dead = false;
  const int64_t known = kept ? grouper->num_groups() : 0;  // groups before `partial`
  std::vector<uint32_t> partial_ids;                        // each partial row's group
  auto consume = [&](const std::shared_ptr<arrow::Table>& t, bool is_new) -> arrow::Status {
    arrow::TableBatchReader reader(*t);
    std::shared_ptr<arrow::RecordBatch> batch;
    while (true) {
      ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
      if (!batch) break;
      if (batch->num_rows() == 0) continue;
      ARROW_ASSIGN_OR_RAISE(auto keys, KeyDatums(*batch, groups));
      arrow::compute::ExecBatch exec(std::move(keys), batch->num_rows());
      ARROW_ASSIGN_OR_RAISE(arrow::Datum ids, grouper->Consume(arrow::compute::ExecSpan(exec)));
      const uint32_t* id = ids.array()->GetValues<uint32_t>(1);
      const int64_t n = grouper->num_groups();
      touched.resize(n, 0);
      live_.resize(n, 1);  // a new group is live
      for (int64_t r = 0; r < batch->num_rows(); ++r) {
        touched[id[r]] |= is_new;
        touched_dead |= !live_[id[r]];
      }
      if (is_new) partial_ids.insert(partial_ids.end(), id, id + batch->num_rows());
      if (touched_dead) return arrow::Status::OK();
      for (size_t j = 0; j < accs.size(); ++j) {
        accs[j]->Resize(n);
        ARROW_RETURN_NOT_OK(accs[j]->Add(*batch->column(groups + static_cast<int>(j)), id));
      }
    }
    return arrow::Status::OK();
  };
  if (kept) {
    ARROW_RETURN_NOT_OK(consume(partial, true));
  }
  if (!kept || touched_dead) {
    // Afresh: every state row is a live group. (A new partial for a group
    // that left the state, which watermarks rule out, also lands here: its
    // old values must not count.)
    ARROW_RETURN_NOT_OK(grouper->Reset());
    for (auto& acc : accs) acc->Clear();
    live_.clear();
    touched.clear();
    touched_dead = false;
    fresh = true;
    if (own) ARROW_RETURN_NOT_OK(consume(own, false));
    ARROW_RETURN_NOT_OK(consume(partial, true));
  }

  const int64_t all = grouper->num_groups();
  touched.resize(all, 0);
  live_.resize(all, 1);
  // The result's rows: the kept state's groups in its row order, then the
  // groups new in `partial`, by their first row there; or, loaded afresh,
  // every group in id order.
  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
  if (!fresh) {
    std::vector<int64_t> new_rows;  // partial rows that opened a group
    std::vector<uint8_t> seen(all - known, 0);
    for (size_t r = 0; r < partial_ids.size(); ++r) {
      const uint32_t g = partial_ids[r];
      if (g < known || seen[g - known]) continue;
      seen[g - known] = 1;
      new_rows.push_back(static_cast<int64_t>(r));
      gids_.push_back(g);
    }
    arrow::Int64Builder idx;
    ARROW_RETURN_NOT_OK(idx.AppendValues(new_rows));
    ARROW_ASSIGN_OR_RAISE(auto indices, idx.Finish());
    ARROW_RETURN_NOT_OK(engine::batch::EnsureComputeInitialized());
    for (int k = 0; k < groups; ++k) {
      arrow::ArrayVector chunks = state->column(k)->chunks();
      ARROW_ASSIGN_OR_RAISE(auto added, arrow::compute::Take(partial->column(k), indices));
      for (const auto& c : added.chunked_array()->chunks()) chunks.push_back(c);
      columns.push_back(std::make_shared<arrow::ChunkedArray>(chunks, layout.fields[k]->type()));
    }
  } else {
    gids_.resize(all);
    for (int64_t g = 0; g < all; ++g) gids_[g] = static_cast<uint32_t>(g);
    ARROW_ASSIGN_OR_RAISE(auto uniques, grouper->GetUniques());
    ARROW_ASSIGN_OR_RAISE(auto keys, KeyColumns(uniques, layout));
    for (const auto& k : keys) columns.push_back(std::make_shared<arrow::ChunkedArray>(k));
  }
  arrow::FieldVector fields = layout.fields;
  for (size_t j = 0; j < accs.size(); ++j) {
    accs[j]->Resize(all);
    ARROW_ASSIGN_OR_RAISE(auto col, accs[j]->Finish(gids_));
    columns.push_back(std::make_shared<arrow::ChunkedArray>(col));
    fields.push_back(schema.field(groups + static_cast<int>(j))->WithNullable(true));
  }
  arrow::BooleanBuilder t;
  ARROW_RETURN_NOT_OK(t.Reserve(static_cast<int64_t>(gids_.size())));
  for (uint32_t g : gids_) t.UnsafeAppend(touched[g] != 0);
  ARROW_ASSIGN_OR_RAISE(auto touched_col, t.Finish());
  columns.push_back(std::make_shared<arrow::ChunkedArray>(touched_col));
  fields.push_back(arrow::field("__touched", arrow::boolean()));
  std::shared_ptr<arrow::Table> out = arrow::Table::Make(arrow::schema(fields), columns,
                                                         static_cast<int64_t>(gids_.size()));
  table_ = out;
  return out;
}

void PartialMerger::Keep(const std::shared_ptr<arrow::Table>& merged,
                         const std::shared_ptr<arrow::ChunkedArray>& left,
                         const std::shared_ptr<arrow::Table>& kept) {
  const int64_t rows = static_cast<int64_t>(gids_.size());
  if (merged.get() != table_.get() || (left && left->length() != rows)) {
    table_.reset();
    return;
  }
  std::vector<uint32_t> still;
  int64_t r = 0;
  if (left) {
    for (const auto& chunk : left->chunks()) {
      const auto& flags = static_cast<const arrow::BooleanArray&>(*chunk);
      for (int64_t i = 0; i < flags.length(); ++i, ++r) {
        if (flags.IsValid(i) && flags.Value(i)) {
          live_[gids_[r]] = 0;
        } else {
          still.push_back(gids_[r]);
        }
      }
    }
    gids_ = std::move(still);
  }
  table_ = kept;
  // Once groups that left outnumber those that stay, the next merge loads
  // the state afresh (and the hash table shrinks to it).
  const int64_t live = static_cast<int64_t>(gids_.size());
  if (static_cast<int64_t>(live_.size()) - live > live + 1024) table_.reset();
}

namespace {

// Nanoseconds per value of a timestamp type whose values a microsecond shift
// moves exactly (microseconds, nanoseconds).
arrow::Result<int64_t> NanosPerValue(const arrow::DataType& t) {
  if (t.id() != arrow::Type::TIMESTAMP) {
    return arrow::Status::NotImplemented("a window bound of type ", t.ToString());
  }
  switch (static_cast<const arrow::TimestampType&>(t).unit()) {
    case arrow::TimeUnit::MICRO: return 1000;
    case arrow::TimeUnit::NANO: return 1;
    default: return arrow::Status::NotImplemented("a window bound of type ", t.ToString());
  }
}

// `a` (a timestamp array) repeated `count` times, the k-th copy `k * by_us`
// earlier.
arrow::Result<std::shared_ptr<arrow::Array>> ShiftRepeat(const arrow::Array& a, int64_t count,
                                                         int64_t by_us) {
  ARROW_ASSIGN_OR_RAISE(int64_t per, NanosPerValue(*a.type()));
  const int64_t by = by_us * (1000 / per);
  const auto& ts = static_cast<const arrow::TimestampArray&>(a);
  arrow::TimestampBuilder out(a.type(), arrow::default_memory_pool());
  ARROW_RETURN_NOT_OK(out.Reserve(a.length() * count));
  for (int64_t k = 0; k < count; ++k) {
    for (int64_t i = 0; i < a.length(); ++i) {
      if (ts.IsNull(i)) {
        out.UnsafeAppendNull();
      } else {
        out.UnsafeAppend(ts.Value(i) - k * by);
      }
    }
  }
  return out.Finish();
}

arrow::Result<std::shared_ptr<arrow::Array>> Combined(const arrow::ChunkedArray& c) {
  if (c.num_chunks() == 1) return c.chunk(0);
  return arrow::Concatenate(c.chunks());
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Table>> ExpandPanes(
    const std::shared_ptr<arrow::Table>& partial, const WindowKeys& keys, int64_t count,
    int64_t slide_us) {
  ARROW_RETURN_NOT_OK(engine::batch::EnsureComputeInitialized());
  if (count <= 1 || partial->num_rows() == 0) return partial;
  const int64_t n = partial->num_rows();
  arrow::Int64Builder idx;
  ARROW_RETURN_NOT_OK(idx.Reserve(n * count));
  for (int64_t k = 0; k < count; ++k) {
    for (int64_t i = 0; i < n; ++i) idx.UnsafeAppend(i);
  }
  ARROW_ASSIGN_OR_RAISE(auto indices, idx.Finish());
  std::vector<std::shared_ptr<arrow::Array>> cols;
  for (int c = 0; c < partial->num_columns(); ++c) {
    ARROW_ASSIGN_OR_RAISE(auto col, Combined(*partial->column(c)));
    if (c == keys.start_key || c == keys.end_key) {
      ARROW_ASSIGN_OR_RAISE(col, ShiftRepeat(*col, count, slide_us));
    } else if (c == keys.struct_key) {
      const auto& s = static_cast<const arrow::StructArray&>(*col);
      std::vector<uint8_t> set(n * count);
      for (int64_t r = 0; r < n * count; ++r) set[r] = s.IsValid(r % n);
      ARROW_ASSIGN_OR_RAISE(auto validity, Validity(set));
      arrow::ArrayVector children;
      for (int f = 0; f < s.num_fields(); ++f) {
        ARROW_ASSIGN_OR_RAISE(auto child, s.GetFlattenedField(f));
        const std::string& name = s.type()->field(f)->name();
        if (name == "start" || name == "end") {
          ARROW_ASSIGN_OR_RAISE(child, ShiftRepeat(*child, count, slide_us));
        } else {
          ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(child, indices));
          child = taken.make_array();
        }
        children.push_back(child);
      }
      ARROW_ASSIGN_OR_RAISE(col, arrow::StructArray::Make(children, s.type()->fields(),
                                                          validity.first, validity.second));
    } else {
      ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(col, indices));
      col = taken.make_array();
    }
    cols.push_back(col);
  }
  return arrow::Table::Make(partial->schema(), cols, n * count);
}

arrow::Result<std::shared_ptr<arrow::Table>> WindowClosed(const std::shared_ptr<arrow::Table>& t,
                                                          const WindowKeys& keys, int64_t w,
                                                          bool strict, bool all,
                                                          const std::string& name) {
  const int64_t n = t->num_rows();
  arrow::BooleanBuilder flags;
  ARROW_RETURN_NOT_OK(flags.Reserve(n));
  if (all) {
    for (int64_t i = 0; i < n; ++i) flags.UnsafeAppend(true);
  } else {
    // The end of each row, from the struct's `end`, the end column, or the
    // start column plus the window size.
    std::shared_ptr<arrow::Array> end;
    int64_t plus_us = 0;
    if (keys.struct_key >= 0) {
      ARROW_ASSIGN_OR_RAISE(auto s, Combined(*t->column(keys.struct_key)));
      const auto& st = static_cast<const arrow::StructArray&>(*s);
      const int f = st.struct_type()->GetFieldIndex("end");
      if (f < 0) return arrow::Status::Invalid("the window struct has no field 'end'");
      ARROW_ASSIGN_OR_RAISE(end, st.GetFlattenedField(f));
    } else if (keys.end_key >= 0) {
      ARROW_ASSIGN_OR_RAISE(end, Combined(*t->column(keys.end_key)));
    } else if (keys.start_key >= 0 && keys.size_us > 0) {
      ARROW_ASSIGN_OR_RAISE(end, Combined(*t->column(keys.start_key)));
      plus_us = keys.size_us;
    } else {
      return arrow::Status::Invalid("the state has no window key");
    }
    if (end->type_id() != arrow::Type::TIMESTAMP) {
      return arrow::Status::NotImplemented("a window end of type ", end->type()->ToString());
    }
    const auto unit = static_cast<const arrow::TimestampType&>(*end->type()).unit();
    const auto& e = static_cast<const arrow::TimestampArray&>(*end);
    for (int64_t i = 0; i < n; ++i) {
      if (e.IsNull(i)) {
        flags.UnsafeAppend(false);
        continue;
      }
      const int64_t us = FloorMicros(e.Value(i), unit) + plus_us;
      flags.UnsafeAppend(strict ? us < w : us <= w);
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto col, flags.Finish());
  return t->AddColumn(t->num_columns(), arrow::field(name, arrow::boolean(), false),
                      std::make_shared<arrow::ChunkedArray>(col));
}

}  // namespace thund::native

#include "engine/keyed/key_spec.h"

#include <arrow/compute/cast.h>

#include <algorithm>
#include <cctype>

#include "engine/keyed/memory_pool.h"
#include "common/text.h"

namespace thund::engine::keyed {
namespace {


// Width in bytes of a fixed-width keyable type, -1 for variable width, or an
// error saying why the type cannot be a key.
arrow::Result<int> KeyWidth(const arrow::DataType& type) {
  using T = arrow::Type;
  switch (type.id()) {
    case T::BOOL:
    case T::INT8:
    case T::UINT8:
      return 1;
    case T::INT16:
    case T::UINT16:
      return 2;
    case T::INT32:
    case T::UINT32:
    case T::DATE32:
    case T::TIME32:
      return 4;
    case T::INT64:
    case T::UINT64:
    case T::DATE64:
    case T::TIME64:
    case T::TIMESTAMP:
    case T::DURATION:
      return 8;
    case T::DECIMAL128:
      return 16;
    case T::FIXED_SIZE_BINARY:
      return static_cast<const arrow::FixedSizeBinaryType&>(type).byte_width();
    case T::STRING:
    case T::LARGE_STRING:
    case T::STRING_VIEW:
    case T::BINARY:
    case T::LARGE_BINARY:
    case T::BINARY_VIEW:
      return -1;
    case T::HALF_FLOAT:
    case T::FLOAT:
    case T::DOUBLE:
      return arrow::Status::Invalid(
          "floating-point columns cannot be keys (NaN and -0.0 make equality unreliable); "
          "cast the column to DECIMAL, an integer or a string");
    default:
      return arrow::Status::Invalid("columns of type ", type.ToString(),
                                    " cannot be keys; use scalar columns (integers, strings, "
                                    "dates, timestamps, decimals, binaries)");
  }
}

std::shared_ptr<arrow::DataType> ValueType(const std::shared_ptr<arrow::DataType>& type) {
  if (type->id() == arrow::Type::DICTIONARY) {
    return static_cast<const arrow::DictionaryType&>(*type).value_type();
  }
  return type;
}

std::string ColumnsOrNone(const arrow::Schema& schema) {
  std::string out;
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (i > 0) out += ", ";
    out += schema.field(i)->name();
  }
  return out.empty() ? "(none)" : out;
}

}  // namespace

const char* Name(KeyStorage s) {
  switch (s) {
    case KeyStorage::kFixed64:
      return "fixed64";
    case KeyStorage::kFixed128:
      return "fixed128";
    case KeyStorage::kBytes:
      return "bytes";
  }
  return "?";
}

int FindColumn(const arrow::Schema& schema, const std::string& name) {
  int exact = schema.GetFieldIndex(name);
  if (exact >= 0) return exact;
  if (schema.GetAllFieldIndices(name).size() > 1) return -2;
  const std::string want = text::AsciiLower(name);
  int found = -1;
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (text::AsciiLower(schema.field(i)->name()) == want) {
      if (found >= 0) return -2;
      found = i;
    }
  }
  return found;
}

arrow::Result<KeySpec> KeySpec::Make(const arrow::Schema& written,
                                     const std::vector<std::string>& keys, KeyMatch match,
                                     const std::string& where) {
  if (keys.empty()) {
    return arrow::Status::Invalid(where,
                                  ": checkpoint keys: the key list is empty; name one or "
                                  "more columns that identify a row");
  }
  KeySpec spec;
  spec.match = match;
  int total = 0;
  bool fixed = true;
  for (const auto& key : keys) {
    int i = FindColumn(written, key);
    if (i == -2) {
      return arrow::Status::Invalid(where, ": key column '", key,
                                    "' matches several columns; rename them apart");
    }
    if (i < 0) {
      return arrow::Status::Invalid(
          where, ": key column '", key,
          "' is not a column of the rows being written (columns: ", ColumnsOrNone(written), ")");
    }
    auto type = ValueType(written.field(i)->type());
    auto width = KeyWidth(*type);
    if (!width.ok()) {
      return arrow::Status::Invalid(where, ": key column '", written.field(i)->name(), "' (",
                                    written.field(i)->type()->ToString(),
                                    ") cannot be a key: ", width.status().message());
    }
    spec.names.push_back(written.field(i)->name());
    spec.types.push_back(type);
    spec.widths.push_back(*width);
    if (*width < 0) {
      fixed = false;
    } else {
      total += *width;
    }
  }
  if (fixed && total <= 8) {
    spec.storage = KeyStorage::kFixed64;
  } else if (fixed && total <= 16) {
    spec.storage = KeyStorage::kFixed128;
  } else {
    spec.storage = match == KeyMatch::kHash ? KeyStorage::kFixed128 : KeyStorage::kBytes;
  }
  return spec;
}

arrow::Result<std::vector<int>> KeySpec::Resolve(const arrow::Schema& schema,
                                                 const std::string& where) const {
  std::vector<int> out;
  for (const auto& name : names) {
    int i = FindColumn(schema, name);
    if (i == -2) {
      return arrow::Status::Invalid(where, ": key column '", name,
                                    "' matches several columns; rename them apart");
    }
    if (i < 0) {
      return arrow::Status::Invalid(where, ": key column '", name,
                                    "' is missing (columns: ", ColumnsOrNone(schema),
                                    "); every file of the target must hold the key columns");
    }
    out.push_back(i);
  }
  return out;
}

std::shared_ptr<arrow::Schema> KeySpec::schema() const {
  arrow::FieldVector fields;
  for (size_t i = 0; i < names.size(); ++i) fields.push_back(arrow::field(names[i], types[i]));
  return arrow::schema(std::move(fields));
}

std::string KeySpec::ToString() const {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i] + ":" + types[i]->ToString();
  }
  return out + " (" + Name(match) + ", " + Name(storage) + ")";
}

arrow::Result<std::vector<std::shared_ptr<arrow::Array>>> CastKeyColumns(
    const KeySpec& spec, const arrow::RecordBatch& batch, const std::vector<int>& indices,
    const std::string& where) {
  std::vector<std::shared_ptr<arrow::Array>> out;
  out.reserve(indices.size());
  for (size_t k = 0; k < indices.size(); ++k) {
    auto column = batch.column(indices[k]);
    if (column->type()->Equals(*spec.types[k])) {
      out.push_back(std::move(column));
      continue;
    }
    auto cast = arrow::compute::Cast(*column, spec.types[k], arrow::compute::CastOptions::Safe(),
                                     KeyedExecContext());
    if (!cast.ok()) {
      return arrow::Status::Invalid(where, ": key column '", spec.names[k], "' has type ",
                                    column->type()->ToString(), " here but ",
                                    spec.types[k]->ToString(),
                                    " in the rows being written, and the values do not convert (",
                                    cast.status().message(), "); make the key types agree");
    }
    out.push_back(std::move(cast).ValueOrDie());
  }
  return out;
}

}  // namespace thund::engine::keyed

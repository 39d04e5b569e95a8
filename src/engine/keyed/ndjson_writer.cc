#include "engine/keyed/ndjson_writer.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/cast.h>
#include <arrow/scalar.h>
#include <arrow/visit_type_inline.h>

#include <charconv>
#include <cmath>

namespace thund::engine::keyed {
namespace {

void AppendEscaped(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned char>(c));
          out->append(buf);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

template <typename T>
void AppendNumber(T v, std::string* out) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

void AppendValue(const arrow::Array& array, int64_t i, std::string* out);

// Text of a value that has no direct JSON form, via Arrow's cast to string.
void AppendAsText(const arrow::Array& array, int64_t i, bool quoted, std::string* out) {
  auto scalar = array.GetScalar(i);
  std::string text;
  if (scalar.ok()) {
    auto cast = (*scalar)->CastTo(arrow::utf8());
    text = cast.ok() ? (*cast)->ToString() : (*scalar)->ToString();
  }
  if (quoted) {
    AppendEscaped(text, out);
  } else {
    out->append(text);
  }
}

void AppendValue(const arrow::Array& array, int64_t i, std::string* out) {
  if (array.IsNull(i)) {
    out->append("null");
    return;
  }
  using T = arrow::Type;
  switch (array.type_id()) {
    case T::BOOL:
      out->append(static_cast<const arrow::BooleanArray&>(array).Value(i) ? "true" : "false");
      return;
#define THUND_INT_CASE(ID, ARR)                                        \
  case T::ID:                                                          \
    AppendNumber(static_cast<const arrow::ARR&>(array).Value(i), out); \
    return;
      THUND_INT_CASE(INT8, Int8Array)
      THUND_INT_CASE(INT16, Int16Array)
      THUND_INT_CASE(INT32, Int32Array)
      THUND_INT_CASE(INT64, Int64Array)
      THUND_INT_CASE(UINT8, UInt8Array)
      THUND_INT_CASE(UINT16, UInt16Array)
      THUND_INT_CASE(UINT32, UInt32Array)
      THUND_INT_CASE(UINT64, UInt64Array)
#undef THUND_INT_CASE
    case T::FLOAT:
    case T::DOUBLE: {
      double v = array.type_id() == T::FLOAT
                     ? static_cast<const arrow::FloatArray&>(array).Value(i)
                     : static_cast<const arrow::DoubleArray&>(array).Value(i);
      if (std::isfinite(v)) {
        AppendNumber(v, out);
      } else {
        out->append("null");
      }
      return;
    }
    case T::STRING:
    case T::BINARY:
      AppendEscaped(static_cast<const arrow::BinaryArray&>(array).GetView(i), out);
      return;
    case T::LARGE_STRING:
    case T::LARGE_BINARY:
      AppendEscaped(static_cast<const arrow::LargeBinaryArray&>(array).GetView(i), out);
      return;
    case T::STRING_VIEW:
    case T::BINARY_VIEW:
      AppendEscaped(static_cast<const arrow::BinaryViewArray&>(array).GetView(i), out);
      return;
    case T::DECIMAL128:
    case T::DECIMAL256:
      AppendAsText(array, i, /*quoted=*/false, out);
      return;
    case T::LIST:
    case T::LARGE_LIST:
    case T::FIXED_SIZE_LIST: {
      std::shared_ptr<arrow::Array> values;
      int64_t begin = 0, end = 0;
      if (array.type_id() == T::LIST) {
        const auto& l = static_cast<const arrow::ListArray&>(array);
        values = l.values();
        begin = l.value_offset(i);
        end = begin + l.value_length(i);
      } else if (array.type_id() == T::LARGE_LIST) {
        const auto& l = static_cast<const arrow::LargeListArray&>(array);
        values = l.values();
        begin = l.value_offset(i);
        end = begin + l.value_length(i);
      } else {
        const auto& l = static_cast<const arrow::FixedSizeListArray&>(array);
        values = l.values();
        begin = l.value_offset(i);
        end = begin + l.value_length(i);
      }
      out->push_back('[');
      for (int64_t j = begin; j < end; ++j) {
        if (j > begin) out->push_back(',');
        AppendValue(*values, j, out);
      }
      out->push_back(']');
      return;
    }
    case T::MAP: {  // an object, as DuckDB's to_json writes maps
      const auto& m = static_cast<const arrow::MapArray&>(array);
      const int64_t begin = m.value_offset(i), end = begin + m.value_length(i);
      out->push_back('{');
      for (int64_t j = begin; j < end; ++j) {
        if (j > begin) out->push_back(',');
        const arrow::Array& keys = *m.keys();
        if (keys.type_id() == T::STRING || keys.type_id() == T::BINARY) {
          AppendEscaped(static_cast<const arrow::BinaryArray&>(keys).GetView(j), out);
        } else {
          AppendAsText(keys, j, /*quoted=*/true, out);
        }
        out->push_back(':');
        AppendValue(*m.items(), j, out);
      }
      out->push_back('}');
      return;
    }
    case T::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(array);
      out->push_back('{');
      for (int f = 0; f < s.num_fields(); ++f) {
        if (f > 0) out->push_back(',');
        AppendEscaped(s.type()->field(f)->name(), out);
        out->push_back(':');
        AppendValue(*s.field(f), i, out);
      }
      out->push_back('}');
      return;
    }
    default:
      AppendAsText(array, i, /*quoted=*/true, out);
  }
}

}  // namespace

arrow::Status AppendNdjson(const arrow::RecordBatch& batch, std::string* out) {
  std::vector<std::string> names;
  for (const auto& f : batch.schema()->fields()) {
    std::string n;
    AppendEscaped(f->name(), &n);
    names.push_back(n + ":");
  }
  // Columns without a direct JSON form are cast to strings once per batch.
  std::vector<std::shared_ptr<arrow::Array>> columns = batch.columns();
  for (auto& c : columns) {
    using T = arrow::Type;
    switch (c->type_id()) {
      case T::DATE32:
      case T::DATE64:
      case T::TIMESTAMP:
      case T::TIME32:
      case T::TIME64: {
        auto cast = arrow::compute::Cast(*c, arrow::utf8());
        if (cast.ok()) c = *cast;
        break;
      }
      case T::DICTIONARY: {
        auto cast = arrow::compute::Cast(
            *c, static_cast<const arrow::DictionaryType&>(*c->type()).value_type());
        if (cast.ok()) c = *cast;
        break;
      }
      default:
        break;
    }
  }
  // Times and timestamps without trailing zeros in their fraction (and no
  // '.' when it is all zeros), as DuckDB's to_json writes them.
  for (size_t c = 0; c < columns.size(); ++c) {
    const auto id = batch.column(static_cast<int>(c))->type_id();
    if (id != arrow::Type::TIMESTAMP && id != arrow::Type::TIME32 && id != arrow::Type::TIME64) {
      continue;
    }
    if (columns[c]->type_id() != arrow::Type::STRING) continue;
    const auto& text = static_cast<const arrow::StringArray&>(*columns[c]);
    arrow::StringBuilder trimmed;
    for (int64_t i = 0; i < text.length(); ++i) {
      if (text.IsNull(i)) {
        ARROW_RETURN_NOT_OK(trimmed.AppendNull());
        continue;
      }
      std::string_view v = text.GetView(i);
      const size_t dot = v.rfind('.');
      if (dot != std::string_view::npos && v.find_first_not_of("0123456789", dot + 1) ==
                                               std::string_view::npos) {
        size_t end = v.size();
        while (end > dot + 1 && v[end - 1] == '0') --end;
        if (end == dot + 1) end = dot;
        v = v.substr(0, end);
      }
      ARROW_RETURN_NOT_OK(trimmed.Append(v));
    }
    ARROW_ASSIGN_OR_RAISE(columns[c], trimmed.Finish());
  }
  for (int64_t i = 0; i < batch.num_rows(); ++i) {
    out->push_back('{');
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) out->push_back(',');
      out->append(names[c]);
      AppendValue(*columns[c], i, out);
    }
    out->append("}\n");
  }
  return arrow::Status::OK();
}

arrow::Status WriteNdjson(const arrow::RecordBatch& batch, arrow::io::OutputStream* stream) {
  constexpr int64_t kChunk = 4096;
  std::string text;
  for (int64_t start = 0; start < batch.num_rows(); start += kChunk) {
    text.clear();
    ARROW_RETURN_NOT_OK(AppendNdjson(*batch.Slice(start, kChunk), &text));
    ARROW_RETURN_NOT_OK(stream->Write(text.data(), static_cast<int64_t>(text.size())));
  }
  return arrow::Status::OK();
}

}  // namespace thund::engine::keyed

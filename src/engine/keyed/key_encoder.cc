#include "engine/keyed/key_encoder.h"

#include <cstring>

#include "engine/keyed/key_hash.h"

namespace thund::engine::keyed {
namespace {

// Reads row i of a variable-width (string/binary) column.
std::string_view VarView(const arrow::Array& array, int64_t i) {
  switch (array.type_id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      return static_cast<const arrow::BinaryArray&>(array).GetView(i);
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      return static_cast<const arrow::LargeBinaryArray&>(array).GetView(i);
    default:  // STRING_VIEW, BINARY_VIEW
      return static_cast<const arrow::BinaryViewArray&>(array).GetView(i);
  }
}

// Pointer to the value bytes of row i of a fixed-width column (not bool).
const uint8_t* FixedPtr(const arrow::Array& array, int width, int64_t i) {
  return array.data()->buffers[1]->data() + (array.offset() + i) * width;
}

void AppendFixed(const arrow::Array& array, int width, int64_t i, uint8_t* dst) {
  if (array.type_id() == arrow::Type::BOOL) {
    *dst = static_cast<const arrow::BooleanArray&>(array).Value(i) ? 1 : 0;
  } else {
    std::memcpy(dst, FixedPtr(array, width, i), static_cast<size_t>(width));
  }
}

void AppendLeb128(uint64_t v, std::string* out) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v != 0) byte |= 0x80;
    out->push_back(static_cast<char>(byte));
  } while (v != 0);
}

void EncodeFixed(const KeySpec& spec, const std::vector<std::shared_ptr<arrow::Array>>& columns,
                 EncodedKeys* out) {
  const int64_t n = out->length;
  for (int64_t i = 0; i < n; ++i) {
    uint8_t buf[16] = {0};
    if (!out->is_null[i]) {
      int pos = 0;
      for (size_t c = 0; c < columns.size(); ++c) {
        AppendFixed(*columns[c], spec.widths[c], i, buf + pos);
        pos += spec.widths[c];
      }
    }
    uint64_t w[2];
    std::memcpy(w, buf, sizeof(w));
    out->w0[i] = w[0];
    out->w1[i] = w[1];
    out->hash[i] = HashWords(w[0], w[1]);
  }
}

// Builds out->bytes (views into the arrays, or into out->scratch).
arrow::Status BuildBytes(const KeySpec& spec,
                         const std::vector<std::shared_ptr<arrow::Array>>& columns,
                         EncodedKeys* out) {
  const int64_t n = out->length;
  out->bytes.assign(static_cast<size_t>(n), std::string_view());
  if (columns.size() == 1 && spec.widths[0] < 0) {
    for (int64_t i = 0; i < n; ++i) {
      if (!out->is_null[i]) out->bytes[i] = VarView(*columns[0], i);
    }
  } else {
    out->scratch.clear();
    std::vector<size_t> ends(static_cast<size_t>(n), 0);
    for (int64_t i = 0; i < n; ++i) {
      if (!out->is_null[i]) {
        for (size_t c = 0; c < columns.size(); ++c) {
          if (columns[c]->type_id() == arrow::Type::BOOL) {
            uint8_t b = 0;
            AppendFixed(*columns[c], 1, i, &b);
            out->scratch.push_back(static_cast<char>(b));
          } else if (spec.widths[c] >= 0) {
            out->scratch.append(
                reinterpret_cast<const char*>(FixedPtr(*columns[c], spec.widths[c], i)),
                static_cast<size_t>(spec.widths[c]));
          } else {
            std::string_view v = VarView(*columns[c], i);
            AppendLeb128(v.size(), &out->scratch);
            out->scratch.append(v);
          }
        }
      }
      ends[i] = out->scratch.size();
    }
    size_t begin = 0;
    for (int64_t i = 0; i < n; ++i) {
      out->bytes[i] = std::string_view(out->scratch).substr(begin, ends[i] - begin);
      begin = ends[i];
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(out->bytes[i].size()) > kMaxKeyBytes) {
      return arrow::Status::Invalid("a key of ", out->bytes[i].size(),
                                    " bytes is longer than the limit of ", kMaxKeyBytes,
                                    " bytes; use shorter key columns");
    }
  }
  return arrow::Status::OK();
}

}  // namespace

namespace {
// Fills hash/w0/w1 from out->bytes (kBytes, or kFixed128 under KeyMatch::kHash).
void HashBytesKeys(const KeySpec& spec, EncodedKeys* out);
}  // namespace

arrow::Status EncodeKeys(const KeySpec& spec,
                         const std::vector<std::shared_ptr<arrow::Array>>& columns,
                         EncodedKeys* out) {
  if (columns.size() != spec.names.size() || columns.empty()) {
    return arrow::Status::Invalid("EncodeKeys: expected ", spec.names.size(), " key columns, got ",
                                  columns.size());
  }
  const int64_t n = columns[0]->length();
  for (const auto& c : columns) {
    if (c->length() != n) return arrow::Status::Invalid("EncodeKeys: key columns differ in length");
  }
  out->storage = spec.storage;
  out->length = n;
  out->keep_alive = columns;
  out->is_null.assign(static_cast<size_t>(n), 0);
  out->null_count = 0;
  for (const auto& c : columns) {
    if (c->null_count() == 0) continue;
    for (int64_t i = 0; i < n; ++i) out->is_null[i] |= c->IsNull(i) ? 1 : 0;
  }
  for (int64_t i = 0; i < n; ++i) out->null_count += out->is_null[i];
  out->hash.resize(static_cast<size_t>(n));
  out->w0.resize(static_cast<size_t>(n));
  out->w1.resize(static_cast<size_t>(n));

  bool fixed = true;
  for (int w : spec.widths) fixed = fixed && w >= 0;
  if (fixed && spec.storage != KeyStorage::kBytes) {
    // Fits 16 bytes by construction of the spec (exact in either match mode).
    EncodeFixed(spec, columns, out);
    out->bytes.clear();
    return arrow::Status::OK();
  }
  ARROW_RETURN_NOT_OK(BuildBytes(spec, columns, out));
  HashBytesKeys(spec, out);
  return arrow::Status::OK();
}

bool IsSingleVariableKey(const KeySpec& spec) {
  return spec.widths.size() == 1 && spec.widths[0] < 0;
}

arrow::Status EncodeViews(const KeySpec& spec, const std::string_view* values,
                          const uint8_t* is_null, int64_t n, EncodedKeys* out) {
  if (!IsSingleVariableKey(spec)) {
    return arrow::Status::Invalid("EncodeViews needs a single variable-width key column");
  }
  out->storage = spec.storage;
  out->length = n;
  out->keep_alive.clear();
  out->is_null.assign(is_null, is_null + n);
  out->null_count = 0;
  for (int64_t i = 0; i < n; ++i) out->null_count += is_null[i];
  out->bytes.assign(values, values + n);
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(values[i].size()) > kMaxKeyBytes) {
      return arrow::Status::Invalid("a key of ", values[i].size(),
                                    " bytes is longer than the limit of ", kMaxKeyBytes, " bytes");
    }
  }
  out->hash.resize(static_cast<size_t>(n));
  out->w0.resize(static_cast<size_t>(n));
  out->w1.resize(static_cast<size_t>(n));
  HashBytesKeys(spec, out);
  return arrow::Status::OK();
}

void AppendEncoded(const EncodedKeys& rows, EncodedKeys* out) {
  auto append = [](const auto& from, auto* to) { to->insert(to->end(), from.begin(), from.end()); };
  out->storage = rows.storage;
  out->length += rows.length;
  out->null_count += rows.null_count;
  append(rows.is_null, &out->is_null);
  append(rows.hash, &out->hash);
  append(rows.w0, &out->w0);
  append(rows.w1, &out->w1);
  out->bytes.clear();
}

arrow::Status AttachKeyBytes(const KeySpec& spec, std::shared_ptr<arrow::Array> column,
                             EncodedKeys* out) {
  if (!IsSingleVariableKey(spec) || !column->type()->Equals(*spec.types[0])) {
    return arrow::Status::Invalid("AttachKeyBytes needs the spec's single variable-width column");
  }
  if (column->length() != out->length) {
    return arrow::Status::Invalid("AttachKeyBytes: a column of ", column->length(), " rows for ",
                                  out->length, " keys");
  }
  out->keep_alive = {std::move(column)};
  if (spec.storage != KeyStorage::kBytes) {  // KeyMatch::kHash: the hash is the key
    out->bytes.clear();
    return arrow::Status::OK();
  }
  return BuildBytes(spec, out->keep_alive, out);
}

namespace {
void HashBytesKeys(const KeySpec& spec, EncodedKeys* out) {
  const int64_t n = out->length;
  for (int64_t i = 0; i < n; ++i) {
    if (out->is_null[i]) {
      out->hash[i] = out->w0[i] = out->w1[i] = 0;
      continue;
    }
    Hash128 h = HashBytes128(out->bytes[i].data(), out->bytes[i].size());
    if (spec.storage == KeyStorage::kFixed128) {  // KeyMatch::kHash
      out->w0[i] = h.low;
      out->w1[i] = h.high;
      out->hash[i] = HashWords(h.low, h.high);
    } else {
      out->hash[i] = h.low;
      out->w0[i] = h.high;
    }
  }
  if (spec.storage == KeyStorage::kFixed128) out->bytes.clear();
}
}  // namespace

}  // namespace thund::engine::keyed

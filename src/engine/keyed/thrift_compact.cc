#include "engine/keyed/thrift_compact.h"

namespace thund::engine::keyed::compact {
namespace {

int64_t Unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }
uint64_t Zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

}  // namespace

arrow::Status Reader::Fail(const char* what) const {
  return arrow::Status::Invalid("Thrift compact struct at byte ", pos_, ": ", what);
}

arrow::Result<uint8_t> Reader::ReadByte() {
  if (pos_ >= bytes_.size()) return Fail("ends early");
  return static_cast<uint8_t>(bytes_[pos_++]);
}

arrow::Result<uint64_t> Reader::ReadVarint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    ARROW_ASSIGN_OR_RAISE(uint8_t b, ReadByte());
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  return Fail("varint longer than 10 bytes");
}

arrow::Status Reader::SkipBytes(uint64_t n) {
  if (n > bytes_.size() - pos_) return Fail("ends early");
  pos_ += static_cast<size_t>(n);
  return arrow::Status::OK();
}

void Reader::BeginStruct() { last_ids_.push_back(0); }

namespace {

// Counts one level of nesting for the life of a Skip call.
struct Level {
  explicit Level(size_t* n) : n_(n) { ++*n_; }
  ~Level() { --*n_; }
  size_t* n_;
};

}  // namespace

arrow::Result<bool> Reader::NextField(int16_t* id, Type* type) {
  if (last_ids_.empty()) return Fail("field read outside a struct");
  ARROW_ASSIGN_OR_RAISE(uint8_t header, ReadByte());
  if (header == 0) {
    last_ids_.pop_back();
    return false;
  }
  *type = static_cast<Type>(header & 0x0f);
  if (*type > Type::kStruct) return Fail("unknown field type");
  const int delta = header >> 4;
  if (delta != 0) {
    *id = static_cast<int16_t>(last_ids_.back() + delta);
  } else {
    ARROW_ASSIGN_OR_RAISE(uint64_t raw, ReadVarint());
    *id = static_cast<int16_t>(Unzigzag(raw));
  }
  last_ids_.back() = *id;
  return true;
}

arrow::Result<int64_t> Reader::ReadInt() {
  ARROW_ASSIGN_OR_RAISE(uint64_t raw, ReadVarint());
  return Unzigzag(raw);
}

arrow::Result<ListHeader> Reader::ReadListHeader() {
  ARROW_ASSIGN_OR_RAISE(uint8_t header, ReadByte());
  ListHeader out;
  out.element = static_cast<Type>(header & 0x0f);
  if (out.element > Type::kStruct) return Fail("unknown element type");
  out.size = header >> 4;
  if (out.size == 15) {
    ARROW_ASSIGN_OR_RAISE(uint64_t n, ReadVarint());
    if (n > bytes_.size()) return Fail("list longer than the struct");
    out.size = static_cast<int64_t>(n);
  }
  return out;
}

arrow::Result<std::string_view> Reader::Skip(Type type, bool element) {
  const size_t start = pos_;
  switch (type) {
    case Type::kTrue:
    case Type::kFalse:
      if (element) ARROW_RETURN_NOT_OK(SkipBytes(1));
      break;
    case Type::kByte:
      ARROW_RETURN_NOT_OK(SkipBytes(1));
      break;
    case Type::kI16:
    case Type::kI32:
    case Type::kI64:
      ARROW_RETURN_NOT_OK(ReadVarint().status());
      break;
    case Type::kDouble:
      ARROW_RETURN_NOT_OK(SkipBytes(8));
      break;
    case Type::kBinary: {
      ARROW_ASSIGN_OR_RAISE(uint64_t n, ReadVarint());
      ARROW_RETURN_NOT_OK(SkipBytes(n));
      break;
    }
    case Type::kList:
    case Type::kSet: {
      if (last_ids_.size() + containers_ >= Reader::kMaxDepth) {
        return Fail("containers nested too deep");
      }
      Level level(&containers_);
      ARROW_ASSIGN_OR_RAISE(ListHeader h, ReadListHeader());
      for (int64_t i = 0; i < h.size; ++i) ARROW_RETURN_NOT_OK(Skip(h.element, true).status());
      break;
    }
    case Type::kMap: {
      if (last_ids_.size() + containers_ >= Reader::kMaxDepth) {
        return Fail("containers nested too deep");
      }
      Level level(&containers_);
      ARROW_ASSIGN_OR_RAISE(uint64_t n, ReadVarint());
      if (n > bytes_.size()) return Fail("map longer than the struct");
      if (n == 0) break;
      ARROW_ASSIGN_OR_RAISE(uint8_t kinds, ReadByte());
      const Type key = static_cast<Type>(kinds >> 4), value = static_cast<Type>(kinds & 0x0f);
      if (key > Type::kStruct || value > Type::kStruct) return Fail("unknown map type");
      for (uint64_t i = 0; i < n; ++i) {
        ARROW_RETURN_NOT_OK(Skip(key, true).status());
        ARROW_RETURN_NOT_OK(Skip(value, true).status());
      }
      break;
    }
    case Type::kStruct: {
      if (last_ids_.size() + containers_ >= Reader::kMaxDepth) {
        return Fail("containers nested too deep");
      }
      BeginStruct();
      int16_t id = 0;
      Type field = Type::kStop;
      while (true) {
        ARROW_ASSIGN_OR_RAISE(bool more, NextField(&id, &field));
        if (!more) break;
        ARROW_RETURN_NOT_OK(Skip(field, false).status());
      }
      break;
    }
    case Type::kStop:
      return Fail("a value of type stop");
  }
  return bytes_.substr(start, pos_ - start);
}

void Writer::Varint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void Writer::BeginStruct() { last_ids_.push_back(0); }

void Writer::EndStruct() {
  out_.push_back('\0');
  last_ids_.pop_back();
}

void Writer::FieldHeader(int16_t id, Type type) {
  const int delta = id - last_ids_.back();
  if (delta > 0 && delta <= 15) {
    out_.push_back(static_cast<char>((delta << 4) | static_cast<int>(type)));
  } else {
    out_.push_back(static_cast<char>(type));
    Varint(Zigzag(id));
  }
  last_ids_.back() = id;
}

void Writer::Int(int64_t value) { Varint(Zigzag(value)); }

void Writer::ListHeader(int64_t size, Type element) {
  if (size < 15) {
    out_.push_back(static_cast<char>((size << 4) | static_cast<int>(element)));
  } else {
    out_.push_back(static_cast<char>(0xf0 | static_cast<int>(element)));
    Varint(static_cast<uint64_t>(size));
  }
}

}  // namespace thund::engine::keyed::compact

// Reading and re-emitting Thrift compact-protocol structs (the encoding of
// Parquet footers) field by field, without generated code: enough to copy a
// struct while changing some of its integer fields and dropping others
// (parquet_join.h). Not a general Thrift library: no type is interpreted
// beyond what skipping a value needs.
//
// Encoding, as the compact protocol defines it: a field is a header byte
// (id delta in the high nibble, 0 meaning a zigzag varint id follows; type in
// the low nibble; 0 ends the struct) and its value; integers are zigzag
// varints, binaries a varint length and bytes, lists and sets a header byte
// (size in the high nibble, 15 meaning a varint size follows; element type in
// the low nibble), maps a varint size and a key/value type byte.
//
// Errors: Invalid naming the byte offset, for input that ends early or holds
// an unknown type, or nests deeper than kMaxDepth structs, lists, sets and
// maps together (every container counts, so a malformed footer of nested
// lists cannot exhaust the stack).
#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace thund::engine::keyed::compact {

enum class Type : uint8_t {
  kStop = 0,
  kTrue = 1,  // a bool field's value is its type
  kFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

struct ListHeader {
  int64_t size = 0;
  Type element = Type::kStop;
};

class Reader {
 public:
  static constexpr size_t kMaxDepth = 64;

  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  // Struct bodies: fields are read between BeginStruct and the false of
  // NextField (which reads the stop byte and ends the struct).
  void BeginStruct();
  arrow::Result<bool> NextField(int16_t* id, Type* type);

  // The value of a field of type `type` skipped, as its encoded bytes.
  arrow::Result<std::string_view> SkipField(Type type) { return Skip(type, /*element=*/false); }
  // An element of a list, set or map (bools take a byte there).
  arrow::Result<std::string_view> SkipElement(Type type) { return Skip(type, /*element=*/true); }

  arrow::Result<int64_t> ReadInt();  // an i16, i32 or i64 value
  arrow::Result<ListHeader> ReadListHeader();

  size_t position() const { return pos_; }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  arrow::Result<uint64_t> ReadVarint();
  arrow::Result<uint8_t> ReadByte();
  arrow::Result<std::string_view> Skip(Type type, bool element);
  arrow::Status SkipBytes(uint64_t n);
  arrow::Status Fail(const char* what) const;

  std::string_view bytes_;
  size_t pos_ = 0;
  std::vector<int16_t> last_ids_;  // per open struct
  size_t containers_ = 0;          // lists, sets and maps being skipped
};

class Writer {
 public:
  void BeginStruct();
  void EndStruct();  // writes the stop byte
  void FieldHeader(int16_t id, Type type);
  void Int(int64_t value);  // an i16, i32 or i64 value
  void ListHeader(int64_t size, Type element);
  void Raw(std::string_view bytes) { out_.append(bytes); }

  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void Varint(uint64_t v);

  std::string out_;
  std::vector<int16_t> last_ids_;
};

}  // namespace thund::engine::keyed::compact

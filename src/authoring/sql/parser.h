// Internal: the statement parser of the SQL surface. One FileContext per .sql
// file; one StatementParser per statement (tokens between two ';').
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "authoring/sql/sql_internal.h"
#include "thund/diagnostic.h"
#include "thund/ir.h"
#include "thund/sql_pipeline.h"

namespace thund::sqlp {

struct FileContext {
  std::string file;
  std::string_view text;
  std::vector<Token> tokens;
  SqlParseOptions options;
  Pipeline pipeline;
  Diagnostics diags;
  std::string catalog;  // current (after USE)
  std::string database;
  bool any_definition = false;
  bool pipeline_declared = false;

  SourceLocation Loc(size_t token) const;
  SourceLocation LocAtOffset(size_t offset) const;
  void Add(Severity sev, SourceLocation loc, std::string code, std::string message,
           std::string hint = "", std::string dataset = "", std::string flow = "");
  // `name` (with `parts` identifier parts) qualified by the USE in effect.
  std::string Qualify(const std::string& name, size_t parts) const;
};

// A value in WITH (...), OPTIONS (...), TBLPROPERTIES (...).
struct OptValue {
  enum Kind { kString, kNumber, kBool, kWord, kList, kMap } kind = kString;
  std::string text;               // string / number / bool / word
  std::vector<std::string> list;  // (a, b)
  StringMap map;                  // ('k' = 'v')
};
struct Option {
  std::string key;  // as written (dotted path or string)
  OptValue value;
  size_t token = 0;
};

// Body of a query: set on a Flow by ParseBody.
struct ParsedBody {
  std::optional<StreamingSpec> implied;
  bool escaped = false;  // written as SQL '...'
};

class StatementParser {
 public:
  StatementParser(FileContext* ctx, size_t begin, size_t end)
      : ctx_(ctx), t_(ctx->tokens), pos_(begin), begin_(begin), end_(end) {}
  void Parse();

 private:
  // ---- cursor
  bool AtEnd() const { return pos_ >= end_; }
  const Token& Peek(size_t k = 0) const;
  bool IsWord(std::string_view w, size_t k = 0) const;
  bool IsOp(std::string_view op, size_t k = 0) const;
  bool Word(std::string_view w);
  bool Words(std::initializer_list<std::string_view> ws);
  bool Op(std::string_view op);
  bool ExpectWord(std::string_view w, std::string_view context);
  bool ExpectOp(std::string_view op, std::string_view context);
  std::string_view Text(size_t a, size_t b) const;
  size_t Close(size_t open) const;  // matching bracket within the statement, or end_
  // Records the statement's error (the first one wins) and returns false.
  bool Fail(size_t token, std::string message, std::string hint = "",
            std::string code = "sql-syntax");
  bool FailHere(std::string message, std::string hint = "", std::string code = "sql-syntax");
  void Warn(size_t token, std::string message, std::string hint = "");
  std::string Describe(size_t token) const;  // "'foo'" or "the end of the statement"

  // ---- pieces
  bool QualifiedName(std::string* name, size_t* parts);
  bool Identifier(std::string* name);
  bool IdentifierList(std::vector<std::string>* out);  // ( a, b )
  bool StringLit(std::string* out, std::string_view context);
  bool PropertyList(std::vector<Option>* out, bool require_equals, std::string_view context);
  bool Value(OptValue* out);

  // ---- statements
  bool Create();
  bool Dataset(DatasetKind kind);
  bool Flow();
  bool PipelineStatement();
  bool Set();
  bool Use();
  bool Columns(thund::Dataset* d);
  bool ColumnDef(arrow::FieldVector* fields);
  bool Constraint(thund::Dataset* d);
  bool Body(thund::Flow* f, ParsedBody* out);  // from the cursor to the end
  bool CdcFlow(thund::Flow* f, ParsedBody* out);
  bool SourceCall(std::optional<SourceSpec>* out);  // [STREAM] read_x(...)

  // Applies WITH options; `d` / `f` may be null when the statement declares
  // no dataset / no flow.
  bool ApplyOptions(const std::vector<Option>& options, thund::Dataset* d, thund::Flow* f,
                    const ParsedBody* body);

  FileContext* ctx_;
  const std::vector<Token>& t_;
  size_t pos_;
  size_t begin_;
  size_t end_;
  bool failed_ = false;
};

// Parses one file; `*pipeline_declared` (optional) tells whether it had a
// CREATE PIPELINE statement.
ParseResult ParseFile(const std::string& text, const std::string& file_name,
                      const SqlParseOptions& options, bool* pipeline_declared);

}  // namespace thund::sqlp

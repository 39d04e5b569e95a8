// ParseSql: splitting a file into statements, the statement cursor, and the
// small statements (SET, USE, CREATE PIPELINE).
#include "authoring/sql/parser.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include "thund/utf8.h"

namespace thund {
namespace sqlp {

// ------------------------------------------------------------ FileContext

SourceLocation FileContext::Loc(size_t token) const {
  if (token < tokens.size()) return {file, tokens[token].line, tokens[token].column};
  return LocAtOffset(text.size());
}

SourceLocation FileContext::LocAtOffset(size_t offset) const {
  int line = 1, column = 1;
  sql::LineColumn(text, offset, &line, &column);
  return {file, line, column};
}

void FileContext::Add(Severity sev, SourceLocation loc, std::string code, std::string message,
                      std::string hint, std::string dataset, std::string flow) {
  Diagnostic d;
  d.severity = sev;
  d.location = std::move(loc);
  d.code = std::move(code);
  d.message = std::move(message);
  d.hint = std::move(hint);
  d.dataset = std::move(dataset);
  d.flow = std::move(flow);
  diags.push_back(std::move(d));
}

std::string FileContext::Qualify(const std::string& name, size_t parts) const {
  if (parts > 1) return name;
  if (catalog == pipeline.catalog && database == pipeline.database) return name;
  if (catalog == pipeline.catalog) return database.empty() ? name : database + "." + name;
  std::string prefix = catalog;
  if (!database.empty()) prefix += "." + database;
  return prefix.empty() ? name : prefix + "." + name;
}

// ----------------------------------------------------------------- cursor

const Token& StatementParser::Peek(size_t k) const {
  static const Token kEnd{};
  return pos_ + k < end_ ? t_[pos_ + k] : kEnd;
}
bool StatementParser::IsWord(std::string_view w, size_t k) const {
  return pos_ + k < end_ && sql::IsWord(t_[pos_ + k], w);
}
bool StatementParser::IsOp(std::string_view op, size_t k) const {
  return pos_ + k < end_ && sql::IsOp(t_[pos_ + k], op);
}
bool StatementParser::Word(std::string_view w) {
  if (!IsWord(w)) return false;
  ++pos_;
  return true;
}
bool StatementParser::Words(std::initializer_list<std::string_view> ws) {
  size_t k = 0;
  for (auto w : ws) {
    if (!IsWord(w, k++)) return false;
  }
  pos_ += ws.size();
  return true;
}
bool StatementParser::Op(std::string_view op) {
  if (!IsOp(op)) return false;
  ++pos_;
  return true;
}
std::string StatementParser::Describe(size_t token) const {
  if (token >= end_) return "the end of the statement";
  return "'" + std::string(t_[token].text) + "'";
}
bool StatementParser::ExpectWord(std::string_view w, std::string_view context) {
  if (Word(w)) return true;
  std::string up;
  for (char c : w) up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return FailHere(std::string(context) + " expects " + up + ", not " + Describe(pos_));
}
bool StatementParser::ExpectOp(std::string_view op, std::string_view context) {
  if (Op(op)) return true;
  return FailHere(std::string(context) + " expects '" + std::string(op) + "', not " +
                  Describe(pos_));
}
std::string_view StatementParser::Text(size_t a, size_t b) const {
  return sql::TextOf(ctx_->text, t_, a, std::min(b, end_));
}
size_t StatementParser::Close(size_t open) const {
  size_t c = sql::MatchingClose(t_, open);
  return c < end_ ? c : end_;
}
bool StatementParser::Fail(size_t token, std::string message, std::string hint, std::string code) {
  if (failed_) return false;
  failed_ = true;
  SourceLocation loc;
  if (token < end_) {
    loc = ctx_->Loc(token);
  } else if (end_ > begin_) {
    loc = ctx_->LocAtOffset(t_[end_ - 1].end);  // just after the last token
  } else {
    loc = ctx_->Loc(begin_);
  }
  ctx_->Add(Severity::kError, loc, std::move(code), std::move(message), std::move(hint));
  return false;
}
bool StatementParser::FailHere(std::string message, std::string hint, std::string code) {
  return Fail(pos_, std::move(message), std::move(hint), std::move(code));
}
void StatementParser::Warn(size_t token, std::string message, std::string hint) {
  ctx_->Add(Severity::kWarning, ctx_->Loc(std::min(token, end_ ? end_ - 1 : 0)), "sql-ignored",
            std::move(message), std::move(hint));
}

// ----------------------------------------------------------------- pieces

bool StatementParser::Identifier(std::string* name) {
  if (AtEnd() || !sql::IsIdentifier(Peek()))
    return FailHere("expected a name, not " + Describe(pos_));
  *name = sql::IdentifierName(Peek());
  ++pos_;
  return true;
}

bool StatementParser::QualifiedName(std::string* name, size_t* parts) {
  std::string part;
  if (!Identifier(&part)) return false;
  *name = part;
  *parts = 1;
  while (IsOp(".") && pos_ + 1 < end_ && sql::IsIdentifier(t_[pos_ + 1])) {
    ++pos_;
    Identifier(&part);
    *name += "." + part;
    ++*parts;
  }
  return true;
}

bool StatementParser::IdentifierList(std::vector<std::string>* out) {
  if (!ExpectOp("(", "a column list")) return false;
  if (Op(")")) return true;
  while (true) {
    std::string name;
    if (!Identifier(&name)) return false;
    out->push_back(name);
    if (Op(")")) return true;
    if (!ExpectOp(",", "a column list")) return false;
  }
}

bool StatementParser::StringLit(std::string* out, std::string_view context) {
  if (AtEnd() || !(sql::IsStringToken(Peek()) || Peek().kind == TokKind::kQuotedIdent)) {
    return FailHere(std::string(context) + " expects a string in quotes, not " + Describe(pos_));
  }
  *out = sql::StringValue(Peek());
  ++pos_;
  // Spark joins adjacent literals: 'a' 'b' is 'ab'.
  while (!AtEnd() && sql::IsStringToken(Peek())) {
    *out += sql::StringValue(Peek());
    ++pos_;
  }
  return true;
}

bool StatementParser::Value(OptValue* v) {
  if (AtEnd()) return FailHere("expected a value, not the end of the statement");
  const Token& tok = Peek();
  if (sql::IsStringToken(tok) || tok.kind == TokKind::kQuotedIdent) {
    v->kind = OptValue::kString;
    return StringLit(&v->text, "a value");
  }
  if ((sql::IsOp(tok, "-") || sql::IsOp(tok, "+")) && Peek(1).kind == TokKind::kNumber) {
    v->kind = OptValue::kNumber;
    v->text = (sql::IsOp(tok, "-") ? "-" : "") + std::string(Peek(1).text);
    pos_ += 2;
    return true;
  }
  if (tok.kind == TokKind::kNumber) {
    v->kind = OptValue::kNumber;
    v->text = std::string(tok.text);
    ++pos_;
    return true;
  }
  if (sql::IsWord(tok, "true") || sql::IsWord(tok, "false")) {
    v->kind = OptValue::kBool;
    v->text = sql::ToLower(tok.text);
    ++pos_;
    return true;
  }
  if (tok.kind == TokKind::kIdent || tok.kind == TokKind::kBacktick) {
    v->kind = OptValue::kWord;
    v->text = sql::IdentifierName(tok);
    ++pos_;
    return true;
  }
  if (sql::IsOp(tok, "(")) {
    // ( a, b ) is a list of names, ( 'k' = 'v', ... ) a map.
    size_t close = Close(pos_);
    bool is_map = false;
    for (size_t k = pos_ + 1; k < close; ++k) {
      if (sql::IsOp(t_[k], "=")) is_map = true;
    }
    if (is_map) {
      std::vector<Option> entries;
      if (!PropertyList(&entries, true, "a map value")) return false;
      v->kind = OptValue::kMap;
      for (auto& e : entries) v->map[e.key] = e.value.text;
      return true;
    }
    v->kind = OptValue::kList;
    return IdentifierList(&v->list);
  }
  return FailHere("expected a value (a string, number, true/false, a word or a list), not " +
                  Describe(pos_));
}

bool StatementParser::PropertyList(std::vector<Option>* out, bool require_equals,
                                   std::string_view context) {
  if (!ExpectOp("(", context)) return false;
  if (Op(")")) return true;
  while (true) {
    Option o;
    o.token = pos_;
    if (!AtEnd() && sql::IsStringToken(Peek())) {
      o.key = sql::StringValue(Peek());
      ++pos_;
    } else {
      size_t parts = 0;
      if (!QualifiedName(&o.key, &parts)) return false;
    }
    if (!Op("=") && require_equals) {
      return FailHere(std::string(context) + ": expected '=' after '" + o.key + "', not " +
                      Describe(pos_));
    }
    if (!Value(&o.value)) return false;
    out->push_back(std::move(o));
    if (Op(")")) return true;
    if (!ExpectOp(",", context)) return false;
  }
}

}  // namespace sqlp

namespace sqlp {

ParseResult ParseFile(const std::string& text, const std::string& file_name,
                      const SqlParseOptions& options, bool* pipeline_declared) {
  sqlp::FileContext ctx;
  ctx.file = file_name;
  ctx.text = text;
  ctx.options = options;
  ctx.catalog = options.catalog;
  ctx.database = options.database;
  if (options.project_library) {
    ctx.pipeline.catalog = options.catalog;
    ctx.pipeline.database = options.database;
  }
  if (auto bad = Utf8Diagnostic(text, file_name)) {
    ParseResult out;
    out.pipeline.location = {file_name, 0, 0};
    out.diagnostics.push_back(std::move(*bad));
    return out;
  }
  sql::LexResult lex = sql::Lex(text);
  ctx.tokens = std::move(lex.tokens);
  size_t usable = ctx.tokens.size();
  if (lex.error) {
    ctx.Add(Severity::kError, {file_name, lex.error->line, lex.error->column}, "sql-lex",
            lex.error->message);
    // The statement cut by the error is not parsed; the ones before it are.
    while (usable > 0 && !sql::IsOp(ctx.tokens[usable - 1], ";")) --usable;
  }
  size_t start = 0;
  for (size_t i = 0; i <= usable; ++i) {
    if (i == usable || sql::IsOp(ctx.tokens[i], ";")) {
      if (i > start) sqlp::StatementParser(&ctx, start, i).Parse();
      start = i + 1;
    }
  }
  if (pipeline_declared) *pipeline_declared = ctx.pipeline_declared;
  ParseResult out;
  ctx.pipeline.location = {file_name, 0, 0};
  out.pipeline = std::move(ctx.pipeline);
  out.diagnostics = std::move(ctx.diags);
  return out;
}

}  // namespace sqlp

ParseResult ParseSql(const std::string& text, const std::string& file_name,
                     const SqlParseOptions& options) {
  return sqlp::ParseFile(text, file_name, options, nullptr);
}

ParseResult LoadSqlFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParseResult r;
    Diagnostic d;
    d.location.file = path;
    d.code = "io";
    d.message = "cannot read " + path;
    d.hint = "check that the file exists and is readable";
    r.diagnostics.push_back(d);
    return r;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  bool declared = false;
  ParseResult r = sqlp::ParseFile(buf.str(), path, {}, &declared);
  if (r.pipeline.name.empty() && !declared) {
    r.pipeline.name = std::filesystem::path(path).stem().string();
  }
  return r;
}

}  // namespace thund

#include "sql/sql_lexer.h"

#include <cctype>

namespace thund::sql {
namespace {

bool IsIdentStart(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool IsIdentChar(unsigned char c) { return std::isalnum(c) || c == '_' || c == '$' || c >= 0x80; }

// Longest operators first.
constexpr std::string_view kOps[] = {
    "<=>", "->", "=>", "::", ":=", "<=", ">=", "<>", "!=", "==", "||", "|>", "<<", ">>"};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  LexResult Run() {
    LexResult out;
    while (true) {
      SkipSpaceAndComments();
      if (error_) break;
      if (pos_ >= text_.size()) break;
      Token t;
      t.begin = pos_;
      t.line = line_;
      t.column = column_;
      if (!Next(&t)) break;
      t.end = pos_;
      t.text = text_.substr(t.begin, t.end - t.begin);
      out.tokens.push_back(t);
    }
    out.error = error_;
    return out;
  }

 private:
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void Advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i) {
      if (text_[pos_] == '\n') {
        ++line_;
        column_ = 1;
      } else {
        ++column_;
      }
      ++pos_;
    }
  }
  void Fail(std::string message, size_t offset, int line, int column) {
    if (!error_) error_ = LexError{std::move(message), offset, line, column};
  }

  void SkipSpaceAndComments() {
    while (pos_ < text_.size()) {
      char c = Peek();
      if (std::isspace(static_cast<unsigned char>(c))) {
        Advance();
      } else if (c == '-' && Peek(1) == '-') {
        while (pos_ < text_.size() && Peek() != '\n') Advance();
      } else if (c == '/' && Peek(1) == '*') {
        size_t start = pos_;
        int line = line_, column = column_;
        int nesting = 0;
        do {
          if (Peek() == '/' && Peek(1) == '*') {
            ++nesting;
            Advance(2);
          } else if (Peek() == '*' && Peek(1) == '/') {
            --nesting;
            Advance(2);
          } else {
            Advance();
          }
        } while (nesting > 0 && pos_ < text_.size());
        if (nesting > 0) {
          Fail("unterminated /* comment; close it with */", start, line, column);
          return;
        }
      } else {
        return;
      }
    }
  }

  // Consumes a quoted run starting at the opening quote. `backslash` enables
  // Spark escapes; a doubled quote is always an embedded quote.
  bool Quoted(char quote, bool backslash, Token* t, const char* what) {
    Advance();  // opening quote
    while (pos_ < text_.size()) {
      char c = Peek();
      if (backslash && c == '\\' && pos_ + 1 < text_.size()) {
        Advance(2);
      } else if (c == quote) {
        if (Peek(1) == quote) {
          Advance(2);
        } else {
          Advance();
          return true;
        }
      } else {
        Advance();
      }
    }
    Fail(std::string("unterminated ") + what + "; close it with " + quote, t->begin, t->line,
         t->column);
    return false;
  }

  bool Next(Token* t) {
    char c = Peek();
    unsigned char uc = static_cast<unsigned char>(c);
    if ((c == 'r' || c == 'R') && (Peek(1) == '\'' || Peek(1) == '"')) {
      t->kind = TokKind::kRawString;
      char q = Peek(1);
      Advance();
      return Quoted(q, /*backslash=*/false, t, "raw string");
    }
    if (IsIdentStart(uc)) {
      t->kind = TokKind::kIdent;
      while (pos_ < text_.size() && IsIdentChar(static_cast<unsigned char>(Peek()))) Advance();
      return true;
    }
    if (std::isdigit(uc) || (c == '.' && std::isdigit(static_cast<unsigned char>(Peek(1))))) {
      t->kind = TokKind::kNumber;
      Number();
      return true;
    }
    if (c == '\'') {
      t->kind = TokKind::kString;
      return Quoted('\'', /*backslash=*/true, t, "string");
    }
    if (c == '"') {
      t->kind = TokKind::kQuotedIdent;
      return Quoted('"', /*backslash=*/true, t, "double-quoted text");
    }
    if (c == '`') {
      t->kind = TokKind::kBacktick;
      return Quoted('`', /*backslash=*/false, t, "`identifier`");
    }
    t->kind = TokKind::kOp;
    for (std::string_view op : kOps) {
      if (text_.substr(pos_, op.size()) == op) {
        Advance(op.size());
        return true;
      }
    }
    Advance();
    return true;
  }

  void Number() {
    auto digits = [&] {
      while (std::isdigit(static_cast<unsigned char>(Peek()))) Advance();
    };
    digits();
    if (Peek() == '.' && std::isdigit(static_cast<unsigned char>(Peek(1)))) {
      Advance();
      digits();
    } else if (Peek() == '.' && !IsIdentStart(static_cast<unsigned char>(Peek(1)))) {
      Advance();  // "1." is a number
    }
    if ((Peek() == 'e' || Peek() == 'E') && (std::isdigit(static_cast<unsigned char>(Peek(1))) ||
                                             ((Peek(1) == '+' || Peek(1) == '-') &&
                                              std::isdigit(static_cast<unsigned char>(Peek(2)))))) {
      Advance(2);
      digits();
    }
    // Spark literal suffixes: L S Y D F BD (only when not the start of a word).
    auto suffix_ends = [&](size_t n) { return !IsIdentChar(static_cast<unsigned char>(Peek(n))); };
    char s = static_cast<char>(std::toupper(static_cast<unsigned char>(Peek())));
    if ((s == 'B') && std::toupper(static_cast<unsigned char>(Peek(1))) == 'D' && suffix_ends(2)) {
      Advance(2);
    } else if ((s == 'L' || s == 'S' || s == 'Y' || s == 'D' || s == 'F') && suffix_ends(1)) {
      Advance();
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  std::optional<LexError> error_;
};

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Body between the quotes, Spark's unescaping rules plus '' doubling.
std::string Unescape(std::string_view body, char quote) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == quote && i + 1 < body.size() && body[i + 1] == quote) {
      out.push_back(quote);
      ++i;
      continue;
    }
    if (c != '\\' || i + 1 >= body.size()) {
      out.push_back(c);
      continue;
    }
    char e = body[++i];
    switch (e) {
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'Z':
        out.push_back('\x1A');
        break;
      case '0':
        out.push_back('\0');
        break;
      case '%':
        out += "\\%";
        break;  // kept for LIKE, as Spark does
      case '_':
        out += "\\_";
        break;
      case 'u':
      case 'U': {
        size_t n = e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        bool ok = i + n < body.size();
        for (size_t k = 1; ok && k <= n; ++k) {
          int h = HexDigit(body[i + k]);
          if (h < 0)
            ok = false;
          else
            cp = cp * 16 + static_cast<uint32_t>(h);
        }
        if (ok) {
          AppendUtf8(&out, cp);
          i += n;
        } else {
          out.push_back(e);
        }
        break;
      }
      default:
        out.push_back(e);
        break;
    }
  }
  return out;
}

}  // namespace

LexResult Lex(std::string_view text) { return Lexer(text).Run(); }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsWord(const Token& t, std::string_view word) {
  return t.kind == TokKind::kIdent && EqualsIgnoreCase(t.text, word);
}

bool IsOp(const Token& t, std::string_view op) { return t.kind == TokKind::kOp && t.text == op; }

bool IsIdentifier(const Token& t) {
  return t.kind == TokKind::kIdent || t.kind == TokKind::kQuotedIdent ||
         t.kind == TokKind::kBacktick;
}

std::string IdentifierName(const Token& t) {
  if (t.kind == TokKind::kBacktick) {
    std::string out;
    std::string_view body = t.text.substr(1, t.text.size() - 2);
    for (size_t i = 0; i < body.size(); ++i) {
      out.push_back(body[i]);
      if (body[i] == '`' && i + 1 < body.size() && body[i + 1] == '`') ++i;
    }
    return out;
  }
  if (t.kind == TokKind::kQuotedIdent) {
    std::string out;
    std::string_view body = t.text.substr(1, t.text.size() - 2);
    for (size_t i = 0; i < body.size(); ++i) {
      out.push_back(body[i]);
      if (body[i] == '"' && i + 1 < body.size() && body[i + 1] == '"') ++i;
    }
    return out;
  }
  return std::string(t.text);
}

bool IsStringToken(const Token& t) {
  return t.kind == TokKind::kString || t.kind == TokKind::kRawString;
}

std::string StringValue(const Token& t) {
  if (t.kind == TokKind::kRawString) {
    std::string_view body = t.text.substr(2, t.text.size() - 3);
    return std::string(body);
  }
  if (t.text.size() < 2) return std::string();
  char quote = t.text.front();
  return Unescape(t.text.substr(1, t.text.size() - 2), quote);
}

std::string DuckDbStringLiteral(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";
    else
      out.push_back(c);
  }
  return out + "'";
}

std::string SparkStringLiteral(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    switch (c) {
      case '\'':
        out += "\\'";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out.push_back(c);
    }
  }
  return out + "'";
}

void LineColumn(std::string_view text, size_t offset, int* line, int* column) {
  *line = 1;
  *column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++*line;
      *column = 1;
    } else {
      ++*column;
    }
  }
}

size_t MatchingClose(const std::vector<Token>& tokens, size_t open) {
  if (open >= tokens.size() || tokens[open].kind != TokKind::kOp) return tokens.size();
  int depth = 0;
  for (size_t i = open; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.kind != TokKind::kOp) continue;
    if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
    if (t.text == ")" || t.text == "]" || t.text == "}") {
      if (--depth == 0) return i;
    }
  }
  return tokens.size();
}

std::vector<std::pair<size_t, size_t>> SplitArgs(const std::vector<Token>& tokens, size_t open,
                                                 size_t close) {
  std::vector<std::pair<size_t, size_t>> out;
  if (close <= open + 1) return out;
  size_t start = open + 1;
  int depth = 0;
  for (size_t i = open + 1; i < close; ++i) {
    const Token& t = tokens[i];
    if (t.kind == TokKind::kOp) {
      if (t.text == "(" || t.text == "[" || t.text == "{")
        ++depth;
      else if (t.text == ")" || t.text == "]" || t.text == "}")
        --depth;
      else if (t.text == "," && depth == 0) {
        out.emplace_back(start, i);
        start = i + 1;
      }
    }
  }
  out.emplace_back(start, close);
  return out;
}

std::string_view TextOf(std::string_view text, const std::vector<Token>& tokens, size_t first,
                        size_t last) {
  if (first >= last || first >= tokens.size()) return {};
  size_t b = tokens[first].begin;
  size_t e = tokens[last - 1].end;
  return text.substr(b, e - b);
}

}  // namespace thund::sql
